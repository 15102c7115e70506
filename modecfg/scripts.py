"""Run a user's script as ``python SCRIPT ARGS`` would, inside this process."""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from collections.abc import Iterator, Sequence
from typing import TextIO

__all__ = ["exit_status", "run_module", "run_script"]


def run_script(path: str, args: Sequence[str] = ()) -> None:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *args]``; its exceptions propagate.

    ``os._exit(n)`` in the script is a ``SystemExit(n)`` here, so that the caller keeps what
    it gathered (and ends the process itself); the working directory is restored.
    """
    with _as_python([path, *args], os.path.dirname(os.path.abspath(path))):
        runpy.run_path(path, run_name="__main__")


def run_module(name: str, args: Sequence[str] = ()) -> None:
    """Run module ``name`` as ``python -m NAME ARGS`` would (``sys.argv[0]`` its file), inside
    this process; its exceptions propagate, ``os._exit`` is a ``SystemExit`` as for a script."""
    with _as_python([name, *args], os.getcwd()):  # python -m puts the working directory first
        runpy.run_module(name, run_name="__main__", alter_sys=True)


@contextlib.contextmanager
def _as_python(argv: list[str], first_on_path: str) -> Iterator[None]:
    """``sys.argv``, ``sys.path[0]`` and ``os._exit`` as ``python`` would have them, and all of
    them, and the working directory, put back after."""
    saved, saved_exit, cwd = sys.argv, os._exit, os.getcwd()
    sys.argv = argv
    sys.path.insert(0, first_on_path)
    os._exit = _exit  # type: ignore[assignment]
    try:
        yield
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
