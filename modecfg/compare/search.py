"""Where a difference comes from (steps 2-4 of :mod:`modecfg.compare.mode`): the first node that
differs, inside a loop the first step and node of its step function, the rewrite that introduced
it, and the smallest reproduction."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from modecfg._pytensor.gradients import GradOrigin, grad_origin
from modecfg._pytensor.kinds import is_loop, is_uninitialised
from modecfg._record import Record
from modecfg._source import SourceLine, source_line
from modecfg.compare.judging import (
    FLAGS,
    PER_NODE,
    REWRITES,
    WRITTEN,
    Mismatch,
    Settings,
    all_finite,
    difference,
    tolerance,
)
from modecfg.configuration import config
from modecfg.nanguard.mode import Plan

__all__ = [
    "Analysis",
    "DifferingNode",
    "LoopStep",
    "Rewrite",
    "analyse",
    "find_in_loop",
    "find_node",
    "find_rewrite",
    "reference_of",
    "rewrites_query",
]


class DifferingNode(Record):
    """The first node of a backend's graph whose value differs from Python's for the same inputs."""

    node: Any
    position: int  # in the graph's topological order
    nodes: int  # how many the graph has
    backend: str
    reference: str
    input_shapes: tuple[Any, ...]
    input_dtypes: tuple[str, ...]
    source: SourceLine | None
    grad: GradOrigin | None
    detail: str
    compiles: int
    method: str  # "per-node values" or "bisection"
    input_values: tuple[Any, ...] = ()  # its inputs' values (the same on both: earlier nodes agree)
    inputs_given: tuple[Any, ...] = ()  # the values of its graph's inputs (a loop's step: that step's)
    graph: Any = None  # the graph it is a node of, where that is not the function's (a loop's step)

    def describe(self) -> str:
        inputs = ", ".join(
            f"{d}{tuple(s)}" for s, d in zip(self.input_shapes, self.input_dtypes, strict=True)
        )
        lines = [f"{self.node.op} (node {self.position + 1} of {self.nodes}) on inputs {inputs}"]
        if self.grad is not None:
            lines.append(f"  part of {self.grad.describe()}")
        elif self.source is not None:
            lines.append(f"  created at {self.source}: {self.source.code}")
        lines.append(f"  {self.detail}")
        lines.append(f"  found by {self.method} on {self.backend}: {self.compiles} compiles")
        return "\n".join(lines)


class LoopStep(Record):
    """Inside a loop (a Scan) that differs: the first step whose inner graph differs when given
    the reference's state, and the first node of the step function that differs there."""

    iteration: int  # 0-based
    steps: int
    node: DifferingNode

    def describe(self) -> str:
        lines = [
            f"inside it, at step {self.iteration + 1} of {self.steps} (the state before it the reference's):"
        ]
        lines.append("  " + self.node.describe().replace("\n", "\n  "))
        return "\n".join(lines)


class Rewrite(Record):
    """The rewrite that introduced a difference, on one backend."""

    name: str
    backend: str
    replaced: str  # the operation it replaced first
    source: SourceLine | None  # where the user wrote what it replaced
    ran: int  # how many rewrites changed the graph
    compiles: int
    confirmed: bool  # leaving it alone out removes the difference

    def describe(self) -> str:
        line = f"{self.name} (on {self.backend}; it replaced {self.replaced}"
        line += f", written at {self.source}: {self.source.code})" if self.source else ")"
        lines = [
            line,
            f"  found among the {self.ran} rewrites that changed the graph in {self.compiles} compiles",
        ]
        if not self.confirmed:
            lines.append("  leaving it alone out does not remove the difference: rewrites after it take part")
        return "\n".join(lines)


def rewrites_query() -> str | None:
    """PyTensor's rewrites the reference backends get: the ``optimizer`` flag's."""
    name = str(config.optimizer)
    return None if name in ("None", "") else name


class Analysis(Record):
    node: DifferingNode | None
    rewrite: Rewrite | None
    repro: str | None
    notes: tuple[str, ...]
    loop: LoopStep | None = None


