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
            assert said[0].endswith(
                "', which reads floatX=float64 (default), while another thread or task has floatX "
                "overridden (change_flags or config.override): modecfg's overrides hold in the thread or "
                "task that entered them, not in threads started inside the block (PyTensor's change_flags "
                "set the flag for the whole process). Run the work inside the override with "
                "modecfg.workers.submit(pool, fn, ...) or contextvars.copy_context().run, or enter the "
                "override in the worker. Said once."
            )
            assert said[0].startswith("a float64 graph is compiled in thread 'ThreadPoolExecutor-")
            assert pool.submit(_compile_in_thread).result() == ("float64", [])  # once a process
        monkeypatch.setattr(enforcing, "_SAID_SCOPE", [])
        assert pool.submit(_compile_in_thread).result() == ("float64", [])  # the block has ended


def test_the_thread_that_holds_the_override_is_not_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """A float64 graph compiled where the floatX override is in force is the user's own doing
    (a float64 asked for explicitly): the note is about threads that do not see it."""
    import pytensor

    from modecfg.checks import enforce as enforcing

    monkeypatch.setattr(enforcing, "_SAID_SCOPE", [])
    with pytensor.config.change_flags(floatX="float32"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        import pytensor.tensor as pt

        x = pt.vector("x", dtype="float64")
        pytensor.function([x], x * 2, mode="FAST_COMPILE")
    assert not [w for w in seen if "which reads floatX" in str(w.message)]
    assert enforcing._SAID_SCOPE == []  # and the one note of the process is kept for a thread


def test_a_pool_threads_graph_with_a_random_generator_is_looked_at_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Variables without a dtype (a random generator) are passed over, not an AttributeError."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import pytensor
    import pytensor.tensor as pt

    from modecfg.checks import enforce as enforcing

    def compile_draw() -> list[str]:
        rng = pytensor.shared(np.random.default_rng(0))
        # no float64 anywhere: every variable is looked at, the generator's (no dtype) too
        draw = pt.random.normal(np.float32(0), np.float32(1), size=(2,), rng=rng, dtype="float32")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            pytensor.function([], draw * np.float32(2), mode="FAST_COMPILE")
        return [str(w.message) for w in seen if "which reads floatX" in str(w.message)]

    monkeypatch.setattr(enforcing, "_SAID_SCOPE", [])
    with ThreadPoolExecutor(1) as pool, pytensor.config.change_flags(floatX="float32"):
        assert pool.submit(compile_draw).result() == []


def test_a_mode_given_by_name_or_not_at_all_is_not_a_gpu_compile() -> None:
    from modecfg.checks.enforce import on_gpu

    with modecfg.config.override(device="cuda"):
        assert on_gpu("FAST_RUN") is False and on_gpu(None) is False


# -- acting on findings -----------------------------------------------------------------------


def _float64_graph() -> tuple[object, object, object]:
    """A float32 input, made float64 by a float64 constant, and kept float32 by a float32 one."""
    import numpy as np
    import pytensor.tensor as pt

    x = pt.vector("x", dtype="float32")
    wide = x * np.float64(2.0)
    clean = x * np.float32(2.0)
    return x, wide, clean


def test_each_finding_is_one_warning_under_warn_and_all_of_them_one_error_under_raise() -> None:
    from modecfg.checks import enforce

    findings = ["the first place", "the second place"]
    with modecfg.config.override(floatX="float32"):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            enforce._act("warn", findings)  # type: ignore[arg-type]
        assert [str(w.message) for w in seen if w.category is modecfg.Float64Warning] == [
            "float64 in a float32 graph: the first place",
            "float64 in a float32 graph: the second place",
        ]
        with pytest.raises(modecfg.Float64Error) as raised:
            enforce._act("raise", findings)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "2 place(s) where float64 enters a graph compiled with floatX=float32:\n"
        "the first place\nthe second place"
    )
    assert list(raised.value.findings) == findings


def test_pdb_stops_once_at_the_first_place_with_every_place_said(monkeypatch: pytest.MonkeyPatch) -> None:
    import pdb

    from modecfg.checks import enforce

    stops: list[bool] = []
    monkeypatch.setattr(pdb, "set_trace", lambda: stops.append(True))
    logged: list[str] = []
    monkeypatch.setattr(enforce._log, "error", lambda fmt, message: logged.append(message))
    with modecfg.config.override(floatX="float32"):
        enforce._act("pdb", ["a", "b"])  # type: ignore[list-item]
    assert stops == [True]
    assert logged == ["2 place(s) where float64 enters a graph compiled with floatX=float32:\na\nb"]


def test_the_check_itself_never_trips_pytensors_creation_time_check() -> None:
    """Looking at the graph clones it: under warn_float64=raise a float64 clone must not raise
    PyTensor's bare Exception inside modecfg's own check."""
    from modecfg.checks import enforce

    _, wide, clean = _float64_graph()
    for action in ("raise", "warn", "ignore"):
        with modecfg.config.override(floatX="float32", warn_float64=action):
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                found = enforce._check([wide])
            assert len(found) == 1 and "float64" in str(found[0])
            assert not [w for w in seen if "float64" in str(w.message)], action
            assert enforce._check([clean]) == []
            assert modecfg.config.warn_float64 == action  # put back


def test_before_compile_raises_only_under_raise_when_the_check_applies_and_nothing_collects() -> None:
    import numpy as np
    import pytensor

    from modecfg.checks import enforce

    _, wide, clean = _float64_graph()
    shared = pytensor.shared(np.zeros(3, dtype="float32"), name="s")
    with modecfg.config.override(floatX="float32", warn_float64="raise"):
        for outputs in (wide, [clean, wide], (wide,)):
            with pytest.raises(modecfg.Float64Error):
                enforce.before_compile(outputs)
        with pytest.raises(modecfg.Float64Error):  # an update as a dict, as PyTensor takes them
            enforce.before_compile(clean, {shared: wide})
        with pytest.raises(modecfg.Float64Error):  # and as pairs
            enforce.before_compile(None, [(shared, wide)])
        enforce.before_compile(clean, {shared: clean})
        enforce.before_compile(None)
        with enforce.collecting() as found:  # modecfg check-float32 gathers instead
            enforce.before_compile(wide)
        assert found == []  # before_compile leaves them to the compile's own check
    for flags in (
        {"floatX": "float32", "warn_float64": "warn"},
        {"floatX": "float64", "warn_float64": "raise"},
    ):
        with modecfg.config.override(**flags), warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            enforce.before_compile(wide)
        assert not [w for w in seen if w.category is modecfg.Float64Warning], flags
