"""The user's code: which frames are the user's (:func:`is_library` says which are not), the
first of them on the stack (:func:`first_user_frame`), and where a graph variable or node was
made (from PyTensor's traces).

It is the one definition of "the user's line" that an assignment's origin, a warning's
location and an error's location all use, so that the same statement is named alike by each.
Where a library such as PyMC stands between the user and PyTensor, what was *made* there (a
node, a flag's assignment, a gradient, a profiled function) is named at the library's line that
made it; what is *said* to the user about a call (a warning, a compile this machine cannot run)
at the line of theirs that called the library (``past_installed``).
"""

from __future__ import annotations

import functools
import os
from typing import Any

from modecfg._record import Record

__all__ = [
    "SourceLine", "calling_line", "first_user_frame", "installed", "is_library", "source_line", "statement",
    "user_frame",
]  # fmt: skip

_MODECFG_DIR = os.path.dirname(os.path.abspath(__file__))
_DEMO = os.path.join(_MODECFG_DIR, "demo.py")
# `make mutate` (mutmut) calls every mutated function of modecfg through this file of its own.
TRAMPOLINE_FILE = os.path.join("mutmut", "mutation", "trampoline.py")

TraceEntry = tuple[str, int, str, "str | None"]


class SourceLine(Record):
    """A line of user code: file, line number and its text."""

    file: str
    line: int
    code: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@functools.cache
def _stdlib_dir() -> str:
    """The standard library's directory: where ``os`` is, as ``sysconfig.get_paths()["stdlib"]``
    says, without the ~2 ms sysconfig's first answer costs (at a process's first gradient); an
    interpreter whose ``os`` has no file (an embedded one) asks sysconfig."""
    where: str | None = getattr(os, "__file__", None)
    if where is None:
        import sysconfig

        return sysconfig.get_paths()["stdlib"] + os.sep
    return os.path.dirname(os.path.abspath(where)) + os.sep


@functools.cache
def _pytensor_dir() -> str:
    import importlib.util

    spec = importlib.util.find_spec("pytensor")
    origin = spec.origin if spec is not None else None
    return os.path.dirname(os.path.abspath(origin)) if origin else "\0"


def is_library(filename: str) -> bool:
    """True for frames of PyTensor, numpy, Python's stdlib or modecfg (the demo excepted), and of
    the mutation-testing tool's call switch."""
    if filename == _DEMO:  # the demo is user code, written with modecfg
        return False
    if filename.startswith((_MODECFG_DIR, _pytensor_dir())) or filename.endswith(TRAMPOLINE_FILE):
        return True
    if filename.startswith(_stdlib_dir()) and "site-packages" not in filename:
        return True
    return f"{os.sep}numpy{os.sep}" in filename or filename.startswith("<frozen")


def user_frame(thing: Any) -> tuple[TraceEntry | None, list[TraceEntry]]:
    """The innermost user frame that made ``thing`` (a variable or a node), and the kept stack.

    A frame inside an op's own ``make_node`` (a custom op the user wrote) is the op's code, not
    the expression that applied it: the frame that called it is named, when the trace has it."""
    variables = thing.outputs if hasattr(thing, "outputs") else [thing]
    for var in variables:
        for stack in getattr(var.tag, "trace", ()) or ():
            frames = [tuple(f) for f in stack]
            found = None
            for frame in reversed(frames):
                if not is_library(frame[0]):
                    if frame[2] != "make_node":
                        return frame, frames
                    found = found or frame
            if found is not None:
                return found, frames
    return None, []


def source_line(thing: Any) -> SourceLine | None:
    """The user's line that made ``thing``, or None if no trace reaches it."""
    frame, _ = user_frame(thing)
    if frame is None:
        return None
    filename, lineno, _, text = frame
    return SourceLine(filename, lineno, text or _line(filename, lineno))


_LIBRARY: dict[str, bool] = {}  # file name -> is_library(file name): asked at every assignment


