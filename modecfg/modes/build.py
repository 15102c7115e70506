"""Build PyTensor ``Mode`` objects from modecfg's configuration.

A mode is an optimizer plus a linker. Each built-in mode reads the flags that shape it
(``optimizer``, ``linker``, ``optimizer_including/excluding/requiring``, ``device``,
``DebugMode.*``, ``NanGuardMode.*``) in the current context, so an override applies to
the compiles inside it. Built modes are cached by those values.

Two PyTensor 3.0 defects are kept away from users here: ``linker=vm`` with FAST_RUN
(PyTensor's table holds a tuple, an AttributeError) never reaches PyTensor's table,
and DebugMode gets the numpy 2 fix of :mod:`modecfg._pytensor.debugmode`.

PyTensor's backend modes (JAX, PYTORCH, MLX, NUMBA, C, CVM) are built as PyTensor builds
them, whether or not the backend is installed: a function compiled with one fails then,
naming what to install (:func:`modecfg.modes.compiling.function`, and PyTensor itself).
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any, assert_never

from modecfg._locks import fork_safe
from modecfg._pytensor import marks
from modecfg._pytensor.kinds import linker_name
from modecfg._pytensor.modebuild import (
    fast_compile_optimizer,
    make_mode,
    predefined_optimizer,
    pytensor_mode,
    python_vm,
    requiring_defect,
)
from modecfg._record import Record
from modecfg._registry.linkers import BACKENDS
from modecfg._registry.modes import SHAPING_FLAGS, entries, find_mode, mode_names
from modecfg._warn import warn
from modecfg.configuration import config
from modecfg.device.where import device_linker, resolved_linker
from modecfg.errors import FlagValueError, ModecfgError, UnknownModeError

if TYPE_CHECKING:
    from pytensor.compile.mode import Mode

__all__ = [
    "ModeInfo",
    "backend_missing",
    "build_mode",
    "describe_linker",
    "forget_modes",
    "get_mode",
    "linker_of",
    "resolved_linker",
    "table",
]


_cache: dict[tuple[Any, ...], Any] = {}
_deprecation_said: set[str] = set()
_lock = fork_safe(sys.modules[__name__], "_lock", threading.RLock)


def forget_modes() -> None:
    """Drop the built modes: a flag that shapes them changed for the whole process."""
    with _lock:
        _cache.clear()


def get_mode(mode: Any = None) -> Mode:
    """The PyTensor ``Mode`` for ``mode``: a registered name, a Mode, or None (the ``mode`` flag)."""
    if mode is None:
        mode = config.mode
    if not isinstance(mode, str):
        if hasattr(mode, "linker") and hasattr(mode, "optimizer"):
            return mode
        raise TypeError(f"mode must be a mode name or a pytensor Mode, not {type(mode).__name__}")
    entry = find_mode(mode)
    if entry is None:
        import difflib

        close = difflib.get_close_matches(mode, mode_names(), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownModeError(
            f"unknown mode {mode!r}; registered modes: {', '.join(mode_names())}{hint}", flag="mode"
        )
    if entry.deprecated and entry.name not in _deprecation_said:  # said once, not at every lookup
        _deprecation_said.add(entry.name)
        warn(entry.deprecated, DeprecationWarning)
    if entry.factory is not None:
        return entry.factory()
    return build_mode(entry.name)


def build_mode(name: str) -> Mode:
    """A built-in mode, as the current configuration shapes it (cached)."""
    key = (name, *(config[f] for f in SHAPING_FLAGS))
    with _lock:
        found = _cache.get(key)
        if found is None:
            found = _cache[key] = _build(name)
    return found


def _query(base: Any) -> Any:
    """A rewrite query with the optimizer_including / excluding / requiring tags applied.

    Tags go into the query rather than through ``Mode.including``, which rebuilds the
    mode from its class defaults and would lose DebugMode's and NanGuardMode's settings.
    """
    if config.optimizer_excluding:
        base = base.excluding(*config.optimizer_excluding.split(":"))
    if config.optimizer_including:
        base = base.including(*config.optimizer_including.split(":"))
    if config.optimizer_requiring:
        _check_requiring()
        base = base.requiring(*config.optimizer_requiring.split(":"))
    return base


def _check_requiring() -> None:
    """PyTensor 3.0-3.3 cannot apply required tags: its rewrite database calls a method
    its OrderedSet lacks, and every compile fails with an AttributeError. Say so, and where
    the flag was set, before that happens."""
    defect = requiring_defect()
    if not defect:
        return
    raise FlagValueError(
        f"optimizer_requiring={config.optimizer_requiring!r} (from {config.origin('optimizer_requiring')}): "
        f"{defect}; leave optimizer_requiring empty, or use optimizer_including / optimizer_excluding",
        flag="optimizer_requiring",
        origin=config.origin("optimizer_requiring"),
    )


def _build(name: str) -> Any:
    entry = find_mode(name)
    assert entry is not None and entry.builder is not None, name
    if entry.builder == "backend":  # PyTensor's mode of that name: its linker and its rewrites
        linker, rewrites = pytensor_mode(entry.name)
        return make_mode(linker, _query(rewrites))
    optimizer = _query(predefined_optimizer(str(config.optimizer)))
    match entry.builder:
        case "standard":
            return _standard(optimizer)
        case "fast_compile":
            return _fast_compile(optimizer)
        case "profile":
            return _profile(optimizer)
        case "debug":
            return _debug(optimizer)
        case "nanguard":
            return _nanguard(optimizer)
        case "compare":
            return _compare(optimizer)
        case "monitor":
            return _monitor(optimizer)
        case _:
            assert_never(entry.builder)


def _standard(optimizer: Any) -> Any:
    if config.linker == "per_graph" and device_linker() is None and resolved_linker() == "cvm":
        from modecfg.linkers.auto import auto_linker

        return make_mode(auto_linker(), optimizer)  # a linker for each graph
    return make_mode(resolved_linker(), optimizer)


def _fast_compile(_optimizer: Any) -> Any:
    """FAST_COMPILE is PyTensor's fast_compile rewrites on the Python VM, whatever the
    ``optimizer`` flag says (the flag's rewrites are what FAST_RUN uses)."""
    return make_mode(python_vm(), _query(fast_compile_optimizer()))


def _profile(optimizer: Any) -> Any:
    from modecfg.modes.profile import ProfileMode

    return ProfileMode(linker=resolved_linker(), optimizer=optimizer)


def _debug(optimizer: Any) -> Any:
    from modecfg._pytensor.debugmode import debug_mode_class

    dm = config.DebugMode
    checks = [p for p in str(dm.check_preallocated_output).split(":") if p]
    # PyTensor 3.0's Python implementation of a fused reduction (CAReduce of a
    # Composite, made by local_careduce_fusion for C) starts from the first element
    # instead of the identity: sum(w**2) becomes w[0] + sum(w[1:]**2). DebugMode
    # compares Python with C and would report PyTensor's bug on every such graph.
    return debug_mode_class()(
        optimizer=optimizer.excluding("local_careduce_fusion"),
        stability_patience=dm.patience,
        check_c_code=bool(dm.check_c) and not _no_compiler(),
        check_py_code=dm.check_py,
        check_isfinite=dm.check_finite,
        check_preallocated_output=checks,
        require_matching_strides=dm.check_strides,
    )


def _nanguard(optimizer: Any) -> Any:
    from modecfg.nanguard.mode import NanGuardMode

    return NanGuardMode(linker=resolved_linker(), optimizer=optimizer)


def _compare(optimizer: Any) -> Any:
    from modecfg.compare.mode import CompareMode

    return CompareMode(linker=resolved_linker(), optimizer=optimizer)


def _monitor(optimizer: Any) -> Any:
    from modecfg.modes.monitor import MonitorMode

    return MonitorMode(optimizer=optimizer)


def backend_missing(mode: Any) -> str:
    """Why ``mode``'s backend (numba, jax, pytorch, mlx) cannot run here; '' when it can."""
    from modecfg.linkers import why_unavailable

    name = describe_linker(mode.linker)
    if name not in BACKENDS:
        return ""
    why = why_unavailable(name)
    return f"this mode compiles with the {name} linker, which cannot run here: {why}" if why else ""


def _no_compiler() -> bool:
    from modecfg.linkers import why_unavailable

    return bool(why_unavailable("c"))


class ModeInfo(Record):
    """One row of ``modecfg modes``: a registered mode as this configuration builds it."""

    name: str
    optimizer: str
    linker: str
    purpose: str
    deprecated: bool
    available: bool
    why_not: str


def table() -> list[ModeInfo]:
    """Every registered mode, built from the current configuration."""
    import warnings

    rows = []
    for entry in entries():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mode = get_mode(entry.name)
        except ModecfgError as exc:
            rows.append(
                ModeInfo(entry.name, "-", "-", entry.purpose, bool(entry.deprecated), False, str(exc))
            )
            continue
        why = backend_missing(mode)
        rows.append(
            ModeInfo(
                entry.name,
                _optimizer_text(mode),
                describe_linker(mode.linker),
                entry.purpose,
                bool(entry.deprecated),
                not why,
                why,
            )
        )
    return rows


def _optimizer_text(mode: Any) -> str:
    query = mode.provided_optimizer
    include = getattr(query, "include", None)
    if include is None:
        return str(query)
    text = "+".join(sorted(include)) or "none"
    if getattr(query, "exclude", None):
        text += " -" + " -".join(sorted(query.exclude))
    return text


def linker_of(fn: Any) -> str:
    """The linker that runs the compiled function ``fn``, by its table name: for a mode of
    ``linker=per_graph``, the one chosen for its graph."""
    maker = getattr(fn, "maker", fn)
    return getattr(maker.fgraph, marks.AUTO_CHOICE, "") or describe_linker(maker.linker)


def describe_linker(linker: Any) -> str:
    """A linker object by its table name (cvm, vm, numba, ...): the registry's ``linker_name``."""
    return linker_name(linker)
