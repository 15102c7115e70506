"""Which functions are profiled, with which linker, and the summary printed at exit.

Profiling is on for a compile when ``profile=True`` is passed, when the ``profile`` flag
is on, or in the deprecated ProfileMode. PyTensor times nodes only on its VM linkers:
a mode whose linker cannot (numba, jax) is profiled with the closest one that can
(cvm, else vm), and that is said once. Every profile, whichever door the function came
through, is printed at exit as modecfg's summary to ``profiling.destination`` (PyTensor's
own long dump is replaced: the "profile printer" of :mod:`modecfg._pytensor.patches`).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from modecfg._locks import fork_safe
from modecfg._pytensor import marks
from modecfg._warn import warn
from modecfg.config import config
from modecfg.errors import ModecfgWarning

__all__ = ["all_stats", "new_stats", "print_at_exit", "reports", "timing_mode"]

_lock = fork_safe(sys.modules[__name__], "_lock", threading.Lock)
_said = False


def timing_mode(mode: Any) -> tuple[Any, str]:
    """``mode``, or a copy with a linker that times nodes; and the note saying so."""
    global _said
    from pytensor.compile.mode import Mode
    from pytensor.link.vm import VMLinker

    from modecfg._registry.linkers import linker_name
    from modecfg.linkers import why_unavailable

    linker = mode.linker
    if isinstance(linker, VMLinker) or not hasattr(linker, "accept") or type(mode) is not Mode:
        return mode, ""  # the VMs time nodes; modes with linkers of their own are left as they are
    was = linker_name(linker)
    python_only = was == "py"
    closest = "vm" if python_only or why_unavailable("cvm") else "cvm"
    note = f"the {was} linker cannot time nodes: profiled with {closest}"
    with _lock:
        first, _said = not _said, True
    if first:
        warn(f"{note} (the times are {closest}'s, the graph the same)", ModecfgWarning)
    if python_only:  # Python implementations, timed: the vm linker with Python thunks
        return Mode(linker=VMLinker(use_cloop=False, c_thunks=False), optimizer=mode.provided_optimizer), note
    return Mode(linker=closest, optimizer=mode.provided_optimizer), note


def new_stats(name: str | None, linker: str = "", note: str = "") -> Any:
    """A PyTensor ProfileStats that modecfg prints at exit."""
    from pytensor.compile.debug.profiling import ProfileStats

    stats = ProfileStats(atexit_print=True, message=name or "<unnamed function>")
    setattr(stats, marks.PROFILE_NAME, name)
    setattr(stats, marks.PROFILE_TIMED_BY, linker)
    setattr(stats, marks.PROFILE_NOTE, note)
    return stats


def all_stats() -> list[Any]:
    """Every ProfileStats of the process (PyTensor keeps the list)."""
    if "pytensor" not in sys.modules:
        return []
    from pytensor.compile.debug import profiling

    return list(profiling._atexit_print_list)


def reports(since: int = 0) -> list[Any]:
    """A ProfileReport per profiled function that ran or compiled, in creation order
    (``since``: leave out the first ones, e.g. those made before a script ran)."""
    from modecfg.profiles.report import ProfileReport

    min_size = int(config.profiling.min_memory_size)
    return [
        ProfileReport.from_stats(s, min_memory_size=min_size)
        for s in all_stats()[since:]
        if s.fct_callcount or s.compile_time
    ]


def print_at_exit() -> None:
    """modecfg's summary of every profile, to ``profiling.destination``."""
    from modecfg.profiles.report import ProfileReport

    found = reports()
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
