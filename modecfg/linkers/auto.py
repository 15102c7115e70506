"""``linker=per_graph``: a linker chosen for each graph, by the one rule written here.

Theano always linked with cvm and PyTensor always links with numba; neither looks at the
graph. Measured with ``bench/workloads.py``, neither is best everywhere: cvm has the lowest
per-call overhead and links BLAS for products, while numba compiles loops (scan) into
machine code where cvm runs the inner graph through Python, and uses numpy's own BLAS
where PyTensor's C code has none. The rule, first match wins:

1. the graph has an inner loop or inner function (``Scan``, ``OpFromGraph``) and numba
   runs here: **numba**;
2. the graph indexes by an integer array or scatters into one (``theta[group]`` and its
   gradient: a hierarchical model) and numba runs here: **numba** (``bench/workloads.py``'s
   hierarchical logp and gradient: 1.2x faster than on cvm, the gather and the special
   functions over its 2,000 observations alike);
3. the graph multiplies matrices by matrices, PyTensor's C code has no BLAS to link
   (``blas__ldflags`` empty) and numba runs here: **numba** (its products are numpy's,
   with numpy's own BLAS; C's fall back to a slow loop). Matrix-vector products are
   not enough: there cvm's lower overhead wins (``bench/workloads.py``: logistic
   regression 2.5x faster on cvm, the MLP 2x faster on numba);
4. a C++ compiler runs here: **cvm**;
5. else the first usable of numba, vm, py.

The choice is made on the user's graph before the rewrites, since each linker has its own
(numba's exclude the C-only ones), and is kept on the graph: ``chosen(f)`` says it and
why, and a DEBUG line of the ``modecfg.linkers`` logger too. It is opt-in: ``linker=auto``,
the default, is PyTensor's (numba), so that PyMC and PyTensor's users get the backend they
expect with modecfg imported; any other value pins that linker. Only the modes built from the
``linker`` flag (FAST_RUN, Mode) choose; DebugMode, NanGuardMode and the backend modes keep
theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modecfg._pytensor import marks
from modecfg._pytensor.blas import products
from modecfg._pytensor.graphs import has_gathers, has_inner_loops
from modecfg._pytensor.modebuild import make_mode, predefined_linker
from modecfg._record import Record
from modecfg._registry.linkers import PREFERENCE
from modecfg.linkers import why_unavailable

__all__ = [
    "RULES",
    "Choice",
    "Here",
    "Rule",
    "auto_linker",
    "choose",
    "chosen",
    "here",
    "mode_for",
    "rule_here",
]

# What the chosen linker is kept under on a FunctionGraph: plain strings, so a compiled
# function still unpickles where modecfg is not installed.
_NAME, _REASON = marks.AUTO_CHOICE, marks.AUTO_REASON


class Choice(Record):
    name: str
    reason: str


class Here(Record):
    """What the rule asks of this machine."""

    numba: bool  # numba runs here
    cvm: bool  # a C++ compiler runs here
    c_blas: bool  # PyTensor's C code links a BLAS


class Rule(Record):
    """One step of the rule: on a machine where ``machine`` holds, a graph for which ``graph``
    holds (None: every graph) gets ``linker``. ``when`` says which graphs in words, ``reason``
    why, as ``chosen()`` and the DEBUG line give it."""

    linker: str
    when: str
    reason: str
    machine: Callable[[Here], bool]
    graph: Callable[[Any], bool] | None = None


# The rule (the module's doc says it in words): the one place choose() and rule_here() read.
RULES: tuple[Rule, ...] = (
    Rule("numba", "scan and inner functions",
         "the graph has an inner loop (scan) or inner function: numba compiles it",
         lambda here: here.numba, has_inner_loops),
    Rule("numba", "indexing by integer arrays",
         "the graph gathers or scatters by an integer array (a hierarchical model's groups): numba "
         "compiles those loops with the graph's elementwise work",
         lambda here: here.numba, has_gathers),
    Rule("numba", "matrix-matrix products",
         "matrix-matrix products and no BLAS for C: numba's products are numpy's",
         lambda here: here.numba and not here.c_blas, lambda fgraph: products(fgraph).matrix_matrix),
    Rule("cvm", "every other graph", "C thunks with the lowest per-call overhead", lambda here: here.cvm),
)  # fmt: skip
PROFILED = "the compile is profiled: a profile times each node, which the VM linkers do"


def here() -> Here:
    return Here(not why_unavailable("numba"), not why_unavailable("cvm"), _c_has_blas())


def choose(fgraph: Any, profiled: bool = False) -> Choice:
    """The linker ``linker=per_graph`` gives this graph, and why: the first of :data:`RULES` that
    holds, else the fastest linker usable here (the registry's order; py needs nothing)."""
    if profiled:
        return Choice("cvm" if not why_unavailable("cvm") else "vm", PROFILED)
    machine = here()
    for rule in RULES:
        if rule.machine(machine) and (rule.graph is None or rule.graph(fgraph)):
            return Choice(rule.linker, rule.reason)
    return Choice(_last_resort(), f"no C++ compiler: {_last_resort()} is the fastest linker left")


def _last_resort() -> str:
    return next(n for n in PREFERENCE if not why_unavailable(n))


def rule_here() -> str:
    """What ``linker=per_graph`` does on this machine, in one line (doctor, ``modecfg linkers``),
    read from :data:`RULES`."""
    machine = here()
    live = [rule for rule in RULES if rule.machine(machine)]
    default = next((r.linker for r in live if r.graph is None), None) or _last_resort()
    per_graph = [rule for rule in live if rule.graph is not None]
    if not per_graph:
        return f"{default} for every graph (numba is not usable here)"
    parts: list[str] = []  # consecutive rules giving one linker are said together
    for rule in per_graph:
        if parts and parts[-1].startswith(rule.linker + " "):
            parts[-1] += f", and for {rule.when}"
        else:
            parts.append(f"{rule.linker} for {rule.when}")
    blas = "a BLAS for C" if machine.c_blas else "no BLAS for C"
    return f"chosen per graph: {'; '.join(parts)} ({blas}); {default} otherwise"


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
    setattr(linker, marks.AUTO, True)  # as modecfg.linkers.contacts.marked does (it loads this module)
    return linker
