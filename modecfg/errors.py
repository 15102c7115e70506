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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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


class Float64Error(ModecfgError, TypeError):
    """float64 entered a graph compiled with floatX=float32 and warn_float64=raise.

    ``findings`` holds every origin of float64 (see :func:`modecfg.check_float32`).
    """

    def __init__(self, message: str, findings: Sequence[object] = ()) -> None:
        super().__init__(message)
        self.findings = tuple(findings)


class SharedValueError(ModecfgError, TypeError, ValueError):
    """A shared variable given a value its type cannot hold (``set_value`` of another dtype or
    number of dimensions), or holding one the device cannot (a dtype JAX has no arrays of).
    Nothing is changed: the variable keeps its value."""


class DeviceMemoryError(ModecfgError, MemoryError):
    """A shared variable whose value does not fit in the GPU's memory; names it and its size.
    Nothing is placed: the function's shared variables stay where they were."""


class NanGuardError(ModecfgError, FloatingPointError):
    """A guarded function produced NaN, Inf or a value above the `big` threshold.

    ``bad`` is the first bad value in the graph as written (its node, its user line), when it
    was found; ``dump_path`` the dump written for ``modecfg replay`` (None: none, the message
    says why); ``bad_outputs`` the outputs and updates that came out bad."""

    def __init__(
        self,
        message: str,
        *,
        bad: Any = None,  # a modecfg.nanguard.mode.BadValue (named, not imported: errors.py is the bottom)
        dump_path: str | None = None,
        bad_outputs: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.bad = bad
        self.dump_path = dump_path
        self.bad_outputs = list(bad_outputs)

    def _repr_html_(self) -> str:  # a caught error shown in a notebook: the findings, readable
        from modecfg._html import pre

        return pre(str(self), title="NanGuardError", color="#a00")


class CompareError(ModecfgError, ArithmeticError):
    """The backends of a CompareMode call computed different values.

    ``comparison`` (a :class:`modecfg.compare.mode.Comparison`) holds what was found: the
    outputs that differ and on which backends, the first node that differs, the rewrite that
    introduced it, the reproduction script written."""

    def __init__(self, message: str, *, comparison: object = None) -> None:
        super().__init__(message)
        self.comparison = comparison

    def _repr_html_(self) -> str:
        from modecfg._html import pre

        return pre(str(self), title="CompareError", color="#a00")


class TestValueError(ModecfgError, ValueError):
    """A node failed on its inputs' test values (compute_test_value=raise)."""

    __test__ = False  # not a test class, whatever pytest thinks of the name


class DumpError(ModecfgError, ValueError):
    """A file that is not a modecfg NaN-guard dump, or a dump that cannot be read or replayed."""

    exit_code = 2


class UntrustedDumpError(DumpError):
    """A replay asked of a dump that is not signed with the user's own key, without trust:
    running it would run the code its graph pickle holds. Its data part can still be read
    (``modecfg.load_dump``)."""

    exit_code = 3


class CacheLockTimeout(ModecfgError, TimeoutError):
    """The compile lock of a cache stayed held longer than allowed. ``holders`` lists who held
    it, when this host can tell (else it is empty)."""

    exit_code = 3

    def __init__(self, message: str, holders: Sequence[object] = ()) -> None:
        super().__init__(message)
        self.holders = tuple(holders)


class CacheArchiveError(ModecfgError, ValueError):
    """An exported compile cache that cannot be read, is damaged, or was built for another machine
    or other versions than this one."""

    exit_code = 2


class UntrustedCacheError(CacheArchiveError):
    """An import asked of an exported cache not signed with the user's own key, without trust:
    a cache holds compiled code and pickles that would run here."""

    exit_code = 3


class ProfileError(ModecfgError, ValueError):
    """A profile report asked of a function compiled without profiling."""


class ModecfgWarning(UserWarning):
    """Base of every warning modecfg emits."""


class NanGuardWarning(ModecfgWarning):
    """A guarded function produced NaN, Inf or a big value (action=warn)."""


class CompareWarning(ModecfgWarning):
    """Backends computing one CompareMode call differ (``CompareMode.action=warn``)."""


class TestValueWarning(ModecfgWarning):
    """A node's test value could not be computed (compute_test_value=warn), or an
    operation cannot compute test values at all."""

    __test__ = False  # not a test class, whatever pytest thinks of the name


class DeviceFallbackWarning(ModecfgWarning):
    """A GPU device was asked for and could not be used; the graph runs on the CPU."""


class DumpWarning(ModecfgWarning):
    """A NaN-guard dump replayed under other versions of PyTensor, numpy or Python than the
    ones it was written with: the replay may not behave as the original call did."""


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


class Float64Warning(ModecfgWarning):
    """float64 entered a graph compiled with floatX=float32 and warn_float64=warn."""


class PyTensorIntegrationWarning(ModecfgWarning):
    """The installed PyTensor is outside the tested range, or differs where modecfg meets it:
    the integration points that could not be verified are left off (``modecfg doctor``)."""
