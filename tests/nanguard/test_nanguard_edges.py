"""The NaN guard where users push it: every float dtype, copies, rebuilt modes (PyMC's pattern),
write-only updates, inner functions, gradient nodes."""

from __future__ import annotations

import copy
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

from pytensor.compile.builders import OpFromGraph  # noqa: E402
from pytensor.compile.mode import Mode  # noqa: E402

LINES = {
    text.rsplit("# line: ", 1)[1]: i
    for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
    if "# line: " in text and not text.lstrip().startswith(("LINES", "if", "for"))
}


@pytest.fixture(autouse=True)
def _dumps(tmp_path: Path) -> Any:
    with modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path / "dumps")}):
        yield


def _doubler(dtype: str) -> tuple[Any, Any]:
    x = pt.vector("x", dtype=dtype)
    w = pytensor.shared(np.ones(2, dtype=dtype), name="w")
    return modecfg.function([x], x * 2, updates=[(w, w + x * 2)], mode="NanGuardMode"), w


@pytest.fixture(scope="module")
def doublers() -> dict[str, tuple[Any, Any]]:
    return {dtype: _doubler(dtype) for dtype in ("float16", "float32", "float64")}


# -- thresholds in every float dtype ---------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_an_inf_made_by_overflow_is_caught_in_every_dtype(dtype: str, doublers: dict) -> None:
    fn, w = doublers[dtype]
    before = w.get_value().copy()
    biggest = np.finfo(dtype).max
    with modecfg.config.override(NanGuardMode__big_is_error=False):  # Inf alone, not "big"
        with pytest.raises(modecfg.NanGuardError, match="Inf in") as info:
            fn(np.array([biggest, 1], dtype=dtype))  # biggest * 2 overflows to inf
    assert w.get_value().tobytes() == before.tobytes()
    assert "HINT" not in str(info.value)  # the guard's error reaches the user as it is
    assert getattr(info.value, "__notes__", []) == []


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_big_at_the_dtypes_limit_lets_finite_values_through_and_still_catches_inf(
    dtype: str, doublers: dict
) -> None:
    fn, w = doublers[dtype]
    limit = float(np.finfo(dtype).max)
    with modecfg.config.override({"NanGuardMode.big": limit}):
        w.set_value(np.ones(2, dtype=dtype))
        half = np.array([limit / 4, 1], dtype=dtype)
        np.testing.assert_array_equal(fn(half), half * 2)  # finite, below big: passes
        before = w.get_value().copy()
        with pytest.raises(modecfg.NanGuardError, match="Inf"):
            fn(np.array([limit, 1], dtype=dtype))
        assert w.get_value().tobytes() == before.tobytes()


def test_big_above_float32s_range_still_catches_inf_in_float32(doublers: dict) -> None:
    fn, _ = doublers["float32"]
    with modecfg.config.override({"NanGuardMode.big": 1e39}):
        with pytest.raises(modecfg.NanGuardError, match="Inf"):
            fn(np.array([np.finfo("float32").max, 1], dtype="float32"))


def test_big_is_compared_exactly_and_not_in_the_arrays_dtype(doublers: dict) -> None:
    fn, _ = doublers["float16"]
    with modecfg.config.override({"NanGuardMode.big": 100.0}):
        with pytest.raises(modecfg.NanGuardError, match="big"):
            fn(np.array([60, 1], dtype="float16"))  # 120 > 100


@pytest.mark.parametrize("value", ["inf", "1e400", "-inf", "nan", "0", "-1"])
def test_big_must_be_a_positive_finite_number(value: str) -> None:
    with pytest.raises(modecfg.FlagValueError, match=r"NanGuardMode\.big"):
        modecfg.load(env={"MODECFG_FLAGS": f"NanGuardMode.big={value}"})
    with pytest.raises(modecfg.FlagValueError):
        with modecfg.config.override({"NanGuardMode.big": float(value)}):
            pass


def test_an_infinite_big_names_the_flag_that_turns_the_check_off() -> None:
    with pytest.raises(modecfg.FlagValueError, match="big_is_error=False"):
        modecfg.load(env={"MODECFG_FLAGS": "NanGuardMode.big=inf"})


