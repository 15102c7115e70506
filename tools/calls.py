"""How far one statement travels inside modecfg: every Python call whose code lives in
``modecfg/``, counted with a profile hook after a warm-up (issue 49's measure).

    .venv/bin/python tools/calls.py            # the table
    .venv/bin/python tools/calls.py --detail   # and each function, with its count
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytensor

import modecfg

ROOT = os.path.dirname(modecfg.__file__)


def _assign() -> None:
    pytensor.config.floatX = "float32"


def _scope() -> None:
    with pytensor.config.change_flags(floatX="float32"):
        pass


_NEW_SITE = compile('with pytensor.config.change_flags(floatX="float32"): pass', "<new site>", "exec")


def _scope_new_site() -> None:
    """The statement at a call site never seen before (each run is new code: the cost a
    ``change_flags`` pays the first time at each site, and every time in code made on the fly)."""
    exec(_NEW_SITE.replace(), {"pytensor": pytensor})  # the literal above, a code object of this file


def _read_pytensor() -> None:
    pytensor.config.floatX  # noqa: B018 - the read is what is measured


def _read_modecfg() -> None:
    modecfg.config.floatX  # noqa: B018


STATEMENTS: dict[str, Callable[[], None]] = {
    'pytensor.config.floatX = "float32"': _assign,
    'with pytensor.config.change_flags(floatX="float32"): pass': _scope,
    "the same, at a new call site": _scope_new_site,
    "pytensor.config.floatX": _read_pytensor,
    "modecfg.config.floatX": _read_modecfg,
}


def _constructors() -> frozenset[tuple[str, int]]:
    """Where records' constructors are written (``modecfg._record``; each record's ``__new__`` is
    one of them, renamed): a record's construction is the tuple's, as namedtuple's compiled
    ``__new__`` was (which had no file in the package), not a step of the statement."""
    from modecfg import _record

    return frozenset((code.co_filename, code.co_firstlineno) for code in _record._CONSTRUCTORS)


def count(statement: Callable[[], None]) -> collections.Counter[tuple[str, str]]:
    """The calls of modecfg's functions one run of ``statement`` makes, after two warm-up runs:
    (file relative to the package, function name) -> how many."""
    constructors = _constructors()
    statement()
    statement()
    calls: collections.Counter[tuple[str, str]] = collections.Counter()

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if (
            event == "call"
            and code.co_filename.startswith(ROOT)
            and (code.co_filename, code.co_firstlineno) not in constructors
        ):
            calls[(os.path.relpath(code.co_filename, ROOT), code.co_name)] += 1

    sys.setprofile(hook)
    try:
        statement()
    finally:
        sys.setprofile(None)
    return calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--detail", action="store_true", help="each function and its count")
    args = parser.parse_args(argv)
    floatx = modecfg.config.floatX
    try:
        for text, statement in STATEMENTS.items():
            calls = count(statement)
            files = {path for path, _ in calls}
            print(f"{sum(calls.values()):4d} calls in {len(files):2d} files  {text}")
            if args.detail:
                for (path, name), n in sorted(calls.items()):
                    print(f"       {n:3d}  {path}:{name}")
    finally:
        modecfg.config.floatX = floatx
    return 0


if __name__ == "__main__":
    sys.exit(main())