def first_user_frame(skip: int = 1, *, past_installed: bool = False) -> tuple[Any, int]:
    """The first frame of user code on the stack, looking from ``skip`` frames above the
    caller on (1: the caller's caller), and its distance from the caller (a ``stacklevel``
    for ``warnings.warn`` called by the caller is that plus one); ``(None, 0)`` when every
    frame is a library's.

    ``past_installed``: the first that is not an installed package's either (:func:`installed`:
    PyMC's sampler calling a compiled function is passed over for the script that called
    ``pm.sample``), or, when every frame outside the libraries is (an installed tool's own
    command), the first of those."""
    import sys

    frame: Any = sys._getframe(skip + 1)
    distance = skip
    known = _LIBRARY
    fallback: tuple[Any, int] | None = None
    while frame is not None:
        filename = frame.f_code.co_filename
        library = known.get(filename)
        if library is None:
            library = known[filename] = is_library(filename)
        if not library:
            if not past_installed or not installed(filename):
                return frame, distance
            fallback = fallback or (frame, distance)
        frame = frame.f_back
        distance += 1
    return fallback or (None, 0)


def installed(filename: str) -> bool:
    """True for a file of a package installed into an environment (a ``site-packages`` or
    ``dist-packages`` folder: PyMC, ArviZ, a lab's package installed with pip) or of its
    commands (the environment's ``bin``, whose files start an installed tool). modecfg's demo
    is the user's code wherever modecfg is installed."""
    if filename == _DEMO:
        return False
    parts = filename.split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts or filename.startswith(_scripts_dir())


@functools.cache
def _scripts_dir() -> str:
    import sysconfig

    return sysconfig.get_paths()["scripts"] + os.sep


def calling_line(*, past_installed: bool = False) -> SourceLine | None:
    """The first line of user code on the current stack (who called ``grad``, who compiled);
    ``past_installed``: as :func:`first_user_frame` says."""
    frame, _ = first_user_frame(1, past_installed=past_installed)
    if frame is None:
        return None
    filename, line = frame.f_code.co_filename, frame.f_lineno
    return SourceLine(filename, line, _line(filename, line))


def at_users_compile(error: BaseException) -> BaseException:
    """``error`` (a configuration this machine cannot run: device=cuda and no GPU, a linker not
    installed), found while a compile's mode was built, made to be said at the user's compile:
    a note naming its line, and none of the frames between it and the check (not a defect of
    modecfg's or PyTensor's). Raise what it returns (its cause, if any, stays)."""
    where = calling_line(past_installed=True)
    if where is not None:  # the whole statement: its first line alone may end in "function("
        error.add_note(f"(compiling the function at {where}: {statement(where.file, where.line, 160)})")
    return error.with_traceback(None)


def _line(filename: str, lineno: int) -> str:
    """The text of a line of a file (linecache is imported here, not at start-up: it imports
    tokenize, 1 ms of reading the configuration)."""
    import linecache

    return linecache.getline(filename, lineno).strip()


def statement(filename: str, lineno: int, limit: int = 300) -> str:
    """The whole statement line ``lineno`` of ``filename`` belongs to, on one line (a statement
    continued with ``\\`` or inside brackets is not cut at the line's end); the line alone where
    the file cannot be read or parsed, '' where there is none. The innermost simple statement is
    taken: in a ``for`` loop, the loop body's statement, not the loop."""
    found = _statements(filename)
    text = ""
    if found is not None:
        spans = [span for span in found if span[0] <= lineno <= span[1]]
        if spans:
            start, end = min(spans, key=lambda span: span[1] - span[0])
            text = " ".join(
                _line(filename, n).removesuffix("\\").strip() for n in range(start, end + 1)
            ).strip()
    text = text or _line(filename, lineno)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _statements(filename: str) -> list[tuple[int, int]] | None:
    """The line spans of the simple statements of ``filename`` (cached per file and mtime)."""
    import ast
    import os

    try:
        key = (filename, os.stat(filename).st_mtime_ns)
    except OSError:
        return None
    if key in _PARSED:
        return _PARSED[key]
    try:
        with open(filename, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
                 if isinstance(n, ast.stmt) and not hasattr(n, "body")]  # fmt: skip
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        spans = None
    if len(_PARSED) > 64:
        _PARSED.clear()
    _PARSED[key] = spans
    return spans


_PARSED: dict[tuple[str, int], list[tuple[int, int]] | None] = {}
