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

``client.register_plugin(modecfg.workers.CachePlugin())`` gives every worker the driver's warm
compile cache (:func:`modecfg.cache.export_cache`, signed with the driver's key) when it starts,
so that its first call does not wait for the compiler; a worker imports it only if it is signed
with its own key (one user's home, shared by the cluster's machines) or the plugin was made with
``trust=True``, and only where its machine and versions are the driver's.

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

from modecfg.configuration import Snapshot, config

__all__ = ["CachePlugin", "ConfigPlugin", "submit"]


class ConfigPlugin(WorkerPlugin):  # type: ignore[misc]
    """Assigns the driver's configuration (as it was when the plugin was made) on each worker."""

    name = "modecfg-config"

    def __init__(self, snapshot: Snapshot | None = None) -> None:
        import os
        import socket

        self.snapshot = snapshot if snapshot is not None else config.snapshot()
        self.driver = (socket.gethostname(), os.getpid())  # the process that made it

    def setup(self, worker: Any) -> None:
        import os
        import socket

        if (socket.gethostname(), os.getpid()) == getattr(self, "driver", None):
            # a worker in the driver's own process (LocalCluster(processes=False)): the driver's
            # configuration is already its own, and installing would make the driver's
            # overrides process-wide assignments that outlive their blocks
            import logging

            logging.getLogger("modecfg.workers").info(
                "ConfigPlugin: the worker runs in the driver's process: its configuration is the driver's"
            )
            return
        self.snapshot.install()


class CachePlugin(WorkerPlugin):  # type: ignore[misc]
    """Puts the driver's warm compile cache (as it was when the plugin was made, or the export
    at ``path``) into each worker's cache when the worker starts."""

    name = "modecfg-cache"

    def __init__(self, path: str | None = None, *, trust: bool = False) -> None:
        import tempfile
        from pathlib import Path

        from modecfg.cache import export_cache

        if path is None:
            with tempfile.TemporaryDirectory() as tmp:
                exported = export_cache(Path(tmp) / "cache.zip")
                self.archive = exported.path.read_bytes()
        else:
            self.archive = Path(path).read_bytes()
        self.trust = trust
        self.imported: tuple[str, ...] = ()

    def setup(self, worker: Any) -> None:
        import logging
        import tempfile
        from pathlib import Path

        from modecfg.cache import import_cache

        with tempfile.TemporaryDirectory() as tmp:
            archive = Path(tmp) / "cache.zip"
            archive.write_bytes(self.archive)
            got = import_cache(archive, trust=self.trust)
        self.imported = got.added
        logging.getLogger("modecfg.cache").info(
            "the driver's compile cache: %d entries added, %d here already", len(got.added), len(got.present)
        )


def submit(client: Any, func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``client.submit(func, *args, **kwargs)``, run under this context's configuration."""
    return client.submit(config.snapshot().run, func, *args, **kwargs)
