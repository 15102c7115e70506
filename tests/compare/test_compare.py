"""CompareMode: backends compared call by call; the node, the rewrite and a reproduction.

The defects are planted (tests/compare/planted.py): ops whose numba implementation is wrong where
their Python one is right, a wrong rewrite for every backend, a wrong one and a stabilising one
of numba's own. The reproduction scripts are run with plain PyTensor, in a process without modecfg.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytensor")
pytest.importorskip("numba")

import pytensor
import pytensor.tensor as pt

import modecfg
from modecfg import config
from modecfg._pytensor.version import pytensor_version
from modecfg.compare.judging import REWRITES, WRITTEN, Settings
from modecfg.compare.mode import CompareMode, reference_linkers
from modecfg.errors import CompareError, CompareWarning, FlagValueError, NanGuardError
from tests.compare import planted
from tests.fresh import installed_module, pythonpath

HERE = os.path.abspath(__file__)

# Each compiles numba (1-15 s): `make mutate` leaves them out (the `slow` marker) and runs the
# fast tests on cvm against py below, which search the node, the loop and the rewrite without it.
_numba = pytest.mark.slow


def _line(text: str) -> int:
    """The line of this file that holds ``text`` (where a planted graph is written)."""
    with open(HERE, encoding="utf-8") as fh:
        return next(n for n, line in enumerate(fh, 1) if text in line and "_line(" not in line)


@pytest.fixture(scope="module", autouse=True)
def _private_repro_dir(repro_dir: Path) -> Path:
    return repro_dir


def _mode(**kwargs: Any) -> CompareMode:
    kwargs.setdefault("linkers", "cvm,py")  # no JAX start-up in every test
    return CompareMode(linker=kwargs.pop("linker", "numba"), **kwargs)


def _fails(f: Any, *args: Any) -> Any:
    with pytest.raises(CompareError) as caught:
        f(*args)
    return caught.value.comparison


def _run_plain(script: str) -> subprocess.CompletedProcess[str]:
    """Run a reproduction as a user would, with plain PyTensor: modecfg is never imported."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env["PYTHONPATH"] = pythonpath()  # for tests.compare.planted, where the planted ops live
    code = (
        "import runpy, sys\n"
        "try:\n"
        f"    runpy.run_path({script!r}, run_name='__main__')\n"
        "finally:\n"
        "    print('modecfg imported:', 'modecfg' in sys.modules)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


# -- planted defects, end to end --------------------------------------------------------------------


@pytest.fixture(scope="module")
def wrong_numba() -> Any:
    x = pt.vector("x")
    y = (planted.wrong_on_numba(x * 2) + 1).sum()  # planted: numba's exp is 1.5x for inputs > 2
    return pytensor.function([x], y, mode=_mode())


@_numba
def test_agreeing_calls_return_the_functions_own_values(wrong_numba: Any) -> None:
    assert wrong_numba(np.array([0.1, 0.2])) == pytest.approx(np.exp(0.2) + np.exp(0.4) + 2)


@_numba
def test_a_wrong_numba_implementation_is_named_with_its_node_line_and_values(wrong_numba: Any) -> None:
    found = _fails(wrong_numba, np.array([0.1, 3.0]))
    (m,) = found.mismatches
    assert (m.output, m.backend) == ("output 0", "numba")
    node = found.node
    assert type(node.node.op) is planted.WrongOnNumba and node.backend == "numba" and node.reference == "py"
    assert (node.source.file, node.source.line) == (HERE, _line("planted: numba's exp is 1.5x"))
    assert node.input_shapes == ((2,),) and node.input_dtypes == ("float64",)
    assert "numba 605.14319024, py 403.42879349" in node.detail  # exp(6) * 1.5 against exp(6)
    assert node.method == "bisection" and node.compiles <= math.ceil(math.log2(node.nodes)) + 2
    assert found.rewrite is None and any("no rewrite is to blame" in n for n in found.notes)
    assert found.skipped == {}
    assert f"reproduction (plain PyTensor): python {found.repro}" in found.describe()


@_numba
def test_the_reproduction_runs_with_plain_pytensor_and_shows_the_difference(wrong_numba: Any) -> None:
    found = _fails(wrong_numba, np.array([0.1, 3.0]))
    assert found.repro is not None and Path(found.repro).with_suffix(".npz").is_file()
    with np.load(Path(found.repro).with_suffix(".npz")) as data:  # no pickle in it
        assert all(data[k].dtype != object for k in data.files)
    run = _run_plain(found.repro)
    assert run.returncode == 1, run.stderr
    assert "numba:\n  [  1.22140276 605.14319024]\npy:\n  [  1.22140276 403.42879349]\n" in run.stdout
    assert "output 0 differs between numba and py" in run.stdout
    assert "modecfg imported: False" in run.stdout


@_numba
def test_a_nan_that_only_numba_makes_is_named(repro_dir: Path) -> None:
    x = pt.vector("x")
    f = pytensor.function([x], pt.exp(planted.nan_on_numba(x - 1)).sum(), mode=_mode())  # NaN on numba
    found = _fails(f, np.array([0.0, 3.0]))
    assert found.mismatches[0].detail.startswith("NaN in 1 of 1 values on numba, 0 on ")
    assert type(found.node.node.op) is planted.NanOnNumba
    assert found.node.source.line == _line("NaN on numba")
    run = _run_plain(found.repro)
    assert run.returncode == 1 and re.search(r"numba:\n  \[ *nan ", run.stdout), run.stderr


def test_the_nan_guard_says_when_a_bad_value_is_the_backends_alone() -> None:
    x = pt.vector("x")
    f = pytensor.function(
        [x], pt.exp(planted.nan_on_numba(x - 1)).sum(), mode=modecfg.NanGuardMode(linker="numba")
    )
    with config.override(**{"NanGuardMode.max_dumps": 0}), pytest.raises(NanGuardError) as caught:
        f(np.array([0.0, 3.0]))
    assert caught.value.bad is None
    assert "not reproduced: the call re-run on the graph as written" in str(caught.value)
    assert "the numba backend's, or a rewrite's (backend-only)" in str(caught.value)
    assert "mode='CompareMode'" in str(caught.value)


@_numba
def test_a_wrong_rewrite_of_every_backend_is_named_with_the_line_it_rewrote() -> None:
    x = pt.vector("x")
    y = (planted.halve(x) + 1).sum()  # planted: a rewrite for every backend drops the halving
    f = pytensor.function([x], y, mode=_mode())
    found = _fails(f, np.array([1.0, 2.0]))
    (m,) = found.mismatches
    assert m.backend == REWRITES and "numba 5, the graph as written 3.5" in m.detail
    rewrite = found.rewrite
    assert rewrite.name == "local_planted_drop_halve" and rewrite.confirmed
    assert rewrite.replaced == "Halve" and rewrite.source.line == _line("planted: a rewrite for every")
    assert rewrite.compiles <= math.ceil(math.log2(rewrite.ran)) + 3
    run = _run_plain(found.repro)
    assert run.returncode == 1, run.stderr
    assert (
        "numba:\n  5.0\nnumba without local_planted_drop_halve:\n  3.5\npy as written:\n  3.5\n" in run.stdout
    )


@_numba
def test_a_wrong_rewrite_of_numbas_own_is_named_on_numba() -> None:
    x = pt.vector("x")
    f = pytensor.function([x], (planted.third(x) * 3).sum(), mode=_mode())  # planted: numba drops it
    found = _fails(f, np.array([3.0]))
    assert [m.backend for m in found.mismatches] == ["numba"]
    assert found.rewrite.name == "local_planted_drop_third" and found.rewrite.backend == "numba"
    assert found.node is None  # numba computes the graph as written right: the rewritten one is wrong
    assert _run_plain(found.repro).returncode == 1


def test_stabilising_rewrites_are_not_reported(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from modecfg.compare import graphs as pytensor_compare

    real, as_written = pytensor_compare.compile_on, []

    def counting(inputs: Any, outputs: Any, linker: str, rewrites: Any = None) -> Any:
        if rewrites is None:
            as_written.append(linker)
        return real(inputs, outputs, linker, rewrites=rewrites)

    monkeypatch.setattr(pytensor_compare, "compile_on", counting)
    x = pt.vector("x")
    numbas_own = pytensor.function([x], planted.unstable(x), mode=_mode())  # NaN as written; numba: 1
    with caplog.at_level("INFO", logger="modecfg"):
        for _ in range(2):
            assert numbas_own(np.array([1000.0, 1.0])).tolist() == [1.0, 1.0]
    assert as_written.count("numba") == 1  # compiled as written once, kept for the later calls
    said = [r.getMessage() for r in caplog.records if "stabilise" in r.getMessage()]
    assert said[0] == ("CompareMode: numba's rewrites stabilise output 0, which makes NaN or Inf as "
                       "written (not reported)")  # fmt: skip
    everyones = pytensor.function([x], pt.log(1 + pt.exp(x)), mode=_mode())  # inf as written; softplus
    assert everyones(np.array([1000.0])).tolist() == [1000.0]


def test_a_backend_that_cannot_run_the_graph_as_written_is_not_a_difference(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """numba's rewrites make exp(x)/exp(x) 1 where the references say NaN; where numba cannot run
    the graph as written, it cannot be told whether its rewrites did it: not a difference, and
    the log says so (issue 59)."""
    from modecfg.compare import graphs as pytensor_compare

    real = pytensor_compare.compile_on

    def as_written_fails_on_numba(inputs: Any, outputs: Any, linker: str, rewrites: Any = None) -> Any:
        if linker == "numba" and rewrites is None:
            raise NotImplementedError("planted: numba cannot compile this graph as written")
        return real(inputs, outputs, linker, rewrites=rewrites)

    monkeypatch.setattr(pytensor_compare, "compile_on", as_written_fails_on_numba)
    x = pt.vector("x")
    f = pytensor.function([x], planted.unstable(x), mode=_mode())
    with caplog.at_level("INFO", logger="modecfg"):
        assert f(np.array([1000.0, 1.0])).tolist() == [1.0, 1.0]  # no CompareError
    assert any("numba's rewrites stabilise" in r.getMessage() for r in caplog.records)


@_numba
def test_a_finite_value_numba_makes_where_the_others_keep_a_nan_is_numbas_own() -> None:
    """PyTensor 3.0.7's numba Max skips NaN (numpy's, C's and Python's keep it): no rewrite made
    it finite, so it is reported; found here while looking for a real difference. PyTensor 3.3.8's
    keeps the NaN: there, nothing differs."""
    from pytensor.compile.mode import Mode

    x = pt.vector("x")
    values = np.array([1.0, np.nan, 2.0])
    f = pytensor.function([x], pt.max(x * 2), mode=_mode())  # a real difference: numba's max
    if np.isnan(pytensor.function([x], pt.max(x * 2), mode=Mode(linker="numba"))(values)):
        assert np.isnan(f(values))  # this PyTensor's numba Max keeps the NaN
        return
    found = _fails(f, values)
    (m,) = found.mismatches
    assert (m.backend, m.reference, m.stabilised) == ("numba", "cvm and py", True)
    assert m.detail == "NaN in 0 of 1 values on numba, 1 on cvm; first at the value: numba 4, cvm nan"
    assert found.node.node.op.__class__.__name__ == "Max" and found.node.source.line == _line("numba's max")
    run = _run_plain(found.repro)
    assert run.returncode == 1 and "numba:\n  4.0\npy:\n  nan\n" in run.stdout, run.stdout + run.stderr


def test_float32_rounding_within_the_tolerance_is_not_reported() -> None:
    x = pt.vector("x", dtype="float32")
    y = pt.cumsum(pt.exp(x) * np.float32(0.1))
    values = np.random.default_rng(0).normal(size=20000).astype("float32")
    assert pytensor.function([x], y, mode=_mode())(values).dtype == np.float32
    exact = pytensor.function([x], y, mode=_mode(rtol=0.0, atol=0.0))
    found = _fails(exact, values)  # the same rounding, with no tolerance: they do differ
    assert "beyond rtol=0, atol=0" in found.mismatches[0].detail


@pytest.fixture
def shared_w() -> Any:
    return pytensor.shared(np.zeros(2), name="w")


@_numba
def test_a_call_that_differs_updates_nothing_unless_it_only_warns(shared_w: Any) -> None:
    x = pt.vector("x")
    f = pytensor.function([x], [], updates={shared_w: shared_w + planted.wrong_on_numba(x)}, mode=_mode())
    with pytest.raises(CompareError) as caught:
        f(np.array([3.0, 0.0]))
    assert caught.value.comparison.mismatches[0].output == "update of w"
    assert shared_w.get_value().tolist() == [0.0, 0.0]
    with config.override(**{"CompareMode.action": "warn"}), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        f(np.array([3.0, 0.0]))
    assert [type(w.message) for w in seen if issubclass(w.category, CompareWarning)] == [CompareWarning]
    assert shared_w.get_value() == pytest.approx([1.5 * np.exp(3.0), 1.0])  # numba's own, written


# -- a mode like the others -------------------------------------------------------------------------


def test_selected_by_name_and_by_flag() -> None:
    x = pt.vector("x")
    with config.override(**{"CompareMode.linkers": "py"}):
        f = pytensor.function([x], pt.exp(x).sum(), mode="CompareMode")
        assert type(f.maker.mode) is CompareMode and f(np.zeros(2)) == 2.0
        with config.override(mode="CompareMode"):
            g = modecfg.function([x], pt.tanh(x).sum())
        assert type(g.maker.mode) is CompareMode and g(np.zeros(2)) == 0.0
    assert "CompareMode" in modecfg.modes.mode_names()


def test_its_arguments_are_checked_as_its_flags() -> None:
    with pytest.raises(FlagValueError, match=r"CompareMode\.linkers") as caught:
        CompareMode(linkers="numba,nonsense")
    assert "cvm" in str(caught.value)  # the valid names
    with pytest.raises(FlagValueError, match=r"CompareMode\.rtol"):
        CompareMode(rtol=-1.0)
    assert CompareMode(linkers=["py", "c|py"]).linker.settings() == (Settings("py:c|py"),)
    assert CompareMode(linkers="numba, cvm").linker.settings() == (Settings("numba:cvm"),)


def test_the_references_are_this_machines_backends_less_the_functions_own() -> None:
    with config.override(**{"CompareMode.linkers": "auto"}):
        auto = reference_linkers("numba")
    assert "numba" not in auto and {"cvm", "py"} <= set(auto)
    assert reference_linkers("cvm", Settings("numba:cvm:py")) == ("numba", "py")


@_numba
def test_a_compared_function_pickles(wrong_numba: Any) -> None:
    again = pickle.loads(pickle.dumps(wrong_numba))
    assert type(again.maker.mode.linker).__name__ == "CompareLinker"
    assert again(np.array([0.1, 0.2])) == pytest.approx(wrong_numba(np.array([0.1, 0.2])))
    with pytest.raises(CompareError):
        again(np.array([0.1, 3.0]))


@_numba
def test_bisection_takes_logarithmically_many_compiles() -> None:
    x = pt.vector("x")
    y = x
    for k in range(40):  # no rewrites: 157 nodes (constants broadcast), the planted one the 131st
        y = planted.wrong_on_numba(y) if k == 26 else y * 1.01 + 0.01
    f = pytensor.function([x], y, mode=_mode(optimizer=None, linkers="py"))
    found = _fails(f, np.array([8.0]))
    node = found.node
    assert type(node.node.op) is planted.WrongOnNumba and (node.position, node.nodes) == (130, 157)
    assert node.compiles == 9 <= math.ceil(math.log2(node.nodes)) + 2  # 1 + 1 + 7 halvings


# -- the command ------------------------------------------------------------------------------------


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "train.py"
    path.write_text(
        "import numpy as np, pytensor, pytensor.tensor as pt\n"
        "from tests.compare import planted\n"
        "x = pt.vector('x')\n" + textwrap.dedent(body),
        encoding="utf-8",
    )
    return str(path)


@_numba
def test_the_command_runs_a_script_in_compare_mode(tmp_path: Path) -> None:
    from modecfg.cli import main

    good = _script(tmp_path, "f = pytensor.function([x], pt.exp(x).sum())\nprint(f(np.ones(2)))\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["compare", "--linkers", "py", good], out, err) == 0, err.getvalue()
    assert out.getvalue().startswith("compare: 1 calls of 1 functions agree on ")
    assert config.mode != "CompareMode"  # put back

    bad = _script(
        tmp_path, "f = pytensor.function([x], planted.wrong_on_numba(x).sum())\nf(np.full(2, 3.0))\n"
    )
    out = io.StringIO()
    with config.override(linker="numba"):
        assert main(["compare", "--linkers", "py", bad], out, io.StringIO()) == 1
    assert "CompareMode: the backends differ" in out.getvalue() and "WrongOnNumba" in out.getvalue()


@_numba
def test_the_comparisons_own_error_blames_no_node_of_the_function() -> None:
    """A difference is raised by CompareMode, not by a node that failed: PyTensor's "the
    operation that failed" notes (its HINT, a line of the user's) would name a node that did
    not fail (a Mul, here)."""
    x = pt.vector("x")
    y = (planted.wrong_on_numba(x) * 2).sum()
    f = pytensor.function([x], y, mode=_mode(linker="cvm", linkers="numba,py"))
    with pytest.raises(CompareError) as caught:
        f(np.array([3.0]))
    assert getattr(caught.value, "__notes__", []) == []
    assert not hasattr(f.vm, "position_of_error")
    with (
        modecfg.config.override(CompareMode__action="warn"),
        warnings.catch_warnings(),
        pytest.raises(CompareWarning) as warned,
    ):
        warnings.simplefilter("error")  # pytest -W error: the warning is raised out of the call
        f(np.array([3.0]))
    assert getattr(warned.value, "__notes__", []) == []


def test_a_graph_that_draws_at_random_compares_and_leaves_jax_out() -> None:
    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    x = pt.vector("x")
    f = pytensor.function([x], x + pt.random.normal(0, 1, size=(3,), rng=rng), mode=_mode(linkers="jax,py"))
    expected = np.random.default_rng(0).normal(size=3)
    assert f(np.zeros(3)) == pytest.approx(expected)  # numba, Python and the graph as written draw alike
    state = object.__getattribute__(f.vm, "_state")
    assert "py" in state.references  # the backends after JAX are compared all the same
    if "jax" in state.references or "jax" in state.skipped:  # JAX is installed
        assert state.skipped["jax"] == "it draws with a generator of its own, not numpy's"


@_numba
def test_a_reference_backend_that_differs_is_named_and_searched_on_its_own_graph() -> None:
    x = pt.vector("x")
    y = (planted.wrong_on_numba(x) * 2).sum()  # numba, here a reference, is the wrong one
    f = pytensor.function([x], y, mode=_mode(linker="cvm", linkers="numba,py"))
    found = _fails(f, np.array([3.0]))
    assert [(m.backend, m.reference) for m in found.mismatches] == [("numba", f"cvm, py and {WRITTEN}")]
    assert found.backends == ("cvm", "numba", "py")
    assert type(found.node.node.op) is planted.WrongOnNumba and found.node.backend == "numba"
    assert _run_plain(found.repro).returncode == 1


def test_the_linkers_flag_through_every_door(tmp_path: Path) -> None:
    """':'-separated as PyTensor's list flags are, so that a flag string can hold it; commas where
    nothing else splits on them; a bad one refused where it was set, naming the valid names."""
    from tests.fresh import run_json

    rc = tmp_path / "rc.toml"
    rc.write_text('[CompareMode]\nlinkers = "py, cvm"\n', encoding="utf-8")
    code = """
        import json, modecfg, pytensor
        from modecfg.compare.mode import reference_linkers
        cfg = modecfg.config
        out = {"linkers": reference_linkers("numba"), "origin": str(cfg.origin("CompareMode.linkers")),
               "to_flags": cfg.to_flags()}
        with pytensor.config.change_flags(CompareMode__linkers="numba"):
            out["change_flags"] = reference_linkers("cvm")
        print(json.dumps(out))
    """
    env = run_json(code, {"THEANO_FLAGS": "floatX=float64,CompareMode.linkers=py:cvm"})
    assert env["linkers"] == ["py", "cvm"] and "CompareMode.linkers=py:cvm" in env["to_flags"]
    assert env["change_flags"] == ["numba"]
    quoted = run_json(code, {"THEANO_FLAGS": 'CompareMode.linkers="py,cvm"'})
    assert quoted["linkers"] == ["py", "cvm"]
    from_rc = run_json(code, {"MODECFGRC": str(rc)})
    assert from_rc["linkers"] == ["py", "cvm"] and from_rc["origin"].startswith(str(rc))
    with pytest.raises(FlagValueError, match=r"no linker named; use auto"):
        config.validated("CompareMode.linkers", " : ")
    with pytest.raises(FlagValueError, match=r"'bogus' is not a linker; valid: auto, or names among .*numba"):
        modecfg.load(env={"THEANO_FLAGS": "CompareMode.linkers=numba:bogus"}).CompareMode.linkers  # noqa: B018


@_numba
def test_a_reproduction_directory_others_may_write_is_refused_and_the_error_still_comes(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    x = pt.vector("x")
    f = pytensor.function([x], planted.wrong_on_numba(x), mode=_mode(linkers="py"))
    with config.override(**{"CompareMode.repro_dir": str(shared)}):
        found = _fails(f, np.array([3.0]))
    assert found.repro is None and list(shared.iterdir()) == []
    assert f"no reproduction written: {shared} is writable by group or others (mode 777)" in "\n".join(
        found.notes
    )
    assert type(found.node.node.op) is planted.WrongOnNumba  # the rest of the finding is there


def test_ordinary_graphs_are_no_false_alarm() -> None:
    """Held-out false alarms of issue 47: softmax (an OpFromGraph whose inner graph the function's
    own compile rewrites in place) and a backend that cannot run a graph at all (float16 on cvm)."""
    m = pt.matrix("m")
    f = modecfg.function([m], pt.special.softmax(m, axis=-1).max(),
                         mode=modecfg.CompareMode(linker="numba", linkers="cvm:py"))  # fmt: skip
    values = np.random.default_rng(0).random((3, 4))
    for _ in range(2):
        assert np.isfinite(f(values))
    from tests.compare.planted import numba_only

    x = pt.vector("x")
    g = modecfg.function([x], numba_only(x).sum(), mode=modecfg.CompareMode(linker="numba", linkers="cvm:py"))
    for _ in range(2):
        assert float(g(np.ones(3))) == 6.0
    skipped = g.vm._state.skipped
    assert skipped["py"] == (
        "it cannot run this graph: NotImplementedError: NumbaOnly has no Python implementation"
    )
    assert set(skipped) == {"py", "cvm", "the graph as written"}


@_numba
def test_a_wrong_op_inside_a_loop_is_found_in_the_step_function_with_its_line_and_a_reproduction() -> None:
    x = pt.matrix("x")

    def step(row: Any, total: Any) -> Any:
        return total + planted.wrong_on_numba(row)  # planted: wrong inside the loop

    totals = pytensor.scan(step, sequences=[x], outputs_info=[pt.zeros(3)], return_updates=False)
    f = modecfg.function([x], totals[-1].sum(), mode=_mode())
    rows = np.array([[0.5, 0.1, 0.2], [1.0, 3.0, 0.5], [0.1, 0.1, 0.1]])
    found = _fails(f, rows)
    assert found.node is not None and type(found.node.node.op).__name__ == "Scan"
    loop = found.loop
    assert loop is not None and (loop.iteration, loop.steps) == (1, 3)  # step 1 has only values <= 2
    assert type(loop.node.node.op) is planted.WrongOnNumba
    if pytensor_version() < (3, 3):
        assert (loop.node.source.file, loop.node.source.line) == (
            HERE,
            _line("planted: wrong inside the loop"),
        )
    else:  # PyTensor 3.3 freezes a loop's graph without the traces of its nodes: no line is guessed
        assert loop.node.source is None
    assert "numba 30.12830538, py 20.08553692" in loop.node.detail  # exp(3) * 1.5 against exp(3)
    assert "inside it, at step 2 of 3" in found.describe()
    run = _run_plain(found.repro)  # the step's node alone, on that step's values
    assert run.returncode == 1, run.stderr
    assert "WrongOnNumba" in Path(found.repro).read_text() and "Scan" not in Path(found.repro).read_text()


def _cvm_mode() -> CompareMode:
    """The C linker compared with Python: its C code compiled once, then read from the cache."""
    return CompareMode(linker="cvm", linkers="py")


def test_a_wrong_c_implementation_is_named_on_cvm_with_its_node_and_a_reproduction() -> None:
    x = pt.vector("x")
    f = modecfg.function([x], (planted.wrong_in_c(x) + 1).sum(), mode=_cvm_mode())  # planted: C is wrong
    assert f(np.array([0.5, 1.0])) == pytest.approx(np.exp(0.5) + np.exp(1.0) + 2)
    found = _fails(f, np.array([0.5, 3.0]))
    assert [(m.backend, m.reference) for m in found.mismatches] == [("cvm", f"py and {WRITTEN}")]
    node = found.node
    assert node is not None and type(node.node.op.scalar_op) is planted.WrongInC
    assert (node.backend, node.reference, node.method) == ("cvm", "py", "per-node values")
    assert (node.source.file, node.source.line) == (HERE, _line("planted: C is wrong"))
    assert "cvm 30.12830538, py 20.08553692" in node.detail and found.loop is None
    run = _run_plain(found.repro)
    assert run.returncode == 1, run.stderr


def test_a_step_wrong_in_c_is_blamed_on_cvm_and_found_in_the_step_not_on_python() -> None:
    """A reference runs its loops' steps on itself: py's loop used to run its step with the loop's
    own mode (cvm), so py and the graph as written computed the step as cvm, and py was blamed."""
    x = pt.matrix("x")

    def step(row: Any, total: Any) -> Any:
        return total + planted.wrong_in_c(row)  # planted: wrong in C inside the loop

    totals = pytensor.scan(step, sequences=[x], outputs_info=[pt.zeros(3)], return_updates=False)
    f = modecfg.function([x], totals[-1].sum(), mode=_cvm_mode())
    found = _fails(f, np.array([[0.5, 0.1, 0.2], [1.0, 3.0, 0.5], [0.1, 0.1, 0.1]]))
    assert [(m.backend, m.reference) for m in found.mismatches] == [("cvm", f"py and {WRITTEN}")]
    assert found.rewrite is None and type(found.node.node.op).__name__ == "Scan"
    loop = found.loop
    assert loop is not None and (loop.iteration, loop.steps) == (1, 3)
    assert type(loop.node.node.op.scalar_op) is planted.WrongInC
    if pytensor_version() < (3, 3):
        assert (loop.node.source.file, loop.node.source.line) == (HERE, _line("planted: wrong in C inside"))
    assert "inside it, at step 2 of 3" in found.describe()


def test_a_wrong_rewrite_of_every_backend_is_found_on_cvm_too() -> None:
    x = pt.vector("x")
    y = (planted.halve(x) + 1).sum()  # planted: dropped by a rewrite on cvm and py alike
    f = modecfg.function([x], y, mode=_cvm_mode())
    found = _fails(f, np.array([1.0, 2.0]))
    (m,) = found.mismatches
    assert m.backend == REWRITES and "cvm 5, the graph as written 3.5" in m.detail
    rewrite = found.rewrite
    assert (rewrite.name, rewrite.backend, rewrite.confirmed) == ("local_planted_drop_halve", "cvm", True)
    assert rewrite.source.line == _line("planted: dropped by a rewrite on cvm")
    assert rewrite.compiles <= math.ceil(math.log2(rewrite.ran)) + 3
    assert found.node is None and found.notes == ()
    text = Path(found.repro).read_text()  # as written: with the rewrites, without the culprit, on py
    assert "('cvm without local_planted_drop_halve', 'cvm', 'o4', 'local_planted_drop_halve')" in text
    assert "('py as written', 'py', None, None)" in text
    run = _run_plain(found.repro)
    assert run.returncode == 1 and "output 0 differs between cvm and py as written" in run.stdout, run.stderr


@_numba
def test_a_loop_the_search_does_not_cover_is_said_so() -> None:
    x = pt.vector("x")
    fib = pytensor.scan(
        lambda a, b: a + planted.wrong_on_numba(b),
        outputs_info=[{"initial": pt.ones((2, 3)), "taps": [-2, -1]}], n_steps=2, return_updates=False,
    )  # fmt: skip
    f = modecfg.function([x], fib.sum() + x.sum(), mode=_mode())
    found = _fails(f, np.ones(2))
    assert found.loop is None
    assert any("the loop's step was not searched" in note for note in found.notes)


@_numba
def test_a_rewrite_name_cannot_become_code_in_a_reproduction(tmp_path: Path, repro_dir: Path) -> None:
    from pytensor.graph.fg import FunctionGraph

    from modecfg.compare.repro import write_repro

    marker = tmp_path / "ran"
    evil = f'local_x"""\nimport pathlib; pathlib.Path({str(marker)!r}).touch()\n"""\x1b[2J'
    x = pt.vector("x")
    graph = FunctionGraph([x], [pt.exp(x)], clone=True)
    path, note = write_repro(graph, list(graph.outputs), [np.ones(2)], "numba", "py", (1e-5, 1e-8),
                             rewrites="fast_run", exclude=evil)  # fmt: skip
    assert path is not None, note
    text = Path(path).read_text()
    assert "\x1b" not in text and "import pathlib" not in text.split('"""')[2]  # not after the docstring
    compile(text, path, "exec")
    run = _run_plain(path)
    assert not marker.exists(), run.stdout + run.stderr


def test_the_calls_that_are_no_difference() -> None:
    """NaN alike on every backend, random draws, outputs that alias inputs or are borrowed, no
    inputs, keyword arguments: no false alarm, no crash."""
    from pytensor.compile.io import Out

    x = pt.vector("x")
    ones = np.ones(3)
    assert np.isnan(modecfg.function([x], pt.log(x - 10), mode=_mode())(ones)).all()
    rng = pytensor.shared(np.random.default_rng(0))
    draw = pt.random.normal(0, 1, size=3, rng=rng)
    plain = pytensor.function([], draw, mode=pytensor.compile.mode.Mode(linker="numba"))()
    np.testing.assert_array_equal(modecfg.function([], draw, mode=_mode())(), plain)  # as PyTensor draws
    np.testing.assert_array_equal(modecfg.function([x], x, mode=_mode())(ones), ones)
    np.testing.assert_array_equal(
        modecfg.function([x], Out(x * 2, borrow=True), mode=_mode())(ones), 2 * ones
    )
    assert float(modecfg.function([], pt.constant(np.arange(3.0)).sum(), mode=_mode())()) == 3.0
    both = modecfg.function([x], [x * 2, x.sum()], mode=_mode())
    assert float(both(x=ones)[1]) == 3.0


def test_a_compared_function_called_from_several_threads_updates_once_a_call() -> None:
    import threading

    x = pt.vector("x")
    w = pytensor.shared(np.zeros(3), name="w")
    f = modecfg.function([x], (w * x).sum(), updates=[(w, w + x)], mode=_mode())
    f(np.ones(3))
    failures: list[BaseException] = []

    def calls() -> None:
        try:
            for _ in range(20):
                f(np.ones(3))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=calls) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    np.testing.assert_array_equal(w.get_value(), np.full(3, 81.0))  # 1 + 4 x 20 calls, each once
    again = pickle.loads(pickle.dumps(f))  # pickled as PyTensor's functions are
    assert float(again(np.ones(3))) == 243.0


def test_a_mode_built_around_a_compare_linker_by_someone_else_rewrites_loops_for_the_wrapped_one(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """PyMC builds ``Mode(linker=mode.linker, optimizer=...)`` from the mode it is given: PyTensor
    3.3 rewrites a scan's inner graph for the stamped linker's class, and knew no CompareLinker
    ("has not registered a Scan inner-graph rewrite", printed at every compile)."""
    from pytensor.compile.mode import Mode

    x = pt.vector("x")
    ys = pytensor.scan(lambda xt, prev: prev + xt, sequences=[x], outputs_info=[pt.zeros(())],
                       return_updates=False)  # fmt: skip
    wrapped = _mode().linker
    f = pytensor.function([x], ys[-1], mode=Mode(linker=wrapped, optimizer="fast_run"))
    assert float(f(np.arange(4.0))) == 6.0
    assert "has not registered" not in capfd.readouterr().err + caplog.text


def test_the_real_differences_the_volume_run_found_are_found_here_too() -> None:
    """PyTensor's own tests under CompareMode found these in PyTensor 3.0.7 (README, Comparing
    backends): JAX's float32 sums accumulate in float32 where the graph says float64."""
    from modecfg._registry.linkers import installed

    if not installed("jax"):
        pytest.skip("jax is not installed")
    import jax

    data = pytensor.shared(np.asarray([1e8, 1, -1e8], dtype="float32"))
    with jax.default_device(jax.devices("cpu")[0]):  # a GPU's reduction order can add 1e8 - 1e8 first
        f = modecfg.function([], data.sum(), mode=_mode(linkers="jax:py"))
        found = _fails(f)
    assert (
        found.mismatches[0].backend == "jax" and "jax 0, the graph as written 1" in found.mismatches[0].detail
    )


def test_what_a_reference_warns_is_said_once_a_function_at_the_users_line() -> None:
    """Issue 60: JAX's own UserWarnings ("Skipping Assert ... as JAX tracing would remove it")
    came through CompareMode at functools.py, once per node; now one note a function."""
    from pytensor.raise_op import Assert

    from modecfg._registry.linkers import installed
    from modecfg.errors import ModecfgWarning

    if not installed("jax"):
        pytest.skip("jax is not installed")
    x = pt.vector("x", dtype="float64")
    checked = Assert("x is positive")(x, pt.all(x > 0)) * 2
    checked_too = Assert("x is small")(checked, pt.all(x < 100))
    f = pytensor.function([x], checked_too.sum(), mode=_mode(linkers="jax"))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            assert float(f(np.ones(3))) == 6.0
    assert [(w.category, Path(w.filename).name) for w in seen] == [(ModecfgWarning, Path(__file__).name)]
    note = str(seen[0].message)
    assert note.startswith(
        "CompareMode: a backend this function is compared with warned while it ran the graph"
    )
    assert "Skipping Assert{msg='x is positive'}" in note and "Skipping Assert{msg='x is small'}" in note


def test_a_function_an_installed_library_calls_notes_at_the_line_that_called_the_library(
    tmp_path: Path,
) -> None:
    """Issue 60 (PyMC's journey): a function PyMC compiled and calls inside ``pm.sample`` noted
    what JAX warned at PyMC's line (pymc/pytensorf.py:621); the line is the script's that called
    the installed library."""
    from pytensor.raise_op import Assert

    from modecfg._registry.linkers import installed
    from modecfg.errors import ModecfgWarning

    if not installed("jax"):
        pytest.skip("jax is not installed")
    samplerlib = installed_module(tmp_path, "samplerlib", "def sample(f, value):\n    return f(value)\n")
    x = pt.vector("x", dtype="float64")
    f = pytensor.function([x], Assert("x is positive")(x, pt.all(x > 0)).sum(), mode=_mode(linkers="jax"))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        assert float(samplerlib.sample(f, np.ones(3))) == 3.0
    assert [(w.category, w.filename, w.lineno) for w in seen] == [(ModecfgWarning, __file__, line)]


def test_a_note_says_five_of_the_references_warnings_and_counts_the_rest() -> None:
    from modecfg.compare.mode import ComparedVM, _State
    from modecfg.errors import ModecfgWarning

    vm = ComparedVM.__new__(ComparedVM)  # what _note reads of a compared function: its state
    vm._state = _State()
    caught = [warnings.WarningMessage(f"note {n}\nmore lines", UserWarning, "f.py", n) for n in range(7)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        vm._note(caught + caught[:2])  # a repeat is said once
        vm._note(caught)  # and what was said is not said again
        vm._note([warnings.WarningMessage("note 7", UserWarning, "f.py", 7)])
        vm._note([warnings.WarningMessage(UserWarning(""), UserWarning, "f.py", 8)])  # no text: its kind
    assert [w.category for w in seen] == [ModecfgWarning] * 3
    assert str(seen[0].message).endswith(": note 0; note 1; note 2; note 3; note 4; and 2 more")
    assert str(seen[1].message).endswith("values): note 7")
    assert str(seen[2].message).endswith("values): UserWarning")
