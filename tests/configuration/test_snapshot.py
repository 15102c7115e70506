"""Configuration that travels to worker processes: snapshots, with real spawned children."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import modecfg
from modecfg.configuration.origin import Layer, Origin
from modecfg.configuration.snapshot import Snapshot
from modecfg.errors import FlagValueError
from tests.fresh import ROOT, run_json

# The child's own environment disagrees with the driver on both flags.
CHILD_ENV = "floatX=float32,traceback.limit=1"


def _child_view() -> dict[str, object]:
    cfg = modecfg.config
    return {
        "values": [cfg.floatX, cfg.traceback.limit],
        "origin": str(cfg.origin("floatX")),
        "layer": str(cfg.origin("floatX").layer),
    }


def _scoped_in_child(snapshot: modecfg.Snapshot) -> dict[str, object]:
    before = _child_view()
    inside = snapshot.run(_child_view)
    return {"before": before, "inside": inside, "after": _child_view()}


def _installed_in_child() -> dict[str, object]:
    return _child_view()


@pytest.fixture
def disagreeing_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spawned children read THEANO_FLAGS from the environment they inherit."""
    modecfg.config.floatX  # noqa: B018  (the driver has read its sources already)
    monkeypatch.setenv("THEANO_FLAGS", CHILD_ENV)


@modecfg.change_flags(floatX="float64", traceback__limit=8)
def _driver_snapshot() -> modecfg.Snapshot:
    return modecfg.config.snapshot()


def test_a_snapshot_holds_overrides_and_values_equal_to_the_default() -> None:
    snap = _driver_snapshot()
    values = {name: value for name, value, _ in snap.values}
    assert values["floatX"] == "float64" and values["traceback.limit"] == 8
    assert "floatX=float64" in snap.to_flags() and "traceback.limit=8" in snap.to_flags()
    origins = {name: origin for name, _, origin in snap.values}
    assert origins["floatX"].layer is Layer.OVERRIDE and origins["floatX"].source == __file__
    assert pickle.loads(pickle.dumps(snap)) == snap


def test_a_spawned_child_runs_a_task_under_the_driver_s_overrides(disagreeing_children: None) -> None:
    snap = _driver_snapshot()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        out = pool.apply(_scoped_in_child, (snap,))
    assert out["before"]["values"] == ["float32", 1]  # type: ignore[index]
    assert out["inside"]["values"] == ["float64", 8]  # type: ignore[index]
    assert out["inside"]["layer"] == "override"  # type: ignore[index]
    assert __file__ in out["inside"]["origin"] and "(override in " in out["inside"]["origin"]  # type: ignore[index]
    assert out["after"]["values"] == ["float32", 1]  # type: ignore[index]


def test_a_process_pool_initialized_with_a_snapshot_works_as_the_driver(disagreeing_children: None) -> None:
    snap = _driver_snapshot()
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=snap.install) as pool:
        out = pool.submit(_installed_in_child).result(timeout=120)
    assert out["values"] == ["float64", 8]
    assert out["layer"] == "assignment"


def test_a_tampered_snapshot_is_refused_with_the_error_a_bad_value_gets() -> None:
    cfg = modecfg.load(env={})
    good = cfg.snapshot()
    origin = modecfg.Origin(Layer.OVERRIDE, "x.py", 1)
    for values, error in [
        ((("floatX", "float33", origin),), FlagValueError),
        ((("no.such.flag", "1", origin),), FlagValueError),
        ((("floatX", ["float32"], origin),), FlagValueError),
    ]:
        bad = good._replace(values=values)
        with pytest.raises(error):
            bad.override(cfg)
        with pytest.raises(error):
            bad.install(cfg)
    assert cfg.floatX == "float64" and cfg.origin("floatX").layer is Layer.DEFAULT


def test_flags_pytensor_fixes_are_assigned_not_scoped() -> None:
    driver = modecfg.load(env={"THEANO_FLAGS": "cxx=/nonexistent/g++"})
    snap = driver.snapshot()
    worker = modecfg.load(env={})
    with snap.override(worker):
        assert worker.cxx == "/nonexistent/g++"
        assert worker.origin("cxx").layer is Layer.ASSIGNMENT  # cannot be scoped
        assert worker.origin("cxx").source == f"THEANO_FLAGS (env in {snap.process})"
    assert worker.cxx == "/nonexistent/g++"


def test_a_snapshot_s_values_say_where_and_in_which_process_they_were_set() -> None:
    driver = modecfg.load(env={"THEANO_FLAGS": "floatX=float32"}, rc_files=[])
    driver.traceback.limit = 3
    snap = Snapshot(driver.snapshot().values, "driver-host:42")
    scoped, installed = modecfg.load(env={}, rc_files=[]), modecfg.load(env={}, rc_files=[])
    with snap.override(scoped):
        assert (scoped.floatX, scoped.traceback.limit) == ("float32", 3)
        assert scoped.origin("floatX") == Origin(Layer.OVERRIDE, "THEANO_FLAGS (env in driver-host:42)")
        assert str(scoped.origin("traceback.limit")).startswith(f"override at {__file__}:")
        assert str(scoped.origin("traceback.limit")).endswith(" (assignment in driver-host:42)")
    snap.install(installed)
    assert (installed.floatX, installed.traceback.limit) == ("float32", 3)
    assert installed.origin("floatX") == Origin(Layer.ASSIGNMENT, "THEANO_FLAGS (env in driver-host:42)")


