"""The HTML of profile reports: the page's sections and chart (``render.to_html``), and one
report in a notebook cell (``ProfileReport._repr_html_``). Plain SVG and tables, no scripts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from modecfg._html import escape

if TYPE_CHECKING:
    from modecfg.profiles.rows import ProfileReport

__all__ = ["CSS", "notebook_html", "sections"]

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
td.l,th.l{text-align:left;white-space:normal}code{font-size:12px}h2{margin-top:2em}.note{color:#a50}
td.doubt{color:#999}.flags,.legend{color:#555;font-size:12px}
"""

# A row timed over fewer calls, or shorter a call, than this is within the timer's own overhead
# and the run-to-run noise (a scalar op measured at 41 us a call in one run, 0.44 us in another)
FEW_CALLS, SHORT_CALL = 10, 2e-6


def _bar_chart(report: ProfileReport, n: int) -> str:
    rows = sorted(report.applies, key=lambda r: r.rank)[:n]
    if not rows:
        return ""
    width, bar_h, label_w = 760, 18, 260
    height = bar_h * len(rows) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    top = max(r.share for r in rows) or 1.0
    for i, row in enumerate(rows):
        y = i * bar_h + 5
        w = (width - label_w - 60) * row.share / top
        full, short = _label(row)
        title = f"<title>{escape(full)}</title>"
        parts.append(f'<text x="0" y="{y + 13}" font-size="12">{title}{escape(short)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 4}" fill="#4a7ebb"/>')
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 13}" font-size="12">{row.share:.1%}</text>')
    parts.append("</svg>")
    return "".join(parts)


_LABEL_CHARS = 38  # what fits in the label column (260 px at 12 px type) before the bars


def _label(row: Any) -> tuple[str, str]:
    """A bar's label, shortened to fit: the operation and the line that made it (file name
    only); and the whole of both, shown on hover."""
    import os
    import re

    where = ""
    found = re.match(r"(.*?):(\d+)(?::|$)", row.source or "")
    if found:
        where = f" {os.path.basename(found[1])}:{found[2]}"
    room = _LABEL_CHARS - len(where)
    op = row.op if len(row.op) <= room else row.op[: max(room - 1, 8)] + "…"
    title = f"{row.op} at {row.source}" if row.source else row.op
    return title, f"{op}{where}"


def duration(seconds: float) -> str:
    """A time in the unit that reads best (s, ms, µs, ns), three significant digits or so: the
    largest unit in which it rounds to 1 or more (0.9996 s is "1 s", never "1e+03 ms")."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        shown = f"{seconds / scale:.3g}"
        if float(shown) >= 1:
            return f"{shown} {unit}" if float(shown) < 1000 else f"{seconds / scale:.0f} {unit}"
    return f"{seconds / 1e-9:.3g} ns" if seconds > 0 else "0"


def _table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    left: Sequence[int] = (),
    doubt: Sequence[bool] = (),
) -> str:
    head = "".join(f'<th class="{"l" if i in left else ""}">{escape(h)}</th>' for i, h in enumerate(headers))
    body = []
    for n, row in enumerate(rows):
        unsure = n < len(doubt) and doubt[n]
        cells = "".join(
            f'<td class="{"l" if i in left else "doubt" if unsure else ""}">{escape(str(c))}</td>'
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def sections(shown: Sequence[ProfileReport], n_apply: int, n_ops: int) -> str:
    sections = []
    for report in shown:
        rows = sorted(report.applies, key=lambda r: r.rank)[:n_apply]
        applies = [
            (r.rank, duration(r.time), f"{r.share:.1%}", f"{r.cumulative:.1%}", r.calls,
             ("≈ " if _doubtful(r) else "") + duration(r.per_call), r.op,
             ", ".join(f"{d}{s}" for s, d in r.inputs), _where(r, report))
            for r in rows
        ]  # fmt: skip
        ops = [(duration(o.time), f"{o.share:.1%}", o.calls, o.nodes, o.op) for o in report.ops[:n_ops]]
        classes = [(duration(c.time), f"{c.share:.1%}", c.calls, c.nodes, c.op_class) for c in report.classes]
        note = f'<p class="note">{escape(report.note)}</p>' if report.note else ""
        flags = ", ".join(f"{name}={value} ({origin})" for name, value, origin in report.config)
        said = "; ".join(
            part
            for part in (report.linker and f"linker {report.linker}", flags and f"compiled with {flags}")
            if part
        )
        head = f'<p class="flags">{escape(said)}</p>' if said else ""
        if report.device is not None:
            from modecfg.profiles.device import device_lines

            items = "".join(f"<li>{escape(line)}</li>" for line in device_lines(report.device))
            sections.append(f"<h2>{escape(report.name)}</h2>{note}{head}<ul>{items}</ul>")
            continue
        legend = []
        if any(_doubtful(r) for r in rows):
            legend.append(
                f"≈ and grey: timed over fewer than {FEW_CALLS} calls, or under {duration(SHORT_CALL)} a "
                "call: within the timer's own overhead and the noise between runs; compare them across runs"
            )
        if any("?" in s for r in rows for s, _ in r.inputs):
            legend.append(
                "?: a size not recorded (the sizes of values are recorded with the profile and "
                "profile_memory flags both on during the calls)"
            )
        sections.append(
            f"<h2>{escape(report.name)}</h2>"
            f"<p>{report.calls} call(s); {duration(report.call_time)} in calls, "
            f"{duration(report.profiled_time)} in nodes; compile {duration(report.compile_time)} "
            f"(rewrites {duration(report.rewrite_time)})</p>{head}{note}"
            f"{_bar_chart(report, n_apply)}"
            "<h3>Apply nodes</h3>"
            + _table(
                ["#", "time", "share", "cumul.", "calls", "per call", "op", "inputs", "source"],
                applies,
                left=(6, 7, 8),
                doubt=[_doubtful(r) for r in rows],
            )
            + "".join(f'<p class="legend">{escape(line)}</p>' for line in legend)
            + "<h3>Ops</h3>"
            + _table(["time", "share", "calls", "nodes", "op"], ops, left=(4,))
            + "<h3>Op classes</h3>"
            + _table(["time", "share", "calls", "nodes", "class"], classes, left=(4,))
        )
    return "".join(sections)


def _doubtful(row: Any) -> bool:
    return bool(row.calls < FEW_CALLS or row.per_call < SHORT_CALL)


def _where(row: Any, report: ProfileReport) -> str:
    """The row's source line; in the merged report, its function first."""
    several = len({r.function for r in report.applies}) > 1
    return (f"{row.function}: " if several else "") + (row.source or "")


def scoped(css: str, scope: str) -> str:
    """``css`` with every selector of every rule inside ``scope`` (``body`` is the scope itself):
    a notebook's other cells keep their own look."""
    rules = []
    for rule in css.split("}"):
        selectors, _, body = rule.partition("{")
        if not selectors.strip():
            continue
        inside = (scope if s.strip() == "body" else f"{scope} {s.strip()}" for s in selectors.split(","))
        rules.append(f"{','.join(inside)}{{{body.strip()}}}")
    return "".join(rules)


def notebook_html(report: ProfileReport, n_apply: int = 20, n_ops: int = 20) -> str:
    """One report for a notebook cell: the page's section and chart, its style scoped to it."""
    style = scoped(CSS, ".modecfg-profile")
    return f'<div class="modecfg-profile"><style>{style}</style>{sections([report], n_apply, n_ops)}</div>'
