"""Where a gradient node comes from: the ``grad`` call and the user's expression it differentiates.

Nodes that ``pytensor.grad`` builds are made inside PyTensor: their creation traces
(``tag.trace``) hold PyTensor's frames, cut at ``traceback.limit`` before they reach
the user's. So the "gradients" patch tags each node a ``grad`` call adds with a
:class:`GradOrigin`: the user's line that called ``grad``, and the user's forward
expression the node belongs to (the nearest forward variable with a user line that
feeds it). Error locations and the NaN guard name both.
"""

from __future__ import annotations

from typing import Any

from modecfg._pytensor import marks
from modecfg._record import Record
from modecfg._source import SourceLine, source_line

__all__ = ["GradOrigin", "grad_origin", "tag_gradient"]


class GradOrigin(Record):
    call: SourceLine | None  # the user's line that called grad
    forward: SourceLine | None  # the forward expression this gradient node belongs to
    forward_op: str = ""  # its operation, when its line is not recorded

    def describe(self) -> str:
        text = "a gradient"
        if self.forward is not None:
            text = f"the gradient of the expression at {self.forward}: {self.forward.code}"
        elif self.forward_op:
            text = f"the gradient of {self.forward_op} (its line is not recorded: raise traceback.limit)"
        if self.call is not None:
            text += f"\n    (pt.grad called at {self.call}: {self.call.code})"
        return text


def grad_origin(node: Any) -> GradOrigin | None:
    """What a gradient node was tagged with, or None for a node ``grad`` did not make."""
    return getattr(getattr(node, "tag", None), marks.GRAD, None)


def _owners(variables: list[Any], stop: set[Any]) -> list[Any]:
    """Apply nodes above ``variables`` not in ``stop``, inputs before the nodes they feed."""
    seen: set[Any] = set()
    order = []
    pending = [(v.owner, False) for v in variables if getattr(v, "owner", None) is not None]
    while pending:
        node, expanded = pending.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen or node in stop:
            continue
        seen.add(node)
        pending.append((node, True))
        pending.extend((i.owner, False) for i in node.inputs if i.owner is not None and i.owner not in seen)
    return order


def _forwards(new_nodes: list[Any], new: set[Any]) -> dict[Any, tuple[SourceLine | None, Any]]:
    """For each new node, the nearest forward expression feeding it: (its line, its op).

    Worked out once per node, inputs first: a node takes a forward input's line, else what
    the gradient nodes feeding it found (linear in the size of the gradient).
    """
    found: dict[Any, tuple[SourceLine | None, Any]] = {}
    lines: dict[Any, SourceLine | None] = {}
    for node in new_nodes:
        best: tuple[SourceLine | None, Any] = (None, None)
        for var in node.inputs:
            owner = var.owner
            if owner is None:
                continue
            if owner in new:
                candidate = found.get(owner, (None, None))
            else:
                if owner not in lines:
                    lines[owner] = source_line(owner)
                candidate = (lines[owner], owner.op)
            if candidate[0] is not None:
                best = candidate
                break
            if best[1] is None:
                best = candidate
        found[node] = best
    return found


def tag_gradient(cost: Any, wrt: Any, result: Any, call: SourceLine | None) -> None:
    """Tag every node ``grad`` added to reach ``result`` (see the module docstring)."""
    inputs = list(wrt) if isinstance(wrt, list | tuple) else [wrt]
    before = set(_owners([cost, *inputs] if cost is not None else inputs, set()))
    results = [r for r in (result if isinstance(result, list | tuple) else [result]) if r is not None]
    new_nodes = _owners(results, before)
    forwards = _forwards(new_nodes, set(new_nodes))
    for node in new_nodes:
        if grad_origin(node) is None:
            line, op = forwards[node]
            origin = GradOrigin(call, line, "" if line is not None or op is None else str(op))
            setattr(node.tag, marks.GRAD, origin)
