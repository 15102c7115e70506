"""What the commands share: their two failures, JSON of values and origins, PyTensor's flags
and a script's arguments."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from typing import Any

import modecfg

__all__ = ["jsonable", "origin_dict", "script_arguments"]


class _Failed(Exception):
    """A command that cannot start (missing script, unwritable output): a message, exit 2."""


class _Usage(Exception):
    pass


def jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)


def origin_dict(origin: modecfg.Origin) -> dict[str, Any]:
    return {"layer": str(origin.layer), "source": origin.source, "line": origin.line}


def script_arguments(args: argparse.Namespace, options: Sequence[str]) -> None:
    """Options of ours written after the script (``modecfg profile train.py 3 --html p.html``)
    are ours; everything after ``--`` is the script's. Checked before the script runs."""
    if not os.path.isfile(args.script):
        raise _Failed(
            f"no script {args.script!r} (the first argument after the command is the script to run)"
        )
    rest: list[str] = []
    words = list(args.args)
    while words:
        word = words.pop(0)
        name, eq, value = word.partition("=")
        if name in options:
            if not eq:
                if not words:
                    raise _Failed(f"{name} needs a file name")
                value = words.pop(0)
            setattr(args, name.lstrip("-"), value)
            continue
        rest.append(word)
    args.args = rest + list(getattr(args, "passthrough", []))
    for option in options:
        path = getattr(args, option.lstrip("-"), None)
        if path:
            # resolved now: the script may change directory
            setattr(args, option.lstrip("-"), os.path.abspath(path))
            directory = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(directory):
                raise _Failed(f"{option} {path}: the directory {directory} does not exist")
            if not os.access(directory, os.W_OK):
                raise _Failed(f"{option} {path}: cannot write in {directory}")
