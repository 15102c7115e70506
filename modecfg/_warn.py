"""Warnings that point at the user's line, however deep in modecfg they are raised, and the
one dispatch of the ``warn`` / ``raise`` / ``pdb`` choice the checks share (float64 in a
float32 graph, the NaN guard, test values)."""

from __future__ import annotations

import _thread
import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # logging is not imported to read the configuration (start-up time)
    import logging

__all__ = ["act", "folded", "warn"]


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` with the stack level of the first frame of user code.

    Frames of modecfg, PyTensor, numpy and the standard library are passed over, so
    that a warning raised while compiling points at the user's compile call, and so are those of
    installed packages above them: a function PyMC compiled and calls inside ``pm.sample`` warns
    at the script's ``pm.sample`` line, not at PyMC's (where every frame outside the libraries is
    an installed package's, the first of them).
    """
    import sys

    from modecfg._source import first_user_frame

    frame, _ = first_user_frame(1, past_installed=True)  # from our caller on
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
        return
    # stacklevel 1 is this function; warnings counts the frames above it leaving out importlib's
    # (an import in progress: the user's `import pytensor`), so they are left out here too, or
    # the warning would be put past the top of the stack, at "sys:1"
    level, here = 1, sys._getframe(0)
    while here is not frame and here.f_back is not None:
        here = here.f_back
        name = here.f_code.co_filename
        if not ("importlib" in name and "_bootstrap" in name):
            level += 1
    warnings.warn(message, category, stacklevel=level)


def act(
    action: str,
    message: str,
    *,
    warning: type[Warning],
    error: Callable[[], BaseException],
    log: logging.Logger,
    raise_after_pdb: bool = False,
) -> None:
    """What a check does once it found something, by its flag's value: ``warn`` warns
    (``warning``, at the user's line), ``raise`` raises ``error()``, ``pdb`` logs the message and
    stops in the debugger (``up`` shows the check's frame), then raises ``error()`` if
    ``raise_after_pdb`` (a guarded call must not return bad values). Anything else
    (``ignore``, ``off``) does nothing."""
    if action == "warn":
        warn(message, warning)
    elif action == "raise":
        raise error()
    elif action == "pdb":
        log.error("%s (stopping in the debugger: `up` shows the check's frame)", message)
        import pdb

        pdb.set_trace()
        if raise_after_pdb:
            raise error()


# -- warnings kept, not shown, in one thread ---------------------------------------------------
# Python 3.11's catch_warnings swaps process-wide state: used in one thread, it would swallow
# the warnings every other thread raises meanwhile. Python's warn() shows a warning through
# warnings._showwarnmsg, looked up at each warning: while some thread folds, that is _shown,
# which keeps the warnings of the threads folding and passes every other on, unchanged.
# (_thread's: threading is not imported to read the configuration, tests/test_startup.py)
_folding = _thread._local()  # .into: the list this thread's warnings go to, while it folds
_swap = _thread.allocate_lock()
_held: list[Any] = []  # [the function _shown stands in for] (kept after: a hook set since may call it)
_depth = [0]  # how many blocks fold, in all threads


def _shown(msg: warnings.WarningMessage) -> None:
    into = getattr(_folding, "into", None)
    if into is not None:
        into.append(msg)
    elif _held:
        _held[0](msg)


@contextlib.contextmanager
def folded() -> Iterator[list[warnings.WarningMessage]]:
    """The warnings this thread raises in the block, kept in the list given instead of shown
    (after the filters: one that a filter ignores is not kept, one it makes an error raises);
    other threads' warnings are shown as usual."""
    caught: list[warnings.WarningMessage] = []
    with _swap:
        if _depth[0] == 0:
            _held[:] = [getattr(warnings, "_showwarnmsg")]  # noqa: B009 - the hook warn() calls
            setattr(warnings, "_showwarnmsg", _shown)  # noqa: B010
        _depth[0] += 1
    outer = getattr(_folding, "into", None)
    _folding.into = caught
    try:
        yield caught
    finally:
        _folding.into = outer
        with _swap:
            _depth[0] -= 1
            if _depth[0] == 0:
                if getattr(warnings, "_showwarnmsg") is _shown:  # noqa: B009 - not if replaced since
                    setattr(warnings, "_showwarnmsg", _held[0])  # noqa: B010
