"""Test values on PyTensor 3: each flag value, the classic guides' examples, and the edges."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import modecfg
from modecfg.testvalues import contacts
from modecfg.testvalues import values as testvalues
from modecfg.testvalues.values import TestValueWarning
from tests.fresh import pythonpath, run_json


@pytest.fixture(autouse=True)
def _nothing_said_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no operation type said to have no implementation: "said once per
    type" must not depend on which tests ran before in the process (mutmut runs the suite twice
    in one process, and the second run found the type said already)."""
    monkeypatch.setattr(testvalues, "_said", set())


pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

ROOT = Path(__file__).resolve().parents[2]
MISMATCH = next(
    i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if t.endswith("# mismatch")
)


def _mismatch() -> tuple[object, object]:
    x = pt.matrix("x")
    x.tag.test_value = np.random.default_rng(0).random((5, 10))
    y = pt.matrix("y")
    y.tag.test_value = np.random.default_rng(1).random((4, 10))
    z = x + x
    return z, y


def test_raise_stops_at_the_users_line_with_the_op_the_shapes_and_the_error() -> None:
    with modecfg.config.override(compute_test_value="raise"):
        z, y = _mismatch()
        assert z.tag.test_value.shape == (5, 10)  # x + x is fine
        with pytest.raises(modecfg.TestValueError) as info:
            z + y  # mismatch
    msg = str(info.value)
    assert "Add fails on the test values of its inputs (float64(5, 10), float64(4, 10))" in msg
    assert "could not be broadcast" in msg
    assert f"{__file__}:{MISMATCH}" in msg
    assert isinstance(info.value.__cause__, ValueError)
    assert info.traceback[0].lineno + 1 == MISMATCH  # raised from the user's own line


def test_warn_warns_with_the_same_and_carries_on() -> None:
    with modecfg.config.override(compute_test_value="warn"):
        z, y = _mismatch()
        with pytest.warns(TestValueWarning, match="Add fails on the test values") as record:
            f = z + y  # mismatch
        assert record[0].filename == __file__
        assert not hasattr(f.tag, "test_value")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            g = f * 2  # downstream of a failure: no second message
        assert not hasattr(g.tag, "test_value")


@pytest.mark.parametrize("mode", ["DebugMode", "FAST_RUN"])
def test_one_failing_node_is_one_warning_whatever_the_compile_makes_of_it(mode: str) -> None:
    """Issue 60: the tutorial's example compiled under DebugMode printed 21 TestValueWarnings for
    one failing node (20 without a line): the nodes the rewrites make got test values too. A
    compile computes none (Theano's compute_test_value_opt=off); the graph's own were said."""
    with modecfg.config.override(compute_test_value="warn"):
        z, y = _mismatch()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            f = z + y  # mismatch
            cost = (pt.exp(f) * 2 + pt.log(f)).sum() + (f**2).mean()
            pytensor.function([z.owner.inputs[0], y], cost, mode=mode)
    said = [w for w in seen if issubclass(w.category, TestValueWarning)]
    assert len(said) == 1 and said[0].filename == __file__, [str(w.message)[:80] for w in said]


