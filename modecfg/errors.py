"""The exceptions and warnings modecfg raises.

Every error names what was wrong, where it came from and what is valid::

    ModecfgError
    ├── ConfigError (ValueError)            bad configuration input
    │   ├── UnknownFlagError (AttributeError) a flag nobody knows (with did-you-mean)
    │   ├── FlagValueError                   a known flag with a bad value
    │   ├── FlagSyntaxError                  a malformed flag string (no '=', open quote)
    │   ├── RcFileError                      an unreadable or malformed rc file
    │   ├── ReadOnlyFlagError                a flag PyTensor fixed at first use
    │   ├── UnknownModeError                 a mode name nobody registered
    │   ├── LinkerUnavailableError           a linker this machine cannot run (and why)
    │   ├── DeviceUnavailableError           a device this machine cannot use (and why)
    │   └── ConfigErrors                     several of the above at once (``.errors``)
    │       └── RcFileErrors (RcFileError)   several problems of one rc file, all found in one pass
    ├── Float64Error                         float64 in a float32 graph
    ├── SharedValueError (TypeError)         a shared variable's value its type or the device cannot hold
    ├── DeviceMemoryError (MemoryError)      a shared variable that does not fit in the GPU's memory
    ├── NanGuardError                        NaN / Inf / huge value in a guarded call
    ├── CompareError                         backends computing one call differ (node, rewrite, repro)
    ├── TestValueError                       a node fails on its inputs' test values
    ├── DumpError                            a NaN-guard dump that cannot be read or replayed
    │   └── UntrustedDumpError               a dump not signed with your key, run without trust
    ├── CacheLockTimeout (TimeoutError)      the compile lock stayed held (names its holder, the fixes)
    ├── CacheArchiveError (ValueError)       an exported cache that cannot be read or does not fit here
    │   └── UntrustedCacheError              an exported cache not signed with your key, without trust
    └── ProfileError (ValueError)            a profile asked of a function compiled without one

    ModecfgWarning (UserWarning)
    ├── ObsoleteFlagWarning                  a legacy Theano/Aesara flag or value
    ├── Float64Warning                       float64 in a float32 graph
    ├── NanGuardWarning                      NaN / Inf / huge value in a guarded call (action=warn)
    ├── CompareWarning                       backends computing one call differ (action=warn)
    ├── TestValueWarning                     a test value that could not be computed (=warn)
    ├── DeviceFallbackWarning                a GPU asked for and unusable: the CPU runs it
    ├── DumpWarning                          a dump replayed under other versions than it was written
    ├── HeldFlagWarning                      a setting of PyTensor's own flags that PyTensor did not take
    ├── UnknownFlagWarning                   pytensor.config.<name> = ... for a name no flag has
    ├── ImportAssignmentWarning              a package's import set a flag over your environment/rc
    ├── CompileCacheWarning                  a compile cache other users may write (their code, run here)
    └── PyTensorIntegrationWarning           an integration point left off (PyTensor differs)

The command line turns a :class:`ModecfgError` into its message and ``exit_code``.

The errors and warnings of the configuration and of PyTensor's integration, which every process
may meet, are defined here; those only a feature raises (from ``Float64Error`` down, and the
warnings of the features) in :mod:`modecfg._feature_errors`, made when first named: this module
hands them out as its own (``modecfg.errors.NanGuardError``; their ``__module__`` says
``modecfg.errors``), and a process that meets none of them does not pay for their classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from modecfg._lazy import attach as _attach

if TYPE_CHECKING:  # the features' own, made when first named (the first block: modecfg._lazy reads it)
    from modecfg._feature_errors import CacheArchiveError as CacheArchiveError
    from modecfg._feature_errors import CacheLockTimeout as CacheLockTimeout
    from modecfg._feature_errors import CompareError as CompareError
    from modecfg._feature_errors import CompareWarning as CompareWarning
    from modecfg._feature_errors import DeviceFallbackWarning as DeviceFallbackWarning
    from modecfg._feature_errors import DeviceMemoryError as DeviceMemoryError
    from modecfg._feature_errors import DumpError as DumpError
    from modecfg._feature_errors import DumpWarning as DumpWarning
    from modecfg._feature_errors import Float64Error as Float64Error
    from modecfg._feature_errors import Float64Warning as Float64Warning
    from modecfg._feature_errors import NanGuardError as NanGuardError
    from modecfg._feature_errors import NanGuardWarning as NanGuardWarning
    from modecfg._feature_errors import ProfileError as ProfileError
    from modecfg._feature_errors import SharedValueError as SharedValueError
    from modecfg._feature_errors import TestValueError as TestValueError
    from modecfg._feature_errors import TestValueWarning as TestValueWarning
    from modecfg._feature_errors import UntrustedCacheError as UntrustedCacheError
    from modecfg._feature_errors import UntrustedDumpError as UntrustedDumpError

if TYPE_CHECKING:  # origin.py imports nothing of modecfg: it sits in the bottom layer (test_layers)
    from modecfg.configuration.origin import Origin

__all__ = [
    "CacheArchiveError",
    "CacheLockTimeout",
    "CompareError",
    "CompareWarning",
    "CompileCacheWarning",
    "ConfigError",
    "ConfigErrors",
    "DeviceFallbackWarning",
    "DeviceMemoryError",
    "DeviceUnavailableError",
    "DumpError",
    "DumpWarning",
    "FlagSyntaxError",
    "FlagValueError",
    "Float64Error",
    "Float64Warning",
    "HeldFlagWarning",
    "ImportAssignmentWarning",
    "LinkerUnavailableError",
    "ModecfgError",
    "ModecfgWarning",
    "NanGuardError",
    "NanGuardWarning",
    "ObsoleteFlagWarning",
    "ProfileError",
    "PyTensorIntegrationWarning",
    "RcFileError",
    "RcFileErrors",
    "ReadOnlyFlagError",
    "SharedValueError",
    "TestValueError",
    "TestValueWarning",
    "UnknownFlagError",
    "UnknownFlagWarning",
    "UnknownModeError",
    "UntrustedCacheError",
    "UntrustedDumpError",
]


class ModecfgError(Exception):
    """Base of every error modecfg raises on purpose."""

    exit_code = 1


class ConfigError(ModecfgError, ValueError):
    """Bad configuration input. ``flag`` and ``origin`` say what and where, when known."""

    def __init__(
        self,
        message: str,
        *,
        flag: str | None = None,
        origin: Origin | None = None,
    ) -> None:
        super().__init__(message)
        self.flag = flag
        self.origin = origin


class UnknownFlagError(ConfigError, AttributeError):
    """A flag name that no version of Theano, Aesara, PyTensor or modecfg knows.

    Also an ``AttributeError``, so ``hasattr(config, "nope")`` is simply False.
    """

    def __init__(
        self,
        message: str,
        *,
        flag: str | None = None,
        origin: Origin | None = None,
        suggestions: Sequence[str] = (),
    ) -> None:
        super().__init__(message, flag=flag, origin=origin)
        self.suggestions = tuple(suggestions)


class FlagValueError(ConfigError):
    """A known flag given a value it cannot take."""

    def __init__(
        self,
        message: str,
        *,
        flag: str | None = None,
        origin: Origin | None = None,
        value: object = None,
        choices: Sequence[str] = (),
    ) -> None:
        super().__init__(message, flag=flag, origin=origin)
        self.value = value
        self.choices = tuple(choices)


class FlagSyntaxError(ConfigError):
    """A flag string that cannot be split into ``name=value`` items."""


class RcFileError(ConfigError):
    """An rc file that cannot be read, decoded or parsed."""


class ReadOnlyFlagError(ConfigError):
    """A flag PyTensor has already used and cannot change for this process."""


class UnknownModeError(ConfigError):
    """A mode name that is not registered."""


class LinkerUnavailableError(ConfigError):
    """A linker this machine cannot run: no C++ compiler, or its backend not installed."""


class DeviceUnavailableError(ConfigError):
    """A device this machine cannot use: no GPU, or no GPU-capable backend installed."""


_LISTED = 50  # problems written out in a ConfigErrors message


def shown(value: object, limit: int = 120) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters (a value may be a megabyte)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}... ({len(text)} characters)"


class ConfigErrors(ConfigError):
    """Several configuration problems found in one pass; each is in ``errors``."""

    def __init__(self, errors: Sequence[ConfigError]) -> None:
        self.errors = tuple(errors)
        lines = [f"{len(self.errors)} configuration problems:"]
        lines += [f"  - {err}" for err in self.errors[:_LISTED]]
        if len(self.errors) > _LISTED:  # all of them stay in .errors
            lines.append(f"  ... and {len(self.errors) - _LISTED} more (every one is in .errors)")
        super().__init__("\n".join(lines))


class RcFileErrors(ConfigErrors, RcFileError):
    """Several problems of one rc file, found in one pass; each is in ``errors`` (``origin``: the
    first one's)."""

    def __init__(self, errors: Sequence[ConfigError]) -> None:
        super().__init__(errors)
        self.origin = self.errors[0].origin if self.errors else None


class ModecfgWarning(UserWarning):
    """Base of every warning modecfg emits."""


class HeldFlagWarning(ModecfgWarning):
    """A setting of one of PyTensor's own flags (modecfg does not declare it) that PyTensor did
    not take: it has no such flag after all, or, imported before modecfg, it refuses the value.
    Found while PyTensor is imported, where modecfg may not raise."""


class CompileCacheWarning(ModecfgWarning):
    """PyTensor's compile cache (``base_compiledir``) lies where another user can write: PyTensor
    loads the shared objects it finds there, so whoever writes it runs code in your process."""


class ImportAssignmentWarning(ModecfgWarning):
    """A package, while it was being imported, assigned a flag over the value you set in the
    environment or an rc file (said once per line of the package): your value no longer
    applies. Importing a library should not change your configuration unseen."""


class UnknownFlagWarning(ModecfgWarning):
    """An assignment on ``pytensor.config`` to a name that no flag of modecfg or PyTensor has
    (a typo: ``pytensor.config.floatx``), with the did-you-mean. A warning, not an error, as in
    plain PyTensor the assignment is stored: libraries keep attributes there."""


class ObsoleteFlagWarning(ModecfgWarning):
    """A legacy flag or value that is accepted but no longer does anything (or was renamed)."""


class PyTensorIntegrationWarning(ModecfgWarning):
    """The installed PyTensor is outside the tested range, or differs where modecfg meets it:
    the integration points that could not be verified are left off (``modecfg doctor``)."""


__getattr__ = _attach(__name__, __file__)  # the TYPE_CHECKING block's names, on first use
__dir__ = __getattr__.dir
