"""The HTML of profile reports: the page's sections and chart (``render.to_html``), and one
report in a notebook cell (``ProfileReport._repr_html_``). Plain SVG and tables, no scripts."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modecfg.profiles.report import ProfileReport

__all__ = ["CSS", "notebook_html", "sections"]

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right}
td.l,th.l{text-align:left}code{font-size:12px}h2{margin-top:2em}.note{color:#a50}
"""


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
        title = f"<title>{html.escape(full)}</title>"
        parts.append(f'<text x="0" y="{y + 13}" font-size="12">{title}{html.escape(short)}</text>')
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


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], left: Sequence[int] = ()) -> str:
    head = "".join(
        f'<th class="{"l" if i in left else ""}">{html.escape(h)}</th>' for i, h in enumerate(headers)
    )
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="{"l" if i in left else ""}">{html.escape(str(c))}</td>' for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def sections(shown: Sequence[ProfileReport], n_apply: int, n_ops: int) -> str:
    sections = []
    for report in shown:
        applies = [
            (r.rank, f"{r.time * 1e3:.3f} ms", f"{r.share:.1%}", f"{r.cumulative:.1%}", r.calls,
             f"{r.per_call * 1e6:.2f} us", r.op, ", ".join(f"{d}{s}" for s, d in r.inputs), r.source or "")
            for r in sorted(report.applies, key=lambda r: r.rank)[:n_apply]
        ]  # fmt: skip
        ops = [
            (f"{o.time * 1e3:.3f} ms", f"{o.share:.1%}", o.calls, o.nodes, o.op) for o in report.ops[:n_ops]
        ]
        classes = [
            (f"{c.time * 1e3:.3f} ms", f"{c.share:.1%}", c.calls, c.nodes, c.op_class) for c in report.classes
        ]
        note = f'<p class="note">{html.escape(report.note)}</p>' if report.note else ""
        if report.device is not None:
            from modecfg.profiles.device import device_lines

            items = "".join(f"<li>{html.escape(line)}</li>" for line in device_lines(report.device))
            sections.append(f"<h2>{html.escape(report.name)}</h2>{note}<ul>{items}</ul>")
            continue
        sections.append(
            f"<h2>{html.escape(report.name)}</h2>"
            f"<p>{report.calls} call(s); {report.call_time * 1e3:.3f} ms in calls, "
            f"{report.profiled_time * 1e3:.3f} ms in nodes; compile {report.compile_time * 1e3:.1f} ms "
            f"(rewrites {report.rewrite_time * 1e3:.1f} ms)</p>{note}"
            f"{_bar_chart(report, n_apply)}"
            "<h3>Apply nodes</h3>"
            + _table(
                ["#", "time", "share", "cumul.", "calls", "per call", "op", "inputs", "source"],
                applies,
                left=(6, 7, 8),
            )
            + "<h3>Ops</h3>"
            + _table(["time", "share", "calls", "nodes", "op"], ops, left=(4,))
            + "<h3>Op classes</h3>"
            + _table(["time", "share", "calls", "nodes", "class"], classes, left=(4,))
        )
    return "".join(sections)


def notebook_html(report: ProfileReport, n_apply: int = 20, n_ops: int = 20) -> str:
    """One report for a notebook cell: the page's section and chart, its style scoped to it."""
    scoped = "".join(f".modecfg-profile {rule}}}" for rule in CSS.strip().split("}") if rule.strip())
    return f'<div class="modecfg-profile"><style>{scoped}</style>{sections([report], n_apply, n_ops)}</div>'
