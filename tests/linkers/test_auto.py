"""linker=auto: the rule picks what it says for small graphs of each kind (no timing here)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.linkers import auto, best_linker
from modecfg.linkers.auto import choose, chosen
from modecfg.modes.build import describe_linker

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

needs_numba = pytest.mark.skipif(
    bool(modecfg.linkers.why_unavailable("numba")), reason="numba is not installed"
)
needs_cxx = pytest.mark.skipif(bool(modecfg.linkers.why_unavailable("cvm")), reason="no C++ compiler")


def _fgraph(inputs: list, outputs: list) -> object:
    from pytensor.graph.fg import FunctionGraph

    return FunctionGraph(inputs, outputs, clone=True)


def _scan_graph() -> tuple[list, object]:
    xs = pt.matrix("xs")
    res = pytensor.scan(lambda r, h: pt.tanh(r + h), sequences=[xs], outputs_info=[pt.zeros(3)])
    hs = res[0] if isinstance(res, tuple) else res
    return [xs], hs[-1].sum()


@pytest.fixture
def no_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auto, "_c_has_blas", lambda: False)


@pytest.fixture
def blas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auto, "_c_has_blas", lambda: True)


@needs_cxx
def test_an_elementwise_graph_gets_cvm(blas: None) -> None:
    x = pt.vector("x")
    assert choose(_fgraph([x], [pt.exp(x) * 2 + 1])).name == "cvm"


@needs_numba
def test_a_scan_gets_numba() -> None:
    inputs, out = _scan_graph()
    found = choose(_fgraph(inputs, [out]))
    assert found.name == "numba" and "inner loop" in found.reason


@needs_numba
def test_an_inner_function_gets_numba() -> None:
    from pytensor.compile.builders import OpFromGraph

    a = pt.vector("a")
    inner = OpFromGraph([a], [a * 2 + 1])
    x = pt.vector("x")
    assert choose(_fgraph([x], [inner(x).sum()])).name == "numba"


@needs_numba
@needs_cxx
def test_indexing_by_an_integer_array_gets_numba_and_by_a_slice_cvm(blas: None) -> None:
    """bench/workloads.py's hierarchical logp: cvm 1.2x slower than numba (issue 62)."""
    theta, group, y = pt.vector("theta"), pt.lvector("group"), pt.vector("y")
    gathered = ((y - theta[group]) ** 2).sum()
    found = choose(_fgraph([theta, group, y], [gathered]))
    assert found.name == "numba" and "integer array" in found.reason
    scattered = _fgraph([theta, group, y], [pytensor.grad(gathered, theta)])  # its gradient: a scatter
    assert choose(scattered).name == "numba"
    matrix_index = _fgraph([theta, group], [theta[group.reshape((2, -1))].sum()])  # AdvancedSubtensor
    assert choose(matrix_index).name == "numba"
    assert choose(_fgraph([theta], [theta[1:3].sum() + theta[0]])).name == "cvm"  # basic indexing


@needs_numba
@needs_cxx
def test_matrix_products_get_numba_without_a_blas_for_c_and_cvm_with_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    X, W, w = pt.matrix("X"), pt.matrix("W"), pt.vector("w")
    matrices = _fgraph([X, W], [pt.tanh(X @ W).sum()])
    matvec = _fgraph([X, w], [pt.sigmoid(X @ w).sum()])
    monkeypatch.setattr(auto, "_c_has_blas", lambda: False)
    found = choose(matrices)
    assert found.name == "numba" and "no BLAS" in found.reason
    assert choose(matvec).name == "cvm"  # a matrix-vector product: cvm's overhead wins
    monkeypatch.setattr(auto, "_c_has_blas", lambda: True)
    assert choose(matrices).name == "cvm"


@needs_cxx
def test_a_profiled_compile_gets_a_vm_linker_whatever_the_graph() -> None:
    inputs, out = _scan_graph()
    found = choose(_fgraph(inputs, [out]), profiled=True)
    assert found.name == "cvm" and "profiled" in found.reason


@needs_numba
def test_without_a_compiler_numba_comes_next(monkeypatch: pytest.MonkeyPatch, blas: None) -> None:
    real = auto.why_unavailable
    monkeypatch.setattr(auto, "why_unavailable", lambda name: "no compiler" if name == "cvm" else real(name))
    x = pt.vector("x")
    found = choose(_fgraph([x], [x + 1]))
    assert found.name == "numba" and "no C++ compiler" in found.reason


@needs_numba
def test_a_compiled_function_runs_on_the_chosen_linker_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    inputs, out = _scan_graph()
    with caplog.at_level(logging.DEBUG, logger="modecfg.linkers"):
        f = pytensor.function(inputs, out)  # PyTensor's door: PyMC compiles this way
    assert describe_linker(f.maker.linker) == "numba"
    assert chosen(f).startswith("numba: the graph has an inner loop")
    assert any("linker=per_graph chose numba" in r.getMessage() for r in caplog.records)
    data = np.arange(12.0).reshape(4, 3) / 10
    h = np.zeros(3)
    for row in data:
        h = np.tanh(row + h)
    expected = h.sum()
    np.testing.assert_allclose(f(data), expected)


