"""What profiling needs of PyTensor: its ProfileStats, made and listed, and a mode whose linker
times nodes.

PyTensor times nodes only on its VM linkers: a mode whose linker cannot (numba, c|py, py, c)
is profiled with the closest one that can (cvm, else vm), and that is said once. A JAX
function is profiled as it runs, on its device: one XLA program, timed whole, with the bytes
sent (:class:`modecfg.device.jaxlink.DeviceThunk`).
PyTensor keeps every ProfileStats made with ``atexit_print`` in a module list; modecfg's
summary (:mod:`modecfg.profiles.session`) reads it from here.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any

from modecfg._locks import fork_safe
from modecfg._pytensor import marks
from modecfg._pytensor.kinds import linker_name
from modecfg._registry.linkers import why_unavailable
from modecfg._warn import warn
from modecfg.configuration import config
from modecfg.errors import ModecfgWarning

__all__ = ["all_stats", "mark_printed", "new_stats", "printed_as_is", "timing_mode"]

_lock = fork_safe(sys.modules[__name__], "_lock", threading.Lock)
_said = False


def timing_mode(mode: Any) -> tuple[Any, str]:
    """``mode``, or a copy with a linker that times nodes; and the note saying so."""
    global _said
    from pytensor.compile.mode import Mode
    from pytensor.link.vm import VMLinker

    linker = mode.linker
    if isinstance(linker, VMLinker) or not hasattr(linker, "accept") or type(mode) is not Mode:
        return mode, ""  # the VMs time nodes; modes with linkers of their own are left as they are
    was = linker_name(linker)
    if was == "jax":  # timed on its device as one XLA program (modecfg.device.jaxlink)
        return mode, ""
    python_only = was == "py"
    closest = "vm" if python_only or why_unavailable("cvm", str(config.cxx)) else "cvm"
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

    from modecfg._pytensor.hooks import hooks

    if hooks.profile_made is not None:  # the printer on before the first ProfileStats is made
        hooks.profile_made()

    stats = ProfileStats(atexit_print=True, message=name or "<unnamed function>")
    setattr(stats, marks.PROFILE_NAME, name)
    setattr(stats, marks.PROFILE_TIMED_BY, linker)
    setattr(stats, marks.PROFILE_NOTE, note)
    return stats


def all_stats() -> list[Any]:
    """Every ProfileStats of the process, in creation order (PyTensor keeps the list; none
    before PyTensor is imported, and asking does not import it)."""
    if "pytensor" not in sys.modules:
        return []
    from pytensor.compile.debug import profiling

    return list(profiling._atexit_print_list)


def mark_printed(stats: list[Any]) -> None:
    """These profiles are reported already (``print_summary()``, ``modecfg profile``): the summary
    at exit leaves each out unless it ran again since. Their figures are not touched."""
    for one in stats:
        _printed[id(one)] = (weakref.ref(one), int(one.fct_callcount), float(one.compile_time))


def printed_as_is(stats: Any) -> bool:
    """Whether ``stats`` was reported and has not run or compiled since."""
    now = (int(stats.fct_callcount), float(stats.compile_time))
    found = _printed.get(id(stats))
    return found is not None and found[0]() is stats and found[1:] == now


# id -> (the profile, its calls and compile time when reported); a dead one's id may be reused
_printed: dict[int, tuple[weakref.ref[Any], int, float]] = {}
