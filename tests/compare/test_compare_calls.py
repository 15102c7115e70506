"""CompareMode's calls on cvm against py (modecfg.compare.mode): what it counts, logs, skips
and says. Fast (C compiled once, then read from the cache): ``make mutate`` runs these."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytensor")

import pytensor
import pytensor.tensor as pt

import modecfg
from modecfg import config
from modecfg.compare import mode as compare
from modecfg.compare.judging import WRITTEN, Mismatch, Settings
from modecfg.compare.mode import CompareMode, Comparison, reference_linkers
from modecfg.errors import CompareError, CompareWarning
from tests.compare import planted

LOGGER = "modecfg.compare"


@pytest.fixture(scope="module", autouse=True)
def _private_repro_dir(repro_dir: Path) -> Path:
    return repro_dir


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> compare._Count:
    fresh = compare._Count()
    monkeypatch.setattr(compare, "counted", fresh)
    return fresh


def _cvm(**kwargs: Any) -> CompareMode:
    return CompareMode(linker="cvm", linkers=kwargs.pop("linkers", "py"), **kwargs)


def _wrong() -> Any:
    x = pt.vector("x")
    return modecfg.function([x], (planted.wrong_in_c(x) * 2).sum(), mode=_cvm())


# -- the references -------------------------------------------------------------------------------


def test_the_references_are_the_modes_else_the_flags_less_the_functions_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with config.override(**{"CompareMode.linkers": "cvm:py:numba"}):
        assert reference_linkers("numba") == ("cvm", "py")
        assert reference_linkers("cvm_nogc") == ("py", "numba")  # cvm_nogc is cvm
        assert reference_linkers("cvm", Settings(linkers="py:jax:py")) == ("py", "jax")
        assert reference_linkers("cvm", Settings(linkers="")) == ()
    import modecfg._registry.linkers as linkers

    monkeypatch.setattr(linkers, "why_unavailable", lambda name: "not here" if name == "numba" else "")
    assert reference_linkers("cvm", Settings(linkers="auto")) == ("py", "jax")


def test_the_modes_own_linker_and_rewrites() -> None:
    from pytensor.compile.mode import optdb
    from pytensor.graph.rewriting.db import SequenceDB

    mode = CompareMode(linker="cvm", linkers="py", optimizer="fast_compile")
    assert compare.linker_name(mode.linker.inner) == "cvm"
    assert mode.provided_optimizer.include == {"fast_compile"}
    assert mode.optdb is optdb
    own = SequenceDB()
    assert CompareMode(linker="cvm", linkers="py", db=own).optdb is own  # as Mode(db=...) keeps it
    with config.override(linker="py"):
        assert compare.linker_name(CompareMode(linkers="cvm").linker.inner) == "py"


def test_the_default_linker_is_modecfgs_choice_not_pytensors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a linker, the one modecfg resolves for the linker and device flags (device=cuda:
    jax on the GPU), which PyTensor's Mode(linker=None) would not know."""
    import modecfg.device.where as device

    monkeypatch.setattr(device, "resolved_linker", lambda: "py")
    with config.override(linker="cvm"):
        assert compare.linker_name(CompareMode(linkers="cvm").linker.inner) == "py"


# -- a call -------------------------------------------------------------------------------------


def test_each_call_and_function_and_difference_is_counted_once(counted: compare._Count) -> None:
    f = _wrong()
    f(np.array([0.5]))
    f(np.array([1.0]))
    assert (counted.functions, counted.calls, counted.differences) == (1, 2, 0)
    assert counted.backends == {"cvm", "py", WRITTEN}
    for _ in range(2):
        with pytest.raises(CompareError) as caught:
            f(np.array([3.0]))
    assert (counted.functions, counted.calls, counted.differences) == (1, 4, 2)
    assert counted.found == [str(caught.value).splitlines()[1].strip()]  # its first difference, once
    assert counted.found[0].startswith("output 0: cvm differs from py and the graph as written")
    y = pt.vector("y")
    modecfg.function([y], y + 1, mode=_cvm())(np.ones(2))  # a second function: counted, not reset
    assert (counted.functions, counted.calls) == (2, 5)


