"""NanGuardMode: full speed, nothing lost, the first bad node named, a replayable dump.

* **Cheap.** The function is compiled with the fast linker and the usual rewrites. Its
  updates become extra outputs, so no shared variable is written (or destroyed in
  place) during the call; the outputs and pending updates are checked for NaN, Inf and
  values above ``NanGuardMode.big`` at the end of the call, two reductions per array.
* **Nothing lost.** Only when they are clean are the updates written. With
  ``action=raise`` or ``pdb`` a bad call leaves every shared variable as it was.
* **Pinpointed.** The failing call is then re-run on the graph as the user wrote it,
  before rewrites, node by node with the Python implementations, from the same inputs
  and shared values, to find the first input or node with a bad value: the error names
  it, its operation, input shapes and dtypes, and the user's line that made it.
* **Captured.** Inputs, shared values, flags and the graph go to one dump file
  (:mod:`modecfg.modes.dump`) that ``modecfg replay`` re-runs.

``action=warn`` writes the updates as PyTensor would and warns with the same findings.
"""

from __future__ import annotations

import copy
import logging
from typing import Any, NamedTuple

import numpy as np
from pytensor.compile.io import SymbolicOutput
from pytensor.compile.maker import FunctionMaker
from pytensor.compile.mode import Mode

from modecfg._source import SourceLine, source_line
from modecfg._warn import warn
from modecfg.config import config
from modecfg.errors import ModecfgWarning, NanGuardError

__all__ = ["BadValue", "GuardedFunction", "NanGuardMode", "NanGuardWarning", "first_bad_value"]

_log = logging.getLogger("modecfg.nanguard")


class NanGuardWarning(ModecfgWarning):
    """A guarded function produced NaN, Inf or a big value (action=warn)."""


class _Limits(NamedTuple):
    nan: bool
    inf: bool
    big: bool
    threshold: float


def _limits() -> _Limits:
    ng = config.NanGuardMode
    return _Limits(bool(ng.nan_is_error), bool(ng.inf_is_error), bool(ng.big_is_error), float(ng.big))


def bad_kind(value: Any, limits: _Limits) -> str:
    """'NaN', 'Inf', 'big' or '' for one value (floats only; two reductions when clean)."""
    if not isinstance(value, np.ndarray):
        if isinstance(value, float | np.floating):
            value = np.asarray(value)
        else:
            return ""
    if value.dtype.kind not in "fc" or value.size == 0:
        return ""
    hi, lo = value.max(), value.min()
    if hi <= limits.threshold and lo >= -limits.threshold:
        return ""  # the common case: finite and not big
    if hi != hi or lo != lo:  # NaN somewhere
        if limits.nan:
            return "NaN"
        finite = value[~np.isnan(value)]
        hi, lo = (finite.max(), finite.min()) if finite.size else (0.0, 0.0)
    if np.isinf(hi) or np.isinf(lo):
        if limits.inf:
            return "Inf"
        finite = value[np.isfinite(value)]
        hi, lo = (finite.max(), finite.min()) if finite.size else (0.0, 0.0)
    if limits.big and (hi > limits.threshold or lo < -limits.threshold):
        return "big"
    return ""


def _count(value: np.ndarray, kind: str, threshold: float) -> int:
    if kind == "NaN":
        return int(np.isnan(value).sum())
    if kind == "Inf":
        return int(np.isinf(value).sum())
    return int((np.abs(np.nan_to_num(value)) > threshold).sum())


class BadValue(NamedTuple):
    """The first input or node of the user's graph with a bad value."""

    kind: str  # "NaN", "Inf" or "big"
    where: str  # "input x", "shared variable w" or "Log"
    node: Any  # the Apply node, or None for an input
    input_shapes: tuple[Any, ...]
    input_dtypes: tuple[str, ...]
    source: SourceLine | None
    n_bad: int  # how many bad entries
    size: int

    def describe(self) -> str:
        lines = [f"{self.kind} in {self.where} ({self.n_bad} of {self.size} values)"]
        if self.source is not None:
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
                    )
    except NodeFailed as failed:  # the unoptimized graph fails where the fast one did not
        _log.debug("re-run stopped: %s", failed)
    return None


