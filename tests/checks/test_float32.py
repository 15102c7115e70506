"""The float32 check: one finding per origin, the right reason, the user's line, a fix."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.checks import Reason, check_float32
from modecfg.checks.enforce import enforce
from tests.conftest import COMPILEDIR
from tests.fresh import pythonpath

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

ROOT = Path(__file__).resolve().parents[2]
LINES = {
    text.rsplit("# case: ", 1)[1]: i
    for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
    if text.lstrip().startswith('"') and "# case: " in text
}

SOURCE = Path(__file__).read_text().splitlines()
MARKED = {text.rsplit("# report: ", 1)[1]: i for i, text in enumerate(SOURCE, 1) if "# report: " in text}


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
    # PyTensor's own warning for each float64 tensor it creates while compiling: folded into ours
    assert not any("You are creating a TensorVariable with float64" in str(r.message) for r in record)
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


def test_under_warn_pytensors_creation_time_warnings_are_folded_into_one_per_finding() -> None:
    """Issue 50: 11 PyTensor UserWarnings for one finding. Built and compiled under
    floatX=float32, warn_float64=warn: one Float64Warning (the finding), no PyTensor warning;
    PyTensor is shown 'ignore' where modecfg checks, and its own warnings where it does not."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with modecfg.config.override(floatX="float32", warn_float64="warn"):
            assert (modecfg.config.warn_float64, pytensor.config.warn_float64) == ("warn", "ignore")
            x = pt.vector("x")
            w = pytensor.shared(np.ones(3))  # float64 data: the one place float64 enters
            pytensor.function([x], (x * w).sum())
    assert [r.category for r in record] == [modecfg.Float64Warning], [str(r.message) for r in record]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with modecfg.config.override(floatX="float64", warn_float64="warn"):  # modecfg checks nothing
            assert pytensor.config.warn_float64 == "warn"
            pt.vector("y")
    assert [r.category for r in record] == [UserWarning]  # PyTensor's own, as without modecfg
    assert pytensor.config.warn_float64 == modecfg.config.warn_float64 == "ignore"


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
            "PYTHONPATH": pythonpath(),
            "MODECFGRC": "",
            "MODECFG_FLAGS": f"floatX=float32,base_compiledir={COMPILEDIR}",  # the tests' cache
        },
    )


def test_the_command_says_a_finding_several_compiles_found_once(tmp_path: Path) -> None:
    """Issue 50: the same finding, repeated for every function compiled from the graph."""
    proc = _run_check(
        tmp_path,
        """
        import numpy as np
        import pytensor, pytensor.tensor as pt
        X = pt.matrix("X", dtype="float64")
        w = pt.vector("w")
        y = pt.dot(X, w)
        f = pytensor.function([X, w], y)
        g = pytensor.function([X, w], y * 2)
        """,
    )
    out = proc.stdout
    assert "float32 check: float64 enters at 1 line(s) (1 finding(s))" in out, out
    assert out.count("float64 input: Dot(float64, float32) -> float64 (in 2 compiled functions)") == 1
    assert "fix: declare the input X as float32: pt.matrix('X', dtype='float32'), or floatX" in out


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
    # never a clean bill for graphs it never saw (a missing import read "no float64 enters any
    # compiled graph" on a machine where the script could not import PyTensor)
    assert proc.stdout.splitlines()[-2:] == [
        "float32 check: incomplete: the script stopped at RuntimeError; only the graphs compiled "
        "before that were checked",
        "float32 check: no float64 enters any compiled graph of those",
    ], proc.stdout


