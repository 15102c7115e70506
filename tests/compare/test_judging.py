"""Judging values across backends (modecfg.compare.judging): tolerances by dtype, how two values
differ, and which backend is the odd one for each output."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from modecfg import config
from modecfg.compare.judging import REWRITES, WRITTEN, Mismatch, Settings, difference, judge, tolerance

# -- comparing values --------------------------------------------------------------------------------


def test_values_agree_within_the_tolerance_of_their_dtype() -> None:
    one32, near32 = np.float32([1.0, 2.0]), np.float32([1.00005, 2.0])
    assert difference(near32, one32, "a", "b") == ""  # float32: rtol 1e-4
    assert difference(np.array([1.00005, 2.0]), np.array([1.0, 2.0]), "a", "b") == (
        "1 of 2 values differ beyond rtol=1e-05, atol=1e-08; most at index (0,): a 1.00005, b 1"
    )
    assert difference(np.float64(1.2), np.float64(1.0), "a", "b", settings=Settings(rtol=0.5)) == ""
    with config.override(**{"CompareMode.rtol": 0.5}):
        assert difference(np.float64(1.2), np.float64(1.0), "a", "b") == ""
        assert difference(np.float64(1.2), np.float64(1.0), "a", "b", settings=Settings(rtol=0.0))


def test_nan_and_inf_agree_only_with_their_like() -> None:
    nan = np.array([1.0, np.nan, 3.0])
    assert difference(nan, nan.copy(), "a", "b") == ""
    assert difference(nan, np.array([1.0, 2.0, 3.0]), "numba", "py") == (
        "NaN in 1 of 3 values on numba, 0 on py; first at index (1,): numba nan, py 2"
    )
    inf = np.array([np.inf, -np.inf])
    assert difference(inf, inf.copy(), "a", "b") == ""
    assert difference(inf, -inf, "a", "b").startswith(
        "Inf in 2 of 2 values on a, 2 on b; first at index (0,)"
    )
    assert difference(np.array([np.inf]), np.array([1e308]), "a", "b").startswith("Inf in 1 of 1")


def test_shapes_integers_and_what_is_no_array() -> None:
    assert difference(np.zeros(2), np.zeros(3), "a", "b") == "shape (2,) on a, (3,) on b"
    assert difference(np.array([1, 2]), np.array([1, 3]), "a", "b") == (
        "1 of 2 values differ; first at index (1,): a 2, b 3"
    )
    assert difference(np.array([1, 2]), np.array([1, 2]), "a", "b") == ""
    rng = np.random.default_rng(0)
    assert difference(rng, np.random.default_rng(1), "a", "b") == ""  # a generator's state is not a value


# -- which backend is the odd one -------------------------------------------------------------------


def _judge(**results: list[Any]) -> list[Any]:
    named = {WRITTEN if k == "written" else k: v for k, v in results.items()}
    return judge(named, "numba", ["output 0"], ["float64"])


def test_the_backend_that_differs_from_the_graph_as_written_is_named() -> None:
    (m,) = _judge(
        numba=[np.float64(1.5)], cvm=[np.float64(1.0)], py=[np.float64(1.0)], written=[np.float64(1.0)]
    )
    assert (m.backend, m.reference) == ("numba", f"cvm, py and {WRITTEN}")


def test_every_backend_differing_alike_from_the_graph_as_written_blames_the_rewrites() -> None:
    (m,) = _judge(
        numba=[np.float64(2.0)], cvm=[np.float64(2.0)], py=[np.float64(2.0)], written=[np.float64(1.0)]
    )
    assert (m.backend, m.reference) == (REWRITES, WRITTEN)


def test_a_backend_finite_where_the_graph_as_written_is_not_is_asked_whether_rewrites_did_it() -> None:
    nan = np.float64(np.nan)
    (m,) = _judge(numba=[np.float64(1.0)], cvm=[nan], py=[nan], written=[nan])
    assert m.backend == "numba" and m.stabilised  # the mode compiles it as written to tell
    assert _judge(numba=[np.float64(1.0)], cvm=[np.float64(1.0)], py=[np.float64(1.0)], written=[nan]) == []


def test_a_backend_that_keeps_a_nan_the_others_stabilise_is_reported_as_such() -> None:
    nan = np.float64(np.nan)
    (m,) = _judge(numba=[nan], cvm=[np.float64(1.0)], py=[np.float64(1.0)], written=[nan])
    assert m.backend == "numba" and m.reference == "cvm and py" and not m.stabilised
    assert m.detail.endswith(f"({WRITTEN} makes NaN or Inf too: the others' rewrites stabilise it)")


def test_complex_values_get_the_tolerance_of_their_parts() -> None:
    assert tolerance("complex64") == tolerance("float32") != tolerance("float64")
    assert tolerance("complex128") == tolerance("float64")
    a = np.array([1.0 + 1.0j], dtype="complex64")
    b = a * np.complex64(1 + 2e-5)  # within float32's rtol, beyond float64's
    assert difference(a, b, "numba", "py", "complex64") == ""
    assert difference(a.astype("complex128"), b.astype("complex128"), "numba", "py", "complex128") != ""


def _f(*values: float) -> np.ndarray:
    return np.array(values, dtype="float64")


def test_each_output_is_judged_whatever_the_ones_before_it_did() -> None:
    results = {"numba": [_f(1.0), _f(5.0), _f(7.0)], "py": [_f(1.0), _f(2.0), _f(3.0)],
               WRITTEN: [_f(1.0), _f(2.0), _f(3.0)]}  # fmt: skip
    found = judge(results, "numba", ["a", "b", "c"], ["float64"] * 3)
    assert [(m.output, m.position, m.backend, m.reference) for m in found] == [
        ("b", 1, "numba", f"py and {WRITTEN}"), ("c", 2, "numba", f"py and {WRITTEN}"),
    ]  # fmt: skip


def test_an_outputs_dtype_and_the_modes_tolerances_decide_what_agrees() -> None:
    near = {"numba": [_f(1.00005)], "py": [_f(1.0)], WRITTEN: [_f(1.0)]}  # within float32's rtol
    assert judge(near, "numba", ["o"], ["float32"]) == []
    assert [m.backend for m in judge(near, "numba", ["o"], ["float64"])] == ["numba"]
    assert [m.backend for m in judge(near, "numba", ["o"], [])] == ["numba"]  # no dtype: float64's
    far = {"numba": [_f(1.2)], "py": [_f(1.0)], WRITTEN: [_f(1.0)]}
    assert judge(far, "numba", ["o"], ["float64"], Settings(rtol=0.5)) == []
    stable = {"numba": [_f(1.2)], "py": [_f(1.0)], "cvm": [_f(1.2)], WRITTEN: [_f(np.nan)]}
    assert judge(stable, "numba", ["o"], ["float64"], Settings(rtol=0.5)) == []  # the backends alike
    alike = {"numba": [_f(1.2)], "py": [_f(1.2)], WRITTEN: [_f(1.0)]}
    assert judge(alike, "numba", ["o"], ["float64"], Settings(rtol=0.5)) == []


def test_one_backend_differing_from_the_graph_as_written_is_that_backend_not_the_rewrites() -> None:
    (m,) = judge({"numba": [_f(2.0)], WRITTEN: [_f(1.0)]}, "numba", ["o"], ["float64"])
    assert (m.backend, m.reference) == ("numba", WRITTEN)
    both = {
        "numba": [_f(2.0)],
        "py": [_f(2.0 + 1e-3)],
        WRITTEN: [_f(1.0)],
    }  # alike from written, not each other
    assert [m.backend for m in judge(both, "numba", ["o"], ["float64"])] == ["numba", "py"]


def test_among_backends_alone_the_larger_group_then_the_per_node_one_then_the_first_is_right() -> None:
    nan = _f(np.nan)
    tie = {"numba": [_f(1.0)], "jax": [_f(1.0)], "cvm": [_f(2.0)], "py": [_f(2.0)], WRITTEN: [nan]}
    assert [(m.backend, m.reference) for m in judge(tie, "numba", ["o"], ["float64"])] == [
        ("numba", "cvm and py"), ("jax", "cvm and py"),
    ]  # fmt: skip
    fused = {"numba": [_f(1.0)], "jax": [_f(2.0)], WRITTEN: [nan]}
    (m,) = judge(fused, "numba", ["o"], ["float64"])
    assert (m.backend, m.reference, m.stabilised) == ("jax", "numba", True)
    assert m.detail == (
        "1 of 1 values differ beyond rtol=1e-05, atol=1e-08; most at index (0,): jax 2, numba 1"
    )
    unknown = {"numba": [_f(1.0)], "jax": [_f(2.0)]}  # the graph as written not run (hook off)
    (m,) = judge(unknown, "numba", ["o"], ["float64"])
    assert (m.backend, m.stabilised) == ("jax", False) and "makes NaN or Inf too" not in m.detail
    kept = {"numba": [nan], "cvm": [_f(1.0)], "py": [_f(1.0)], WRITTEN: [nan]}
    (m,) = judge(kept, "numba", ["o"], ["float64"])
    assert m.detail.startswith("NaN in 1 of 1 values on numba, 0 on cvm") and not m.stabilised


def test_a_tolerance_by_dtype_the_flags_and_the_modes_own() -> None:
    assert tolerance(None) == tolerance("float64") == (1e-5, 1e-8)
    assert tolerance("complex256") == tolerance("float64") and tolerance("int64") == tolerance("float64")
    assert tolerance("float16") == (1e-3, 1e-3)
    with config.override(**{"CompareMode.atol": 0.5}):
        assert tolerance("float32") == (1e-4, 0.5)
        assert tolerance("float32", Settings(atol=0.25)) == (1e-4, 0.25)


def test_what_is_compared_as_an_array_and_where_a_difference_is_said_to_be() -> None:
    class Device:  # an array of another library (a JAX or CuPy array): numpy reads it
        def __init__(self, values: list[float]) -> None:
            self.values = np.array(values)
            self.dtype, self.shape = self.values.dtype, self.values.shape

        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            return self.values

    assert difference(Device([1.0, 2.0]), np.array([1.0, 3.0]), "a", "b").startswith("1 of 2 values differ")

    class Shapeless:  # has __array__ and a dtype but no shape: not an array, not compared
        dtype = np.dtype("float64")

        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            return np.array([9.0])

    for partial in (Shapeless(), type("NoDtype", (), {"shape": (1,), "__array__": Shapeless.__array__})()):
        assert difference(partial, np.array([1.0]), "a", "b") == ""
    assert difference(np.float64(1.2), np.float64(1.0), "a", "b").endswith("most at the value: a 1.2, b 1")
    assert difference(np.array([1, 2]), np.array([1.0, 2.5]), "a", "b") == (
        "1 of 2 values differ; first at index (1,): a 2, b 2.5"
    )  # an integer against a float: compared exactly


def test_the_tolerance_bound_is_inclusive_and_relative_to_the_reference() -> None:
    exact = Settings(rtol=0.0, atol=0.5)
    assert difference(np.float64(1.5), np.float64(1.0), "a", "b", settings=exact) == ""
    assert difference(np.float64(1.6), np.float64(1.0), "a", "b", settings=exact) != ""
    assert difference(np.float64(1e6 + 5), np.float64(1e6), "a", "b") == ""  # 5 <= 1e-5 * 1e6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf and an overflowing gap are said nothing of
        assert difference(_f(np.inf, 1.0), _f(np.inf, 1.0), "a", "b") == ""
        assert difference(_f(1e308), _f(-1e308), "a", "b").startswith("1 of 1 values differ")


def test_a_mismatch_says_the_backend_or_the_rewrites() -> None:
    assert Mismatch("o", 0, "numba", "py", "d").describe() == "o: numba differs from py: d"
    assert Mismatch("o", 0, REWRITES, WRITTEN, "d").describe() == (
        f"o: every backend differs alike from {WRITTEN}: d"
    )


def test_the_dtype_and_tolerances_hold_in_every_comparison_judge_makes() -> None:
    nan, f32 = _f(np.nan), ["float32"]
    # both differ from the graph as written and agree with each other within float32's rtol
    alike = {"numba": [_f(2.0)], "py": [_f(2.0001)], WRITTEN: [_f(1.0)]}
    assert [m.backend for m in judge(alike, "numba", ["o"], f32)] == [REWRITES]
    loose = {"numba": [_f(2.0)], "py": [_f(2.2)], WRITTEN: [_f(1.0)]}
    # the mode's rtol=0.5 holds between the backends too: alike, so the rewrites
    assert [m.backend for m in judge(loose, "numba", ["o"], ["float64"], Settings(rtol=0.5, atol=0.0))] == [
        REWRITES
    ]
    grouped = {"numba": [_f(1.0)], "jax": [_f(1.00005)], "cvm": [_f(1.0)], WRITTEN: [nan]}
    assert judge(grouped, "numba", ["o"], f32) == []  # one group within float32's rtol
    split = {"numba": [_f(1.0)], "jax": [_f(1.001)], "py": [_f(1.0)], WRITTEN: [nan]}
    (m,) = judge(split, "numba", ["o"], f32)
    assert m.backend == "jax" and "rtol=0.0001, atol=1e-05" in m.detail
    (m,) = judge(split, "numba", ["o"], ["float64"], Settings(rtol=1e-4, atol=0.0))
    assert "rtol=0.0001, atol=0" in m.detail


def test_outputs_after_one_blamed_on_the_rewrites_or_with_nothing_to_compare_are_judged() -> None:
    nan = _f(np.nan)
    results = {"numba": [_f(2.0), nan, _f(5.0)], "py": [_f(2.0), nan, _f(3.0)],
               WRITTEN: [_f(1.0), nan, _f(3.0)]}  # fmt: skip
    found = judge(results, "numba", ["a", "b", "c"], ["float64"] * 3)
    assert [(m.output, m.backend) for m in found] == [("a", REWRITES), ("c", "numba")]
