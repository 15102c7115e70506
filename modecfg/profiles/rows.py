"""ProfileReport: where a compiled function spends its time, read from PyTensor's timings.

PyTensor's VM linkers time every node when a function is profiled; a report turns
those timings into rows: apply-wise (one per node, with its share, cumulative share,
calls, time per call, operation, input and output shapes and dtypes, and the user's
line), op-wise and op-class-wise, plus the compile, rewrite and link times and, with
``profile_memory``, the peak memory and the largest intermediate variables.

Shapes are those PyTensor recorded during calls; it records them when the ``profile``
and ``profile_memory`` flags are both on (the flags, not only ``profile=True`` passed to
one compile). Otherwise the static shapes of the types are shown, ``?`` for unknown.
"""

from __future__ import annotations

import math
import numbers
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from modecfg._pytensor import marks
from modecfg._record import Record
from modecfg._source import source_line, statement

__all__ = ["ApplyRow", "ClassRow", "MemoryRow", "OpRow", "ProfileReport"]

SCHEMA_VERSION = 1


class ApplyRow(Record):
    rank: int
    function: str
    op: str
    time: float  # seconds, all calls
    share: float  # of the profiled time
    cumulative: float
    calls: int
    per_call: float
    inputs: tuple[tuple[str, str], ...]  # (shape, dtype)
    outputs: tuple[tuple[str, str], ...]
    source: str | None  # file:line: code

    def to_dict(self) -> dict[str, Any]:
        row = self._asdict()
        row["inputs"] = [{"shape": s, "dtype": d} for s, d in self.inputs]
        row["outputs"] = [{"shape": s, "dtype": d} for s, d in self.outputs]
        return row


class OpRow(Record):
    op: str
    time: float
    share: float
    calls: int
    nodes: int
    per_call: float


class ClassRow(Record):
    op_class: str
    time: float
    share: float
    calls: int
    nodes: int


class MemoryRow(Record):
    variable: str
    op: str
    bytes: int
    shape: str
    dtype: str


def _shape_text(var: Any, recorded: dict[Any, Any]) -> str:
    shape = recorded.get(var)
    if isinstance(shape, tuple | list):
        return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    static = getattr(var.type, "shape", None)
    if static is None:
        return "()"
    return (
        "("
        + ", ".join("?" if s is None else str(s) for s in static)
        + ("," if len(static) == 1 else "")
        + ")"
    )


def _dtype(var: Any) -> str:
    return str(getattr(var.type, "dtype", type(var.type).__name__))


def _source(node: Any) -> str | None:
    line = source_line(node)
    if line is None:
        for out in node.outputs:  # a trace modecfg carried over a rewrite
            inherited = getattr(out.tag, marks.TRACE, None)
            if inherited:
                frame = inherited
                code = statement(frame[0], frame[1]) or frame[3] or ""
                return f"{frame[0]}:{frame[1]}: {code}".rstrip(": ") + " (rewritten)"
        return None
    return f"{line.file}:{line.line}: {statement(line.file, line.line) or line.code}"


def _nbytes(var: Any, recorded: dict[Any, Any]) -> int | None:
    import numpy as np

    shape = recorded.get(var)
    if not isinstance(shape, tuple | list) or any(not isinstance(s, numbers.Integral) for s in shape):
        return None
    try:
        itemsize = np.dtype(_dtype(var)).itemsize
    except TypeError:
        return None
    return math.prod(int(s) for s in shape) * itemsize  # Python's integers: exact at any size


