"""Modes whose linker wraps the linker that runs the code: the NaN guard, MonitorMode.

PyTensor 3.3 stamps the compile's mode on the graph while rewriting it, and rewrites the
inner graphs of scans and OpFromGraphs for that mode's linker, chosen by the linker's class.
A wrapper's class has no entry there (PyTensor logs an error and leaves the inner graphs
unrewritten), and the code runs on the linker it wraps anyway: so the rewrites of such a
mode are stamped with a mode of the wrapped linker. Earlier releases stamp nothing.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

__all__ = [
    "INNER_GRAPH_REWRITES",
    "inner_graph_for",
    "register_again",
    "register_inner_graph_rewrites",
    "rewrites_for",
    "stamps_modes",
    "unregister_inner_graph_rewrites",
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


_REGISTERED: list[type] = []  # the wrapping classes registered, while modecfg is installed
_TAKEN_BACK: list[type] = []  # those uninstall() took back, registered again by install()


def register_inner_graph_rewrites(wrapping: type) -> list[str]:
    """Register ``wrapping`` (a linker class) with each inner-graph rewrite this PyTensor has; the
    names of those registered (none before PyTensor 3.3). Taken back by
    :func:`unregister_inner_graph_rewrites` (``modecfg._pytensor.patches.uninstall``)."""
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
    if wrapping not in _REGISTERED:
        _REGISTERED.append(wrapping)
    return done


def unregister_inner_graph_rewrites() -> list[str]:
    """Every registration of :func:`register_inner_graph_rewrites` taken back; the names of the
    rewrites it was taken from. ``functools.singledispatch`` has no unregistration: its
    ``registry`` is a read-only view of a dict of the dispatcher's, from which the entry is
    removed, and the dispatcher's cache of classes seen is cleared."""
    undone = []
    while _REGISTERED:
        wrapping = _REGISTERED.pop()
        _TAKEN_BACK.append(wrapping)
        for module_name, name in INNER_GRAPH_REWRITES:
            dispatcher = getattr(sys.modules.get(module_name), name, None)
            registry = getattr(dispatcher, "registry", None)
            if registry is None or wrapping not in registry:
                continue
            table = next(r for r in gc.get_referents(registry) if isinstance(r, dict))
            del table[wrapping]
            dispatcher._clear_cache()  # type: ignore[union-attr]
            undone.append(f"{module_name}.{name}")
    return undone


def register_again() -> list[str]:
    """What :func:`unregister_inner_graph_rewrites` took back, registered again (``install()``
    after ``uninstall()``); the names of the rewrites registered."""
    done = []
    while _TAKEN_BACK:
        done += register_inner_graph_rewrites(_TAKEN_BACK.pop())
    return done
