"""The registry of compile modes: names, what each is for, and how to build it.

The ``mode`` flag is checked against this registry, so it must not import PyTensor:
built-in modes are built by :mod:`modecfg.modes.build` on demand, user modes by the
factory given to :func:`register_mode`. Registries refuse duplicates; names match
without regard to case, as PyTensor's do (``debugmode`` is ``DebugMode``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Literal

from modecfg._locks import Lock, fork_safe
from modecfg._record import Record

__all__ = [
    "SHAPING_FLAGS",
    "Builder",
    "ModeEntry",
    "canonical_mode",
    "entries",
    "mode_names",
    "pytensor_mode_names",
    "register_mode",
    "register_name",
]


# How modecfg.modes.build makes a built-in mode (its ``match`` covers every value: mypy checks it).
# "standard": the optimizer and linker flags (FAST_RUN, Mode); "backend": PyTensor's mode of that
# name, its linker and its rewrites. (Strings, not an Enum: an Enum class costs start-up 0.2 ms.)
Builder = Literal["standard", "fast_compile", "debug", "monitor", "nanguard", "compare", "profile", "backend"]


class ModeEntry(Record):
    """One registered mode: the one place its name is written."""

    name: str
    purpose: str
    factory: Callable[[], Any] | None = None  # a user's mode: called at each compile
    deprecated: str = ""  # the DeprecationWarning's text, for deprecated modes
    builder: Builder | None = None  # a built-in: how modecfg.modes.build makes it
    pytensor: bool = False  # PyTensor's own ``mode`` flag takes the name too
    linker: str = ""  # the linker a backend mode runs on (its name in the linker table)


_lock = fork_safe(sys.modules[__name__], "_lock", Lock)

_MODES: dict[str, ModeEntry] = {
    e.name: e
    for e in (
        ModeEntry("FAST_RUN", "all rewrites, the linker flag's (per_graph: one chosen per graph): training",
                  builder="standard", pytensor=True),
        ModeEntry("FAST_COMPILE", "few rewrites, Python thunks: quick compiles while iterating",
                  builder="fast_compile", pytensor=True),
        ModeEntry("DebugMode", "checks every rewrite and op implementation against each other (slow)",
                  builder="debug", pytensor=True),
        ModeEntry("MonitorMode", "calls your functions before and after every node", builder="monitor"),
        ModeEntry("CompareMode", "runs every call on the other backends too; names the node and rewrite "
                  "that differ", builder="compare"),
        ModeEntry("NanGuardMode", "stops at the first NaN, Inf or huge value",
                  builder="nanguard", pytensor=True),
        ModeEntry(
            "ProfileMode",
            "FAST_RUN with profiling on",
            deprecated="ProfileMode is deprecated: use mode=FAST_RUN with profile=True "
            "(the flag, or modecfg.function(..., profile=True))",
            builder="profile",
        ),
        ModeEntry("Mode", "the optimizer and linker flags as they are (FAST_RUN by default)",
                  builder="standard", pytensor=True),
        ModeEntry("CVM", "all rewrites on the C virtual machine",
                  builder="backend", pytensor=True, linker="cvm"),
        ModeEntry("C", "all rewrites on the single-module C linker",
                  builder="backend", pytensor=True, linker="c"),
        ModeEntry("NUMBA", "all rewrites on the numba backend",
                  builder="backend", pytensor=True, linker="numba"),
        ModeEntry("JAX", "all rewrites on the JAX backend (CPU or GPU)",
                  builder="backend", pytensor=True, linker="jax"),
        ModeEntry("PYTORCH", "all rewrites on the PyTorch backend",
                  builder="backend", pytensor=True, linker="pytorch"),
        ModeEntry("MLX", "all rewrites on the MLX backend",
                  builder="backend", pytensor=True, linker="mlx"),
    )
}  # fmt: skip

# The flags a built-in mode is built from: a change of one asks for a new mode.
SHAPING_FLAGS = (
    "mode",
    "linker",
    "optimizer",
    "optimizer_including",
    "optimizer_excluding",
    "optimizer_requiring",
    "device",
    "fallback_to_cpu",
    "force_device",
    "cxx",
    "DebugMode.patience",
    "DebugMode.check_c",
    "DebugMode.check_py",
    "DebugMode.check_finite",
    "DebugMode.check_strides",
    "DebugMode.check_preallocated_output",
)  # fmt: skip  (the NanGuardMode flags are read at each call: a change needs no new mode)

# Spellings PyTensor and Theano also accept.
_ALIASES: dict[str, str] = {"DEBUG_MODE": "DebugMode"}


def mode_names() -> list[str]:
    """Every valid value of the ``mode`` flag, registered modes included."""
    with _lock:
        return [*_MODES, *_ALIASES]


def pytensor_mode_names() -> frozenset[str]:
    """The values of ``mode`` that PyTensor's own flag takes (the rest modecfg serves)."""
    with _lock:
        names = {e.name for e in _MODES.values() if e.pytensor}
        return frozenset(names | {alias for alias, target in _ALIASES.items() if target in names})


def entries() -> list[ModeEntry]:
    with _lock:
        return list(_MODES.values())


def canonical_mode(name: str) -> str:
    """The registered name for ``name`` (aliases and case resolved); ValueError if unknown."""
    found = find_mode(name)
    if found is None:
        raise ValueError(f"{name.strip()!r} is not a registered mode")
    return found.name


def find_mode(name: str) -> ModeEntry | None:
    name = name.strip()
    with _lock:
        if name in _MODES:
            return _MODES[name]
        if name in _ALIASES:
            return _MODES[_ALIASES[name]]
        upper = name.upper()
        for key, entry in _MODES.items():
            if key.upper() == upper:
                return entry
        for key, target in _ALIASES.items():
            if key.upper() == upper:
                return _MODES[target]
    return None


def register_name(name: str, description: str, factory: Callable[[], Any] | None = None) -> None:
    """Make ``name`` a mode. A name taken already (in any case) is a ValueError."""
    if not name or name != name.strip() or "," in name:
        raise ValueError(f"{name!r} cannot be a mode name")
    with _lock:
        taken = {k.upper() for k in (*_MODES, *_ALIASES)}
        if name.upper() in taken:
            raise ValueError(f"a mode named {name!r} is already registered")
        _MODES[name] = ModeEntry(name, description, factory)


def register_mode(name: str, factory: Any, description: str = "registered by the user") -> None:
    """Register a mode under ``name``: a PyTensor ``Mode``, or a callable returning one.

    A callable is called at each compile (after modecfg's configuration is applied), so
    it may read ``modecfg.config``. The name is then valid for the ``mode`` flag, for
    ``modecfg.function`` and for ``pytensor.function``.
    """
    if callable(factory) and not hasattr(factory, "linker"):
        register_name(name, description, factory)
    else:
        mode = factory
        register_name(name, description, lambda: mode)
