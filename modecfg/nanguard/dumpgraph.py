"""What a NaN-guard dump needs from PyTensor's graphs: a copy to pickle, and the graph as text.

The pickle is the dump's *code part* (:mod:`modecfg.nanguard.dump`): the graph as the user
wrote it, which a replay compiles again. The arrays of the call are not in it: each is
named by a persistent id and stored once, as ``.npy`` data beside it. Compiled inner
functions that ops cache (``Scan._fn``) are left out: a reader compiles them itself.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from typing import Any

__all__ = ["graph_text", "is_variable", "pickle_graph", "user_lines"]


def _function_class() -> Any:
    """PyTensor's compiled-function class (its module moved between 3.x releases)."""
    try:
        from pytensor.compile.executor import Function
    except ImportError:  # PyTensor releases before the move
        from pytensor.compile.function.types import Function
    return Function


class _GraphPickler(pickle.Pickler):
    """Pickles a graph with the call's values by reference, and without compiled inner functions."""

    def __init__(self, file: io.BytesIO, persistent: Callable[[Any], Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._persistent = persistent
        self._function = _function_class()
        from pytensor.graph.op import Op

        self._op = Op

    def persistent_id(self, obj: Any) -> Any:
        return self._persistent(obj)

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, self._op) or not any(
            isinstance(v, self._function) for v in vars(obj).values()
        ):
            return NotImplemented
        reduced = obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
        if not isinstance(reduced, tuple) or len(reduced) < 3 or not isinstance(reduced[2], dict):
            return NotImplemented
        state = {k: v for k, v in reduced[2].items() if not isinstance(v, self._function)}
        return (*reduced[:2], state, *reduced[3:])


def pickle_graph(graph: Any, n_outputs: int, targets: list[int], persistent: Callable[[Any], Any]) -> bytes:
    """The graph as written (a copy whose variables do not point back to the compiled one),
    pickled: ``{"inputs", "outputs", "n_outputs", "target_indices"}``; ``persistent(obj)``
    names the call's values (None for everything else)."""
    from pytensor.graph.basic import clone

    inputs, outputs = clone(graph.inputs, graph.outputs, copy_inputs=True, copy_orphans=True)
    buffer = io.BytesIO()
    payload = {"inputs": inputs, "outputs": outputs, "n_outputs": n_outputs, "target_indices": targets}
    _GraphPickler(buffer, persistent).dump(payload)
    return buffer.getvalue()


def graph_text(graph: Any) -> str:
    """The graph as written, as PyTensor's debugprint shows it (types included)."""
    from pytensor.printing import debugprint

    text = debugprint(list(graph.outputs), file="str", print_type=True)
    return str(text)


def user_lines(graph: Any) -> list[str]:
    """The user's lines that made the graph's nodes, in the graph's order, each once:
    ``file:line: code``. The lines running now (the failing call) are left out: nodes that
    the graph as written rebuilds when it is first asked for are traced to them."""
    import sys

    from pytensor.graph.traversal import io_toposort

    from modecfg._source import source_line

    running = set()
    frame: Any = sys._getframe(1)
    while frame is not None:
        running.add((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    seen: dict[str, None] = {}
    for node in io_toposort(list(graph.inputs), list(graph.outputs)):
        where = source_line(node)
        if where is not None and (where.file, where.line) not in running:
            seen.setdefault(f"{where.file}:{where.line}: {where.code}", None)
    return list(seen)


def is_variable(obj: Any) -> bool:
    """Whether ``obj`` is a PyTensor graph variable."""
    from pytensor.graph.basic import Variable

    return isinstance(obj, Variable)
