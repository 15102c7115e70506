"""What a notebook shows: each display's HTML holds what its text holds, escaped, with a text fallback."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import numpy as np
import pytest

import modecfg

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


class _Cells(HTMLParser):
    """The text of every table cell, and the tags seen (to check nothing runs)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.tags: set[str] = set()
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.add(tag)
        if tag in ("td", "th"):
            self._in_cell = True
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells[-1] += data


def _parse(markup: str) -> _Cells:
    parser = _Cells()
    parser.feed(markup)
    assert "script" not in parser.tags
    return parser


class _Printer:  # IPython's pretty printer, as far as _repr_pretty_ uses it
    def __init__(self) -> None:
        self.out = ""

    def text(self, text: str) -> None:
        self.out += text


def test_the_config_shows_the_flags_set_and_where_from_escaped() -> None:
    cfg = modecfg.load(env={"THEANO_FLAGS": 'floatX=float32,compiledir="/tmp/<b>odd</b>"'})
    cells = _parse(cfg._repr_html_()).cells
    assert cells[:3] == ["flag", "value", "from"]
    assert ["floatX", "'float32'", "THEANO_FLAGS"] == cells[3:6]
    assert any("<b>odd</b>" in c for c in cells)  # shown as text, not as markup
    assert "every flag at its default" in modecfg.load(env={})._repr_html_()
    assert "floatX=float32" in repr(cfg)  # the text form


def test_explain_shows_every_layer_and_which_wins() -> None:
    cfg = modecfg.load(env={"THEANO_FLAGS": "floatX=float32"})
    cfg.floatX = "float16"  # the assignment explained
    exp = cfg.explain("floatX")
    line = _line("# the assignment explained")
    cells = _parse(exp._repr_html_()).cells
    assert cells[3:6] == ["default", "'float64'", ""]
    assert cells[-3:-1] == [f"assignment {__file__}:{line}", "'float16'"]
    assert cells[-1] == "wins"
    printer = _Printer()
    exp._repr_pretty_(printer, False)
    assert printer.out == str(exp)


def _line(code: str) -> int:
    from pathlib import Path

    return next(i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1) if code in line)


def test_float32_findings_are_a_table_with_the_line_and_the_fix() -> None:
    x = pt.vector("x", dtype="float32")
    out = x * np.float64(2.0)  # the float64 constant the check names
    with modecfg.config.override(floatX="float32"):
        found = modecfg.check_float32(out)
    assert isinstance(found, list) and len(found) == 1
    cells = _parse(found._repr_html_()).cells
    assert cells[:5] == ["where", "code", "what", "fix", "float64 downstream"]
    assert f"{__file__}:{_line('the float64 constant the check names')}" in cells[5]
    assert "float64 constant" in cells[7] and cells[8] == found[0].fix
    assert "no float64 enters" in modecfg.check_float32(x * 2)._repr_html_()


def test_a_nan_guard_error_shows_its_first_bad_value() -> None:
    x = pt.vector("x")
    f = modecfg.function([x], pt.log(x), mode="NanGuardMode")
    with pytest.raises(modecfg.NanGuardError) as caught:
        f(np.array([1.0, -1.0]))
    markup = caught.value._repr_html_()
    assert "NanGuardError" in markup and "NaN" in markup
    bad = caught.value.bad  # type: ignore[attr-defined]
    assert bad.describe() in _unescape(bad._repr_html_())


def _unescape(markup: str) -> str:
    import html

    return html.unescape(markup)


def test_a_profile_report_shows_its_chart_and_rows() -> None:
    from modecfg.profiles.session import reports

    before = len(reports())
    x = pt.vector("x")
    f = modecfg.function([x], pt.exp(x).sum() + pt.log1p(x).sum(), profile=True)
    for _ in range(3):
        f(np.ones(100))
    report = reports()[before:][-1]
    markup = report._repr_html_()
    parsed = _parse(markup)
    assert "svg" in parsed.tags and "rect" in parsed.tags  # the chart
    assert any("Exp" in c or "exp" in c for c in parsed.cells)
    assert markup.startswith('<div class="modecfg-profile"><style>.modecfg-profile{')  # style kept to itself
    printer = _Printer()
    report._repr_pretty_(printer, False)
    assert printer.out == report.text()
