"""The names of the compile modes, the one list the ``mode`` flag is checked against.

Only names and one-line descriptions live here, so that validating ``mode=...`` never
imports PyTensor. ``register_name`` adds a user's mode name.
"""

from __future__ import annotations

import threading

__all__ = ["canonical_mode", "describe_mode", "mode_names", "register_name"]

_lock = threading.Lock()

# name -> what it is for
_MODES: dict[str, str] = {
    "FAST_RUN": "all rewrites, the fastest linker: training and production",
    "FAST_COMPILE": "few rewrites, the Python linker: quick compiles while iterating",
    "DebugMode": "checks every rewrite and op implementation against each other (slow)",
    "MonitorMode": "calls your callbacks before and after every node",
    "NanGuardMode": "FAST_RUN that stops at NaN, Inf or huge values",
    "ProfileMode": "deprecated: FAST_RUN with profiling on (use profile=True)",
    "Mode": "the optimizer and linker named by the optimizer and linker flags",
    "JAX": "the JAX backend",
    "NUMBA": "the numba backend",
    "PYTORCH": "the PyTorch backend",
    "MLX": "the MLX backend",
    "CVM": "FAST_RUN rewrites on the C virtual machine linker",
    "C": "FAST_RUN rewrites on the pure C linker",
}

# Spellings PyTensor and Theano also accept.
_ALIASES: dict[str, str] = {"DEBUG_MODE": "DebugMode"}


def mode_names() -> list[str]:
    """Every valid value of the ``mode`` flag, registered modes included."""
    with _lock:
        return [*_MODES, *_ALIASES]


def describe_mode(name: str) -> str:
    return _MODES[canonical_mode(name)]


def canonical_mode(name: str) -> str:
    """The registered name for ``name`` (resolving aliases); ValueError if unknown."""
    name = name.strip()
    with _lock:
        if name in _MODES:
            return name
        if name in _ALIASES:
            return _ALIASES[name]
    raise ValueError(f"{name!r} is not a registered mode")


def register_name(name: str, description: str) -> None:
    """Make ``name`` a valid mode name. Registering a taken name is a ValueError."""
    with _lock:
        if name in _MODES or name in _ALIASES:
            raise ValueError(f"a mode named {name!r} is already registered")
        _MODES[name] = description
