"""modecfg.cache.travel: a warm cache exported, and imported only where it is the user's and fits."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from modecfg._pytensor import caches as where
from modecfg.cache.entries import Cache, scan
from modecfg.cache.travel import export_cache, import_cache
from modecfg.cli import main
from modecfg.errors import CacheArchiveError, UntrustedCacheError

from .test_entries import SUPPORT, _file

pytest.importorskip("pytensor")


def warm(root: Path) -> tuple[Cache, Cache]:
    _file(root / "c" / "tmpaaaa" / "maaaa.so", 300)
    _file(root / "c" / "tmpaaaa" / "key.pkl", 30)
    _file(root / "c" / "tmpbusy" / "mod.cpp", 10)  # being written: no module, not exported
    _file(root / "c" / "cutils_ext" / "cutils_ext.so", 100)
    _file(root / "c" / ".lock", 0)
    _file(root / "numba" / "f.py311.nbi", 20)
    _file(root / "numba" / "f.py311.1.nbc", 200)
    return scan("C", root / "c", support=SUPPORT), scan("numba", root / "numba")


def empty(root: Path) -> tuple[Cache, Cache]:
    return scan("C", root / "c", support=SUPPORT), scan("numba", root / "numba")


def files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".lock" not in p.name
    )


def test_a_warm_cache_travels_whole_and_once(tmp_path: Path) -> None:
    done = export_cache(tmp_path / "warm.zip", found=warm(tmp_path / "a"))
    assert (done.entries, done.size, done.signed) == (3, 300 + 30 + 100 + 20 + 200, True)
    got = import_cache(tmp_path / "warm.zip", found=empty(tmp_path / "b"))
    assert sorted(got.added) == ["C/cutils_ext", "C/tmpaaaa", "numba/f.py311"] and got.present == ()
    assert files(tmp_path / "b") == [
        "c/cutils_ext/cutils_ext.so", "c/tmpaaaa/key.pkl", "c/tmpaaaa/maaaa.so",
        "numba/f.py311.1.nbc", "numba/f.py311.nbi",
    ]  # fmt: skip
    assert (tmp_path / "b" / "c" / "tmpaaaa" / "maaaa.so").read_bytes() == b"x" * 300
    again = import_cache(tmp_path / "warm.zip", found=empty(tmp_path / "b"))
    assert again.added == () and len(again.present) == 3
    assert not [p for p in (tmp_path / "b").rglob(".modecfg-import-*")]  # no staging left behind


def _rewrite(archive: Path, change: dict[str, bytes | None]) -> None:
    """``archive`` with members replaced (bytes) or left out (None)."""
    with zipfile.ZipFile(archive) as zf:
        members = {info.filename: zf.read(info) for info in zf.infolist()}
    for name, data in change.items():
        if data is None:
            members.pop(name, None)
        else:
            members[name] = data
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def test_a_cache_not_signed_with_your_key_is_refused_unless_trusted(tmp_path: Path) -> None:
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    _rewrite(archive, {"manifest.sig": b"0" * 64})
    with pytest.raises(
        UntrustedCacheError, match=r"not imported: it is not signed with your key\. A cache holds"
    ):
        import_cache(archive, found=empty(tmp_path / "b"))
    _rewrite(archive, {"manifest.sig": None})
    with pytest.raises(UntrustedCacheError, match=r"not imported: it is unsigned\."):
        import_cache(archive, found=empty(tmp_path / "b"))
    assert not (tmp_path / "b").exists() or files(tmp_path / "b") == []
    assert len(import_cache(archive, trust=True, found=empty(tmp_path / "b")).added) == 3


def test_a_cache_built_elsewhere_is_refused_naming_what_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    real = where.signature()
    monkeypatch.setattr(
        where, "signature", lambda: {**real, "cpu_features": "000000000000", "numpy": "1.26.4"}
    )
    with pytest.raises(CacheArchiveError) as caught:
        import_cache(archive, found=empty(tmp_path / "b"))
    message = str(caught.value)
    assert (
        f"built for another machine or versions, not imported: numpy {real['numpy']!r} there, '1.26.4' here; "
        in message
    )
    assert f"cpu_features {real['cpu_features']!r} there, '000000000000' here" in message
    assert message.endswith("compiledir_format with %(cpu_features)s)")


def test_a_damaged_entry_is_not_put_in_place(tmp_path: Path) -> None:
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    _rewrite(archive, {"C/tmpaaaa/maaaa.so": b"y" * 300})  # same size, other bytes
    with pytest.raises(CacheArchiveError, match=r"C/tmpaaaa/maaaa\.so does not match its digest: damaged"):
        import_cache(archive, found=empty(tmp_path / "b"))
    assert not (tmp_path / "b" / "c" / "tmpaaaa").exists()
    assert not [p for p in (tmp_path / "b").rglob(".modecfg-import-*")]


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ({"id": "C/../evil", "files": []}, r"an entry named 'C/\.\./evil' is not one of a cache"),
        ({"id": "C/tmpx", "files": [{"path": "C/tmpx/../../evil.so", "size": 1, "sha256": ""}]},
         r"'C/tmpx/\.\./\.\./evil\.so' is not a file of entry C/tmpx"),
        ({"id": "elsewhere/x", "files": []}, r"an entry named 'elsewhere/x' is not one of a cache"),
        ({"id": "C/tmpx", "files": [{"path": "C/tmpx/absent.so", "size": 1, "sha256": ""}]},
         r"'C/tmpx/absent\.so' is not a file of entry C/tmpx"),
        ({"id": "C/tmpx", "files": [{"path": "C/tmpaaaa/maaaa.so", "size": 1, "sha256": ""}]},
         r"'C/tmpaaaa/maaaa\.so' is not a file of entry C/tmpx"),
    ],
)  # fmt: skip
def test_a_manifest_naming_what_is_no_entry_of_a_cache_is_refused(
    tmp_path: Path, entry: dict[str, object], match: str
) -> None:
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    with zipfile.ZipFile(archive) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    manifest["entries"] = [entry]
    _rewrite(archive, {"manifest.json": json.dumps(manifest).encode(), "manifest.sig": None})
    with pytest.raises(CacheArchiveError, match=match):
        import_cache(archive, trust=True, found=empty(tmp_path / "b"))
    assert not (tmp_path / "evil.so").exists()


def test_what_is_no_exported_cache(tmp_path: Path) -> None:
    (tmp_path / "not.zip").write_text("hello")
    with pytest.raises(CacheArchiveError, match=r"cannot be read as an exported cache"):
        import_cache(tmp_path / "not.zip", found=empty(tmp_path / "b"))
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(CacheArchiveError, match=r"no manifest\.json: not a cache exported by modecfg"):
        import_cache(tmp_path / "other.zip", trust=True, found=empty(tmp_path / "b"))
    with zipfile.ZipFile(tmp_path / "future.zip", "w") as zf:
        zf.writestr("manifest.json", json.dumps({"format": 99, "entries": []}))
    with pytest.raises(CacheArchiveError, match=r"its manifest cannot be read \(format 99\)"):
        import_cache(tmp_path / "future.zip", trust=True, found=empty(tmp_path / "b"))


def test_the_commands_export_and_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg.cache import travel

    source, target = warm(tmp_path / "a"), empty(tmp_path / "b")
    monkeypatch.setattr(travel, "caches", lambda: source)
    out, err = io.StringIO(), io.StringIO()
    assert main(["cache", "export", str(tmp_path / "w.zip")], out, err) == 0
    assert out.getvalue() == f"exported 3 entries (650 B) to {tmp_path / 'w.zip'}\n"
    monkeypatch.setattr(travel, "caches", lambda: target)
    out = io.StringIO()
    assert main(["cache", "import", str(tmp_path / "w.zip")], out, err) == 0
    assert out.getvalue() == f"imported 3 entries from {tmp_path / 'w.zip'}; 0 were here already\n"
    _rewrite(tmp_path / "w.zip", {"manifest.sig": None})
    err = io.StringIO()
    assert main(["cache", "import", str(tmp_path / "w.zip")], io.StringIO(), err) == 3
    assert err.getvalue().startswith("error: ") and "modecfg cache import --trust FILE" in err.getvalue()


def test_a_member_that_climbs_out_of_its_entry_is_refused_even_when_the_archive_holds_it(
    tmp_path: Path,
) -> None:
    """Zip-slip: the member is in the archive, its size is right, only its '..' betrays it."""
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    with zipfile.ZipFile(archive) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    evil = "C/tmpaaaa/../../../evil.so"
    manifest["entries"] = [{"id": "C/tmpaaaa", "files": [{"path": evil, "size": 4, "sha256": ""}]}]
    _rewrite(archive, {"manifest.json": json.dumps(manifest).encode(), "manifest.sig": None, evil: b"evil"})
    with pytest.raises(
        CacheArchiveError, match=r"'C/tmpaaaa/\.\./\.\./\.\./evil\.so' is not a file of entry"
    ):
        import_cache(archive, trust=True, found=empty(tmp_path / "b"))
    assert not list(tmp_path.rglob("evil.so"))


@pytest.mark.parametrize(
    ("entries", "says"),
    [
        (["C/tmpaaaa"], "entry 0 is not an object with an 'id'"),
        ([{"id": "C/tmpaaaa"}], "entry 'C/tmpaaaa' has no list of 'files'"),
        ([{"id": "C/tmpaaaa", "files": 3}], "entry 'C/tmpaaaa' has no list of 'files'"),
        ([{"id": "C/tmpaaaa", "files": [{"path": "C/tmpaaaa/m.so", "size": 4}]}], "without a path, a size"),
        ([{"id": "C/tmpaaaa", "files": ["C/tmpaaaa/maaaa.so"]}], "without a path, a size"),
        ({"C/tmpaaaa": []}, "'entries' is not a list"),
    ],
)  # fmt: skip
def test_a_malformed_manifest_signed_with_your_key_is_one_clear_error(
    tmp_path: Path, entries: object, says: str
) -> None:
    from modecfg.modes.signing import sign, signing_key

    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    with zipfile.ZipFile(archive) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    manifest["entries"] = entries
    text = json.dumps(manifest).encode()
    key = signing_key(create=True)
    assert isinstance(key, bytes)
    _rewrite(archive, {"manifest.json": text, "manifest.sig": sign(key, text).encode()})
    with pytest.raises(CacheArchiveError, match=re.escape(says)):
        import_cache(archive, found=empty(tmp_path / "b"))


def test_a_damaged_member_signed_with_your_key_is_one_clear_error(tmp_path: Path) -> None:
    """A flipped byte in a compressed member (zip's CRC fails before the digest is reached)."""
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    with zipfile.ZipFile(archive) as zf:
        info = next(i for i in zf.infolist() if i.filename.endswith(".so"))
    raw = bytearray(archive.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + info.compress_size // 2] ^= 0xFF
    archive.write_bytes(bytes(raw))
    with pytest.raises(CacheArchiveError, match=r"maaaa\.so cannot be read \(.*\): damaged"):
        import_cache(archive, found=empty(tmp_path / "b"))
    assert not (tmp_path / "b" / "c" / "tmpaaaa").exists()
