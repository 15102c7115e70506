"""Reading a dump, part by part: what each missing, oversized, doubled or damaged part makes the
reader say, what values it gives back, and what the writer puts in each part for it.

Each refusal is checked word for word: the message is the interface (it says which dump,
what is off, and where), and the user meets it without a debugger.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.errors import DumpError
from modecfg.nanguard import dump as dump_module
from tests.nanguard.dumptools import craft, parts, rebuild

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

DATA, GRAPH, MANIFEST, SIGNATURE = (
    dump_module.DATA,
    dump_module.GRAPH,
    dump_module.MANIFEST,
    dump_module.SIGNATURE,
)
PYTHON_ONLY = {"mode": "FAST_COMPILE", "linker": "py"}


@pytest.fixture(scope="module")
def a_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """log(x + w): one input, one shared variable (unsigned; tests sign their copies)."""
    x = pt.vector("x")
    w = pytensor.shared(np.array([1.0, 2.0]), name="w")
    path = tmp_path_factory.mktemp("reading") / "dump.npz"
    return craft(path, [x, w], [pt.log(x + w)], [np.array([-5.0, 1.0]), np.array([1.0, 2.0])], PYTHON_ONLY)


def _data(path: Path) -> dict[str, Any]:
    return json.loads(parts(path)[DATA])


def _with_data(source: Path, target: Path, change: Any) -> Path:
    data = _data(source)
    change(data)
    return rebuild(source, target, replace={DATA: json.dumps(data).encode()})


def _refusal(path: Path) -> str:
    with pytest.raises(DumpError) as info:
        modecfg.load_dump(path)
    return str(info.value)


def _zip(target: Path, content: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, body in content.items():
            zf.writestr(name, body)
    return target


# -- parts missing, oversized or doubled -------------------------------------------------------------


@pytest.mark.parametrize("gone", [DATA, MANIFEST])
def test_a_dump_without_its_data_or_its_manifest_is_refused_naming_both(
    gone: str, a_dump: Path, tmp_path: Path
) -> None:
    content = {k: v for k, v in parts(rebuild(a_dump, tmp_path / "signed.npz")).items() if k != gone}
    target = _zip(tmp_path / "partial.npz", content)
    assert _refusal(target) == f"{target} is not a modecfg NaN-guard dump (no {DATA} or {MANIFEST})"


def test_a_dump_without_a_signature_part_loads_as_unsigned(a_dump: Path, tmp_path: Path) -> None:
    content = {k: v for k, v in parts(rebuild(a_dump, tmp_path / "signed.npz")).items() if k != SIGNATURE}
    dump = modecfg.load_dump(_zip(tmp_path / "no-signature.npz", content))
    assert (dump.signature, dump.signed_by_you) == ("unsigned (it carries no signature)", False)
    np.testing.assert_array_equal(dump.inputs["x"], [-5.0, 1.0])


def test_a_manifest_over_64_mib_is_refused_before_it_is_read(a_dump: Path, tmp_path: Path) -> None:
    content = parts(rebuild(a_dump, tmp_path / "signed.npz"))
    content[MANIFEST] = content[MANIFEST] + b" " * (
        64 * 2**20 + 1 - len(content[MANIFEST])
    )  # still valid JSON
    target = _zip(tmp_path / "big.npz", content)
    assert (
        _refusal(target) == f"{target}: the dump is corrupted (manifest.json is larger than 67,108,864 bytes)"
    )
    content[MANIFEST] = content[MANIFEST][:-1]  # at the limit: read
    assert modecfg.load_dump(_zip(tmp_path / "at-limit.npz", content)).inputs.keys() == {"x"}


def test_a_data_part_over_64_mib_is_refused_before_it_is_read(a_dump: Path, tmp_path: Path) -> None:
    data = parts(a_dump)[DATA]
    target = rebuild(a_dump, tmp_path / "big.npz", replace={DATA: data + b" " * (64 * 2**20 + 1 - len(data))})
    assert _refusal(target) == f"{target}: the dump is corrupted (dump.json is larger than 67,108,864 bytes)"


def test_two_captured_values_of_one_name_are_refused(a_dump: Path, tmp_path: Path) -> None:
    def rename(data: dict[str, Any]) -> None:
        data["captured"][1]["name"] = "x"
        data["captured"][1]["role"] = "input"

    target = _with_data(a_dump, tmp_path / "twice.npz", rename)
    assert _refusal(target) == f"{target}: the dump is corrupted (two captured values are named 'x')"


# -- values the data part holds or says it does not -------------------------------------------------


def test_a_value_recorded_as_none_is_none_and_not_missing(a_dump: Path, tmp_path: Path) -> None:
    def none(data: dict[str, Any]) -> None:
        del data["captured"][0]["array"]

    dump = modecfg.load_dump(_with_data(a_dump, tmp_path / "none.npz", none))
    assert dump.inputs == {"x": None} and dump.missing == {}
    np.testing.assert_array_equal(dump.shared["w"], [1.0, 2.0])


def test_a_value_that_was_not_data_is_none_and_says_why(a_dump: Path, tmp_path: Path) -> None:
    def missing(data: dict[str, Any]) -> None:
        del data["captured"][1]["array"]
        data["captured"][1]["missing"] = "a builtins.object is not data: not captured"

    target = _with_data(a_dump, tmp_path / "missing.npz", missing)
    dump = modecfg.load_dump(target)
    assert dump.shared == {"w": None} and dump.missing == {"w": "a builtins.object is not data: not captured"}
    why = "some values were not captured (w: a builtins.object is not data: not captured)"
    with pytest.raises(DumpError) as by_call:
        x = pt.vector("x")
        dump.call(modecfg.function([x], x.sum()))
    assert str(by_call.value) == f"{target}: {why}"
    with pytest.raises(DumpError) as by_replay:
        modecfg.replay(target)
    assert str(by_replay.value) == f"{target}: the dump cannot be replayed: {why}"


def test_call_says_none_when_the_dump_holds_no_inputs_or_no_shared_values(tmp_path: Path) -> None:
    w = pytensor.shared(np.array([-1.0]), name="w")
    only_shared = modecfg.load_dump(craft(tmp_path / "shared.npz", [w], [pt.log(w)], [np.array([-1.0])]))
    x = pt.vector("x")
    with pytest.raises(DumpError) as inputs:
        only_shared.call(modecfg.function([x], x.sum()))
    assert str(inputs.value) == f"{only_shared.path}: the function takes 1 inputs and the dump holds 0 (none)"
    only_input = modecfg.load_dump(craft(tmp_path / "input.npz", [x], [pt.log(x)], [np.array([-1.0])]))
    v = pytensor.shared(np.ones(1), name="v")
    with pytest.raises(DumpError) as shared:
        only_input.call(modecfg.function([x], x.sum() + v.sum()))
    assert str(shared.value) == (
        f"{only_input.path}: the function's shared variables v are not in the dump (it holds none): "
        "is this the function that failed?"
    )


# -- the code part ------------------------------------------------------------------------------------


def test_a_dump_without_a_graph_says_so_when_replayed(a_dump: Path, tmp_path: Path) -> None:
    content = {k: v for k, v in parts(a_dump).items() if k != GRAPH}
    target = rebuild(_zip(tmp_path / "bare.npz", content), tmp_path / "no-graph.npz")
    with pytest.raises(DumpError) as info:
        modecfg.replay(target)
    assert str(info.value) == f"{target}: the dump cannot be replayed: the dump holds no graph"

    def why(data: dict[str, Any]) -> None:
        data["no_code"] = "the graph cannot be pickled (PicklingError: a lambda)"

    written = _with_data(target, tmp_path / "why.npz", why)
    with pytest.raises(DumpError) as said:
        modecfg.replay(written)
    assert str(said.value) == (
        f"{written}: the dump cannot be replayed: the graph cannot be pickled (PicklingError: a lambda)"
    )


def test_a_graph_part_that_is_no_pickle_is_refused_naming_why(a_dump: Path, tmp_path: Path) -> None:
    target = rebuild(a_dump, tmp_path / "garbage.npz", replace={GRAPH: b"not a pickle"})
    with pytest.raises(DumpError) as info:
        modecfg.replay(target)
    assert str(info.value).startswith(f"{target}: the dump's graph cannot be read (UnpicklingError: ")


def _legacy(path: Path, body: bytes, digest: bytes | None = None) -> Path:
    digest = hashlib.sha256(body).hexdigest().encode() if digest is None else digest
    path.write_bytes(b"MODECFG-NANGUARD-DUMP 2\nsha256:" + digest + b"\n" + body)
    return path


def test_an_older_dump_that_is_damaged_is_refused_saying_how(tmp_path: Path) -> None:
    x = pt.vector("x")
    whole = {"inputs": [x], "outputs": [pt.log(x)], "n_outputs": 1, "target_indices": [],
             "values": [np.array([1.0])], "flags": {"linker": "py"}}  # fmt: skip
    no_digest = tmp_path / "no-digest.pkl"
    no_digest.write_bytes(b"MODECFG-NANGUARD-DUMP 2\n" + pickle.dumps(whole))
    changed = _legacy(tmp_path / "changed.pkl", pickle.dumps(whole), b"0" * 64)
    cases = [
        (no_digest, "its header has no digest"),
        (changed, "its digest does not match: changed since it was written"),
        (
            _legacy(tmp_path / "values.pkl", pickle.dumps({**whole, "values": []})),
            "its values do not fit its inputs",
        ),
        (
            _legacy(tmp_path / "tuple.pkl", pickle.dumps({**whole, "values": (1.0,)})),
            "its values do not fit its inputs",
        ),
        (
            _legacy(tmp_path / "flags.pkl", pickle.dumps({**whole, "flags": "linker=py"})),
            "its flags are not text",
        ),
        (
            _legacy(tmp_path / "key.pkl", pickle.dumps({**whole, "flags": {1: "py"}})),
            "its flags are not text",
        ),
        (
            _legacy(tmp_path / "value.pkl", pickle.dumps({**whole, "flags": {"linker": 1}})),
            "its flags are not text",
        ),
    ]
    for path, what in cases:
        with pytest.raises(DumpError) as info:
            modecfg.replay(path, trust=True)
        assert str(info.value) == f"{path}: the dump is corrupted ({what})"
    (out,) = modecfg.replay(_legacy(tmp_path / "whole.pkl", pickle.dumps(whole)), trust=True)
    np.testing.assert_allclose(out, [0.0])


# -- what the writer puts in each part -----------------------------------------------------------------


def test_every_part_is_stored_uncompressed_with_zip64_sizes(guarded: Any, tmp_path: Path) -> None:
    """Parts are stored as they are (an array is read in place), each with ZIP64 sizes in its local
    header: a part of more than 4 GiB is written by streaming, its size unknown beforehand."""
    path = Path(str(_fail(guarded, tmp_path).dump_path))
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as zf:
        streamed = [i for i in zf.infolist() if i.filename not in (MANIFEST, SIGNATURE)]
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
        for info_ in streamed:  # the local header's extra field starts with the ZIP64 record (0x0001)
            start = info_.header_offset + 30 + len(info_.filename.encode())
            assert raw[start : start + 2] == b"\x01\x00", info_.filename
    content = parts(path)
    assert content[DATA].startswith(b'{\n "format": "modecfg-nanguard-dump",\n "version": 3,\n')  # readable
    manifest = json.loads(content[MANIFEST])
    assert content[MANIFEST] == json.dumps(manifest, sort_keys=True).encode()  # one spelling per manifest


def test_a_captured_value_records_its_type_and_the_linker_unknown_when_not_said(tmp_path: Path) -> None:
    x = pt.vector("x")
    plan = _plan([x], [pt.log(x)], linker="")
    made = dump_module._parts(plan, [np.array([-1.0])], None, ["output 0"], {})
    assert made.data["captured"] == [
        {"role": "input", "name": "x", "type": str(x.type), "updated": False,
         "array": {"part": "input-0.npy", "dtype": "<f8", "shape": [1]}},
    ]  # fmt: skip
    assert made.data["linker"] == "unknown" and made.data["no_code"] == ""


def test_a_value_that_is_not_data_is_recorded_as_missing_with_its_type(tmp_path: Path) -> None:
    x = pt.vector("x")
    made = dump_module._parts(_plan([x], [pt.log(x)]), [object()], None, [], {})
    assert made.data["captured"][0]["missing"] == "a builtins.object is not data: not captured"
    assert "array" not in made.data["captured"][0] and made.arrays == []


def test_a_graph_that_cannot_be_pickled_is_data_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.nanguard import dumpgraph

    def refuse(*args: Any) -> bytes:
        raise pickle.PicklingError("a lambda")

    monkeypatch.setattr(dumpgraph, "pickle_graph", refuse)
    x = pt.vector("x")
    made = dump_module._parts(_plan([x], [pt.log(x)]), [np.array([1.0])], None, [], {})
    assert (
        made.code is None and made.data["no_code"] == "the graph cannot be pickled (PicklingError: a lambda)"
    )


def test_a_value_per_graph_input_or_the_call_is_not_described(tmp_path: Path) -> None:
    x = pt.vector("x")
    with pytest.raises(ValueError, match="zip"):
        dump_module._parts(_plan([x], [pt.log(x)]), [np.array([1.0]), np.array([2.0])], None, [], {})


class _ArrayLike:
    """What a JAX array offers numpy: __array__, dtype and shape (no ndarray subclass)."""

    def __init__(self, values: list[float]) -> None:
        self._values = np.array(values)
        self.dtype, self.shape = self._values.dtype, self._values.shape

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._values


class _HalfArrayLike:
    """__array__ alone is not enough: a value must say its dtype and shape to be taken as one."""

    def __init__(self, dtype: bool, shape: bool) -> None:
        if dtype:
            self.dtype = np.dtype("float64")
        if shape:
            self.shape = (1,)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.zeros(1)


def test_an_array_like_value_is_captured_as_an_array_and_a_half_one_is_not() -> None:
    how, stored = dump_module._as_data(_ArrayLike([1.0, 2.0]))
    assert how == "array" and isinstance(stored, np.ndarray)
    np.testing.assert_array_equal(stored, [1.0, 2.0])
    for dtype, shape in [(True, False), (False, True), (False, False)]:
        assert dump_module._as_data(_HalfArrayLike(dtype, shape)) == (
            "missing", f"a {__name__}._HalfArrayLike is not data: not captured"
        )  # fmt: skip


def _plan(inputs: list[Any], outputs: list[Any], linker: str = "py") -> Any:
    from tests.nanguard.dumptools import _Plan

    plan = _Plan(inputs, outputs, {})
    plan.linker = linker
    return plan


# -- what the writer says when it cannot, and the names it writes under ---------------------------------


@pytest.fixture(scope="module")
def guarded() -> Any:
    x = pt.vector("x")
    return modecfg.function([x], pt.log(x), mode="NanGuardMode")


def _fail(guarded: Any, directory: Path) -> modecfg.NanGuardError:
    """The guard's error for log(-1), its dumps going to ``directory``."""
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(directory)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        guarded(np.array([-1.0]))
    return info.value


