"""NaN-guard dumps: one file with everything needed to re-run a failing call elsewhere.

A dump holds the graph as the user wrote it (before rewrites, updates as outputs), the
inputs of the call, the shared values from before it, and the flags in force.
:mod:`modecfg.modes.replaying` re-runs one. Dumps are data a careful user can accept:

* **Where.** ``NanGuardMode.dump_dir``, by default ``nanguard`` under the user's cache
  directory (``$XDG_CACHE_HOME/modecfg`` or ``~/.cache/modecfg``), created private
  (0700). As ssh does with its key directories, a dump directory that another user owns,
  that group or others may write, or that is a symbolic link is refused.
* **Written whole.** A temporary file renamed into place; temporary files left by
  writers that were killed are removed. ``NanGuardMode.max_dumps`` caps the dumps of one
  process. When no dump can be written the guard still raises, saying why.
* **Read carefully.** Only a regular file is read (a FIFO or a device is refused). The
  header carries a SHA-256 digest of the rest, checked before anything is unpickled (it
  catches damage, not malice: anyone can compute a digest); the unpickler
  (:mod:`modecfg.modes.safeload`) admits only the objects a dump holds, imports nothing
  and checks the state it gives them; the contents are checked for the shape of a dump.
  Anything else is a :class:`~modecfg.errors.DumpError`, never a raw exception, and
  nothing runs. Flags in a dump that reach a compiler, a linker, a path or a
  subprocess are shown, not applied, unless the replay is trusted.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
import pickle
import re
import stat
import sys
import tempfile
import threading
import time
from typing import Any

from modecfg._files import NotReadable, read_regular_file
from modecfg._locks import fork_safe
from modecfg._pytensor import marks
from modecfg.config import Config, config
from modecfg.config.flags import FLAGS
from modecfg.errors import DumpError

__all__ = ["MAGIC", "dump_directory", "load_dump", "write_dump"]

MAGIC = b"MODECFG-NANGUARD-DUMP 2\n"
_DIGEST = re.compile(rb"sha256:([0-9a-f]{64})\n")
_counter = itertools.count()
_written = 0
_lock = fork_safe(sys.modules[__name__], "_lock", threading.Lock)


def dump_directory(cfg: Config | None = None) -> str:
    """The directory dumps go to (not created): the flag, else the user's cache directory."""
    configured = str((cfg or config).NanGuardMode.dump_dir)
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "modecfg", "nanguard")


def directory_problem(directory: str) -> str:
    """Why dumps could not be written privately to ``directory`` ('' if they could), creating nothing."""
    if not os.path.lexists(directory):
        parent = directory
        while not os.path.exists(parent) and os.path.dirname(parent) != parent:
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
            return f"it cannot be created ({parent} cannot be written)"
        return ""
    return _ownership_problem(directory) or (
        "" if os.access(directory, os.W_OK | os.X_OK) else f"{directory} cannot be written"
    )


