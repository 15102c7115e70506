"""Modes whose linker wraps the linker that runs the code: the NaN guard, MonitorMode.

PyTensor 3.3 stamps the compile's mode on the graph while rewriting it, and rewrites the
inner graphs of scans and OpFromGraphs for that mode's linker, chosen by the linker's class.
A wrapper's class has no entry there (PyTensor logs an error and leaves the inner graphs
unrewritten), and the code runs on the linker it wraps anyway: so the rewrites of such a
mode are stamped with a mode of the wrapped linker. Earlier releases stamp nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "INNER_GRAPH_REWRITES",
    "inner_graph_for",
    "register_inner_graph_rewrites",
    "rewrites_for",
    "stamps_modes",
]

# PyTensor 3.3's per-linker rewrites of inner graphs (a singledispatch on the linker's class each):
# a mode built around a wrapping linker by someone else (PyMC's ``Mode(linker=mode.linker, ...)``)
# stamps the wrapper, whose class none of them knows; registered, each asks for the wrapped one.
INNER_GRAPH_REWRITES: tuple[tuple[str, str], ...] = (
    ("pytensor.scan.rewriting.inner_graph", "rewrite_scan_inner_graph"),
    ("pytensor.compile.rewriting", "rewrite_ofg_inner_graph"),
    ("pytensor.tensor.optimize", "rewrite_optimize_inner_graph"),
)


def stamps_modes() -> bool:
    """Whether the installed PyTensor stamps the compile's mode on the graph it rewrites."""
    from pytensor.compile import mode

    return hasattr(mode, "_ActiveModeGraphRewriter")


def rewrites_for(rewriter: Any, mode: Any, linker: Any) -> Any:
    """``mode``'s ``rewriter`` (what ``Mode.optimizer`` gave), rewriting for ``linker``."""
    query = mode.provided_optimizer
    if getattr(rewriter, "_mode", None) is mode:  # PyTensor 3.3's stamping wrapper
        from pytensor.compile.mode import Mode

        rewriter._mode = Mode(linker=linker, optimizer=query)
    return rewriter


def inner_graph_for(dispatcher: Any, linker: Any, op: Any, node: Any, inner: Any, *, mode: Any) -> Any:
    """An inner-graph rewrite of PyTensor's for a wrapping linker: the one for the linker it wraps."""
    return dispatcher(linker.inner, op, node, inner, mode=mode)


def register_inner_graph_rewrites(wrapping: type) -> list[str]:
    """Register ``wrapping`` (a linker class) with each inner-graph rewrite this PyTensor has; the
    names of those registered (none before PyTensor 3.3)."""
    import functools
    import importlib

    done = []
    for module_name, name in INNER_GRAPH_REWRITES:
        try:
            dispatcher = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError):
            continue
        if wrapping not in getattr(dispatcher, "registry", {}):
            dispatcher.register(wrapping, functools.partial(inner_graph_for, dispatcher))
        done.append(f"{module_name}.{name}")
    return done
