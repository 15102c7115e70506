"""Named compile modes, built from the configuration and executed by PyTensor.

Nothing here imports PyTensor until a mode is built or a function compiled;
``MonitorMode`` is loaded on first use for that reason.
"""

from typing import TYPE_CHECKING, Any

from modecfg._registry.modes import (
    ModeEntry,
    canonical_mode,
    entries,
    mode_names,
    register_mode,
)

if TYPE_CHECKING:
    from modecfg.modes.build import ModeInfo
    from modecfg.modes.monitor import MonitorMode

__all__ = [
    "ModeEntry",
    "MonitorMode",
    "canonical_mode",
    "compiled_with",
    "entries",
    "function",
    "get_mode",
    "mode_names",
    "register_mode",
    "replay",
    "table",
]


def get_mode(mode: Any = None) -> Any:
    """The PyTensor ``Mode`` for a registered name, a Mode, or None (the ``mode`` flag)."""
    from modecfg.modes.build import get_mode as _get_mode

    return _get_mode(mode)


def table() -> "list[ModeInfo]":
    """Every registered mode as the current configuration builds it (imports PyTensor)."""
    from modecfg.modes.build import table as _table

    return _table()


def function(inputs: Any, outputs: Any = None, mode: Any = None, **kwargs: Any) -> Any:
    """``pytensor.function`` with modecfg's mode and configuration applied."""
    from modecfg.modes.compiling import function as _function

    return _function(inputs, outputs, mode=mode, **kwargs)


def compiled_with(fn: Any) -> Any:
    """The configuration ``fn`` was compiled with: flag -> (value, origin), as the compiling
    thread or task had it (see :func:`modecfg.modes.compiling.compiled_with`)."""
    from modecfg.modes.compiling import compiled_with as _compiled_with

    return _compiled_with(fn)


def replay(path: Any, *, dump: bool = False, trust: bool = False) -> Any:
    """Re-run a NaN-guard dump: its NanGuardError again (the dump is checked first; no new dump
    is written unless ``dump``; ``trust`` applies its compiler and path flags and compiles its
    C code, see :mod:`modecfg.modes.replaying`)."""
    from modecfg.modes.replaying import replay as _replay

    return _replay(path, dump=dump, trust=trust)


def __getattr__(name: str) -> Any:
    if name == "MonitorMode":
        from modecfg.modes.monitor import MonitorMode

        return MonitorMode
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
