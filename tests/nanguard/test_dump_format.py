"""A dump's JSON parts as a loader meets them: the shapes it accepts, and a clear refusal of any other."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg import signing
from modecfg.errors import DumpError
from modecfg.nanguard import dump as dump_module
from modecfg.nanguard import dump_reading
from tests.nanguard.dumptools import parts, rebuild

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


@pytest.fixture(scope="module")
def a_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("dumps")
    x = pt.vector("x")
    rng = pytensor.shared(np.random.default_rng(1), name="rng")
    fn = modecfg.function([x], pt.log(x + pt.random.normal(0, 1, size=(2,), rng=rng)), mode="NanGuardMode")
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(directory), "NanGuardMode.max_dumps": 10**6}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(np.array([-100.0, -100.0]))
    assert info.value.dump_path is not None  # (a module fixture: the per-test dump count is not reset yet)
    return Path(info.value.dump_path)


@pytest.fixture(autouse=True)
def _cold_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON models are built at a process's first load: each test here builds them again."""
    monkeypatch.setattr(dump_reading, "_MODELS", None)


def _data(path: Path) -> dict[str, Any]:
    return json.loads(parts(path)[dump_module.DATA])


def _with_data(path: Path, target: Path, change: Any) -> Path:
    data = _data(path)
    change(data)
    return rebuild(path, target, replace={dump_module.DATA: json.dumps(data).encode()})


def test_a_dumps_code_part_names_only_modules_of_the_core(tmp_path: Path) -> None:
    """A dump outlives the code that wrote it: its pickled graph may name modecfg's modules only
    where they stay (the core), so that a feature folder moved (issue 61) still reads the dumps
    written before. Here: a gradient's origin and a user line, made through the core's patches."""
    import pickletools

    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    y = pt.log(x) * w
    fn = modecfg.function([x], [y, pytensor.grad(y.sum(), x)], mode="NanGuardMode")
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(np.array([-1.0, 1.0, 2.0]))
    with zipfile.ZipFile(str(info.value.dump_path)) as archive:
        code = archive.read(dump_module.GRAPH)
    named = {
        arg.split(" ")[0]
        for op, arg, _ in pickletools.genops(code)
        if isinstance(arg, str) and arg.startswith("modecfg.")  # a module (modecfg_grad: a tag's key)
    }
    assert named == {"modecfg._pytensor.gradients", "modecfg._source"}
    assert not any(
        name.startswith(("modecfg.nanguard", "modecfg.modes", "modecfg.compare")) for name in named
    )


def test_a_dump_loads_with_models_built_at_first_use(a_dump: Path) -> None:
    dump = modecfg.load_dump(a_dump)
    assert dump.signed_by_you and isinstance(dump.shared["rng"], np.random.Generator)
    assert dump_reading._models() is dump_reading._models()  # built once, then kept


@pytest.mark.parametrize(
    "change, says",
    [(lambda d: d.update(evil=1), "evil: Extra inputs are not permitted"),
     (lambda d: d.update(n_outputs="1"), "n_outputs: Input should be a valid integer"),
     (lambda d: d.update(n_outputs=-1), "n_outputs: Input should be greater than or equal to 0"),
     (lambda d: d["captured"][1]["generator"].update({"class": "Evil"}),
      "captured.1.generator.class: Input should be 'Generator' or 'RandomState'"),
     (lambda d: d["captured"][1]["generator"].update({"class_": "Generator"}),
      "captured.1.generator.class_: Extra inputs are not permitted"),
     (lambda d: d["captured"][0]["array"].update(part="../../etc/passwd"),
      "captured.0.array.part: String should match pattern"),
     (lambda d: d["captured"][0].update(updated="no"),
      "captured.0.updated: Input should be a valid boolean")],
    ids=["extra field", "number as text", "negative count", "generator class", "unaliased class",
         "array part name", "bool as text"],
)  # fmt: skip
def test_a_data_part_of_the_wrong_shape_is_refused_naming_the_field(
    a_dump: Path, tmp_path: Path, change: Any, says: str
) -> None:
    bad = _with_data(a_dump, tmp_path / "bad.npz", change)
    with pytest.raises(DumpError) as info:
        modecfg.load_dump(bad)
    assert says in str(info.value) and str(info.value).startswith(f"{bad}: the dump is corrupted (")


