"""Scopes and listeners leave no state behind (issue 20): exits out of order, listeners that
raise, async generators, long assignment loops, racing threads, and snapshots in workers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import subprocess
import sys
import threading
from typing import Any

import pytest

import modecfg
from modecfg.configuration import Change, Config, Snapshot
from modecfg.configuration.origin import Layer, Origin
from modecfg.errors import ConfigError, FlagValueError


@pytest.fixture
def cfg() -> Config:
    return modecfg.load(env={}, rc_files=[])


# -- overrides exited out of order -------------------------------------------------------------


def test_an_override_exited_before_a_later_one_takes_away_only_its_own_values(cfg: Config) -> None:
    a = cfg.override(floatX="float32")
    b = cfg.override(traceback__limit=3)
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)  # out of order, as an ExitStack or a fixture can do
    assert (cfg.floatX, cfg.traceback.limit) == ("float64", 3)
    assert cfg.overrides() == {"traceback.limit": 3}
    b.__exit__(None, None, None)
    assert (cfg.floatX, cfg.traceback.limit) == ("float64", 8)
    assert cfg.overrides() == {}


def test_out_of_order_exits_of_the_same_flag_keep_the_one_still_open(cfg: Config) -> None:
    outer = cfg.override(floatX="float32")
    inner = cfg.override(floatX="float16")
    with contextlib.ExitStack() as stack:
        outer.__enter__()
        stack.callback(inner.__exit__, None, None, None)
        inner.__enter__()
        outer.__exit__(None, None, None)
        assert cfg.floatX == "float16" and cfg.origin("floatX").layer is Layer.OVERRIDE
    assert cfg.floatX == "float64" and cfg.is_default("floatX")


def test_a_mark_around_a_module_fixtures_override_does_not_leak(cfg: Config) -> None:
    """pytest sets a module-scoped fixture up inside the first test's setup, where a
    ``@pytest.mark.modecfg`` override is already entered; the mark exits at that test's
    teardown while the fixture's override stays: the mark's value must go with it."""
    first_mark = cfg.override(floatX="float32")
    first_mark.__enter__()
    fixture = cfg.override(traceback__limit=1)
    fixture.__enter__()  # the fixture, set up during the first test
    first_mark.__exit__(None, None, None)  # the first test's teardown
    assert cfg.floatX == "float64" and cfg.traceback.limit == 1
    assert cfg.overrides() == {"traceback.limit": 1}
    with cfg.override(floatX="float16"):  # the next test's mark
        assert (cfg.floatX, cfg.traceback.limit) == ("float16", 1)
    fixture.__exit__(None, None, None)  # the module's end
    assert cfg.overrides() == {} and cfg.floatX == "float64"


def test_an_exit_that_was_never_entered_here_is_an_error(cfg: Config) -> None:
    other = cfg.override(floatX="float32")
    with cfg.override(traceback__limit=2), pytest.raises(RuntimeError, match="without being entered"):
        other.__exit__(None, None, None)


# -- listeners that raise ----------------------------------------------------------------------


def test_a_listener_that_raises_on_override_entry_refuses_the_override(cfg: Config) -> None:
    def refuse(change: Change) -> None:
        raise ValueError("no float32 here")

    cfg.subscribe(refuse, ["floatX"], overrides=True)
    ran = []
    with pytest.raises(ValueError, match="no float32 here"):
        with cfg.override(floatX="float32"):
            ran.append(True)
    assert ran == [] and cfg.floatX == "float64" and cfg.overrides() == {}


def test_a_listener_that_raises_on_assignment_undoes_it_and_tells_those_that_heard(cfg: Config) -> None:
    heard: list[tuple[str, Any]] = []
    later: list[Change] = []

    def failing(change: Change) -> None:
        if change.value == "float32":
            raise RuntimeError("PyTensor refused it")

    cfg.subscribe(lambda c: heard.append((c.kind, c.value)), ["floatX"])
    cfg.subscribe(failing, ["floatX"])
    cfg.subscribe(later.append, ["floatX"])
    cfg.floatX = "float16"
    heard.clear()
    later.clear()
    with pytest.raises(RuntimeError, match="PyTensor refused it"):
        cfg.floatX = "float32"
    assert cfg.floatX == "float16" and cfg.origin("floatX").layer is Layer.ASSIGNMENT
    assert heard == [("assigned", "float32"), ("reset", "float16")]
    assert later == []  # never told of a change that did not happen


# -- decorated async generators --------------------------------------------------------------


def test_athrow_and_aclose_reach_an_async_generator_under_change_flags() -> None:
    seen: list[Any] = []

    @modecfg.change_flags(floatX="float32")
    async def gen() -> Any:
        try:
            while True:
                try:
                    yield modecfg.config.floatX
                except KeyError as exc:
                    seen.append(("thrown", str(exc), modecfg.config.floatX))
        finally:
            seen.append(("finally", modecfg.config.floatX))

    async def main() -> None:
        agen = gen()
        assert await agen.__anext__() == "float32"
        assert await agen.athrow(KeyError("k")) == "float32"
        await agen.aclose()

    asyncio.run(main())
    assert seen == [("thrown", "'k'", "float32"), ("finally", "float32")]
    assert modecfg.config.floatX == "float64"


# -- long loops and racing threads -------------------------------------------------------------


def test_a_loop_of_assignments_keeps_one(cfg: Config) -> None:
    for i in range(20_000):
        cfg.traceback.limit = i % 50
    assignments = [c for c in cfg.layers("traceback.limit") if c.origin.layer is Layer.ASSIGNMENT]
    assert len(assignments) == 1 and assignments[0].value == 19_999 % 50
    assert len(str(cfg.explain("traceback.limit"))) < 2_000


def test_two_threads_assigning_at_once_are_heard_in_the_order_they_were_stored(cfg: Config) -> None:
    last: list[str] = []
    cfg.subscribe(lambda c: last.append(c.value), ["floatX"])
    for _ in range(300):
        barrier = threading.Barrier(2)

        def assign(value: str, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            cfg.floatX = value

        threads = [threading.Thread(target=assign, args=(v,)) for v in ("float32", "float16")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert last[-1] == cfg.floatX  # a listener mirroring the value agrees with the store


# -- configuration that travels ----------------------------------------------------------------


def _read_floatx() -> str:
    return str(modecfg.config.floatX)


def _assign_then_read() -> tuple[str, str]:
    modecfg.config.floatX = "float16"
    return str(modecfg.config.floatX), str(modecfg.config["floatX"])


def test_a_fresh_worker_whose_first_use_is_a_snapshot_run_keeps_working() -> None:
    snap = modecfg.load(env={}, rc_files=[], assignments={"floatX": "float32"}).snapshot()
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=spawn) as pool:
        assert pool.submit(snap.run, _read_floatx).result(timeout=120) == "float32"
        assert pool.submit(_read_floatx).result(timeout=60) == "float64"
        assert pool.submit(_assign_then_read).result(timeout=60) == ("float16", "float16")
        assert pool.submit(_read_floatx).result(timeout=60) == "float16"


@pytest.mark.parametrize(
    "values",
    [
        (("floatX", "float32", "an origin as text"),),
        (("floatX", "float32"),),
        ("floatX=float32",),
        "floatX=float32",
        (("floatX", "float32", Origin(Layer.ASSIGNMENT)), ("floatX", "float33", Origin(Layer.ASSIGNMENT))),
    ],
    ids=["origin is text", "a pair", "a string entry", "values are a string", "a bad value after a good"],
)
def test_a_snapshot_of_the_wrong_shape_is_a_config_error_and_applies_nothing(values: Any) -> None:
    cfg = modecfg.load(env={}, rc_files=[])
    snap = Snapshot(values, "elsewhere:1")
    for apply in (snap.install, lambda c: snap.override(c).__enter__()):
        with pytest.raises(FlagValueError) as info:
            apply(cfg)
        said = str(info.value)
        assert isinstance(info.value, ConfigError)
        assert "snapshot from elsewhere:1" in said or "float33" in said
        assert cfg.floatX == "float64" and cfg.is_default("floatX")


def test_modecfg_workers_is_reachable_after_import_modecfg() -> None:
    pytest.importorskip("distributed")
    code = "import modecfg; print(type(modecfg.workers.ConfigPlugin()).__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ConfigPlugin"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_child_forked_while_a_thread_holds_modecfgs_locks_can_use_them() -> None:
    """In a fresh interpreter: a fork of the suite's worker would inherit whatever else it runs
    (numba's compiler threads, after a compile, hold locks of their own at a fork: the child then
    hung in a lock none of modecfg's, on one worker and not the other)."""
    import textwrap

    script = textwrap.dedent(
        """
        import os, threading
        import modecfg
        from modecfg._pytensor import patches

        held, release = threading.Event(), threading.Event()

        def hold():
            with patches._lock, modecfg.config._cfg_store.lock:
                held.set()
                release.wait(60)

        thread = threading.Thread(target=hold)
        thread.start()
        held.wait(10)
        try:
            pid = os.fork()
            if pid == 0:  # the child: both locks must be free here
                store = modecfg.config._cfg_store
                ok = patches._lock.acquire(timeout=5) and store.lock.acquire(timeout=5)
                os._exit(0 if ok else 1)
            _, status = os.waitpid(pid, 0)
        finally:
            release.set()
            thread.join()
        print("child", os.waitstatus_to_exitcode(status))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "child 0", done.stderr


def test_a_block_entered_in_one_thread_and_left_in_another_ends_where_it_was_entered(cfg: Config) -> None:
    """change_flags entered in one thread and left in another (a callback, a handed-back task):
    the leaving thread got a RuntimeError and the entering one kept float32 for good. Now it
    ends as PyTensor's does, whichever thread leaves it (issue 32)."""
    import threading

    block = cfg.override(floatX="float32")
    entered, left, seen = threading.Event(), threading.Event(), {}

    def enters() -> None:
        block.__enter__()
        seen["inside"] = cfg.floatX
        entered.set()
        left.wait(10)
        seen["after"] = (cfg.floatX, cfg.origin("floatX").layer)

    def leaves() -> None:
        entered.wait(10)
        block.__exit__(None, None, None)
        left.set()

    threads = [threading.Thread(target=enters), threading.Thread(target=leaves)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"inside": "float32", "after": ("float64", "default")}
    with pytest.raises(RuntimeError, match="without being entered"):
        block.__exit__(None, None, None)  # left already: nothing open anywhere
