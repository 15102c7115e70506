"""NaN-guard dumps: where they go, what they hold (data, each array once), who may run them."""

from __future__ import annotations

import json
import os
import pickle
import platform
import re
import socket
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg import _files
from modecfg.errors import DumpError, UntrustedDumpError
from modecfg.nanguard import dump as dump_module
from modecfg.nanguard import dump_reading
from tests.conftest import COMPILEDIR
from tests.nanguard.dumptools import parts, rebuild

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


@pytest.fixture(scope="module")
def model() -> dict[str, Any]:
    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    fn = modecfg.function([x], pt.log(x * w).sum(), updates=[(w, w + 1)], mode="NanGuardMode")
    return {"fn": fn, "w": w}


def _fail(model: dict[str, Any], directory: Path | str | None = None) -> modecfg.NanGuardError:
    flags = {} if directory is None else {"NanGuardMode.dump_dir": str(directory)}
    model["w"].set_value(np.ones(3))
    with modecfg.config.override(flags), pytest.raises(modecfg.NanGuardError) as info:
        model["fn"](np.array([-1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(model["w"].get_value(), np.ones(3))  # a dump never changes that
    return info.value


# -- where dumps go ------------------------------------------------------------------------


def test_the_default_directory_is_private_under_the_users_cache(
    model: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    error = _fail(model)
    directory = tmp_path / "cache" / "modecfg" / "nanguard"
    assert Path(error.dump_path).parent == directory
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_without_xdg_cache_home_the_default_directory_is_under_home_dot_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert dump_module.dump_directory() == str(tmp_path / ".cache" / "modecfg" / "nanguard")
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # set but empty: as unset
    assert dump_module.dump_directory() == str(tmp_path / ".cache" / "modecfg" / "nanguard")


def test_a_directory_others_may_write_is_refused_and_the_error_still_comes(
    model: dict, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    error = _fail(model, shared)
    assert error.dump_path is None
    assert "no dump:" in str(error) and "writable by group or others" in str(error)
    assert list(shared.iterdir()) == []


def test_a_directory_owned_by_another_user_is_refused(
    model: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "theirs"
    mine.mkdir(mode=0o700)
    monkeypatch.setattr(dump_module.os, "getuid", lambda: os.stat(mine).st_uid + 1)  # as if another user
    error = _fail(model, mine)
    assert error.dump_path is None and "belongs to another user" in str(error)


def test_a_symbolic_link_as_the_directory_is_refused(model: dict, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    error = _fail(model, link)
    assert error.dump_path is None and "not a plain directory" in str(error)


def test_a_dump_that_cannot_be_written_still_raises_the_guards_error(model: dict, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    error = _fail(model, blocker / "dumps")
    assert error.dump_path is None and "no dump: cannot create" in str(error)
    assert "NaN in Log" in str(error)


def test_temporary_files_of_killed_writers_are_removed(model: dict, tmp_path: Path) -> None:
    directory = tmp_path / "dumps"
    directory.mkdir(mode=0o700)
    dead = 2**22 + 12345  # above Linux's default pid_max: no process has it
    with pytest.raises(ProcessLookupError):
        os.kill(dead, 0)
    from modecfg.nanguard.dump import _host

    here = _host()
    stale = [directory / f".nanguard-{dead + i}@{here}-{i}.tmp" for i in range(6)]
    ours = [
        directory / f".nanguard-{os.getpid()}@{here}-{i}.tmp" for i in range(3)
    ]  # writers of this process: alive
    elsewhere = [  # another host's writer of a shared directory: its pid means nothing here
        directory / f".nanguard-{dead}@gpu07.cluster-{i}.tmp" for i in range(2)
    ]  # fmt: skip
    others = [
        directory / name
        for name in ("notes.txt", ".nanguard-x.tmp", f".nanguard-{dead}.npz", f".nanguard-{dead}-old.tmp")
    ]
    others += elsewhere
    for path in (*stale, *ours, *others):  # mixed, in whatever order the directory lists them
        path.write_bytes(b"half a dump")
    _fail(model, directory)
    assert not any(p.exists() for p in stale) and all(p.exists() for p in (*ours, *others))


def test_max_dumps_caps_the_dumps_of_a_process_and_the_error_says_so(model: dict, tmp_path: Path) -> None:
    with modecfg.config.override({"NanGuardMode.max_dumps": 2}):
        errors = [_fail(model, tmp_path) for _ in range(3)]
    assert [e.dump_path is not None for e in errors] == [True, True, False]
    assert "NanGuardMode.max_dumps=2 reached in this process" in str(errors[2])
    assert len(list(tmp_path.glob("nanguard-*.npz"))) == 2


def test_replay_writes_no_new_dump_unless_asked(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    with modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}):
        with pytest.raises(modecfg.NanGuardError, match=r"no dump: a replay writes no dump"):
            modecfg.replay(error.dump_path)
        assert len(list(tmp_path.glob("nanguard-*.npz"))) == 1
        with pytest.raises(modecfg.NanGuardError) as again:
            modecfg.replay(error.dump_path, dump=True)
    assert again.value.dump_path is not None
    assert len(list(tmp_path.glob("nanguard-*.npz"))) == 2


# -- what a dump holds -------------------------------------------------------------------------


def test_a_dump_is_data_that_numpy_reads_without_pickle(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    with np.load(error.dump_path, allow_pickle=False) as arrays:  # no modecfg needed to read it
        np.testing.assert_array_equal(arrays["input-0"], [-1.0, 1.0, 1.0])
        np.testing.assert_array_equal(arrays["shared-1"], np.ones(3))
    dump = modecfg.load_dump(error.dump_path)
    assert isinstance(dump, modecfg.Dump) and dump.signed_by_you
    assert list(dump.inputs) == ["x"] and list(dump.shared) == ["w"] and dump.updated == ("w",)
    np.testing.assert_array_equal(dump.inputs["x"], [-1.0, 1.0, 1.0])
    assert dump.bad is not None and (dump.bad.kind, dump.bad.where, dump.bad.op) == ("NaN", "Log", "Log")
    assert dump.bad.file == __file__ and dump.bad.input_shapes == ((3,),) and dump.bad.n_bad == 1
    assert (
        dump.bad.code
        == 'fn = modecfg.function([x], pt.log(x * w).sum(), updates=[(w, w + 1)], mode="NanGuardMode")'
    )
    assert Path(__file__).read_text().splitlines()[(dump.bad.line or 0) - 1].strip() == dump.bad.code
    assert dump.bad.size == 3 and dump.bad.input_dtypes == ("float64",)
    assert dump.versions == {
        "modecfg": modecfg.__version__, "pytensor": pytensor.__version__, "numpy": np.__version__,
        "python": platform.python_version(), "platform": f"{platform.system()}-{platform.machine()}",
    }  # fmt: skip
    assert dump.bad_outputs == ("output 0",)
    assert dump.flags["profiling.destination"] == os.devnull  # the suite's, with its origin
    assert dump.origins["profiling.destination"] == "MODECFG_FLAGS"
    assert dump.versions["pytensor"] == pytensor.__version__ and dump.versions["numpy"] == np.__version__
    assert dump.linker in {"cvm", "vm", "py", "c|py", "numba"}
    assert "Log" in dump.graph and any("pt.log(x * w)" in line for line in dump.lines)


def test_each_array_is_stored_once_and_the_graph_holds_none_of_them(tmp_path: Path) -> None:
    x = pt.vector("x")
    big = pytensor.shared(np.arange(250_000, dtype="float64"), name="big")  # 2 MB
    fn = modecfg.function([x], pt.log(x).sum() + big.sum(), updates=[(big, big * 2)], mode="NanGuardMode")
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(np.array([-1.0]))
    stored = parts(info.value.dump_path)
    assert len(stored["shared-1.npy"]) == 2_000_000 + 128  # the array and its header
    assert len(stored["graph.pkl"]) < 100_000  # by reference, not a second copy
    assert os.path.getsize(info.value.dump_path) < 2_200_000
    np.testing.assert_array_equal(modecfg.load_dump(info.value.dump_path).shared["big"], big.get_value())


def test_a_random_generator_is_captured_as_its_state_and_replays_the_same_draw(tmp_path: Path) -> None:
    rng = pytensor.shared(np.random.default_rng(42), name="rng")
    x = pt.vector("x")
    draw = pt.random.normal(0, 1, size=(3,), rng=rng)
    fn = modecfg.function([x], pt.log(x + draw), mode="NanGuardMode")
    expected = np.random.default_rng(42).normal(0, 1, size=3)
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(-10 - expected)
    dump = modecfg.load_dump(info.value.dump_path)
    assert isinstance(dump.shared["rng"], np.random.Generator)
    np.testing.assert_array_equal(
        dump.shared["rng"].normal(0, 1, size=3), expected
    )  # the state before the call
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        modecfg.replay(info.value.dump_path)


@pytest.mark.parametrize(
    "value, kind",
    [(np.array([object()], dtype=object), "missing"), (np.zeros(2, dtype=[("a", "f8")]), "missing"),
     ("text", "missing"), (np.float32(1), "array"), (True, "array"), (None, "none"),
     (np.random.RandomState(0), "generator")],
    ids=["object array", "structured", "str", "numpy scalar", "bool", "None", "RandomState"],
)  # fmt: skip
def test_only_numbers_booleans_and_generators_are_captured(value: Any, kind: str) -> None:
    how, stored = dump_module._as_data(value)
    assert how == kind
    if kind == "missing":
        assert "is not data" in stored and "not captured" in stored


def test_call_runs_your_own_function_on_the_captured_values(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    dump = modecfg.load_dump(error.dump_path)
    model["w"].set_value(np.full(3, 7.0))
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):  # the same failure, from your own f
        dump.call(model["fn"])
    np.testing.assert_array_equal(model["w"].get_value(), np.ones(3))  # the captured state was set
    x = pt.vector("x")
    other = modecfg.function([x, pt.vector("y")], x.sum(), on_unused_input="ignore")
    with pytest.raises(DumpError, match="takes 2 inputs and the dump holds 1"):
        dump.call(other)
    v = pytensor.shared(np.ones(3), name="v")
    with pytest.raises(DumpError, match="shared variables v are not in the dump"):
        dump.call(modecfg.function([x], x.sum() + v.sum()))


# -- who may run a dump ----------------------------------------------------------------------------


def test_an_unsigned_copy_is_shown_not_run(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    copy = tmp_path / "from-a-colleague.npz"
    rebuild(error.dump_path, copy, sign=False)
    dump = modecfg.load_dump(copy)
    assert not dump.signed_by_you and dump.signature.startswith("unsigned")
    with pytest.raises(UntrustedDumpError, match="not run: the dump is not yours"):
        modecfg.replay(copy)
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):  # trust: the user says so
        modecfg.replay(copy, trust=True)


def test_a_dump_signed_with_another_key_is_not_run(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    copy = tmp_path / "theirs.npz"
    rebuild(error.dump_path, copy, sign=b"k" * 32)
    dump = modecfg.load_dump(copy)
    assert not dump.signed_by_you and "another key" in dump.signature
    with pytest.raises(UntrustedDumpError):
        modecfg.replay(copy)


def test_a_changed_dump_that_keeps_your_signature_is_called_forged(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    forged = tmp_path / "forged.npz"
    signature = parts(error.dump_path)["signature.json"]
    rebuild(error.dump_path, forged, replace={"graph.pkl": pickle.dumps({"inputs": []})},
            sign=False, signature=signature)  # fmt: skip
    dump = modecfg.load_dump(forged)
    assert not dump.signed_by_you and dump.signature.startswith("FORGED")
    with pytest.raises(UntrustedDumpError):
        modecfg.replay(forged)


def test_a_key_others_may_read_is_not_used_and_dumps_are_written_unsigned(
    model: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    first = _fail(model, tmp_path / "dumps")  # the key is made on first use, owner-only
    key = tmp_path / "config" / "modecfg" / "dump.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert modecfg.load_dump(first.dump_path).signed_by_you
    key.chmod(0o644)
    assert "chmod 600" in modecfg.load_dump(first.dump_path).signature
    second = _fail(model, tmp_path / "dumps")
    assert second.dump_path is not None  # still written, and said to be unsigned
    assert "unsigned" in modecfg.load_dump(second.dump_path).signature
    with pytest.raises(UntrustedDumpError):
        modecfg.replay(first.dump_path)


def test_without_a_home_dumps_are_unsigned_not_a_crash(
    model: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", "")
    error = _fail(model, tmp_path)
    dump = modecfg.load_dump(error.dump_path)
    assert "no home directory" in dump.signature and not dump.signed_by_you


def test_a_dump_of_the_older_pickle_format_is_refused_unless_trusted(model: dict, tmp_path: Path) -> None:
    import hashlib

    x = pt.vector("x")
    payload = {"inputs": [x], "outputs": [pt.log(x)], "n_outputs": 1, "target_indices": [],
               "values": [np.array([-1.0])], "flags": {}}  # fmt: skip
    body = pickle.dumps(payload)
    old = tmp_path / "old.pkl"
    old.write_bytes(
        b"MODECFG-NANGUARD-DUMP 2\nsha256:" + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    )
    with pytest.raises(DumpError, match=r"older modecfg.*modecfg replay --trust"):
        modecfg.load_dump(old)
    with pytest.raises(UntrustedDumpError, match="older modecfg"):
        modecfg.replay(old)
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        modecfg.replay(old, trust=True)


# -- what is refused -------------------------------------------------------------------------------


def test_a_flipped_bit_is_caught(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    data = bytearray(Path(error.dump_path).read_bytes())
    offset = data.index(b"\x93NUMPY") + 130  # inside the first array's values
    data[offset] ^= 0x01
    Path(error.dump_path).write_bytes(bytes(data))
    with pytest.raises(DumpError, match="corrupted"):
        modecfg.load_dump(error.dump_path)


@pytest.mark.parametrize("cut", [30, 200, -40])
def test_a_truncated_dump_is_a_dump_error(model: dict, tmp_path: Path, cut: int) -> None:
    error = _fail(model, tmp_path)
    data = Path(error.dump_path).read_bytes()
    Path(error.dump_path).write_bytes(data[:cut])
    with pytest.raises(DumpError, match=r"corrupted|not a modecfg"):
        modecfg.load_dump(error.dump_path)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.pop("captured"),
        lambda d: d.update(version=2),
        lambda d: d.update(captured=[{**d["captured"][0], "role": "other"}]),
        lambda d: d.update(
            captured=[{**d["captured"][0], "array": {"part": "../x.npy", "dtype": "<f8", "shape": [3]}}]
        ),
        lambda d: d.update(
            captured=[{**d["captured"][0], "array": {**d["captured"][0]["array"], "shape": [4]}}]
        ),
        lambda d: d.update(flags={"floatX": 32}),
        lambda d: d.update(n_outputs=-1),
        lambda d: d.update(extra="x"),
    ],
    ids=["no captured", "version", "role", "part name", "shape", "flags", "n_outputs", "unknown key"],
)
def test_a_data_part_of_the_wrong_shape_is_a_dump_error(model: dict, tmp_path: Path, edit: Any) -> None:
    error = _fail(model, tmp_path)
    data = json.loads(parts(error.dump_path)["dump.json"])
    edit(data)
    broken = tmp_path / "broken.npz"
    rebuild(error.dump_path, broken, replace={"dump.json": json.dumps(data).encode()})
    with pytest.raises(DumpError, match="corrupted"):
        modecfg.load_dump(broken)


def test_a_part_not_in_the_manifest_or_stored_twice_is_refused(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    extra = tmp_path / "extra.npz"
    rebuild(error.dump_path, extra)
    with zipfile.ZipFile(extra, "a") as zf:
        zf.writestr("payload.py", "import os")
    with pytest.raises(DumpError, match=r"payload\.py are not both stored and in the manifest"):
        modecfg.load_dump(extra)


# -- every linker the guard wraps, scan and OpFromGraph included -----------------------------------


@pytest.mark.parametrize("linker", ["py", "vm", "cvm", "c|py", "numba", "jax"])
def test_a_dump_of_scan_and_op_from_graph_replays_on_the_linker_that_failed(
    linker: str, tmp_path: Path
) -> None:
    if modecfg.linkers.why_unavailable(linker):
        pytest.skip(f"{linker} cannot run here")
    from pytensor.compile.builders import OpFromGraph

    a = pt.vector("a")
    inner = OpFromGraph([a], [pt.sqrt(a) + 1])
    x = pt.vector("x")
    w = pytensor.shared(np.ones(2), name="w")
    steps = pytensor.scan(lambda v, acc: acc + v * w.sum(), sequences=[x], outputs_info=[pt.zeros(())],
                          return_updates=False)  # fmt: skip
    cost = inner(steps).sum()
    with modecfg.config.override(linker=linker):
        fn = modecfg.function([x], cost, updates=[(w, w * 2)], mode="NanGuardMode")
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(np.array([1.0, -5.0]))
    dump = modecfg.load_dump(info.value.dump_path)
    assert dump.flags["linker"] == linker and dump.signed_by_you
    # (numba rewrites the OpFromGraph's inner graph in place: its Sqrt is fused into a Composite)
    assert (
        dump.bad is not None and "sqrt" in dump.bad.where.lower() and "inside OpFromGraph" in dump.bad.where
    )
    with pytest.raises(modecfg.NanGuardError) as again:
        modecfg.replay(info.value.dump_path)
    assert again.value.bad.where == info.value.bad.where and again.value.bad.kind == "NaN"
    np.testing.assert_array_equal(w.get_value(), np.ones(2))  # the replay updates its own copy


def test_validate_says_when_the_dump_key_cannot_be_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg import signing
    from modecfg.doctor import preflight

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert signing.key_problem() == ""  # none yet: made at the first dump
    key = signing.signing_key(create=True)
    assert isinstance(key, bytes) and signing.key_problem() == ""
    (tmp_path / "modecfg" / "dump.key").chmod(0o640)
    problems = [p for p in preflight(modecfg.load(env={})) if p.startswith("dump key")]
    assert len(problems) == 1 and "chmod 600" in problems[0] and "written unsigned" in problems[0]


@pytest.mark.parametrize(
    "make, says",
    [(lambda key: key.write_bytes(b"short"), "is not a dump key (5 bytes, not 32)"),
     (lambda key: (key.unlink(), key.mkdir()), "is not a regular file"),
     (lambda key: (key.unlink(), key.symlink_to(key.parent / "elsewhere")), "cannot be read")],
    ids=["wrong size", "a directory", "a symbolic link"],
)  # fmt: skip
def test_a_key_that_is_no_key_is_said_and_nothing_is_trusted(
    model: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Any, says: str
) -> None:
    from modecfg import signing

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    error = _fail(model, tmp_path / "dumps")  # signed with a fresh key
    key = tmp_path / "config" / "modecfg" / "dump.key"
    make(key)
    assert says in signing.key_problem()
    dump = modecfg.load_dump(error.dump_path)
    assert not dump.signed_by_you and says in dump.signature
    with pytest.raises(UntrustedDumpError):
        modecfg.replay(error.dump_path)


# -- what a dump says, and what call() needs -------------------------------------------------------


def test_the_summary_of_a_dump_says_every_part_of_what_it_holds(tmp_path: Path) -> None:
    x, i = pt.vector("x"), pt.ivector("i")
    w = pytensor.shared(np.array([1.0, 2.0]), name="w")
    fn = modecfg.function([x, i], pt.log(x * w).sum() + i.sum(), updates=[(w, w + 1)], mode="NanGuardMode")
    flags = {"NanGuardMode.dump_dir": str(tmp_path), "NanGuardMode.big": 1e8}
    with modecfg.config.override(flags), pytest.raises(modecfg.NanGuardError) as info:
        fn(np.array([-1.0, np.inf]), np.array([3, -2], dtype="int32"))
    dump = modecfg.load_dump(info.value.dump_path)
    versions = ", ".join(f"{k} {v}" for k, v in dump_module._versions().items())
    head, graph = dump.summary().split("the graph as written:\n")
    assert head.splitlines() == [
        f"NaN-guard dump {dump.path}",
        f"  written {dump.created} by {dump.process}",
        "  signature: yours (signed with your dump key)",
        "",
        "bad values in: output 0",
        "first input or operation with one (the call re-run without rewrites):",
        *("  " + line for line in dump.bad.text.splitlines()),
        "",
        "captured (the call's inputs; shared values as they were before it):",
        "  input  x  float64 (2,)  min -1  max -1  mean -1  NaN 0  Inf 1",
        "  input  i  int32 (2,)  min -2  max 3",
        "  shared w  float64 (2,)  min 1  max 2  mean 1.5  NaN 0  Inf 0  (updated by the call)",
        "",
        "flags not at their default (at the compile; NanGuardMode's checks at the call):",
        "  NanGuardMode.big = '100000000.0'  (the failing call)",
        f"  base_compiledir = '{COMPILEDIR}'  (MODECFG_FLAGS)",  # the suite's own (tests/conftest.py)
        "  linker = 'per_graph'  (MODECFG_FLAGS)",
        f"  profiling.destination = '{os.devnull}'  (MODECFG_FLAGS)",
        "",
        f"versions: {versions}",
        f"linker: {dump.linker}",
        "",
    ]
    assert dump.bad.text.startswith("Inf in input x (1 of 2 values)")
    assert graph.splitlines()[0].startswith("  Add [id A]") and "  └─ i [id H]" in graph
    assert graph.rstrip().endswith(
        "\n\nthe lines of code that made it:\n" + "\n".join("  " + line for line in dump.lines)
    )
    assert repr(dump) == (
        f"<modecfg Dump {dump.path!r}: Inf in input x (1 of 2 values); "
        "signature: yours (signed with your dump key)>"
    )


@pytest.mark.parametrize(
    "value, says",
    [(np.array([1.5, np.nan, -np.inf, 2.5]), "float64 (4,)  min 1.5  max 2.5  mean 2  NaN 1  Inf 1"),
     (np.array([np.nan], dtype="float32"), "float32 (1,)  NaN 1  Inf 0"),
     (np.array([], dtype="float64"), "float64 (0,)"),
     (np.array([[1, 7]], dtype="uint8"), "uint8 (1, 2)  min 1  max 7"),
     (np.array([1 + 2j, np.inf], dtype="complex128"), "complex128 (2,)  NaN 0  Inf 1"),
     (np.array([True, False]), "bool (2,)"),
     (np.float32(3.0), "float32 ()  min 3  max 3  mean 3  NaN 0  Inf 0"),
     (1234567.0, "float64 ()  min 1.23457e+06  max 1.23457e+06  mean 1.23457e+06  NaN 0  Inf 0"),
     (None, "None"),
     (np.random.default_rng(0), "numpy Generator(PCG64)"),
     (np.random.Generator(np.random.Philox(0)), "numpy Generator(Philox)"),
     (np.random.RandomState(0), "numpy RandomState(MT19937)")],
    ids=["float", "all NaN", "empty", "unsigned", "complex", "bool", "scalar", "rounded", "None",
         "generator", "philox", "RandomState"],
)  # fmt: skip
def test_a_captured_value_is_described_by_dtype_shape_range_and_bad_values(value: Any, says: str) -> None:
    assert dump_reading._describe_value(value) == says


def _log_dump_as_written(tmp_path: Path, name: str, captured_x: dict[str, Any], **data: Any) -> Path:
    """A dump of log(x) at x = -1, its data part rewritten as another writer could have: x captured
    as ``captured_x`` (no array), the other fields of ``data`` replaced."""
    x = pt.vector("x")
    fn = modecfg.function([x], pt.log(x), mode="NanGuardMode")
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(np.array([-1.0]))
    written = json.loads(parts(info.value.dump_path)[dump_module.DATA])
    written.update(data)
    written["captured"][0] = {"role": "input", "name": "x", "updated": False, **captured_x}
    new = {dump_module.DATA: json.dumps(written).encode()}
    return rebuild(info.value.dump_path, tmp_path / name, replace=new, drop=("input-0.npy",))


def test_the_summary_says_what_a_dump_does_not_hold(tmp_path: Path) -> None:
    missing = {"type": "Vector(float64)", "missing": "a builtins.object is not data: not captured"}
    bare = _log_dump_as_written(
        tmp_path, "bare.npz", missing, finding=None, bad_outputs=[], flags={}, lines=[]
    )
    dump = modecfg.load_dump(bare)
    text = dump.summary()
    assert "bad values in: (none recorded)\n" in text
    assert "\nthe call re-run without rewrites had no bad value: backend-only (" in text
    assert "\n  input  x  a builtins.object is not data: not captured\n" in text
    assert "the call):\n  (none)\n\nversions: " in text
    assert "the lines of code that made it" not in text and text.endswith("\n") and not text.endswith("\n\n")
    assert repr(dump) == f"<modecfg Dump {str(bare)!r}: no bad value located; signature: {dump.signature}>"


def test_call_says_exactly_why_a_function_does_not_fit_the_dump(tmp_path: Path) -> None:
    x = pt.vector("x")
    w = pytensor.shared(np.ones(2), name="w")
    fn = modecfg.function([x], pt.log(x * w).sum(), mode="NanGuardMode")
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(np.array([-1.0, 1.0]))
    dump = modecfg.load_dump(info.value.dump_path)
    with pytest.raises(TypeError) as not_compiled:
        dump.call(len)
    assert str(not_compiled.value) == f"{len!r} is not a compiled PyTensor function"
    with pytest.raises(modecfg.DumpError) as count:
        modecfg.load_dump(info.value.dump_path).call(modecfg.function([x, pt.vector("y")], x.sum(),
                                                                       on_unused_input="ignore"))  # fmt: skip
    assert str(count.value) == f"{dump.path}: the function takes 2 inputs and the dump holds 1 (x)"
    unnamed = pytensor.shared(np.ones(2))
    with pytest.raises(modecfg.DumpError) as shared:
        dump.call(modecfg.function([x], x.sum() + unnamed.sum() + pytensor.shared(1.0, name="v")))
    assert str(shared.value) == (
        f"{dump.path}: the function's shared variables {unnamed}, v are not in the dump (it holds w): "
        "is this the function that failed?"
    )


def test_a_generator_of_any_numpy_bit_generator_comes_back_with_its_state(tmp_path: Path) -> None:
    import copy

    x = pt.vector("x")
    rng = pytensor.shared(np.random.Generator(np.random.MT19937(5)), name="rng")
    draw = pt.random.normal(0, 1, size=(3,), rng=rng)
    fn = modecfg.function([x], pt.log(x + draw), mode="NanGuardMode")
    expected = np.random.Generator(np.random.MT19937(5)).normal(0, 1, size=3)
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(-10 - expected)
    dump = modecfg.load_dump(info.value.dump_path)
    captured = dump.shared["rng"]
    assert isinstance(captured.bit_generator, np.random.MT19937)
    np.testing.assert_array_equal(copy.deepcopy(captured).normal(0, 1, size=3), expected)
    rng.set_value(np.random.Generator(np.random.MT19937(99)))
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):  # your function, the captured draw
        dump.call(fn)
    np.testing.assert_array_equal(dump.shared["rng"].normal(0, 1, size=3), expected)  # the dump's stays


def test_a_random_state_in_a_dump_comes_back_with_its_state(tmp_path: Path) -> None:
    _, state = dump_module._as_data(np.random.RandomState(7))  # an op's input may be one
    generator = {"type": "RandomStateType", "generator": json.loads(json.dumps(state))}
    dump = modecfg.load_dump(_log_dump_as_written(tmp_path, "rs.npz", generator))
    back = dump.inputs["x"]
    assert isinstance(back, np.random.RandomState)
    assert back.randint(0, 1000, 5).tolist() == np.random.RandomState(7).randint(0, 1000, 5).tolist()
    assert "  input  x  numpy RandomState(MT19937)\n" in dump.summary()


# -- where dumps go ----------------------------------------------------------------------------------


def test_validate_says_where_dumps_could_go_and_creates_nothing(tmp_path: Path, unwritable: Path) -> None:
    assert _files.directory_problem(str(tmp_path / "a" / "b")) == ""
    assert not (tmp_path / "a").exists()
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert (
        _files.directory_problem(str(blocker / "dumps"))
        == f"it cannot be created ({blocker} cannot be written)"
    )
    assert _files.directory_problem(str(unwritable / "x" / "dumps")) == (
        f"it cannot be created ({unwritable} cannot be written)"
    )
    assert _files.directory_problem(str(unwritable)) == f"{unwritable} cannot be written"
    assert _files.directory_problem(str(tmp_path)) == ""


def test_a_live_process_s_temporary_file_is_left_alone_and_the_process_too(
    model: dict, tmp_path: Path
) -> None:
    # every signal back to its default action (a shell's nohup leaves SIGHUP ignored): any signal ends it
    child = """if True:
        import signal, time
        for s in signal.valid_signals():
            try:
                signal.signal(s, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        print("ready", flush=True)
        time.sleep(60)
    """
    other = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE)
    assert other.stdout is not None and other.stdout.readline() == b"ready\n"
    try:
        from modecfg.nanguard.dump import _host

        theirs = tmp_path / f".nanguard-{other.pid}@{_host()}-abc.tmp"
        theirs.write_bytes(b"being written")
        _fail(model, tmp_path)
        assert theirs.exists()  # not removed
        with pytest.raises(subprocess.TimeoutExpired):  # and not signalled (a signal takes a moment)
            other.wait(timeout=0.5)
    finally:
        other.kill()
        other.wait()


def test_a_dump_is_named_by_time_process_and_count(model: dict, tmp_path: Path) -> None:
    first, second = (Path(_fail(model, tmp_path).dump_path or "") for _ in range(2))
    process = dump_module._process_name()
    pattern = rf"nanguard-(\d{{8}}-\d{{6}})-{re.escape(process)}-(\d+)\.npz"
    found = [re.fullmatch(pattern, p.name) for p in (first, second)]
    assert all(found), (first.name, second.name)
    assert int(found[1][2]) == int(found[0][2]) + 1  # type: ignore[index]
    created = modecfg.load_dump(first).created  # 2026-11-24 20:01:02 -> 20261124-200102
    assert created.replace("-", "").replace(":", "").replace(" ", "-") == found[0][1]  # type: ignore[index]


def test_a_dumps_name_and_its_record_say_the_same_second(
    model: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made a second apart, they differed when a second turned between the two reads of the clock
    (seen under make mutate: '20261128-180713' against '20261128-180714')."""
    import time as real

    ticks = iter(range(1_800_000_000, 1_800_000_100))

    class Clock:  # every read of the clock a second later than the one before
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def localtime(self, seconds: float | None = None) -> real.struct_time:
            return real.localtime(next(ticks) if seconds is None else seconds)

        def strftime(self, fmt: str, when: real.struct_time | None = None) -> str:
            return real.strftime(fmt, when or self.localtime())

    monkeypatch.setattr(dump_module, "time", Clock())
    path = Path(_fail(model, tmp_path).dump_path or "")
    stamp = re.match(r"nanguard-(\d{8}-\d{6})-", path.name)
    assert stamp is not None, path.name
    created = modecfg.load_dump(path).created
    assert created.replace("-", "").replace(":", "").replace(" ", "-") == stamp[1]


def test_no_dump_when_max_dumps_is_0_and_the_error_says_so(model: dict, tmp_path: Path) -> None:
    with modecfg.config.override({"NanGuardMode.max_dumps": 0}):
        error = _fail(model, tmp_path)
    assert error.dump_path is None and "no dump: NanGuardMode.max_dumps is 0" in str(error)
    assert not list(tmp_path.glob("nanguard-*"))


# -- what a dump captures -----------------------------------------------------------------------------


def _dump(fn: Any, directory: Path, *args: Any) -> modecfg.Dump:
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(directory)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(*args)
    return modecfg.load_dump(info.value.dump_path)


def test_inputs_of_one_name_are_captured_each_under_its_own(tmp_path: Path) -> None:
    a, b, c = pt.vector("x"), pt.vector("x"), pt.vector("x")
    fn = modecfg.function([a, b, c], pt.log(a + b + c), mode="NanGuardMode")
    dump = _dump(fn, tmp_path, np.array([1.0]), np.array([2.0]), np.array([-9.0]))
    assert list(dump.inputs) == ["x", "x (2)", "x (3)"]
    assert [float(v[0]) for v in dump.inputs.values()] == [1.0, 2.0, -9.0]


def test_a_strided_input_is_captured_with_its_values(tmp_path: Path) -> None:
    x = pt.vector("x")
    fn = modecfg.function([x], pt.log(x), mode="NanGuardMode")
    strided = (np.arange(10.0) - 4)[::3]  # not contiguous: written through numpy's own writer
    assert not strided.flags.c_contiguous
    dump = _dump(fn, tmp_path, strided)
    np.testing.assert_array_equal(dump.inputs["x"], strided)


def test_a_dump_names_the_host_in_letters_digits_dots_and_underscores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "Lab host/7.é")
    assert dump_module._process_name() == f"Lab_host_7._-{os.getpid()}"
    x = pt.vector("x")
    dump = _dump(modecfg.function([x], pt.log(x), mode="NanGuardMode"), tmp_path, np.array([-1.0]))
    assert dump.process == f"Lab_host_7._-{os.getpid()}" and f"-Lab_host_7._-{os.getpid()}-" in dump.path
