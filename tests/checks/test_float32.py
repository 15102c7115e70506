"""The float32 check: one finding per origin, the right reason, the user's line, a fix."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import modecfg
from modecfg.checks import Reason, check_float32
from modecfg.checks.enforce import enforce
from tests.conftest import COMPILEDIR

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

ROOT = Path(__file__).resolve().parents[2]
LINES = {
    text.rsplit("# case: ", 1)[1]: i
    for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
    if text.lstrip().startswith('"') and "# case: " in text
}


@pytest.fixture(autouse=True)
def _float32() -> object:
    with modecfg.config.override(floatX="float32"):
        with pytensor.config.change_flags(floatX="float32"):  # graphs are built with PyTensor's floatX
            yield


def _cases() -> dict[str, tuple[object, Reason]]:
    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    return {
        "int32 + float32": (i + f, Reason.INT_FLOAT_UPCAST),  # case: int32 + float32
        "np.float64 scalar": (f * np.float64(2.0), Reason.FLOAT64_CONSTANT),  # case: np.float64 scalar
        "float64 array": (f * np.ones(3), Reason.FLOAT64_CONSTANT),  # case: float64 array
        "int mean": (i.mean(), Reason.SHAPE_ARITHMETIC),  # case: int mean
        "shape": (f * f.shape[0], Reason.SHAPE_ARITHMETIC),  # case: shape
        "exp int": (pt.exp(i), Reason.INT_FLOAT_UPCAST),  # case: exp int
        "shared": (f * pytensor.shared(np.ones(3), name="w64"), Reason.FLOAT64_SHARED),  # case: shared
        "cast": (pt.cast(f, "float64") * 2, Reason.EXPLICIT_CAST),  # case: cast
        "input": (pt.dvector("d") + f, Reason.FLOAT64_INPUT),  # case: input
    }


def _fixed() -> dict[str, object]:
    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    return {
        "int32 + float32": pt.cast(i, "float32") + f,
        "np.float64 scalar": f * np.float32(2.0),
        "float64 array": f * np.ones(3, dtype="float32"),
        "int mean": pt.cast(i, "float32").mean(),
        "shape": f * pt.cast(f.shape[0], "float32"),
        "exp int": pt.exp(pt.cast(i, "float32")),
        "shared": f * pytensor.shared(np.ones(3, dtype="float32")),
        "cast": pt.cast(f, "float32") * 2,
        "input": pt.vector("d") + f,
        "python float": f * 0.1 + 2,
    }


@pytest.mark.parametrize("case", list(LINES))
def test_each_case_has_exactly_one_finding_of_the_right_reason_at_the_right_line(case: str) -> None:
    out, reason = _cases()[case]
    (finding,) = check_float32(out)
    assert finding.reason is reason
    assert finding.source is not None
    assert (finding.source.file, finding.source.line) == (__file__, LINES[case])
    assert finding.fix and finding.op and "float64" in str(finding)


@pytest.mark.parametrize("case", list(_fixed()))
def test_the_fixed_versions_have_none(case: str) -> None:
    assert check_float32(_fixed()[case]) == []


def test_the_operation_is_where_float64_meets_float32() -> None:
    (finding,) = check_float32(_cases()["shared"][0])
    assert finding.op == "Mul" and finding.input_dtypes == ("float32", "float64")
    (finding,) = check_float32(_cases()["int32 + float32"][0])
    assert finding.input_dtypes == ("int32", "float32")
    assert "pt.cast(i, 'float32')" in finding.fix


def test_downstream_float64_are_consequences_not_findings() -> None:
    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    a = i + f  # the origin
    b = pt.exp(a) * 3 + a.sum()
    (finding,) = check_float32(b.mean())
    assert finding.variable is a
    assert len(finding.consequences) >= 4


def test_two_origins_are_two_findings() -> None:
    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    out = (i + f) * pt.cast(f, "float64")
    assert sorted(str(x.reason) for x in check_float32(out)) == [
        "explicit cast",
        "integer/float mixing that upcasts",
    ]


def test_the_demo_graph_has_none() -> None:
    from modecfg.demo import build_graph

    g = build_graph(n_features=8)
    assert check_float32([*g["outputs"], *(u for _, u in g["updates"])]) == []


def test_a_compiled_function_is_checked_before_rewrites(recwarn: pytest.WarningsRecorder) -> None:
    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    fn = modecfg.function([f, i], (i + f).sum(), mode="FAST_RUN")
    (finding,) = check_float32(fn)
    assert finding.reason is Reason.INT_FLOAT_UPCAST and finding.op == "Add"  # not a fused Composite
    fgraph_finding = check_float32(fn.maker.fgraph._modecfg_original)
    assert [x.reason for x in fgraph_finding] == [Reason.INT_FLOAT_UPCAST]


# -- enforcement -----------------------------------------------------------------------------


# The graphs are built first and compiled under the flags: built under warn_float64, PyTensor's
# own check (as each float64 tensor is created) would act before modecfg's check of the compile.


def _compile_bad(door: str, **flags: str) -> object:
    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    out = i + f
    with modecfg.config.override(**flags):
        if door == "modecfg":
            return modecfg.function([f, i], out)  # case-compile
        return pytensor.function([f, i], out)  # case-compile


def _compile_two_bad(door: str, **flags: str) -> object:
    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    d = pt.vector("d", dtype="float64")  # a float64 input: the second place float64 enters
    outputs = [i + f, (d * 2).sum()]
    with modecfg.config.override(**flags):
        if door == "modecfg":
            return modecfg.function([f, i, d], outputs)  # two-compile
        return pytensor.function([f, i, d], outputs)  # two-compile


@pytest.mark.parametrize("door", ["modecfg", "pytensor"])
def test_warn_emits_one_warning_per_finding_at_the_compile_line(door: str) -> None:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _compile_two_bad(door, warn_float64="warn")
    # PyTensor's own warning for each float64 tensor it creates while compiling, as in plain PyTensor
    assert any("You are creating a TensorVariable with float64" in str(r.message) for r in record)
    marked = [
        n
        for n, text in enumerate(Path(__file__).read_text().splitlines(), 1)
        if text.endswith("# two-compile")
    ]
    line = marked[0] if door == "modecfg" else marked[1]
    ours = [r for r in record if issubclass(r.category, modecfg.Float64Warning)]
    assert len(ours) == 2, [str(r.message) for r in ours]
    assert all(r.filename == __file__ and r.lineno == line for r in ours)
    text = " ".join(str(r.message) for r in ours)
    assert "integer/float mixing" in text


def test_raise_raises_with_every_finding() -> None:
    with pytest.raises(modecfg.Float64Error) as info:
        _compile_bad("modecfg", warn_float64="raise")
    assert len(info.value.findings) == 1 and "fix:" in str(info.value)
    assert isinstance(info.value, TypeError)


def test_raise_through_pytensor_function_is_pytensor_s_own_error() -> None:
    """pytensor.function copies the graph first, and PyTensor's check raises at the first float64
    copy, as in plain PyTensor; modecfg.function (and `modecfg check-float32`) give the findings."""
    with pytest.raises(Exception, match="float64 dtype") as info:
        _compile_bad("pytensor", warn_float64="raise")
    assert type(info.value) is Exception


def test_pdb_stops_at_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import pdb

    stops = []
    monkeypatch.setattr(pdb, "set_trace", lambda: stops.append(1))
    _compile_bad("modecfg", warn_float64="pdb")
    assert stops[:1] == [1]


def test_ignore_and_float64_graphs_are_left_alone() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ignored = _compile_bad("modecfg", warn_float64="ignore")
        wide = _compile_bad("modecfg", warn_float64="warn", floatX="float64")  # nothing to enforce
    assert [w for w in caught if issubclass(w.category, modecfg.Float64Warning)] == []
    assert check_float32(ignored)  # the float64 is there: it was let through on purpose
    assert ignored(np.ones(2, "float32"), np.ones(2, "int32")).dtype == "float64"
    assert wide(np.ones(2, "float32"), np.ones(2, "int32")).dtype == "float64"


@pytest.mark.parametrize("how", ["change_flags", "flag"])
def test_warn_float64_reads_back_and_acts_as_pytensor_s_own(how: str) -> None:
    """PyMC's strict_float32 fixture: change_flags(floatX="float32", warn_float64="raise") makes
    creating a float64 tensor an error, as in plain PyTensor (it read back 'ignore' and built it:
    issue 31, item 3)."""
    scope = (
        pytensor.config.change_flags(floatX="float32", warn_float64="raise")
        if how == "change_flags"
        else modecfg.config.override(floatX="float32", warn_float64="raise")
    )
    with scope:
        assert pytensor.config.warn_float64 == "raise" == modecfg.config.warn_float64
        x = pt.vector("x")
        assert x.dtype == "float32"
        with pytest.raises(Exception, match="You are creating a TensorVariable with float64 dtype"):
            pt.vector("y", dtype="float64")
        with pytest.raises(Exception, match="float64 dtype"):
            x * np.float64(2.5)  # an upcast built: the test meant to fail can fail
    pt.vector("z", dtype="float64")  # and after the block, nothing


def test_a_gpu_device_is_always_checked() -> None:
    from pytensor.graph.fg import FunctionGraph

    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    graph = FunctionGraph([f, i], [i + f], clone=False)
    with modecfg.config.override(warn_float64="raise", floatX="float64", device="cuda"):
        with pytest.raises(modecfg.Float64Error):
            enforce(graph)


# -- the command --------------------------------------------------------------------------------


def _run_check(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, "-m", "modecfg", "check-float32", str(script), "--lr", "0.1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
            "MODECFGRC": "",
            "MODECFG_FLAGS": f"floatX=float32,base_compiledir={COMPILEDIR}",  # the tests' cache
        },
    )


def test_the_command_reports_findings_grouped_by_line_and_fails(tmp_path: Path) -> None:
    proc = _run_check(
        tmp_path,
        """
        import sys
        import numpy as np
        import pytensor, pytensor.tensor as pt
        x = pt.vector("x")
        n = pt.vector("n", dtype="int32")
        w = pytensor.shared(np.ones(3), name="w")
        f = pytensor.function([x, n], (x + n).sum() + (x * w).sum())
        assert sys.argv[1:] == ["--lr", "0.1"]
        """,
    )
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "float32 check: float64 enters at 2 line(s) (2 finding(s))" in out
    assert out.index("train.py:7") < out.index("train.py:8")  # in line order
    assert "float64 shared variable" in out and "integer/float mixing" in out


def test_the_command_passes_a_clean_script(tmp_path: Path) -> None:
    proc = _run_check(
        tmp_path,
        """
        import pytensor, pytensor.tensor as pt
        x = pt.vector("x")
        pytensor.function([x], (x * 2).sum())
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "no float64 enters any compiled graph" in proc.stdout