@pytest.mark.parametrize(
    ("flag", "bad"), [("nan_is_error", np.nan), ("inf_is_error", np.inf), ("big_is_error", 1e12)]
)
def test_each_flag_turns_its_check_off_and_only_its_own(flag: str, bad: float, doublers: dict) -> None:
    import warnings

    fn, w = doublers["float64"]
    w.set_value(np.ones(2))
    with modecfg.config.override({f"NanGuardMode.{flag}": False}), warnings.catch_warnings():
        warnings.simplefilter("error")  # and no warning either
        out = fn(np.array([bad, 1.0]))
    np.testing.assert_array_equal(out, [bad * 2, 2.0])  # the bad value went through...
    np.testing.assert_array_equal(w.get_value(), [1 + bad * 2, 3.0])  # ... and was written
    others = {"nan_is_error": np.inf, "inf_is_error": 1e12, "big_is_error": np.nan}
    with modecfg.config.override({f"NanGuardMode.{flag}": False}):
        with pytest.raises(modecfg.NanGuardError):
            fn(np.array([others[flag], 1.0]))  # the other checks stay on


# -- the guard travels with the function ---------------------------------------------------


def test_a_copy_keeps_the_guard_and_writes_its_updates(doublers: dict) -> None:
    fn, w = doublers["float64"]
    w.set_value(np.ones(2))
    clone = fn.copy()
    np.testing.assert_array_equal(clone(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_array_equal(w.get_value(), [3.0, 5.0])  # the update was written
    with pytest.raises(modecfg.NanGuardError, match="nothing was updated"):
        clone(np.array([np.nan, 1.0]))
    np.testing.assert_array_equal(w.get_value(), [3.0, 5.0])
    for other in (copy.copy(fn), fn.copy(share_memory=True)):
        with pytest.raises(modecfg.NanGuardError):
            other(np.array([np.inf, 1.0]))


def test_a_mode_rebuilt_from_the_guarded_linker_is_still_guarded() -> None:
    """PyMC's pattern (pymc.pytensorf.compile): Mode(linker=mode.linker, optimizer=...)."""
    mode = modecfg.get_mode("NanGuardMode")
    rebuilt = Mode(linker=mode.linker, optimizer=mode.provided_optimizer)
    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    fn = pytensor.function([x], pt.log(x).sum(), updates=[(w, w - x)], mode=rebuilt)
    assert np.isfinite(fn(np.array([1.0, 2.0, 3.0])))
    before = w.get_value().copy()
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        fn(np.array([-1.0, 1.0, 1.0]))
    assert w.get_value().tobytes() == before.tobytes()


def test_inputs_overwritten_in_place_by_a_rebuilt_mode_are_put_back() -> None:
    """PyTensor's own maker lets the update overwrite w in place; the guard restores it."""
    from modecfg.nanguard.mode import make_plan as _plan

    mode = modecfg.get_mode("NanGuardMode")
    rebuilt = Mode(linker=mode.linker, optimizer=mode.provided_optimizer)
    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    fn = pytensor.function([x], [], updates=[(w, w * x)], mode=rebuilt)
    assert _plan(fn.maker.fgraph).destroyed  # w is overwritten in place by this graph
    held = w.get_value(borrow=True)
    before = held.copy()
    with pytest.raises(modecfg.NanGuardError):
        fn(np.array([np.nan, 2.0, 2.0]))
    assert w.get_value(borrow=True) is held and held.tobytes() == before.tobytes()
    fn(np.array([2.0, 2.0, 2.0]))
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])


