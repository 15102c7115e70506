"""The parts of the HTML report at their edges: times at a unit's boundary, labels that just fit,
an empty report, a JAX function's device section, the notebook cell's size and style."""

from __future__ import annotations

import re
from typing import Any

import pytest

from modecfg.profiles.html import _label, duration, notebook_html, scoped, sections
from modecfg.profiles.rows import ApplyRow, OpRow, ProfileReport


def _row(
    rank: int, op: str = "Dot", source: str | None = None, inputs: Any = (("(2,)", "float32"),)
) -> ApplyRow:
    return ApplyRow(rank, "f", op, 0.001, 0.5, 0.5, 50, 2e-5, inputs, (), source)


def _report(**fields: Any) -> ProfileReport:
    made: dict[str, Any] = dict(
        name="f", calls=50, call_time=0.002, vm_time=0.0015, profiled_time=0.001, compile_time=0.5,
        rewrite_time=0.25, linker_time=0.125, linker="", note="", applies=(_row(1),), ops=(), classes=(),
        peak_memory=None, largest=(),
    )  # fmt: skip
    return ProfileReport(**{**made, **fields})


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(1.0, "1 s"), (0.9996, "1 s"), (0.9994, "999 ms"), (1e-3, "1 ms"), (0.0009996, "1 ms"),
     (999.6e-9, "1 µs"), (1e-6, "1 µs"), (999.4e-9, "999 ns"), (999.4, "999 s"), (999.6, "1000 s"),
     (1234.4, "1234 s"), (0.0123456, "12.3 ms"), (5e-10, "0.5 ns"), (0.0, "0")],
)  # fmt: skip
def test_a_duration_is_said_in_the_largest_unit_it_rounds_to_one_in(seconds: float, said: str) -> None:
    assert duration(seconds) == said


def test_an_operation_that_just_fits_its_label_is_not_cut() -> None:
    where = "model.py:3"  # " model.py:3": 11 characters of the label's 38
    fits, over = "A" * 27, "B" * 28
    assert _label(_row(1, fits, f"/x/{where}: y = 1"))[1] == f"{fits} {where}"
    assert _label(_row(1, over, f"/x/{where}: y = 1"))[1] == f"{'B' * 26}… {where}"


def test_a_long_file_name_leaves_the_operation_eight_characters() -> None:
    long = "a_rather_long_module_name_for_a_model.py"  # the place alone is wider than the label
    full, short = _label(_row(1, "Elemwise{Add}", f"/src/{long}:120: y = a + b"))
    assert short == f"Elemwise… {long}:120"
    assert full == f"Elemwise{{Add}} at /src/{long}:120: y = a + b"
    assert _label(_row(1, "Elemwise{Add}"))[1] == "Elemwise{Add}"  # no source: the operation alone


def test_a_report_without_rows_has_no_chart_and_nothing_in_its_place() -> None:
    html = sections([_report(applies=())], 20, 20)
    assert "<svg" not in html and "XX" not in html
    assert re.search(r"\(rewrites 250 ms\)</p><h3>Apply nodes</h3>", html)


def test_the_flags_line_is_there_only_when_there_is_something_to_say() -> None:
    assert '<p class="flags">' not in sections([_report()], 20, 20)
    assert '<p class="flags">linker cvm</p>' in sections([_report(linker="cvm")], 20, 20)
    config = (("floatX", "float32", "THEANO_FLAGS"),)
    # no linker said: the flags alone (not "; compiled with", as it was)
    assert '<p class="flags">compiled with floatX=float32 (THEANO_FLAGS)</p>' in sections(
        [_report(config=config)], 20, 20
    )
    assert '<p class="flags">linker c; compiled with floatX=float32 (THEANO_FLAGS)</p>' in sections(
        [_report(config=config, linker="c")], 20, 20
    )


def test_every_input_of_a_row_is_listed_comma_separated() -> None:
    two = _row(1, inputs=(("(2,)", "float32"), ("(?, 3)", "float64")))
    assert '<td class="l">float32(2,), float64(?, 3)</td>' in sections([_report(applies=(two,))], 20, 20)


def test_a_jax_functions_section_lists_its_device_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    import modecfg.profiles.device as device

    monkeypatch.setattr(device, "device_lines", lambda figures: [f"ran on {figures['on']}", "a < b & c"])
    html = sections([_report(name="g <x>", device={"on": "cpu:0"}, note="n", linker="jax")], 20, 20)
    assert html == (
        '<h2>g &lt;x&gt;</h2><p class="note">n</p><p class="flags">linker jax</p>'
        "<ul><li>ran on cpu:0</li><li>a &lt; b &amp; c</li></ul>"
    )


def test_a_notebook_cell_shows_twenty_rows_and_twenty_ops_unless_told() -> None:
    rows = tuple(_row(rank, f"Op{rank}") for rank in range(1, 23))
    ops = tuple(OpRow(f"Op{rank}", 0.001, 0.5, 50, 1, 2e-5) for rank in range(1, 23))
    cell = notebook_html(_report(applies=rows, ops=ops))
    assert cell.count("<rect") == 20  # the chart's bars
    shown_ops = re.findall(r'<td class="l">(Op\d+)</td></tr>', cell.split("<h3>Ops</h3>")[1])
    assert shown_ops == [f"Op{rank}" for rank in range(1, 21)]
    assert notebook_html(_report(applies=rows, ops=ops), n_apply=3).count("<rect") == 3


def test_scoping_keeps_going_past_a_stray_brace() -> None:
    assert scoped("a{x:1}}b,body{y:2}", ".s") == ".s a{x:1}.s b,.s{y:2}"
