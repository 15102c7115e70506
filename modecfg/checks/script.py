"""Run a user's script with the float32 check on every function it compiles."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from modecfg.checks.enforce import collecting
from modecfg.checks.float32 import Finding
from modecfg.scripts import run_script as _run

__all__ = ["check_script"]


def check_script(
    path: str,
    args: Sequence[str] = (),
    *,
    keep_main: bool = False,
    before_exit: Callable[[list[Finding], int], None] | None = None,
) -> list[Finding]:
    """Run ``path`` as ``__main__`` with ``args``; the float64 findings of its compiles.

    An exception of the script propagates after the findings gathered so far are
    attached to it as ``findings``; where the script ends the process with ``os._exit``,
    ``before_exit`` is given them first, with the status.
    """
    with collecting() as found:

        def report(code: int) -> None:
            if before_exit is not None:
                before_exit(list(found), code)

        try:
            _run(path, args, keep_main=keep_main, before_exit=report if before_exit is not None else None)
        except BaseException as exc:
            exc.findings = list(found)  # type: ignore[attr-defined]
            raise
    return list(found)
