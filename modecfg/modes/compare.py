"""CompareMode: a DebugMode for what actually runs.

Every call runs on the function's own linker (numba by default on PyTensor 3) and, from copies
of the same inputs, on the reference backends this machine has (``CompareMode.linkers``: numba,
cvm, py, jax, each with the rewrites it gets) and on the graph as written, node by node in
Python. Outputs and updates are compared with dtype-aware tolerances. Where they differ:

1. **Which backend.** The graph as written is the reference when its values are finite; a
   backend that differs from it is the odd one. When every backend differs from it alike, the
   rewrites they share are. When the graph as written makes NaN or Inf, rewrites may have
   stabilised it: the backends are compared with one another. One that makes finite what the
   graph as written does not is compiled once more, on the graph as written without rewrites:
   if that makes NaN or Inf too, its rewrites stabilised the graph, and it is not reported (a
   stabilising rewrite is no culprit); if not, the backend itself differs (a max that skips NaN).
2. **The first node that differs**, on the odd backend's own rewritten graph. Backends that keep
   every node's value (py, vm, cvm, c|py) are asked for all of them in one compile; fused ones
   (numba, jax) are bisected over the topological order: the prefix of the first k nodes, its
   live values as outputs, compiled on that backend and compared with the same values computed
   in Python. A graph of n nodes costs ceil(log2 n) + 2 compiles (12 for 1,000 nodes).
3. **The rewrite that introduced it**: when the odd backend computes the graph as written
   correctly, the rewrites that ran (recorded as they ran) are bisected by leaving the later
   ones out, then the culprit alone is left out to confirm it: ceil(log2 r) + 3 compiles for r
   rewrites.
4. **The smallest reproduction**: the sub-graph up to that node written as a standalone script
   (:mod:`modecfg._pytensor.graphsource`) and its inputs as an ``.npz`` (no pickle), which
   compiles the sub-graph on both backends with plain PyTensor, prints both values and exits 1
   when they differ: what a PyTensor or numba issue needs.

A mismatch is a :class:`~modecfg.errors.CompareError` (``CompareMode.action=raise``, nothing
updated) or a :class:`~modecfg.errors.CompareWarning` (``warn``, the function's own values are
returned and its updates written). Steps 2-4 run at the first mismatch of a function and are
reused for its later ones.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from modecfg._pytensor.gradients import GradOrigin, grad_origin
from modecfg._pytensor.kinds import is_loop, is_uninitialised, linker_name
from modecfg._pytensor.subclasses import (
    InPlaceSafeMaker,
    SerialMaker,
    WrappedVM,
    WrappingLinker,
    WrappingMode,
)
from modecfg._source import SourceLine, source_line
from modecfg._warn import act
from modecfg.config import config
from modecfg.errors import CompareError, CompareWarning
from modecfg.modes.nanguard import Plan, make_plan

__all__ = [
    "AUTO_LINKERS",
    "CompareLinker",
    "CompareMode",
    "Comparison",
    "DifferingNode",
    "Mismatch",
    "Rewrite",
    "difference",
    "reference_linkers",
    "tolerance",
]

_log = logging.getLogger("modecfg.compare")

AUTO_LINKERS = ("numba", "cvm", "py", "jax")  # CompareMode.linkers=auto: those of these that run here
PER_NODE = frozenset({"py", "vm", "vm_nogc", "cvm", "cvm_nogc", "c|py", "c|py_nogc", "c"})
WRITTEN = "the graph as written"
REWRITES = "the rewrites"  # the odd one when every backend differs alike from the graph as written
# (rtol, atol) by dtype: PyTensor's test tolerances; float32's rtol 1e-4, not 1e-5, since
# backends sum and fuse in different orders
_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
_calls = threading.local()  # .depth: compared calls running in this thread


class _Count:
    """Compared calls and functions in this process (``modecfg compare`` reports them)."""

    def __init__(self) -> None:
        self.calls = 0
        self.functions = 0
        self.backends: set[str] = set()
        self.differences = 0  # calls that raised or warned
        self.found: list[str] = []  # the first line of each function's first difference
        self.not_compared: dict[str, int] = {}  # backend -> functions it could not run
        self.lock = threading.Lock()


counted = _Count()


# -- comparing two values ------------------------------------------------------------------------


class Settings(NamedTuple):
    """A CompareMode's own linkers and tolerances; None follows the CompareMode.* flag."""

    linkers: str | None = None
    rtol: float | None = None
    atol: float | None = None


