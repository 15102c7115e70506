"""Reading NaN-guard dumps (their format: :mod:`modecfg.nanguard.dump`): the data part of any dump,
checked before use, and the code part, unpickled only when the dump is signed with this
user's key or the caller passes ``trust=True``.

:func:`load_dump` reads the data part of any dump, checked before use: only a regular
file (a FIFO or a device is refused before a byte is read); parts stored, never
compressed, that together fit in the file; digests that match; JSON of the expected
shape; arrays of plain numeric dtypes whose header agrees with their size. Reading builds
arrays, numbers and strings, and never allocates more than the file holds. Anything else
is a :class:`~modecfg.errors.DumpError`. :func:`code_part` is the one place a file is unpickled.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Literal

import numpy as np

from modecfg._locks import load
from modecfg._record import Record
from modecfg.errors import DumpError, UntrustedDumpError
from modecfg.nanguard.dump import DATA, DTYPE_KINDS, GRAPH, LEGACY_MAGIC, MANIFEST, SIGNATURE

__all__ = ["Dump", "DumpFinding", "Replayable", "code_part", "load_dump"]

_ARRAY_NAME = re.compile(r"(input|shared)-(\d{1,9})\.npy")
_MAX_JSON = 64 << 20  # the data part and the manifest: text, however large the graph
_MAX_PARTS = 100_000
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937")

# -- reading ---------------------------------------------------------------------------------------


class DumpFinding(Record):
    """The first bad value a dump records, as plain data."""

    kind: str  # "NaN", "Inf" or "big"
    where: str  # "input x", "shared variable w", "Log", "Sqrt inside OpFromGraph{...}"
    op: str | None
    input_shapes: tuple[tuple[int, ...], ...]
    input_dtypes: tuple[str, ...]
    file: str | None
    line: int | None
    code: str | None
    n_bad: int
    size: int
    text: str  # as the guard said it

    def describe(self) -> str:
        return self.text


def _models() -> Any:
    """The pydantic models of a dump's JSON parts (built on first use: pydantic is slow to import)."""
    global _MODELS
    if _MODELS is not None:
        return _MODELS
    load("pydantic")  # a fork waits while it is imported (modecfg._locks)
    from pydantic import BaseModel, ConfigDict, Field

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    class Part(Strict):
        sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
        size: int = Field(ge=0)

    class Manifest(Strict):
        format: Literal["modecfg-nanguard-dump"]
        version: Literal[3]
        parts: dict[str, Part]

    class Signature(Strict):
        key: str | None = Field(default=None, pattern=r"^[0-9a-f]{16}$")
        hmac_sha256: str | None = Field(default=None, alias="hmac-sha256", pattern=r"^[0-9a-f]{64}$")
        unsigned: str | None = None

    class ArrayRef(Strict):
        part: str = Field(pattern=_ARRAY_NAME.pattern)
        dtype: str
        shape: list[int]

    class GeneratorState(Strict):
        class_: Literal["Generator", "RandomState"] = Field(alias="class")
        state: dict[str, Any]

    class Captured(Strict):
        role: Literal["input", "shared"]
        name: str
        type: str
        updated: bool
        array: ArrayRef | None = None
        generator: GeneratorState | None = None
        missing: str | None = None

    class Finding(Strict):
        kind: str
        where: str
        op: str | None
        input_shapes: list[list[int]]
        input_dtypes: list[str]
        file: str | None
        line: int | None
        code: str | None
        n_bad: int
        size: int
        text: str

    class Flag(Strict):
        value: str
        origin: str

    class Data(Strict):
        format: Literal["modecfg-nanguard-dump"]
        version: Literal[3]
        created: str
        process: str
        finding: Finding | None
        bad_outputs: list[str]
        n_outputs: int = Field(ge=0)
        captured: list[Captured]
        flags: dict[str, Flag]
        versions: dict[str, str]
        linker: str
        graph: str
        lines: list[str]
        no_code: str

    _MODELS = (Manifest, Signature, Data)
    return _MODELS


_MODELS: Any = None


