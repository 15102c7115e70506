"""Warnings that point at the user's line, however deep in modecfg they are raised."""

from __future__ import annotations

import sys
import warnings

__all__ = ["warn"]


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` with the stack level of the first frame of user code.

    Frames of modecfg, PyTensor, numpy and the standard library are passed over, so
    that a warning raised while compiling points at the user's compile call.
    """
    from modecfg._source import is_library

    level = 2  # 1 would be this function; 2 its caller
    frame = sys._getframe(1)
    while frame.f_back is not None and is_library(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
