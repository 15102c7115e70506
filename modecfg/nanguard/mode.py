"""NanGuardMode: full speed, nothing lost, the first bad node named, a replayable dump.

The guard lives in the **linker** (:class:`GuardLinker`, around the fast linker), so it
travels with everything PyTensor builds from it: copies of the function, pickles, and a
mode rebuilt from the linker (``Mode(linker=mode.linker, ...)``, as PyMC does).

* **Cheap.** The wrapped linker runs the call at full speed; then the outputs and the
  pending updates are checked for NaN, Inf and values above ``NanGuardMode.big``, two
  reductions per array, compared in Python floats so that no dtype can hide an Inf
  (float16 turns 1e10 into inf).
* **Nothing lost.** The check runs inside the call, before PyTensor writes the updates:
  on a bad call with ``action=raise`` or ``pdb`` no shared variable is written.
  NanGuardMode's own maker keeps updated inputs from being overwritten in place; for a
  function compiled another way (a rebuilt mode), inputs the graph overwrites in place
  are copied before the call and put back on a bad one.
* **The user's function only.** Inner functions (scan, OpFromGraph) called inside a
  guarded call are checked as part of it, not on their own.
* **Pinpointed.** The failing call is re-run on the graph as the user wrote it, before
  rewrites, node by node with the Python implementations, from the same inputs and
  shared values, to find the first input or node with a bad value: the error names it,
  its operation, input shapes and dtypes, and the user's line that made it.
* **Captured.** Inputs and shared values (as arrays, no pickle), the finding, the flags
  and the graph go to one dump file (:mod:`modecfg.nanguard.dump`): anyone can read its data
  (``modecfg.load_dump``), and ``modecfg replay`` re-runs the ones this user wrote.

``action=warn`` lets the call finish (the updates are written) and warns with the same findings.
"""

from __future__ import annotations

import copy
import functools
import logging
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from modecfg._pytensor.gradients import GradOrigin, grad_origin
from modecfg._pytensor.graphs import inner_graph
from modecfg._pytensor.kinds import linker_name
from modecfg._pytensor.locate import untouched
from modecfg._pytensor.subclasses import WrappedVM, WrappingLinker, WrappingMode
from modecfg._record import Record
from modecfg._source import SourceLine, source_line
from modecfg._warn import act
from modecfg.configuration import config
from modecfg.errors import NanGuardError, NanGuardWarning

__all__ = ["BadValue", "GuardLinker", "NanGuardMode", "NanGuardWarning", "bad_kind", "first_bad_value"]

_log = logging.getLogger("modecfg.nanguard")


class _Limits(Record):
    nan: bool
    inf: bool
    big: bool
    threshold: float
    clean_sum: float  # a sum of squares at most this has every |value| <= threshold (0: never used)


def _limits(checks: tuple[bool | None, bool | None, bool | None] = (None, None, None)) -> _Limits:
    """The NanGuardMode flags as this call sees them (kept while they stay the same); a mode
    made with Theano's ``NanGuardMode(nan_is_error=..., ...)`` fixes the checks it names."""
    global _last
    ng = config.NanGuardMode
    nan, inf, big = checks
    key = (
        ng.nan_is_error if nan is None else nan,
        ng.inf_is_error if inf is None else inf,
        ng.big_is_error if big is None else big,
        ng.big,
    )
    last = _last
    if last[0] == key:
        return last[1]
    threshold = float(key[3])
    limits = _Limits(bool(key[0]), bool(key[1]), bool(key[2]), threshold, _clean_sum(threshold))
    _last = (key, limits)
    return limits


_last: tuple[tuple[Any, ...], _Limits] = ((), _Limits(True, True, True, 0.0, 0.0))  # (flags, limits)

# The sum of squares below is a bound, not an exact value: n additions of float32 may lose up to
# about n * 6e-8 of it. Halving the limit keeps the bound safe up to 2**22 values; larger arrays,
# and thresholds below 1 (whose squares could underflow), take the exact route.
_DOT_MAX_SIZE = 1 << 22


def _clean_sum(threshold: float) -> float:
    if not threshold >= 1.0:
        return 0.0
    return min(threshold * threshold * 0.5, sys.float_info.max)


