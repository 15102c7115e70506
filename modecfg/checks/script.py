"""Run a user's script with the float32 check on every function it compiles."""

from __future__ import annotations

from collections.abc import Sequence

from modecfg.checks.enforce import collecting
from modecfg.checks.float32 import Finding
from modecfg.scripts import run_script as _run

__all__ = ["check_script"]


def check_script(path: str, args: Sequence[str] = ()) -> list[Finding]:
    """Run ``path`` as ``__main__`` with ``args``; the float64 findings of its compiles.

    An exception of the script propagates after the findings gathered so far are
    attached to it as ``findings``.
    """
    with collecting() as found:
        try:
            _run(path, args)
        except BaseException as exc:
            exc.findings = list(found)  # type: ignore[attr-defined]
            raise
    return list(found)