FLAGS = Settings()  # every setting follows its flag


def tolerance(dtype: Any, settings: Settings = FLAGS) -> tuple[float, float]:
    """(rtol, atol) for values of ``dtype``: the mode's, else the CompareMode flags, else by dtype."""
    cm = config.CompareMode
    name = np.dtype(dtype).name if dtype is not None else "float64"
    if name.startswith("complex"):
        name = {"complex64": "float32"}.get(name, "float64")
    rtol, atol = _TOLERANCES.get(name, _TOLERANCES["float64"])
    rtol = settings.rtol if settings.rtol is not None else rtol if cm.rtol is None else float(cm.rtol)
    atol = settings.atol if settings.atol is not None else atol if cm.atol is None else float(cm.atol)
    return rtol, atol


def _array(value: Any) -> np.ndarray | None:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic | float | int | bool | complex):
        return np.asarray(value)
    if hasattr(value, "__array__") and hasattr(value, "dtype") and hasattr(value, "shape"):
        return np.asarray(value)
    return None  # a random generator, a list: not compared


def _at(index: tuple[int, ...]) -> str:
    return f"index {index}" if index else "the value"


def _show(x: Any) -> str:
    return np.format_float_positional(x, precision=8, trim="-") if isinstance(x, float) else repr(x)


def difference(a: Any, b: Any, first: str, second: str, dtype: Any = None, settings: Settings = FLAGS) -> str:
    """How ``a`` (from ``first``) differs from ``b`` (from ``second``); '' when they agree.

    Floats within the tolerance agree; NaN agrees with NaN, Inf with an Inf of the same sign;
    other dtypes must be equal. Values that are not arrays (random generators) are not compared.
    """
    x, y = _array(a), _array(b)
    if x is None or y is None:
        return ""
    if x.shape != y.shape:
        return f"shape {x.shape} on {first}, {y.shape} on {second}"
    if x.dtype.kind not in "fc" or y.dtype.kind not in "fc":
        unequal = np.asarray(x != y)
        if not unequal.any():
            return ""
        index = tuple(int(i) for i in np.unravel_index(int(np.argmax(unequal)), x.shape))
        return (f"{int(unequal.sum())} of {x.size} values differ; first at {_at(index)}: "
                f"{first} {_show(x[index].item())}, {second} {_show(y[index].item())}")  # fmt: skip
    rtol, atol = tolerance(dtype if dtype is not None else np.promote_types(x.dtype, y.dtype), settings)
    for kind, test in (("NaN", np.isnan), ("Inf", np.isinf)):
        xs, ys = test(x), test(y)
        # NaN agrees with NaN; an Inf only with an Inf of the same sign
        unlike = (xs != ys) if kind == "NaN" else ((xs | ys) & (x != y) & ~np.isnan(x) & ~np.isnan(y))
        if unlike.any():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmax(unlike)), x.shape))
            return (f"{kind} in {int(xs.sum())} of {x.size} values on {first}, {int(ys.sum())} on {second}; "
                    f"first at {_at(index)}: {first} {_show(x[index].item())}, "
                    f"{second} {_show(y[index].item())}")  # fmt: skip
    finite = np.isfinite(x) & np.isfinite(y)
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.where(finite, np.abs(x - y), 0.0)
        bad = finite & (gap > atol + rtol * np.abs(y))
    if not bad.any():
        return ""
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, gap, -1.0))), x.shape))
    return (f"{int(bad.sum())} of {x.size} values differ beyond rtol={rtol:g}, atol={atol:g}; most at "
            f"{_at(index)}: {first} {_show(x[index].item())}, {second} {_show(y[index].item())}")  # fmt: skip


