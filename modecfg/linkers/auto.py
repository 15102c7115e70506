"""``linker=per_graph``: a linker chosen for each graph, by the one rule written here.

Theano always linked with cvm and PyTensor always links with numba; neither looks at the
graph. Measured with ``bench/workloads.py``, neither is best everywhere: cvm has the lowest
per-call overhead and links BLAS for products, while numba compiles loops (scan) into
machine code where cvm runs the inner graph through Python, and uses numpy's own BLAS
where PyTensor's C code has none. The rule, first match wins:

1. the graph has an inner loop or inner function (``Scan``, ``OpFromGraph``) and numba
   runs here: **numba**;
2. the graph multiplies matrices by matrices, PyTensor's C code has no BLAS to link
   (``blas__ldflags`` empty) and numba runs here: **numba** (its products are numpy's,
   with numpy's own BLAS; C's fall back to a slow loop). Matrix-vector products are
   not enough: there cvm's lower overhead wins (``bench/workloads.py``: logistic
   regression 2.5x faster on cvm, the MLP 2x faster on numba);
3. a C++ compiler runs here: **cvm**;
4. else the first usable of numba, vm, py.

The choice is made on the user's graph before the rewrites, since each linker has its own
(numba's exclude the C-only ones), and is kept on the graph: ``chosen(f)`` says it and
why, and a DEBUG line of the ``modecfg.linkers`` logger too. It is opt-in: ``linker=auto``,
the default, is PyTensor's (numba), so that PyMC and PyTensor's users get the backend they
expect with modecfg imported; any other value pins that linker. Only the modes built from the
``linker`` flag (FAST_RUN, Mode) choose; DebugMode, NanGuardMode and the backend modes keep
theirs.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from modecfg._pytensor import marks
from modecfg._pytensor.blas import products
from modecfg._pytensor.graphs import has_inner_loops
from modecfg._pytensor.modebuild import make_mode, predefined_linker
from modecfg._registry.linkers import PREFERENCE
from modecfg.linkers import best_linker, why_unavailable

__all__ = ["Choice", "auto_linker", "choose", "chosen", "mode_for", "rule_here"]

# What the chosen linker is kept under on a FunctionGraph: plain strings, so a compiled
# function still unpickles where modecfg is not installed.
_NAME, _REASON = marks.AUTO_CHOICE, marks.AUTO_REASON


class Choice(NamedTuple):
    name: str
    reason: str


def choose(fgraph: Any, profiled: bool = False) -> Choice:
    """The linker ``linker=per_graph`` gives this graph, and why (the rule of the module's doc)."""
    if profiled:
        name = "cvm" if not why_unavailable("cvm") else "vm"
        return Choice(name, "the compile is profiled: a profile times each node, which the VM linkers do")
    numba = not why_unavailable("numba")
    loops = has_inner_loops(fgraph)
    if loops and numba:
        return Choice("numba", "the graph has an inner loop (scan) or inner function: numba compiles it")
    if numba and not _c_has_blas() and products(fgraph).matrix_matrix:
        return Choice("numba", "matrix-matrix products and no BLAS for C: numba's products are numpy's")
    if not why_unavailable("cvm"):
        return Choice("cvm", "C thunks with the lowest per-call overhead")
    name = next(n for n in PREFERENCE if not why_unavailable(n))  # the registry's order; py needs nothing
    return Choice(name, f"no C++ compiler: {name} is the fastest linker left")


def rule_here() -> str:
    """What ``linker=per_graph`` does on this machine, in one line (doctor, ``modecfg linkers``)."""
    numba = not why_unavailable("numba")
    default = best_linker()
    if not numba:
        return f"{default} for every graph (numba is not usable here)"
    blas = "no BLAS for C" if not _c_has_blas() else "a BLAS for C"
    products = ", and for matrix-matrix products" if not _c_has_blas() else ""
    return f"chosen per graph: numba for scan and inner functions{products} ({blas}); {default} otherwise"


def _c_has_blas() -> bool:
    from modecfg._pytensor.blas import c_has_blas

    return c_has_blas()


def chosen(function: Any) -> str:
    """``"numba: <why>"``: what ``linker=per_graph`` chose for a function ('' if it did not choose)."""
    fgraph = function.maker.fgraph
    name = getattr(fgraph, _NAME, "")
    return f"{name}: {getattr(fgraph, _REASON, '')}" if name else ""


def mode_for(fgraph: Any, mode: Any, profile: Any = None) -> Any:
    """The mode to rewrite ``fgraph`` with: ``mode`` itself, unless its linker is auto's.

    Then the linker is chosen now, kept on the graph for the marked linker to hand it
    on, and the graph is rewritten for that linker (the user's optimizer, with the
    rewrites the linker needs and without those it cannot run).
    """
    if not getattr(mode.linker, marks.AUTO, False):
        return mode
    choice = choose(fgraph, profiled=bool(profile))
    if profile:  # the profile's header names the linker that timed the nodes
        setattr(profile, marks.PROFILE_TIMED_BY, f"{choice.name} (linker=per_graph)")
    setattr(fgraph, _NAME, choice.name)
    setattr(fgraph, _REASON, choice.reason)
    _log().debug(
        "linker=per_graph chose %s for %s: %s",
        choice.name,
        getattr(fgraph, "name", None) or "a graph",
        choice.reason,
    )
    return make_mode(choice.name, mode.provided_optimizer)


def _log() -> Any:
    import logging

    return logging.getLogger("modecfg.linkers")


def auto_linker() -> Any:
    """The linker of the modes ``linker=per_graph`` builds: PyTensor's cvm ``VMLinker``, marked.

    It stays PyTensor's own class (PyTensor's tests count linker classes, and a pickled mode
    must load without modecfg); the integration point "auto linker" (``VMLinker.accept``)
    hands a graph to the linker chosen for it when the mark is there, and without the patch
    the graph simply runs on cvm.
    """
    linker = predefined_linker("cvm")
    setattr(linker, marks.AUTO, True)
    return linker