def analyse(plan: Plan, references: dict[str, Any], first: Mismatch, inputs: list[Any],
            results: dict[str, list[Any]], settings: Settings = FLAGS) -> Analysis:  # fmt: skip
    """Steps 2-4 of the module docstring for the first mismatch of a call."""
    from modecfg.compare.repro import smallest_repro, write_repro

    own = plan.linker or "the function's linker"
    notes: list[str] = []
    written = plan.original
    truth = results.get(WRITTEN)
    if first.backend == REWRITES:
        assert written is not None and truth is not None
        rewrite, note = find_rewrite(
            written, inputs, plan.linker, first.position, truth[first.position], settings
        )
        notes += [note] if note else []
        outputs = [written.outputs[first.position]]
        repro, note = write_repro(
            written, outputs, inputs, plan.linker, "py", _tolerances(outputs, settings),
            rewrites=rewrites_query(), exclude=rewrite.name if rewrite is not None else None,
        )  # fmt: skip
        return Analysis(None, rewrite, repro, (*notes, *([note] if note else [])))
    backend = first.backend
    linker = backend_linker(backend, plan)
    graph = plan.fgraph if backend == own else references[backend].fgraph
    if linker == "jax":  # a GPU's lower matmul precision, chosen by a flag, explains it: said first
        from modecfg.device.jaxlink import precision_note

        notes += [note] if (note := precision_note(graph)) else []
    if written is not None and truth is not None and all_finite(truth[first.position]):
        from modecfg.compare.graphs import compile_on

        as_written = compile_on(written.inputs, written.outputs, linker, rewrites=None)(inputs)
        dtype = getattr(written.outputs[first.position].type, "dtype", None)
        if not difference(
            as_written[first.position], truth[first.position], backend, WRITTEN, dtype, settings=settings
        ):
            # right on the graph as written: a rewrite's doing, which the rewritten graph hides
            rewrite, note = find_rewrite(
                written, inputs, linker, first.position, truth[first.position], settings
            )
            notes += [note] if note else []
            outputs = [written.outputs[first.position]]
            repro, note = write_repro(
                written, outputs, inputs, linker, "py", _tolerances(outputs, settings),
                rewrites=rewrites_query(), exclude=rewrite.name if rewrite is not None else None,
            )  # fmt: skip
            return Analysis(None, rewrite, repro, (*notes, *([note] if note else [])))
        notes.append(
            f"{backend} differs on the graph as written too, without rewrites: no rewrite is to blame"
        )
    if written is not None and notes:  # it differs on the graph as written: the user's own nodes
        graph = written
    node, note = find_node(graph, inputs, backend, settings)
    notes += [note] if note else []
    rewrite = None
    repro = None
    loop = None
    if node is not None and is_loop(node.node.op):
        loop, note = find_in_loop(node, linker, backend, settings)
        notes += [note] if note else []
    if node is not None:
        reference = reference_of(backend)
        shown = loop.node if loop is not None else node  # a loop: its step's node, in its step's graph
        repro, note = smallest_repro(
            loop.node.graph if loop is not None else graph, shown.node, shown.input_values,
            list(loop.node.inputs_given) if loop is not None else inputs, linker, reference,
            _tolerances(shown.node.outputs, settings),
            functools.partial(_differs, first=linker, second=reference, settings=settings),
        )  # fmt: skip
        notes += [note] if note else []
    return Analysis(node, rewrite, repro, tuple(notes), loop)


def _tolerances(outputs: Sequence[Any], settings: Settings) -> tuple[float, float]:
    """(rtol, atol) for a reproduction of ``outputs`` (by the first's dtype, as the mode compares)."""
    dtype = next((getattr(o.type, "dtype", None) for o in outputs), None)
    return tolerance(dtype if dtype and str(dtype).startswith(("float", "complex")) else None, settings)


def _differs(a: Any, b: Any, *, first: str, second: str, settings: Settings) -> bool:
    return bool(difference(a, b, first, second, settings=settings))


def backend_linker(backend: str, plan: Plan) -> str:
    """The PyTensor linker name of a backend label (the function's own is its plan's)."""
    return plan.linker if backend in ("", "the function's linker") else backend


def reference_of(backend: str) -> str:
    """The per-node reference for ``backend``: Python's implementations, or C's for Python's own."""
    from modecfg._registry.linkers import why_unavailable

    if backend not in ("py", "vm", "vm_nogc"):
        return "py"
    return "c|py" if not why_unavailable("c|py") else "py"


def find_node(graph: Any, inputs: list[Any], backend: str, settings: Settings = FLAGS
              ) -> tuple[DifferingNode | None, str]:  # fmt: skip
    """The first node of ``graph`` whose value on ``backend`` differs from the reference's."""
    from modecfg.compare.graphs import compile_on, frontier, node_outputs

    order = graph.toposort()
    reference = reference_of(backend)
    if reference == backend:
        return None, f"no other backend computes each node of {backend}'s graph here (no C compiler)"
    every = node_outputs(graph)
    ref_values = dict(
        zip(every, compile_on(graph.inputs, every, reference, rewrites=None)(inputs), strict=True)
    )
    compiles = 1

    def differs(variables: list[Any], values: list[Any]) -> tuple[Any, str] | None:
        for var, value in zip(variables, values, strict=True):
            if is_uninitialised(var):
                continue  # memory no one wrote yet (a loop's output buffer): any value is right
            detail = difference(
                value,
                ref_values[var],
                backend,
                reference,
                getattr(var.type, "dtype", None),
                settings=settings,
            )
            if detail:
                return var, detail
        return None

    if backend in PER_NODE:
        found = differs(every, compile_on(graph.inputs, every, backend, rewrites=None)(inputs))
        compiles += 1
        method = "per-node values"
    else:
        method = "bisection"

        def at(k: int) -> tuple[Any, str] | None:
            nonlocal compiles
            live = frontier(order, k, graph.outputs)
            compiles += 1
            return differs(live, compile_on(graph.inputs, live, backend, rewrites=None)(inputs))

        found = at(len(order) - 1)
        if found is not None:
            lo, hi = 0, len(order) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                here = at(mid)
                if here is not None:
                    hi, found = mid, here
                else:
                    lo = mid + 1
    if found is None:
        return None, (
            f"no single node differs when {backend}'s graph is compiled node by node or in prefixes "
            f"({compiles} compiles): the difference needs the whole function compiled at once"
        )
    var, detail = found
    node = var.owner
    ins = [ref_values.get(v, _input_value(graph, v, inputs)) for v in node.inputs]
    return DifferingNode(
        node, order.index(node), len(order), backend, reference,
        tuple(np.shape(v) for v in ins),
        tuple(str(getattr(v.type, "dtype", v.type)) for v in node.inputs),
        source_line(node), grad_origin(node), detail, compiles, method, tuple(ins),
    ), ""  # fmt: skip