def test_write_only_updates_compile_as_under_fast_run() -> None:
    x = pt.vector("x")
    last = pytensor.shared(np.zeros(2), name="last")
    fn = modecfg.function([x], [], updates=[(last, x * 2)], mode="NanGuardMode")
    fn(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(last.get_value(), [2.0, 4.0])
    with pytest.raises(modecfg.NanGuardError, match="update of last"):
        fn(np.array([np.nan, 2.0]))
    np.testing.assert_array_equal(last.get_value(), [2.0, 4.0])


# -- only the user's function is guarded ---------------------------------------------------


@pytest.mark.parametrize("how", ["passed", "flag"])
def test_inner_functions_are_checked_as_part_of_the_users_call(how: str) -> None:
    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    soft = pt.special.softmax(pt.log(x) * w)  # line: softmax
    seq = pt.vector("seq")
    summed = pytensor.scan(
        lambda s, acc: acc + pt.log(s), sequences=[seq], outputs_info=[pt.zeros(())], return_updates=False
    )
    a = pt.vector("a")
    inner = OpFromGraph([a], [pt.exp(a) * pt.sqrt(a)])  # line: ofg
    v = pt.vector("v")
    composed = inner(v).sum() + 1  # line: applied
    updates = [(w, w + 1)]
    if how == "flag":
        with modecfg.config.override(mode="NanGuardMode"):
            fns = [pytensor.function([x], soft, updates=updates), pytensor.function([seq], summed[-1]),
                   pytensor.function([v], composed, updates=updates)]  # fmt: skip
    else:
        fns = [modecfg.function([x], soft, updates=updates, mode="NanGuardMode"),
               modecfg.function([seq], summed[-1], mode="NanGuardMode"),
               modecfg.function([v], composed, updates=updates, mode="NanGuardMode")]  # fmt: skip
    with pytest.raises(modecfg.NanGuardError) as info:
        fns[0](np.array([-1.0, 1.0, 2.0]))
    message = str(info.value)
    assert "input i0" not in message and "NaN in Log" in message
    assert f"{__file__}:{LINES['softmax']}" in message
    assert "nothing was updated: w" in message
    assert info.value.dump_path is not None
    with pytest.raises(modecfg.NanGuardError, match="bad values in output 0"):
        fns[1](np.array([1.0, -1.0]))
    assert fns[2](np.array([1.0, 4.0])) == pytest.approx(np.exp(1) + 2 * np.exp(4) + 1)
    before = w.get_value()
    with pytest.raises(modecfg.NanGuardError) as info:  # the NaN is made inside the OpFromGraph
        fns[2](np.array([1.0, -4.0]))
    message = str(info.value)
    assert "NaN in Sqrt inside OpFromGraph{inline=False} (1 of 2 values)" in message
    assert (
        f"{__file__}:{LINES[_inner_line('ofg', 'applied')]}" in message
        and "nothing was updated: w" in message
    )
    np.testing.assert_array_equal(w.get_value(), before)


def test_a_bad_value_inside_nested_op_from_graphs_names_the_innermost_node() -> None:
    a, b = pt.vector("a"), pt.vector("b")
    innermost = OpFromGraph([a], [pt.log(a) + 1])  # line: innermost
    outer = OpFromGraph([b], [innermost(b * 2) - 1])
    v = pt.vector("v")
    fn = modecfg.function([v], outer(v), mode="NanGuardMode")  # line: outer applied
    with pytest.raises(modecfg.NanGuardError) as info:
        fn(np.array([-1.0, 1.0]))
    message = str(info.value)
    assert f"NaN in Log inside {innermost} inside {outer} (1 of 2 values)" in message
    assert f"{__file__}:{LINES[_inner_line('innermost', 'outer applied')]}" in message


def _inner_line(inside: str, applied: str) -> str:
    """The line a bad value inside an OpFromGraph is named by: the inner expression's, where
    PyTensor keeps inner graphs' traces (3.0-3.2); the line that applied the outermost
    OpFromGraph where its inner graphs are frozen without them (3.3)."""
    frozen = hasattr(OpFromGraph([a := pt.vector()], [a + 1]).fgraph, "unfreeze")
    return applied if frozen else inside


# -- gradient nodes --------------------------------------------------------------------------


@pytest.mark.skipif(
    "mutmut" in sys.modules, reason="make mutate: frames are counted, and mutmut's trampolines add theirs"
)
def test_a_bad_gradient_names_its_forward_expression_and_the_grad_call() -> None:
    w = pytensor.shared(np.array([0.0, 1.0]), name="w")
    # PyTensor's traces stop inside grad. The override reaches PyTensor now (pytensor.config is
    # the view); one frame is the user's line, whether or not test values' Op.__call__ is on.
    with modecfg.config.override(traceback__limit=1):
        root = pt.sqrt(w)  # line: forward
        g = pt.grad(root.sum(), w)  # line: grad
    train = modecfg.function([], [], updates=[(w, w - 0.1 * g)], mode="NanGuardMode")
    with pytest.raises(modecfg.NanGuardError) as info:
        train()
    message = str(info.value)
    assert f"gradient of the expression at {__file__}:{LINES['forward']}" in message
    assert f"pt.grad called at {__file__}:{LINES['grad']}" in message
    np.testing.assert_array_equal(w.get_value(), [0.0, 1.0])


USABLE_LINKERS = [r.name for r in modecfg.linkers.table() if r.available and r.name not in ("c", "jax")]


@pytest.mark.parametrize("linker", USABLE_LINKERS)
def test_the_guard_wraps_every_linker(linker: str) -> None:
    x = pt.vector("x")
    w = pytensor.shared(np.ones(2), name="w")
    with modecfg.config.override(linker=linker):
        fn = modecfg.function([x], pt.log(x).sum(), updates=[(w, w + x)], mode="NanGuardMode")
    assert fn(np.array([1.0, 2.0])) == pytest.approx(np.log(2.0))
    np.testing.assert_array_equal(w.get_value(), [2.0, 3.0])
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        fn(np.array([-1.0, 1.0]))
    np.testing.assert_array_equal(w.get_value(), [2.0, 3.0])


def test_a_random_generator_the_call_advanced_in_place_is_put_back() -> None:
    """PyMC's graphs update their RNGs in place: a bad call must not consume random numbers."""
    from modecfg.nanguard.mode import make_plan as _plan

    mode = modecfg.get_mode("NanGuardMode")
    rebuilt = Mode(linker=mode.linker, optimizer=mode.provided_optimizer)
    rng = pytensor.shared(np.random.default_rng(0))
    x = pt.vector("x")
    next_rng, draw = pt.random.normal(0, 1, size=(3,), rng=rng, return_next_rng=True)
    fn = pytensor.function([x], pt.log(x) + draw, updates={rng: next_rng}, mode=rebuilt)
    assert _plan(fn.maker.fgraph).destroyed  # the generator is advanced in place
    expected = np.random.default_rng(0)
    np.testing.assert_allclose(fn(np.ones(3)), expected.normal(size=3))
    with pytest.raises(modecfg.NanGuardError):
        fn(np.array([-1.0, 1.0, 1.0]))
    np.testing.assert_allclose(fn(np.ones(3)), expected.normal(size=3))  # the draw the bad call did not take


# -- the check itself: one dot product when clean, the exact answer always ----------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from modecfg.nanguard.mode import _clean_sum, _Limits, bad_kind  # noqa: E402


def _exact(value: np.ndarray, limits: _Limits) -> str:
    """What the guard must answer, worked out the slow way in float64."""
    a = np.asarray(value).astype(np.complex128 if value.dtype.kind == "c" else np.float64)
    a = np.concatenate([a.real.ravel(), a.imag.ravel()]) if a.dtype.kind == "c" else a.ravel()
    if limits.nan and np.isnan(a).any():
        return "NaN"
    if limits.inf and np.isinf(a).any():
        return "Inf"
    finite = a[np.isfinite(a)]
    if limits.big and (np.abs(finite) > limits.threshold).any():
        return "big"
    return ""


_ELEMENTS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.sampled_from([0.0, 1.0, -1.0, 1.5, 1e10, -1e10, 1.0000001e10, 1.5e10, 3e19, -2e19, 1e-30, 65504.0]),
)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # making float16 data
@settings(max_examples=400, deadline=None)
@given(
    value=hnp.arrays(
        st.sampled_from(["float16", "float32", "float64", "complex64"]),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=40),
        elements=_ELEMENTS,
    ),
    flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    threshold=st.sampled_from([1e10, 1.0, 0.5, 1e-3, 1e-35, 1e19, 3.4e38, 1e200]),
)
def test_the_one_pass_check_gives_the_exact_answer(value: np.ndarray, flags: tuple, threshold: float) -> None:
    """The clean case costs one dot product (the sum of squares bounds every |value|); NaN, Inf,
    overflow of the squares, values at the threshold, tiny thresholds and every dtype give the
    answer the exact comparison gives."""
    limits = _Limits(*flags, threshold, _clean_sum(threshold))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and quietly: no overflow warning from the check
        found = bad_kind(value, limits)
    assert found == _exact(value, limits)


