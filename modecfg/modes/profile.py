"""ProfileMode, Theano's profiling mode, kept as a deprecated alias of FAST_RUN + profiling.

Theano's spelling works: ``ProfileMode(optimizer=..., linker=...)``, a function compiled
with it is profiled, and ``mode.print_summary()`` prints the profile of every function it
compiled, then one merged for them all (modecfg's report: node times, your lines).
"""

from __future__ import annotations

import sys
from typing import IO, Any

from modecfg._pytensor.subclasses import ProfilingMode

__all__ = ["ProfileMode"]


class ProfileMode(ProfilingMode):
    """FAST_RUN with every compiled function profiled (``fn.profile.summary()``).

    A linker that cannot time nodes (numba, c|py, py, c) is replaced by cvm (or vm),
    said once, as for any profiled compile.
    """

    def __init__(self, linker: Any = None, optimizer: Any = "default", db: Any = None) -> None:
        if linker is None:
            from modecfg.device.where import resolved_linker

            linker = resolved_linker()
        super().__init__(linker, optimizer, db)

    def print_summary(self, n_apply_to_print: int | None = None, n_ops_to_print: int | None = None,
                      file: IO[str] | None = None) -> None:  # fmt: skip
        """Theano's ``ProfileMode.print_summary()``: the profile of each function compiled with
        this mode, then one merged for them all (rows: the profiling.n_apply / n_ops flags)."""
        from modecfg.configuration import config
        from modecfg.profiles.rows import ProfileReport

        out = file if file is not None else sys.stdout
        n_apply = int(config.profiling.n_apply if n_apply_to_print is None else n_apply_to_print)
        n_ops = int(config.profiling.n_ops if n_ops_to_print is None else n_ops_to_print)
        from modecfg.profiles.session import mark_printed

        stats = list(self.profiles())
        reports = [ProfileReport.from_stats(s) for s in stats]
        if not reports:
            out.write("ProfileMode: no function compiled with this mode yet\n")
            return
        for report in reports:
            out.write(report.text(n_apply, n_ops) + "\n\n")
        if len(reports) > 1:
            out.write(ProfileReport.merged(reports).text(n_apply, n_ops) + "\n")
        mark_printed(stats)  # not again at exit, unless they run again
