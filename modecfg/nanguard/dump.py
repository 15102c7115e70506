"""NaN-guard dumps: the failing call as data anyone may read, and code only its writer runs.

A dump is one ZIP file, stored uncompressed in numpy's ``.npz`` layout:

* ``dump.json``, the **data part**: the first bad value (kind, where, operation, shapes,
  dtypes, the user's line), the outputs that were bad, the flags in effect with their
  origins, the versions, the linker, the graph as text with the user's lines, and what each
  captured value is;
* ``input-<i>.npy`` and ``shared-<i>.npy``: the call's inputs and the shared values from
  before it, each stored once, in numpy's format (``np.load(path)`` reads them too); a
  random generator's state is JSON in ``dump.json``; an object array is not data and is
  not captured (the dump says so);
* ``graph.pkl``, the **code part**: the graph as written, pickled with the arrays by
  reference. Unpickling a file runs whatever code it names, so this part is read by one
  function only, :func:`_unpickle`, and only when the dump's signature says this user
  wrote it or the caller passes ``trust=True``;
* ``manifest.json``: the SHA-256 and size of every other part; ``signature.json``: an
  HMAC of the manifest made with the user's own key (:mod:`modecfg.signing`), or
  why the dump is unsigned.

:func:`write_dump` writes them; :mod:`modecfg.nanguard.dump_reading` reads them
(:func:`~modecfg.nanguard.dump_reading.load_dump`, any dump's data part, checked before use;
:func:`~modecfg.nanguard.dump_reading.code_part`, the one place a file is unpickled).

Dumps go to ``NanGuardMode.dump_dir``, by default ``nanguard`` under the user's cache
directory, created private (0700); as ssh does with its key directories, a directory that
another user owns, that group or others may write, or that is a symbolic link is refused.
A dump is written whole (a temporary file renamed into place) and costs no copy of the
call's arrays. ``NanGuardMode.max_dumps`` caps the dumps of one process.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import itertools
import json
import os
import platform
import re
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any

import numpy as np

from modecfg._files import configured_directory, private_directory
from modecfg._locks import fork_safe
from modecfg._record import Record
from modecfg.configuration import Config, config
from modecfg.configuration.flags import FLAGS

__all__ = ["dump_directory", "no_dumps", "write_dump"]

FORMAT = "modecfg-nanguard-dump"
VERSION = 3
LEGACY_MAGIC = b"MODECFG-NANGUARD-DUMP "  # modecfg's pickle dumps, formats 1 and 2
DATA, GRAPH, MANIFEST, SIGNATURE = "dump.json", "graph.pkl", "manifest.json", "signature.json"
DTYPE_KINDS = "biufc"  # bool, integers, floats, complex: what tensors hold

_counter = itertools.count()
_written = 0
_lock = fork_safe(sys.modules[__name__], "_lock", threading.Lock)
# Set by a replay: why it writes no dump (a replay writes one only when asked).
_no_dump: contextvars.ContextVar[str] = contextvars.ContextVar("modecfg_no_dump", default="")


# -- where dumps go ----------------------------------------------------------------------------


def dump_directory(cfg: Config | None = None) -> str:
    """The directory dumps go to (not created): the flag, else the user's cache directory."""
    return configured_directory(str((cfg or config).NanGuardMode.dump_dir), "nanguard")


def _host() -> str:
    """This host's name as temporaries carry it: letters, digits, ``.`` and ``_``."""
    import socket

    return re.sub(r"[^A-Za-z0-9._]+", "_", socket.gethostname()) or "_"


def _remove_stale_temporaries(directory: str) -> None:
    """Temporary files of writers of this host that died are removed: a temporary is named by its
    writer's pid and host (``.nanguard-PID@HOST-....tmp``), and a pid means nothing on another
    host of a shared directory, whose half-written dumps are left alone."""
    here = _host()
    for entry in os.scandir(directory):
        found = re.fullmatch(r"\.nanguard-(\d+)@([A-Za-z0-9._]+)-.*\.tmp", entry.name)
        if found is None or found[2] != here or int(found[1]) == os.getpid():
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

    parts = [socket.gethostname()]
    if "distributed" in sys.modules:
        try:
            from distributed import get_worker

            parts.append(str(get_worker().name))
        except (ImportError, ValueError):  # not in a worker
            pass
    parts.append(str(os.getpid()))
    return "-".join(re.sub(r"[^A-Za-z0-9._]+", "_", p) for p in parts)


@contextmanager
def no_dumps(why: str) -> Iterator[None]:
    """Inside the block (this thread or task), the guard writes no dump and says ``why``."""
    token = _no_dump.set(why)
    try:
        yield
    finally:
        _no_dump.reset(token)


