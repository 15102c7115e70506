"""The ``warn_float64`` flag, applied when a function is compiled.

Under floatX=float32 (and always on a GPU device), every compile checks the user's
graph before rewriting it: ``warn`` emits one :class:`~modecfg.errors.Float64Warning`
per finding, ``raise`` raises :class:`~modecfg.errors.Float64Error` carrying them all,
``pdb`` stops in the debugger at the first. ``collecting()`` gathers the findings of
every compile instead (``modecfg check-float32``).

A graph compiled for a GPU (``device=cuda`` / ``gpu``, run through JAX) is checked whatever
``warn_float64`` says: ``ignore`` counts as ``warn`` there. JAX computes the float64 (modecfg
turns x64 on for such a graph, :mod:`modecfg.device.jaxlink`), and on a GPU float64 is
the slow path a float32 model never means to take.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from modecfg._warn import act, warn
from modecfg.checks.float32 import Finding, check_float32
from modecfg.configuration import config
from modecfg.errors import Float64Error, Float64Warning

__all__ = ["collecting", "enforce"]

_log = logging.getLogger("modecfg.checks")
_collectors: list[list[Finding]] = []
_collectors_lock = threading.Lock()


@contextmanager
def collecting() -> Iterator[list[Finding]]:
    """Gather the findings of every compile in the block instead of acting on them."""
    found: list[Finding] = []
    with _collectors_lock:
        _collectors.append(found)
    try:
        yield found
    finally:
        with _collectors_lock:
            _collectors.remove(found)


def applies() -> bool:
    """True when compiles are checked: floatX=float32, or a GPU device."""
    return config.floatX == "float32" or str(config.device) != "cpu"


def _check(fgraph: Any) -> list[Finding]:
    """The findings; the graph is looked at with PyTensor's creation-time check off (looking
    clones it, and a float64 clone must not raise or warn inside the compile)."""
    if config.warn_float64 == "ignore":
        return check_float32(fgraph)
    with config.override(warn_float64="ignore"):
        return check_float32(fgraph)


def before_compile(outputs: Any, updates: Any = None) -> None:
    """``modecfg.function`` under ``warn_float64=raise``: modecfg's findings, before PyTensor
    copies the graph and its own check raises a bare Exception at the first float64 copy.
    (``pytensor.function`` gets PyTensor's Exception, as in plain PyTensor.)"""
    action = config.warn_float64
    if action != "raise" or not applies() or _collectors:
        return
    targets = list(outputs) if isinstance(outputs, list | tuple) else [] if outputs is None else [outputs]
    pairs = updates.items() if isinstance(updates, dict) else (updates or ())
    targets += [new for _, new in pairs]
    targets = [t for t in targets if hasattr(t, "owner")]  # variables (In/Out wrappers are PyTensor's)
    if targets:
        _act(action, _check(targets))


def on_gpu(mode: Any) -> bool:
    """Whether a compile with ``mode`` runs on a GPU: a GPU device, and the JAX linker."""
    if str(config.device) == "cpu" or mode is None or not hasattr(mode, "linker"):
        return False
    from modecfg._pytensor.kinds import linker_name

    return linker_name(mode.linker) == "jax"


_SAID_SCOPE: list[bool] = []


def _scoped_elsewhere(fgraph: Any) -> None:
    """Say, once a process, that a float64 graph is compiled in a thread or task that does not
    see the ``floatX`` override another one holds: modecfg's overrides (and ``change_flags``) are
    scoped to the thread or task that entered them, where PyTensor's ``change_flags`` sets the
    flag for the whole process. A thread pool started inside ``change_flags(floatX="float32")``
    then builds float64 graphs where plain PyTensor builds float32. Compiles only: reads pay
    nothing for it."""
    if _SAID_SCOPE:
        return
    store = config._cfg_store
    if store.var_of("floatX").get() is not None or not store.held["floatX"]:
        return
    if not any(getattr(v.type, "dtype", None) == "float64" for v in fgraph.variables):
        return
    _SAID_SCOPE.append(True)
    import threading

    warn(
        f"a float64 graph is compiled in thread {threading.current_thread().name!r}, which reads "
        f"floatX={config.floatX} ({config.origin('floatX')}), while another thread or task has floatX "
        "overridden (change_flags or config.override): modecfg's overrides hold in the thread or "
        "task that entered them, not in threads started inside the block (PyTensor's change_flags "
        "set the flag for the whole process). Run the work inside the override with "
        "modecfg.workers.submit(pool, fn, ...) or contextvars.copy_context().run, or enter the "
        "override in the worker. Said once.",
        Float64Warning,
    )


def enforce(fgraph: Any, mode: Any = None) -> None:
    _scoped_elsewhere(fgraph)
    if _collectors:
        findings = _check(fgraph)
        with _collectors_lock:
            for collector in _collectors:
                collector.extend(findings)
        return
    action = config.warn_float64
    if action == "ignore" and on_gpu(mode):
        action = "warn"
    if action == "ignore" or not applies():
        return
    _act(action, _check(fgraph))


def _act(action: str, findings: list[Finding]) -> None:
    if not findings:
        return
    summary = (
        f"{len(findings)} place(s) where float64 enters a graph compiled with "
        f"floatX={config.floatX}:\n" + "\n".join(str(f) for f in findings)
    )
    # warn: one warning per place; raise and pdb: every place at once (`findings`, `fgraph`)
    for finding in findings if action == "warn" else findings[:1]:
        act(
            action,
            f"float64 in a float32 graph: {finding}" if action == "warn" else summary,
            warning=Float64Warning,
            error=lambda: Float64Error(summary, findings),
            log=_log,
        )
