"""NaN-guard dumps: one file with everything needed to re-run a failing call elsewhere.

A dump holds the graph as the user wrote it (before rewrites, updates as outputs), the
inputs of the call, the shared values from before it, and the flags in force. It is
written atomically (a temporary file renamed into place) under ``NanGuardMode.dump_dir``
(:mod:`modecfg.modes.replaying` re-runs one)
(default: ``modecfg-nanguard`` in the temp directory).

**A dump is a pickle.** Loading one runs code chosen by whoever wrote it, exactly as
``pickle.load`` does: replay only dumps you trust. A file without modecfg's header is
refused before anything is unpickled.
"""

from __future__ import annotations

import itertools
import os
import pickle
import tempfile
import time
from typing import Any

from modecfg.config import config
from modecfg.config.flags import FLAGS
from modecfg.errors import DumpError

__all__ = ["load_dump", "write_dump"]

MAGIC = b"MODECFG-NANGUARD-DUMP 1\n"
_counter = itertools.count()


def _dump_dir() -> str:
    configured = str(config.NanGuardMode.dump_dir)
    return configured or os.path.join(tempfile.gettempdir(), "modecfg-nanguard")


def _flags() -> dict[str, str]:
    """The flags that shape a compile, as text, for the replay (fixed ones left out)."""
    text = {}
    for name, spec in FLAGS.items():
        if spec.fixed or config.origin(name).layer == "default":
            continue
        text[name] = str(config[name])
    return text


def write_dump(guarded: Any, graph: Any, values: list[Any], found: Any, bad_outputs: list[str]) -> str | None:
    """Write the dump of a failing call; its path, or None if the graph is unknown."""
    if graph is None:
        return None
    payload = {
        "inputs": list(graph.inputs),
        "outputs": list(graph.outputs),
        "n_outputs": guarded._n,
        "target_indices": list(guarded.target_indices),
        "values": [v.copy() if hasattr(v, "copy") else v for v in values],
        "flags": _flags(),
        "found": None if found is None else found.describe(),
        "bad_outputs": bad_outputs,
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    directory = _dump_dir()
    os.makedirs(directory, exist_ok=True)
    name = f"nanguard-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_counter)}.pkl"
    path = os.path.join(directory, name)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".nanguard-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC)
            pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def load_dump(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The contents of a dump. It is a pickle: load only dumps you trust."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
            if head != MAGIC:
                raise DumpError(f"{os.fspath(path)} is not a modecfg NaN-guard dump (no modecfg header)")
            try:
                payload = pickle.load(fh)
            except Exception as exc:
                raise DumpError(
                    f"{os.fspath(path)}: the dump is corrupted ({type(exc).__name__}: {exc})"
                ) from None
    except OSError as exc:
        raise DumpError(f"{os.fspath(path)}: cannot read the dump ({exc.strerror})") from None
    if not isinstance(payload, dict) or not {"inputs", "outputs", "values"} <= payload.keys():
        raise DumpError(f"{os.fspath(path)}: the dump is corrupted (its contents are not a NaN-guard call)")
    return payload