def test_a_script_stopped_after_a_finding_says_the_rest_was_not_checked(tmp_path: Path) -> None:
    proc = _run_check(
        tmp_path,
        """
        import pytensor, pytensor.tensor as pt
        X = pt.matrix("X", dtype="float64")
        pytensor.function([X], X * 2)
        raise KeyError("later")
        """,
    )
    assert proc.returncode == 2 and "KeyError: 'later'" in proc.stderr
    assert "incomplete: the script stopped at KeyError" in proc.stdout
    assert "float32 check: float64 enters at 1 line(s) (1 finding(s))" in proc.stdout


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
    assert said.fix == (
        "the gradient of a cast to float32 at train.py:7 casts back to float64, the dtype of what it "
        "cast: make that float32 (find where float64 enters it), and the gradient follows"
    )
    node.tag.modecfg_grad = GradOrigin(call, None)  # the forward line unknown: said without it
    (unplaced,) = _fold_gradient_seeds([cast])
    assert unplaced.fix.startswith("the gradient of a cast to float32 casts back to float64, the dtype")


def test_a_seed_alone_is_said_at_the_grad_call() -> None:
    from modecfg._pytensor.gradients import GradOrigin
    from modecfg._source import SourceLine
    from modecfg.checks.float32 import Finding, _fold_gradient_seeds

    node = pt.vector("v").sum().owner  # any node: tagged as pt.grad tags the nodes it makes
    call = SourceLine("train.py", 9, "g = pt.grad(cost, w)")
    node.tag.modecfg_grad = GradOrigin(call, None)
    seed = Finding(None, node, "Second", ("float64",), Reason.FLOAT64_CONSTANT, None, "make it float32", ())
    (said,) = _fold_gradient_seeds([seed])
    assert said.source == call and said.fix == (
        "the gradient of a float64 cost is float64 from its first step: make the cost float32 "
        "(find where float64 enters it), and the gradient follows"
    )


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


# -- the report, word for word ------------------------------------------------------------------


def _graphs() -> dict[str, Any]:
    from pytensor.tensor.shape import shape_i, specify_shape

    f = pt.vector("f")
    i = pt.vector("i", dtype="int32")
    d = pt.dvector("d")
    n = f.shape[0]
    twice = d * 2
    return {
        "uint": pt.vector("u", dtype="uint32") + f,  # report: uint
        "output": [pt.dvector("d_out")],  # report: output
        "root": (1 - pt.ivector("y")) * 2 + f,  # report: root
        "roots": (pt.ivector("a") + pt.ivector("b")) + f,  # report: roots
        "unnamed": pt.ivector() + f,  # report: unnamed
        "made": (pt.ivector() * 2) + f,  # report: made
        "mean64": d.mean() + f,  # report: mean64
        "acc": pt.sum(f, acc_dtype="float64", dtype="float64"),  # report: acc
        "shape_i": f * shape_i(f, 0),  # report: shape_i
        "specify": f * specify_shape(pt.ivector("k"), (3,)).shape[0],  # report: specify
        "sizes": f * (n * 2 + n),  # report: sizes
        "via64": f * pt.floor(pt.cast(n, "float64")).astype("int64"),  # report: via64
        "diamond": (twice + twice * 3) + f,  # report: diamond
        "size": [pt.cast(f.shape[0], "float64")],  # report: size
        "isum": f * i.sum(),  # report: isum
        "constant": f * np.float64(2.0),  # report: constant
        "shared": f * pytensor.shared(np.ones(3), name="w64"),  # report: shared
        "cast": pt.cast(f, "float64") * 2,  # report: cast
        "mean": i.mean(),  # report: mean
        "mean32": pt.cast(i.mean(), "float32") * f,  # report: mean32
        "down": pt.cast(d.mean(), "float32") * f,  # report: down
        "sizediv": f * (f.sum() / pt.cast(f.shape[0], "float64")),  # report: sizediv
    }


