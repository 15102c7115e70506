"""A dump's JSON parts as a loader meets them: the shapes it accepts, and a clear refusal of any other."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.errors import DumpError
from modecfg.modes import dump as dump_module
from modecfg.modes import signing
from tests.modes.dumptools import parts, rebuild

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


@pytest.fixture(scope="module")
def a_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("dumps")
    x = pt.vector("x")
    rng = pytensor.shared(np.random.default_rng(1), name="rng")
    fn = modecfg.function([x], pt.log(x + pt.random.normal(0, 1, size=(2,), rng=rng)), mode="NanGuardMode")
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(directory)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(np.array([-100.0, -100.0]))
    return Path(info.value.dump_path or "")


@pytest.fixture(autouse=True)
def _cold_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON models are built at a process's first load: each test here builds them again."""
    monkeypatch.setattr(dump_module, "_MODELS", None)


def _data(path: Path) -> dict[str, Any]:
    return json.loads(parts(path)[dump_module.DATA])


def _with_data(path: Path, target: Path, change: Any) -> Path:
    data = _data(path)
    change(data)
    return rebuild(path, target, replace={dump_module.DATA: json.dumps(data).encode()})


def test_a_dump_loads_with_models_built_at_first_use(a_dump: Path) -> None:
    dump = modecfg.load_dump(a_dump)
    assert dump.signed_by_you and isinstance(dump.shared["rng"], np.random.Generator)
    assert dump_module._models() is dump_module._models()  # built once, then kept


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