def test_ignore_carries_on_silently() -> None:
    with modecfg.config.override(compute_test_value="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        z, y = _mismatch()
        f = z + y  # mismatch
    assert not hasattr(f.tag, "test_value")


def test_pdb_opens_the_debugger_there(monkeypatch: pytest.MonkeyPatch) -> None:
    import pdb

    stops = []
    monkeypatch.setattr(pdb, "set_trace", lambda: stops.append(1))
    with modecfg.config.override(compute_test_value="pdb"):
        z, y = _mismatch()
        z + y  # mismatch
    assert stops == [1]


def test_off_computes_nothing() -> None:
    """With the wrapper in place (else the test passes for nothing: alone, nothing has
    installed it yet) and the flag off, no node gets a value."""
    from modecfg._pytensor import patches
    from modecfg._pytensor import state as patch_state

    assert patches.enable(contacts.TEST_VALUES) and "test values" in patch_state.applied
    assert modecfg.config.compute_test_value == "off"
    z, _ = _mismatch()
    assert not hasattr(z.tag, "test_value")
    with modecfg.config.override(compute_test_value="warn"):  # the same graph does get one on
        z, _ = _mismatch()
    assert z.tag.test_value.shape == (5, 10)


def test_an_input_without_a_test_value_is_named() -> None:
    with modecfg.config.override(compute_test_value="raise"):
        q = pt.vector("q")
        with pytest.raises(
            modecfg.TestValueError, match=r"its input q has no test value; set q\.tag\.test_value"
        ):
            q * 2


def test_int64_matrix_max_as_in_the_guides() -> None:
    with modecfg.config.override(compute_test_value="raise"):
        data = pt.lmatrix("data")
        data.tag.test_value = np.arange(12, dtype="int64").reshape(3, 4)
        m = data.max()
    assert m.tag.test_value == 11 and m.tag.test_value.dtype == np.int64


def test_shared_variables_and_constants_supply_their_values() -> None:
    with modecfg.config.override(compute_test_value="raise"):
        x = pt.vector("x")
        x.tag.test_value = np.array([1.0, 2.0, 3.0])
        w = pytensor.shared(np.array([2.0, 2.0, 2.0]), name="w")
        out = (x * w + np.array([1.0, 1.0, 1.0])).sum() * 0.5
    np.testing.assert_allclose(out.tag.test_value, (12 + 3) * 0.5)


def test_the_logistic_regression_of_the_guides() -> None:
    rng = np.random.default_rng(0)
    D = (rng.standard_normal((40, 6)), (rng.random(40) > 0.5).astype("float64"))
    with modecfg.config.override(compute_test_value="raise"):
        x = pt.matrix("x")
        x.tag.test_value = D[0]
        y = pt.vector("y")
        y.tag.test_value = D[1]
        w = pytensor.shared(rng.standard_normal(6), name="w")
        b = pytensor.shared(0.0, name="b")
        p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
        xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w**2).sum()
        gw, gb = pytensor.grad(cost, [w, b])
    assert p_1.tag.test_value.shape == (40,)
    f = modecfg.function([x, y], [cost, gw, gb])  # the values agree with the compiled graph
    expected = f(*D)
    np.testing.assert_allclose(cost.tag.test_value, expected[0], rtol=1e-10)
    np.testing.assert_allclose(gw.tag.test_value, expected[1], rtol=1e-10)
    np.testing.assert_allclose(gb.tag.test_value, expected[2], rtol=1e-10)


def test_scan_outputs_get_their_values() -> None:
    with modecfg.config.override(compute_test_value="raise"):
        x = pt.vector("x")
        x.tag.test_value = np.arange(4.0)
        out = pytensor.scan(
            lambda v, acc: acc + v, sequences=x, outputs_info=[pt.zeros(())], return_updates=False
        )
    np.testing.assert_allclose(out.tag.test_value, [0.0, 1.0, 3.0, 6.0])


