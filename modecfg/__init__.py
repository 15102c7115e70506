"""modecfg: typed configuration, compile modes and debugging aids for PyTensor.

>>> import modecfg
>>> modecfg.config.floatX
'float64'

The layers, lowest first: errors and the registries; the configuration
(:mod:`modecfg.config`); the PyTensor layer (:mod:`modecfg._pytensor`); modes, linkers,
checks, profiles and test values; this public API and the CLI. They are wired together
in one place, :mod:`modecfg._wiring`, when modecfg is imported.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from modecfg._lazy import LazyNames as _LazyNames
from modecfg._wiring import wire as _wire
from modecfg.config import (
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
from modecfg.errors import (
    CompileCacheWarning,
    ConfigError,
    ConfigErrors,
    DeviceFallbackWarning,
    DeviceUnavailableError,
    DumpError,
    DumpWarning,
    FlagSyntaxError,
    FlagValueError,
    Float64Error,
    Float64Warning,
    HeldFlagWarning,
    ImportAssignmentWarning,
    LinkerUnavailableError,
    ModecfgError,
    ModecfgWarning,
    NanGuardError,
    NanGuardWarning,
    ObsoleteFlagWarning,
    ProfileError,
    PyTensorIntegrationWarning,
    RcFileError,
    ReadOnlyFlagError,
    TestValueError,
    TestValueWarning,
    UnknownFlagError,
    UnknownFlagWarning,
    UnknownModeError,
    UntrustedDumpError,
)

if _TYPE_CHECKING:
    from modecfg import checks, linkers, modes, profiles
    from modecfg._pytensor.debugmode import DebugMode
    from modecfg.checks import check_float32
    from modecfg.config.explain import Explanation
    from modecfg.config.migrate import Migration, migrate_file, migrate_flags
    from modecfg.config.snapshot import Snapshot
    from modecfg.modes import register_mode
    from modecfg.modes.build import get_mode
    from modecfg.modes.compiling import compiled_with, function
    from modecfg.modes.dump import Dump, load_dump
    from modecfg.modes.monitor import MonitorMode
    from modecfg.modes.nanguard import NanGuardMode
    from modecfg.modes.profile import ProfileMode
    from modecfg.modes.replaying import replay

_wire()

__version__ = "0.1.0"

__all__ = [
    "CompileCacheWarning",
    "Config",
    "ConfigError",
    "ConfigErrors",
    "DebugMode",
    "DeviceFallbackWarning",
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
    "ReadOnlyFlagError",
    "Snapshot",
    "TestValueError",
    "TestValueWarning",
    "UnknownFlagError",
    "UnknownFlagWarning",
    "UnknownModeError",
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
    "migrate_file",
    "migrate_flags",
    "modes",
    "profiles",
    "register_mode",
    "replay",
]


# Loaded on first use: the float32 checks and the profile reports are not needed to read
# the configuration, the modes' functions and MonitorMode import PyTensor, and every module
# imported at start-up costs it (reading the configuration needs none of these).
__getattr__ = _LazyNames(
    __name__,
    {
        "checks": "modecfg.checks",
        "profiles": "modecfg.profiles",
        "linkers": "modecfg.linkers",
        "modes": "modecfg.modes",
        "register_mode": "modecfg.modes",
        "Explanation": "modecfg.config.explain",
        "Snapshot": "modecfg.config.snapshot",
        "Migration": "modecfg.config.migrate",
        "migrate_file": "modecfg.config.migrate",
        "migrate_flags": "modecfg.config.migrate",
        "check_float32": "modecfg.checks",
        "function": "modecfg.modes.compiling",
        "compiled_with": "modecfg.modes.compiling",
        "get_mode": "modecfg.modes.build",
        "replay": "modecfg.modes.replaying",
        "load_dump": "modecfg.modes.dump",
        "Dump": "modecfg.modes.dump",
        "MonitorMode": "modecfg.modes.monitor",
        "NanGuardMode": "modecfg.modes.nanguard",
        "ProfileMode": "modecfg.modes.profile",
        "DebugMode": "modecfg._pytensor.debugmode",
        "workers": "modecfg.workers",  # needs distributed (modecfg[dask]): not in __all__
    },
)
__dir__ = __getattr__.dir