def test_at_most_a_thousand_differences_are_kept_and_every_one_is_counted(counted: compare._Count) -> None:
    """The first difference of each function is kept for the verdict, up to 1,000 (a run over a
    test suite's thousands of functions must not grow without bound); all are counted."""
    counted.found.extend(f"an earlier one {i}" for i in range(999))
    f = _wrong()
    with pytest.raises(CompareError):
        f(np.array([3.0]))
    assert len(counted.found) == 1000 and counted.found[-1].startswith("output 0: cvm differs")
    g = _wrong()
    with pytest.raises(CompareError):
        g(np.array([3.0]))
    assert len(counted.found) == 1000 and counted.differences == 2  # kept no more, counted all


def test_a_loops_inner_function_is_no_call_of_its_own(counted: compare._Count) -> None:
    x = pt.matrix("x")
    ys = pytensor.scan(lambda row, total: total + row, sequences=[x], outputs_info=[pt.zeros(2)],
                       return_updates=False, mode=_cvm())  # fmt: skip
    f = modecfg.function([x], ys[-1].sum(), mode=_cvm())
    assert float(f(np.ones((3, 2)))) == 6.0
    assert counted.calls == 1


def test_a_call_in_a_new_thread_is_compared() -> None:
    f = _wrong()
    caught: list[BaseException] = []

    def call() -> None:
        try:
            f(np.array([3.0]))
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    thread.join()
    assert len(caught) == 1 and isinstance(caught[0], CompareError)


def test_the_error_is_compare_modes_own_not_pytensors_node_error() -> None:
    with pytest.raises(CompareError) as caught:
        _wrong()(np.array([3.0]))
    text = str(caught.value)
    assert text.startswith("CompareMode: the backends differ (cvm, py and the graph as written compared)\n")
    assert "Apply node that caused the error" not in text and "HINT" not in text


def test_a_warned_difference_returns_the_functions_value_and_counts(counted: compare._Count) -> None:
    f = _wrong()
    with config.override(**{"CompareMode.action": "warn"}), pytest.warns(CompareWarning) as warned:
        value = f(np.array([3.0]))
    assert float(value) == pytest.approx(2 * 1.5 * np.exp(3.0))  # cvm's own, as computed
    assert str(warned[0].message).startswith("CompareMode: the backends differ")
    assert counted.differences == 1


def test_a_reference_that_cannot_run_the_graph_is_left_out_said_and_counted(
    counted: compare._Count, caplog: pytest.LogCaptureFixture
) -> None:
    x = pt.vector("x")
    f = modecfg.function([x], planted.c_only(x).sum(), mode=_cvm())  # no Python implementation
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert float(f(np.ones(2))) == 4.0
        assert float(f(np.ones(2))) == 4.0
    why = "it cannot run this graph: NotImplementedError: COnly has no Python implementation"
    said = sorted(r.getMessage() for r in caplog.records if r.name == LOGGER)
    assert said == sorted(f"CompareMode: {label} not compared: {why}" for label in ("py", WRITTEN))
    assert counted.not_compared == {"py": 1, WRITTEN: 1}  # once a function, not once a call
    assert counted.calls == 2


def test_a_reference_that_cannot_compile_the_graph_is_skipped_and_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    x = pt.vector("x")
    bad = planted.wrong_in_c(x) + planted.wrong_on_numba(x)  # the C linker cannot compile the second
    f = modecfg.function([x], bad.sum(), mode=_cvm(linkers="c:py"))
    with caplog.at_level(logging.INFO, logger=LOGGER), pytest.raises(CompareError) as caught:
        f(np.array([3.0]))
    comparison = caught.value.comparison
    assert list(comparison.skipped) == ["c"]
    assert comparison.skipped["c"].startswith("it cannot compile this graph: LinkerUnavailableError: ")
    assert comparison.backends == ("cvm", "py")
    said = [r.getMessage() for r in caplog.records if r.name == LOGGER and "skipped" in r.getMessage()]
    assert said == [f"CompareMode: c skipped: {comparison.skipped['c']}"]
    assert f"\nnot compared: c ({comparison.skipped['c']})" in str(caught.value)


