"""What the comparing mode asks of PyTensor (:mod:`modecfg.compare.mode`).

A graph compiled on a named linker, with that linker's rewrites (some left out, the ones that
ran recorded) or with none; the values every node of a graph makes; the values live after the
first k nodes of a graph (a prefix), compiled on one backend. Every graph is compiled from
fresh input variables of the same types, so shared variables and a function's own storage are
never touched, and every call gets copies of its inputs (a rewritten graph overwrites some in
place). Importing this module imports PyTensor.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
from pytensor.graph.features import Feature
from pytensor.graph.rewriting.basic import GraphRewriter

from modecfg._record import Record

__all__ = [
    "Compiled",
    "RewriteNames",
    "Tracking",
    "compile_on",
    "copy_value",
    "draws_at_random",
    "frontier",
    "lone",
    "loops_on",
    "node_outputs",
    "nodes_between",
    "replaced_by",
    "rewrite_module",
    "step_graph",
    "upstream",
]


def copy_value(value: Any) -> Any:
    """A copy of one input: an array, a random generator, anything else deep-copied."""
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


class RewriteNames(Feature):  # type: ignore[misc]
    """A FunctionGraph feature: the names of the rewrites that changed the graph, in the order
    they first did, and for each the first variable it replaced (what the user wrote there)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.replaced: dict[str, Any] = {}

    def on_change_input(self, fgraph: Any, node: Any, i: Any, r: Any, new_r: Any, reason: Any = None) -> None:
        if reason is None:
            return
        name = getattr(reason, "name", None) or getattr(reason, "__name__", None) or str(reason)
        name = str(name)
        if name not in self.replaced:
            self.names.append(name)
            self.replaced[name] = r


class Tracking(GraphRewriter):  # type: ignore[misc]
    """Another rewriter, run with a :class:`RewriteNames` on the graph."""

    def __init__(self, inner: Any, names: RewriteNames) -> None:
        self.inner, self.names = inner, names

    def apply(self, fgraph: Any) -> Any:
        fgraph.attach_feature(self.names)
        try:
            return self.inner.rewrite(fgraph)
        finally:
            fgraph.remove_feature(self.names)


class Compiled(Record):
    """A graph compiled on one linker: call it with a list of input values (copied)."""

    function: Any
    linker: str
    rewrites: tuple[str, ...]  # the rewrites that changed it, in order (when they were tracked)
    replaced: dict[str, Any]  # rewrite name -> the first variable it replaced

    @property
    def fgraph(self) -> Any:
        """The graph as it runs (after its rewrites)."""
        return self.function.maker.fgraph

    def __call__(self, values: Sequence[Any]) -> list[Any]:
        out = self.function(*[copy_value(v) for v in values])
        return [_host(v) for v in out]


def _host(value: Any) -> Any:
    """A JAX array (or any array-like with a dtype) as numpy; anything else as it is."""
    if isinstance(value, np.ndarray | np.generic) or not hasattr(value, "__array__"):
        return value
    return np.asarray(value)


def compile_on(
    inputs: Sequence[Any],
    outputs: Sequence[Any],
    linker: str,
    *,
    rewrites: str | None = "fast_run",
    excluding: Sequence[str] = (),
    track: bool = False,
) -> Compiled:
    """The graph from ``inputs`` to ``outputs`` compiled on ``linker`` (a PyTensor linker name),
    with the rewrites PyTensor's ``rewrites`` query gives that linker less ``excluding``, or,
    for ``rewrites=None``, exactly as it is (a graph already rewritten runs as it ran)."""
    import pytensor
    from pytensor.compile.mode import Mode
    from pytensor.graph.replace import clone_replace

    fresh = [var.type(name=var.name) for var in inputs]
    cloned = clone_replace(list(outputs), replace=dict(zip(inputs, fresh, strict=True)))
    cloned = loops_on(fresh, cloned, linker, rewrites, excluding)
    names = RewriteNames()
    mode = Mode(linker=linker, optimizer=rewrites)
    if rewrites is not None and excluding:
        mode = mode.excluding(*excluding)
    if rewrites is not None and track:
        mode = Mode(linker=linker, optimizer=Tracking(mode.optimizer, names))
    function = pytensor.function(
        fresh, cloned, mode=mode, accept_inplace=True, on_unused_input="ignore", profile=False
    )
    return Compiled(function, linker, tuple(names.names), dict(names.replaced))


# The linkers whose Scan runs its step function as a function of its own, compiled with the
# Scan's own mode: cvm with fast_run unless the loop was made with another (PyTensor 3.0-3.3).
_VM_LINKERS = frozenset({"py", "vm", "vm_nogc", "cvm", "cvm_nogc", "c|py", "c|py_nogc", "c"})


