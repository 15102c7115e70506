"""Cluster workers (Dask distributed): tasks compile and run under the driver's configuration.

A worker process reads its own environment and rc files, and knows nothing of the
overrides active where a task was submitted. Two ways to carry the driver's effective
configuration (:meth:`modecfg.Config.snapshot`) to the workers:

* ``client.register_plugin(modecfg.workers.ConfigPlugin())``: every worker, present and
  future, assigns the driver's values when it starts (taken when the plugin is made);
* ``modecfg.workers.submit(client, func, *args)``, or the one-liner it stands for,
  ``client.submit(modecfg.config.snapshot().run, func, *args)``: this task runs under the
  values of the submitting context, overrides included, and nothing else on the worker
  sees them.

NaN-guard dumps written on a worker are named after the host, the worker and the process.
To have them where the driver can read them, give ``NanGuardMode.dump_dir`` a directory on
a file system the driver and the workers share; the snapshot carries it to the workers.
This module imports ``distributed``: install ``modecfg[dask]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    from distributed import WorkerPlugin
except ImportError as exc:
    raise ImportError(
        f"modecfg.workers needs Dask's distributed ({exc}): pip install 'modecfg[dask]'"
    ) from exc

from modecfg.config import Snapshot, config

__all__ = ["ConfigPlugin", "submit"]


class ConfigPlugin(WorkerPlugin):  # type: ignore[misc]
    """Assigns the driver's configuration (as it was when the plugin was made) on each worker."""

    name = "modecfg-config"

    def __init__(self, snapshot: Snapshot | None = None) -> None:
        self.snapshot = snapshot if snapshot is not None else config.snapshot()

    def setup(self, worker: Any) -> None:
        self.snapshot.install()


def submit(client: Any, func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``client.submit(func, *args, **kwargs)``, run under this context's configuration."""
    return client.submit(config.snapshot().run, func, *args, **kwargs)
