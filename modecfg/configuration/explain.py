"""Presentation of the configuration: :class:`Explanation`, everything about one flag."""

from __future__ import annotations

from typing import Any

from modecfg._record import Record
from modecfg.configuration.origin import Origin
from modecfg.configuration.resolve import Candidate

__all__ = ["CompiledWith", "Explanation"]


class Explanation(Record):
    """Everything about one flag: its value, where that came from, and every layer's say."""

    name: str
    value: Any
    origin: Origin
    default: Any
    doc: str
    kind: str
    choices: tuple[str, ...]
    layers: tuple[Candidate, ...]  # lowest precedence first; the winner is the last
    pytensor: bool
    fixed: bool

    def _repr_html_(self) -> str:
        from modecfg._html import escape, html_table

        rows = [("default", repr(self.default), "")]
        rows += [(f"{c.origin.layer} {_where(c.origin)}".strip(), repr(c.raw), "") for c in self.layers]
        if len(rows) > 1:
            rows[-1] = (*rows[-1][:2], "wins")
        head = (
            f"<p><code>{escape(self.name)}</code> = <code>{escape(repr(self.value))}</code> "
            f"(from {escape(self.origin)})<br>{escape(self.doc)}<br>type: {escape(self.kind)}</p>"
        )
        return head + html_table(["layer", "value", ""], rows)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        lines = [f"{self.name} = {self.value!r}   (from {self.origin})", f"  {self.doc}"]
        lines.append(f"  type: {self.kind}")
        lines.append(f"  default: {self.default}")
        notes = []
        if self.pytensor:
            notes.append("a PyTensor flag: pytensor.config reads this value")
        if self.fixed:
            notes.append("fixed once PyTensor has used it")
        if notes:
            lines.append("  " + "; ".join(notes))
        lines.append("  layers, lowest precedence first:")
        lines.append(f"    {'default':<40} {self.default}")
        for i, cand in enumerate(self.layers):
            mark = "  <- wins" if i == len(self.layers) - 1 else "  (overridden)"
            where = f"{cand.origin.layer} {_where(cand.origin)}"
            lines.append(f"    {where:<40} {cand.raw!r}{mark}")
        if not self.layers:
            lines.append("    (no layer sets it: the default is used)")
        return "\n".join(lines)


def _where(origin: Origin) -> str:
    if origin.source is None:
        return ""
    return origin.source if origin.line is None else f"{origin.source}:{origin.line}"


class CompiledWith(dict[str, tuple[Any, str]]):
    """The configuration a function was compiled with: flag -> (value, where it came from),
    every flag some layer set in the compiling thread or task and the four that shape every
    compile. ``str()`` gives one line per flag."""

    def __str__(self) -> str:
        if not self:
            return "compiled before modecfg recorded configurations (or with its compile hook off)"
        width = max(len(n) for n in self)
        lines = ["compiled with:"]
        lines += [f"  {name:<{width}} = {value!r:<24} ({origin})" for name, (value, origin) in self.items()]
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        from modecfg._html import html_table

        rows = [(name, repr(value), origin) for name, (value, origin) in self.items()]
        return html_table(["flag", "value", "from"], rows, caption="compiled with")