def _and(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _finite(value: Any) -> bool:
    x = _array(value)
    return x is None or x.dtype.kind not in "fc" or bool(np.isfinite(x).all())


# -- what was found ------------------------------------------------------------------------------


class Mismatch(NamedTuple):
    """One output (or update) on which one backend differs from the reference."""

    output: str  # "output 0", "update of w"
    position: int  # among the function's outputs and updates
    backend: str  # the odd one; "the rewrites" when every backend differs from the graph as written
    reference: str  # what it was compared with
    detail: str  # how it differs (difference())
    stabilised: bool = False  # finite where the graph as written is not: perhaps its rewrites' doing

    def describe(self) -> str:
        if self.backend == REWRITES:
            return f"{self.output}: every backend differs alike from {self.reference}: {self.detail}"
        return f"{self.output}: {self.backend} differs from {self.reference}: {self.detail}"


class DifferingNode(NamedTuple):
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


class LoopStep(NamedTuple):
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


class Rewrite(NamedTuple):
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


class Comparison(NamedTuple):
    """What a CompareMode call found."""

    mismatches: tuple[Mismatch, ...]
    backends: tuple[str, ...]  # every backend the call ran on, the function's own first
    skipped: dict[str, str]  # backend -> why it was not compared
    node: DifferingNode | None
    rewrite: Rewrite | None
    repro: str | None  # the script written
    notes: tuple[str, ...]  # what could not be found, and why
    loop: LoopStep | None = None  # inside the differing node, when it is a loop

    def describe(self) -> str:
        first = self.mismatches[0]
        lines = [f"CompareMode: the backends differ ({_and([*self.backends, WRITTEN])} compared)"]
        lines += ["  " + m.describe() for m in self.mismatches]
        if self.node is not None:
            lines.append(f"the first node that differs on {first.backend}:")
            lines.append("  " + self.node.describe().replace("\n", "\n  "))
        if self.loop is not None:
            lines.append("  " + self.loop.describe().replace("\n", "\n  "))
        if self.rewrite is not None:
            lines.append("the rewrite that introduced it:")
            lines.append("  " + self.rewrite.describe().replace("\n", "\n  "))
        lines += self.notes
        if self.repro is not None:
            lines.append(f"reproduction (plain PyTensor): python {self.repro}")
        for backend, why in self.skipped.items():
            lines.append(f"not compared: {backend} ({why})")
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.describe())


# -- the backends ----------------------------------------------------------------------------------


def reference_linkers(own: str, settings: Settings = FLAGS) -> tuple[str, ...]:
    """The linkers a function compiled on ``own`` is compared with (the mode's, else CompareMode.linkers)."""
    from modecfg._registry.linkers import why_unavailable

    configured = settings.linkers if settings.linkers is not None else str(config.CompareMode.linkers)
    if configured == "auto":
        names = [n for n in AUTO_LINKERS if not why_unavailable(n)]
    else:
        names = [n for n in configured.split(":") if n]
    same = {own, own.replace("_nogc", "")}
    return tuple(dict.fromkeys(n for n in names if n not in same))


def _rewrites_query() -> str | None:
    """PyTensor's rewrites the reference backends get: the ``optimizer`` flag's."""
    name = str(config.optimizer)
    return None if name in ("None", "") else name


class _Analysis(NamedTuple):
    node: DifferingNode | None
    rewrite: Rewrite | None
    repro: str | None
    notes: tuple[str, ...]
    loop: LoopStep | None = None


class _State:
    """Per compiled function: the reference functions (compiled at its first call), the analysis
    of its first mismatch."""

    def __init__(self) -> None:
        self.references: dict[str, Any] = {}  # backend -> Compiled
        self.skipped: dict[str, str] = {}
        self.ready = False
        self.analysis: _Analysis | None = None
        self.as_written: dict[str, Any] = {}  # backend -> the graph as written compiled on it, as it is
        self.reported = False  # its first difference counted (counted.found)
        self.lock = threading.Lock()


