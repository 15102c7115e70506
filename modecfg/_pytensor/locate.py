"""Errors of compiled functions name the line of user code that made the failing node.

After rewriting, the node that fails is often not one the user wrote: a fused
``Composite`` of five user expressions, with no trace of where they came from. So:

* before rewriting, every compile keeps what its graph is (each node's inputs, on the
  optimized graph's ``_modecfg_original``; see :func:`remember` and the compile hook in
  :mod:`modecfg._pytensor.replacements`), from which an untouched copy is built when asked;
* when a compiled function fails, PyTensor calls ``raise_with_op``; modecfg's version
  lets PyTensor annotate the error as usual (``exception_verbosity``), then looks for
  the user's line: on the failing node itself if it still has one, else by re-running
  the failing call on the untouched graph, node by node with the Python
  implementations, from the same inputs, to find the first node that fails there.

The line is added to the error as a note, with the operation and its input shapes;
``exception_verbosity=medium`` or ``high`` adds the creation stack (``traceback.limit``
frames). The error also carries ``modecfg_location = (file, line)``. Nothing of this
runs unless a call fails.
"""

from __future__ import annotations

import linecache
import sys
from typing import Any

from modecfg._pytensor import marks
from modecfg._pytensor.gradients import grad_origin
from modecfg._pytensor.kinds import is_loop
from modecfg._source import user_frame
from modecfg.configuration import config

__all__ = ["raise_with_location", "remember", "untouched"]


def _describe(node: Any, values: list[Any] | None) -> str:
    op = str(node.op)
    if values is None:
        return op
    shapes = ", ".join(str(getattr(v, "shape", type(v).__name__)) for v in values)
    return f"{op} on inputs of shapes {shapes}"


def _rerun(fgraph: Any, values: list[Any]) -> tuple[Any, list[Any] | None]:
    """The first node of the untouched graph that fails on ``values``, and its inputs."""
    from modecfg._pytensor.rerun import NodeFailed, run_untouched

    original = untouched(fgraph)
    if original is None or len(values) != len(original.inputs):
        return None, None
    try:
        for _ in run_untouched(original, values):
            pass
    except NodeFailed as failed:
        return failed.node, failed.inputs
    return None, None


def _calling_function(fgraph: Any) -> Any:
    """The compiled Function whose call failed (its ``__call__`` is on the stack)."""
    from pytensor.compile.executor import Function

    call_code = Function.__call__.__code__
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code is call_code:
            fn = frame.f_locals.get("self")
            if fn is not None and getattr(fn.maker, "fgraph", None) is fgraph:
                return fn
        frame = frame.f_back
    return None


def _note(exc: BaseException, fgraph: Any, node: Any, thunk: Any, storage_map: Any) -> None:
    from pytensor.link.basic import JITLinker

    fn = _calling_function(fgraph)
    # A JIT backend (numba, jax) reports an arbitrary output node: only a re-run can say.
    linker = None if fn is None else getattr(fn.maker.linker, "inner", fn.maker.linker)  # a guard's
    jit = isinstance(linker, JITLinker)
    frame, stack = (None, []) if jit else user_frame(node)
    how = ""
    where_node = node
    node_values = None
    if storage_map is not None:
        node_values = [storage_map[v][0] for v in node.inputs if v in storage_map] or None
    if frame is None and fn is not None:
        values = [container.storage[0] for container in fn.input_storage]
        found, found_values = _rerun(fgraph, values)
        if found is not None:
            where_node, node_values = found, found_values
            frame, stack = user_frame(found)
            how = "; found by re-running the call without rewrites"
    origin = grad_origin(where_node) if frame is None else None
    if frame is None and origin is not None:
        exc.add_note(
            f"\nmodecfg: the operation that failed ({_describe(where_node, node_values)}{how}) is part "
            f"of {origin.describe()}"
        )
        if origin.forward is not None:
            setattr(exc, marks.LOCATION, (origin.forward.file, origin.forward.line))
        return
    if frame is None:
        what = "the operation that failed inside the compiled code" if jit else "the failing operation"
        exc.add_note(
            f"\nmodecfg: no line of your code is recorded for {what} "
            f"({_describe(where_node, node_values)}); traceback.limit={config.traceback.limit} may "
            "be too small to reach it"
        )
        return
    filename, lineno, _, text = frame
    text = text or linecache.getline(filename, lineno).strip()
    lines = [
        f"\nmodecfg: the operation that failed was created at {filename}:{lineno}",
        f"    {text}",
        f"  ({_describe(where_node, node_values)}{how})",
    ]
    if config.exception_verbosity != "low" and len(stack) > 1:
        lines.append("  created by (innermost last):")
        lines += [f"    {f[0]}:{f[1]} in {f[2]}" for f in stack]
    exc.add_note("\n".join(lines))
    setattr(exc, marks.LOCATION, (filename, lineno))


_HINT = (
    "HINT: Use the PyTensor flag `exception_verbosity=high` for a debug print-out and storage map "
    "footprint of this Apply node."
)


