"""Run a user's script as ``python SCRIPT ARGS`` would, inside this process."""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from collections.abc import Sequence
from typing import TextIO

__all__ = ["exit_status", "run_module", "run_script"]


def run_script(path: str, args: Sequence[str] = ()) -> None:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *args]``; its exceptions propagate.

    ``os._exit(n)`` in the script is a ``SystemExit(n)`` here, so that the caller keeps what
    it gathered (and ends the process itself); the working directory is restored.
    """
    saved, saved_exit, cwd = sys.argv, os._exit, os.getcwd()
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    os._exit = _exit  # type: ignore[assignment]
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved
        sys.path.pop(0)
        os._exit = saved_exit
        with contextlib.suppress(OSError):
            os.chdir(cwd)


def run_module(name: str, args: Sequence[str] = ()) -> None:
    """Run module ``name`` as ``python -m NAME ARGS`` would (``sys.argv[0]`` its file), inside
    this process; its exceptions propagate, ``os._exit`` is a ``SystemExit`` as for a script."""
    saved, saved_exit, cwd = sys.argv, os._exit, os.getcwd()
    sys.argv = [name, *args]
    sys.path.insert(0, cwd)  # python -m puts the working directory first
    os._exit = _exit  # type: ignore[assignment]
    try:
        runpy.run_module(name, run_name="__main__", alter_sys=True)
    finally:
        sys.argv = saved
        sys.path.pop(0)
        os._exit = saved_exit
        with contextlib.suppress(OSError):
            os.chdir(cwd)


def _exit(code: int) -> None:
    raise SystemExit(code)


def exit_status(exc: SystemExit, err: TextIO) -> int:
    """The status ``python SCRIPT`` would end with for ``exc`` (its message written to ``err``)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    err.write(f"{code}\n")
    return 1
