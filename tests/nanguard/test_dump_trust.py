"""A dump from anyone else runs nothing: every route that ran code through the old allowlist
unpickler, as a dump carrying it, read and replayed without trust.

Each route is first shown to be real: the same dump, signed with the user's key (or
replayed with ``trust=True``), runs its command. Unsigned, the replay runs nothing, writes
nothing and still shows the data part (exit status 3). Reading allocates no more than the
file holds, however large the sizes a tiny file declares.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import sys
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.cli import main
from modecfg.errors import DumpError, UntrustedDumpError
from tests.nanguard.dumptools import craft, parts, rebuild

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

PYTHON_ONLY = {"mode": "FAST_COMPILE", "linker": "py"}  # the routes run in Python implementations


class _Command:
    """A pickle that runs a shell command when it is loaded (the file it creates proves it)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.marker}",))


def _route(kind: str, marker: Path, path: Path) -> Path:
    """A dump carrying one route to running ``touch marker``."""
    command = np.frombuffer(pickle.dumps(_Command(marker)), dtype=np.uint8).copy()
    if kind == "dotted global":  # the graph part itself is the command
        x = pt.vector("x")
        dumped = craft(path, [x], [pt.log(x)], [np.array([-1.0])], PYTHON_ONLY)
        return rebuild(dumped, path, replace={"graph.pkl": pickle.dumps(_Command(marker))}, sign=False)
    raw = pt.vector("raw", dtype="uint8")
    if kind == "Elemwise nfunc_spec":
        import pytensor.scalar as ps
        from pytensor.tensor.elemwise import Elemwise

        out = Elemwise(ps.exp, nfunc_spec=("pickle.loads", 1, 1))(raw)
    elif kind == "Blockwise gufunc_spec":
        from pytensor.tensor.blockwise import Blockwise
        from pytensor.tensor.math import Sum

        rows = pt.matrix("rows", dtype="uint8")  # a batch dimension: an unbatched Blockwise is rewritten away
        out = Blockwise(Sum(axis=None), signature="(i)->()", gufunc_spec=("pickle.loads", 1, 1))(rows)
        return craft(path, [rows], [out], [command[None, :]], PYTHON_ONLY)
    else:  # compiler flags: a plugin the C compiler would load
        out = pt.log(raw)
        return craft(path, [raw], [out], [command], {"gcc.cxxflags": f"-fplugin={marker}.so", "linker": "c"})
    return craft(path, [raw], [out], [command], PYTHON_ONLY)


def _run(replay: Any) -> None:
    """Replay a route; what it raises or returns once its command ran is the route's business."""
    try:
        replay()
    except (DumpError, modecfg.NanGuardError):
        pass


ROUTES = ["dotted global", "Elemwise nfunc_spec", "Blockwise gufunc_spec"]


@pytest.mark.parametrize("kind", ROUTES)
def test_a_route_that_runs_code_is_real_when_trusted(tmp_path: Path, kind: str) -> None:
    marker = tmp_path / "ran"
    dump = _route(kind, marker, tmp_path / "d.npz")
    _run(lambda: modecfg.replay(dump, trust=True))
    assert marker.exists(), "the route did not run its command when trusted: this test proves nothing"


@pytest.mark.parametrize("kind", [*ROUTES, "compiler flags"])
def test_an_untrusted_dump_runs_nothing_writes_nothing_and_shows_its_data(tmp_path: Path, kind: str) -> None:
    marker = tmp_path / "ran"
    dump = _route(kind, marker, tmp_path / "d.npz")
    before = sorted(p.name for p in tmp_path.iterdir())
    with modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path / "dumps")}):
        with pytest.raises(UntrustedDumpError, match="not run: the dump is not yours"):
            modecfg.replay(dump)
        out, err = io.StringIO(), io.StringIO()
        assert main(["replay", str(dump)], out, err) == 3
    text = out.getvalue()
    assert "captured (the call's inputs" in text and "the graph as written:" in text
    assert "not run: this dump is not yours" in text and "modecfg replay --trust" in text
    if kind == "compiler flags":
        assert "gcc.cxxflags = " in text  # shown, never applied
    assert not marker.exists() and not Path(f"{marker}.so").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written, no dump either
    dumped = modecfg.load_dump(dump)  # the data part reads as data
    assert not dumped.signed_by_you and dumped.graph


def test_the_same_route_signed_with_the_users_key_runs(tmp_path: Path) -> None:
    """The signature is what decides: a dump the user's key signed is the user's own code."""
    marker = tmp_path / "ran"
    dump = _route("Blockwise gufunc_spec", marker, tmp_path / "d.npz")
    signed = rebuild(dump, tmp_path / "signed.npz", sign=True)
    assert modecfg.load_dump(signed).signed_by_you
    _run(lambda: modecfg.replay(signed))
    assert marker.exists()


def test_a_fifo_or_a_device_is_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(DumpError, match="not a regular file"):
            modecfg.load_dump(path)
        with pytest.raises(DumpError, match="not a regular file"):
            modecfg.replay(path, trust=True)


def _tiny_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    return buffer.getvalue()


def _npy_header(shape: tuple[int, ...], dtype: str = "<f8") -> bytes:
    header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


def _declaring(dump: Path, target: Path, npy: bytes, shape: list[int], dtype: str = "<f8") -> Path:
    import json

    data = json.loads(parts(dump)["dump.json"])
    data["captured"][0]["array"] = {"part": "input-0.npy", "dtype": dtype, "shape": shape}
    return rebuild(
        dump, target, replace={"dump.json": json.dumps(data).encode(), "input-0.npy": npy}, sign=False
    )


