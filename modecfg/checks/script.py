"""Run a user's script with the float32 check on every function it compiles."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

from modecfg.checks.enforce import collecting
from modecfg.checks.float32 import Finding

__all__ = ["run_script"]


def run_script(path: str, args: Sequence[str] = ()) -> list[Finding]:
    """Run ``path`` as ``__main__`` with ``args``; the float64 findings of its compiles.

    An exception of the script propagates after the findings gathered so far are
    attached to it as ``findings``.
    """
    saved_argv = sys.argv
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as `python SCRIPT` does
    try:
        with collecting() as found:
            try:
                runpy.run_path(path, run_name="__main__")
            except BaseException as exc:
                exc.findings = list(found)  # type: ignore[attr-defined]
                raise
        return list(found)
    finally:
        sys.argv = saved_argv
        sys.path.pop(0)
