"""The demo trains: the README's first command does what it says."""

from __future__ import annotations

import io

import pytest

import modecfg

pytest.importorskip("pytensor")


def test_the_demo_trains_and_reports_its_configuration() -> None:
    from modecfg.cli import main

    assert modecfg.config.is_default("floatX")
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(["demo", "--steps", "30"], out, err)
    finally:
        modecfg.config.reset("floatX")  # the demo assigns float32 when floatX is not set
    text = out.getvalue()
    assert code == 0, err.getvalue()
    assert "floatX                   float32" in text
    assert "time per step" in text and "compile time" in text
    accuracy = float(text.split("accuracy")[1].split("%")[0])
    assert accuracy > 90.0
    first, last = (float(x) for x in text.split("cost")[1].split("\n")[0].split("->"))
    assert last < first
    # the result line names the linker that ran, not "per_graph" (issue 22: it read
    # "linker auto (chosen per graph) (chosen by linker=auto)"); the suite runs linker=per_graph
    result = next(line for line in text.splitlines() if line.startswith("mode Mode, linker "))
    ran = result.split("linker ")[1].split(" ")[0]
    assert ran in {"cvm", "numba", "vm", "py"} and "(chosen by linker=per_graph)" in result, result


@pytest.mark.slow
def test_the_demo_under_debugmode_finishes_its_default_200_steps() -> None:
    """DebugMode is the first debugging tool people reach for: on the demo it must finish. Its
    float32 results are compared with float32 tolerances (PyTensor's default ones are tighter
    than float32 rounding: after ~30 steps log1p(-sigmoid(x)) -> -softplus(x) differs by 9e-5)."""
    from modecfg.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(["demo", "--mode", "DebugMode"], out, err)
    finally:
        modecfg.config.reset("floatX")
        modecfg.config.reset("mode")
    text = out.getvalue()
    assert code == 0, err.getvalue()[-2000:]
    assert "mode DebugMode" in text and "(median of 200)" in text
    assert float(text.split("accuracy")[1].split("%")[0]) > 90.0


def test_the_demo_header_shows_the_mode_it_runs() -> None:
    from modecfg.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        assert (
            main(["demo", "--mode", "NanGuardMode", "--steps", "2", "--flags", "floatX=float64"], out, err)
            == 0
        )
    finally:
        modecfg.config.reset("floatX")
        modecfg.config.reset("mode")
    text = out.getvalue()
    (mode_line,) = [line for line in text.splitlines() if line.startswith("  mode ")]
    assert mode_line.split() == ["mode", "NanGuardMode", "assignment", "at", "modecfg", "demo", "--mode"]
    assert "mode NanGuardMode, linker" in text
    assert "float32 check    not applicable: floatX=float64" in text


@pytest.mark.parametrize("steps", ["0", "-5", "many"])
def test_the_demo_refuses_a_step_count_that_is_not_positive(steps: str) -> None:
    from modecfg.cli import main

    with pytest.raises(SystemExit) as info:
        main(["demo", "--steps", steps], io.StringIO(), io.StringIO())
    assert info.value.code == 2