def test_a_dump_that_calls_for_no_outputs_is_data_too(a_dump: Path, tmp_path: Path) -> None:
    none = _with_data(a_dump, tmp_path / "none.npz", lambda d: d.update(n_outputs=0))
    assert modecfg.load_dump(none).signed_by_you


def _signed_zip(source: Path, target: Path, manifest: dict[str, Any], signature: dict[str, Any]) -> Path:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, body in parts(source).items():
            if name not in (dump_module.MANIFEST, dump_module.SIGNATURE):
                zf.writestr(name, body)
        zf.writestr(dump_module.MANIFEST, json.dumps(manifest))
        zf.writestr(dump_module.SIGNATURE, json.dumps(signature))
    return target


def _manifest(source: Path) -> dict[str, Any]:
    return json.loads(parts(source)[dump_module.MANIFEST])


@pytest.mark.parametrize(
    "change, says",
    [(lambda m: m["parts"][dump_module.DATA].update(sha256=m["parts"][dump_module.DATA]["sha256"].upper()),
      "String should match pattern '^[0-9a-f]{64}$'"),
     (lambda m: m["parts"][dump_module.DATA].update(size=-1), "Input should be greater than or equal to 0"),
     (lambda m: m.update(version=2), "version: Input should be 3"),
     (lambda m: m.update(format="zip"), "format: Input should be 'modecfg-nanguard-dump'")],
    ids=["upper-case digest", "negative size", "version", "format"],
)  # fmt: skip
def test_a_manifest_of_the_wrong_shape_is_refused(
    a_dump: Path, tmp_path: Path, change: Any, says: str
) -> None:
    manifest = _manifest(a_dump)
    change(manifest)
    bad = _signed_zip(a_dump, tmp_path / "bad.npz", manifest, {"unsigned": "a test"})
    with pytest.raises(DumpError, match="the dump is corrupted") as info:
        modecfg.load_dump(bad)
    assert says in str(info.value)


@pytest.mark.parametrize(
    "signature, says",
    [({"key": "ABCDEF0123456789", "hmac-sha256": "0" * 64}, "String should match pattern '^[0-9a-f]{16}$'"),
     ({"key": "0123456789abcdef", "hmac-sha256": "A" * 64}, "String should match pattern '^[0-9a-f]{64}$'"),
     ({"key": "0123456789abcdef", "hmac_sha256": "0" * 64}, "hmac_sha256: Extra inputs are not permitted"),
     ({"unsigned": 5}, "unsigned: Input should be a valid string")],
    ids=["upper-case key id", "upper-case signature", "unaliased name", "reason not text"],
)  # fmt: skip
def test_a_signature_part_of_the_wrong_shape_is_refused(
    a_dump: Path, tmp_path: Path, signature: dict[str, Any], says: str
) -> None:
    bad = _signed_zip(a_dump, tmp_path / "bad.npz", _manifest(a_dump), signature)
    with pytest.raises(DumpError, match="the dump is corrupted") as info:
        modecfg.load_dump(bad)
    assert says in str(info.value)


def test_a_signature_part_that_names_only_a_key_or_only_a_digest_is_no_signature(
    a_dump: Path, tmp_path: Path
) -> None:
    key = signing.signing_key(create=True)
    assert isinstance(key, bytes)
    manifest = parts(a_dump)[dump_module.MANIFEST]
    for half in ({"key": signing.key_id(key)}, {"hmac-sha256": signing.sign(key, manifest)}):
        made = _signed_zip(a_dump, tmp_path / "half.npz", json.loads(manifest), half)
        dump = modecfg.load_dump(made)
        assert not dump.signed_by_you and dump.signature == "unsigned (it carries no signature)"