def test_without_the_compile_hook_the_graph_as_written_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg.nanguard import mode as nanguard

    monkeypatch.setattr(nanguard.Plan, "original", property(lambda self: None))
    with pytest.raises(CompareError) as caught:
        _wrong()(np.array([3.0]))
    comparison = caught.value.comparison
    assert comparison.skipped == {WRITTEN: "unknown (the compile hook was off)"}
    assert comparison.backends == ("cvm", "py")
    assert [{m.backend, m.reference} for m in comparison.mismatches] == [{"cvm", "py"}]


def test_a_failed_analysis_is_a_note_and_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any) -> Any:
        raise RuntimeError("planted")

    monkeypatch.setattr(compare, "analyse", broken)
    with caplog.at_level(logging.DEBUG, logger=LOGGER), pytest.raises(CompareError) as caught:
        _wrong()(np.array([3.0]))
    comparison = caught.value.comparison
    assert comparison.notes == ("the node and rewrite could not be looked for: RuntimeError('planted')",)
    assert (comparison.node, comparison.rewrite, comparison.repro) == (None, None, None)
    (record,) = [r for r in caplog.records if r.name == LOGGER and r.levelno == logging.DEBUG]
    assert record.getMessage() == "CompareMode: the analysis failed"
    assert record.exc_info is not None and str(record.exc_info[1]) == "planted"


def test_the_analysis_gets_the_modes_tolerances(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Settings] = []

    def spy(*args: Any) -> Any:
        seen.append(args[-1])
        raise RuntimeError("enough")

    monkeypatch.setattr(compare, "analyse", spy)
    x = pt.vector("x")
    f = modecfg.function([x], planted.wrong_in_c(x).sum(), mode=_cvm(rtol=1e-9))
    with pytest.raises(CompareError):
        f(np.array([3.0]))
    assert seen == [Settings(linkers="py", rtol=1e-9, atol=None)]


# -- what it says -------------------------------------------------------------------------------


def _part(text: str) -> Any:
    return SimpleNamespace(describe=lambda: text)


def test_a_comparison_described_in_full() -> None:
    comparison = Comparison(
        (Mismatch("output 0", 0, "cvm", "py", "a\nb"), Mismatch("output 1", 1, "cvm", "py", "c")),
        ("cvm", "py"),
        {"jax": "it cannot compile this graph"},
        _part("node\nline"),
        _part("rewrite\nfound"),
        "/tmp/r.py",
        ("note 1", "note 2"),
        _part("loop\nstep"),
    )
    assert comparison.describe() == "\n".join([
        "CompareMode: the backends differ (cvm, py and the graph as written compared)",
        "  output 0: cvm differs from py: a\nb",
        "  output 1: cvm differs from py: c",
        "the first node that differs on cvm:",
        "  node\n  line",
        "  loop\n  step",
        "the rewrite that introduced it:",
        "  rewrite\n  found",
        "note 1",
        "note 2",
        "reproduction (plain PyTensor): python /tmp/r.py",
        "not compared: jax (it cannot compile this graph)",
    ])  # fmt: skip
    printed: list[str] = []
    comparison._repr_pretty_(SimpleNamespace(text=printed.append), False)
    assert printed == [comparison.describe()]


def test_a_comparison_without_a_node_rewrite_or_reproduction() -> None:
    comparison = Comparison((Mismatch("output 0", 0, "cvm", "py", "x"),), ("cvm",), {}, None, None, None, ())
    assert comparison.describe() == (
        "CompareMode: the backends differ (cvm and the graph as written compared)\n"
        "  output 0: cvm differs from py: x"
    )


def test_an_error_of_the_functions_own_node_keeps_pytensors_node_text() -> None:
    from pytensor.raise_op import Assert

    x = pt.vector("x")
    f = modecfg.function([x], Assert("planted: x is small")(x, x.sum() < 10) * 2, mode=_cvm())
    assert f(np.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(AssertionError) as caught:
        f(np.full(2, 10.0))
    assert "planted: x is small" in str(caught.value)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "HINT: Set PyTensor" in notes and "Assert{msg=" in notes  # the node named, not hidden
