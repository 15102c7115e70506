"""What the layers above ask of PyTensor's graphs: the kind of an op, and one node run alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modecfg._pytensor import state as _state

_WRAPPERS = _state.__file__  # the file of the patches' Wrapper: a replaced function's frame

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


def retrace(variables: list[Any], outside: str, limit: int, extra: Callable[[], int]) -> None:
    """Each variable's creation trace without the frames of the file ``outside``, what its
    innermost frame calls and the patch machinery's wrapper frames: ``limit`` frames (-1: all)
    from the line that called into that file, as PyTensor records them without it. The file's
    frames need not be together: a node made in a loop's step has the file's ``scan`` (and its
    wrapper) further out, and the step's own lines between. A trace PyTensor did not cut short
    only loses those frames; one it did is made again (PyTensor's own frames skipped),
    ``extra()`` frames deeper (how many the file and what it calls add) and one more, the
    wrapper outside the file's outermost frame."""
    again = []
    for variable in variables:
        frames = variable.tag.trace[0] if variable.tag.trace else []
        kept = _outside_of(frames, outside)
        if kept is None:
            continue  # none of its frames (limit 0, or nothing of the file's kept)
        if limit == -1 or len(frames) < limit:  # nothing cut off: only the file's frames to drop
            variable.tag.trace = [kept] if kept else []
        else:
            again.append(variable)
    if not again:
        return
    from pytensor.graph.utils import add_tag_trace

    deeper = limit + extra() + 1
    for variable in again:
        add_tag_trace(variable, user_line=deeper)
        frames = variable.tag.trace[0] if variable.tag.trace else []
        kept = (_outside_of(frames, outside) or [])[-limit:]
        variable.tag.trace = [kept] if kept else []


def _outside_of(frames: list[Any], outside: str) -> list[Any] | None:
    """``frames`` (outermost first) as they would be without the file ``outside``: what its
    innermost frame and the frames it calls, its other frames and the patches' wrapper frames
    taken out; None if no frame is the file's."""
    innermost = next((i for i in range(len(frames) - 1, -1, -1) if frames[i][0] == outside), None)
    if innermost is None:
        return None
    return [frame for frame in frames[:innermost] if frame[0] != outside and frame[0] != _WRAPPERS]
