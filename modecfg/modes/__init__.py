"""Named compile modes, built from the configuration and executed by PyTensor.

Nothing here imports PyTensor until a mode is built or a function compiled: the names that
need it (``function``, ``get_mode``, ``table``, ``compiled_with``, ``replay``,
``load_dump``, ``MonitorMode``) are the objects of the modules that define them, loaded on first use.
"""

from typing import TYPE_CHECKING

from modecfg._lazy import LazyNames as _LazyNames
from modecfg._registry.modes import (
    ModeEntry,
    canonical_mode,
    entries,
    mode_names,
    register_mode,
)

if TYPE_CHECKING:
    from modecfg._pytensor.debugmode import DebugMode
    from modecfg.modes.build import get_mode, table
    from modecfg.modes.compiling import compiled_with, function
    from modecfg.modes.dump import Dump, load_dump
    from modecfg.modes.monitor import MonitorMode
    from modecfg.modes.nanguard import NanGuardMode
    from modecfg.modes.profile import ProfileMode
    from modecfg.modes.replaying import replay

__all__ = [
    "DebugMode",
    "Dump",
    "ModeEntry",
    "MonitorMode",
    "NanGuardMode",
    "ProfileMode",
    "canonical_mode",
    "compiled_with",
    "entries",
    "function",
    "get_mode",
    "load_dump",
    "mode_names",
    "register_mode",
    "replay",
    "table",
]

# name -> the module that defines it (each imports PyTensor)
__getattr__ = _LazyNames(
    __name__,
    {
        "get_mode": "modecfg.modes.build",
        "table": "modecfg.modes.build",
        "function": "modecfg.modes.compiling",
        "compiled_with": "modecfg.modes.compiling",
        "replay": "modecfg.modes.replaying",
        "load_dump": "modecfg.modes.dump",
        "Dump": "modecfg.modes.dump",
        "MonitorMode": "modecfg.modes.monitor",
        "NanGuardMode": "modecfg.modes.nanguard",
        "ProfileMode": "modecfg.modes.profile",
        "DebugMode": "modecfg._pytensor.debugmode",
    },
)
__dir__ = __getattr__.dir
