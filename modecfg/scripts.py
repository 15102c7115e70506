"""Run a user's script as ``python SCRIPT ARGS`` (or ``python -m MODULE ARGS``) would, inside
this process.

What ``python`` gives a script, it gets here (``tests/test_scripts_vs_python.py`` runs a corpus
both ways and compares): ``sys.argv`` as typed (``--`` kept); ``__file__`` absolute;
``sys.path[0]`` the directory of the script with its symbolic links resolved (the directory or
zip file itself for one with a ``__main__.py``; the working directory for ``-m``); a module of
its own as ``__main__`` that stays ``__main__`` after the body, so that a thread or an
``atexit`` handler still pickles the script's classes; the code compiled as Python compiles a
file (its encoding cookie, none of modecfg's ``__future__`` imports). ``os._exit`` ends the
process at once, in any thread, as it does under ``python``, and a forked child's is its own
(an earlier version raised ``SystemExit`` instead, which unwound a forked child through its
parent's ``finally`` blocks); a command that reports on the script writes its report first.
Exceptions propagate to the caller, which reports them as Python would (:func:`report`).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.machinery
import os
import runpy
import sys
import types
import zipfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, TextIO

__all__ = ["exit_status", "report", "run_module", "run_script"]

# runpy's runner of a module as __main__ (what `python -m` uses)
_run_module_as_main: Any = getattr(runpy, "_run_module_as_main")  # noqa: B009


def run_script(
    path: str,
    args: Sequence[str] = (),
    *,
    keep_main: bool = False,
    before_exit: Callable[[int], None] | None = None,
) -> None:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *args]``; its exceptions propagate.

    ``keep_main``: the script's module stays ``sys.modules['__main__']`` after it returns (a
    process that ends with the script); else the caller's is put back, with ``sys.argv``,
    ``sys.path`` and the working directory. ``before_exit``: called with the status where the
    script ends this process with ``os._exit`` (which still ends it, at once, as under
    ``python``): a command's report of what ran is written first. A forked child's
    ``os._exit`` is its own, untouched."""
    argv = [path, *args]
    with _reporting_exit(before_exit):
        if os.path.isdir(path) or (os.path.isfile(path) and zipfile.is_zipfile(path)):
            # `python DIR` / `python ZIP`: the path first on sys.path, and its __main__ module run
            with _as_python(argv, path, keep_main):
                _run_module_as_main("__main__", False)
            return
        with open(path, "rb") as f:
            source = f.read()
        where = os.path.abspath(path)
        code = compile(source, where, "exec", dont_inherit=True)
        with _as_python(argv, os.path.dirname(os.path.realpath(path)), keep_main) as main:
            _run_file(code, main, where)


def _run_file(code: types.CodeType, main: types.ModuleType, where: str) -> None:
    """The script's code run in ``main`` with the names ``python SCRIPT`` gives it (runpy's
    ``run_path`` would leave ``__loader__`` None): the one ``exec`` of modecfg, of the file the
    user named on its command line to be run, as ``python`` and runpy themselves run it."""
    main.__dict__.update(  # (a new module's __doc__, __package__ and __spec__ are None already)
        __file__=where, __cached__=None, __loader__=importlib.machinery.SourceFileLoader("__main__", where)
    )  # fmt: skip
    exec(code, main.__dict__)  # the script itself


_real_exit = os._exit
_before_exit: list[tuple[int, Callable[[int], None]]] = []  # (the process it was set in, what to call)


def _exit(status: int) -> NoReturn:
    """``os._exit`` while a command reports on a script: its report first, in this process only."""
    if _before_exit and _before_exit[-1][0] == os.getpid():
        _, report_ = _before_exit.pop()
        with contextlib.suppress(BaseException):
            report_(status)
    _real_exit(status)


@contextlib.contextmanager
def _reporting_exit(before_exit: Callable[[int], None] | None) -> Iterator[None]:
    if before_exit is None:
        yield
        return
    _before_exit.append((os.getpid(), before_exit))
    previous = os._exit  # put back after: the real one, an outer command's, or the program's own
    os._exit = _exit
    try:
        yield
    finally:
        os._exit = previous
        if _before_exit and _before_exit[-1][1] is before_exit:
            _before_exit.pop()


def run_module(name: str, args: Sequence[str] = (), *, keep_main: bool = False) -> None:
    """Run module ``name`` as ``python -m NAME ARGS`` would (``sys.argv[0]`` its file), inside
    this process; its exceptions propagate."""
    with _as_python([name, *args], os.getcwd(), keep_main):  # python -m puts the working directory first
        _run_module_as_main(name, True)


@contextlib.contextmanager
def _as_python(argv: list[str], first_on_path: str, keep_main: bool) -> Iterator[types.ModuleType]:
    """``sys.argv``, ``sys.path[0]`` and a fresh ``__main__`` as ``python`` would have them."""
    saved_argv, saved_main, cwd = sys.argv, sys.modules.get("__main__"), os.getcwd()
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins  # (the module, as __main__'s is; a dict elsewhere)
    sys.modules["__main__"] = main
    sys.argv = argv
    sys.path.insert(0, first_on_path)
    try:
        yield main
    finally:
        if not keep_main:
            sys.argv = saved_argv
            with contextlib.suppress(ValueError):
                sys.path.remove(first_on_path)
            if saved_main is not None:
                sys.modules["__main__"] = saved_main
            with contextlib.suppress(OSError):
                os.chdir(cwd)


def report(exc: BaseException) -> None:
    """What ``python`` does with an exception its script did not catch: ``sys.excepthook``,
    called with the traceback from the script's own frames on (none of modecfg's or runpy's)."""
    from modecfg._source import TRAMPOLINE_FILE

    tb = exc.__traceback__
    ours = (__file__, runpy.__file__, "<frozen runpy>")
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in ours
        or _is_cli(tb.tb_frame.f_code.co_filename)
        or tb.tb_frame.f_code.co_filename.endswith(TRAMPOLINE_FILE)  # `make mutate`'s call switch
    ):
        tb = tb.tb_next
    exc.__traceback__ = tb
    sys.excepthook(type(exc), exc, tb)


def _is_cli(filename: str) -> bool:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.abspath(filename).startswith(os.path.join(here, "cli") + os.sep)


def exit_status(exc: SystemExit, err: TextIO) -> int:
    """The status ``python SCRIPT`` would end with for ``exc`` (its message written to ``err``)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    err.write(f"{code}\n")
    return 1
