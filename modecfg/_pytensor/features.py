"""A graph feature of modecfg's (a subclass of PyTensor's Feature: imports PyTensor)."""

from __future__ import annotations

from typing import Any

from pytensor.graph.features import Feature

from modecfg._pytensor import marks
from modecfg._source import user_frame

__all__ = ["CarryTraces"]


class CarryTraces(Feature):  # type: ignore[misc]
    """Gives a rewrite's new variable the user line of the one it replaces.

    Many rewrites (fusion, BLAS) make nodes with no trace. The line goes to
    ``tag.modecfg_trace`` (``marks.TRACE``), not ``tag.trace``: it is the line of the expression the node
    computes, good for profiles, but errors re-run the call to find the exact one.
    Attached for the rewrites of a profiled compile only (a profile is what reads the line):
    a compiled function's graph does not keep it.
    """

    def on_change_input(self, fgraph: Any, node: Any, i: int, r: Any, new_r: Any,
                        reason: Any = None) -> None:  # fmt: skip
        tag = new_r.tag
        if getattr(tag, "trace", None) or getattr(tag, marks.TRACE, None):
            return
        frame, _ = user_frame(r)
        frame = frame or getattr(r.tag, marks.TRACE, None)
        if frame is not None:
            setattr(tag, marks.TRACE, frame)
