"""Dask workers run under the driver's configuration: a real LocalCluster with worker processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import modecfg

distributed = pytest.importorskip("distributed")
from modecfg import workers  # noqa: E402  (needs distributed)

# What the workers' own environment says; the driver never reads it (its config is read already).
WORKER_ENV = "floatX=float16,traceback.limit=1"


def _seen() -> dict[str, Any]:
    """On a worker: its configuration, and what a compile there makes of a new vector."""
    import pytensor.tensor as pt

    cfg = modecfg.config
    # a graph built with modecfg's floatX (PyTensor's own reads do not see modecfg's overrides)
    f = modecfg.function([x := pt.vector("x", dtype=cfg.floatX)], x * 2)
    return {
        "floatX": cfg.floatX,
        "limit": cfg.traceback.limit,
        "origin": str(cfg.origin("floatX")),
        "compiled dtype": str(f.maker.fgraph.outputs[0].dtype),
        "pid": os.getpid(),
    }


def _bad_call() -> tuple[str, int]:
    """On a worker: a guarded function meets a NaN; the dump's path, and the worker's pid."""
    import numpy as np
    import pytensor.tensor as pt

    x = pt.vector("x")
    f = modecfg.function([x], pt.log(x), mode="NanGuardMode")
    try:
        f(np.array([-1.0], dtype=modecfg.config.floatX))
    except modecfg.NanGuardError as exc:
        return str(exc.dump_path), os.getpid()  # type: ignore[attr-defined]
    raise AssertionError("the guard let a NaN through")


def _worker_name() -> str:
    """On a worker: its name, as the worker knows it."""
    return str(distributed.get_worker().name)


@contextlib.contextmanager
def _cluster() -> Iterator[Any]:
    """A client of a new cluster: one worker process, started with WORKER_ENV."""
    modecfg.config.floatX  # noqa: B018  (the driver has read its sources)
    saved = os.environ.get("THEANO_FLAGS")
    os.environ["THEANO_FLAGS"] = WORKER_ENV  # the worker processes inherit this
    try:
        cluster = distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        )
        with distributed.Client(cluster) as client:
            yield client
        cluster.close()
    finally:
        if saved is None:
            os.environ.pop("THEANO_FLAGS", None)
        else:
            os.environ["THEANO_FLAGS"] = saved


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Shared by the tests that leave the workers as they found them (no plugin)."""
    with _cluster() as client:
        yield client


def test_a_worker_left_alone_reads_its_own_environment(client: Any) -> None:
    seen = client.submit(_seen, pure=False).result(timeout=300)
    assert (seen["floatX"], seen["limit"], seen["origin"]) == ("float16", 1, "THEANO_FLAGS")
    assert seen["pid"] != os.getpid()


def test_a_task_submitted_inside_an_override_compiles_under_it(client: Any) -> None:
    with modecfg.config.override(floatX="float32", traceback__limit=8):
        future = workers.submit(client, _seen, pure=False)
    seen = future.result(timeout=300)
    assert (seen["floatX"], seen["limit"], seen["compiled dtype"]) == ("float32", 8, "float32")
    assert seen["origin"].startswith(f"override at {__file__}:") and "(override in " in seen["origin"]
    after = client.submit(_seen, pure=False).result(timeout=300)
    assert after["floatX"] == "float16"  # the override held for that task only


def test_the_plugin_gives_every_worker_the_driver_s_values_and_dumps_land_with_the_driver(
    tmp_path: Path,
) -> None:
    with _cluster() as client:  # its own: the plugin stays with the workers it is registered on
        with modecfg.config.override(floatX="float32", **{"NanGuardMode.dump_dir": str(tmp_path)}):
            plugin = workers.ConfigPlugin()
        before = client.submit(_seen, pure=False).result(timeout=300)
        client.register_plugin(plugin)
        seen = client.submit(_seen, pure=False).result(timeout=300)
        dump_path, pid = client.submit(_bad_call, pure=False).result(timeout=300)
        # (asked of the worker: the client's scheduler_info() is a copy refreshed every few
        # seconds, and can still hold no worker when the machine is busy)
        worker_name = client.submit(_worker_name, pure=False).result(timeout=300)
    assert before["floatX"] == "float16"  # the worker's own, until the plugin
    assert (seen["floatX"], seen["compiled dtype"]) == ("float32", "float32")
    assert "(override in " in seen["origin"]  # where the driver set it
    dump = Path(dump_path)
    assert dump.parent == tmp_path and dump.exists()
    host = re.sub(r"[^A-Za-z0-9._]+", "_", socket.gethostname())  # the worker's host is this one
    assert pid == seen["pid"] != os.getpid()
    named = rf"nanguard-\d{{8}}-\d{{6}}-{re.escape(host)}-{re.escape(str(worker_name))}-{pid}-\d+\.npz"
    assert re.fullmatch(named, dump.name), dump.name  # the host, the worker and its process name it
    # the driver can read it, and replay it: a worker of the same user signs with the same key
    assert modecfg.load_dump(dump).signed_by_you
    with pytest.raises(modecfg.NanGuardError):
        modecfg.replay(str(dump))