def bad_kind(value: Any, limits: _Limits) -> str:
    """'NaN', 'Inf', 'big' or '' for one value (floats only; one pass when clean).

    A clean float32 or float64 array costs one BLAS dot product: the sum of its squares is
    finite and at most half the threshold squared only if there is no NaN, no Inf and no value
    beyond the threshold. Anything else (and float16, complex, huge arrays) is judged exactly,
    by the extremes compared as Python floats: an Inf stays an Inf, and the threshold is never
    rounded into the array's dtype (in float16, 1e10 would be inf).
    """
    if type(value) is not np.ndarray:
        if isinstance(value, np.ndarray | float | np.floating | complex | np.complexfloating):
            value = np.asarray(value)
        elif hasattr(value, "__array__") and hasattr(value, "dtype") and hasattr(value, "shape"):
            value = np.asarray(value)  # a JAX (or torch) array: the JAX linker's outputs are these
        else:
            return ""
    dtype = value.dtype
    kind = dtype.kind
    if kind != "f":
        if kind == "c" and value.size:
            return bad_kind(np.concatenate([value.real.ravel(), value.imag.ravel()]), limits)
        return ""
    if not value.ndim:
        x = float(value)
        if -limits.threshold <= x <= limits.threshold:
            return ""
        hi = lo = x
    else:
        if dtype.itemsize >= 4 and limits.clean_sum and value.size <= _DOT_MAX_SIZE:
            if float(np.vdot(value, value)) <= limits.clean_sum:
                return ""  # the common case
        if not value.size:
            return ""
        hi, lo = float(np.maximum.reduce(value, axis=None)), float(np.minimum.reduce(value, axis=None))
        if hi <= limits.threshold and lo >= -limits.threshold:
            return ""
    if hi != hi or lo != lo:  # NaN somewhere
        if limits.nan:
            return "NaN"
        finite = value[~np.isnan(value)]
        hi, lo = (float(finite.max()), float(finite.min())) if finite.size else (0.0, 0.0)
    if np.isinf(hi) or np.isinf(lo):
        if limits.inf:
            return "Inf"
        finite = value[np.isfinite(value)]
        hi, lo = (float(finite.max()), float(finite.min())) if finite.size else (0.0, 0.0)
    if limits.big and (hi > limits.threshold or lo < -limits.threshold):
        return "big"
    return ""


def _host(value: Any) -> Any:
    """A JAX (or torch) array as a numpy array, for the Python re-run; anything else as it is."""
    if isinstance(value, np.ndarray | np.generic) or not (
        hasattr(value, "__array__") and hasattr(value, "dtype")
    ):
        return value
    return np.asarray(value)


def _count(value: np.ndarray, kind: str, threshold: float) -> int:
    if kind == "NaN":
        return int(np.isnan(value).sum())
    if kind == "Inf":
        return int(np.isinf(value).sum())
    return int((np.abs(np.nan_to_num(value.astype(np.float64))) > threshold).sum())


class BadValue(Record):
    """The first input or node of the user's graph with a bad value."""

    kind: str  # "NaN", "Inf" or "big"
    where: str  # "input x", "shared variable w" or "Log"
    node: Any  # the Apply node, or None for an input
    input_shapes: tuple[Any, ...]
    input_dtypes: tuple[str, ...]
    source: SourceLine | None
    n_bad: int  # how many bad entries
    size: int
    grad: GradOrigin | None = None  # for a node of a gradient: its grad call and forward expression

    def _repr_html_(self) -> str:
        from modecfg._html import pre

        return pre(self.describe(), title=f"first bad value: {self.kind}", color="#a00")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.describe())

    def describe(self) -> str:
        lines = [f"{self.kind} in {self.where} ({self.n_bad} of {self.size} values)"]
        if self.grad is not None:  # a node pt.grad made: the expression it differentiates, and where
            lines.append(f"  part of {self.grad.describe()}")
        elif self.source is not None:
            lines.append(f"  created at {self.source}: {self.source.code}")
        if self.node is not None:
            inputs = ", ".join(
                f"{d}{tuple(s)}" for s, d in zip(self.input_shapes, self.input_dtypes, strict=True)
            )
            lines.append(f"  operation: {self.node.op} on inputs {inputs}")
        return "\n".join(lines)


def first_bad_value(graph: Any, values: list[Any], limits: _Limits) -> BadValue | None:
    """Run ``graph`` (untouched, with Python thunks) on ``values``; the first bad input or node."""
    from modecfg._pytensor.rerun import NodeFailed, run_untouched

    values = [_host(v) for v in values]
    for var, value in zip(graph.inputs, values, strict=True):
        kind = bad_kind(value, limits)
        if kind:
            what = "shared variable" if hasattr(var, "get_value") else "input"
            arr = np.asarray(value)
            return BadValue(kind, f"{what} {var.name or var}", None, (), (), source_line(var),
                            _count(arr, kind, limits.threshold), arr.size)  # fmt: skip
    try:
        for node, ins, outs in run_untouched(graph, values):
            for out in outs:
                kind = bad_kind(out, limits)
                if kind:
                    inner = _inside(node, ins, limits)
                    if inner is not None:
                        return inner
                    arr = np.asarray(out)
                    return BadValue(
                        kind,
                        str(node.op),
                        node,
                        tuple(np.shape(v) for v in ins),
                        tuple(str(getattr(v, "dtype", type(v).__name__)) for v in ins),
                        source_line(node),
                        _count(arr, kind, limits.threshold),
                        arr.size,
                        grad_origin(node),
                    )
            ins = outs = out = None  # type: ignore[assignment]  # let the run free them before its next node (a large model's arrays)
    except NodeFailed as failed:  # the unoptimized graph fails where the fast one did not
        _log.debug("re-run stopped: %s", failed)
    return None