def test_the_command_reports_a_crashing_script(tmp_path: Path) -> None:
    proc = _run_check(tmp_path, "raise RuntimeError('boom')\n")
    assert proc.returncode == 2 and "RuntimeError: boom" in proc.stderr


def _tutorial_with_int32_labels() -> tuple[object, object]:
    """The classic Theano tutorial: its labels are int32, so its cost and gradient are float64."""
    x = pt.matrix("x", dtype="float32")
    y = pt.ivector("y")
    w = pytensor.shared(np.zeros(5, dtype="float32"), name="w")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w)))
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
    cost = xent.mean()
    return cost, pt.grad(cost, w)


def test_the_gradients_float64_seed_folds_into_what_made_the_cost_float64() -> None:
    cost, gw = _tutorial_with_int32_labels()
    findings = check_float32([cost, gw])
    assert [f.reason for f in findings] == [Reason.INT_FLOAT_UPCAST, Reason.INT_FLOAT_UPCAST]
    assert not any("Second" in f.op for f in findings)  # no finding the user cannot act on
    seeds = [v for v in findings[0].consequences if v.owner is not None and "Second" in str(v.owner.op)]
    assert seeds  # what the seed led to is counted with the finding it follows from


def test_an_integer_operand_is_named_by_the_input_it_comes_from() -> None:
    cost, _ = _tutorial_with_int32_labels()
    fixes = [f.fix for f in check_float32(cost)]
    assert fixes and all(
        fix.startswith("the int32 operand is computed from y: declare y float32") for fix in fixes
    )
    assert all("pt.cast(y, 'float32')" in fix for fix in fixes)