def _private_directory(directory: str) -> str:
    """Create ``directory`` 0700 if missing; refuse one others could tamper with (its problem, or '')."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        return f"cannot create {directory} ({exc.strerror})"
    return _ownership_problem(directory)


def _ownership_problem(directory: str) -> str:
    """Why an existing ``directory`` is no private place for dumps ('' if it is)."""
    try:
        info = os.lstat(directory)
    except OSError as exc:
        return f"cannot look at {directory} ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{directory} is not a plain directory (a symbolic link or a file): refused"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"{directory} belongs to another user (uid {info.st_uid}): refused, as ssh would"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (
            f"{directory} is writable by group or others (mode {stat.S_IMODE(info.st_mode):o}): "
            f"refused, as ssh would; chmod 700 {directory}"
        )
    return ""


def _flags(record: dict[str, tuple[Any, str]] | None) -> dict[str, str]:
    """The flags that shaped the compile, as text, for the replay (fixed ones left out): those
    the function was compiled with (its thread's or task's overrides included), else those in
    effect now (a function compiled with the compile hook off)."""
    if record is None:
        record = config.in_effect()
    return {
        name: str(value)
        for name, (value, origin) in record.items()
        if name in FLAGS and not FLAGS[name].fixed and origin != "default"
    }


def _remove_stale_temporaries(directory: str) -> None:
    """Temporary files of writers that died (their pid is in the name) are removed."""
    for entry in os.scandir(directory):
        found = re.fullmatch(r"\.nanguard-(\d+)-.*\.tmp", entry.name)
        if found is None or int(found[1]) == os.getpid():
            continue
        try:
            os.kill(int(found[1]), 0)
        except ProcessLookupError:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
        except OSError:  # alive, another user's: leave it
            pass


def _process_name() -> str:
    """``host-pid``, or ``host-worker-pid`` in a Dask worker: dumps from a cluster say where they
    were written. Only letters, digits, ``.``, ``_`` and ``-``."""
    import socket
    import sys

    parts = [socket.gethostname()]
    if "distributed" in sys.modules:
        try:
            from distributed import get_worker

            parts.append(str(get_worker().name))
        except (ImportError, ValueError):  # not in a worker
            pass
    parts.append(str(os.getpid()))
    return "-".join(re.sub(r"[^A-Za-z0-9._]+", "_", p) for p in parts)


def _function_class() -> Any:
    """PyTensor's compiled-function class (its module moved between 3.x releases)."""
    try:
        from pytensor.compile.executor import Function
    except ImportError:  # PyTensor releases before the move
        from pytensor.compile.function.types import Function
    return Function


class _DumpPickler(pickle.Pickler):
    """Leaves out the compiled inner functions ops cache (``Scan._fn``): a dump holds graphs,
    and a reader compiles them itself."""

    def reducer_override(self, obj: Any) -> Any:
        from pytensor.graph.op import Op

        Function = _function_class()

        if not isinstance(obj, Op) or not any(isinstance(v, Function) for v in vars(obj).values()):
            return NotImplemented
        reduced = obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
        if not isinstance(reduced, tuple) or len(reduced) < 3 or not isinstance(reduced[2], dict):
            return NotImplemented
        state = {k: v for k, v in reduced[2].items() if not isinstance(v, Function)}
        return (*reduced[:2], state, *reduced[3:])