class ComparedVM(WrappedVM):
    """The callable PyTensor's Function runs: the function's own VM, then the references."""

    __slots__ = ("_settings", "_state", "turns")
    _plan: Plan

    def __init__(self, vm: Any, ins: list[Any], outs: list[Any], plan: Plan, settings: Settings) -> None:
        super().__init__(vm, ins, outs, plan)
        self._settings = settings
        self._state = _State()
        self.turns = threading.RLock()  # the function's calls, one thread at a time (SerialFunction)

    def __call__(self) -> Any:
        if getattr(_calls, "depth", 0):  # an inner function (scan) of a compared call
            return self._vm()
        from modecfg._pytensor.compare import copy_value

        self._own_error = False
        inputs = [copy_value(cell.storage[0]) for cell in self._ins]
        _calls.depth = 1
        try:
            outputs = self._vm()
            values = outputs if outputs is not None else [cell.storage[0] for cell in self._outs]
            self._compare(inputs, list(values))
            return outputs
        finally:
            _calls.depth = 0

    # -- one call --------------------------------------------------------------------------------
    def _prepare(self) -> None:
        from modecfg._pytensor.compare import compile_on, draws_at_random

        state, plan = self._state, self._plan
        with state.lock:
            if state.ready:
                return
            written = plan.original
            graph = written if written is not None else plan.fgraph
            targets: list[tuple[str, str, str | None]] = (
                [(WRITTEN, "py", None)] if written is not None else []
            )
            targets += [
                (name, name, _rewrites_query()) for name in reference_linkers(plan.linker, self._settings)
            ]
            random = draws_at_random(graph)
            for label, linker, rewrites in targets:
                if random and linker == "jax":
                    state.skipped[label] = "it draws with a generator of its own, not numpy's"
                    continue
                try:
                    state.references[label] = compile_on(
                        graph.inputs, graph.outputs, linker, rewrites=rewrites
                    )
                except Exception as exc:  # a backend without this op, a missing compiler
                    state.skipped[label] = f"it cannot compile this graph: {type(exc).__name__}: {exc}"
                    _log.info("CompareMode: %s skipped: %s", label, state.skipped[label])
            if written is None:
                state.skipped[WRITTEN] = "unknown (the compile hook was off)"
            state.ready = True
        with counted.lock:
            counted.functions += 1
            counted.backends.update([plan.linker, *state.references])

    def _compare(self, inputs: list[Any], values: list[Any]) -> None:
        self._prepare()
        state, plan = self._state, self._plan
        own = plan.linker or "the function's linker"
        results: dict[str, list[Any]] = {own: values}
        for label, compiled in list(state.references.items()):
            try:
                results[label] = compiled(inputs)
            except Exception as exc:  # it cannot run this graph (an op it lacks, a dtype): not compared
                why = f"it cannot run this graph: {type(exc).__name__}: {str(exc).splitlines()[0]}"
                with state.lock:
                    if state.references.pop(label, None) is not None:
                        state.skipped[label] = why
                        _log.info("CompareMode: %s not compared: %s", label, why)
                        with counted.lock:
                            counted.not_compared[label] = counted.not_compared.get(label, 0) + 1
        dtypes = [getattr(out.type, "dtype", None) for out in plan.fgraph.outputs]
        mismatches = [
            m for m in judge(results, own, plan.output_names, dtypes, self._settings)
            if not m.stabilised or not self._stabilised_by_rewrites(m, inputs)
        ]  # fmt: skip
        with counted.lock:
            counted.calls += 1
        if not mismatches:
            return
        with state.lock:
            if state.analysis is None:
                state.analysis = self._analyse(mismatches[0], inputs, results)
        analysis = state.analysis
        comparison = Comparison(
            tuple(mismatches),
            (own, *(k for k in results if k not in (own, WRITTEN))),
            dict(state.skipped),
            analysis.node,
            analysis.rewrite,
            analysis.repro,
            analysis.notes,
            analysis.loop,
        )
        message = comparison.describe()
        with counted.lock:
            counted.differences += 1
            if len(counted.found) < 1000 and not state.reported:
                state.reported = True
                counted.found.append(message.splitlines()[1].strip() if "\n" in message else message)
        action = str(config.CompareMode.action)
        if action != "warn":
            self._own_error = True
        error = CompareError(message, comparison=comparison)
        act(action, message, warning=CompareWarning, error=lambda: error, log=_log)

    def _stabilised_by_rewrites(self, m: Mismatch, inputs: list[Any]) -> bool:
        """Whether backend ``m.backend`` makes NaN or Inf in output ``m.position`` of the graph as
        written, without rewrites (so its finite value is its rewrites' doing)."""
        from modecfg._pytensor.compare import compile_on

        written, state = self._plan.original, self._state
        try:
            compiled = state.as_written.get(m.backend)
            if compiled is None:
                linker = _linker(m.backend, self._plan)
                compiled = state.as_written[m.backend] = compile_on(
                    written.inputs, written.outputs, linker, rewrites=None
                )
            stabilised = not _finite(compiled(inputs)[m.position])
        except Exception:  # it cannot run the graph as written: the rewrites must have been needed
            stabilised = True
        if stabilised:
            _log.info("CompareMode: %s's rewrites stabilise %s, which makes NaN or Inf as written (not "
                      "reported)", m.backend, m.output)  # fmt: skip
        return stabilised

    def _analyse(self, first: Mismatch, inputs: list[Any], results: dict[str, list[Any]]) -> _Analysis:
        try:
            return analyse(self._plan, self._state.references, first, inputs, results, self._settings)
        except Exception as exc:  # looking must never cost the user the comparison's error
            _log.debug("CompareMode: the analysis failed", exc_info=True)
            return _Analysis(None, None, None, (f"the node and rewrite could not be looked for: {exc!r}",))