def test_an_op_that_cannot_compute_says_so_once_per_type_and_never_crashes() -> None:
    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op

    class NoImplementation(Op):
        def make_node(self, x: object) -> Apply:
            x = pt.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node: object, inputs: object, outputs: object) -> None:
            raise NotImplementedError("no Python implementation")

    class NoImplementationAtAll(NoImplementation):
        def make_thunk(self, *args: object, **kwargs: object) -> object:
            from pytensor.graph.utils import MethodNotDefined

            raise MethodNotDefined("no implementation at all")

    with modecfg.config.override(compute_test_value="raise"):
        x = pt.vector("x")
        x.tag.test_value = np.ones(2)
        with pytest.warns(TestValueWarning, match="type NoImplementationAtAll have no implementation"):
            a = NoImplementationAtAll()(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            b = NoImplementationAtAll()(x)  # said once for the type
            c = a + 1  # downstream: silent
    assert not hasattr(b.tag, "test_value") and not hasattr(c.tag, "test_value")
    # the common case (issue 23, item 8): an op whose perform raises NotImplementedError fails
    # on its inputs' values like any other error of the op: raise and warn say which and why
    with modecfg.config.override(compute_test_value="raise"), pytest.raises(modecfg.TestValueError) as info:
        NoImplementation()(x)
    assert "NoImplementation fails on the test values of its inputs (float64(2,))" in str(info.value)
    assert "NotImplementedError: no Python implementation" in str(info.value)
    with modecfg.config.override(compute_test_value="warn"):
        with pytest.warns(TestValueWarning, match="NotImplementedError: no Python implementation"):
            d = NoImplementation()(x)
    assert not hasattr(d.tag, "test_value")


def test_compiling_under_the_flag_is_unaffected() -> None:
    with modecfg.config.override(compute_test_value="raise"):
        x = pt.vector("x")
        x.tag.test_value = np.ones(3)
        f = modecfg.function([x], pt.exp(x).sum() + x.mean())  # rewrites build value-less nodes
    assert f(np.zeros(3)) == pytest.approx(3.0)


def test_nothing_is_wrapped_until_the_flag_is_first_on() -> None:
    code = (
        "import modecfg, pytensor\n"
        "from pytensor.graph.op import Op\n"
        "before = type(Op.__dict__['__call__']).__name__\n"
        "with modecfg.config.override(compute_test_value='warn'):\n"
        "    pass\n"
        "print(before, type(Op.__dict__['__call__']).__name__)\n"
    )
    env = {**os.environ, "PYTHONPATH": pythonpath(), "MODECFGRC": ""}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.split() == ["function", "Method"], proc.stderr  # bound to modecfg's op_call


def test_the_flag_set_in_the_environment_installs_at_import() -> None:
    code = (
        "import numpy as np, modecfg, pytensor.tensor as pt\n"
        "x = pt.vector('x'); x.tag.test_value = np.ones(2)\n"
        "print((x * 3).tag.test_value.sum())\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": pythonpath(),
        "MODECFGRC": "",
        "THEANO_FLAGS": "compute_test_value=raise",
    }
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.strip() == "6.0", proc.stderr


@pytest.mark.parametrize("value", ["off", "warn", "raise"])
def test_the_flag_in_the_environment_says_nothing_at_import_and_scan_values_work(value: str) -> None:
    """THEANO_FLAGS=compute_test_value=... printed a PyTensorIntegrationWarning about a circular
    import of pytensor.scan.basic at every run (the on-demand patch was applied halfway through
    PyTensor's import); now it waits for the import to finish (issue 31's table)."""
    from tests.fresh import run_json

    out = run_json(
        """
        import json, warnings
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as seen:
            import modecfg, numpy as np, pytensor, pytensor.tensor as pt
            x = pt.vector("x")
            x.tag.test_value = np.ones(2)
            y = pytensor.scan(lambda v: v * 2, sequences=[x], return_updates=False)
        value = getattr(y.tag, "test_value", None)
        print(json.dumps({"warnings": [str(w.message) for w in seen if "circular" in str(w.message)
                                       or "integration" in str(w.message)],
                          "value": None if value is None else value.tolist()}))
        """,
        {"THEANO_FLAGS": f"compute_test_value={value}"},
    )
    assert out["warnings"] == [] and "Traceback" not in out["stderr"]
    assert out["value"] == (None if value == "off" else [2.0, 2.0])


_TRACES = """
import json, numpy as np, pytensor, pytensor.tensor as pt
{first}
x = pt.vector("x")
x.tag.test_value = np.ones(2)
def inner():
    return pt.sqrt(x)
out = {{}}
for limit in (1, 2, 3, -1, 0):
    with {scope}(traceback__limit=limit{flag}):
        y = inner()
    out[limit] = [[f[1], f[2]] for f in (y.tag.trace[0] if y.tag.trace else [])]
with {scope}(traceback__limit=1):
    z = pt.exp(x)  # the flag off again, the patch still on
out["after"] = [[f[1], f[2]] for f in z.tag.trace[0]]
made = []
def step(v):
    made.append(pt.sqrt(v))  # made inside the loop's step
    return made[-1]
for limit in (1, 2, 3, 8, -1):
    made.clear()
    with {scope}(traceback__limit=limit{flag}):
        pytensor.scan(step, sequences=x, return_updates=False)
    out[f"scan {{limit}}"] = [[f[1], f[2]] for f in (made[0].tag.trace[0] if made[0].tag.trace else [])]
print(json.dumps(out))
"""


@pytest.mark.skipif(
    "mutmut" in sys.modules, reason="make mutate: frames are counted, and mutmut's trampolines add theirs"
)
def test_a_node_is_traced_from_the_users_line_as_plain_pytensor_traces_it() -> None:
    """The creation trace of a node made through test values' ``Op.__call__`` is the one plain
    PyTensor records: its frame was one of ``traceback.limit``'s, and under ``limit=1`` the node
    named modecfg's line instead of the user's (found by `make mutate`, whose clean run of a
    NaN-guard test met it). A node made in a loop's step too: with the scan patch on, its trace
    stopped at the scan call (found by `make mutate` again: CompareMode named the scan's line,
    not the step's, in a process that had used test values)."""
    plain = run_json(_TRACES.format(first="", scope="pytensor.config.change_flags", flag=""))
    ours = run_json(_TRACES.format(first="import modecfg", scope="modecfg.config.override",
                                   flag=", compute_test_value='warn'"))  # fmt: skip
    plain.pop("stderr"), ours.pop("stderr")
    assert ours == plain
    assert plain["1"] == [[7, "inner"]] and plain["after"] == [[14, "<module>"]]
    # a node made inside a loop's step (issue 62's stop: with the scan patch on, the trace was cut
    # at the patch's outermost frame, and named the scan call instead of the step's line)
    assert plain["scan 1"] == [[18, "step"]] and plain["scan -1"][-1] == [18, "step"]