# -- the data of a call --------------------------------------------------------------------------


def _jsonable_state(value: Any) -> Any:
    """A bit generator's state as JSON: its arrays (MT19937's key) tagged with their dtype."""
    if isinstance(value, dict):
        return {str(k): _jsonable_state(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return {"__array__": value.dtype.str, "data": value.tolist()}
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def _as_data(value: Any) -> tuple[str, Any]:
    """How a captured value is stored: ("array", array), ("generator", state), ("none", None)
    or ("missing", why it is not data)."""
    if value is None:
        return "none", None
    if isinstance(value, np.random.Generator):
        return "generator", {"class": "Generator", "state": _jsonable_state(value.bit_generator.state)}
    if isinstance(value, np.random.RandomState):
        return "generator", {"class": "RandomState", "state": _jsonable_state(value.get_state(legacy=False))}
    if isinstance(value, np.ndarray | np.generic | bool | int | float | complex) or (
        hasattr(value, "__array__") and hasattr(value, "dtype") and hasattr(value, "shape")  # JAX arrays
    ):
        array = np.asarray(value)
        dtype = array.dtype
        if dtype.kind in DTYPE_KINDS and dtype.fields is None and not dtype.hasobject:
            return "array", array
        return "missing", f"a {dtype} array is not data (only numbers and booleans are): not captured"
    return "missing", f"a {type(value).__module__}.{type(value).__name__} is not data: not captured"


class _Digesting:
    """A writable that passes bytes on and keeps their SHA-256 and count."""

    def __init__(self, target: IO[bytes]) -> None:
        self.target, self.sha, self.size = target, hashlib.sha256(), 0

    def write(self, data: Any) -> int:
        self.sha.update(data)
        self.size += memoryview(data).nbytes
        return self.target.write(data)


def _finding_data(found: Any) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "kind": found.kind,
        "where": found.where,
        "op": None if found.node is None else str(found.node.op),
        "input_shapes": [[int(n) for n in s] for s in found.input_shapes],
        "input_dtypes": list(found.input_dtypes),
        "file": None if found.source is None else found.source.file,
        "line": None if found.source is None else found.source.line,
        "code": None if found.source is None else found.source.code,
        "n_bad": int(found.n_bad),
        "size": int(found.size),
        "text": found.describe(),
    }


def _versions() -> dict[str, str]:
    pytensor = sys.modules.get("pytensor")
    return {
        "modecfg": str(getattr(sys.modules.get("modecfg"), "__version__", "?")),  # (the package above)
        "pytensor": str(getattr(pytensor, "__version__", "not imported")),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": f"{platform.system()}-{platform.machine()}",
    }


def write_dump(
    plan: Any, values: list[Any], found: Any, bad_outputs: list[str], checks: Mapping[str, Any] | None = None
) -> tuple[str | None, str]:
    """Write the dump of a failing call: (its path, '') or (None, why there is none). Never raises.

    ``checks``: the guard's ``NanGuardMode.*`` values at this call (they are read per call, not
    at the compile), recorded with the compile's flags so that a replay checks as the call did.
    """
    global _written
    why = _no_dump.get()
    if why:
        return None, why
    limit = int(config.NanGuardMode.max_dumps)
    with _lock:
        if _written >= limit:
            return None, (
                f"NanGuardMode.max_dumps={limit} reached in this process"
                if limit
                else "NanGuardMode.max_dumps is 0"
            )
        _written += 1
    directory = dump_directory()
    problem = private_directory(directory)
    if problem:
        return None, problem
    now = time.localtime()  # one instant for the name and the record: a second may turn between
    try:
        parts = _parts(plan, values, found, bad_outputs, checks or {}, now)
    except Exception as exc:  # a dump must never cost the user the guard's error
        return None, f"the call cannot be described ({type(exc).__name__}: {exc})"
    name = f"nanguard-{time.strftime('%Y%m%d-%H%M%S', now)}-{_process_name()}-{next(_counter)}.npz"
    path = os.path.join(directory, name)
    tmp = None
    try:
        _remove_stale_temporaries(directory)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".nanguard-{os.getpid()}@{_host()}-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            _write_zip(fh, parts)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except (OSError, ValueError) as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        return None, f"cannot write to {directory} ({getattr(exc, 'strerror', None) or exc})"
    return path, ""


def _write_array(out: _Digesting, *, array: np.ndarray) -> None:
    """An array in numpy's .npy format, its bytes written straight from its memory (no copy)."""
    if not (array.flags.c_contiguous or array.flags.f_contiguous) or array.dtype.itemsize == 0:
        np.lib.format.write_array(out, array, allow_pickle=False)  # copies in 16 MiB chunks
        return
    header = np.lib.format.header_data_from_array_1_0(array)
    try:
        np.lib.format.write_array_header_1_0(out, header)
    except ValueError:  # a header too long for format 1.0 (very many dimensions)
        np.lib.format.write_array_header_2_0(out, header)
    raw = array if array.flags.c_contiguous else array.T  # F order: the transpose is C-contiguous
    out.write(memoryview(raw).cast("B") if raw.size else b"")  # type: ignore[arg-type]


class _Parts(Record):
    data: dict[str, Any]
    arrays: list[tuple[str, np.ndarray]]  # (part name, array)
    code: bytes | None


def _parts(
    plan: Any,
    values: list[Any],
    found: Any,
    bad_outputs: list[str],
    checks: Mapping[str, Any],
    now: time.struct_time | None = None,
) -> _Parts:
    """The dump's parts: its data, its arrays (by reference, no copy) and its pickled graph;
    ``now``: when it was made (its file's name says the same second)."""
    from modecfg._pytensor import marks
    from modecfg.nanguard import dumpgraph

    graph = plan.original
    targets = list(plan.target_indices)
    captured: list[dict[str, Any]] = []
    arrays: list[tuple[str, np.ndarray]] = []
    by_id: dict[int, tuple[str, int]] = {}  # id of a captured value -> its persistent id
    names: set[str] = set()
    for i, (var, value) in enumerate(zip(graph.inputs, values, strict=True)):
        role = "shared" if hasattr(var, "get_value") else "input"
        name = base = str(var.name or f"{role} {i}")
        copies = itertools.count(2)
        while name in names:
            name = f"{base} ({next(copies)})"
        names.add(name)
        how, stored = _as_data(value)
        entry: dict[str, Any] = {"role": role, "name": name, "type": str(var.type), "updated": i in targets}
        if how == "array":
            part = f"{role}-{i}.npy"
            arrays.append((part, stored))
            entry["array"] = {"part": part, "dtype": stored.dtype.str, "shape": list(stored.shape)}
        elif how == "generator":
            entry["generator"] = stored
        elif how == "missing":
            entry["missing"] = stored
        if how in ("array", "generator") and value is not None:
            by_id[id(value)] = ("captured", i)
        captured.append(entry)
    record = getattr(plan.fgraph, marks.COMPILED_WITH, None) or config.in_effect()
    flags = {
        name: {"value": str(value), "origin": str(origin)}
        for name, (value, origin) in record.items()
        if origin != "default"
    }
    flags.update({name: {"value": str(value), "origin": "the failing call"}
                  for name, value in checks.items() if value != FLAGS[name].default})  # fmt: skip
    code: bytes | None = None
    why_no_code = ""
    try:
        code = dumpgraph.pickle_graph(graph, plan.n_outputs, targets, lambda obj: by_id.get(id(obj)))
    except Exception as exc:
        why_no_code = f"the graph cannot be pickled ({type(exc).__name__}: {exc})"
    data = {
        "format": FORMAT,
        "version": VERSION,
        "created": time.strftime("%Y-%m-%d %H:%M:%S", now or time.localtime()),
        "process": _process_name(),
        "finding": _finding_data(found),
        "bad_outputs": list(bad_outputs),
        "n_outputs": int(plan.n_outputs),
        "captured": captured,
        "flags": flags,
        "versions": _versions(),
        "linker": plan.linker or "unknown",
        "graph": dumpgraph.graph_text(graph),
        "lines": dumpgraph.user_lines(graph),
        "no_code": why_no_code,
    }
    return _Parts(data, arrays, code)


def _write_zip(fh: IO[bytes], parts: _Parts) -> None:
    from modecfg import signing

    digests: dict[str, dict[str, Any]] = {}
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:

        def put(name: str, write: Callable[[_Digesting], object]) -> None:
            with zf.open(name, "w", force_zip64=True) as member:
                out = _Digesting(member)
                write(out)
            digests[name] = {"sha256": out.sha.hexdigest(), "size": out.size}

        put(DATA, lambda out: out.write(json.dumps(parts.data, indent=1, allow_nan=False).encode()))
        for name, array in parts.arrays:
            put(name, functools.partial(_write_array, array=array))
        if parts.code is not None:
            put(GRAPH, lambda out: out.write(parts.code))
        manifest = json.dumps(
            {"format": FORMAT, "version": VERSION, "parts": digests}, sort_keys=True
        ).encode()
        zf.writestr(MANIFEST, manifest)
        key = signing.signing_key(create=True)
        if isinstance(key, signing.KeyProblem):
            signature: dict[str, str] = {"unsigned": str(key)}
        else:
            signature = {"key": signing.key_id(key), "hmac-sha256": signing.sign(key, manifest)}
        zf.writestr(SIGNATURE, json.dumps(signature))