def judge(results: dict[str, list[Any]], own: str, names: Sequence[str], dtypes: Sequence[Any],
          settings: Settings = FLAGS) -> list[Mismatch]:  # fmt: skip
    """The outputs on which the backends differ (see the module docstring, step 1)."""
    mismatches = []
    backends = [k for k in results if k != WRITTEN]
    written = results.get(WRITTEN)
    for i, name in enumerate(names):
        dtype = dtypes[i] if i < len(dtypes) else None
        if written is not None and _finite(written[i]):
            odd = {
                b: difference(results[b][i], written[i], b, WRITTEN, dtype, settings=settings)
                for b in backends
            }
            odd = {b: d for b, d in odd.items() if d}
            if not odd:
                continue
            agree = [b for b in backends if b not in odd]
            if (
                len(odd) == len(backends)
                and len(backends) > 1
                and not any(
                    difference(results[b][i], results[own][i], b, own, dtype, settings=settings)
                    for b in backends
                )
            ):
                mismatches.append(Mismatch(name, i, REWRITES, WRITTEN, odd[own]))
                continue
            reference = _and([*agree, WRITTEN])
            mismatches += [Mismatch(name, i, b, reference, d) for b, d in odd.items()]
            continue
        # The graph as written makes NaN or Inf here (or is unknown): the backends among themselves.
        groups: list[list[str]] = []
        for b in backends:
            for group in groups:
                if not difference(results[b][i], results[group[0]][i], b, group[0], dtype, settings=settings):
                    group.append(b)
                    break
            else:
                groups.append([b])
        if len(groups) < 2:
            continue
        majority = max(groups, key=lambda g: (len(g), any(b in PER_NODE for b in g), -groups.index(g)))
        for group in groups:
            if group is majority:
                continue
            for b in group:
                detail = difference(
                    results[b][i], results[majority[0]][i], b, majority[0], dtype, settings=settings
                )
                finite = written is not None and _finite(results[b][i])
                if written is not None and not finite:
                    detail += f" ({WRITTEN} makes NaN or Inf too: the others' rewrites stabilise it)"
                # finite where the graph as written is not: its rewrites' doing (not reported), or
                # its own (a max that skips NaN): stabilised=True asks the caller to tell which
                mismatches.append(Mismatch(name, i, b, _and(majority), detail, stabilised=finite))
    return mismatches


# -- the analysis: node, rewrite, reproduction -----------------------------------------------------


