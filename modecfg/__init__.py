"""modecfg: typed configuration, compile modes and debugging aids for PyTensor.

>>> import modecfg
>>> modecfg.config.floatX
'float64'
"""

from modecfg import linkers, modes
from modecfg.config import (
    Config,
    Diagnosis,
    Explanation,
    Layer,
    Origin,
    Override,
    change_flags,
    config,
    diagnose,
    load,
)
from modecfg.config.migrate import Migration, migrate_file, migrate_flags
from modecfg.errors import (
    ConfigError,
    ConfigErrors,
    FlagSyntaxError,
    FlagValueError,
    Float64Error,
    Float64Warning,
    ModecfgError,
    ModecfgWarning,
    NanGuardError,
    ObsoleteFlagWarning,
    RcFileError,
    ReadOnlyFlagError,
    UnknownFlagError,
)

__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "ConfigErrors",
    "Diagnosis",
    "Explanation",
    "FlagSyntaxError",
    "FlagValueError",
    "Float64Error",
    "Float64Warning",
    "Layer",
    "Migration",
    "ModecfgError",
    "ModecfgWarning",
    "NanGuardError",
    "ObsoleteFlagWarning",
    "Origin",
    "Override",
    "RcFileError",
    "ReadOnlyFlagError",
    "UnknownFlagError",
    "__version__",
    "change_flags",
    "config",
    "diagnose",
    "linkers",
    "load",
    "migrate_file",
    "migrate_flags",
    "modes",
]
