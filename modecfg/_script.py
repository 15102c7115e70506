"""Run a user's script as ``python SCRIPT ARGS`` would, inside this process."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

__all__ = ["run_script"]


def run_script(path: str, args: Sequence[str] = ()) -> None:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *args]``; its exceptions propagate."""
    saved = sys.argv
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved
        sys.path.pop(0)
