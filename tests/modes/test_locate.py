"""Errors of compiled functions name the user's line, whatever the optimizer and linker."""

from __future__ import annotations

import numpy as np
import pytest

import modecfg
from modecfg.linkers import table

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

X_SHAPE, Y_SHAPE = 3, 4
MISMATCH_LINE = next(
    i
    for i, text in enumerate(open(__file__).read().splitlines(), 1)
    if text.endswith("this line must be named")
)


def _graph() -> tuple[list[object], object, int]:
    x = pt.vector("x")
    y = pt.vector("y")
    z = pt.exp(x) * 2
    w = z + y  # the mismatch: this line must be named
    out = (w**2).sum()
    return [x, y], out, MISMATCH_LINE


@pytest.fixture(scope="module")
def graph() -> tuple[list[object], object, int]:
    return _graph()


def _fail(f: object, linker: str = "") -> Exception:
    """The mismatch's error: a ValueError, or (PyTorch's compiler) a RuntimeError about broadcasting."""
    errors = (ValueError, RuntimeError) if linker == "pytorch" else (ValueError,)
    with pytest.raises(errors, match=r"dimension mismatch|shape mismatch|shapes|broadcast") as info:
        f(np.ones(X_SHAPE), np.ones(Y_SHAPE))  # type: ignore[operator]
    return info.value


LINKERS = [r.name for r in table() if r.available and r.name not in ("c",)]


@pytest.mark.parametrize("linker", LINKERS)
def test_a_shape_mismatch_names_the_users_line_under_fast_run(linker: str, graph: tuple) -> None:
    inputs, out, line = graph
    with modecfg.config.override(linker=linker):
        f = modecfg.function(inputs, out, mode="FAST_RUN")
    exc = _fail(f, linker)
    assert exc.modecfg_location == (__file__, line)  # type: ignore[attr-defined]
    note = "\n".join(getattr(exc, "__notes__", []))
    assert f"created at {__file__}:{line}" in note
    assert "w = z + y" in note
    assert f"on inputs of shapes ({X_SHAPE},), ({Y_SHAPE},)" in note


def test_the_single_module_c_linker_too(graph: tuple) -> None:
    inputs, out, line = graph
    if "c" not in [r.name for r in table() if r.available]:
        pytest.skip("no C compiler")
    with modecfg.config.override(linker="c"):
        f = modecfg.function(inputs, out, mode="FAST_RUN")
    assert _fail(f).modecfg_location == (__file__, line)  # type: ignore[attr-defined]


def test_pytensor_function_gets_the_same_help(graph: tuple) -> None:
    inputs, out, line = graph
    f = pytensor.function(inputs, out)
    assert _fail(f).modecfg_location == (__file__, line)  # type: ignore[attr-defined]


def test_without_rewrites_the_failing_node_names_itself(graph: tuple) -> None:
    inputs, out, line = graph
    with modecfg.config.override(optimizer="None"):
        f = modecfg.function(inputs, out)
    exc = _fail(f)
    assert exc.modecfg_location == (__file__, line)  # type: ignore[attr-defined]
    assert "re-running" not in "\n".join(exc.__notes__)


def test_exception_verbosity_high_adds_the_creation_stack(graph: tuple) -> None:
    inputs, out, line = graph
    f = modecfg.function(inputs, out)
    with modecfg.config.override(exception_verbosity="high"):
        with pytensor.config.change_flags(exception_verbosity="high"):  # read at call time
            exc = _fail(f)
    note = "\n".join(exc.__notes__)
    assert "created by (innermost last):" in note
    assert f"{__file__}:{line} in _graph" in note
    assert "Apply node that caused the error" in str(exc)  # PyTensor's own detail is kept


@pytest.mark.parametrize("linker", ["numba", "cvm"])
def test_under_exception_verbosity_high_the_error_is_printed_once_and_its_hint_is_true(
    linker: str, graph: tuple
) -> None:
    """Issue 50: the error printed twice (PyTensor's longer copy raised "during handling of" the
    first), and a hint to set exception_verbosity=high where it is high."""
    import traceback

    inputs, out, _ = graph
    with modecfg.config.override(linker=linker):
        f = modecfg.function(inputs, out)
    with modecfg.config.override(exception_verbosity="high"):
        exc = _fail(f)
    printed = "".join(traceback.format_exception(exc))
    assert printed.count("Traceback (most recent call last)") == 1 and "During handling" not in printed
    assert "Use the PyTensor flag `exception_verbosity=high`" not in printed
    if linker == "numba":  # no storage map to show: said so
        assert (
            "(no storage map footprint: this function's linker keeps none; linker=cvm shows one)" in printed
        )
    else:
        assert "TotalSize:" in printed and "no storage map footprint" not in printed
    with modecfg.config.override(exception_verbosity="low"):
        low = _fail(f)
    assert low.__suppress_context__ is False  # the error as raised: nothing to fold