class ProfileReport(Record):
    name: str
    calls: int
    call_time: float  # in Function.__call__
    vm_time: float  # in the compiled graph
    profiled_time: float  # the sum of the node times
    compile_time: float
    rewrite_time: float
    linker_time: float
    linker: str
    note: str  # e.g. which linker timed the nodes instead of the configured one
    applies: tuple[ApplyRow, ...]
    ops: tuple[OpRow, ...]
    classes: tuple[ClassRow, ...]
    peak_memory: int | None  # bytes, when PyTensor recorded shapes (profile_memory)
    largest: tuple[MemoryRow, ...]
    config: tuple[tuple[str, str, str], ...] = ()  # (flag, repr of value, origin) compiled with
    device: dict[str, Any] | None = None  # a JAX function's figures on its device (device_lines)

    @classmethod
    def from_stats(cls, stats: Any, name: str | None = None, min_memory_size: int = 0) -> ProfileReport:
        """The report of one PyTensor ``ProfileStats``."""
        name = name or getattr(stats, marks.PROFILE_NAME, None) or stats.message or "<unnamed function>"
        times: dict[Any, float] = dict(stats.apply_time)
        counts: dict[Any, int] = dict(stats.apply_callcount)
        total = sum(times.values())
        recorded = getattr(stats, "variable_shape", {}) or {}
        applies = []
        cumulative = 0.0
        ordered = sorted(times, key=lambda key: (-times[key], str(key[1].op)))
        for rank, key in enumerate(ordered, 1):
            node = key[1]
            t = times[key]
            calls = counts.get(key, 0)
            cumulative += t
            applies.append(
                ApplyRow(
                    rank=rank,
                    function=name,
                    op=str(node.op),
                    time=t,
                    share=t / total if total else 0.0,
                    cumulative=cumulative / total if total else 0.0,
                    calls=calls,
                    per_call=t / calls if calls else 0.0,
                    inputs=tuple((_shape_text(v, recorded), _dtype(v)) for v in node.inputs),
                    outputs=tuple((_shape_text(v, recorded), _dtype(v)) for v in node.outputs),
                    source=_source(node),
                )
            )
        peak, largest = _memory([key[1] for key in stats.apply_time], recorded, min_memory_size)
        return cls(
            name=name,
            calls=int(stats.fct_callcount),
            call_time=float(stats.fct_call_time),
            vm_time=float(stats.vm_call_time),
            profiled_time=total,
            compile_time=float(stats.compile_time),
            rewrite_time=float(stats.rewriting_time),
            linker_time=float(stats.linker_time),
            linker=str(getattr(stats, marks.PROFILE_TIMED_BY, "")),
            note=str(getattr(stats, marks.PROFILE_NOTE, "")),
            applies=tuple(applies),
            ops=_ops(applies, total),
            classes=_classes(applies, [key[1] for key in ordered], total),
            peak_memory=peak,
            largest=largest,
            config=_as_compiled(_compiled_with(stats), str(getattr(stats, marks.PROFILE_NOTE, ""))),
            device=_device(stats),
        )

    @classmethod
    def merged(cls, reports: Sequence[ProfileReport], name: str = "all profiled functions") -> ProfileReport:
        """One report for the process: every function's rows, ranked together."""
        rows = sorted((row for r in reports for row in r.applies), key=lambda row: -row.time)
        total = sum(row.time for row in rows)
        applies = []
        cumulative = 0.0
        for rank, row in enumerate(rows, 1):
            cumulative += row.time
            applies.append(
                row._replace(
                    rank=rank,
                    share=row.time / total if total else 0.0,
                    cumulative=cumulative / total if total else 0.0,
                )
            )
        classes: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0])
        for r in reports:
            for c in r.classes:
                entry = classes[c.op_class]
                entry[0] += c.time
                entry[1] += c.calls
                entry[2] += c.nodes
        peaks = [r.peak_memory for r in reports if r.peak_memory is not None]
        return cls(
            name=name,
            calls=sum(r.calls for r in reports),
            call_time=sum(r.call_time for r in reports),
            vm_time=sum(r.vm_time for r in reports),
            profiled_time=total,
            compile_time=sum(r.compile_time for r in reports),
            rewrite_time=sum(r.rewrite_time for r in reports),
            linker_time=sum(r.linker_time for r in reports),
            linker=", ".join(sorted({r.linker for r in reports if r.linker})),
            note="; ".join(sorted({r.note for r in reports if r.note})),
            applies=tuple(applies),
            ops=_ops(applies, total),
            classes=tuple(
                ClassRow(k, v[0], v[0] / total if total else 0.0, int(v[1]), int(v[2]))
                for k, v in sorted(classes.items(), key=lambda kv: -kv[1][0])
            ),
            peak_memory=max(peaks) if peaks else None,
            largest=tuple(sorted((m for r in reports for m in r.largest), key=lambda m: -m.bytes)),
        )

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data["applies"] = [row.to_dict() for row in self.applies]
        data["ops"] = [row._asdict() for row in self.ops]
        data["classes"] = [row._asdict() for row in self.classes]
        data["largest"] = [row._asdict() for row in self.largest]
        data["config"] = [list(item) for item in self.config]
        return data

    def _repr_html_(self) -> str:
        """In a notebook: the HTML report's section for this function, with its chart."""
        from modecfg.profiles.html import notebook_html

        return notebook_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def text(self, n_apply: int = 20, n_ops: int = 20) -> str:
        """The summary a person reads: times, then the top rows of each table."""
        ms = 1e3
        lines = [
            f"Profile of {self.name}: {self.calls} call(s), {self.call_time * ms:.3f} ms in calls, "
            f"{self.profiled_time * ms:.3f} ms in the graph's nodes",
            f"  compile {self.compile_time * ms:.1f} ms (rewrites {self.rewrite_time * ms:.1f} ms, "
            f"linking {self.linker_time * ms:.1f} ms)" + (f"; linker {self.linker}" if self.linker else ""),
        ]
        if self.note:
            lines.append(f"  note: {self.note}")
        if self.config:
            shown = ", ".join(f"{name}={value} ({origin})" for name, value, origin in self.config)
            lines.append(f"  compiled with {shown}")
        if self.device is not None:
            from modecfg.profiles.device import device_lines

            lines += ["  " + line for line in device_lines(self.device)]
            return "\n".join(lines)
        lines.append(
            f"\n  {'time':>10} {'share':>6} {'cumul':>6} {'calls':>7} {'per call':>10}  apply (source)"
        )
        several = len({row.function for row in self.applies}) > 1  # merged: each row says its function
        for row in self.applies[:n_apply]:
            ins = ", ".join(f"{d}{s}" for s, d in row.inputs)
            lines.append(
                f"  {row.time * ms:8.3f}ms {row.share:6.1%} {row.cumulative:6.1%} {row.calls:7d} "
                f"{row.per_call * 1e6:8.2f}us  {row.op}({ins})"
            )
            where = (f"in {row.function}" if several else "") + (", " if several and row.source else "")
            if row.source or several:
                lines.append(f"  {'':>42}  {where}{'at ' + row.source if row.source else ''}")
        if len(self.applies) > n_apply:
            lines.append(f"  ... {len(self.applies) - n_apply} more (profiling.n_apply)")
        lines.append(f"\n  {'time':>10} {'share':>6} {'calls':>7} {'nodes':>5}  op")
        for op in self.ops[:n_ops]:
            lines.append(f"  {op.time * ms:8.3f}ms {op.share:6.1%} {op.calls:7d} {op.nodes:5d}  {op.op}")
        lines.append(f"\n  {'time':>10} {'share':>6} {'calls':>7} {'nodes':>5}  op class")
        for c in self.classes[:n_ops]:
            lines.append(f"  {c.time * ms:8.3f}ms {c.share:6.1%} {c.calls:7d} {c.nodes:5d}  {c.op_class}")
        memory_asked = any(name == "profile_memory" and value == "True" for name, value, _ in self.config)
        if self.peak_memory is None and memory_asked:
            lines.append(
                "\n  no memory section: PyTensor records the sizes of values only while the profile and "
                "profile_memory flags are both on during the calls (profile=True passed to one compile, or "
                "ProfileMode, does not): set both flags (THEANO_FLAGS=profile=True,profile_memory=True)"
            )
        if self.peak_memory is not None:
            lines.append(f"\n  peak memory of intermediate results: {self.peak_memory / 1024:.1f} KiB")
            for m in self.largest[:n_apply]:
                lines.append(f"    {m.bytes / 1024:10.1f} KiB  {m.dtype}{m.shape}  {m.variable} = {m.op}")
        return "\n".join(lines)


