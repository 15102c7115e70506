"""Which functions were profiled, and the summary printed at exit.

Profiling is on for a compile when ``profile=True`` is passed, when the ``profile`` flag
is on, or in the deprecated ProfileMode; the profiles themselves and the linker that times
them are PyTensor's (:mod:`modecfg._pytensor.profiling`, re-exported here). Every profile,
whichever door the function came through, is printed at exit as modecfg's summary to
``profiling.destination`` (PyTensor's own long dump is replaced: the "profile printer" of
:mod:`modecfg._pytensor.patches`).
"""

from __future__ import annotations

import sys
from typing import Any

from modecfg._pytensor.profiling import all_stats, mark_printed, new_stats, printed_as_is, timing_mode
from modecfg.configuration import config

__all__ = ["all_stats", "mark_printed", "new_stats", "print_at_exit", "reports", "timing_mode"]


def reports(since: int = 0, unprinted: bool = False) -> list[Any]:
    """A ProfileReport per profiled function that ran or compiled, in creation order
    (``since``: leave out the first ones, e.g. those made before a script ran; ``unprinted``:
    those reported already and not run since)."""
    from modecfg.profiles.rows import ProfileReport

    min_size = int(config.profiling.min_memory_size)
    return [
        ProfileReport.from_stats(s, min_memory_size=min_size)
        for s in all_stats()[since:]
        if (s.fct_callcount or s.compile_time) and not (unprinted and printed_as_is(s))
    ]


def print_at_exit() -> None:
    """modecfg's summary of every profile not reported yet, to ``profiling.destination``; each is
    then reported (the core's exit handler, which runs after the printer, prints none again)."""
    from modecfg.profiles.rows import ProfileReport

    found = reports(unprinted=True)
    mark_printed(all_stats())
    if not found:
        return
    n_apply, n_ops = int(config.profiling.n_apply), int(config.profiling.n_ops)
    parts = [r.text(n_apply, n_ops) for r in found]
    if len(found) > 1:
        parts.append(ProfileReport.merged(found).text(n_apply, n_ops))
    text = "\n\n".join(parts) + "\n"
    destination = str(config.profiling.destination)
    if destination == "stderr":
        sys.stderr.write(text)
    elif destination == "stdout":
        sys.stdout.write(text)
    else:
        with open(destination, "w", encoding="utf-8") as fh:
            fh.write(text)
