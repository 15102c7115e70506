"""Named compile modes, built from the configuration and executed by PyTensor.

Nothing here imports PyTensor until a mode is built or a function compiled: the names that
need it (``function``, ``get_mode``, ``table``, ``compiled_with``, ``replay``,
``load_dump``, ``MonitorMode``) are the objects of the modules that define them, loaded on first use.
"""

from typing import TYPE_CHECKING

from modecfg._lazy import attach as _attach
from modecfg._registry.modes import (
    ModeEntry,
    canonical_mode,
    entries,
    mode_names,
    register_mode,
)

if TYPE_CHECKING:  # the names handed out on first use, each written here once (modecfg._lazy)
    from modecfg._pytensor.debugmode import DebugMode as DebugMode
    from modecfg.compare.mode import CompareMode as CompareMode
    from modecfg.modes.build import get_mode as get_mode
    from modecfg.modes.build import table as table
    from modecfg.modes.compiling import compiled_with as compiled_with
    from modecfg.modes.compiling import function as function
    from modecfg.modes.monitor import MonitorMode as MonitorMode
    from modecfg.modes.profile import ProfileMode as ProfileMode
    from modecfg.nanguard.dump_reading import Dump as Dump
    from modecfg.nanguard.dump_reading import load_dump as load_dump
    from modecfg.nanguard.mode import NanGuardMode as NanGuardMode
    from modecfg.nanguard.replaying import replay as replay

__all__ = [
    "CompareMode",
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

# The lazy names: each imports PyTensor.
__getattr__ = _attach(__name__, __file__)  # the TYPE_CHECKING block's names, on first use
__dir__ = __getattr__.dir
