"""modecfg: typed configuration, compile modes and debugging aids for PyTensor.

>>> import modecfg
>>> modecfg.config.floatX
'float64'

The layers, lowest first: errors and the registries; the configuration
(:mod:`modecfg.configuration`); the PyTensor layer (:mod:`modecfg._pytensor`); modes, linkers,
checks, profiles and test values; this public API and the CLI. They are wired together
in one place, :mod:`modecfg._wiring`, when modecfg is imported.
"""

import gc as _gc
from typing import TYPE_CHECKING as _TYPE_CHECKING

if _TYPE_CHECKING:  # the names handed out on first use, each written here once (modecfg._lazy)
    from modecfg import checks as checks
    from modecfg import linkers as linkers
    from modecfg import modes as modes
    from modecfg import profiles as profiles
    from modecfg import workers as workers
    from modecfg._pytensor.debugmode import DebugMode as DebugMode
    from modecfg._pytensor.load import load_pytensor as load_pytensor
    from modecfg.checks import check_float32 as check_float32
    from modecfg.compare.mode import CompareMode as CompareMode
    from modecfg.configuration.explain import Explanation as Explanation
    from modecfg.configuration.migrate import Migration as Migration
    from modecfg.configuration.migrate import migrate_file as migrate_file
    from modecfg.configuration.migrate import migrate_flags as migrate_flags
    from modecfg.configuration.snapshot import Snapshot as Snapshot
    from modecfg.device.where import ran_on as ran_on
    from modecfg.errors import CacheArchiveError as CacheArchiveError
    from modecfg.errors import CacheLockTimeout as CacheLockTimeout
    from modecfg.errors import CompareError as CompareError
    from modecfg.errors import CompareWarning as CompareWarning
    from modecfg.errors import DeviceFallbackWarning as DeviceFallbackWarning
    from modecfg.errors import DeviceMemoryError as DeviceMemoryError
    from modecfg.errors import DumpError as DumpError
    from modecfg.errors import DumpWarning as DumpWarning
    from modecfg.errors import Float64Error as Float64Error
    from modecfg.errors import Float64Warning as Float64Warning
    from modecfg.errors import NanGuardError as NanGuardError
    from modecfg.errors import NanGuardWarning as NanGuardWarning
    from modecfg.errors import ProfileError as ProfileError
    from modecfg.errors import SharedValueError as SharedValueError
    from modecfg.errors import TestValueError as TestValueError
    from modecfg.errors import TestValueWarning as TestValueWarning
    from modecfg.errors import UntrustedCacheError as UntrustedCacheError
    from modecfg.errors import UntrustedDumpError as UntrustedDumpError
    from modecfg.modes import register_mode as register_mode
    from modecfg.modes.build import get_mode as get_mode
    from modecfg.modes.compiling import compiled_with as compiled_with
    from modecfg.modes.compiling import function as function
    from modecfg.modes.monitor import MonitorMode as MonitorMode
    from modecfg.modes.profile import ProfileMode as ProfileMode
    from modecfg.nanguard.dump_reading import Dump as Dump
    from modecfg.nanguard.dump_reading import load_dump as load_dump
    from modecfg.nanguard.mode import NanGuardMode as NanGuardMode
    from modecfg.nanguard.replaying import replay as replay

# A full collection falls due within the first few thousand objects made after `import pytensor`
# (its import leaves the collector's oldest-generation count at its threshold): without this
# pause it runs inside modecfg's import, 20-30 ms, which plain PyTensor pays at its first compile.
# Paused while modecfg's modules load, it stays where plain PyTensor has it.
_collecting = _gc.isenabled()
_gc.disable()
try:
    from modecfg._lazy import attach as _attach
    from modecfg._wiring import wire as _wire
    from modecfg.configuration import (
        Config,
        Diagnosis,
        Layer,
        Origin,
        Override,
        change_flags,
        config,
        diagnose,
        load,
    )
    from modecfg.errors import (  # the core's errors and warnings (the features': on first use)
        CompileCacheWarning,
        ConfigError,
        ConfigErrors,
        DeviceUnavailableError,
        FlagSyntaxError,
        FlagValueError,
        HeldFlagWarning,
        ImportAssignmentWarning,
        LinkerUnavailableError,
        ModecfgError,
        ModecfgWarning,
        ObsoleteFlagWarning,
        PyTensorIntegrationWarning,
        RcFileError,
        RcFileErrors,
        ReadOnlyFlagError,
        UnknownFlagError,
        UnknownFlagWarning,
        UnknownModeError,
    )

    _wire()
finally:
    if _collecting:
        _gc.enable()

__version__ = "0.1.0"

__all__ = [
    "CacheArchiveError",
    "CacheLockTimeout",
    "CompareError",
    "CompareMode",
    "CompareWarning",
    "CompileCacheWarning",
    "Config",
    "ConfigError",
    "ConfigErrors",
    "DebugMode",
    "DeviceFallbackWarning",
    "DeviceMemoryError",
    "DeviceUnavailableError",
    "Diagnosis",
    "Dump",
    "DumpError",
    "DumpWarning",
    "Explanation",
    "FlagSyntaxError",
    "FlagValueError",
    "Float64Error",
    "Float64Warning",
    "HeldFlagWarning",
    "ImportAssignmentWarning",
    "Layer",
    "LinkerUnavailableError",
    "Migration",
    "ModecfgError",
    "ModecfgWarning",
    "MonitorMode",
    "NanGuardError",
    "NanGuardMode",
    "NanGuardWarning",
    "ObsoleteFlagWarning",
    "Origin",
    "Override",
    "ProfileError",
    "ProfileMode",
    "PyTensorIntegrationWarning",
    "RcFileError",
    "RcFileErrors",
    "ReadOnlyFlagError",
    "SharedValueError",
    "Snapshot",
    "TestValueError",
    "TestValueWarning",
    "UnknownFlagError",
    "UnknownFlagWarning",
    "UnknownModeError",
    "UntrustedCacheError",
    "UntrustedDumpError",
    "__version__",
    "change_flags",
    "check_float32",
    "checks",
    "compiled_with",
    "config",
    "diagnose",
    "function",
    "get_mode",
    "linkers",
    "load",
    "load_dump",
    "load_pytensor",
    "migrate_file",
    "migrate_flags",
    "modes",
    "profiles",
    "ran_on",
    "register_mode",
    "replay",
]


# Loaded on first use: the float32 checks and the profile reports are not needed to read
# the configuration, the modes' functions and MonitorMode import PyTensor, and every module
# imported at start-up costs it (reading the configuration needs none of these). workers
# needs distributed (modecfg[dask]): handed out, not offered in __all__.
__getattr__ = _attach(__name__, __file__, hidden={"workers"})  # the TYPE_CHECKING block's, on first use
__dir__ = __getattr__.dir