# A user's program, run as its own process (under pytest, the workers would start with pytest's
# plugins loaded, and modecfg's reads its sources): the workers' first use of modecfg is a task
# submitted under an override, that reads nothing.
_FRESH_WORKER_PROGRAM = textwrap.dedent(
    """
    import json, os, sys
    import distributed, modecfg
    from modecfg import workers

    def pid():
        return os.getpid()

    def read():
        return str(modecfg.config.floatX), str(modecfg.config.origin("floatX"))

    def assign_then_read():
        cfg = modecfg.config
        before = cfg.floatX
        cfg.floatX = "float64"
        during = cfg.floatX
        cfg.floatX = before
        return before, during, cfg.floatX, cfg.traceback.limit

    if __name__ == "__main__":
        cluster = distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        )
        seen = {}
        with distributed.Client(cluster) as client:
            def run(label, future):
                try:
                    seen[label] = future.result(timeout=300)
                except Exception as exc:
                    seen[label] = f"{type(exc).__name__}: {exc}"
            with modecfg.config.override(floatX="float32"):
                run("pid", workers.submit(client, pid, pure=False))
            run("plain read", client.submit(read, pure=False))
            with modecfg.config.override(floatX="float32", traceback__limit=5):
                client.register_plugin(workers.ConfigPlugin())
            run("read after the plugin", client.submit(read, pure=False))
            run("assign, then read", client.submit(assign_then_read, pure=False))
            run("read after that", client.submit(read, pure=False))
            run("pid again", client.submit(pid, pure=False))
        cluster.close()
        print(json.dumps(seen))
    """
)


def test_a_fresh_worker_whose_first_task_ran_under_submit_then_gets_the_plugin(tmp_path: Path) -> None:
    """Issue 20: a worker's first use of modecfg is a snapshot's run (an override made before
    the worker had read its sources); plain tasks, the plugin registered afterwards, and an
    assignment there all read normally (they were an AssertionError, then RecursionError)."""
    program = tmp_path / "driver.py"
    program.write_text(_FRESH_WORKER_PROGRAM)
    env = {**os.environ, "THEANO_FLAGS": "floatX=float16,traceback.limit=1"}
    env.pop("MODECFG_FLAGS")  # the suite's: with values there, the first read came another way
    done = subprocess.run(
        [sys.executable, str(program)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["plain read"] == ["float16", "THEANO_FLAGS"]
    assert seen["read after the plugin"][0] == "float32"
    assert "(override in " in seen["read after the plugin"][1]  # where the driver set it
    assert seen["assign, then read"] == ["float32", "float64", "float32", 5]
    assert seen["read after that"][0] == "float32"
    assert seen["pid again"] == seen["pid"] != os.getpid()  # one worker process throughout


def _cache_files() -> dict[str, Any]:
    """On a worker: the files of its compile caches, and where they are."""
    from modecfg import cache

    c, numba = cache.caches()
    found = sorted(
        str(p.relative_to(root.path))
        for root in (c, numba)
        if root.exists
        for p in root.path.rglob("*")
        if p.is_file()
    )
    return {"files": found, "compiledir": str(c.path)}


def test_the_cache_plugin_gives_a_fresh_worker_the_drivers_warm_cache(tmp_path: Path) -> None:
    from modecfg.cache import export_cache
    from modecfg.cache.entries import scan

    driver = tmp_path / "driver"
    (driver / "c" / "tmpwarm").mkdir(parents=True)
    (driver / "c" / "tmpwarm" / "mwarm.so").write_bytes(b"x" * 64)
    (driver / "numba").mkdir()
    (driver / "numba" / "f.py311.nbi").write_bytes(b"i")
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=(scan("C", driver / "c"), scan("numba", driver / "numba")))
    saved = os.environ["MODECFG_FLAGS"]
    os.environ["MODECFG_FLAGS"] = re.sub(
        r"base_compiledir=[^,]*", f"base_compiledir={tmp_path / 'worker'}", saved
    )
    try:
        with _cluster() as client:  # a worker whose caches are empty
            before = client.submit(_cache_files, pure=False).result(timeout=300)
            client.register_plugin(workers.CachePlugin(str(archive)))
            after = client.submit(_cache_files, pure=False).result(timeout=300)
    finally:
        os.environ["MODECFG_FLAGS"] = saved
    assert before["compiledir"].startswith(str(tmp_path / "worker"))
    assert "tmpwarm/mwarm.so" not in before["files"]
    assert "tmpwarm/mwarm.so" in after["files"] and "f.py311.nbi" in after["files"]


def _floatx_here() -> str:
    from modecfg import config  # as a notebook's task reads it: the module's config, by reference

    return str(config.floatX)


def test_in_the_drivers_own_process_the_plugin_leaves_the_drivers_overrides_scoped() -> None:
    """Round five: on LocalCluster(processes=False) the plugin's setup runs in the driver's
    process, and installing the snapshot turned the driver's override into a process-wide
    assignment; and a task function defined in the script that reads ``config`` pickles."""
    before = modecfg.config.floatX
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=40
    )
    try:
        with distributed.Client(cluster) as client:
            with modecfg.config.override(floatX="float16"):
                client.register_plugin(workers.ConfigPlugin())
                assert client.submit(_floatx_here, pure=False).result() in ("float16", before)
            assert modecfg.config.floatX == before
            assert modecfg.config.origin("floatX").layer != "assignment"

            cfg = modecfg.config  # a notebook's `from modecfg import config`: pickled with the task

            def inline() -> str:
                return str(cfg.floatX)

            import cloudpickle

            assert cloudpickle.loads(cloudpickle.dumps(inline))() == before  # it was a TypeError (a lock)
            assert client.submit(inline, pure=False).result() == before
            assert workers.submit(client, inline).result() == before
    finally:
        cluster.close()