def find_in_loop(found: DifferingNode, linker: str, backend: str, settings: Settings = FLAGS
                 ) -> tuple[LoopStep | None, str]:  # fmt: skip
    """Inside a Scan that differs: its step function run step by step on ``backend`` and on the
    reference, each step from the reference's state, until one differs; then the first node of
    that step that does. Loops of sequences, one-step states (``outputs_info``) and
    non-sequences are searched; others are said not to be."""
    from modecfg.compare.graphs import compile_on, step_graph

    op = found.node.op
    info = op.info
    if info.mit_mot_in_slices or info.mit_sot_in_slices or info.n_untraced_sit_sot or info.as_while:
        return None, (
            "the loop's step was not searched: modecfg searches loops of sequences, one-step states "
            "(outputs_info without taps) and non-sequences"
        )
    values = list(found.input_values)
    steps = int(values[0])
    sequences, states, constants = op.outer_seqs(values), op.outer_sitsot(values), op.outer_non_seqs(values)
    state = [np.asarray(buffer)[0] for buffer in states]
    step = step_graph(op)
    reference = reference_of(backend)
    on_backend = compile_on(step.inputs, step.outputs, linker, rewrites=None)
    on_reference = compile_on(step.inputs, step.outputs, reference, rewrites=None)
    for t in range(steps):
        given = [np.asarray(seq)[t] for seq in sequences] + state + list(constants)
        expected = on_reference(given)
        got = on_backend(given)
        if any(
            difference(a, b, backend, reference, getattr(out.type, "dtype", None), settings=settings)
            for a, b, out in zip(got, expected, step.outputs, strict=True)
        ):
            node, note = find_node(step, given, backend, settings)
            if node is None:
                return None, f"step {t + 1} of the loop differs, but {note}"
            return LoopStep(t, steps, node._replace(inputs_given=tuple(given), graph=step)), ""
        state = list(expected[: len(states)])  # the reference's state: each step judged alone
    return None, (
        f"no step of the loop differs when run alone ({steps} steps, each from the reference's "
        "state): the difference needs the whole loop compiled at once"
    )


def _input_value(graph: Any, var: Any, inputs: list[Any]) -> Any:
    if var in graph.inputs:
        return inputs[graph.inputs.index(var)]
    return getattr(var, "data", None)  # a constant


def find_rewrite(written: Any, inputs: list[Any], linker: str, index: int, truth: Any,
                 settings: Settings = FLAGS) -> tuple[Rewrite | None, str]:  # fmt: skip
    """The rewrite whose work makes ``linker``'s output ``index`` differ from ``truth``."""
    from modecfg.compare.graphs import compile_on, replaced_by

    query = rewrites_query()
    if query is None:
        return None, "no rewrites ran (optimizer=None): none to blame"
    dtype = getattr(written.outputs[index].type, "dtype", None)
    full = compile_on(written.inputs, written.outputs, linker, rewrites=query, track=True)
    compiles = 1

    def bad(excluding: Sequence[str]) -> bool:
        nonlocal compiles
        compiles += 1
        value = compile_on(written.inputs, written.outputs, linker, rewrites=query, excluding=excluding)(
            inputs
        )
        return bool(difference(value[index], truth, linker, WRITTEN, dtype, settings=settings))

    names = list(full.rewrites)
    if not difference(full(inputs)[index], truth, linker, WRITTEN, dtype, settings=settings):
        return None, "the rewritten graph compiled again agrees: the difference is not reproducible"
    if bad(names):
        return None, (
            f"{linker} differs with each of the {len(names)} rewrites that ran left out: rewrites PyTensor "
            "requires for it, or none, are to blame"
        )
    lo, hi = 1, len(names)  # the smallest m with bad(names[m:]): names[m - 1] is the culprit
    while lo < hi:
        mid = (lo + hi) // 2
        if bad(names[mid:]):
            hi = mid
        else:
            lo = mid + 1
    culprit = names[lo - 1]
    confirmed = not bad([culprit])
    node = replaced_by(full.replaced[culprit])
    replaced = str(node.op) if node is not None else str(full.replaced[culprit])
    return Rewrite(culprit, linker, replaced, source_line(node) if node is not None else None, len(names),
                   compiles, confirmed), ""  # fmt: skip
