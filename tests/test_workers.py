"""Dask workers run under the driver's configuration: a real LocalCluster with worker processes."""

from __future__ import annotations

import os
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


def _bad_call() -> str:
    """On a worker: a guarded function meets a NaN; the dump's path."""
    import numpy as np
    import pytensor.tensor as pt

    x = pt.vector("x")
    f = modecfg.function([x], pt.log(x), mode="NanGuardMode")
    try:
        f(np.array([-1.0], dtype=modecfg.config.floatX))
    except modecfg.NanGuardError as exc:
        return str(exc.dump_path)  # type: ignore[attr-defined]
    raise AssertionError("the guard let a NaN through")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
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
    client: Any, tmp_path: Path
) -> None:
    with modecfg.config.override(floatX="float32", **{"NanGuardMode.dump_dir": str(tmp_path)}):
        plugin = workers.ConfigPlugin()
    client.register_plugin(plugin)
    seen = client.submit(_seen, pure=False).result(timeout=300)
    assert (seen["floatX"], seen["compiled dtype"]) == ("float32", "float32")
    assert "(override in " in seen["origin"]  # where the driver set it
    dump = Path(client.submit(_bad_call, pure=False).result(timeout=300))
    assert dump.parent == tmp_path and dump.exists()
    worker_name = next(iter(client.scheduler_info()["workers"].values()))["name"]
    assert f"-{worker_name}-" in dump.name  # the host, the worker and its process name it
    with pytest.raises(modecfg.NanGuardError):  # and the driver can read it and replay the call
        modecfg.replay(str(dump))