CAST_ONE = (
    "cast the {0} to float32 before this operation: pt.cast({1}, 'float32'), "
    "or make it float32 where it is created"
)
FROM = (
    "the {0} operand is computed from {1}: declare {1} float32 where it is created "
    "(e.g. pt.vector('{2}', dtype='float32')), or cast it first: pt.cast({2}, 'float32')"
)
INPUT = "declare the input {0} as float32: pt.vector('{0}', dtype='float32'), or floatX"
SHAPES = "shapes and sizes are int64: cast them before the arithmetic, e.g. pt.cast(x.shape[0], 'float32')"
MEAN = (
    "the mean (or a division by a size) of integers is float64: take the mean of a float32 array "
    "(x.astype('float32').mean()) or pass dtype='float32'"
)
CONSTANT = (
    "make the constant float32: np.float32(...) for a scalar, np.asarray(..., dtype='float32') for an array"
)
FOLLOW = "{} float64 variable(s) follow from it downstream"
SHARED = "create the shared variable w64 from a float32 array: pytensor.shared(value.astype('float32'))"

# case -> (the line where float64 enters: its mark, or the variable's), the report after the location
REPORTS: dict[str, tuple[str, list[str]]] = {
    "uint": ("uint", ["integer/float mixing that upcasts: Add(uint32, float32) -> float64",
                      "fix: " + CAST_ONE.format("uint32 operand u", "u")]),
    "output": ("output", ["float64 input: input() -> float64", "fix: " + INPUT.format("d_out")]),
    "root": ("root", ["integer/float mixing that upcasts: Add(int32, float32) -> float64",
                      "fix: " + FROM.format("int32", "y", "y")]),
    "roots": ("roots", ["integer/float mixing that upcasts: Add(int32, float32) -> float64",
                        "fix: " + FROM.format("int32", "b, a", "b")]),
    "unnamed": ("unnamed", ["integer/float mixing that upcasts: Add(int32, float32) -> float64",
                            "fix: " + CAST_ONE.format("int32 operand", "...")]),
    "made": ("made", ["integer/float mixing that upcasts: Add(int32, float32) -> float64",
                      "fix: " + CAST_ONE.format("int32 operand (made by Mul)", "...")]),
    "mean64": ("d = pt.dvector", ["float64 input: Add(float64, float32) -> float64",
                                  "fix: " + INPUT.format("d"), FOLLOW.format(4)]),
    "acc": ("acc", ["explicit cast: Sum{axes=None}(float32) -> float64",
                    "fix: Sum{axes=None} was asked for float64 (a dtype= or acc_dtype= argument): "
                    "ask for float32"]),
    "shape_i": ("shape_i", ["integer mean or division by a shape or size: Mul(float32, int64) -> float64",
                            "fix: " + SHAPES]),
    "specify": ("specify", ["integer mean or division by a shape or size: Mul(float32, int64) -> float64",
                            "fix: " + SHAPES]),
    "sizes": ("sizes", ["integer mean or division by a shape or size: Mul(float32, int64) -> float64",
                        "fix: " + SHAPES]),
    "via64": ("via64", ["integer mean or division by a shape or size: Mul(float32, int64) -> float64",
                        "fix: " + SHAPES]),
    "diamond": ("d = pt.dvector", ["float64 input: Add(float64, float32) -> float64",
                                   "fix: " + INPUT.format("d"), FOLLOW.format(4)]),
    "size": ("size", ["integer mean or division by a shape or size: Cast{float64}(int64) -> float64",
                      "fix: " + MEAN]),
    "isum": ("isum", ["integer/float mixing that upcasts: Mul(float32, int64) -> float64",
                      "fix: " + FROM.format("int64", "i", "i")]),
    "constant": ("constant", ["float64 constant: Mul(float32, float64) -> float64", "fix: " + CONSTANT,
                              FOLLOW.format(2)]),
    "shared": ("shared", ["float64 shared variable: Mul(float32, float64) -> float64", "fix: " + SHARED,
                          FOLLOW.format(1)]),
    "cast": ("cast", ["explicit cast: Cast{float64}(float32) -> float64",
                      "fix: cast to float32 (or config.floatX) instead of float64",
                      FOLLOW.format(1)]),
    "mean": ("mean", ["integer mean or division by a shape or size: Cast{float64}(int64) -> float64",
                      "fix: " + MEAN, FOLLOW.format(2)]),
    # the mean of integers is float64 even when cast back down before it meets float32
    "mean32": ("mean32", ["integer mean or division by a shape or size: Cast{float64}(int64) -> float64",
                          "fix: " + MEAN, FOLLOW.format(2)]),
    # a float64 input cast down before it meets float32: said at its first float64 computation
    "down": ("d = pt.dvector", ["float64 input: Sum{axes=None}(float64) -> float64",
                                "fix: " + INPUT.format("d"), FOLLOW.format(2)]),
    "sizediv": ("sizediv", ["integer mean or division by a shape or size: Cast{float64}(int64) -> float64",
                            "fix: " + MEAN, FOLLOW.format(3)]),
}  # fmt: skip