def test_the_one_pass_check_sees_one_bad_value_anywhere_in_a_large_array() -> None:
    limits = _Limits(True, True, True, 1e10, _clean_sum(1e10))
    for dtype in ("float32", "float64"):
        base = np.random.default_rng(0).standard_normal(100_003).astype(dtype)
        assert bad_kind(base, limits) == ""
        for where in (0, 1, 50_000, 100_002):
            for bad, kind in ((np.nan, "NaN"), (np.inf, "Inf"), (-np.inf, "Inf"), (2e10, "big")):
                probe = base.copy()
                probe[where] = bad
                assert bad_kind(probe, limits) == kind
                assert bad_kind(probe[::-1], limits) == kind  # not contiguous
                assert bad_kind(probe.reshape(1, -1).T, limits) == kind


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("threshold", [1.0, 3.0, 1e10])
def test_one_value_just_past_the_threshold_among_small_ones_is_big(dtype: str, threshold: float) -> None:
    """The one-pass check's bound must not let through a value between the threshold and 1.5 times
    it (a sum of squares up to twice the threshold's square would)."""
    limits = _Limits(True, True, True, threshold, _clean_sum(threshold))
    for over in (1.001, 1.2, 1.4, 1.45):
        for size in (1, 2, 7, 1000):
            value = np.zeros(size, dtype=dtype)
            value[size // 2] = threshold * over
            assert bad_kind(value, limits) == "big", (over, size)
            assert bad_kind(-value, limits) == "big"
    at = np.array([threshold, -threshold, 0.0], dtype=dtype)
    assert bad_kind(at, limits) == ""  # at the threshold is not past it


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_tiny_threshold_is_not_fooled_by_squares_that_underflow(dtype: str) -> None:
    value = np.full(3, 1e-30 if dtype == "float32" else 1e-170, dtype=dtype)  # squares: 0
    threshold = 1e-35 if dtype == "float32" else 1e-175
    assert bad_kind(value, _Limits(True, True, True, threshold, _clean_sum(threshold))) == "big"


def test_a_failure_looking_inside_an_op_from_graph_still_gives_the_guards_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Looking inside is a nicety: if it fails, the OpFromGraph itself is named."""
    from modecfg.nanguard import mode as nanguard

    real = nanguard.first_bad_value

    def inner_look_fails(graph: Any, values: Any, limits: Any) -> Any:
        if any(isinstance(n.op, OpFromGraph) for n in graph.apply_nodes):
            return real(graph, values, limits)  # the user's graph
        raise RuntimeError("the inner graph cannot be run here")

    monkeypatch.setattr(nanguard, "first_bad_value", inner_look_fails)
    a, v = pt.vector("a"), pt.vector("v")
    op = OpFromGraph([a], [pt.log(a)])
    fn = modecfg.function([v], op(v), mode="NanGuardMode")
    with caplog.at_level("DEBUG", logger="modecfg.nanguard"):
        with pytest.raises(
            modecfg.NanGuardError, match=r"NaN in OpFromGraph\{inline=False\} \(1 of 1 values\)"
        ):
            fn(np.array([-1.0]))
    said = [r.getMessage() for r in caplog.records if r.name.startswith("modecfg")]
    assert (
        "could not look inside OpFromGraph{inline=False}: RuntimeError('the inner graph cannot be run here')"
        in said
    )


def test_a_guard_mode_changed_by_including_or_clone_keeps_its_checks_and_linker() -> None:
    """PyMC and PyTensor's own code derive modes with ``including``/``excluding``/``clone``."""
    from modecfg.nanguard.mode import GuardLinker

    base = modecfg.NanGuardMode(nan_is_error=False, inf_is_error=True, linker="cvm")
    for derived in (base.excluding("fusion"), base.including("fast_run"),
                    base.clone(link_kwargs={"allow_gc": False})):  # fmt: skip
        linker = derived.linker
        assert isinstance(linker, GuardLinker) and linker.checks == (False, True, None)
        assert type(linker.inner) is type(base.linker.inner)
    assert base.clone(link_kwargs={"allow_gc": False}).linker.allow_gc is False
    assert base.clone(link_kwargs={"allow_gc": True}).linker.allow_gc is True
    x = pt.dvector("x")
    f = modecfg.function([x], pt.log(x), mode=base.excluding("fusion"))
    assert np.isnan(f(np.array([-1.0, 1.0]))[0])  # NaN is no error for this mode
    with pytest.raises(modecfg.NanGuardError, match="Inf in"):
        f(np.array([0.0, 1.0]))
    lenient = modecfg.NanGuardMode(big_is_error=False, linker="cvm")  # the flag says True
    g = modecfg.function([x], x * 1e6, mode=lenient)
    assert g(np.array([1e6]))[0] == 1e12


class _DeviceArray:
    """An array of another library (the JAX linker returns jax.Array): numpy through __array__."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.dtype, self.shape = data.dtype, data.shape

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.data if dtype is None else self.data.astype(dtype)


def test_arrays_of_other_libraries_are_checked_and_rerun_as_numpy() -> None:
    from modecfg.nanguard.mode import _host

    limits = _Limits(True, True, True, 1e10, _clean_sum(1e10))
    assert bad_kind(_DeviceArray(np.array([1.0, np.nan])), limits) == "NaN"
    assert bad_kind(_DeviceArray(np.array([1.0, 2.0])), limits) == ""
    host = _host(_DeviceArray(np.array([1.0, 2.0])))
    assert type(host) is np.ndarray and host.tolist() == [1.0, 2.0]
    for kept in (np.float32(1.0), np.arange(3), [1.0], "text", None):
        assert _host(kept) is kept  # numpy values and what is no array stay as they are

    class OnlyArray:  # __array__ without a dtype: not an array the guard re-runs as numpy
        def __array__(self) -> np.ndarray:
            return np.zeros(1)

    only = OnlyArray()
    assert _host(only) is only and bad_kind(only, limits) == ""


def test_values_at_the_threshold_beside_an_unchecked_nan_or_inf_are_not_big() -> None:
    for threshold in (0.5, 1e10):
        off = {"nan": _Limits(False, True, True, threshold, _clean_sum(threshold)),
               "inf": _Limits(True, False, True, threshold, _clean_sum(threshold))}  # fmt: skip
        assert bad_kind(np.array([threshold, np.nan, -threshold]), off["nan"]) == ""
        assert bad_kind(np.array([threshold, np.inf, -threshold]), off["inf"]) == ""
        assert bad_kind(np.array([np.nan, np.nan]), off["nan"]) == ""  # nothing else to compare
        assert bad_kind(np.array([np.inf, -np.inf]), off["inf"]) == ""
        assert bad_kind(np.array([2 * threshold, np.nan]), off["nan"]) == "big"
    limits = _Limits(True, True, True, 1e10, _clean_sum(1e10))
    assert bad_kind(float("nan"), limits) == "NaN" and bad_kind(np.float32("inf"), limits) == "Inf"
    assert bad_kind(complex(1, np.inf), limits) == "Inf" and bad_kind(3.0, limits) == ""


def test_the_count_of_a_kind_counts_that_kind_only() -> None:
    from modecfg.nanguard.mode import _count

    value = np.array([np.inf, 2e10, 1.0, -np.inf, np.nan])
    assert (_count(value, "Inf", 1e10), _count(value, "NaN", 1e10), _count(value, "big", 1e10)) == (2, 1, 3)


def test_a_guarded_call_copies_nothing_before_it_runs_and_checks_in_a_new_thread() -> None:
    """Updated inputs are not overwritten in place (so nothing is backed up before a call), and
    the first guarded call of a fresh thread is checked like any other."""
    import threading

    x = pt.dvector("x")
    w = pytensor.shared(np.zeros(2), name="w")
    step = modecfg.function([x], x.sum(), updates=[(w, w + x)], mode="NanGuardMode")
    assert step.vm._plan.destroyed == ()
    errors: list[BaseException] = []

    def first_call_here() -> None:
        try:
            step(np.array([np.nan, 1.0]))
        except modecfg.NanGuardError as exc:
            errors.append(exc)

    thread = threading.Thread(target=first_call_here)
    thread.start()
    thread.join(60)
    assert len(errors) == 1 and w.get_value().tolist() == [0.0, 0.0]