# -- array parts ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def matrix_dump(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    directory = tmp_path_factory.mktemp("dumps")
    x = pt.matrix("x")
    fn = modecfg.function([x], pt.log(x), mode="NanGuardMode")
    value = np.asfortranarray(np.arange(6.0).reshape(2, 3) - 1)  # column-major, not square, a -1 in it
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(directory), "NanGuardMode.max_dumps": 10**6}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(value)
    assert info.value.dump_path is not None
    return Path(info.value.dump_path), value


@pytest.mark.parametrize("order", ["F", "C"])
def test_an_array_comes_back_with_its_values_in_place_in_either_order(
    matrix_dump: tuple[Path, np.ndarray], tmp_path: Path, order: str
) -> None:
    path, value = matrix_dump
    if order == "C":
        value = np.ascontiguousarray(value)
        path = rebuild(path, tmp_path / "c.npz", replace={"input-0.npy": _npy(value, (1, 0))})
    back = modecfg.load_dump(path).inputs["x"]
    assert back.shape == (2, 3) and back.flags[f"{order}_CONTIGUOUS"]
    np.testing.assert_array_equal(back, value)


def _npy(array: np.ndarray, version: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, version=version, allow_pickle=False)
    return out.getvalue()


def test_an_array_part_in_npy_format_2_is_read(matrix_dump: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    path, value = matrix_dump
    made = rebuild(path, tmp_path / "v2.npz", replace={"input-0.npy": _npy(value, (2, 0))})
    np.testing.assert_array_equal(modecfg.load_dump(made).inputs["x"], value)


def test_an_array_part_in_another_npy_format_is_refused(
    matrix_dump: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path, value = matrix_dump
    made = rebuild(path, tmp_path / "v3.npz", replace={"input-0.npy": _npy(value, (3, 0))})
    with pytest.raises(DumpError, match=r"input-0.npy: .npy format \(3, 0\) \(dumps use 1.0 and 2.0\)"):
        modecfg.load_dump(made)


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_an_array_header_longer_than_10000_bytes_is_refused(
    matrix_dump: tuple[Path, np.ndarray], tmp_path: Path, version: tuple[int, int]
) -> None:
    path, value = matrix_dump
    header = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }".ljust(10_000) + "\n"  # 10,001 bytes
    size = struct.pack("<H" if version == (1, 0) else "<I", len(header))
    body = np.lib.format.magic(*version) + size + header.encode("latin1") + value.T.tobytes()
    made = rebuild(path, tmp_path / "long.npz", replace={"input-0.npy": body})
    with pytest.raises(DumpError, match=r"input-0\.npy: Header info length"):
        modecfg.load_dump(made)


@pytest.mark.parametrize(
    "dtype",
    [np.dtype([("a", "<f8")]), np.dtype(("<f8", (2,))), np.dtype("O")],
    ids=["structured", "subarray", "object"],
)
def test_an_array_part_that_is_no_plain_numbers_is_refused(
    matrix_dump: tuple[Path, np.ndarray], tmp_path: Path, dtype: np.dtype
) -> None:
    path, _ = matrix_dump
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (1,)}
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, header)
    body = out.getvalue() + b"\0" * max(dtype.itemsize, 8)
    data = json.loads(parts(path)[dump_module.DATA])
    data["captured"][0]["array"].update(dtype=dtype.str, shape=[1])
    made = rebuild(
        path, tmp_path / "odd.npz", replace={"input-0.npy": body, dump_module.DATA: json.dumps(data).encode()}
    )
    with pytest.raises(
        DumpError, match=r"input-0.npy: dtype .* is not data \(only numbers and booleans are\)"
    ):
        modecfg.load_dump(made)


def test_a_signature_part_of_4096_bytes_is_read_and_one_byte_more_is_not(
    matrix_dump: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path, _ = matrix_dump
    for size, loads in ((4096, True), (4097, False)):
        filler = "x" * (size - len(json.dumps({"unsigned": ""})))
        made = rebuild(path, tmp_path / f"sig{size}.npz", signature=json.dumps({"unsigned": filler}).encode())
        if loads:
            assert modecfg.load_dump(made).signature == f"unsigned ({filler})"
        else:
            with pytest.raises(DumpError, match=r"signature\.json"):
                modecfg.load_dump(made)