def loops_on(inputs: list[Any], outputs: list[Any], linker: str, rewrites: str | None,
             excluding: Sequence[str] = ()) -> list[Any]:  # fmt: skip
    """``outputs`` with each loop (Scan) whose step would be compiled with the loop's own mode
    (on the VM linkers) compiled on ``linker`` too, with ``rewrites`` less ``excluding`` (the
    same rewrites as the graph around it): a reference backend is that
    backend inside its loops as well (the loop's default, cvm, made py and the graph as written
    compute a step as cvm does, so that a step wrong in C was blamed on the one right backend).
    Loops inside loops keep their own mode. The graph given is a fresh clone: changed in place."""
    if linker not in _VM_LINKERS:
        return outputs  # numba and JAX compile a loop's step themselves
    from pytensor.compile.mode import Mode
    from pytensor.graph.fg import FunctionGraph
    from pytensor.link.vm import VMLinker
    from pytensor.scan.op import Scan

    graph = FunctionGraph(inputs, outputs, clone=False)
    loops = [node for node in graph.toposort() if isinstance(node.op, Scan)]
    if not loops:
        return outputs
    # py: the step in Python node by node (a VM, which a loop with preallocated outputs needs)
    own = VMLinker(use_cloop=False, c_thunks=False) if linker == "py" else linker
    mode = Mode(linker=own, optimizer=rewrites)
    if rewrites is not None and excluding:
        mode = mode.excluding(*excluding)
    for node in loops:
        op = copy.copy(node.op)
        vars(op).pop("_fn", None)  # the step compiled with the loop's own mode, if it was
        op.mode = mode
        graph.replace_all(list(zip(node.outputs, op.make_node(*node.inputs).outputs, strict=True)),
                          import_missing=True)  # fmt: skip
    return list(graph.outputs)


def node_outputs(fgraph: Any) -> list[Any]:
    """Every output of every node of ``fgraph``, in topological order."""
    return [out for node in fgraph.toposort() for out in node.outputs]


def frontier(order: Sequence[Any], k: int, outputs: Sequence[Any]) -> list[Any]:
    """The values live after the first ``k + 1`` nodes of ``order`` (a topological order): those
    made by them that a later node reads or that are outputs of the graph."""
    made = [out for node in order[: k + 1] for out in node.outputs]
    later = {var for node in order[k + 1 :] for var in node.inputs}
    wanted = set(outputs)
    return [var for var in made if var in later or var in wanted]


def rewrite_module(name: str) -> str | None:
    """The module that defines the rewrite registered as ``name`` in PyTensor's database (whose
    import registers it, for a rewrite that is not PyTensor's own), or None if none is."""
    from pytensor.compile.mode import optdb
    from pytensor.graph.rewriting.db import RewriteDatabase

    stack, seen = [optdb], set()
    while stack:
        db = stack.pop()
        if id(db) in seen:
            continue
        seen.add(id(db))
        for key, members in db.__db__.items():
            for member in members:
                if isinstance(member, RewriteDatabase):
                    stack.append(member)
                elif key == name:
                    fn = getattr(member, "fn", None) or getattr(member, "transform", None) or member
                    module = getattr(fn, "__module__", None)
                    return module if isinstance(module, str) else type(member).__module__
    return None


def lone(node: Any) -> tuple[list[Any], list[Any], list[int]]:
    """``node`` alone: fresh inputs in place of its variable inputs (its constants kept), the
    outputs of its clone on them, and the positions of those inputs among the node's."""
    from pytensor.graph.basic import Constant

    positions = [k for k, var in enumerate(node.inputs) if not isinstance(var, Constant)]
    fresh = {k: node.inputs[k].type(name=node.inputs[k].name) for k in positions}
    clone = node.clone_with_new_inputs([fresh.get(k, var) for k, var in enumerate(node.inputs)])
    return [fresh[k] for k in positions], list(clone.outputs), positions


def draws_at_random(graph: Any) -> bool:
    """Whether ``graph`` takes a random generator (numpy's): JAX draws with a generator of its own."""
    from pytensor.tensor.random.type import RandomGeneratorType

    return any(isinstance(var.type, RandomGeneratorType) for var in graph.inputs)


def upstream(graph: Any, outputs: Sequence[Any]) -> set[Any]:
    """The variables ``outputs`` are computed from, down to ``graph``'s inputs."""
    from pytensor.graph.traversal import ancestors

    return set(ancestors(outputs, blockers=graph.inputs))


def nodes_between(inputs: Sequence[Any], outputs: Sequence[Any]) -> list[Any]:
    """The nodes from ``inputs`` to ``outputs``, in topological order."""
    from pytensor.graph.traversal import io_toposort

    return list(io_toposort(inputs, outputs))


def replaced_by(var: Any) -> Any:
    """The node that made ``var`` (a variable a rewrite replaced), or None for an input."""
    return getattr(var, "owner", None)


def step_graph(op: Any) -> Any:
    """A loop's (a Scan's) inner graph as a FunctionGraph whose nodes can be cloned and compiled:
    PyTensor 3.3 keeps it frozen (``unfreeze`` gives an ordinary copy), 3.0 as it is."""
    inner = op.fgraph
    unfreeze = getattr(inner, "unfreeze", None)
    return unfreeze() if callable(unfreeze) else inner
