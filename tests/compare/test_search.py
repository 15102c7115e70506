"""CompareMode's searches (modecfg.compare.search), called directly: the node, the step of a loop,
the rewrite, and the analysis that ties them to a reproduction.

Every defect is planted (tests/compare/planted.py) in C code or in a rewrite, so these tests compile
with cvm against py (C compiled once, then read from the cache): no numba, fast enough for
``make mutate``. Bisection, which CompareMode uses on numba and JAX, is run here on cvm by
taking cvm out of the backends compared node by node.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytensor")

import pytensor
import pytensor.tensor as pt
from pytensor.graph.fg import FunctionGraph

import modecfg
from modecfg import config
from modecfg._source import SourceLine
from modecfg.compare import search
from modecfg.compare.graphs import compile_on
from modecfg.compare.judging import Settings, tolerance
from modecfg.compare.mode import CompareMode
from modecfg.compare.search import DifferingNode, LoopStep, Rewrite
from modecfg.errors import CompareError
from tests.compare import planted
from tests.compare.test_compare import _run_plain

HERE = os.path.abspath(__file__)
C_WRONG = "cvm 30.12830538, py 20.08553692"  # exp(3) * 1.5 against exp(3)
AS_WRITTEN_TOO = "cvm differs on the graph as written too, without rewrites: no rewrite is to blame"


def _line(text: str) -> int:
    with open(HERE, encoding="utf-8") as fh:
        return next(n for n, line in enumerate(fh, 1) if text in line and "_line(" not in line)


@pytest.fixture(scope="module", autouse=True)
def _private_repro_dir(repro_dir: Path) -> Path:
    return repro_dir


def _graph(*outputs: Any) -> FunctionGraph:
    inputs = sorted({v for o in outputs for v in pytensor.graph.graph_inputs([o]) if v.name}, key=str)
    return FunctionGraph(inputs, list(outputs), clone=False)


def _chain() -> tuple[FunctionGraph, Any]:
    """exp(2x), then the C-wrong op of it plus one, times 3: the wrong node in the middle."""
    x = pt.vector("x")
    a = pt.exp(x * 2)
    wrong = planted.wrong_in_c(x + 1)  # planted: the chain's wrong node
    return _graph((wrong * 3).sum() + a.sum()), wrong.owner


# -- small parts --------------------------------------------------------------------------


def test_the_reference_of_each_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    for backend in ("cvm", "numba", "jax", "c|py", "c", "cvm_nogc"):
        assert search.reference_of(backend) == "py"
    for backend in ("py", "vm", "vm_nogc"):
        assert search.reference_of(backend) == "c|py"  # Python's own nodes checked against C's
    import modecfg._registry.linkers as linkers

    monkeypatch.setattr(linkers, "why_unavailable", lambda name: "no C compiler" if name == "c|py" else "")
    assert search.reference_of("py") == "py"


def test_a_backend_label_and_its_linker() -> None:
    plan = type("P", (), {"linker": "numba"})()
    assert search.backend_linker("", plan) == "numba"
    assert search.backend_linker("the function's linker", plan) == "numba"
    assert search.backend_linker("cvm", plan) == "cvm"


def test_the_rewrites_the_references_get_follow_the_optimizer_flag() -> None:
    with config.override(optimizer="fast_compile"):
        assert search.rewrites_query() == "fast_compile"
    with config.override(optimizer="None"):
        assert search.rewrites_query() is None


def test_a_reproductions_tolerances_are_its_first_outputs() -> None:
    f32, f64, i64, c64 = pt.fvector(), pt.dvector(), pt.lvector(), pt.cvector()
    settings = Settings()
    assert search._tolerances([f32, f64], settings) == tolerance("float32") == (1e-4, 1e-5)
    assert search._tolerances([f64], settings) == tolerance("float64")
    assert search._tolerances([c64], settings) == tolerance("complex64")
    assert search._tolerances([i64], settings) == tolerance(None)
    assert search._tolerances([], settings) == tolerance(None)
    own = Settings(rtol=0.5, atol=0.25)
    assert search._tolerances([f32], own) == (0.5, 0.25)


def test_differs_is_a_difference_under_the_modes_settings() -> None:
    a, b = np.array([1.0]), np.array([1.1])
    assert search._differs(a, b, first="cvm", second="py", settings=Settings()) is True
    assert search._differs(a, b, first="cvm", second="py", settings=Settings(rtol=0.2)) is False
    assert search._differs(a, a, first="cvm", second="py", settings=Settings()) is False


def test_an_inputs_value_is_the_calls_or_a_constants() -> None:
    x = pt.vector("x")
    c = pt.constant(np.array([7.0]))
    graph = FunctionGraph([x], [x + c], clone=False)
    assert search._input_value(graph, x, ["given"]) == "given"
    np.testing.assert_array_equal(search._input_value(graph, c, ["given"]), [7.0])
    assert search._input_value(graph, pt.vector("other"), ["given"]) is None


# -- the node -------------------------------------------------------------------------------


def test_the_first_node_that_differs_node_by_node() -> None:
    graph, wrong = _chain()
    found, note = search.find_node(graph, [np.array([0.5, 2.0])], "cvm")
    assert note == "" and found is not None
    order = graph.toposort()
    assert found.node is wrong and (found.position, found.nodes) == (order.index(wrong), len(order))
    assert (found.backend, found.reference, found.method, found.compiles) == (
        "cvm",
        "py",
        "per-node values",
        2,
    )
    assert found.input_shapes == ((2,),) and found.input_dtypes == ("float64",)
    np.testing.assert_array_equal(found.input_values[0], [1.5, 3.0])
    assert found.source == SourceLine(HERE, _line("planted: the chain's wrong node"),
                                      found.source.code if found.source else "")  # fmt: skip
    assert found.grad is None and found.inputs_given == () and found.graph is None
    assert C_WRONG in found.detail


def test_bisection_finds_the_same_node_in_logarithmically_many_compiles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search, "PER_NODE", frozenset())  # cvm searched as numba and JAX are
    graph, wrong = _chain()
    found, note = search.find_node(graph, [np.array([0.5, 2.0])], "cvm")
    assert note == "" and found is not None and found.node is wrong
    assert found.method == "bisection" and C_WRONG in found.detail
    n = len(graph.toposort())
    assert 3 <= found.compiles <= 2 + math.ceil(math.log2(n))  # the reference, all nodes, then halves


@pytest.mark.parametrize("per_node", [True, False])
def test_a_graph_whose_nodes_all_agree_is_said_so_with_the_compiles(
    monkeypatch: pytest.MonkeyPatch, per_node: bool
) -> None:
    if not per_node:
        monkeypatch.setattr(search, "PER_NODE", frozenset())
    graph, _ = _chain()
    found, note = search.find_node(graph, [np.array([0.5, 0.25])], "cvm")  # C is right below 2
    assert found is None
    assert note == (
        "no single node differs when cvm's graph is compiled node by node or in prefixes "
        "(2 compiles): the difference needs the whole function compiled at once"
    )


def test_no_node_search_without_a_second_backend_for_pythons(monkeypatch: pytest.MonkeyPatch) -> None:
    import modecfg._registry.linkers as linkers

    monkeypatch.setattr(linkers, "why_unavailable", lambda name: "no C compiler")
    graph, _ = _chain()
    assert search.find_node(graph, [np.ones(2)], "py") == (
        None,
        "no other backend computes each node of py's graph here (no C compiler)",
    )


def test_memory_no_one_wrote_is_never_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    x = pt.vector("x")
    empty = pt.empty((1000,))  # garbage on each backend, first in the order
    wrong = planted.wrong_in_c(x)
    graph = FunctionGraph([x], [empty, wrong], clone=False)
    for per_node in (True, False):
        if not per_node:
            monkeypatch.setattr(search, "PER_NODE", frozenset())
        found, note = search.find_node(graph, [np.array([3.0])], "cvm")
        assert found is not None and found.node is wrong.owner, note


def test_a_gradient_node_names_its_grad_call() -> None:
    x = pt.vector("x")
    cost = planted.wrong_in_c(x * 1.0).sum()
    (g,) = pytensor.grad(cost, [x])  # planted: the gradient's line
    graph = _graph(g)
    found, _ = search.find_node(graph, [np.array([3.0])], "cvm")
    assert found is not None and found.grad is not None
    assert found.grad.call is not None and found.grad.call.line == _line("planted: the gradient's line")
    assert "part of the gradient" in found.describe() and "created at" not in found.describe()


# -- inside a loop ----------------------------------------------------------------------------


def _loop(step: Any, **kwargs: Any) -> tuple[FunctionGraph, Any]:
    x = pt.matrix("x")
    out = pytensor.scan(step, sequences=[x], return_updates=False, **kwargs)
    graph = _graph(out[-1].sum())
    (loop,) = [n for n in graph.toposort() if type(n.op).__name__ == "Scan"]
    return graph, loop


def _as_found(graph: FunctionGraph, loop: Any, inputs: list[Any]) -> DifferingNode:
    values = compile_on(graph.inputs, loop.inputs, "py", rewrites=None)(inputs)
    return DifferingNode(loop, 0, 1, "cvm", "py", (), (), None, None, "", 1, "per-node values", tuple(values))


ROWS = np.array([[0.5, 0.1, 0.2], [1.0, 3.0, 0.5], [0.1, 0.1, 0.1]])


def test_the_step_of_a_loop_that_differs_from_the_references_state() -> None:
    graph, loop = _loop(lambda row, total: total + planted.wrong_in_c(row), outputs_info=[pt.zeros(3)])
    found, note = search.find_in_loop(_as_found(graph, loop, [ROWS]), "cvm", "cvm")
    assert note == "" and isinstance(found, LoopStep)
    assert (found.iteration, found.steps) == (1, 3)
    inner = found.node
    assert type(inner.node.op.scalar_op) is planted.WrongInC and C_WRONG in inner.detail
    assert inner.graph is not None and inner.node in inner.graph.apply_nodes
    row, state = inner.inputs_given
    np.testing.assert_array_equal(row, ROWS[1])
    np.testing.assert_allclose(state, np.exp(ROWS[0]))  # the reference's state after step 1
    assert found.describe().startswith("inside it, at step 2 of 3 (the state before it the reference's):\n  ")
    assert "\n  " + inner.describe().replace("\n", "\n  ") in found.describe()


def test_a_loop_whose_steps_agree_alone_is_said_so() -> None:
    graph, loop = _loop(lambda row, total: total + pt.exp(row), outputs_info=[pt.zeros(3)])
    assert search.find_in_loop(_as_found(graph, loop, [ROWS]), "cvm", "cvm") == (
        None,
        "no step of the loop differs when run alone (3 steps, each from the reference's state): the "
        "difference needs the whole loop compiled at once",
    )


def test_a_step_that_differs_as_a_whole_only_is_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    graph, loop = _loop(lambda row, total: total + planted.wrong_in_c(row), outputs_info=[pt.zeros(3)])
    monkeypatch.setattr(search, "find_node", lambda *args: (None, "no single node differs (planted)"))
    assert search.find_in_loop(_as_found(graph, loop, [ROWS]), "cvm", "cvm") == (
        None,
        "step 2 of the loop differs, but no single node differs (planted)",
    )


@pytest.mark.parametrize("kind", ["taps", "until", "random"])
def test_loops_the_search_does_not_cover_are_said_so(kind: str) -> None:
    if kind == "taps":
        _, loop = _loop(lambda row, a, b: a + b + planted.wrong_in_c(row),
                            outputs_info=[{"initial": pt.ones((2, 3)), "taps": [-2, -1]}])  # fmt: skip
    elif kind == "random":  # a generator carried from step to step: an untraced state (issue 59)
        from pytensor.graph.traversal import ancestors

        rng = pytensor.shared(np.random.default_rng(0))

        def step(row: Any, gen: Any) -> Any:
            next_gen, draw = pt.random.normal(size=(3,), rng=gen).owner.outputs
            return next_gen, planted.wrong_in_c(row) + draw

        outs = pytensor.scan(step, sequences=[pt.matrix("x")], outputs_info=[rng, None], return_updates=False)
        (loop,) = {v.owner for v in ancestors([outs[-1]]) if v.owner and type(v.owner.op).__name__ == "Scan"}
        assert loop.op.info.n_untraced_sit_sot == 1
    else:
        from pytensor.scan.utils import until

        _, loop = _loop(lambda row: (planted.wrong_in_c(row), until(row.sum() > 100)))
    found = DifferingNode(loop, 0, 1, "cvm", "py", (), (), None, None, "", 1, "", ())
    assert search.find_in_loop(found, "cvm", "cvm") == (
        None,
        "the loop's step was not searched: modecfg searches loops of sequences, one-step states "
        "(outputs_info without taps) and non-sequences",
    )


# -- the rewrite ------------------------------------------------------------------------------


def _halved() -> FunctionGraph:
    x = pt.vector("x")
    return _graph((planted.halve(x) + 1).sum())  # planted: the rewrite drops this halve


def test_the_rewrite_that_makes_the_difference() -> None:
    graph = _halved()
    found, note = search.find_rewrite(graph, [np.array([1.0, 2.0])], "cvm", 0, np.array(3.5))
    assert note == "" and isinstance(found, Rewrite)
    assert (found.name, found.backend, found.replaced, found.confirmed) == (
        "local_planted_drop_halve", "cvm", "Halve", True,
    )  # fmt: skip
    assert found.source is not None and found.source.line == _line("planted: the rewrite drops this halve")
    assert found.ran >= 2 and found.compiles <= math.ceil(math.log2(found.ran)) + 3
    assert found.describe() == (
        f"local_planted_drop_halve (on cvm; it replaced Halve, written at {found.source}: "
        f"{found.source.code})\n  found among the {found.ran} rewrites that changed the graph in "
        f"{found.compiles} compiles"
    )


def test_a_rewrite_described_without_its_line_and_unconfirmed() -> None:
    text = Rewrite("local_x", "numba", "Exp", None, 7, 4, False).describe()
    assert text == (
        "local_x (on numba; it replaced Exp)\n  found among the 7 rewrites that changed the graph in 4 "
        "compiles\n  leaving it alone out does not remove the difference: rewrites after it take part"
    )


def test_no_rewrite_is_blamed_without_rewrites() -> None:
    with config.override(optimizer="None"):
        assert search.find_rewrite(_halved(), [np.ones(2)], "cvm", 0, np.array(2.0)) == (
            None,
            "no rewrites ran (optimizer=None): none to blame",
        )


def test_a_rewritten_graph_that_agrees_when_compiled_again_blames_no_rewrite() -> None:
    assert search.find_rewrite(_halved(), [np.array([1.0, 2.0])], "cvm", 0, np.array(5.0)) == (
        None,
        "the rewritten graph compiled again agrees: the difference is not reproducible",
    )


def test_a_difference_no_rewrite_left_out_removes_blames_none() -> None:
    found, note = search.find_rewrite(_halved(), [np.array([1.0, 2.0])], "cvm", 0, np.array(-1.0))
    assert found is None
    ran = int(note.split("each of the ")[1].split(" ")[0])
    assert ran >= 2 and note == (
        f"cvm differs with each of the {ran} rewrites that ran left out: rewrites PyTensor requires "
        "for it, or none, are to blame"
    )


def test_a_float32_output_is_judged_with_float32s_tolerance() -> None:
    x = pt.fvector("x")
    graph = _graph(x.sum() * np.float32(1.0))
    truth = np.float32(3.0) * (1 + 5e-5)  # within float32's rtol 1e-4, not float64's 1e-5
    assert search.find_rewrite(graph, [np.ones(3, dtype="float32")], "cvm", 0, truth)[0] is None
    assert "not reproducible" in search.find_rewrite(graph, [np.ones(3, dtype="float32")], "cvm", 0, truth)[1]


# -- the analysis, through CompareMode ----------------------------------------------------------


def _fails(f: Any, *args: Any) -> Any:
    with pytest.raises(CompareError) as caught:
        f(*args)
    return caught.value.comparison


def _cvm() -> CompareMode:
    return CompareMode(linker="cvm", linkers="py")


def test_a_rewrite_that_brings_in_an_op_wrong_on_one_backend_is_blamed_there() -> None:
    """cvm computes the graph as written right (Grow in Python) and the rewritten one wrong (the
    rewrite puts an op wrong in C in its place): the rewrite is to blame, on cvm."""
    x = pt.vector("x")
    f = modecfg.function([x], (planted.grow(x) + 1).sum(), mode=_cvm())  # planted: grown in C
    found = _fails(f, np.array([0.5, 3.0]))
    assert found.notes == () and found.node is None and found.loop is None
    rewrite = found.rewrite
    assert (rewrite.name, rewrite.backend, rewrite.replaced, rewrite.confirmed) == (
        "local_planted_grow_in_c", "cvm", "Grow", True,
    )  # fmt: skip
    assert rewrite.source.line == _line("planted: grown in C")
    text = Path(found.repro).read_text()
    assert "('cvm without local_planted_grow_in_c', 'cvm', 'o4', 'local_planted_grow_in_c')" in text
    assert "('py as written', 'py', None, None)" in text
    run = _run_plain(found.repro)
    assert run.returncode == 1, run.stderr
    assert "output 0 differs between cvm and py as written" in run.stdout


def test_a_node_wrong_as_written_is_the_users_node_with_a_reproduction_of_it_alone() -> None:
    x = pt.vector("x")
    f = modecfg.function([x], (planted.wrong_in_c(x) * 2).sum(), mode=_cvm())  # planted: wrong as written
    found = _fails(f, np.array([0.5, 3.0]))
    assert found.notes == (
        "cvm differs on the graph as written too, without rewrites: no rewrite is to blame",
    )
    assert found.rewrite is None and found.loop is None
    node = found.node
    assert node.source.line == _line("planted: wrong as written") and C_WRONG in node.detail
    assert node.graph is None and node.inputs_given == ()
    text = Path(found.repro).read_text()
    assert "Sum(" not in text and "scalar_op=wrong_in_c_scalar" in text  # the node alone
    run = _run_plain(found.repro)
    assert run.returncode == 1 and "differs between cvm and py" in run.stdout, run.stderr


def test_a_loop_analysed_to_its_steps_node_with_a_reproduction_of_it() -> None:
    x = pt.matrix("x")
    totals = pytensor.scan(lambda row, total: total + planted.wrong_in_c(row), sequences=[x],
                           outputs_info=[pt.zeros(3)], return_updates=False)  # fmt: skip
    f = modecfg.function([x], totals[-1].sum(), mode=_cvm())
    found = _fails(f, ROWS)
    assert found.notes == (
        "cvm differs on the graph as written too, without rewrites: no rewrite is to blame",
    )
    assert found.loop is not None and found.loop.iteration == 1
    text = Path(found.repro).read_text()
    assert "Scan" not in text and "scalar_op=wrong_in_c_scalar" in text
    run = _run_plain(found.repro)
    assert run.returncode == 1, run.stderr
    np.testing.assert_array_equal(
        np.load(Path(found.repro).with_suffix(".npz"))["input_0"], ROWS[1]
    )  # the step's own values


def test_the_analysis_uses_the_modes_tolerances() -> None:
    x = pt.vector("x")
    loose = CompareMode(linker="cvm", linkers="py", rtol=1.0, atol=1.0)
    f = modecfg.function([x], (planted.wrong_in_c(x) * 2).sum(), mode=loose)
    assert float(f(np.array([0.5, 3.0]))) == pytest.approx(2 * (np.exp(0.5) + 1.5 * np.exp(3.0)))


# -- the edges of each search -------------------------------------------------------------------


LOOSE = Settings(rtol=10.0, atol=10.0)


def test_the_searches_judge_with_the_settings_given() -> None:
    graph, _ = _chain()
    found, note = search.find_node(graph, [np.array([0.5, 2.0])], "cvm", LOOSE)
    assert found is None and note.startswith("no single node differs")
    loop_graph, loop = _loop(lambda row, total: total + planted.wrong_in_c(row), outputs_info=[pt.zeros(3)])
    as_found = _as_found(loop_graph, loop, [ROWS])
    assert search.find_in_loop(as_found, "cvm", "cvm", LOOSE)[1].startswith("no step of the loop differs")
    assert search.find_rewrite(_halved(), [np.array([1.0, 2.0])], "cvm", 0, np.array(3.5), LOOSE)[1] == (
        "the rewritten graph compiled again agrees: the difference is not reproducible"
    )


@pytest.mark.parametrize("per_node", [True, False])
def test_nodes_are_compared_as_written(monkeypatch: pytest.MonkeyPatch, per_node: bool) -> None:
    """The halving op is dropped by a wrong rewrite of every backend: node by node, as written,
    cvm and py agree (a rewrite is not a node's fault)."""
    if not per_node:
        monkeypatch.setattr(search, "PER_NODE", frozenset())
    found, note = search.find_node(_halved(), [np.array([1.0, 2.0])], "cvm")
    assert found is None and note.startswith("no single node differs"), found
    graph, loop = _loop(lambda row, total: total + planted.halve(row), outputs_info=[pt.zeros(3)])
    assert search.find_in_loop(_as_found(graph, loop, [ROWS]), "cvm", "cvm")[0] is None


@pytest.mark.parametrize("where", ["first", "last"])
def test_bisection_finds_the_first_and_the_last_node(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    monkeypatch.setattr(search, "PER_NODE", frozenset())
    x = pt.vector("x")
    if where == "first":
        wrong = planted.wrong_in_c(x)  # the first node of the order (no constants before it)
        out = pt.exp(pt.log1p(wrong * x)).sum()
    else:
        wrong = planted.wrong_in_c(((x * 2 + 1) * 3).sum())  # the last node
        out = wrong
    graph = _graph(out)
    order = graph.toposort()
    assert order.index(wrong.owner) == (0 if where == "first" else len(order) - 1)
    found, note = search.find_node(graph, [np.array([3.0, 4.0])], "cvm")
    assert note == "" and found is not None and found.node is wrong.owner and found.method == "bisection"
    assert found.compiles == 2 + math.ceil(math.log2(len(order)))  # the reference, all nodes, then halves


def test_a_node_fed_by_the_graphs_input_gets_the_calls_value() -> None:
    x = pt.vector("x")
    wrong = planted.wrong_in_c(x)
    found, _ = search.find_node(_graph((wrong * 2).sum()), [np.array([3.0])], "cvm")
    assert found is not None and found.node is wrong.owner
    np.testing.assert_array_equal(found.input_values[0], [3.0])


def test_random_draws_in_the_graph_are_not_compared_and_do_not_stop_the_search() -> None:
    x = pt.vector("x")
    rng = pytensor.shared(np.random.default_rng(0))
    draw = pt.random.normal(0, 1, size=2, rng=rng)
    wrong = planted.wrong_in_c(x + draw * 0)
    graph = FunctionGraph([x, rng], [wrong.sum()], clone=False)
    found, note = search.find_node(graph, [np.array([3.0, 3.0]), rng.get_value()], "cvm")
    assert found is not None and found.node is wrong.owner, note
    assert search._tolerances([rng], Settings()) == tolerance(None)  # a generator has no dtype


def test_a_rewrite_first_among_those_that_ran_and_the_compiles_counted() -> None:
    x = pt.vector("x")
    graph = _graph(planted.halve(x))  # planted: the only rewrite that changes this graph
    found, note = search.find_rewrite(graph, [np.array([2.0])], "cvm", 0, np.array([1.0]))
    assert note == "" and found is not None and found.name == "local_planted_drop_halve"
    assert found.ran == 1 and found.compiles == 3  # the tracked compile, all left out, it alone left out


def test_the_rewrites_are_the_optimizer_flags() -> None:
    with config.override(optimizer="fast_compile"):  # the planted rewrite is fast_run's only
        assert search.find_rewrite(_halved(), [np.array([1.0, 2.0])], "cvm", 0, np.array(3.5))[1] == (
            "the rewritten graph compiled again agrees: the difference is not reproducible"
        )


def test_a_differing_node_described_in_full() -> None:
    x = pt.vector("x")
    node = pt.exp(x).owner
    line = SourceLine("model.py", 7, "y = pt.exp(x)")
    found = DifferingNode(node, 2, 5, "cvm", "py", ((3,), ()), ("float64", "int8"), line, None,
                          "1 of 3 values differ", 4, "bisection")  # fmt: skip
    assert found.describe() == (
        "Exp (node 3 of 5) on inputs float64(3,), int8()\n"
        "  created at model.py:7: y = pt.exp(x)\n"
        "  1 of 3 values differ\n"
        "  found by bisection on cvm: 4 compiles"
    )
    assert found._replace(source=None).describe().count("\n") == 2  # no line: none said


def test_a_loop_whose_step_is_not_searched_is_a_note_of_the_analysis() -> None:
    x = pt.matrix("x")
    out = pytensor.scan(lambda row, a, b: a + b + planted.wrong_in_c(row), sequences=[x],
                        outputs_info=[{"initial": pt.ones((2, 3)), "taps": [-2, -1]}],
                        return_updates=False)  # fmt: skip
    f = modecfg.function([x], out[-1].sum(), mode=_cvm())
    found = _fails(f, ROWS)
    assert found.loop is None and type(found.node.node.op).__name__ == "Scan"
    assert any(note.startswith("the loop's step was not searched") for note in found.notes)


def test_the_precision_note_is_jaxs_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import modecfg.device.jaxlink as jaxlink

    monkeypatch.setattr(jaxlink, "precision_note", lambda graph: "planted: a GPU's matmul precision")
    x = pt.vector("x")
    found = _fails(modecfg.function([x], planted.wrong_in_c(x).sum(), mode=_cvm()), np.array([3.0]))
    assert not any("planted" in note for note in found.notes)