def test_a_gradients_cast_back_alone_is_said_at_the_grad_call_with_its_forward_line() -> None:
    from modecfg._pytensor.gradients import GradOrigin
    from modecfg._source import SourceLine
    from modecfg.checks.float32 import Finding, _fold_gradient_seeds

    node = pt.vector("v", dtype="float32").astype("float64").owner  # as the gradient of a cast down makes
    call = SourceLine("train.py", 9, "g = pt.grad(cost, w)")
    forward = SourceLine("train.py", 7, "cost = pt.cast(total, 'float32')")
    node.tag.modecfg_grad = GradOrigin(call, forward)
    cast = Finding(
        None, node, "Cast{float64}", ("float32",), Reason.EXPLICIT_CAST, None, "cast to float32", ()
    )
    (said,) = _fold_gradient_seeds([cast])
    assert said.source == call
    assert said.fix.startswith("the gradient of a cast to float32 at train.py:7 casts back to float64")


def test_a_seed_alone_is_said_at_the_grad_call() -> None:
    from modecfg._pytensor.gradients import GradOrigin
    from modecfg._source import SourceLine
    from modecfg.checks.float32 import Finding, _fold_gradient_seeds

    node = pt.vector("v").sum().owner  # any node: tagged as pt.grad tags the nodes it makes
    call = SourceLine("train.py", 9, "g = pt.grad(cost, w)")
    node.tag.modecfg_grad = GradOrigin(call, None)
    seed = Finding(None, node, "Second", ("float64",), Reason.FLOAT64_CONSTANT, None, "make it float32", ())
    (said,) = _fold_gradient_seeds([seed])
    assert said.source == call and said.fix.startswith("the gradient of a float64 cost is float64")