class GuardedFunction:
    """A compiled function whose outputs and updates are checked before updates are written."""

    def __init__(self, inner: Any, n_outputs: int, targets: list[Any], unpack_single: bool,
                 return_none: bool) -> None:  # fmt: skip
        self._inner = inner
        self._n = n_outputs
        self._targets = targets  # the shared variables updated, in output order
        self._unpack_single = unpack_single
        self._return_none = return_none
        self._dumped = False
        self.target_indices: list[int] = []  # where the updated shared variables are among the inputs

    def __getattr__(self, name: str) -> Any:
        # Only for names the instance lacks; never while it is being built (unpickling,
        # copying), when ``_inner`` is not there yet.
        if name == "_inner" or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __reduce__(self) -> tuple[Any, ...]:
        # The inner Function pickles as PyTensor pickles it; unpickled, its maker (a
        # _GuardMaker) builds the guarded function again, so the guard survives.
        return (_guarded, (self._inner,))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values = self._inner(*args, **kwargs)
        limits = _limits()
        for value in values:
            if bad_kind(value, limits):
                return self._bad(values, limits, args, kwargs)
        return self._finish(values)

    def _call_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The values of every graph input in this call (PyTensor clears its input storage)."""
        values = []
        positional = iter(args)
        for spec, container in zip(self._inner.maker.inputs, self._inner.input_storage, strict=True):
            if spec.implicit:  # a shared variable: not written, so as before the call
                values.append(container.storage[0])
                continue
            value = kwargs[spec.name] if spec.name in kwargs else next(positional, container.storage[0])
            values.append(spec.variable.type.filter(value, strict=False, allow_downcast=True))
        return values

    def _finish(self, values: list[Any]) -> Any:
        n = self._n
        for shared, value in zip(self._targets, values[n:], strict=True):
            shared.container.storage[0] = value
        if self._return_none:
            return None
        outputs = values[:n]
        return outputs[0] if self._unpack_single else outputs

    def _bad(self, values: list[Any], limits: _Limits, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        from modecfg.modes.dump import write_dump

        inner = self._inner
        graph = getattr(inner.maker.fgraph, "_modecfg_original", None)
        call_inputs = self._call_inputs(args, kwargs)
        found = first_bad_value(graph, call_inputs, limits) if graph is not None else None
        outputs = [
            *(f"output {i}" for i in range(self._n)),
            *(f"update of {t.name or t}" for t in self._targets),
        ]
        bad_outputs = [name for name, v in zip(outputs, values, strict=True) if bad_kind(v, limits)]
        action = config.NanGuardMode.action
        dump = None
        if action != "warn" or not self._dumped:
            try:
                dump = write_dump(self, graph, call_inputs, found, bad_outputs)
            except Exception as exc:  # the dump must never hide the guard's own error
                _log.warning("the NaN-guard dump could not be written: %r", exc)
                dump = f"not written ({type(exc).__name__}: {exc})"
            self._dumped = True
        message = _message(found, bad_outputs, dump, kept=action != "warn", targets=self._targets)
        if action == "warn":
            warn(message, NanGuardWarning)
            return self._finish(values)
        error = NanGuardError(message)
        error.bad = found  # type: ignore[attr-defined]
        error.dump_path = None if dump is None or dump.startswith("not written") else dump  # type: ignore[attr-defined]
        error.bad_outputs = bad_outputs  # type: ignore[attr-defined]
        if action == "pdb":
            _log.error("%s", message)
            import pdb

            pdb.set_trace()  # `found`: the first bad value; `values`: this call's results
        raise error


def _message(found: BadValue | None, bad_outputs: list[str], dump: str | None, kept: bool,
             targets: list[Any]) -> str:  # fmt: skip
    head = f"NanGuardMode: bad values in {', '.join(bad_outputs)}"
    lines = [head]
    if found is not None:
        lines.append("the first input or operation with one, re-running the call without rewrites:")
        lines.append("  " + found.describe().replace("\n", "\n  "))
    else:
        lines.append("the call re-run without rewrites has no bad value: the rewritten graph differs")
    if targets:
        names = ", ".join(str(t.name or t) for t in targets)
        lines.append(
            f"nothing was updated: {names} keep their values from before the call"
            if kept
            else f"the updates of {names} were written (action=warn)"
        )
    if dump is not None and dump.startswith("not written"):
        lines.append(f"dump: {dump}")
    elif dump is not None:
        lines.append(f"dump: {dump} (modecfg replay {dump}; a dump is a pickle: replay only dumps you trust)")
    return "\n".join(lines)


class _GuardMaker(FunctionMaker):  # type: ignore[misc]
    """Compiles updates as extra outputs, so the guard decides whether they are written."""

    def __init__(self, inputs: Any, outputs: Any, mode: Any, *args: Any, **kwargs: Any) -> None:
        unpack_single = outputs is not None and not isinstance(outputs, list | tuple)
        return_none = outputs is None
        outs = [] if outputs is None else list(outputs) if not unpack_single else [outputs]
        outs = [o if isinstance(o, SymbolicOutput) else SymbolicOutput(o) for o in outs]
        self._guard_n = len(outs)
        inputs = list(inputs)
        self._guard_targets: list[Any] = []
        self._guard_target_indices: list[int] = []
        for index, spec in enumerate(inputs):
            if getattr(spec, "update", None) is not None:
                outs.append(SymbolicOutput(spec.update))
                self._guard_targets.append(spec.variable)
                self._guard_target_indices.append(index)
                spec = inputs[index] = copy.copy(spec)
                spec.update = None
                spec.mutable = False  # not destroyed in place: the guard may keep it
        self._guard_unpack_single = unpack_single
        self._guard_return_none = return_none
        super().__init__(inputs, outs, mode, *args, **kwargs)

    def create(self, *args: Any, **kwargs: Any) -> GuardedFunction:
        return self.guard(super().create(*args, **kwargs))

    def guard(self, inner: Any) -> GuardedFunction:
        """The guarded function around ``inner``, a Function this maker created."""
        guarded = GuardedFunction(
            inner, self._guard_n, self._guard_targets, self._guard_unpack_single, self._guard_return_none
        )
        guarded.target_indices = list(self._guard_target_indices)
        return guarded


def _guarded(fn: Any) -> Any:
    """Unpickling: the function rebuilt by PyTensor, guarded (None if unpickle_function is off)."""
    if fn is None or isinstance(fn, GuardedFunction):
        return fn
    return fn.maker.guard(fn)


class NanGuardMode(Mode):  # type: ignore[misc]
    """The fast linker and rewrites, with NaN / Inf / big checks at the end of each call."""

    @property
    def function_maker(self) -> type[FunctionMaker]:
        return _GuardMaker
