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
   (:mod:`modecfg.compare.graphsource`) and its inputs as an ``.npz`` (no pickle), which
   compiles the sub-graph on both backends with plain PyTensor, prints both values and exits 1
   when they differ: what a PyTensor or numba issue needs.

A mismatch is a :class:`~modecfg.errors.CompareError` (``CompareMode.action=raise``, nothing
updated) or a :class:`~modecfg.errors.CompareWarning` (``warn``, the function's own values are
returned and its updates written). Steps 2-4 run at the first mismatch of a function and are
reused for its later ones.

Step 1 is :mod:`modecfg.compare.judging`, steps 2-4 :mod:`modecfg.compare.search` (its reproductions
:mod:`modecfg.compare.repro`); this module is the mode that runs them at each call.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from typing import Any

from modecfg._pytensor.kinds import linker_name
from modecfg._pytensor.subclasses import (
    InPlaceSafeMaker,
    SerialMaker,
    WrappedVM,
    WrappingLinker,
    WrappingMode,
)
from modecfg._record import Record
from modecfg._warn import act, folded, warn
from modecfg.compare.judging import (
    FLAGS,
    WRITTEN,
    Mismatch,
    Settings,
    all_finite,
    difference,
    joined,
    judge,
    tolerance,
)
from modecfg.compare.search import (
    Analysis,
    DifferingNode,
    LoopStep,
    Rewrite,
    analyse,
    backend_linker,
    rewrites_query,
)
from modecfg.configuration import config
from modecfg.errors import CompareError, CompareWarning, ModecfgWarning
from modecfg.nanguard.mode import Plan, make_plan

__all__ = [
    "AUTO_LINKERS",
    "CompareLinker",
    "CompareMode",
    "Comparison",
    "DifferingNode",
    "LoopStep",
    "Mismatch",
    "Rewrite",
    "Settings",
    "difference",
    "judge",
    "reference_linkers",
    "tolerance",
]

_log = logging.getLogger("modecfg.compare")
NOTED = 5  # the references' warnings said in full in one note; the rest counted

AUTO_LINKERS = ("numba", "cvm", "py", "jax")  # CompareMode.linkers=auto: those of these that run here
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


# -- what a call found -------------------------------------------------------------------------------


class Comparison(Record):
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
        lines = [f"CompareMode: the backends differ ({joined([*self.backends, WRITTEN])} compared)"]
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


# -- the backends ------------------------------------------------------------------------------------


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


class _State:
    """Per compiled function: the reference functions (compiled at its first call), the analysis
    of its first mismatch."""

    def __init__(self) -> None:
        self.references: dict[str, Any] = {}  # backend -> Compiled
        self.skipped: dict[str, str] = {}
        self.ready = False
        self.analysis: Analysis | None = None
        self.as_written: dict[str, Any] = {}  # backend -> the graph as written compiled on it, as it is
        self.reported = False  # its first difference counted (counted.found)
        self.noted: set[str] = set()  # what the references warned, said once (ComparedVM._note)
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
        from modecfg.compare.graphs import copy_value

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
        from modecfg.compare.graphs import compile_on, draws_at_random

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
                (name, name, rewrites_query()) for name in reference_linkers(plan.linker, self._settings)
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
        # what the references warn (JAX's tracing: "Skipping Assert ...", "Explicitly requested
        # dtype float64 ...") concerns them, not the function: kept, and said once, folded
        with folded() as caught:
            comparison = self._compared(inputs, values)
        self._note(caught)
        if comparison is None:
            return
        message = comparison.describe()
        state = self._state
        with counted.lock:
            counted.differences += 1
            if len(counted.found) < 1000 and not state.reported:
                state.reported = True
                counted.found.append(message.splitlines()[1].strip() if "\n" in message else message)
        action = str(config.CompareMode.action)
        # whatever act raises (the error; the warning, where a filter makes it one) is CompareMode's
        # own, not a failing node's: PyTensor must not add "the operation that failed" to it
        self._own_error = True
        error = CompareError(message, comparison=comparison)
        act(action, message, warning=CompareWarning, error=lambda: error, log=_log)

    def _note(self, caught: Sequence[Any]) -> None:
        """One warning, at the user's line, for what the references warned that this function
        has not said yet (each line once)."""
        state = self._state
        with state.lock:
            lines = (str(w.message).partition("\n")[0] or type(w.message).__name__ for w in caught)
            new = [text for text in dict.fromkeys(lines) if text not in state.noted]
            state.noted.update(new)
        if new:
            more = f"; and {len(new) - NOTED} more" if len(new) > NOTED else ""
            warn(
                "CompareMode: a backend this function is compared with warned while it ran the graph "
                f"(about that backend, not this function's values): {'; '.join(new[:NOTED])}{more}",
                ModecfgWarning,
            )

    def _compared(self, inputs: list[Any], values: list[Any]) -> Comparison | None:
        """The references' values beside the function's: where they differ, what was found."""
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
            return None
        with state.lock:
            if state.analysis is None:
                state.analysis = self._analyse(mismatches[0], inputs, results)
        analysis = state.analysis
        return Comparison(
            tuple(mismatches),
            (own, *(k for k in results if k not in (own, WRITTEN))),
            dict(state.skipped),
            analysis.node,
            analysis.rewrite,
            analysis.repro,
            analysis.notes,
            analysis.loop,
        )

    def _stabilised_by_rewrites(self, m: Mismatch, inputs: list[Any]) -> bool:
        """Whether backend ``m.backend`` makes NaN or Inf in output ``m.position`` of the graph as
        written, without rewrites (so its finite value is its rewrites' doing)."""
        from modecfg.compare.graphs import compile_on

        written, state = self._plan.original, self._state
        try:
            compiled = state.as_written.get(m.backend)
            if compiled is None:
                linker = backend_linker(m.backend, self._plan)
                compiled = state.as_written[m.backend] = compile_on(
                    written.inputs, written.outputs, linker, rewrites=None
                )
            stabilised = not all_finite(compiled(inputs)[m.position])
        except Exception:  # it cannot run the graph as written: the rewrites must have been needed
            stabilised = True
        if stabilised:
            _log.info("CompareMode: %s's rewrites stabilise %s, which makes NaN or Inf as written (not "
                      "reported)", m.backend, m.output)  # fmt: skip
        return stabilised

    def _analyse(self, first: Mismatch, inputs: list[Any], results: dict[str, list[Any]]) -> Analysis:
        try:
            return analyse(self._plan, self._state.references, first, inputs, results, self._settings)
        except Exception as exc:  # looking must never cost the user the comparison's error
            _log.debug("CompareMode: the analysis failed", exc_info=True)
            return Analysis(None, None, None, (f"the node and rewrite could not be looked for: {exc!r}",))


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
            from modecfg.device.where import resolved_linker

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
