"""What the layers above ask of PyTensor's graphs: the kind of an op, and one node run alone."""

from __future__ import annotations

from typing import Any

__all__ = [
    "CannotRun",
    "has_inner_loops",
    "inner_graph",
    "is_scalar_op",
    "retrace",
    "run_node",
    "scan_function",
]


class CannotRun(Exception):
    """A node that neither its Python nor its C implementation can run here (the reason)."""


def is_scalar_op(op: Any) -> bool:
    """Whether ``op`` is a scalar op (the inner graphs of Elemwise and Composite are made of them)."""
    from pytensor.scalar.basic import ScalarOp

    return isinstance(op, ScalarOp)


def has_inner_loops(fgraph: Any) -> bool:
    """Whether a graph has an inner loop (a scan) or an inner function (an OpFromGraph)."""
    from pytensor.compile.builders import OpFromGraph
    from pytensor.scan.op import Scan

    return any(isinstance(node.op, Scan | OpFromGraph) for node in fgraph.apply_nodes)


def has_gathers(fgraph: Any) -> bool:
    """Whether a graph indexes by an integer array (``theta[group]``, a hierarchical model's
    groups) or scatters into one (that indexing's gradient)."""
    from pytensor.tensor import subtensor as st

    # PyTensor 3.3 folded the 1-d forms (AdvancedSubtensor1, ...) into the general ones
    names = ("AdvancedSubtensor1", "AdvancedSubtensor", "AdvancedIncSubtensor1", "AdvancedIncSubtensor")
    kinds = tuple(kind for kind in (getattr(st, name, None) for name in names) if isinstance(kind, type))
    return any(isinstance(node.op, kinds) for node in fgraph.apply_nodes)


def inner_graph(op: Any) -> Any:
    """The inner graph of an OpFromGraph (as it holds it, perhaps frozen); None for any other op."""
    from pytensor.compile.builders import OpFromGraph

    return op.fgraph if isinstance(op, OpFromGraph) else None


def run_node(node: Any, values: list[Any]) -> list[Any]:
    """The outputs of ``node`` on ``values``: its Python implementation, else its C one; a
    :class:`CannotRun` saying why if it has neither."""
    from pytensor.graph.utils import MethodNotDefined

    last: Exception | None = None
    for impl in ("py", None):
        storage = {var: [value] for var, value in zip(node.inputs, values, strict=True)}
        computed = {var: [True] for var in node.inputs}
        for out in node.outputs:
            storage[out] = [None]
            computed[out] = [False]
        try:
            thunk = node.op.make_thunk(node, storage, computed, [], impl=impl)
        except (MethodNotDefined, NotImplementedError) as exc:
            last = exc
            continue
        thunk()
        return [storage[out][0] for out in node.outputs]
    raise CannotRun(str(last))


def scan_function() -> Any:
    """PyTensor's own ``scan`` function (the original, while modecfg's test-value patch wraps it)."""
    from modecfg._pytensor.state import original

    try:
        return original("scan test values")
    except KeyError:  # the scan patch was never on: scan is PyTensor's own
        from pytensor.scan.basic import scan

        return scan


def retrace(variables: list[Any], outside: str, limit: int, extra: int) -> None:
    """Each variable's creation trace made again as PyTensor makes it (its own frames skipped),
    then cut where the frames of the file ``outside`` begin: ``limit`` frames (-1: all) from
    the line that called into that file. ``extra``: how many frames the file and what it calls
    add, so that PyTensor's record reaches past them."""
    from pytensor.graph.utils import add_tag_trace

    for variable in variables:
        add_tag_trace(variable, user_line=-1 if limit == -1 else limit + extra)
        frames = variable.tag.trace[0] if variable.tag.trace else []
        own = next((i for i, frame in enumerate(frames) if frame[0] == outside), len(frames))
        kept = frames[:own] if limit == -1 else frames[:own][max(own - limit, 0) :]
        variable.tag.trace = [kept] if kept else []