def _line(mark: str) -> int:
    if mark in MARKED:
        return MARKED[mark]
    return next(i for i, text in enumerate(SOURCE, 1) if mark in text)


@pytest.mark.parametrize("case", list(REPORTS))
def test_the_report_says_where_what_and_how_to_fix_it_word_for_word(case: str) -> None:
    mark, body = REPORTS[case]
    findings = check_float32(_graphs()[case])
    assert len(findings) == 1, str(findings)
    line = _line(mark)
    where = f"{__file__}:{line}: {SOURCE[line - 1].strip()}"
    assert str(findings).splitlines() == [where, *("  " + text for text in body)]
    assert str(findings) == str(findings[0])


def test_an_output_that_is_a_float64_input_is_reported_as_the_input() -> None:
    d = pt.dvector("d")
    (finding,) = check_float32([d, d * pt.vector("f")])
    assert finding.variable is d and finding.reason is Reason.FLOAT64_INPUT
    (alone,) = check_float32(d)
    assert (alone.node, alone.op, alone.input_dtypes) == (None, "input", ())


def test_an_unsigned_integer_too_wide_for_float32_upcasts_and_a_narrow_one_does_not() -> None:
    f = pt.vector("f")
    for dtype in ("uint32", "uint64", "int32", "int64"):
        (finding,) = check_float32(pt.vector("u", dtype=dtype) + f)
        assert finding.reason is Reason.INT_FLOAT_UPCAST and finding.input_dtypes == (dtype, "float32")
    for dtype in ("uint8", "uint16", "int8", "int16"):
        assert check_float32(pt.vector("u", dtype=dtype) + f) == []


def test_several_origins_are_listed_in_graph_order_and_shown_as_a_table() -> None:
    f = pt.vector("f")
    findings = check_float32((f * np.float64(2.0) + pt.dvector("d")) * pt.ivector("j"))
    assert [x.reason for x in findings] == [Reason.FLOAT64_CONSTANT, Reason.FLOAT64_INPUT]
    assert str(findings) == "\n".join(str(x) for x in findings)
    html = findings._repr_html_()
    assert "float32 check: 2 place(s) where float64 enters" in html
    for x in findings:
        assert x.source is not None and escape(str(x.source)) in html and escape(x.source.code) in html
        what = f"{x.reason}: {x.op}({', '.join(x.input_dtypes)}) -> float64"
        assert escape(x.fix) in html and escape(what) in html
    assert "(no line recorded)" not in html


def test_no_finding_reads_as_such_in_text_and_in_a_notebook() -> None:
    findings = check_float32(pt.vector("f") * 2)
    assert findings == [] and str(findings) == "no float64 enters this graph"
    assert findings._repr_html_() == "<p><b>float32 check</b>: no float64 enters this graph</p>"

    class Printer:
        text_seen = ""

        def text(self, text: str) -> None:
            self.text_seen += text

    printer = Printer()
    findings._repr_pretty_(printer, False)  # IPython's display
    assert printer.text_seen == "no float64 enters this graph"