@dataclass(frozen=True, repr=False, eq=False)
class Dump:
    """The data part of a NaN-guard dump: what :func:`modecfg.load_dump` returns.

    Arrays, numbers and strings only; nothing in it was unpickled. ``inputs`` holds the
    call's explicit inputs and ``shared`` the shared variables' values from before the
    call, each by name, in the function's order (a random generator is rebuilt from its
    state; a value that was not data is missing, ``missing`` says why).
    """

    path: str
    inputs: dict[str, Any]
    shared: dict[str, Any]
    missing: dict[str, str]
    updated: tuple[str, ...]  # the shared variables the call updates
    flags: dict[str, str]  # flags not at their default at the compile (the guard's: at the call), as text
    origins: dict[str, str]  # where each of them came from
    bad: DumpFinding | None
    bad_outputs: tuple[str, ...]
    versions: dict[str, str]
    linker: str
    graph: str  # the graph as written (PyTensor's debugprint)
    lines: tuple[str, ...]  # the user's lines that made it
    created: str
    process: str  # host-pid (host-worker-pid on a Dask worker) of the writer
    signature: str  # "yours", or why the dump is not known to be
    signed_by_you: bool
    _order: tuple[tuple[str, str], ...] = field(default=())  # (role, name) of every graph input
    _n_outputs: int = 0
    _code: bytes | None = None
    _no_code: str = ""

    def __repr__(self) -> str:
        bad = self.bad.text.splitlines()[0] if self.bad else "no bad value located"
        return f"<modecfg Dump {self.path!r}: {bad}; signature: {self.signature}>"

    def call(self, f: Any) -> Any:
        """Run *your own* compiled function ``f`` on the captured inputs and shared state.

        Each shared variable of ``f`` is set (by name) to the captured value from before the
        failing call, then ``f`` is called with the captured inputs, in order. Nothing from
        the dump runs: only its arrays reach ``f``. A guarded ``f`` raises the same
        ``NanGuardError`` if the failure is still there.
        """
        maker = getattr(f, "maker", None)
        if maker is None:
            raise TypeError(f"{f!r} is not a compiled PyTensor function")
        specs = list(maker.inputs)
        explicit = [s for s in specs if not getattr(s, "implicit", False)]
        implicit = [s for s in specs if getattr(s, "implicit", False)]
        if self.missing:
            listed = "; ".join(f"{k}: {why}" for k, why in self.missing.items())
            raise DumpError(f"{self.path}: some values were not captured ({listed})")
        if len(explicit) != len(self.inputs):
            raise DumpError(
                f"{self.path}: the function takes {len(explicit)} inputs and the dump holds "
                f"{len(self.inputs)} ({', '.join(self.inputs) or 'none'})"
            )
        unknown = [str(s.variable.name or s.variable) for s in implicit if s.variable.name not in self.shared]
        if unknown:
            raise DumpError(
                f"{self.path}: the function's shared variables {', '.join(unknown)} are not in the dump "
                f"(it holds {', '.join(self.shared) or 'none'}): is this the function that failed?"
            )
        for spec in implicit:
            spec.variable.set_value(_fresh(self.shared[spec.variable.name]), borrow=True)
        return f(*(_fresh(v) for v in self.inputs.values()))

    def summary(self) -> str:
        """Everything the data part says, as text (what an untrusted ``modecfg replay`` prints)."""
        out = [f"NaN-guard dump {self.path}", f"  written {self.created} by {self.process}"]
        out.append(f"  signature: {self.signature}")
        out.append("")
        out.append(f"bad values in: {', '.join(self.bad_outputs) or '(none recorded)'}")
        if self.bad is not None:
            out.append("first input or operation with one (the call re-run without rewrites):")
            out.extend("  " + line for line in self.bad.text.splitlines())
        else:
            out.append(
                "the call re-run without rewrites had no bad value: backend-only (the backend's, or a "
                "rewrite's; mode='CompareMode' finds the node, the backend and the rewrite)"
            )
        out.append("")
        out.append("captured (the call's inputs; shared values as they were before it):")
        width = max((len(n) for _, n in self._order), default=0)
        for role, name in self._order:
            value = (self.inputs if role == "input" else self.shared).get(name)
            what = self.missing.get(name) or _describe_value(value)
            mark = "  (updated by the call)" if name in self.updated else ""
            out.append(f"  {role:<6} {name:<{width}}  {what}{mark}")
        out.append("")
        out.append("flags not at their default (at the compile; NanGuardMode's checks at the call):")
        for name in sorted(self.flags):
            out.append(f"  {name} = {self.flags[name]!r}  ({self.origins.get(name, '?')})")
        if not self.flags:
            out.append("  (none)")
        out.append("")
        versions = ", ".join(f"{k} {v}" for k, v in self.versions.items())
        out.append(f"versions: {versions}")
        out.append(f"linker: {self.linker}")
        out.append("")
        out.append("the graph as written:")
        out.extend("  " + line for line in self.graph.rstrip().splitlines())
        if self.lines:
            out.append("")
            out.append("the lines of code that made it:")
            out.extend("  " + line for line in self.lines)
        return "\n".join(out) + "\n"