def _no_dump(guarded: Any, directory: Path) -> str:
    error = _fail(guarded, directory)
    assert error.dump_path is None
    return str(error).splitlines()[-1]


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (OSError(28, "No space left on device"), "No space left on device"),  # the OS's words
        (ValueError("a part past the ZIP limits"), "a part past the ZIP limits"),  # no strerror: the error
    ],
)
def test_a_dump_that_cannot_be_written_says_why_and_leaves_nothing(
    raised: Exception, said: str, guarded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(fh: Any, made: Any) -> None:
        fh.write(b"half a dump")
        raise raised

    monkeypatch.setattr(dump_module, "_write_zip", fail)
    assert _no_dump(guarded, tmp_path) == f"no dump: cannot write to {tmp_path} ({said})"
    assert list(tmp_path.iterdir()) == []  # the temporary file went with it


def test_a_call_that_cannot_be_described_has_no_dump_and_says_why(
    guarded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: Any) -> Any:
        raise TypeError("an input of no known kind")

    monkeypatch.setattr(dump_module, "_parts", fail)
    said = _no_dump(guarded, tmp_path)
    assert said == "no dump: the call cannot be described (TypeError: an input of no known kind)"


def test_a_writer_interrupted_mid_write_leaves_a_temporary_the_next_writer_can_name(
    guarded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary is in the dump directory (the rename into place is atomic there) and named by its
    writer's process and host, so that a later writer of this host removes it once that process is
    gone (a pid means nothing on another host of a shared directory)."""
    import re

    def interrupted(fh: Any, made: Any) -> None:
        fh.write(b"half a dump")
        raise KeyboardInterrupt  # not an error the writer handles: as if the process were killed

    monkeypatch.setattr(dump_module, "_write_zip", interrupted)
    with modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}), pytest.raises(KeyboardInterrupt):
        guarded(np.array([-1.0]))
    (left,) = tmp_path.iterdir()
    here = re.escape(dump_module._host())
    assert re.fullmatch(rf"\.nanguard-{os.getpid()}@{here}-[^/]*\.tmp", left.name), left.name


def test_the_versions_say_what_was_not_there(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "pytensor")
    monkeypatch.delattr(modecfg, "__version__")
    versions = dump_module._versions()
    assert (versions["pytensor"], versions["modecfg"]) == ("not imported", "?")


def test_a_dump_from_a_dask_worker_names_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import sys
    import types

    class _Worker:
        name = "tcp://10.0.0.7:4000"

    distributed = types.ModuleType("distributed")
    distributed.get_worker = lambda: _Worker()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "distributed", distributed)
    monkeypatch.setattr(socket, "gethostname", lambda: "node7")
    assert dump_module._process_name() == f"node7-tcp_10.0.0.7_4000-{os.getpid()}"

    def not_in_a_worker() -> Any:
        raise ValueError("No worker found")

    distributed.get_worker = not_in_a_worker  # type: ignore[attr-defined]
    assert dump_module._process_name() == f"node7-{os.getpid()}"
    monkeypatch.delitem(sys.modules, "distributed")  # never imported: never asked
    distributed.get_worker = lambda: _Worker()  # type: ignore[attr-defined]
    assert dump_module._process_name() == f"node7-{os.getpid()}"


def test_a_generator_is_stored_once_as_data_and_the_graph_names_it(tmp_path: Path) -> None:
    rng = pytensor.shared(np.random.default_rng(3), name="rng")
    x = pt.vector("x")
    out = pt.log(x + pt.random.normal(0, 1, size=(1,), rng=rng))
    made = dump_module._parts(
        _plan([x, rng], [out]), [np.array([-9.0]), rng.get_value(borrow=True)], None, [], {}
    )
    named: list[Any] = []

    def persistent_load(pid: Any) -> Any:
        named.append(pid)
        return None

    unpickler = pickle.Unpickler(io.BytesIO(made.code or b""))
    unpickler.persistent_load = persistent_load  # type: ignore[method-assign]
    unpickler.load()  # the test's own bytes, written just now
    assert named == [("captured", 1)]  # the generator by reference (x is no part of the graph's pickle)
    assert made.data["captured"][1]["generator"]["class"] == "Generator"


def test_a_file_that_is_no_zip_is_refused_saying_so(tmp_path: Path) -> None:
    path = tmp_path / "notes.npz"
    path.write_bytes(b"just some notes, not a dump")
    assert _refusal(path) == f"{path} is not a modecfg NaN-guard dump (not a ZIP file)"


def test_parts_stored_but_not_in_the_manifest_are_named(a_dump: Path, tmp_path: Path) -> None:
    content = parts(rebuild(a_dump, tmp_path / "signed.npz"))
    content["extra-1.npy"] = content["extra-2.npy"] = b"x"
    target = _zip(tmp_path / "extra.npz", content)
    assert _refusal(target) == (
        f"{target}: the dump is corrupted "
        "(the parts extra-1.npy, extra-2.npy are not both stored and in the manifest)"
    )


def test_an_empty_array_is_captured_and_read_back_empty(tmp_path: Path) -> None:
    x, y = pt.vector("x"), pt.vector("y")
    path = craft(tmp_path / "empty.npz", [x, y], [pt.log(x) + y.sum()], [np.array([-1.0]), np.zeros(0)])
    dump = modecfg.load_dump(path)
    assert dump.inputs["y"].shape == (0,) and dump.inputs["y"].dtype == np.float64


def test_reading_a_signed_dump_without_a_key_of_ones_own_says_so_and_makes_none(
    a_dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone else's dump, read by a user who never wrote one: the signature is not checked,
    and reading makes no key (only writing a dump does)."""
    signed = rebuild(a_dump, tmp_path / "theirs.npz", sign=b"k" * 32)
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    dump = modecfg.load_dump(signed)
    key = home / "modecfg" / "dump.key"
    assert (dump.signature, dump.signed_by_you) == (
        f"signed, but not checked: your dump key cannot be used ({key}: no dump key yet (one is made "
        "when this user's first dump is written))",
        False,
    )
    assert not home.exists()