def test_a_finding_without_a_recorded_line_says_so() -> None:
    f = pt.vector("f")
    (finding,) = check_float32(f * np.float64(2.0))
    anonymous = finding._replace(source=None)
    assert str(anonymous).splitlines()[0] == "(no line recorded)"
    html = modecfg.checks.float32.Findings([anonymous])._repr_html_()
    from modecfg._html import html_table

    what = f"{anonymous.reason}: {anonymous.op}({', '.join(anonymous.input_dtypes)}) -> float64"
    row = ("(no line recorded)", "", what, anonymous.fix, len(anonymous.consequences))
    headers = ["where", "code", "what", "fix", "float64 downstream"]
    assert html == html_table(headers, [row], caption="float32 check: 1 place(s) where float64 enters")


def test_a_random_draw_asked_for_float64_is_said_as_asked_not_as_integer_mixing() -> None:
    rng = pytensor.shared(np.random.default_rng(0))
    f = pt.vector("f")
    draw = pt.random.normal(0, 1, size=3, rng=rng, dtype="float64")
    (finding,) = check_float32(f * draw)
    assert finding.reason is Reason.EXPLICIT_CAST and finding.variable is draw
    asked = "was asked for float64 (a dtype= or acc_dtype= argument): ask for float32"
    assert finding.fix == f"{draw.owner.op} {asked}"
    # the generator is no tensor: shown by its kind, beside the dtypes of the others
    assert finding.input_dtypes[0] == type(rng).__name__ and "int64" in finding.input_dtypes


def test_how_an_integer_operand_is_traced_back_to_the_inputs_a_user_can_fix() -> None:
    f = pt.vector("f")
    a = pt.ivector("a")
    two = pt.constant(np.int32(2), name="two")

    def fix(out: Any) -> str:
        (finding,) = check_float32(out)
        assert finding.reason is Reason.INT_FLOAT_UPCAST
        return finding.fix

    # through integer operations only: a float32 it was cast from is no integer input to declare
    assert fix(pt.cast(f, "int32") + f).startswith("cast the int32 operand (made by Cast{int32}) to float32")
    assert fix((a + pt.cast(f, "int32")) + f).startswith(
        "the int32 operand is computed from a: declare a float32"
    )
    assert fix((a + two) + f).startswith(
        "the int32 operand is computed from a: declare a float32"
    )  # no constant


def test_unnamed_and_shape_only_float64_inputs_and_multi_output_origins() -> None:
    f = pt.vector("f")
    (unnamed,) = check_float32(pt.dvector() + f)
    assert (
        unnamed.fix == "declare the input a float64 value as float32: pt.vector(dtype='float32'), or floatX"
    )
    # the declaration fits the input: its number of dimensions, its static shape
    fixes = [check_float32(x.sum() + f)[0].fix for x in (
        pt.dscalar("s"), pt.dmatrix("m"), pt.tensor("t3", dtype="float64", shape=(None,) * 3),
        pt.tensor("t5", dtype="float64", shape=(None,) * 5), pt.tensor("c", dtype="float64", shape=(2, None)),
    )]  # fmt: skip
    assert [fix.split(": ", 1)[1] for fix in fixes] == [
        "pt.scalar('s', dtype='float32'), or floatX", "pt.matrix('m', dtype='float32'), or floatX",
        "pt.tensor3('t3', dtype='float32'), or floatX",
        "pt.tensor('t5', dtype='float32', shape=(None, None, None, None, None)), or floatX",
        "pt.tensor('c', dtype='float32', shape=(2, None)), or floatX",
    ]  # fmt: skip
    (nameless,) = check_float32(pytensor.shared(np.zeros(2)) + f)
    assert (
        nameless.fix
        == "create the shared variable from a float32 array: pytensor.shared(value.astype('float32'))"
    )
    d = pt.dvector("d")
    used_for_its_shape, shape = check_float32(d.shape[0] * f)
    assert used_for_its_shape.variable is d and used_for_its_shape.op.startswith("Shape")
    assert shape.reason is Reason.SHAPE_ARITHMETIC
    assert check_float32([f]) == [] and check_float32(f) == []  # a float32 input as an output
    eigenvectors = pt.linalg.eigh(pt.imatrix("m"))[1]
    (both,) = check_float32(eigenvectors.sum() + f.sum())  # two float64 outputs of one origin
    assert both.variable is eigenvectors.owner.outputs[0] and eigenvectors in both.consequences
    assert len(both.consequences) == 3  # the second output, its sum, the sum with f's


