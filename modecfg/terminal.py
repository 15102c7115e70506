"""Text as a terminal may show it: what a dump, a lock note or a graph holds never drives the
terminal it is shown on.

A dump written by someone else, a lock note left by a process of another host, a variable's
name: each may hold ESC sequences (clear the screen, plant a hidden OSC 8 link, move the cursor
up and overwrite a line), a carriage return, a bell, a bidirectional override. :func:`shown`
writes every control and format character as a visible escape, keeping newlines and tabs;
:class:`Shown` does so for everything written to a stream (the command line's output).
"""

from __future__ import annotations

import unicodedata
from typing import Any, TextIO

__all__ = ["Shown", "shown"]


def _table() -> dict[int, str]:
    table = {}
    for code in [*range(0x00, 0x20), *range(0x7F, 0xA0)]:  # C0, DEL, C1
        if chr(code) not in "\n\t":
            table[code] = f"\\x{code:02x}"
    for code in (
        0x2028,
        0x2029,
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0xFEFF,
    ):
        table[code] = f"\\u{code:04x}"  # line separators, zero-width and bidirectional controls
    return table


_ESCAPES = _table()


def shown(text: str) -> str:
    """``text`` with every control character but newline and tab, and every character that
    reorders or hides text, written as an escape (``\\x1b``, ``\\u202e``)."""
    escaped = text.translate(_ESCAPES)
    if escaped.isprintable() or escaped.isascii():
        return escaped
    return "".join(  # other format characters (Cf) the table does not list
        f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in escaped
    )


class Shown:
    """A text stream whose writes go through :func:`shown` (everything else is the stream's)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(shown(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