def test_with_no_trace_kept_it_says_so_instead_of_guessing() -> None:
    with pytensor.config.change_flags(traceback__limit=0):
        inputs, out, _ = _graph_without_trace()
    f = modecfg.function(inputs, out)
    exc = _fail(f)
    assert not hasattr(exc, "modecfg_location")
    assert "no line of your code is recorded" in "\n".join(exc.__notes__)


def _graph_without_trace() -> tuple[list[object], object, int]:
    x = pt.vector("x")
    y = pt.vector("y")
    return [x, y], ((pt.exp(x) * 2 + y) ** 2).sum(), 0


def test_a_successful_call_is_untouched(graph: tuple) -> None:
    inputs, out, _ = graph
    f = modecfg.function(inputs, out)
    assert f(np.zeros(X_SHAPE), np.zeros(X_SHAPE)) == pytest.approx(4.0 * X_SHAPE)


def test_the_untouched_graph_is_the_one_written_and_is_built_only_when_asked() -> None:
    """Rewrites change node inputs in place; what the compile kept is the graph before them,
    kept as plain tuples (no clone) until an error, a NaN or a check asks for it."""
    from pytensor.graph.basic import equal_computations

    from modecfg._pytensor import marks
    from modecfg._pytensor.locate import untouched

    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    out = pt.log(pt.exp(x)) * 2 + (x * w).sum()  # log(exp(x)) is rewritten away, the rest fused
    f = modecfg.function([x], out, updates=[(w, w * 2)], mode="FAST_RUN")
    fgraph = f.maker.fgraph
    assert isinstance(getattr(fgraph, marks.ORIGINAL), tuple)  # nothing built by the compile
    rewritten_nodes = {node: tuple(node.inputs) for node in fgraph.apply_nodes}
    kept = untouched(fgraph)
    assert untouched(fgraph) is kept  # built once
    assert equal_computations(kept.outputs, [out, w * 2], kept.inputs, [x, w])
    assert {str(n.op) for n in kept.apply_nodes} >= {"Log", "Exp"}
    assert {node: tuple(node.inputs) for node in fgraph.apply_nodes} == rewritten_nodes  # left as it was
    assert not set(kept.variables) & set(fgraph.variables)  # clones, not the compiled graph's
    assert f(np.array([0.0, 1.0, 2.0])) == pytest.approx([3.0, 5.0, 7.0])


@pytest.mark.parametrize(
    "linker",
    [
        "cvm",
        "py",
        pytest.param(
            "numba", marks=[pytest.mark.slow, pytest.mark.skipif("numba" not in LINKERS, reason="no numba")]
        ),
    ],
)  # JAX cannot run this loop (a shape it traces), with plain PyTensor as with modecfg
def test_a_loop_is_kept_as_written_because_no_compile_changes_its_step_in_place(linker: str) -> None:
    """locate.remember keeps a Scan's op as it is (no clone): this PyTensor's rewrites, on every
    linker, must make new Scan ops rather than change one's step graph in place."""
    from pytensor.compile.mode import Mode
    from pytensor.scan.op import Scan

    from modecfg._pytensor.locate import untouched

    xs = pt.matrix("xs")
    wh = pytensor.shared(np.eye(3) * 0.5, name="wh")
    hs = pytensor.scan(lambda x, h: pt.tanh(x + h @ wh), sequences=[xs], outputs_info=[pt.zeros(3)],
                       return_updates=False)  # fmt: skip
    cost = hs[-1].sum()
    outputs = [cost, *pytensor.grad(cost, [wh])]

    def steps() -> list[tuple[object, list[str], list[tuple[int, ...]]]]:
        loops = [v.owner.op for v in pytensor.graph.ancestors(outputs)
                 if v.owner is not None and isinstance(v.owner.op, Scan)]  # fmt: skip
        return [(op.fgraph, [str(n.op) for n in op.fgraph.toposort()],
                 [tuple(map(id, n.inputs)) for n in op.fgraph.toposort()]) for op in loops]  # fmt: skip

    before = steps()
    f = modecfg.function([xs], outputs, mode=Mode(linker=linker, optimizer="fast_run"))
    assert len(before) == 2 and steps() == before
    kept = untouched(f.maker.fgraph)
    assert sum(isinstance(n.op, Scan) for n in kept.apply_nodes) == 2
    from modecfg.compare.graphs import compile_on

    again = compile_on(kept.inputs, kept.outputs, "py", rewrites=None)
    for ours, written in zip(f(np.ones((4, 3))), again([np.ones((4, 3)), wh.get_value()]), strict=True):
        np.testing.assert_allclose(ours, written)  # the graph kept still computes what was written


def test_the_nan_guard_builds_the_untouched_graph_at_the_first_bad_value_only(tmp_path: object) -> None:
    from modecfg._pytensor import marks

    x = pt.vector("x")
    f = modecfg.function([x], pt.log(x), mode="NanGuardMode")
    f(np.ones(2))
    assert isinstance(getattr(f.maker.fgraph, marks.ORIGINAL), tuple)  # compiled and called: not built
    with modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}):
        with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
            f(-np.ones(2))
    assert not isinstance(getattr(f.maker.fgraph, marks.ORIGINAL), tuple)