def _peak(action: Any) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        action()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak - base


@pytest.fixture(scope="module")
def plain_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = pt.vector("x")
    return craft(tmp_path_factory.mktemp("plain") / "d.npz", [x], [pt.log(x)], [np.array([-1.0])])


@pytest.mark.parametrize(
    "npy, shape, dtype, says",
    [
        (_npy_header((100_000, 100_000)), [100_000, 100_000], "<f8", "header says 10,000,000,000 values"),
        (_npy_header((10**18,), "|u1"), [10**18], "|u1", "header says"),
        (_npy_header((3,), "|O") + b"\x80\x04N.", [3], "|O", "is not data"),
        (_npy_header((2,), "<U5") + b"x" * 40, [2], "<U5", "is not data"),
        (b"\x93NUMPY\x03\x00" + b"\x00" * 40, [1], "<f8", "format (3, 0)"),
        (b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 100, [1], "<f8", "corrupted"),
    ],
    ids=["10 GB float64", "1 EB of bytes", "object array", "unicode", "npy 3.0", "lying header length"],
)
def test_a_tiny_file_never_allocates_what_it_declares(
    plain_dump: Path, tmp_path: Path, npy: bytes, shape: list[int], dtype: str, says: str
) -> None:
    hostile = _declaring(plain_dump, tmp_path / "hostile.npz", npy, shape, dtype)
    assert hostile.stat().st_size < 20_000
    caught: list[BaseException] = []

    def load() -> None:
        try:
            modecfg.load_dump(hostile)
        except DumpError as exc:
            caught.append(exc)

    assert _peak(load) < 2_000_000  # bytes: what the file holds, not what it declares
    assert caught and says in str(caught[0]) and "corrupted" in str(caught[0])


def test_parts_that_claim_more_than_the_file_holds_are_refused(plain_dump: Path, tmp_path: Path) -> None:
    data = bytearray(plain_dump.read_bytes())
    # the central directory's size fields of the first part: claim 4 GB, stored
    central = data.rindex(b"PK\x01\x02", 0, data.rindex(b"PK\x05\x06"))
    first = data.index(b"PK\x01\x02")
    assert first <= central
    data[first + 20 : first + 28] = struct.pack("<II", 0xFFFFFFF0, 0xFFFFFFF0)
    lying = tmp_path / "lying.npz"
    lying.write_bytes(bytes(data))
    with pytest.raises(DumpError, match="corrupted"):
        modecfg.load_dump(lying)


def test_parts_that_overlap_to_declare_more_than_the_file_are_refused(tmp_path: Path) -> None:
    body = _npy_header((1000,)) + b"\x00" * 8000
    buffer = bytearray(_tiny_zip({"input-0.npy": body, "input-1.npy": body}))
    # point the second part's central entry at the first part's data: 2 x 8 kB declared, 8 kB stored
    entries = [i for i in range(len(buffer)) if buffer.startswith(b"PK\x01\x02", i)]
    buffer[entries[1] + 42 : entries[1] + 46] = buffer[entries[0] + 42 : entries[0] + 46]
    hostile = tmp_path / "overlap.npz"
    hostile.write_bytes(bytes(buffer))
    with pytest.raises(DumpError, match=r"corrupted|not a modecfg"):
        modecfg.load_dump(hostile)


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'{"format": 1' + b"0" * 5000 + b"}", b"\xff\xfe not json", b"{}" * 10],
    ids=["deep nesting", "huge number", "not UTF-8", "trailing data"],
)
def test_hostile_json_is_a_dump_error(plain_dump: Path, tmp_path: Path, body: bytes) -> None:
    hostile = rebuild(plain_dump, tmp_path / "json.npz", replace={"dump.json": body}, sign=False)
    with pytest.raises(DumpError, match="corrupted"):
        modecfg.load_dump(hostile)


def test_a_compressed_or_encrypted_part_is_refused(plain_dump: Path, tmp_path: Path) -> None:
    squeezed = tmp_path / "deflated.npz"
    with zipfile.ZipFile(plain_dump) as src, zipfile.ZipFile(squeezed, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
    with pytest.raises(DumpError, match="compressed or encrypted"):
        modecfg.load_dump(squeezed)


@pytest.mark.skipif("mutmut" in sys.modules, reason="make mutate: the source holds every mutant at once")
def test_only_one_function_of_modecfg_unpickles_and_nothing_loads_with_pickle() -> None:
    """The code part of a dump is the only file modecfg unpickles, in one function."""
    import ast

    root = Path(modecfg.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {
            id(n): f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("load", "loads", "Unpickler"):
                if isinstance(node.value, ast.Name) and node.value.id in (
                    "pickle",
                    "cPickle",
                    "_pickle",
                    "dill",
                ):
                    found.append((path.relative_to(root).as_posix(), functions.get(id(node), "<module>")))
            if isinstance(node, ast.ImportFrom) and node.module in ("pickle", "_pickle", "dill"):
                names = {a.name for a in node.names}
                if names & {"load", "loads", "Unpickler"}:
                    found.append((path.relative_to(root).as_posix(), "from-import"))
            if isinstance(node, ast.keyword) and node.arg == "allow_pickle":
                assert isinstance(node.value, ast.Constant) and node.value.value is False, path
    assert found == [("nanguard/dump_reading.py", "_unpickle")]
