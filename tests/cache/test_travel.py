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
    from modecfg.signing import sign, signing_key

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


# -- what `make mutate MODULE=travel` found untested -----------------------------------------------


def _signed(archive: Path, manifest: object) -> None:
    """``archive`` with ``manifest`` as its manifest, signed with the user's key."""
    from modecfg.signing import sign, signing_key

    text = json.dumps(manifest).encode()
    key = signing_key(create=True)
    assert isinstance(key, bytes)
    _rewrite(archive, {"manifest.json": text, "manifest.sig": sign(key, text).encode()})


@pytest.mark.parametrize(
    ("manifest", "says"),
    [({"format": 1, "entries": {}}, "('entries' is not a list)"), ([], "(format None)"),
     ({"format": 99, "entries": []}, "(format 99)")],
)  # fmt: skip
def test_the_manifests_first_problem_is_said_in_full(tmp_path: Path, manifest: object, says: str) -> None:
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    with zipfile.ZipFile(archive) as zf:
        real = json.loads(zf.read("manifest.json"))
    if isinstance(manifest, dict) and manifest.get("format") == 1:
        manifest = {**real, "entries": {}}
    _signed(archive, manifest)
    with pytest.raises(CacheArchiveError) as caught:
        import_cache(archive, found=empty(tmp_path / "b"))
    assert str(caught.value) == f"{archive}: its manifest cannot be read {says}"


def test_an_empty_file_nested_deep_and_a_link_out_of_the_cache(tmp_path: Path) -> None:
    """A file of size 0 travels (its size is 0, not missing); the directories of a nested file are
    made; a directory holding a symbolic link (PyTensor makes none) is no entry, and nothing is
    followed out of the cache; an incomplete entry older than the others leaves them exported."""
    import os
    import time

    root = tmp_path / "a"
    _file(root / "c" / "tmpold" / "mod.cpp", 10)  # incomplete (no module), and the oldest
    old = time.time() - 3600
    os.utime(root / "c" / "tmpold" / "mod.cpp", (old, old))
    _file(root / "c" / "tmpdeep" / "m.so", 50)
    _file(root / "c" / "tmpdeep" / "__pycache__" / "__init__.cpython-311.pyc", 0)
    outside = tmp_path / "secret.txt"
    outside.write_text("not the cache's")
    _file(root / "c" / "tmplink" / "m.so", 50)
    (root / "c" / "tmplink" / "link.txt").symlink_to(outside)
    _file(root / "c" / ".lock", 0)
    found = (scan("C", root / "c", support=SUPPORT), scan("numba", root / "numba"))
    assert found[0].entries[0].name == "tmpold"
    done = export_cache(tmp_path / "x.zip", found=found)
    assert done.entries == 1 and done.size == 50
    got = import_cache(tmp_path / "x.zip", found=empty(tmp_path / "b"))
    assert got.added == ("C/tmpdeep",)
    assert files(tmp_path / "b") == ["c/tmpdeep/__pycache__/__init__.cpython-311.pyc", "c/tmpdeep/m.so"]
    assert b"not the cache's" not in (tmp_path / "x.zip").read_bytes()


def test_the_archive_is_compressed_its_manifest_sorted_and_dated(tmp_path: Path) -> None:
    import time

    before = time.time()
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    with zipfile.ZipFile(archive) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
        text = zf.read("manifest.json")
    manifest = json.loads(text)
    assert list(manifest) == sorted(manifest) and before <= manifest["created"] <= time.time()
    assert text == json.dumps(manifest, sort_keys=True).encode()


def test_a_cache_that_is_not_there_yet_is_passed_over(tmp_path: Path) -> None:
    missing = scan("C", tmp_path / "nowhere" / "c", support=SUPPORT)
    numba = warm(tmp_path / "a")[1]
    done = export_cache(tmp_path / "n.zip", found=(missing, numba))
    assert done.entries == 1 and done.size == 220


def test_a_key_is_made_to_sign_an_export_and_never_to_check_an_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "warm.zip"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    key = tmp_path / "config" / "modecfg" / "dump.key"
    assert export_cache(archive, found=warm(tmp_path / "a")).signed and key.exists()
    key.unlink()  # another user's machine: no key of theirs yet
    with pytest.raises(UntrustedCacheError, match="there is no key of yours to check it with"):
        import_cache(archive, found=empty(tmp_path / "b"))
    assert not key.exists()  # checking made none


def test_a_signature_that_is_not_text_is_untrusted_not_a_crash(tmp_path: Path) -> None:
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    _rewrite(archive, {"manifest.sig": b"\xff\xfe\x00signature"})
    with pytest.raises(UntrustedCacheError) as caught:
        import_cache(archive, found=empty(tmp_path / "b"))
    assert str(caught.value) == (
        f"{archive}: not imported: it is not signed with your key. A cache holds compiled code that "
        "PyTensor loads and pickles that PyTensor and numba unpickle; import one only if you know where "
        "it comes from: modecfg cache import --trust FILE (trust=True)"
    )


def test_a_member_of_another_size_than_its_manifest_says_is_named(tmp_path: Path) -> None:
    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    _rewrite(archive, {"C/tmpaaaa/maaaa.so": b"x" * 299})
    with pytest.raises(CacheArchiveError) as caught:
        import_cache(archive, trust=True, found=empty(tmp_path / "b"))
    assert str(caught.value) == f"{archive}: C/tmpaaaa/maaaa.so is not the size its manifest says"


def test_the_c_caches_lock_is_held_while_placing_and_let_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries go in under the C cache's compile lock (PyTensor's, so a compile never sees half
    an entry), staged beside their cache (one rename away, hidden from scans); numba's index
    file last, so a reader finds an entry whole or not at all; the lock let go after."""
    import os

    from modecfg.cache import travel

    archive = tmp_path / "warm.zip"
    export_cache(archive, found=warm(tmp_path / "a"))
    target = empty(tmp_path / "b")
    held: list[object] = []
    real_hold, real_release, real_replace = travel.hold, travel.release, os.replace

    def hold(lock: Path, **kwargs: object) -> object:
        held.append(("hold", lock, kwargs["timeout"]))
        return real_hold(lock, **kwargs)  # type: ignore[arg-type]

    def release(taken: object) -> None:
        held.append("release")
        real_release(taken)

    staged: list[Path] = []
    real_move = travel._move_in

    def move_in(kind: str, name: str, staging: Path, root: Path) -> bool:
        staged.append(staging)
        return real_move(kind, name, staging, root)

    order: list[str] = []

    def replace(src: object, dst: object) -> None:
        if ".py311." in str(dst):  # numba's files (the lock's holder note is replaced too)
            order.append(Path(str(dst)).name)
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(travel, "hold", hold)
    monkeypatch.setattr(travel, "release", release)
    monkeypatch.setattr(travel, "_move_in", move_in)
    monkeypatch.setattr(travel.os, "replace", replace)
    import_cache(archive, found=target)
    assert held == [("hold", target[0].lock, 120.0), "release"]
    assert all(s.parent in (target[0].path, target[1].path) and s.name.startswith(".modecfg-import-")
               for s in staged) and len(staged) == 3  # fmt: skip
    assert order == ["f.py311.1.nbc", "f.py311.nbi"]  # the index last
    export_cache(tmp_path / "n.zip", found=(warm(tmp_path / "a")[1],))
    numba_only = import_cache(tmp_path / "n.zip", found=(empty(tmp_path / "c")[1],))  # no C cache: no lock
    assert numba_only.added == ("numba/f.py311",) and held[-1] == "release" and len(held) == 2