def _device(stats: Any) -> dict[str, Any] | None:
    figures = getattr(stats, marks.PROFILE_DEVICE, None)
    return dict(figures) if isinstance(figures, dict) else None


def _compiled_with(stats: Any) -> tuple[tuple[str, str, str], ...]:
    """The configuration the profiled function was compiled with (its graph keeps it)."""
    fgraph = next((key[0] for key in stats.apply_time), None)
    record = getattr(fgraph, marks.COMPILED_WITH, None) or {}
    return tuple((name, repr(value), origin) for name, (value, origin) in record.items())


def _as_compiled(config: tuple[tuple[str, str, str], ...], note: str) -> tuple[tuple[str, str, str], ...]:
    """The flags as the function was compiled: a mode passed to the compile (ProfileMode) is
    the one said, not the mode flag; the linker that timed it is said in the header, so the
    linker flag is left out where a mode was passed."""
    passed = note.removeprefix("compiled in ") if note.startswith("compiled in ") else ""
    if not passed:
        return config
    said = [item for item in config if item[0] not in ("mode", "linker")]
    return (("mode", passed, "passed to the compile"), *said)


def _ops(applies: Iterable[ApplyRow], total: float) -> tuple[OpRow, ...]:
    agg: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0])
    for row in applies:
        entry = agg[row.op]
        entry[0] += row.time
        entry[1] += row.calls
        entry[2] += 1
    return tuple(
        OpRow(op, t, t / total if total else 0.0, int(calls), int(nodes), t / calls if calls else 0.0)
        for op, (t, calls, nodes) in sorted(agg.items(), key=lambda kv: -kv[1][0])
    )