def _trained(cost_dtype: str = "float64", y_dtype: str = "int32") -> tuple[object, object, object]:
    """A float32 model whose gradient is seeded float64 unless both are float32: a cost cast to
    ``cost_dtype``, labels of ``y_dtype``. Its cost, gradient and compiled training step."""
    x = pt.matrix("x", dtype="float32")
    y = pt.vector("y", dtype=y_dtype)
    w = pytensor.shared(np.zeros(5, dtype="float32"), name="w")
    error = pt.dot(x, w) - y
    cost = pt.cast((error**2).mean(), cost_dtype)
    gw = pt.grad(cost, w)
    step = modecfg.function([x, y], cost, updates=[(w, w - np.float32(0.1) * pt.cast(gw, "float32"))])
    return cost, gw, step


# Each fix the check prints, as the user applies it to _trained.
_APPLIED = {
    "cast to float32 (or config.floatX) instead of float64": {"cost_dtype": "float32"},
    "cast the int32 operand y to float32 before this operation": {"y_dtype": "float32"},
}


@pytest.mark.parametrize(
    "broken", [{"y_dtype": "float32"}, {"cost_dtype": "float32"}, {}], ids=["cost cast", "int labels", "both"]
)  # "int labels": the gradient casts back to float64 what the cost cast down, a finding with no line before
def test_the_printed_fixes_applied_to_a_float64_seeded_gradient_leave_no_finding(broken: dict) -> None:
    """As a user works: check, apply each printed fix, check again (a float64 that follows
    from an earlier one shows once the earlier one is fixed)."""
    kwargs: dict[str, str] = dict(broken)
    for _ in range(2):  # one round per part that is float64
        cost, gw, step = _trained(**kwargs)
        assert gw.dtype == "float32"
        findings = check_float32([cost, gw])
        assert [str(f) for f in check_float32(step)] == [str(f) for f in findings]
        if not findings:
            break
        for finding in findings:
            assert finding.source is not None and finding.source.file == __file__  # at a user's line
            (fix,) = [prefix for prefix in _APPLIED if finding.fix.startswith(prefix)]  # one we know
            kwargs.update(_APPLIED[fix])
    assert kwargs == {"cost_dtype": "float32", "y_dtype": "float32"}  # each broken part had its fix
    fixed_cost, fixed_gw, fixed_step = _trained(**kwargs)
    assert check_float32([fixed_cost, fixed_gw]) == []
    assert check_float32(fixed_step) == []
    assert float(fixed_step(np.ones((3, 5), "float32"), np.ones(3, "float32"))) == 1.0