def test_a_size_cast_to_float64_that_meets_float32_is_an_origin_even_when_cast_back() -> None:
    f = pt.vector("f")
    (finding,) = check_float32(pt.cast(f.sum() / pt.cast(f.shape[0], "float64"), "float32") * f)
    assert finding.reason is Reason.SHAPE_ARITHMETIC and finding.op == "Cast{float64}"
    assert len(finding.consequences) == 1  # the division, cast back down before it goes on


def test_the_search_for_a_named_integer_root_stops_after_200_variables() -> None:
    f = pt.vector("f")
    y = pt.lvector("y")
    near = y
    for _ in range(199):
        near = -near
    far = -near  # y is the 201st variable of the search from here
    (found,) = check_float32([f * near])
    assert "computed from y" in found.fix
    (found,) = check_float32([f * far])
    assert "computed from" not in found.fix and "(made by" in found.fix


def test_a_shape_used_twice_in_one_operation_is_still_a_shape() -> None:
    f = pt.vector("f")
    n = f.shape[0]
    (found,) = check_float32([f * pt.cast(n + n, "float64")])
    assert found.reason is Reason.SHAPE_ARITHMETIC


def test_an_operation_without_a_scalar_op_making_float64_of_a_shape() -> None:
    x = pt.matrix("x")
    (found,) = check_float32([(x + pt.eye(x.shape[0], dtype="float64")).sum()])
    assert found.reason is Reason.SHAPE_ARITHMETIC and "Eye" in found.op


def test_a_float64_output_nothing_uses_and_no_line_made_is_still_a_finding() -> None:
    made_elsewhere = pt.constant(np.ones(3))
    made_elsewhere.tag.trace = []  # as a library's helper leaves it: no user line
    (found,) = check_float32([made_elsewhere])
    assert found.reason is Reason.FLOAT64_CONSTANT and found.source is None and found.node is None


@pytest.mark.parametrize(
    "mode",
    [None, "FAST_COMPILE", "JAX", "NanGuardMode", "CompareMode", "DebugMode", "MonitorMode", "ProfileMode"],
)
def test_modecfg_function_under_raise_gives_every_finding_whatever_the_mode(mode: str | None) -> None:
    """The README's recipe (the graph built first, compiled under the flag) holds for every mode:
    the Float64Error with all findings, before PyTensor copies the graph and raises bare."""
    from modecfg.modes.build import backend_missing

    if mode is not None and backend_missing(modecfg.get_mode(mode)):
        pytest.skip(f"{mode}'s backend is not installed here")
    x = pt.vector("x", dtype="float32")
    labels = pt.ivector("labels")
    cost = (labels * pt.log(pt.sigmoid(x))).mean() + (x * np.float64(0.5) ** np.arange(3.0)).sum()
    gradient = pytensor.grad(cost, x)
    with modecfg.config.override(floatX="float32", warn_float64="raise"):
        with pytest.raises(modecfg.Float64Error) as caught:
            modecfg.function([x, labels], [cost, gradient], mode=mode)
    reasons = sorted(f.reason for f in caught.value.findings)  # type: ignore[attr-defined]
    assert len(reasons) == 2 and "2 place(s) where float64 enters" in str(caught.value)
