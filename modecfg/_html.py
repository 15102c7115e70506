"""Small HTML pieces for notebook displays (``_repr_html_``): escaped, self-contained, no scripts.

Notebooks show an object's ``_repr_html_`` and fall back to its text; every display here has
a text form too (``__str__`` / ``_repr_pretty_``), so a terminal, a log or a notebook
exported to text lose nothing.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

__all__ = ["escape", "html_table", "pre"]

_CELL = "padding:2px 8px;border-bottom:1px solid #ddd;vertical-align:top"


def escape(value: object) -> str:
    """``value`` as HTML text: markup escaped, and what would reorder or hide text (a
    bidirectional override, a zero-width or control character) written as its escape, as on
    the terminal (:func:`modecfg.terminal.shown`)."""
    from modecfg.terminal import shown

    return html.escape(shown(str(value)))


def html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> str:
    """A plain table; cells are escaped text (``<code>`` for the first column)."""
    head = "".join(f'<th style="{_CELL};text-align:left">{escape(h)}</th>' for h in headers)
    body = []
    for row in rows:
        cells = [f'<td style="{_CELL}"><code>{escape(row[0])}</code></td>']
        cells += [f'<td style="{_CELL}">{escape(c)}</td>' for c in row[1:]]
        body.append(f"<tr>{''.join(cells)}</tr>")
    cap = f'<caption style="text-align:left;font-weight:bold">{escape(caption)}</caption>' if caption else ""
    return f'<table style="border-collapse:collapse">{cap}<tr>{head}</tr>{"".join(body)}</table>'


def pre(text: str, title: str = "", color: str = "#222") -> str:
    """Preformatted text under an optional bold title."""
    head = f"<b>{escape(title)}</b>" if title else ""
    style = f"color:{color};white-space:pre-wrap;margin:4px 0"
    return f'<div>{head}<pre style="{style}">{escape(text)}</pre></div>'