def _once(exc: BaseException, original: BaseException | None) -> None:
    """The error said once: PyTensor's longer copy of it (exception_verbosity medium / high) is
    raised while the original is handled, and Python printed both, the second "during handling
    of" the first; and its hint to set exception_verbosity=high, where it is high already (a
    function linked by numba or JAX has no storage map to show), says what is so instead."""
    if original is not None and exc is not original and str(exc).startswith(str(original)):
        exc.__suppress_context__ = True
    if config.exception_verbosity == "high" and len(exc.args) == 1 and isinstance(exc.args[0], str):
        if _HINT in exc.args[0]:
            exc.args = (exc.args[0].replace(_HINT, "(no storage map footprint: this function's linker keeps "
                                            "none; linker=cvm shows one)"),)  # fmt: skip


def raise_with_location(original: Any, fgraph: Any, node: Any, thunk: Any = None, exc_info: Any = None,
                        storage_map: Any = None) -> Any:  # fmt: skip
    """Call PyTensor's ``raise_with_op`` (``original``) and add the user's line to what it raises."""
    if exc_info is None:
        exc_info = sys.exc_info()
    try:
        original(fgraph, node, thunk, exc_info, storage_map)
    except BaseException as exc:
        # PyTensor re-raises the error, or (exception_verbosity medium / high) a new one of
        # its type with a longer message: either way, that is the one the user sees.
        if isinstance(exc, Exception) and not hasattr(exc, marks.LOCATION):
            _once(exc, exc_info[1])
            try:
                _note(exc, fgraph, node, thunk, storage_map)
            except Exception as problem:  # locating must never hide the user's error
                exc.add_note(f"\nmodecfg: could not locate the failing line ({problem!r})")
        raise
    raise exc_info[1].with_traceback(exc_info[2])  # pragma: no cover - original always raises


def remember(fgraph: Any) -> None:
    """Keep what ``fgraph`` is before it is rewritten (see the module docstring).

    Rewrites change ``node.inputs`` in place and the inner graph of an operation that has one
    (a Scan; an OpFromGraph, as softmax is: the compile's own copy of it, rewritten in place, with
    in-place operations); nothing else of a node or a variable. So what is kept is what each
    node's inputs were and, for an operation with an inner graph, a clone of it as written, with
    the graph's inputs and outputs: plain tuples and a dict of PyTensor's own objects (a function
    pickled with modecfg loads without it). :func:`untouched` builds a graph of clones from it on
    first use (an error, a NaN, a float32 check of the function): a compile never asked pays a dict
    of tuples (and clones of its inner graphs), not a clone of its graph (that was 3% of a warm
    compile).
    """
    from pytensor.graph.op import HasInnerGraph

    # A loop (Scan) is never rewritten in place: PyTensor's rewrites make new Scan ops (3.0-3.3, on
    # every linker; 3.3 freezes its graph), so the op as written is kept as it is, not cloned (a
    # clone of its step function was 0.5% of an RNN's compile).
    inputs_of = {
        node: (
            node.op.clone() if isinstance(node.op, HasInnerGraph) and not is_loop(node.op) else node.op,
            tuple(node.inputs),
        )
        for node in fgraph.apply_nodes
    }
    kept = (tuple(fgraph.inputs), tuple(fgraph.outputs), inputs_of, dict(fgraph.update_mapping or {}))
    setattr(fgraph, marks.ORIGINAL, kept)


def untouched(fgraph: Any) -> Any:
    """The graph ``fgraph`` was before its rewrites (a FunctionGraph of clones, built once),
    or None if no compile hook kept it."""
    kept = getattr(fgraph, marks.ORIGINAL, None)
    if isinstance(kept, tuple):
        kept = _build(*kept)
        setattr(fgraph, marks.ORIGINAL, kept)
    return kept


_Kept = dict[Any, tuple[Any, tuple[Any, ...]]]  # node -> (its operation, its inputs) as written


def _build(roots: tuple[Any, ...], outputs: tuple[Any, ...], inputs_of: _Kept,
           update_mapping: dict[int, int]) -> Any:  # fmt: skip
    from pytensor.graph.basic import Apply
    from pytensor.graph.fg import FunctionGraph
    from pytensor.graph.traversal import general_toposort

    stop = set(roots)

    def was(obj: Any) -> Any:  # what a variable or node came from before the rewrites
        if isinstance(obj, Apply):
            return inputs_of[obj][1] if obj in inputs_of else ()
        return None if obj in stop or obj.owner is None else [obj.owner]

    equiv: dict[Any, Any] = {var: var.clone() for var in roots}

    def copy(var: Any) -> Any:  # a constant's clone is made where it is met
        found = equiv.get(var)
        if found is None:
            found = equiv[var] = var.clone()
        return found

    for node in general_toposort(outputs, was):
        if isinstance(node, Apply):
            op, inputs = inputs_of[node]
            new = node.clone_with_new_inputs([copy(var) for var in inputs], strict=False)
            new.op = op  # the operation as written (a rewrite may have put a copy in its place)
            equiv.update(zip(node.outputs, new.outputs, strict=True))
    return FunctionGraph(
        [equiv[var] for var in roots],
        [copy(var) for var in outputs],
        clone=False,
        update_mapping=update_mapping or None,
    )