def analyse(plan: Plan, references: dict[str, Any], first: Mismatch, inputs: list[Any],
            results: dict[str, list[Any]], settings: Settings = FLAGS) -> _Analysis:  # fmt: skip
    """Steps 2-4 of the module docstring for the first mismatch of a call."""
    from modecfg.modes.repro import smallest_repro, write_repro

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
            rewrites=_rewrites_query(), exclude=rewrite.name if rewrite is not None else None,
        )  # fmt: skip
        return _Analysis(None, rewrite, repro, (*notes, *([note] if note else [])))
    backend = first.backend
    linker = _linker(backend, plan)
    graph = plan.fgraph if backend == own else references[backend].fgraph
    if linker == "jax":  # a GPU's lower matmul precision, chosen by a flag, explains it: said first
        from modecfg._pytensor.jaxlink import precision_note

        notes += [note] if (note := precision_note(graph)) else []
    if written is not None and truth is not None and _finite(truth[first.position]):
        from modecfg._pytensor.compare import compile_on

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
                rewrites=_rewrites_query(), exclude=rewrite.name if rewrite is not None else None,
            )  # fmt: skip
            return _Analysis(None, rewrite, repro, (*notes, *([note] if note else [])))
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
    return _Analysis(node, rewrite, repro, tuple(notes), loop)


def _tolerances(outputs: Sequence[Any], settings: Settings) -> tuple[float, float]:
    """(rtol, atol) for a reproduction of ``outputs`` (by the first's dtype, as the mode compares)."""
    dtype = next((getattr(o.type, "dtype", None) for o in outputs), None)
    return tolerance(dtype if dtype and str(dtype).startswith(("float", "complex")) else None, settings)


def _differs(a: Any, b: Any, *, first: str, second: str, settings: Settings) -> bool:
    return bool(difference(a, b, first, second, settings=settings))


def _linker(backend: str, plan: Plan) -> str:
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
    from modecfg._pytensor.compare import compile_on, frontier, node_outputs

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
    from modecfg._pytensor.compare import compile_on, step_graph

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
    from modecfg._pytensor.compare import compile_on, replaced_by

    query = _rewrites_query()
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


# -- the mode ----------------------------------------------------------------------------------------


class CompareLinker(WrappingLinker):
    """A linker that runs another one and compares every call with the reference backends."""

    def __init__(self, inner: Any, settings: Settings = FLAGS) -> None:
        super().__init__(inner)
        self.settings_ = settings

    def settings(self) -> tuple[Any, ...]:
        return (self.settings_,)

    def wrap(self, thunk: Any, inputs: Any, outputs: Any) -> Any:
        plan = make_plan(self.fgraph, linker_name(self.inner))
        return ComparedVM(thunk, inputs, outputs, plan, self.settings_)


class ComparedMaker(SerialMaker, InPlaceSafeMaker):
    """A compared function: its updated inputs kept intact, its calls one at a time."""


class CompareMode(WrappingMode):
    """The function's own linker and rewrites; every call compared with the other backends.

    ``CompareMode(linkers=None, rtol=None, atol=None, optimizer="default", linker=None)``:
    ``linkers`` (names, or one string of them separated by ``:``) are the reference backends, ``rtol`` and
    ``atol`` the tolerances, for the functions compiled with this mode; each left out (None)
    follows its ``CompareMode.*`` flag, read at each call. The default linker is modecfg's
    choice for the ``linker`` flag.
    """

    def __init__(
        self,
        linkers: str | Sequence[str] | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        optimizer: Any = "default",
        linker: Any = None,
        db: Any = None,
    ) -> None:
        if linker is None:
            from modecfg.modes.device import resolved_linker

            linker = resolved_linker()
        settings = _settings(linkers, rtol, atol)
        super().__init__(linker, optimizer, db, functools.partial(CompareLinker, settings=settings))

    @property
    def function_maker(self) -> type[Any]:
        """Its functions' calls take turns: each compares in Python between the inputs set and the
        outputs read, where another thread's call would overwrite them."""
        return ComparedMaker


def _settings(linkers: str | Sequence[str] | None, rtol: float | None, atol: float | None) -> Settings:
    """The arguments, checked as their flags are (a bad one is a FlagValueError naming the flag)."""
    checked: dict[str, Any] = {}
    for name, value in (("linkers", linkers), ("rtol", rtol), ("atol", atol)):
        if value is None:
            continue
        if name == "linkers" and not isinstance(value, str):
            value = ":".join(value)  # type: ignore[arg-type]
        checked[name] = config.validated(f"CompareMode.{name}", value)
    return Settings(**checked)
