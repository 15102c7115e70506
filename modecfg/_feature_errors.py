"""The features' errors and warnings: the part of :mod:`modecfg.errors`' hierarchy that only a
feature raises (the NaN guard, CompareMode, test values, dumps, the caches, the device path,
profiles, the float32 check).

Made when first named (``modecfg.errors.NanGuardError``, ``modecfg.NanGuardError``, an
``except`` clause or a feature's import): a process that uses none of them pays nothing for
them at ``import modecfg``. Each is ``modecfg.errors``' own to everyone else: its module says
so (tracebacks, reprs and pickles name ``modecfg.errors``, which hands it out), and
``modecfg.errors``' docstring draws it in the one tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modecfg.errors import ModecfgError, ModecfgWarning

__all__ = [
    "CacheArchiveError",
    "CacheLockTimeout",
    "CompareError",
    "CompareWarning",
    "DeviceFallbackWarning",
    "DeviceMemoryError",
    "DumpError",
    "DumpWarning",
    "Float64Error",
    "Float64Warning",
    "NanGuardError",
    "NanGuardWarning",
    "ProfileError",
    "SharedValueError",
    "TestValueError",
    "TestValueWarning",
    "UntrustedCacheError",
    "UntrustedDumpError",
]


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


class Float64Warning(ModecfgWarning):
    """float64 entered a graph compiled with floatX=float32 and warn_float64=warn."""


for _name in __all__:  # modecfg.errors' own to tracebacks, reprs and pickles (it hands them out)
    globals()[_name].__module__ = "modecfg.errors"
del _name