def test_run_passes_every_argument_under_the_snapshot() -> None:
    snap = modecfg.load(env={}, rc_files=[], assignments={"floatX": "float32"}).snapshot()
    seen = snap.run(lambda *args, **kwargs: (modecfg.config.floatX, args, kwargs), 1, 2, key="v")
    assert seen == ("float32", (1, 2), {"key": "v"}) and modecfg.config.floatX == "float64"


@pytest.mark.parametrize(
    ("values", "process", "message"),
    [
        ("floatX=float32", "w:1", "a snapshot from w:1 holds a str, not values"),
        (
            ("floatX=float32",),
            "w:1",
            "a snapshot from w:1 holds 'floatX=float32', not a (flag, value, origin) triple",
        ),
        ((("nosuch", 1, Origin(Layer.ASSIGNMENT)),), 7, "a snapshot from ? sets unknown flag 'nosuch'"),
        (
            (("floatX", "float32", "main.py:3"),),
            "w:1",
            "a snapshot from w:1 gives floatX the origin 'main.py:3', not an Origin",
        ),
        (
            (("floatX", b"float32", Origin(Layer.ASSIGNMENT)),),
            "w:1",
            "a snapshot from w:1 gives floatX a bytes; snapshots hold strings, numbers, booleans and None",
        ),
    ],
)
def test_a_malformed_snapshot_names_its_process_the_flag_and_what_it_holds(
    values: Any, process: Any, message: str
) -> None:
    cfg = modecfg.load(env={}, rc_files=[])
    with pytest.raises(FlagValueError) as info:
        Snapshot(values, process).install(cfg)
    assert str(info.value) == message
    flag = values[0][0] if isinstance(values, tuple) and isinstance(values[0], tuple) else None
    assert info.value.flag == flag


_WORKER = """
    import json, pickle, modecfg
    from modecfg.errors import ReadOnlyFlagError
    snap = pickle.loads(bytes.fromhex({snapshot!r}))
    out = {{}}
    if {pytensor_first}:
        import pytensor
        out["used"] = str(pytensor.config.base_compiledir)  # read: fixed for this process
        try:
            with snap.override():
                out["inside"] = modecfg.config.floatX
        except ReadOnlyFlagError as exc:
            out["error"], out["flag"] = str(exc), exc.flag
    else:
        with snap.override():
            import pytensor
            out["used"] = str(pytensor.config.base_compiledir)
            out["compiledir"] = str(pytensor.config.compiledir)
            out["inside"] = pytensor.config.floatX
    out["after"] = [str(modecfg.config.base_compiledir), modecfg.config.floatX]
    out["layer"] = str(modecfg.config.origin("base_compiledir").layer)
    print(json.dumps(out))
"""


@pytest.mark.parametrize("pytensor_first", [False, True], ids=["before PyTensor", "after PyTensor fixed it"])
def test_a_worker_takes_the_drivers_base_compiledir_until_pytensor_has_fixed_its_own(
    tmp_path: Path, pytensor_first: bool
) -> None:
    """PyTensor fixes ``base_compiledir`` at its first read. A fresh worker that applies the
    snapshot first compiles under the driver's directory; one whose PyTensor already read its
    own gets a ReadOnlyFlagError naming the flag, and nothing of the snapshot is applied."""
    base = tmp_path / "driver-compiledir"
    driver = modecfg.load(env={"THEANO_FLAGS": f"base_compiledir={base},floatX=float32"})
    code = _WORKER.format(snapshot=pickle.dumps(driver.snapshot()).hex(), pytensor_first=pytensor_first)
    out = run_json(code)
    default = str(ROOT / ".cache" / "home" / ".pytensor")  # the worker's own: its HOME's
    if not pytensor_first:
        assert out["used"] == str(base) and out["compiledir"].startswith(f"{base}/compiledir_")
        assert out["inside"] == "float32"
        assert out["after"] == [str(base), "float64"]  # assigned, not scoped; floatX was scoped
        assert out["layer"] == "assignment"
    else:
        assert out["used"] == default and "inside" not in out
        assert out["flag"] == "base_compiledir"
        assert f"cannot change to PosixPath('{base}')" in out["error"]
        assert f"PyTensor already uses PosixPath('{default}') for this process" in out["error"]
        assert out["after"] == [default, "float64"] and out["layer"] == "default"


@pytest.mark.parametrize(
    ("entry", "shown"), [("x" * 58, repr("x" * 58)), ("x" * 59, repr("x" * 59)[:57] + "...")]
)
def test_a_malformed_entry_is_quoted_whole_up_to_sixty_characters(entry: str, shown: str) -> None:
    with pytest.raises(FlagValueError) as info:
        Snapshot((entry,), "w:1").install(modecfg.load(env={}, rc_files=[]))
    assert str(info.value) == f"a snapshot from w:1 holds {shown}, not a (flag, value, origin) triple"


def test_a_bad_value_in_a_snapshot_is_told_with_where_it_was_set() -> None:
    snap = Snapshot((("floatX", "float33", Origin(Layer.ASSIGNMENT, "main.py", 3)),), "w:1")
    with pytest.raises(FlagValueError) as info:
        snap.install(modecfg.load(env={}, rc_files=[]))
    assert str(info.value).startswith("floatX='float33' (from assignment at main.py:3): not a valid choice")
    unplaced = Snapshot((("floatX", "float16", Origin(Layer.ASSIGNMENT)),), "w:1")
    cfg = modecfg.load(env={}, rc_files=[])
    unplaced.install(cfg)
    assert cfg.origin("floatX") == Origin(Layer.ASSIGNMENT, "? (assignment in w:1)")
