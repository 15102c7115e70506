"""Warnings that point at the user's line, however deep in modecfg they are raised, and the
one dispatch of the ``warn`` / ``raise`` / ``pdb`` choice the checks share (float64 in a
float32 graph, the NaN guard, test values)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # logging is not imported to read the configuration (start-up time)
    import logging

__all__ = ["act", "warn"]


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` with the stack level of the first frame of user code.

    Frames of modecfg, PyTensor, numpy and the standard library are passed over, so
    that a warning raised while compiling points at the user's compile call.
    """
    import sys

    from modecfg._source import first_user_frame

    frame, _ = first_user_frame(1)  # from our caller on
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