def _classes(applies: Sequence[ApplyRow], nodes: Sequence[Any], total: float) -> tuple[ClassRow, ...]:
    agg: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0])
    for row, node in zip(applies, nodes, strict=True):
        op = node.op
        name = type(op).__name__
        scalar = getattr(op, "scalar_op", None)
        if scalar is not None:
            name = f"{name}{{{type(scalar).__name__}}}"
        entry = agg[name]
        entry[0] += row.time
        entry[1] += row.calls
        entry[2] += 1
    return tuple(
        ClassRow(name, t, t / total if total else 0.0, int(calls), int(n))
        for name, (t, calls, n) in sorted(agg.items(), key=lambda kv: -kv[1][0])
    )


def _memory(
    nodes: Sequence[Any], recorded: dict[Any, Any], min_size: int
) -> tuple[int | None, tuple[MemoryRow, ...]]:
    """Peak bytes of intermediate results, freeing each after its last use (an estimate)."""
    if not recorded or not nodes:
        return None, ()
    order = list(nodes)  # the order PyTensor first ran them in
    produced = {o for n in order for o in n.outputs}
    consumed = {i for n in order for i in n.inputs}
    fgraph_outputs = produced - consumed
    last_use: dict[Any, int] = {}
    for i, node in enumerate(order):
        for var in node.inputs:
            last_use[var] = i
    live = 0
    peak = 0
    sizes: dict[Any, int] = {}
    for i, node in enumerate(order):
        for out in node.outputs:
            size = _nbytes(out, recorded)
            if size is not None:
                sizes[out] = size
                live += size
        peak = max(peak, live)
        for var in node.inputs:
            if last_use.get(var) == i and var in sizes and var not in fgraph_outputs:
                live -= sizes.pop(var)
    largest = []
    for node in order:
        for out in node.outputs:
            size = _nbytes(out, recorded)
            if size is not None and size >= min_size:
                shape = _shape_text(out, recorded)
                largest.append(MemoryRow(str(out.name or out), str(node.op), size, shape, _dtype(out)))
    largest.sort(key=lambda m: -m.bytes)
    return peak, tuple(largest)
