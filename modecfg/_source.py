"""Where in the user's code a graph variable or node was made (from PyTensor's traces)."""

from __future__ import annotations

import functools
import linecache
import os
from typing import Any, NamedTuple

__all__ = ["SourceLine", "calling_line", "is_library", "source_line", "user_frame"]

_MODECFG_DIR = os.path.dirname(os.path.abspath(__file__))
_DEMO = os.path.join(_MODECFG_DIR, "demo.py")

Frame = tuple[str, int, str, "str | None"]


class SourceLine(NamedTuple):
    """A line of user code: file, line number and its text."""

    file: str
    line: int
    code: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@functools.cache
def _stdlib_dir() -> str:
    import sysconfig

    return sysconfig.get_paths()["stdlib"] + os.sep


@functools.cache
def _pytensor_dir() -> str:
    import importlib.util

    spec = importlib.util.find_spec("pytensor")
    origin = spec.origin if spec is not None else None
    return os.path.dirname(os.path.abspath(origin)) if origin else "\0"


def is_library(filename: str) -> bool:
    """True for frames of PyTensor, numpy, Python's stdlib or modecfg (the demo excepted)."""
    if filename == _DEMO:  # the demo is user code, written with modecfg
        return False
    if filename.startswith((_MODECFG_DIR, _pytensor_dir())):
        return True
    if filename.startswith(_stdlib_dir()) and "site-packages" not in filename:
        return True
    return f"{os.sep}numpy{os.sep}" in filename or filename.startswith("<frozen")


def user_frame(thing: Any) -> tuple[Frame | None, list[Frame]]:
    """The innermost user frame that made ``thing`` (a variable or a node), and the kept stack."""
    variables = thing.outputs if hasattr(thing, "outputs") else [thing]
    for var in variables:
        for stack in getattr(var.tag, "trace", ()) or ():
            frames = [tuple(f) for f in stack]
            for frame in reversed(frames):
                if not is_library(frame[0]):
                    return frame, frames
    return None, []


def source_line(thing: Any) -> SourceLine | None:
    """The user's line that made ``thing``, or None if no trace reaches it."""
    frame, _ = user_frame(thing)
    if frame is None:
        return None
    filename, lineno, _, text = frame
    return SourceLine(filename, lineno, text or linecache.getline(filename, lineno).strip())


def calling_line() -> SourceLine | None:
    """The first line of user code on the current stack (who called ``grad``, who compiled)."""
    import sys

    frame: Any = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not is_library(filename):
            line = frame.f_lineno
            return SourceLine(filename, line, linecache.getline(filename, line).strip())
        frame = frame.f_back
    return None
