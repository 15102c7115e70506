"""The float64 check at each compile (modecfg.checks.enforce): what it says where an override
another thread holds is not seen."""

from __future__ import annotations

import warnings

import pytest

import modecfg


def _compile_in_thread() -> tuple[str, list[str]]:
    import pytensor
    import pytensor.tensor as pt

    x = pt.vector("x")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pytensor.function([x], x * 2, mode="FAST_COMPILE")
    return str(x.dtype), [str(w.message) for w in seen if issubclass(w.category, modecfg.Float64Warning)]


def _compile_float32_in_thread() -> list[str]:
    import pytensor
    import pytensor.tensor as pt

    x = pt.vector("x", dtype="float32")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pytensor.function([x], x * pt.constant(2, dtype="float32"), mode="FAST_COMPILE")
    return [str(w.message) for w in seen if issubclass(w.category, modecfg.Float64Warning)]


def test_a_pool_thread_is_told_only_for_a_graph_that_has_a_float64(monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph with no float64 compiled in the pool while the block holds float32 elsewhere is
    what the user meant: nothing said, and the one note of the process is kept (issue 59)."""
    from concurrent.futures import ThreadPoolExecutor

    import pytensor

    from modecfg.checks import enforce as enforcing

    monkeypatch.setattr(enforcing, "_SAID_SCOPE", [])
    with ThreadPoolExecutor(1) as pool, pytensor.config.change_flags(floatX="float32"):
        assert pool.submit(_compile_float32_in_thread).result() == []
        dtype, said = pool.submit(_compile_in_thread).result()
        assert dtype == "float64" and len(said) == 1


def test_a_pool_thread_that_does_not_see_the_float32_block_it_started_in_is_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """change_flags holds in the thread that entered it (PyTensor's set the whole process): a
    thread pool started inside it builds float64 graphs. Said once, at the float64 compile."""
    from concurrent.futures import ThreadPoolExecutor

    import pytensor

    from modecfg.checks import enforce as enforcing

    monkeypatch.setattr(enforcing, "_SAID_SCOPE", [])
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(_compile_in_thread).result() == ("float64", [])  # no override anywhere
        with pytensor.config.change_flags(floatX="float32"):
            carried = pool.submit(modecfg.config.snapshot().run, _compile_in_thread).result()
            assert carried == ("float32", [])  # the block's values carried: float32, nothing said
            dtype, said = pool.submit(_compile_in_thread).result()
            assert dtype == "float64" and len(said) == 1, said
            assert "floatX=float64 (default)" in said[0] and "modecfg.workers.submit" in said[0]
            assert pool.submit(_compile_in_thread).result() == ("float64", [])  # once a process
        monkeypatch.setattr(enforcing, "_SAID_SCOPE", [])
        assert pool.submit(_compile_in_thread).result() == ("float64", [])  # the block has ended