def _inside(node: Any, values: list[Any], limits: _Limits) -> BadValue | None:
    """For an OpFromGraph that made a bad value: the first node of its inner graph that
    makes one on the same inputs, named as inside it; None for other ops."""
    inner = inner_graph(node.op)
    if inner is None:
        return None  # a scan's inner function runs many times: its outer node is the answer
    try:
        # PyTensor 3.3 keeps inner graphs frozen, without creation traces: its nodes cannot be
        # cloned, and those of the unfrozen copy are traced to this very call. Then the line
        # is the one that applied the OpFromGraph.
        frozen = hasattr(inner, "unfreeze")
        if frozen:
            inner = inner.unfreeze()
        found = first_bad_value(inner, values, limits)  # its inputs are clean: they were checked
    except Exception as exc:  # looking inside must never cost the user the guard's error
        _log.debug("could not look inside %s: %r", node.op, exc)
        return None
    if found is None:
        return None
    source = source_line(node) if frozen else found.source
    return found._replace(where=f"{found.where} inside {node.op}", source=source)


# -- the guarded call ----------------------------------------------------------------------

_calls = threading.local()  # .depth: guarded calls running in this thread


class Plan(Record):
    """What a guarded call needs to know about its graph, worked out once per function."""

    fgraph: Any  # the rewritten graph the linker runs
    n_outputs: int  # outputs proper; the rest of the outputs are updates
    target_indices: tuple[int, ...]  # inputs updated, in the order of the update outputs
    destroyed: tuple[int, ...]  # updated inputs the graph overwrites in place: copied before a call
    output_names: tuple[str, ...]
    linker: str = ""  # the linker the guard wraps, by its table name

    @property
    def original(self) -> Any:
        """The graph as written (None if the compile hook was off): built when a call first
        meets a bad value, not at the compile."""
        return untouched(self.fgraph)


def make_plan(fgraph: Any, linker: str = "") -> Plan:
    mapping = dict(getattr(fgraph, "update_mapping", None) or {})  # output index -> input index
    n_outputs = len(fgraph.outputs) - len(mapping)
    targets = tuple(mapping[i] for i in sorted(mapping))
    destroyed = ()
    if hasattr(fgraph, "destroyers"):
        destroyed = tuple(i for i in sorted(set(targets)) if fgraph.destroyers(fgraph.inputs[i]))
    names = [f"output {i}" for i in range(n_outputs)]
    names += [f"update of {fgraph.inputs[i].name or fgraph.inputs[i]}" for i in targets]
    return Plan(fgraph, n_outputs, targets, destroyed, tuple(names), linker)


def _backup(value: Any) -> Any:
    """A copy of an input the call will overwrite in place (an array, a random generator, ...)."""
    return value.copy() if isinstance(value, np.ndarray) else copy.deepcopy(value)


def _restore(cell: list[Any], saved: Any) -> None:
    """Put ``saved`` back: into the same array (whoever holds it sees the old values), or in its place."""
    if isinstance(saved, np.ndarray) and isinstance(cell[0], np.ndarray) and cell[0].shape == saved.shape:
        np.copyto(cell[0], saved)
    else:
        cell[0] = saved