def write_dump(plan: Any, values: list[Any], found: Any, bad_outputs: list[str]) -> tuple[str | None, str]:
    """Write the dump of a failing call: (its path, '') or (None, why there is none). Never raises."""
    global _written
    limit = int(config.NanGuardMode.max_dumps)
    with _lock:
        if _written >= limit:
            return None, (
                f"NanGuardMode.max_dumps={limit} reached in this process"
                if limit
                else "NanGuardMode.max_dumps is 0"
            )
        _written += 1
    from pytensor.graph.basic import clone

    # A copy of the graph as written: its variables do not point back to the compiled graphs.
    inputs, outputs = clone(plan.original.inputs, plan.original.outputs, copy_inputs=True, copy_orphans=True)
    payload = {
        "inputs": inputs,
        "outputs": outputs,
        "n_outputs": plan.n_outputs,
        "target_indices": list(plan.target_indices),
        "values": [v.copy() if hasattr(v, "copy") else v for v in values],
        "flags": _flags(getattr(plan.fgraph, marks.COMPILED_WITH, None)),
        "compiled_with": dict(getattr(plan.fgraph, marks.COMPILED_WITH, None) or {}),
        "found": None if found is None else found.describe(),
        "bad_outputs": list(bad_outputs),
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    directory = dump_directory()
    problem = _private_directory(directory)
    if problem:
        return None, problem
    try:
        buffer = io.BytesIO()
        _DumpPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(payload)
        body = buffer.getvalue()
    except Exception as exc:
        return None, f"the call cannot be pickled ({type(exc).__name__}: {exc})"
    name = f"nanguard-{time.strftime('%Y%m%d-%H%M%S')}-{_process_name()}-{next(_counter)}.pkl"
    path = os.path.join(directory, name)
    tmp = None
    try:
        _remove_stale_temporaries(directory)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".nanguard-{os.getpid()}-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC)
            fh.write(b"sha256:" + hashlib.sha256(body).hexdigest().encode() + b"\n")
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        return None, f"cannot write to {directory} ({exc.strerror})"
    return path, ""


# -- reading -----------------------------------------------------------------------------------


def _read(path: str) -> bytes:
    """The file's bytes, if it is a regular file (a FIFO, /dev/zero or a directory is refused
    before anything is read: reading one would hang or never end)."""
    try:
        data = read_regular_file(path)
    except NotReadable as exc:
        raise DumpError(f"{path} {exc.reason}: not a dump") from None
    except OSError as exc:
        raise DumpError(f"{path}: cannot read the dump ({exc.strerror})") from None
    if not data.startswith(MAGIC):
        raise DumpError(f"{path} is not a modecfg NaN-guard dump (no modecfg header)")
    found = _DIGEST.match(data, len(MAGIC))
    if found is None:
        raise DumpError(f"{path}: the dump is corrupted (its header has no digest)")
    body = data[found.end() :]
    if hashlib.sha256(body).hexdigest() != found[1].decode():
        raise DumpError(
            f"{path}: the dump is corrupted (its digest does not match: changed since it was written)"
        )
    return body


def _check(path: str, payload: Any) -> dict[str, Any]:
    """The payload if it has the shape of a dump, else a DumpError naming what is off."""

    def bad(what: str) -> DumpError:
        return DumpError(f"{path}: the dump is corrupted ({what})")

    if not isinstance(payload, dict):
        raise bad("its contents are not a NaN-guard call")
    missing = {"inputs", "outputs", "values", "n_outputs", "target_indices", "flags"} - payload.keys()
    if missing:
        raise bad(f"missing {', '.join(sorted(missing))}")
    from pytensor.graph.basic import Variable

    inputs, outputs, values = payload["inputs"], payload["outputs"], payload["values"]
    if not all(isinstance(x, list) for x in (inputs, outputs, values, payload["target_indices"])):
        raise bad("inputs, outputs, values and target_indices must be lists")
    if not all(isinstance(v, Variable) for v in (*inputs, *outputs)):
        raise bad("its inputs and outputs are not graph variables")
    if len(values) != len(inputs):
        raise bad(f"{len(values)} values for {len(inputs)} inputs")
    n = payload["n_outputs"]
    targets = payload["target_indices"]
    if not isinstance(n, int) or not 0 <= n <= len(outputs) or len(targets) != len(outputs) - n:
        raise bad("its outputs and updates do not add up")
    if not all(isinstance(i, int) and 0 <= i < len(inputs) for i in targets):
        raise bad("an update names an input that does not exist")
    flags = payload["flags"]
    if not isinstance(flags, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in flags.items()
    ):
        raise bad("its flags are not text")
    return payload


def load_dump(path: str | os.PathLike[str], *, trusted: bool = False) -> dict[str, Any]:
    """The contents of a dump, checked (digest, admitted objects and state, structure) before use.

    ``trusted=False`` (the default) loads inner functions (scan, OpFromGraph) to compile
    with Python implementations only (see :mod:`modecfg.modes.safeload`).
    """
    from modecfg.modes.safeload import loads

    where = os.fspath(path)
    body = _read(where)
    try:
        payload = loads(body, untrusted=not trusted)
    except DumpError as exc:
        raise DumpError(f"{where}: {exc}") from None
    except Exception as exc:
        raise DumpError(f"{where}: the dump is corrupted ({type(exc).__name__}: {exc})") from None
    return _check(where, payload)
