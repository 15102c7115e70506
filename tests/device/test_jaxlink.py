"""The JAX device path on JAX's CPU device (the stand-in for a GPU here): data that stays on the
device, inputs used where they are, float64 computed as float64, float32 kept float32, the matmul
precision pinned, profiles of what ran. ``jax.transfer_guard`` proves what does not move: a
transfer it disallows raises, as the plain-PyTensor control at the top shows."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import textwrap
import types
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg import config

jax = pytest.importorskip("jax")
pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

from pytensor.graph.type import Type  # noqa: E402

from modecfg.device import jaxlink  # noqa: E402


def where() -> str:
    """Where these tests' functions run: JAX's default device (its CPU here, a GPU where JAX sees
    one). Asked in a test, never at import: `make mutate` forks each mutant's tests from a
    process that imported this module, and JAX's runtime must not have started there."""
    return jaxlink.describe_device(jax.devices()[0])


def _device(fn: Any) -> jaxlink.DeviceThunk:
    """A JAX function's DeviceThunk (what its VM runs)."""
    device = jaxlink.device_thunk(fn)
    assert device is not None, "not a JAX function"
    return device


def _jax_function(inputs: list[Any], outputs: Any, **kwargs: Any) -> Any:
    with config.override(linker="jax", floatX="float32"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's "Skipping Assert ... JAX tracing"
        return modecfg.function(inputs, outputs, **kwargs)


def _regression(n: int = 64, k: int = 8) -> tuple[Any, Any, Any, Any]:
    rng = np.random.default_rng(0)
    data = pytensor.shared(rng.normal(size=(n, k)).astype("float32"), name="data")
    w = pytensor.shared(np.zeros(k, dtype="float32"), name="w")
    x = pt.vector("x", dtype="float32")
    cost = ((data @ w - 1) ** 2).mean() + x.sum()
    step = _jax_function([x], cost, updates=[(w, w - np.float32(0.1) * pytensor.grad(cost, w))])
    return data, w, x, step


# -- the control: plain PyTensor moves the data on every call, and the guard says so -----


def test_plain_pytensor_sends_shared_data_every_call_and_the_guard_catches_it() -> None:
    """Without modecfg (a fresh process that never imports it), the same function's shared data
    crosses to the device at each call: the transfer guard refuses the call. This is what the
    tests below would see if residency failed."""
    script = textwrap.dedent(
        """
        import numpy as np, jax, pytensor, pytensor.tensor as pt
        from pytensor.compile.mode import Mode
        data = pytensor.shared(np.ones((8, 4), dtype="float32"))
        x = pt.vector("x", dtype="float32")
        f = pytensor.function([x], (data @ x).sum(), mode=Mode(linker="jax"))
        xd = jax.device_put(np.ones(4, dtype="float32"))
        f(xd)
        import sys
        print("modecfg" in sys.modules, flush=True)
        with jax.transfer_guard("disallow"):
            f(xd)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Disallowed host-to-device transfer" in done.stderr
    assert done.stdout == "False\n"  # plain PyTensor: modecfg never loaded (not a word of its output)


def test_a_process_that_never_uses_jax_pays_no_check_at_its_calls() -> None:
    """The JAX path's patches on inputs and ``zero`` (they cost every call a check) go on at the
    first function linked for JAX, not before; the doors through which an array is lent (``get_value``,
    ``set_value``, ``shared``) are watched from the import, and load nothing of the JAX path."""
    script = textwrap.dedent(
        """
        import sys
        import numpy as np, modecfg, pytensor, pytensor.tensor as pt
        from modecfg._pytensor import state as patch_state
        names = ("shared values (zero)", "device inputs", "shared values", "shared values (set)",
                 "shared values (made)")
        x = pt.vector("x")
        s = pytensor.shared(np.zeros(3), borrow=True)
        s.set_value(s.get_value(borrow=True), borrow=True)
        pytensor.function([x], x * 2, mode=pytensor.compile.mode.Mode(linker="cvm"))
        print([(n in patch_state.applied) for n in names], "modecfg.device.jaxlink" in sys.modules)
        pytensor.function([x], x * 2, mode=pytensor.compile.mode.Mode(linker="jax"))
        print([(n in patch_state.applied) for n in names], "modecfg.device.jaxlink" in sys.modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    before, after = "[False, False, True, True, True] False", "[True, True, True, True, True] True"
    assert done.stdout.split("\n")[:2] == [before, after], done.stderr


# -- residency ---------------------------------------------------------------------------


def test_shared_data_stays_on_the_device_between_calls() -> None:
    data, _w, _, step = _regression()
    x = jax.device_put(np.ones(3, dtype="float32"))
    first = float(step(x))
    with jax.transfer_guard_host_to_device("disallow_explicit"):  # nothing is sent, implicitly or not
        costs = [float(step(x)) for _ in range(5)]  # (reading the cost back is the one move)
    assert costs[-1] < first  # it trains: the updates of w stay on the device too
    assert jaxlink.sent_to_device(data) == (1, data.get_value().nbytes)  # once, at link time


def test_set_value_sends_the_new_value_once() -> None:
    data, _, _, step = _regression()
    x = jax.device_put(np.ones(3, dtype="float32"))
    step(x)
    new = (data.get_value() * 2).astype("float32")
    data.set_value(new)
    step(x)  # sends it
    with jax.transfer_guard("disallow_explicit"):
        step(x)
    assert jaxlink.sent_to_device(data) == (2, 2 * new.nbytes)


def test_two_functions_reading_one_dataset_share_one_device_copy() -> None:
    data, _, _x, step = _regression()
    predict = _jax_function([], data.sum(axis=1))
    step(np.ones(3, dtype="float32"))
    predict()
    assert jaxlink.sent_to_device(data)[0] == 1


def test_numpy_inputs_are_sent_and_device_inputs_used_as_they_are() -> None:
    _, _, _, step = _regression()
    host = np.ones(3, dtype="float32")
    step(host)
    with jax.transfer_guard("disallow"), pytest.raises(Exception, match="Disallowed host-to-device"):
        step(host)  # a numpy input is sent: once per call
    on_device = jax.device_put(host)
    with jax.transfer_guard("disallow_explicit"):
        step(on_device)  # a JAX array of the input's type is not copied back and forth


def test_a_device_input_of_another_dtype_is_converted_as_pytensor_converts_it() -> None:
    x = pt.vector("x", dtype="float32")
    f = _jax_function([x], x * 2)
    with jax.enable_x64(True):
        wide = jax.device_put(np.full(2, 0.1, dtype="float64"))
    with pytest.raises(TypeError, match="cannot store accurately"):
        f(wide)  # PyTensor's check, as for numpy: no silent downcast
    assert f(jax.device_put(np.ones(2, dtype="int8"))).dtype == np.float32  # upcast, as PyTensor does


def test_get_value_is_numpy_after_an_update_on_the_device() -> None:
    _, w, _, step = _regression()
    step(np.ones(3, dtype="float32"))
    assert jaxlink.is_device_array(w.container.storage[0])  # the update stays on the device
    value = w.get_value()
    assert type(value) is np.ndarray and value.dtype == np.float32
    value[0] = 99.0  # a copy of its own
    assert w.get_value()[0] != 99.0
    borrowed = w.get_value(borrow=True)
    assert type(borrowed) is np.ndarray and not borrowed.flags.writeable
    assert jaxlink.is_device_array(w.get_value(return_internal_type=True))  # Theano's way to ask for it


def test_set_value_of_a_device_array_keeps_it_on_the_device() -> None:
    _, w, _, step = _regression()
    on_device = jax.device_put(np.full(8, 0.5, dtype="float32"))
    w.set_value(on_device)
    assert w.container.storage[0] is on_device
    x = jax.device_put(np.ones(3, dtype="float32"))
    step(x)
    with jax.transfer_guard("disallow_explicit"):
        step(x)


def test_set_value_of_the_wrong_dtype_or_shape_names_the_variable_and_keeps_its_value() -> None:
    _, w, _, _ = _regression()
    before = w.get_value()
    with pytest.raises(modecfg.SharedValueError, match="set_value of shared variable 'w'") as caught:
        w.set_value(np.zeros((2, 2), dtype="float32"))
    assert "1 dimension(s)" in str(caught.value) and isinstance(caught.value, TypeError)
    with pytest.raises(modecfg.SharedValueError, match="float32"):
        w.set_value(np.zeros(8, dtype="float64"))
    np.testing.assert_array_equal(w.get_value(), before)


def test_the_other_linkers_read_a_resident_variable_as_before() -> None:
    data, _, _, step = _regression()
    step(np.ones(3, dtype="float32"))
    cpu = pytensor.function([], data.sum(), mode=pytensor.compile.mode.Mode(linker="cvm"))
    assert np.isclose(cpu(), data.get_value().sum(), rtol=1e-5)


def test_compiled_jax_functions_and_resident_variables_pickle() -> None:
    _data, w, _, step = _regression()
    step(np.ones(3, dtype="float32"))
    again = pickle.loads(pickle.dumps(step))
    loaded_w = pickle.loads(pickle.dumps(w))
    assert type(loaded_w.get_value()) is np.ndarray
    np.testing.assert_allclose(loaded_w.get_value(), w.get_value())
    assert np.isfinite(float(again(np.ones(3, dtype="float32"))))
    assert modecfg.ran_on(again) == f"{where()} through jax"


# -- bad values ----------------------------------------------------------------------------


def test_a_value_jax_has_no_arrays_of_is_a_clear_error() -> None:
    with pytest.raises(modecfg.SharedValueError, match="JAX has no arrays of"):
        jaxlink._put("names", np.array(["a", "b"]), jax.devices()[0], False)


def test_a_value_that_does_not_fit_names_itself_and_nothing_is_placed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(1)
    small = pytensor.shared(rng.normal(size=4).astype("float32"), name="small")
    big = pytensor.shared(rng.normal(size=(256, 256)).astype("float32"), name="big")
    real_put = jax.device_put

    def full_device(value: Any, device: Any = None) -> Any:
        if value.size > 1000:
            raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 262144 bytes.")
        return real_put(value, device)

    monkeypatch.setattr(jax, "device_put", full_device)
    with pytest.raises(modecfg.DeviceMemoryError, match=r"'big' \(0\.2 MiB, float32\(256, 256\)\)") as caught:
        _jax_function([], small.sum() + big.sum())
    assert "Nothing was placed" in str(caught.value)
    assert jaxlink.sent_to_device(small) == (0, 0)  # all or none
    monkeypatch.setattr(jax, "device_put", real_put)
    f = _jax_function([], small.sum() + big.sum())
    assert np.isclose(float(f()), small.get_value().sum() + big.get_value().sum(), rtol=1e-5)


# -- precision -------------------------------------------------------------------------------


def test_an_explicit_float64_in_a_float32_graph_is_computed_in_float64() -> None:
    x = pt.vector("x", dtype="float32")
    with config.override(floatX="float32"):
        total = _jax_function([x], pt.cast(x, "float64").sum())
    values = np.full(10**6, 0.1, dtype="float32")
    result = total(values)
    assert result.dtype == np.float64
    assert float(result) == pytest.approx(values.astype("float64").sum(), rel=1e-12)  # float32 sums: 1e-7 off
    i = pt.vector("i", dtype="int32")
    with config.override(floatX="float32"):
        mixed = _jax_function([i, x], i * x)
    assert (
        mixed(np.ones(2, dtype="int32"), np.ones(2, dtype="float32")).dtype == np.float64
    )  # as the graph says


def test_a_float32_graph_stays_float32_with_x64_off() -> None:
    _data, _, _, step = _regression()
    assert _device(step).x64 is False
    assert step(np.ones(3, dtype="float32")).dtype == np.float32
    x = pt.vector("x", dtype="float32")
    with config.override(floatX="float32"):
        f = _jax_function([x], pt.exp(x).mean())
    assert "f64" not in jaxlink.lowered(f, np.ones(4, dtype="float32"))  # nothing wide in what XLA compiles


def test_a_float64_inside_a_fused_operation_turns_x64_on_too() -> None:
    """A float32 graph whose fused elementwise operation computes a float64 in between (its outer
    variables all float32): JAX warned "requested dtype float64 ... truncated to float32" under
    CompareMode's jax reference, the float64 step computed in float32."""
    from pytensor.graph.fg import FunctionGraph
    from pytensor.scalar.basic import Composite

    x = pt.vector("x", dtype="float32")
    y = (pt.exp(x.astype("float64")) + 1).astype("float32")
    with config.override(floatX="float32"):
        fgraph = FunctionGraph([x], [y])
        assert jaxlink.needs_x64(fgraph)  # a float64 variable of its own, before fusion
        f = _jax_function([x], y)
    inner = [n.op.scalar_op for n in f.maker.fgraph.apply_nodes if hasattr(n.op, "scalar_op")]
    assert any(isinstance(op, Composite) for op in inner)  # fused: the float64 is inside
    assert all(getattr(v.type, "dtype", "") != "float64" for v in f.maker.fgraph.variables)
    assert jaxlink.needs_x64(f.maker.fgraph) and _device(f).x64 is True
    out = f(np.full(2, 20.0, dtype="float32"))
    assert out.dtype == np.float32 and np.allclose(out, np.exp(20.0) + 1, rtol=1e-6)


def test_outputs_come_back_in_the_dtypes_the_graph_declares() -> None:
    """A graph with a float64 part runs with x64 on, where PyTensor's JAX reductions return their
    float64 accumulator for a float32 sum: the declared dtype is restored."""
    x = pt.vector("x", dtype="float32")
    with config.override(floatX="float32"):
        f = _jax_function([x], [x.sum(), pt.cast(x, "float64").mean()])
    assert _device(f).x64 is True
    narrow, wide = f(np.ones(4, dtype="float32"))
    assert (narrow.dtype, wide.dtype) == (np.float32, np.float64)


def _narrow_and_wide() -> Any:
    """A float32 sum beside a float64 mean (x64 on: JAX's sum comes back float64), called three
    times: each call's outputs in their declared dtypes."""
    x = pt.vector("x", dtype="float32")
    with config.override(floatX="float32"):
        f = _jax_function([x], [x.sum(), pt.cast(x, "float64").mean()])
    for _ in range(3):
        narrow, wide = f(np.ones(4, dtype="float32"))
        assert (narrow.dtype, wide.dtype) == (np.float32, np.float64)
    return f


def test_outputs_keep_their_declared_dtypes_on_every_call_not_only_the_first() -> None:
    f = _narrow_and_wide()
    # the casts are in the compiled program (issue 62: a cast after each call was a JAX dispatch
    # of its own, 20 us a call against plain PyTensor's 8): a steady call is the thunk alone
    assert _device(f).casts == [] and _device(f).steady
    lowered = _device(f).thunk.jit_fn.lower(np.ones(4, dtype="float32")).as_text()
    assert "tensor<f32>" in lowered.split("return")[-1]  # the program itself returns a float32


def test_where_the_linker_cannot_be_traced_the_outputs_are_cast_after_each_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A PyTensor whose JAX linker has no ``jit_compile`` to wrap (the casts cannot go into the
    traced program): the outputs come back in their declared dtypes all the same, cast after the
    call, on every call."""
    import contextlib

    @contextlib.contextmanager
    def untraced(linker: Any, precision: Any) -> Any:
        yield False

    monkeypatch.setattr(jaxlink, "_traced", untraced)
    f = _narrow_and_wide()
    device = _device(f)
    assert device.x64 is True and len(device.casts) == 1 and not device.steady  # the float32 sum, cast


def test_64_bit_integers_from_the_host_are_never_truncated() -> None:
    """An int64 shared value beyond int32's range, read by a float32 graph and a float64 one: with
    x64 off JAX would make it int32 (2**33 + 5 -> 5) silently; with x64 on, its copy placed for
    one function is the right one for the other."""
    big = 2**33 + 5
    s = pytensor.shared(np.array([big], dtype="int64"), name="count")
    with config.override(floatX="float32"):
        narrow = _jax_function([], s.astype("float32").sum())
        constant = _jax_function([], pt.constant(np.array([big], dtype="int64")).astype("float32").sum())
    with config.override(floatX="float64"):
        wide = _jax_function([], s.astype("float64").sum())
    assert _device(narrow).x64 is True and float(narrow()) == np.float32(big)
    assert float(wide()) == float(big) and float(narrow()) == np.float32(big)
    assert float(constant()) == np.float32(big)  # (folded on the host at compile: no int64 left)
    small = _jax_function([], pt.constant(np.array([5], dtype="int64")).astype("float32").sum())
    assert _device(small).x64 is False  # a constant that fits int32 needs no x64


def test_set_value_of_a_device_array_of_another_static_shape_is_a_shared_value_error() -> None:
    v = pytensor.shared(np.zeros(3, dtype="float32"), shape=(3,), name="fixed")
    f = _jax_function([], v.sum())
    f()
    with pytest.raises(modecfg.SharedValueError, match=r"'fixed'.*shape \(3,\).*shape \(4,\)"):
        v.set_value(jax.device_put(np.zeros(4, dtype="float32")))
    assert v.get_value().shape == (3,) and float(f()) == 0.0


@pytest.mark.parametrize(
    ("flag", "lowered"), [("highest", "HIGHEST"), ("high", "HIGH"), ("default", "DEFAULT")]
)
def test_the_matmul_precision_flag_is_what_xla_compiles_for_a_gpu(
    flag: str, lowered: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIMULATED device (the CPU taken for a GPU: pins_precision): the precision is in the function
    JAX traces, not in a context each call enters (issue 62): jitted outside any context, the
    program carries it."""
    monkeypatch.setattr(jaxlink, "pins_precision", lambda device: True)
    a = pt.matrix("a", dtype="float32")
    with config.override(matmul_precision=flag):
        f = _jax_function([a], a @ a)
    text = jaxlink.lowered(f, np.ones((4, 4), dtype="float32"))
    assert re.search(rf"precision = \[{lowered}, {lowered}\]", text), text
    assert jax.config.jax_default_matmul_precision is None  # the user's own JAX code is left alone
    alone = _device(f).thunk.jit_fn.lower(np.ones((4, 4), dtype="float32")).as_text()
    assert re.search(rf"precision = \[{lowered}, {lowered}\]", alone), alone
    assert _device(f).traced
    assert "jit_compile" not in vars(f.maker.linker)  # nothing left on PyTensor's linker
    again = pickle.loads(pickle.dumps(f))
    assert np.array_equal(again(np.eye(4, dtype="float32")), f(np.eye(4, dtype="float32")))


@pytest.mark.parametrize("flag", ["highest", "high", "default"])
def test_on_the_cpu_the_program_is_plain_pytensors_whatever_the_precision(flag: str) -> None:
    """A CPU computes float32 products in float32 whatever the precision: a function there is
    traced as plain PyTensor traces it (PyTensor's own test reads its jaxpr: no precision added)
    and its calls enter no context."""
    from pytensor.compile.mode import Mode

    a = pt.matrix("a", dtype="float32")
    with config.override(matmul_precision=flag), jax.default_device(jax.devices("cpu")[0]):
        f = _jax_function([a], a @ a)  # on JAX's CPU, wherever a GPU is the default
    with pytensor.config.change_flags(floatX="float32"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plain = pytensor.function([a], a @ a, mode=Mode(linker="jax"))
    x = np.ones((4, 4), dtype="float32")
    ours, theirs = (str(jax.make_jaxpr(_device(g).jit_fn)(x)) for g in (f, plain))
    assert "Precision." not in ours and ours == theirs
    assert _device(f).traced  # no precision context at its calls


def test_the_users_own_x64_setting_survives_later_compiles() -> None:
    """x64 is pinned per function; JAX's process-wide setting is the user's (issue 58)."""
    x = pt.vector("x", dtype="float32")
    before = bool(jax.config.jax_enable_x64)
    try:
        for wanted in (True, False):
            jax.config.update("jax_enable_x64", wanted)
            for floatX in ("float64", "float32"):
                with config.override(floatX=floatX, linker="jax"):
                    f = modecfg.function([x], x + 1)
                assert f(np.ones(2, dtype="float32")).dtype == np.float32
                assert bool(jax.config.jax_enable_x64) is wanted
    finally:
        jax.config.update("jax_enable_x64", before)


def test_a_float64_on_a_gpu_is_reported_whatever_warn_float64_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIMULATED device: the check's decision only (no GPU here). device=cuda with the JAX linker
    counts warn_float64=ignore as warn; the CPU keeps ignore."""
    from pytensor.compile.mode import Mode
    from pytensor.graph.fg import FunctionGraph

    from modecfg.checks.enforce import enforce

    x = pt.vector("x", dtype="float32")
    graph = FunctionGraph([x], [x * np.float64(2.0)], clone=True)
    with config.override(floatX="float32", warn_float64="ignore", device="cuda"):
        with pytest.warns(modecfg.Float64Warning, match="float64 constant"):
            enforce(graph, Mode(linker="jax"))
    with config.override(floatX="float32", warn_float64="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error", modecfg.Float64Warning)
        enforce(graph, Mode(linker="jax"))


# -- where it ran, and profiles ---------------------------------------------------------------


def test_ran_on_names_the_device_and_the_backend() -> None:
    _, _, x, step = _regression()
    assert modecfg.ran_on(step) == f"{where()} through jax"
    cpu = pytensor.function([x], x * 2, mode=pytensor.compile.mode.Mode(linker="cvm"))
    assert modecfg.ran_on(cpu) == "cpu through cvm"
    with pytest.raises(TypeError, match="compiled PyTensor function"):
        modecfg.ran_on(object())


def test_a_profiled_jax_function_is_timed_on_its_device_not_by_cvm() -> None:
    from modecfg.profiles.rows import ProfileReport

    rng = np.random.default_rng(2)
    data = pytensor.shared(rng.normal(size=(32, 8)).astype("float32"), name="data")
    x = pt.vector("x", dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error", modecfg.ModecfgWarning)  # no "profiled with cvm" note
        f = _jax_function([x], (data @ x).sum(), profile=True, name="device step")
    for i in range(6):
        f(np.ones(8, dtype="float32"))
        if i % 2:
            data.set_value(data.get_value() + np.float32(1))
    report = ProfileReport.from_stats(f.profile)
    assert report.linker == "jax" and report.note == "" and report.device is not None
    device = report.device
    assert device["device"] == where() and device["calls"] == 5 and device["first_call"] > 0
    assert device["run"] > 0 and device["sent_bytes"] >= 5 * 8 * 4  # x, each timed call
    assert device["shared_sent"]["data"][0] == 2  # set_value after calls 2 and 4 (and 6: not sent)
    text = report.text()
    assert f"ran on {where()} through jax (x64 off, matmul precision highest)" in text
    assert "per call (5 timed)" in text and "shared variable 'data'" in text and "2 of 5 calls" in text


def test_the_report_says_when_a_shared_variable_crosses_every_call() -> None:
    from modecfg.profiles.device import device_lines

    lines = device_lines({
        "device": "cuda:0 (NVIDIA H100)", "precision": "highest", "x64": False, "first_call": 0.5,
        "calls": 4, "run": 0.004, "sent": 0.1, "sent_bytes": 4 * 2**20, "shared_sent": {"X": (4, 4 * 2**20)},
        "returned_bytes": 16,
    })  # fmt: skip
    assert lines[0].startswith("ran on cuda:0 (NVIDIA H100) through jax")
    assert "1.000 ms on the device; sent to it 1.0 MiB in 25.000 ms" in lines[2]
    assert lines[3] == (
        "shared variable 'X': 4.0 MiB sent in 4 of 4 calls on every call: the data is not resident, "
        "set_value gives it a new value each call"
    )


def test_the_html_report_shows_the_device_section() -> None:
    from modecfg.profiles.html import sections
    from modecfg.profiles.rows import ProfileReport

    rng = np.random.default_rng(3)
    data = pytensor.shared(rng.normal(size=(4, 4)).astype("float32"), name="<b>data</b>")
    f = _jax_function([], data.sum(), profile=True, name="step <script>")
    f()
    f()
    page = sections([ProfileReport.from_stats(f.profile)], 10, 10)
    assert f"ran on {where()} through jax" in page and "<script>" not in page and "&lt;script&gt;" in page


# -- device=gpu: Theano's fallback ---------------------------------------------------------------


def test_theano_gpu_spelling_falls_back_to_the_cpu_once_and_cuda_stays_strict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if jaxlink.describe_device(jax.devices()[0]).startswith("cuda"):
        pytest.skip("a GPU is usable here")
    from modecfg.device import where as device
    from modecfg.modes.build import forget_modes

    monkeypatch.setattr(device, "_warned", set())
    forget_modes()  # the fallback is said where the mode is built: not one built by a run before
    x = pt.vector("x")
    with config.override(device="gpu0"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        f = modecfg.function([x], x + 1)
        modecfg.function([x], x * 2)
    said = [w for w in seen if issubclass(w.category, modecfg.DeviceFallbackWarning)]
    assert len(said) == 1 and "device=gpu0 is Theano's spelling, which falls back" in str(said[0].message)
    assert modecfg.ran_on(f).startswith("cpu through")
    with config.override(device="gpu0", force_device=True), pytest.raises(modecfg.DeviceUnavailableError):
        modecfg.function([x], x + 1)
    with (
        config.override(device="cuda0"),
        pytest.raises(modecfg.DeviceUnavailableError, match="fallback_to_cpu"),
    ):
        modecfg.function([x], x + 1)


# -- on a real GPU (pytest -m gpu; skipped where JAX sees none) ----------------------------------


@pytest.mark.gpu
def test_on_a_gpu_data_stays_there_matmuls_are_float32_and_profiles_are_the_gpus() -> None:
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU here")
    from modecfg.profiles.rows import ProfileReport

    rng = np.random.default_rng(4)
    data = pytensor.shared(rng.normal(size=(512, 256)).astype("float32"), name="data")
    x = pt.vector("x", dtype="float32")
    with config.override(device="cuda", floatX="float32"):
        f = modecfg.function([x], (data @ x).sum(), profile=True, name="on the gpu")
        a = pt.matrix("a", dtype="float32")
        product = modecfg.function([a], a @ a)
    assert modecfg.ran_on(f).startswith("cuda:0")
    on_device = jax.device_put(np.ones(256, dtype="float32"), jax.devices("gpu")[0])
    f(on_device)
    with jax.transfer_guard("disallow_explicit"):
        f(on_device)
    m = rng.normal(size=(1024, 1024)).astype("float32")
    exact = m.astype("float64") @ m.astype("float64")
    assert np.abs(np.asarray(product(m)) - exact).max() / np.abs(exact).max() < 1e-5
    assert ProfileReport.from_stats(f.profile).device["device"].startswith("cuda:0")  # type: ignore[index]


def test_comparemode_attributes_a_lowered_gpu_precision_to_its_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIMULATED device: the note CompareMode adds for a JAX backend on a GPU whose matmul precision
    was lowered; the CPU (and matmul_precision=highest) never gets it."""
    from types import SimpleNamespace

    from pytensor.graph.fg import FunctionGraph

    a = pt.matrix("a", dtype="float32")
    products = FunctionGraph([a], [pt.tanh(a @ a)], clone=True)
    elementwise = FunctionGraph([a], [pt.tanh(a)], clone=True)
    with config.override(matmul_precision="default"), jax.default_device(jax.devices("cpu")[0]):
        assert jaxlink.precision_note(products) == ""  # JAX's CPU device computes float32 anyway
    gpu = SimpleNamespace(platform="gpu", id=0, device_kind="NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(jaxlink, "_target", lambda device=None: gpu)
    with config.override(matmul_precision="default"):
        note = jaxlink.precision_note(products)
        assert jaxlink.precision_note(elementwise) == ""
    assert note.startswith("jax on cuda:0 (NVIDIA H100 80GB HBM3) computes float32 matmuls")
    assert "matmul_precision=default" in note and "matmul_precision=highest compares" in note
    assert jaxlink.precision_note(products) == ""  # highest: float32 is float32


def test_a_matmul_precision_no_backend_has_is_a_clear_error() -> None:
    with pytest.raises(modecfg.FlagValueError, match=r"'bfloat16'.*highest, high, default"):
        modecfg.load(env={"MODECFG_FLAGS": "matmul_precision=bfloat16"})


@pytest.mark.parametrize("floatX", ["float32", "float64"])
@pytest.mark.parametrize("precision", ["highest", "high", "default"])
def test_a_steady_call_hits_one_jit_cache_entry_whatever_jaxs_own_x64(floatX: str, precision: str) -> None:
    """Issue 62: the x64 context is entered only where JAX's own x64 differs from the function's
    (a context costs ~0.4 us a call); the trace and its cache entry are the same either way."""
    x = pt.vector("x", dtype="float32")
    with config.override(floatX=floatX, matmul_precision=precision):
        f = _jax_function([x], (x * 2).sum())
    a = np.ones(8, dtype="float32")
    first = f(a)
    before = bool(jax.config.jax_enable_x64)
    try:
        for wanted in (True, False, True, False):
            jax.config.update("jax_enable_x64", wanted)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # JAX's float32 accumulator note
                results = [f(a) for _ in range(3)]
            assert all(np.array_equal(r, first) and r.dtype == first.dtype for r in results)
    finally:
        jax.config.update("jax_enable_x64", before)
    assert _device(f).thunk.jit_fn._cache_size() == 1  # no second trace, no recompile


def test_a_steady_call_runs_the_jitted_function_as_pytensors_thunk_does() -> None:
    """Issue 62: the steady call runs the jitted function itself, one Python frame fewer than
    through PyTensor's thunk (its inputs' values in, its outputs into their storage, updates and
    all), where the thunk is PyTensor's closure over exactly these: the same values, call after
    call, as a twin function run through the thunk."""
    runs = []
    for inline in (True, False):
        _, w, _, step = _regression()
        vm = _device(step)
        assert vm.inline  # PyTensor's thunk, recognised
        vm.inline = inline
        calls: list[int] = []
        jit_fn = vm.jit_fn
        vm.jit_fn = lambda *args, jit_fn=jit_fn, calls=calls: calls.append(len(args)) or jit_fn(*args)
        with jax.enable_x64(vm.x64):  # JAX's x64 as the function's (another test may have left it on)
            costs = [float(step(np.full(3, k, dtype="float32"))) for k in range(4)]
        assert vm.fast
        assert len(calls) == (3 if inline else 0)  # the first call goes through the thunk: it is timed
        runs.append((costs, w.get_value().tolist()))
    assert runs[0] == runs[1] and runs[0][0][1] != runs[0][0][0]  # (the updates took effect)


@pytest.mark.parametrize("n_in", [0, 1, 2, 3])
@pytest.mark.parametrize("n_out", [1, 2])
def test_a_steady_call_of_any_arity_gives_what_pytensors_thunk_gives(n_in: int, n_out: int) -> None:
    """The steady call passes one or two inputs' values as arguments and sets a lone output
    directly (the usual functions; faster for JAX than unpacking an iterator), any other count
    as PyTensor's thunk does: with shared variables among the inputs (read from their device
    copies), updates, and every count, the jitted function gets the inputs' values in order and
    the outputs and the shared state are those of a twin function whose calls go through
    PyTensor's thunk, call after call."""
    runs = []
    for inline in (True, False):
        state = pytensor.shared(np.float32(1.0), name="state")
        xs = [pt.scalar(f"x{i}", dtype="float32") for i in range(n_in)]
        total = state + sum(xs, pt.constant(np.float32(1.0)))
        outputs = [total * (k + 1) for k in range(n_out)]
        f = _jax_function(xs, outputs if n_out > 1 else outputs[0], updates=[(state, total)])
        device = _device(f)
        assert device.inline
        seen: list[tuple[Any, ...]] = []
        jit_fn = device.jit_fn
        device.inline = inline
        device.jit_fn = lambda *args, jit_fn=jit_fn, seen=seen: seen.append(args) or jit_fn(*args)
        results = []
        with jax.enable_x64(device.x64):
            for k in range(3):
                given = [np.float32(10 * k + i) for i in range(n_in)]
                got = f(*given)
                results.append(np.asarray(got).tolist())
                if inline and k > 0:  # (the first call is the thunk's: it is timed)
                    args = seen[-1]  # the inputs' values, then the shared variable's
                    assert len(args) == n_in + 1
                    assert [float(np.asarray(a)) for a in args[:n_in]] == given
        assert device.fast
        assert len(seen) == (2 if inline else 0)
        runs.append((results, float(state.get_value())))
    assert runs[0] == runs[1]
    assert runs[0][1] != 1.0  # (the updates took effect)


def test_the_steady_call_reads_what_the_vm_holds_now() -> None:
    """The steady call's parts are read from one attribute, made again whenever one of them is
    set: a VM made not steady (profiled) or not inline runs through the path it says."""
    x = pt.vector("x", dtype="float32")
    f = _jax_function([x], x * 2)
    ones = np.ones(2, dtype="float32")
    assert _device(f).steady_call is None  # no call yet: the first is timed apart
    f(ones)
    vm = _device(f)
    parts = (vm.x64_state, vm.x64, vm.jit_fn, vm.thunk_inputs, vm.thunk_outputs, vm.thunk)
    assert vm.fast and vm.inline and len(vm.steady_call) == len(parts)
    assert all(a is b for a, b in zip(vm.steady_call, parts, strict=True))
    vm.inline = False
    assert vm.steady_call[2] is None  # the thunk's own call
    calls: list[int] = []
    jit_fn = vm.jit_fn
    vm.jit_fn = lambda *args: calls.append(len(args)) or jit_fn(*args)
    vm.inline = True
    assert vm.steady_call[2] is vm.jit_fn
    with jax.enable_x64(vm.x64):
        assert np.asarray(f(ones)).tolist() == [2.0, 2.0] and calls == [1]
        vm.fast = False
        assert vm.steady_call is None
        assert np.asarray(f(ones + 1)).tolist() == [4.0, 4.0] and calls == [1]  # through the thunk


def test_the_steady_call_is_written_out_only_for_the_thunk_it_replicates() -> None:
    """``inline`` only where the thunk is a closure over its own ``jit_fn``, ``inputs`` and
    ``outputs``, in that order, with outputs, and the node PyTensor names on a failure is known;
    else every call goes through the thunk."""
    jit_fn, inputs, outputs = (lambda *a: a), [[1.0]], [[None]]

    def made(*defaults: Any, outs: list[Any] = outputs) -> Any:
        def thunk(a: Any = defaults[0], b: Any = defaults[1], c: Any = defaults[2]) -> None:
            raise AssertionError("not called here")

        thunk.jit_fn, thunk.inputs, thunk.outputs, thunk.allow_gc = jit_fn, inputs, outs, True  # type: ignore[attr-defined]
        return thunk

    def inline(thunk: Any, node: Any = "node") -> bool:
        cpu = jax.devices("cpu")[0]
        return bool(jaxlink.DeviceThunk(thunk, cpu, False, "default", [], [], [], True, None, node).inline)

    assert inline(made(jit_fn, inputs, outputs))
    assert not inline(made(jit_fn, inputs, outputs), node=None)  # PyTensor's thunk would name none
    assert not inline(made(jit_fn, outputs, inputs))  # not the closure it replicates
    assert not inline(made(jit_fn, inputs, outputs, outs=[]))  # no outputs: its own return
    assert not inline(_StateSeen())  # no closure at all


def test_a_failing_steady_call_says_what_pytensors_thunk_says() -> None:
    """A steady call that fails (shapes JAX cannot add) is raised as PyTensor's thunk raises it:
    through raise_with_op, which names the user's line, the same message and notes either way."""
    x, y = pt.vector("x", dtype="float32"), pt.vector("y", dtype="float32")
    f = _jax_function([x, y], x + y)
    three = np.ones(3, dtype="float32")
    f(three, three)
    f(three, three)
    assert _device(f).fast and _device(f).inline
    said = []
    for inline in (True, False):
        _device(f).inline = inline
        with jax.enable_x64(_device(f).x64), pytest.raises(Exception) as failed:  # the steady call's path
            f(three, np.ones(4, dtype="float32"))
        said.append((type(failed.value), str(failed.value), getattr(failed.value, "__notes__", [])))
    assert said[0] == said[1]
    assert any("the operation that failed was created at" in note for note in said[0][2])  # raise_with_op's


def test_the_x64_state_a_call_reads_is_jaxs_in_the_calling_thread() -> None:
    """The steady call reads JAX's x64 through its State (22 ns, not 51 through jax.config);
    the configuration object stands in where a JAX has none: both answer alike, in a context."""
    state, through_config = jaxlink._x64_state(), jaxlink._ConfigX64(jax.config)
    assert not isinstance(state, jaxlink._ConfigX64)  # this JAX has its State
    for on in (True, False, True):
        with jax.enable_x64(on):
            assert state.value is on and through_config.value is on


def test_the_device_inputs_patch_is_pytensors_check_for_every_other_function() -> None:
    """Once a JAX function is linked, every function's input check is the plain patch (it binds
    as PyTensor's method does): a function on another linker given a JAX array gets PyTensor's
    check (a numpy copy), and the JAX function keeps its device input."""
    from pytensor.compile.executor import Function

    from modecfg.device import contacts

    x = pt.vector("x", dtype="float32")
    on_jax = _jax_function([x], x * 2)
    with config.override(linker="cvm"):
        on_cvm = modecfg.function([x], x * 2)
    assert Function.__dict__["_validate_inputs"] is contacts.validate_inputs
    on_device = jax.device_put(np.ones(2, dtype="float32"))
    out = on_cvm(on_device)
    assert type(out) is np.ndarray and out.tolist() == [2.0, 2.0]
    with jax.enable_x64(True):
        wide = jax.device_put(np.full(2, 0.1, dtype="float64"))
    with pytest.raises(TypeError, match="cannot store accurately"):
        on_cvm(wide)  # PyTensor's check: no silent downcast
    with jax.transfer_guard("disallow_explicit"):
        on_jax(on_device)  # kept where it is: not copied to the host and back


def test_the_input_check_before_it_is_bound_is_pytensors_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """``validate_inputs`` calls the check ``linked()`` binds when it applies the patch; before that
    (the module's own default) it is PyTensor's, looked up where the patch recorded it: the same
    values taken, the same refusals."""
    from modecfg.device import contacts

    x = pt.vector("x", dtype="float32")
    f = _jax_function([x], x * 2)
    monkeypatch.setattr(contacts, "_validate", contacts._pytensors_check)
    assert np.asarray(f([1.0, 3.0])).tolist() == [2.0, 6.0]
    with pytest.raises(TypeError, match="risking loss of precision"):
        f(np.full(2, 0.1))
    with pytest.raises(TypeError, match="Wrong number of dimensions"):
        f(np.ones((2, 2), dtype="float32"))


def test_a_jax_functions_host_inputs_get_pytensors_own_check() -> None:
    """Given no JAX array, a JAX function's inputs are checked by PyTensor's own method (bound
    as it is when the patch is applied): numpy arrays on the short path, anything else (a list)
    after the look for JAX arrays; a value PyTensor refuses is refused the same way."""
    from modecfg._pytensor.state import originals
    from modecfg.device import contacts

    x = pt.vector("x", dtype="float32")
    f = _jax_function([x], x * 2)
    assert contacts._validate is originals["device inputs"]
    assert np.asarray(f(np.ones(2, dtype="float32"))).tolist() == [2.0, 2.0]
    assert np.asarray(f([1.0, 3.0])).tolist() == [2.0, 6.0]  # a list: PyTensor's filter makes it float32
    refused = ((np.full(2, 0.1), "risking loss of precision"), ([0.1, 0.2], "cannot store accurately"))
    for given, said in refused:
        with pytest.raises(TypeError, match=said):  # float64 values: no silent downcast
            f(given)
    with pytest.raises(TypeError, match="Wrong number of dimensions"):
        f(np.ones((2, 2), dtype="float32"))


def test_the_vm_is_a_function_answering_what_pytensors_thunk_answers_as_a_vm() -> None:
    """A JAX function's VM is a function, as PyTensor's own (its thunk) is, not an object whose
    class has ``__call__`` (JAX's dispatch made a call through one ~0.25 us dearer), carrying
    what PyTensor's JIT linker sets on its thunk, the same objects, and the device's thunk."""
    x = pt.vector("x", dtype="float32")
    f = _jax_function([x], x * 2)
    vm, device = f.vm, _device(f)
    assert type(vm) is types.FunctionType and vm.device_thunk is device
    for name in ("inputs", "outputs", "lazy", "jit_fn", "storage_map", "allow_gc"):
        assert name in vars(vm) and getattr(vm, name) is getattr(device.thunk, name), name
    assert vm.inputs is device.thunk_inputs and vm.outputs is device.thunk_outputs and vm.lazy is False
    assert vm.update_profile == device.update_profile
    assert "__getattr__" not in vars(jaxlink.DeviceThunk)  # (it would slow every read of the thunk's)
    assert np.asarray(f(np.ones(2, dtype="float32"))).tolist() == [2.0, 2.0]
    with pytest.raises((pickle.PicklingError, AttributeError)):  # as PyTensor's VM: loudly
        pickle.dumps(vm)
    loaded = pickle.loads(pickle.dumps(f))  # the Function pickles without it, and links a new one
    assert _device(loaded) is not device and loaded(np.ones(2, dtype="float32")).tolist() == [2.0, 2.0]
    plain = pytensor.function([x], x * 2, mode="FAST_RUN")
    assert jaxlink.device_thunk(plain) is None and jaxlink.device_of(plain) is None
    assert jaxlink.device_thunk(object()) is None
    other = types.SimpleNamespace(vm=lambda: None)
    other.vm.device_thunk = "not one"  # type: ignore[attr-defined]
    assert jaxlink.device_thunk(other) is None


def test_the_vm_answers_allow_gc_as_pytensors_thunk_does() -> None:
    """PyTensor's Function reads ``vm.allow_gc`` after every call: the thunk's value, on the VM
    itself; set there, it decides whether the Function clears its inputs after a call."""
    x = pt.vector("x", dtype="float32")
    f = _jax_function([x], x * 2)
    vm = f.vm
    assert "allow_gc" in vars(vm) and vm.allow_gc is _device(f).thunk.allow_gc
    was = vm.allow_gc
    try:
        vm.allow_gc = not was
        stored = f.input_storage[0].storage
        f(np.ones(2, dtype="float32"))  # Function clears the inputs after a call only with allow_gc
        assert (stored[0] is None) is (not was)
    finally:
        vm.allow_gc = was
    assert f(np.ones(2, dtype="float32")).tolist() == [2.0, 2.0]


def test_a_profiled_jax_functions_device_figures_add_up_call_by_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every timed call adds what it sent (its inputs, and a shared value set since), what it
    returned, and its two times, read on a clock that ticks once a reading."""
    data = pytensor.shared(np.zeros((32, 8), dtype="float32"), name="data")
    x = pt.vector("x", dtype="float32")
    f = _jax_function([x], (data @ x).sum(), profile=True)
    f(np.ones(8, dtype="float32"))  # the first call: traced and compiled, timed apart
    ticks = iter(range(1000))
    monkeypatch.setattr(jaxlink, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    for i in range(5):
        f(np.ones(8, dtype="float32"))
        if i in (1, 3):
            data.set_value(data.get_value() + np.float32(1))
    device = dict(_device(f).stats)
    assert device["calls"] == 5
    assert (device["sent"], device["run"]) == (5.0, 5.0)  # one tick to send, one to run, each call
    assert device["sent_bytes"] == 5 * 8 * 4 + 2 * 32 * 8 * 4  # x each call; data after each set_value
    assert device["shared_sent"] == {"data": (2, 2 * 32 * 8 * 4)}
    assert device["returned_bytes"] == 5 * 4  # one float32 a call, left on the device


@pytest.mark.parametrize(
    ("values", "wide"),
    [([2**31 - 1, -(2**31)], False), ([2**31], True), ([-(2**31) - 1], True), ([0, 2**33 + 5], True),
     ([], False), ([7], False)],
)  # fmt: skip
def test_an_int64_constant_needs_x64_only_beyond_int32(values: list[int], wide: bool) -> None:
    constant = pt.constant(np.array(values, dtype="int64"))
    assert jaxlink._wide_data(constant) is wide
    small = [v for v in values if -(2**31) <= v < 2**31]
    assert jaxlink._wide_data(pt.constant(np.array(small, dtype="int32"))) is False  # not 64-bit
    assert jaxlink._wide_data(pt.constant(np.array(values, dtype="float64"))) is False


def test_int64_data_from_the_host_needs_x64_and_what_the_graph_computes_does_not() -> None:
    i = pt.vector("i", dtype="int64")
    assert jaxlink._wide_data(i) is True  # an input: its values are not known when linked
    assert jaxlink._wide_data(pytensor.shared(np.zeros(2, dtype="int64"))) is True
    assert jaxlink._wide_data(i + 1) is False  # computed in the graph: its dtype is the graph's


def _failing(text: str) -> Any:
    def device_put(value: Any, device: Any) -> Any:
        raise RuntimeError(text)

    return device_put


def test_a_shared_value_too_big_for_the_device_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg.errors import DeviceMemoryError

    value, cpu = np.zeros((1024, 1024), dtype="float32"), jax.devices("cpu")[0]
    monkeypatch.setattr(
        jax, "device_put", _failing("RESOURCE_EXHAUSTED: Out of memory allocating 4MiB.\nmore")
    )
    with pytest.raises(DeviceMemoryError) as caught:
        jaxlink._put("X", value, cpu, False)
    assert str(caught.value) == (
        "shared variable 'X' (4.0 MiB, float32(1024, 1024)) does not fit in the memory of cpu:0: "
        "RESOURCE_EXHAUSTED: Out of memory allocating 4MiB.. Nothing was placed; free device "
        "memory (XLA_PYTHON_CLIENT_MEM_FRACTION, smaller batches) or use device=cpu"
    )
    for text in ("out of memory on the device", "Resource exhausted: OUT OF MEMORY", "RESOURCE_EXHAUSTED"):
        monkeypatch.setattr(jax, "device_put", _failing(text))
        with pytest.raises(DeviceMemoryError, match="does not fit"):
            jaxlink._put("X", value, cpu, False)
    monkeypatch.setattr(jax, "device_put", _failing("another failure"))
    with pytest.raises(RuntimeError, match=r"^another failure$"):  # JAX's own error, as it is
        jaxlink._put("X", value, cpu, False)


def test_only_a_gpu_or_tpu_pins_the_matmul_precision_and_a_device_says_its_kind() -> None:
    gpu = SimpleNamespace(platform="gpu", id=1, device_kind="NVIDIA H100 80GB HBM3")
    tpu = SimpleNamespace(platform="tpu", id=0, device_kind="")
    cpu = SimpleNamespace(platform="cpu", id=0, device_kind="cpu")
    assert [jaxlink.pins_precision(d) for d in (gpu, tpu, cpu, object())] == [True, True, False, False]
    assert jaxlink.describe_device(gpu) == "cuda:1 (NVIDIA H100 80GB HBM3)"
    assert jaxlink.describe_device(tpu) == "tpu:0"
    assert jaxlink.describe_device(cpu) == "cpu:0"
    assert jaxlink.describe_device(SimpleNamespace(platform="gpu", id=0)) == "cuda:0"  # no kind said
    assert jaxlink.describe_device(SimpleNamespace(platform="gpu", id=0, device_kind=None)) == "cuda:0"


def test_products_and_convolutions_are_the_operations_a_precision_changes() -> None:
    class Conv2d:
        pass

    class Elemwise:
        pass

    assert jaxlink._is_product(Conv2d()) and not jaxlink._is_product(Elemwise())
    blockwise = SimpleNamespace(core_op=SimpleNamespace())  # a Blockwise of a non-product
    assert not jaxlink._is_product(blockwise)
    matmul = pt.matrix("a") @ pt.matrix("b")
    assert jaxlink._is_product(matmul.owner.op)
    batched = pt.tensor3("a") @ pt.tensor3("b")  # a Blockwise whose core operation is a product
    assert type(batched.owner.op).__name__ == "Blockwise" and jaxlink._is_product(batched.owner.op)


def test_the_outputs_are_cast_to_their_declared_dtypes_inside_the_trace() -> None:
    def fn(a: Any, b: Any) -> list[Any]:
        return [a, b]

    f64, i64 = np.ones(2, dtype="float64"), np.ones(2, dtype="int64")
    out = jaxlink.traced_with(None, ("float32", None), fn, f64, i64)
    assert [o.dtype for o in out] == [np.dtype("float32"), np.dtype("int64")] and type(out) is list
    assert jaxlink.traced_with(None, ("float64", "int64"), fn, f64, i64)[0] is f64  # already right
    assert jaxlink.traced_with(None, ("float32",), fn, f64, i64)[0] is f64  # not one dtype an output
    assert jaxlink.traced_with(None, ("float32",), lambda a: a, f64) is f64  # a single output: as is
    with_tuple = jaxlink.traced_with(None, ("float32", "float32"), lambda a, b: (a, b), f64, i64)
    assert type(with_tuple) is tuple and [o.dtype for o in with_tuple] == [np.dtype("float32")] * 2


def test_a_float32_graph_runs_with_x64_where_floatx_is_float64() -> None:
    x = pt.vector("x", dtype="float32")
    graph = pytensor.graph.fg.FunctionGraph([x], [x * 2])
    with config.override(floatX="float64"):
        assert jaxlink.needs_x64(graph)
    with config.override(floatX="float32"):
        assert not jaxlink.needs_x64(graph)
        wide = pytensor.graph.fg.FunctionGraph([x], [x.astype("float64") * 2])
        assert jaxlink.needs_x64(wide)


def test_lowered_refuses_a_function_not_compiled_for_jax() -> None:
    x = pt.vector("x")
    cpu = pytensor.function([x], x * 2, mode=pytensor.compile.mode.Mode(linker="py"))
    for fn in (cpu, object()):
        with pytest.raises(TypeError) as caught:
            jaxlink.lowered(fn, np.ones(2))
        assert str(caught.value) == "lowered() takes a function compiled for JAX (linker=jax or device=cuda)"


def test_a_function_runs_on_the_device_given_else_jaxs_default_device_else_its_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backends = {None: ["default:0", "default:1"], "cpu": ["cpu:0", "cpu:1"]}
    monkeypatch.setattr(jax, "devices", lambda backend=None: backends[backend])
    monkeypatch.setattr(jax, "config", SimpleNamespace(jax_default_device=None))
    assert jaxlink._target("given") == "given"
    assert jaxlink._target() == "default:0"
    jax.config.jax_default_device = "cpu"  # a platform's name: its first device
    assert jaxlink._target() == "cpu:0"
    jax.config.jax_default_device = chosen = SimpleNamespace(platform="gpu", id=3)
    assert jaxlink._target() is chosen


def test_a_random_generator_in_the_graph_has_no_dtype_and_is_no_wide_data() -> None:
    """A generator's type has no dtype (nor shape): asked of every variable of a graph, as of a
    tensor's, it is read as none, never an AttributeError; and a variable never sent to a device
    has been sent 0 times, 0 bytes."""
    from pytensor.graph.fg import FunctionGraph

    rng = pytensor.shared(np.random.default_rng(0))
    assert not hasattr(rng.type, "dtype") and not hasattr(rng.type, "shape")
    x = pt.vector("x", dtype="float32")
    with config.override(floatX="float32"):
        draw = pt.random.normal(0, 1, size=(3,), rng=rng, dtype="float32")
        graph = FunctionGraph([x, rng], [x + draw], clone=False)
        assert not jaxlink.needs_x64(graph)  # every variable asked, the generator too
        draw64 = pt.random.normal(0, 1, size=(3,), rng=rng, dtype="float64")
        wide = FunctionGraph([x, rng], [x + draw64], clone=False)
        assert jaxlink.needs_x64(wide)  # a float64 draw
    assert jaxlink._wide_data(rng) is False
    assert jaxlink.sent_to_device(pytensor.shared(np.ones(2))) == (0, 0)


class _StateSeen:
    """A thunk that records JAX's x64 and matmul precision in the thread that calls it."""

    def __init__(self) -> None:
        self.outputs: list[Any] = []
        self.seen: list[tuple[bool, Any]] = []

    def __call__(self) -> list[Any]:
        self.seen.append((bool(jax.config.jax_enable_x64), jax.config.jax_default_matmul_precision))
        return []


@pytest.mark.parametrize("precision", ["highest", "high", "default"])
@pytest.mark.parametrize("x64_on", [False, True])
def test_a_call_enters_the_contexts_that_differ_and_runs_as_the_function_says(
    x64_on: bool, precision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A function whose precision is not in its traced program (``traced=False``) enters JAX's
    contexts at a call where the calling thread's state differs, and only those that differ (a
    context costs ~0.4 us a call, issue 62; JAX's unset precision is its "default"): its thunk
    sees the function's x64 and precision, first call and steady calls alike, and the caller's
    state is back after."""
    import contextlib

    x64_context, matmul_context = jaxlink._contexts()
    entered: list[str] = []

    def x64(on: bool) -> Any:
        entered.append("x64")
        return x64_context(on)

    def matmul(name: str) -> Any:
        entered.append("precision")
        return matmul_context(name)

    monkeypatch.setattr(jaxlink, "_contexts", lambda: (x64, matmul))
    thunk = _StateSeen()
    vm = jaxlink.DeviceThunk(thunk, jax.devices("cpu")[0], x64_on, precision, [], [], [], traced=False)
    wanted = jaxlink.PRECISIONS[precision]
    other = "bfloat16" if precision != "default" else "highest"
    for steady in (False, True):
        vm.steady = steady
        for caller_x64 in (x64_on, not x64_on):
            for caller_precision in (None, precision, other):
                scope = (
                    jax.default_matmul_precision(caller_precision)
                    if caller_precision
                    else contextlib.nullcontext()
                )
                with jax.enable_x64(caller_x64), scope:
                    before = (bool(jax.config.jax_enable_x64), jax.config.jax_default_matmul_precision)
                    entered.clear()
                    jaxlink.vm_for(vm)()
                    after = (bool(jax.config.jax_enable_x64), jax.config.jax_default_matmul_precision)
                case = (steady, caller_x64, caller_precision)
                differs = ["precision"] if (caller_precision or "default") != wanted else []
                assert entered == differs + (["x64"] if caller_x64 is not x64_on else []), case
                got_x64, got_precision = thunk.seen[-1]
                assert got_x64 is x64_on and (got_precision or "default") == wanted, case
                assert after == before, case
    assert vm.stats["first_call"] is not None  # the first, unsteady call was timed as the first


def test_set_value_says_what_it_was_given_and_which_variable_in_one_message() -> None:
    """What the refusal says: the variable (by name, else as PyTensor prints it), what it holds, what
    it was given (a list has no dtype and no shape of its own: its type, and no shape), the fix."""
    _, w, _, _ = _regression()
    with pytest.raises(modecfg.SharedValueError) as caught:
        w.set_value([[1.0, 2.0]])
    said = str(caught.value)
    assert said.startswith(
        "set_value of shared variable 'w': it holds float32 values of 1 dimension(s) (shape (None,)), "
        "and was given list ("
    ), said
    assert said.endswith(
        "). Its value is unchanged; give np.asarray(value, dtype='float32') of 1 dimension(s)"
    )
    assert " of shape " not in said
    unnamed = pytensor.shared(np.zeros(2, dtype="float32"))
    _jax_function([], unnamed.sum())()
    with pytest.raises(modecfg.SharedValueError) as caught:
        unnamed.set_value(np.zeros((2, 2), dtype="float32"))
    said = str(caught.value)
    assert (
        said.startswith(f"set_value of shared variable {str(unnamed)!r}: ")
        and "float32 of shape (2, 2) (" in said
    )


@pytest.mark.parametrize("linker", ["jax", "numba"])
def test_make_all_takes_its_storage_by_position_as_pytensors_does(linker: str) -> None:
    """The "jax device" patch keeps ``JITLinker.make_all``'s signature: storage given by position is
    the storage the function reads and writes, for JAX and for the linkers it passes on (numba)."""
    pytest.importorskip(linker)
    from pytensor.graph.fg import FunctionGraph
    from pytensor.link.jax.linker import JAXLinker
    from pytensor.link.numba.linker import NumbaLinker

    x = pt.dvector("x")
    made = (JAXLinker if linker == "jax" else NumbaLinker)().accept(FunctionGraph([x], [x * 2]))
    inputs: list[list[Any]] = [[np.arange(3.0)]]
    outputs: list[list[Any]] = [[None]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        function, *_ = made.make_all(inputs, outputs, {})
    function()
    assert np.array_equal(np.asarray(outputs[0][0]), [0.0, 2.0, 4.0])


def test_the_first_get_value_in_a_process_looks_numpys_array_type_up() -> None:
    """get_value, set_value and the device inputs' check find numpy's array type at their first
    call (``import modecfg`` loads no numpy): a borrowed read works before anything looked it up."""
    from modecfg.device import contacts

    s = pytensor.shared(np.arange(4.0), name="first")
    _jax_function([], s.sum())()  # the shared values' patches are on
    for held in (None, np.ndarray):
        contacts._ndarray = held  # as in a process where no get_value ran yet, then after
        got = s.get_value(borrow=True)
        assert got is s.container.storage[0] and np.array_equal(got, np.arange(4.0))
        assert contacts._ndarray is np.ndarray


def test_set_value_passes_on_the_refusal_of_a_type_without_dtype_or_dimensions() -> None:
    """A refusal is said as a SharedValueError only for a type with both a dtype and dimensions to
    name; any other type's own error passes through as it is."""
    from pytensor.compile.sharedvalue import SharedVariable

    _jax_function([], pytensor.shared(np.zeros(2, dtype="float32")) * 2)()  # the patch is on
    for attrs in ({"dtype": "float64"}, {"ndim": 0}):
        kind = type("Partial", (_FloatOnly,), attrs)()
        held = SharedVariable(type=kind, value=1.0, strict=False, name="partial")
        with pytest.raises(TypeError) as caught:
            held.set_value("one")
        assert type(caught.value) is TypeError and caught.value.args[0] == "a float, please"
        assert held.get_value() == 1.0


class _FloatOnly(Type):  # type: ignore[misc]
    """A PyTensor type with no dtype and no ndim (the cases add one of them): it holds floats."""

    def filter(self, data: Any, strict: bool = False, allow_downcast: Any = None) -> float:
        if not isinstance(data, float):
            raise TypeError("a float, please")
        return data