@needs_numba
def test_updates_are_applied_on_the_chosen_linker() -> None:
    inputs, out = _scan_graph()
    w = pytensor.shared(1.0, "w")
    f = modecfg.function(inputs, out, updates=[(w, w * 2)])
    f(np.ones((2, 3)))
    f(np.ones((2, 3)))
    assert w.get_value() == 4.0


def test_a_pinned_linker_is_not_second_guessed() -> None:
    inputs, out = _scan_graph()
    with modecfg.config.override(linker="vm"):
        f = modecfg.function(inputs, out)
    assert chosen(f) == "" and describe_linker(f.maker.linker) == "vm"


def test_without_a_compiler_or_numba_auto_gives_vm(monkeypatch: pytest.MonkeyPatch, blas: None) -> None:
    """The README: with no compiler and no numba, linker=auto runs graphs on vm (scan included)."""
    real = auto.why_unavailable
    monkeypatch.setattr(
        auto, "why_unavailable", lambda name: "missing" if name in ("cvm", "numba") else real(name)
    )
    x = pt.vector("x")
    found = choose(_fgraph([x], [x + 1]))
    assert found.name == "vm" and "no C++ compiler" in found.reason
    inputs, out = _scan_graph()
    assert choose(_fgraph(inputs, [out])).name == "vm"


def test_a_profile_header_names_the_linker_auto_chose() -> None:
    from modecfg.profiles.rows import ProfileReport

    x = pt.vector("x")
    fn = modecfg.function([x], pt.exp(x).sum(), profile=True)  # linker=auto, the default
    fn(np.ones(3))
    header = ProfileReport.from_stats(fn.profile).text().splitlines()[1]
    expected = "cvm" if not modecfg.linkers.why_unavailable("cvm") else "vm"  # a profile needs a VM
    assert header.endswith(f"; linker {expected} (linker=per_graph)"), header


@pytest.mark.parametrize(
    ("has_blas", "rule"),
    [
        (
            False,
            "chosen per graph: numba for scan and inner functions, and for indexing by integer arrays, "
            "and for matrix-matrix products (no BLAS for C); {best} otherwise",
        ),
        (
            True,
            "chosen per graph: numba for scan and inner functions, and for indexing by integer arrays "
            "(a BLAS for C); {best} otherwise",
        ),
    ],
)
def test_the_rule_doctor_and_linkers_print_says_what_per_graph_does_here(
    monkeypatch: pytest.MonkeyPatch, has_blas: bool, rule: str
) -> None:
    monkeypatch.setattr(auto, "_c_has_blas", lambda: has_blas)
    monkeypatch.setattr(auto, "why_unavailable", lambda name: "")
    assert auto.rule_here() == rule.format(best=best_linker())


def test_without_numba_the_rule_names_the_one_linker_left(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auto, "why_unavailable", lambda name: "not installed" if name == "numba" else "")
    assert auto.rule_here() == f"{best_linker()} for every graph (numba is not usable here)"


def test_the_rule_said_is_the_rule_applied(monkeypatch: pytest.MonkeyPatch) -> None:
    """rule_here() and choose() read one table (auto.RULES): a step added there is both said and
    applied, with its own words and reason."""
    x = pt.matrix("x")

    def has_exp(fgraph: Any) -> bool:
        ops = [getattr(n.op, "scalar_op", None) for n in fgraph.apply_nodes]
        return any(type(op).__name__ == "Exp" for op in ops)

    extra = auto.Rule("vm", "graphs with an exp", "a test step", lambda here: True, has_exp)
    monkeypatch.setattr(auto, "RULES", (extra, *auto.RULES))
    monkeypatch.setattr(auto, "why_unavailable", lambda name: "")
    monkeypatch.setattr(auto, "_c_has_blas", lambda: True)
    assert auto.rule_here() == (
        "chosen per graph: vm for graphs with an exp; numba for scan and inner functions, and for indexing "
        "by integer arrays (a BLAS for C); cvm otherwise"
    )
    assert choose(_fgraph([x], [pt.exp(x)])) == auto.Choice("vm", "a test step")
    assert choose(_fgraph([x], [x + 1])).name == "cvm"
    monkeypatch.setattr(auto, "why_unavailable", lambda name: "" if name in ("vm", "py") else "not here")
    left = auto.Choice("vm", "no C++ compiler: vm is the fastest linker left")
    assert choose(_fgraph([x], [x + 1])) == left


def test_the_rule_is_loaded_at_the_first_compile_that_asks_for_per_graph() -> None:
    """Issue 61: ``per_graph`` waits for ``linker=per_graph``. A fresh process compiles on the
    default linker without loading the rule, then with ``Mode(linker="per_graph")`` it loads it,
    chooses and computes as plain PyTensor does."""
    from tests.fresh import run_json

    out = run_json(
        """
        import json, sys
        import numpy as np, modecfg, pytensor, pytensor.tensor as pt
        from pytensor.compile.mode import Mode
        x = pt.vector("x")
        pytensor.function([x], x * 2)(np.ones(2))
        before = "modecfg.linkers.auto" in sys.modules
        f = pytensor.function([x], x * 2, mode=Mode(linker="per_graph"))
        from modecfg.linkers.auto import chosen
        print(json.dumps({"before": before, "chosen": chosen(f), "out": f(np.ones(2)).tolist()}))
        """
    )
    assert out["before"] is False
    assert out["chosen"].startswith(("cvm: ", "numba: ")) and out["out"] == [2.0, 2.0]
