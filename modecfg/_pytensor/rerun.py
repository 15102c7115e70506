"""Re-run a call on the graph as the user wrote it, node by node, with Python thunks.

Shared by error location (:mod:`modecfg._pytensor.locate`) and the NaN guard
(:mod:`modecfg.nanguard.mode`): both need the first node of the untouched graph
that fails, or that produces a bad value, for the inputs of a call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["NodeFailed", "run_untouched"]


class NodeFailed(Exception):
    """A node of the re-run raised; ``node``, its ``inputs`` values and the ``error``."""

    def __init__(self, node: Any, inputs: list[Any], error: Exception) -> None:
        super().__init__(f"{node.op} failed: {error!r}")
        self.node, self.inputs, self.error = node, inputs, error


def run_untouched(graph: Any, values: list[Any]) -> Iterator[tuple[Any, list[Any], list[Any]]]:
    """Run ``graph`` (a clone of it) on ``values``; after each node, yield it with its
    input and output values. A node that raises ends the run with :class:`NodeFailed`.

    A value no later node needs is let go once its last reader has run (and been yielded),
    as PyTensor's VMs do: the re-run holds what the graph needs at once, not every
    intermediate of the call."""
    from pytensor.link.basic import PerformLinker

    linker = PerformLinker(allow_gc=False).accept(graph.clone(check_integrity=False))
    _, inputs, _, thunks, order = linker.make_all()
    for container, value in zip(inputs, values, strict=True):
        container.storage[0] = value
    kept = {id(container.storage) for container in inputs}
    last: dict[int, int] = {}  # storage cell -> the index of the last node that reads it
    for k, thunk in enumerate(thunks):
        for cell in thunk.inputs:
            last[id(cell)] = k
    for thunk in thunks:  # an output nobody reads is let go after its node
        for cell in thunk.outputs:
            last.setdefault(id(cell), -1)
    for k, (thunk, node) in enumerate(zip(thunks, order, strict=True)):
        ins = [cell[0] for cell in thunk.inputs]
        try:
            thunk()
        except Exception as exc:
            raise NodeFailed(node, ins, exc) from exc
        outs = [cell[0] for cell in thunk.outputs]
        yield node, ins, outs
        del ins, outs
        for cell in (*thunk.inputs, *thunk.outputs):
            if id(cell) not in kept and last.get(id(cell), k) <= k:
                cell[0] = None
