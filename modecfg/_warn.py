"""Warnings that point at the user's line, however deep in modecfg they are raised."""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` with the stack level of the first frame outside modecfg."""
    level = 2  # 1 would be this function; 2 its caller
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, category, stacklevel=level)