def _fresh(value: Any) -> Any:
    """A copy of a captured value to hand to a function (the dump's own stays as it was)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, np.random.Generator | np.random.RandomState):
        return _generator({"class": type(value).__name__, "state": _state_of(value)})
    return value


def _state_of(value: Any) -> Any:
    return (
        value.bit_generator.state if isinstance(value, np.random.Generator) else value.get_state(legacy=False)
    )


def _describe_value(value: Any) -> str:
    if isinstance(value, np.random.Generator):
        return f"numpy Generator({type(value.bit_generator).__name__})"
    if isinstance(value, np.random.RandomState):
        return "numpy RandomState(MT19937)"
    if value is None:
        return "None"
    array = np.asarray(value)
    text = f"{array.dtype} {tuple(array.shape)}"
    if array.size and array.dtype.kind in "fc":
        nan = int(np.isnan(array).sum())
        inf = int(np.isinf(array).sum())
        finite = array[np.isfinite(array)]
        if finite.size and array.dtype.kind == "f":
            low, high, mean = float(finite.min()), float(finite.max()), float(finite.mean())
            text += f"  min {low:.6g}  max {high:.6g}  mean {mean:.6g}"
        text += f"  NaN {nan}  Inf {inf}"
    elif array.size and array.dtype.kind in "iu":
        text += f"  min {int(array.min())}  max {int(array.max())}"
    return text


def _state_from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__array__", "data"}:
            dtype = np.dtype(str(value["__array__"]))
            if dtype.kind not in "iu" or not isinstance(value["data"], list):
                raise ValueError(f"a generator state array of {dtype}")
            return np.asarray(value["data"], dtype=dtype)
        return {k: _state_from_json(v) for k, v in value.items()}
    return value


def _generator(spec: dict[str, Any]) -> Any:
    """A numpy generator rebuilt from its JSON state (only numpy's own bit generators)."""
    state = _state_from_json(spec["state"])
    if spec["class"] == "RandomState":
        rs = np.random.RandomState()
        rs.set_state(state)
        return rs
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if name not in _BIT_GENERATORS:
        raise ValueError(f"bit generator {name!r} (numpy's own are {', '.join(_BIT_GENERATORS)})")
    bit_generator = getattr(np.random, name)()
    bit_generator.state = state
    return np.random.Generator(bit_generator)


class _Reader:
    """The parts of one dump file, each read only after its place in the file is checked."""

    def __init__(self, path: str, fh: IO[bytes], size: int) -> None:
        self.path, self.fh, self.size = path, fh, size
        try:
            self.zip = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
            raise self.bad(f"not a readable ZIP file: {exc}") from None
        infos = self.zip.infolist()
        if len(infos) > _MAX_PARTS:
            raise self.bad(f"{len(infos):,} parts")
        self.infos: dict[str, zipfile.ZipInfo] = {}
        total = 0
        for info in infos:
            if info.filename in self.infos:
                raise self.bad(f"the part {info.filename!r} appears twice")
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                raise self.bad(
                    f"the part {info.filename!r} is compressed or encrypted (dumps store parts as they are)"
                )
            if info.file_size != info.compress_size or info.header_offset + info.file_size > size:
                raise self.bad(f"the part {info.filename!r} says it holds more than the file")
            total += info.file_size
            self.infos[info.filename] = info
        if total > size:  # parts that overlap would let a small file declare a large content
            raise self.bad("its parts together say they hold more than the file")

    def bad(self, what: str) -> DumpError:
        return DumpError(f"{self.path}: the dump is corrupted ({what})")

    def raw(self, name: str, limit: int | None = None) -> bytes:
        info = self.infos.get(name)
        if info is None:
            raise self.bad(f"no {name}")
        if limit is not None and info.file_size > limit:
            raise self.bad(f"{name} is larger than {limit:,} bytes")
        try:
            with self.zip.open(info) as member:
                return member.read()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise self.bad(f"{name}: {exc}") from None

    def checked(self, name: str, parts: dict[str, Any], limit: int | None = None) -> bytes:
        body = self.raw(name, limit)
        if hashlib.sha256(body).hexdigest() != parts[name].sha256:
            raise self.bad(f"{name} does not match the manifest's digest: changed since it was written")
        return body

    def array(self, name: str, parts: dict[str, Any], dtype: str, shape: list[int]) -> np.ndarray:
        """An array part, read into an array no larger than the part itself."""
        info = self.infos.get(name)
        if info is None:
            raise self.bad(f"no {name}")
        try:
            with self.zip.open(info) as member:
                digest = _DigestingReader(member)
                version = np.lib.format.read_magic(digest)
                if version == (1, 0):
                    header = np.lib.format.read_array_header_1_0(digest, max_header_size=10_000)
                elif version == (2, 0):
                    header = np.lib.format.read_array_header_2_0(digest, max_header_size=10_000)
                else:
                    raise self.bad(f"{name}: .npy format {version} (dumps use 1.0 and 2.0)")
                found_shape, fortran, found_dtype = header
                if found_dtype.kind not in DTYPE_KINDS:  # structured and object dtypes are 'V' and 'O'
                    raise self.bad(f"{name}: dtype {found_dtype} is not data (only numbers and booleans are)")
                if found_dtype.str != dtype or list(found_shape) != shape:
                    raise self.bad(
                        f"{name} holds {found_dtype.str}{tuple(found_shape)}, "
                        f"the data part says {dtype}{tuple(shape)}"
                    )
                count = math.prod(found_shape)
                if count * found_dtype.itemsize != info.file_size - digest.size:
                    raise self.bad(
                        f"{name}: its header says {count:,} values, and the part holds a different size"
                    )
                flat = np.empty(count, dtype=found_dtype)
                view = memoryview(flat.view(np.uint8))  # type: ignore[arg-type]
                filled = 0
                while filled < len(view):
                    n = digest.readinto(view[filled:])
                    if not n:
                        raise self.bad(f"{name} ends early")
                    filled += n
                if digest.read(1):
                    raise self.bad(f"{name} has bytes after its array")
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise self.bad(f"{name}: {exc}") from None
        except ValueError as exc:  # numpy's header parser
            raise self.bad(f"{name}: {exc}") from None
        if digest.sha.hexdigest() != parts[name].sha256:
            raise self.bad(f"{name} does not match the manifest's digest: changed since it was written")
        return flat.reshape(found_shape[::-1]).T if fortran else flat.reshape(found_shape)


class _DigestingReader:
    """A readable that keeps the SHA-256 and count of what was read through it."""

    def __init__(self, source: IO[bytes]) -> None:
        self.source, self.sha, self.size = source, hashlib.sha256(), 0

    def read(self, n: int = -1) -> bytes:
        data = self.source.read(n)
        self.sha.update(data)
        self.size += len(data)
        return data

    def readinto(self, view: memoryview) -> int:
        n = self.source.readinto(view)  # type: ignore[attr-defined]
        if n:
            self.sha.update(view[:n])
            self.size += n
        return int(n or 0)


@contextmanager
def _open_regular(path: str) -> Iterator[tuple[IO[bytes], int]]:
    """The file at ``path`` if it is a regular file (a FIFO or a device is refused before a
    byte is read: reading one would hang or never end), with its size."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise DumpError(f"{path}: cannot read the dump ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise DumpError(f"{path}: cannot read the dump ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise DumpError(f"{path} is not a regular file (a FIFO, a device or a directory): not a dump")
    with os.fdopen(fd, "rb") as fh:
        yield fh, info.st_size


def _legacy_message(path: str) -> str:
    return (
        f"{path} is a dump of an older modecfg, which stored the call as a pickle: reading one "
        f"runs whatever code it holds, so it is not read. If you wrote it yourself or trust who "
        f"did, `modecfg replay --trust {path}` (replay(path, trust=True)) runs it"
    )


def load_dump(path: str | os.PathLike[str]) -> Dump:
    """The data part of a NaN-guard dump: arrays, numbers and strings; nothing is unpickled.

    Checked before use (see the module's doc); anything off is a :class:`DumpError`.
    """
    where = os.fspath(path)
    with _open_regular(where) as (fh, size):
        head = fh.read(len(LEGACY_MAGIC))
        if head == LEGACY_MAGIC:
            raise DumpError(_legacy_message(where))
        fh.seek(0)
        if not head.startswith(b"PK"):
            raise DumpError(f"{where} is not a modecfg NaN-guard dump (not a ZIP file)")
        return _load(where, fh, size)


def _load(where: str, fh: IO[bytes], size: int) -> Dump:
    load("pydantic")  # a fork waits while it is imported (modecfg._locks)
    from pydantic import ValidationError

    from modecfg import signing

    reader = _Reader(where, fh, size)
    if DATA not in reader.infos or MANIFEST not in reader.infos:
        raise DumpError(f"{where} is not a modecfg NaN-guard dump (no {DATA} or {MANIFEST})")
    Manifest, Signature, Data = _models()
    manifest_bytes = reader.raw(MANIFEST, _MAX_JSON)
    try:
        manifest = Manifest.model_validate_json(manifest_bytes)
        signed = (
            Signature.model_validate_json(reader.raw(SIGNATURE, 4096)) if SIGNATURE in reader.infos else None
        )
        parts = manifest.parts
        stored = set(reader.infos) - {MANIFEST, SIGNATURE}
        if stored != set(parts):
            odd = sorted(stored ^ set(parts))
            raise reader.bad(f"the parts {', '.join(odd)} are not both stored and in the manifest")
        for name, part in parts.items():
            if reader.infos[name].file_size != part.size:
                raise reader.bad(f"{name} is not the size the manifest says")
        data = Data.model_validate_json(reader.checked(DATA, parts, _MAX_JSON))
    except ValidationError as exc:
        first = exc.errors()[0]
        where_in = ".".join(str(p) for p in first["loc"])
        raise reader.bad(f"{where_in}: {first['msg']}") from None
    code = reader.checked(GRAPH, parts) if GRAPH in parts else None

    inputs: dict[str, Any] = {}
    shared: dict[str, Any] = {}
    missing: dict[str, str] = {}
    order = []
    for entry in data.captured:
        order.append((entry.role, entry.name))
        if entry.name in inputs or entry.name in shared:
            raise reader.bad(f"two captured values are named {entry.name!r}")
        target = inputs if entry.role == "input" else shared
        if entry.array is not None:
            if entry.array.part not in parts:
                raise reader.bad(f"no {entry.array.part}")
            target[entry.name] = reader.array(entry.array.part, parts, entry.array.dtype, entry.array.shape)
        elif entry.generator is not None:
            try:
                target[entry.name] = _generator(
                    {"class": entry.generator.class_, "state": entry.generator.state}
                )
            except (ValueError, TypeError, KeyError, OverflowError) as exc:
                raise reader.bad(f"the state of generator {entry.name!r}: {exc}") from None
        elif entry.missing is not None:
            target[entry.name] = None
            missing[entry.name] = entry.missing
        else:
            target[entry.name] = None

    status, yours = _signature_status(signed, manifest_bytes, signing)
    finding = None
    if data.finding is not None:
        f = data.finding
        finding = DumpFinding(f.kind, f.where, f.op, tuple(tuple(s) for s in f.input_shapes),
                              tuple(f.input_dtypes), f.file, f.line, f.code, f.n_bad, f.size,
                              f.text)  # fmt: skip
    return Dump(
        path=where,
        inputs=inputs,
        shared=shared,
        missing=missing,
        updated=tuple(e.name for e in data.captured if e.updated),
        flags={k: v.value for k, v in data.flags.items()},
        origins={k: v.origin for k, v in data.flags.items()},
        bad=finding,
        bad_outputs=tuple(data.bad_outputs),
        versions=dict(data.versions),
        linker=data.linker,
        graph=data.graph,
        lines=tuple(data.lines),
        created=data.created,
        process=data.process,
        signature=status,
        signed_by_you=yours,
        _order=tuple(order),
        _n_outputs=data.n_outputs,
        _code=code,
        _no_code=data.no_code or ("" if code is not None else "the dump holds no graph"),
    )


def _signature_status(signed: Any, manifest: bytes, signing: Any) -> tuple[str, bool]:
    """(what the signature says, whether it says this user wrote the dump)."""
    if signed is None or signed.hmac_sha256 is None or signed.key is None:
        why = signed.unsigned if signed is not None and signed.unsigned else "it carries no signature"
        return f"unsigned ({why})", False
    key = signing.signing_key(create=False)
    if isinstance(key, signing.KeyProblem):
        return f"signed, but not checked: your dump key cannot be used ({key})", False
    if signed.key != signing.key_id(key):
        return "signed with another key (another user's, or another machine's)", False
    if not signing.verify(key, manifest, signed.hmac_sha256):
        return "FORGED or damaged: it names your key, and your key did not make its signature", False
    return "yours (signed with your dump key)", True


# -- the code part: the one place a file is unpickled ---------------------------------------------


class Replayable(Record):
    """What a replay compiles and runs: the graph as written and the call's values."""

    inputs: list[Any]  # graph variables (explicit inputs and shared variables)
    outputs: list[Any]  # outputs, then the updates' new values
    n_outputs: int
    target_indices: list[int]
    values: list[Any]  # one per input
    flags: dict[str, str]
    versions: dict[str, str]  # what the dump was written with ({} for the older format)
    linker: str = ""  # the linker the guarded call ran on, by its table name ('' where not known)


def code_part(path: str | os.PathLike[str], *, trust: bool) -> Replayable:
    """The dump's graph and values, for a replay: unpickled only if the dump is signed with
    this user's key, or ``trust`` (the caller runs the file's code knowingly)."""
    where = os.fspath(path)
    with _open_regular(where) as (fh, size):
        head = fh.read(len(LEGACY_MAGIC))
        fh.seek(0)
        if head == LEGACY_MAGIC:
            if not trust:
                raise UntrustedDumpError(_legacy_message(where))
            return _legacy(where, fh.read())
        if not head.startswith(b"PK"):
            raise DumpError(f"{where} is not a modecfg NaN-guard dump (not a ZIP file)")
        dump = _load(where, fh, size)
    if not (trust or dump.signed_by_you):
        raise UntrustedDumpError(
            f"{where}: not run: the dump is not yours (signature: {dump.signature}). Running it means "
            f"running the code its graph pickle holds. Read it first (modecfg replay {where} shows its "
            f"data); then replay(path, trust=True) (modecfg replay --trust) runs it, or "
            f"modecfg.load_dump(path).call(f) runs your own function f on its captured values"
        )
    if dump._code is None:
        raise DumpError(f"{where}: the dump cannot be replayed: {dump._no_code}")
    if dump.missing:
        listed = "; ".join(f"{k}: {why}" for k, why in dump.missing.items())
        raise DumpError(f"{where}: the dump cannot be replayed: some values were not captured ({listed})")
    values = [(dump.inputs if role == "input" else dump.shared)[name] for role, name in dump._order]

    def persistent(pid: Any) -> Any:
        if not (
            isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "captured" and isinstance(pid[1], int)
        ):
            raise DumpError(f"{where}: the dump is corrupted (its graph names a value {pid!r})")
        if not 0 <= pid[1] < len(values):
            raise DumpError(f"{where}: the dump is corrupted (its graph names value {pid[1]})")
        return values[pid[1]]

    payload = _unpickle(dump._code, persistent, where)
    checked = _check_payload(where, payload, len(values))
    ran_on = "" if dump.linker == "unknown" else dump.linker
    return Replayable(checked["inputs"], checked["outputs"], checked["n_outputs"],
                      checked["target_indices"], values, dict(dump.flags), dict(dump.versions),
                      ran_on)  # fmt: skip


def _unpickle(body: bytes, persistent: Callable[[Any], Any] | None, where: str) -> Any:
    """Unpickle a dump's graph: this runs any code the bytes name. Called only for a dump
    signed with the user's key or one the user trusts (:func:`code_part`); the only
    unpickling of a file in modecfg."""
    import io
    import pickle

    unpickler = pickle.Unpickler(io.BytesIO(body))
    if persistent is not None:
        unpickler.persistent_load = persistent  # type: ignore[method-assign]
    try:
        return unpickler.load()
    except DumpError:
        raise
    except Exception as exc:
        raise DumpError(f"{where}: the dump's graph cannot be read ({type(exc).__name__}: {exc})") from None


def _legacy(where: str, data: bytes) -> Replayable:
    """A trusted dump of modecfg's earlier pickle format: header, digest, pickle."""
    found = re.match(rb"MODECFG-NANGUARD-DUMP [12]\nsha256:([0-9a-f]{64})\n", data)
    if found is None:
        raise DumpError(f"{where}: the dump is corrupted (its header has no digest)")
    body = data[found.end() :]
    if hashlib.sha256(body).hexdigest() != found[1].decode():
        raise DumpError(
            f"{where}: the dump is corrupted (its digest does not match: changed since it was written)"
        )
    payload = _unpickle(body, None, where)
    checked = _check_payload(where, payload, None)
    values = checked.get("values")
    if not isinstance(values, list) or len(values) != len(checked["inputs"]):
        raise DumpError(f"{where}: the dump is corrupted (its values do not fit its inputs)")
    flags = checked.get("flags")
    if not isinstance(flags, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in flags.items()
    ):
        raise DumpError(f"{where}: the dump is corrupted (its flags are not text)")
    return Replayable(checked["inputs"], checked["outputs"], checked["n_outputs"],
                      checked["target_indices"], values, flags, {})  # fmt: skip


def _check_payload(where: str, payload: Any, n_values: int | None) -> dict[str, Any]:
    """The unpickled graph if it has the shape of one, else a DumpError naming what is off."""

    def bad(what: str) -> DumpError:
        return DumpError(f"{where}: the dump is corrupted ({what})")

    if not isinstance(payload, dict):
        raise bad("its graph is not a NaN-guard call")
    missing = {"inputs", "outputs", "n_outputs", "target_indices"} - payload.keys()
    if missing:
        raise bad(f"missing {', '.join(sorted(missing))}")
    from modecfg.nanguard.dumpgraph import is_variable

    inputs, outputs, targets, n = (payload[k] for k in ("inputs", "outputs", "target_indices", "n_outputs"))
    if not all(isinstance(x, list) for x in (inputs, outputs, targets)):
        raise bad("inputs, outputs and target_indices must be lists")
    if not all(is_variable(v) for v in (*inputs, *outputs)):
        raise bad("its inputs and outputs are not graph variables")
    if n_values is not None and n_values != len(inputs):
        raise bad(f"{n_values} values for {len(inputs)} inputs")
    if not isinstance(n, int) or not 0 <= n <= len(outputs) or len(targets) != len(outputs) - n:
        raise bad("its outputs and updates do not add up")
    if not all(isinstance(i, int) and 0 <= i < len(inputs) for i in targets):
        raise bad("an update names an input that does not exist")
    return payload