class GuardedVM(WrappedVM):
    """The callable PyTensor's Function runs: the wrapped linker's, checked before it returns."""

    __slots__ = ("_checks", "_dumped")
    _plan: Plan

    def __init__(
        self, vm: Any, ins: list[Any], outs: list[Any], plan: Plan, checks: Any = (None,) * 3
    ) -> None:
        super().__init__(vm, ins, outs, plan)
        self._checks = checks
        self._dumped = False

    def __call__(self) -> Any:
        depth = getattr(_calls, "depth", 0)
        if depth:  # an inner function of a guarded call: checked with the call's outputs
            return self._vm()
        self._own_error = False
        plan = self._plan
        backups = [(i, _backup(self._ins[i].storage[0])) for i in plan.destroyed] if plan.destroyed else ()
        _calls.depth = 1
        try:
            outputs = self._vm()
            values = outputs if outputs is not None else [cell.storage[0] for cell in self._outs]
            limits = _limits(self._checks)
            for value in values:
                if bad_kind(value, limits):
                    self._bad(values, limits, backups)
                    break
            return outputs
        finally:
            _calls.depth = 0

    def _bad(self, values: list[Any], limits: _Limits, backups: Sequence[tuple[int, Any]]) -> None:
        from modecfg.nanguard.dump import write_dump

        plan = self._plan
        action = config.NanGuardMode.action
        if action != "warn":  # nothing written: inputs the call overwrote in place are put back
            for i, saved in backups:
                _restore(self._ins[i].storage, saved)
        call_inputs = [cell.storage[0] for cell in self._ins]
        if action == "warn":
            for i, saved in backups:
                call_inputs[i] = saved
        original = plan.original
        found = first_bad_value(original, call_inputs, limits) if original is not None else None
        bad_outputs = [name for name, v in zip(plan.output_names, values, strict=True) if bad_kind(v, limits)]
        dump: str | None = None
        why_no_dump = "the graph as written is unknown (the compile hook was off)"
        if original is not None and (action != "warn" or not self._dumped):
            checks = {
                "NanGuardMode.nan_is_error": limits.nan,
                "NanGuardMode.inf_is_error": limits.inf,
                "NanGuardMode.big_is_error": limits.big,
                "NanGuardMode.big": limits.threshold,
            }
            dump, why_no_dump = write_dump(plan, call_inputs, found, bad_outputs, checks)
            self._dumped = True
        elif original is not None:
            why_no_dump = "written at the first bad call of this function (action=warn)"
        message = _message(found, bad_outputs, dump, why_no_dump, kept=action != "warn", plan=plan)
        # what act raises (a warning too, where a filter makes it an error) is the guard's own
        self._own_error = True
        error = NanGuardError(message, bad=found, dump_path=dump, bad_outputs=bad_outputs)
        act(action, message, warning=NanGuardWarning, error=lambda: error, log=_log, raise_after_pdb=True)


def _message(found: BadValue | None, bad_outputs: list[str], dump: str | None, why_no_dump: str,
             kept: bool, plan: Plan) -> str:  # fmt: skip
    lines = [f"NanGuardMode: bad values in {', '.join(bad_outputs)}"]
    if found is not None:
        lines.append("the first input or operation with one, re-running the call without rewrites:")
        lines.append("  " + found.describe().replace("\n", "\n  "))
    elif plan.original is not None:
        on = f"the {plan.linker} backend" if plan.linker else "the function's backend"
        lines.append(
            "not reproduced: the call re-run on the graph as written, node by node in Python, makes no "
            f"bad value; it is {on}'s, or a rewrite's (backend-only). To find the node, the backend and "
            "the rewrite: compile with mode='CompareMode' (or run `modecfg compare SCRIPT`)"
        )
    if plan.target_indices:
        names = ", ".join(
            str(plan.fgraph.inputs[i].name or plan.fgraph.inputs[i]) for i in plan.target_indices
        )
        lines.append(
            f"nothing was updated: {names} keep their values from before the call"
            if kept
            else f"the updates of {names} were written (action=warn)"
        )
    if dump is not None:
        lines.append(f"dump: {dump} (modecfg replay {dump})")
    else:
        lines.append(f"no dump: {why_no_dump}")
    return "\n".join(lines)


class GuardLinker(WrappingLinker):
    """A linker that runs another one and checks every call before its updates are written."""

    def __init__(
        self, inner: Any, checks: tuple[bool | None, bool | None, bool | None] = (None, None, None)
    ) -> None:
        super().__init__(inner)
        self.checks = checks  # (nan_is_error, inf_is_error, big_is_error): None follows the flag

    def settings(self) -> tuple[Any, ...]:
        return (getattr(self, "checks", (None,) * 3),)  # a guard pickled before there were checks

    def wrap(self, thunk: Any, inputs: Any, outputs: Any) -> Any:
        return GuardedVM(
            thunk, inputs, outputs, make_plan(self.fgraph, linker_name(self.inner)), self.settings()[0]
        )


class NanGuardMode(WrappingMode):
    """The fast linker and rewrites, with NaN / Inf / big checks at the end of each call.

    Theano's and PyTensor's spelling: ``NanGuardMode(nan_is_error=True, inf_is_error=True,
    big_is_error=True, optimizer=..., linker=...)``. A check given here holds for this mode
    whatever the flags say; one left out (None) follows its ``NanGuardMode.*`` flag. The
    default linker is modecfg's choice for the ``linker`` flag.
    """

    def __init__(
        self,
        nan_is_error: bool | None = None,
        inf_is_error: bool | None = None,
        big_is_error: bool | None = None,
        optimizer: Any = "default",
        linker: Any = None,
        db: Any = None,
    ) -> None:
        if linker is None:
            from modecfg.device.where import resolved_linker

            linker = resolved_linker()
        nan, inf, big = (None if c is None else bool(c) for c in (nan_is_error, inf_is_error, big_is_error))
        super().__init__(linker, optimizer, db, functools.partial(GuardLinker, checks=(nan, inf, big)))
