"""modecfg.cache.entries: what a cache directory holds, read from names, sizes and times only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from modecfg.cache import entries
from modecfg.cache.entries import caches, rescan, scan

SUPPORT = ("cutils_ext", "lazylinker_ext", "scan_perform")


def _file(path: Path, size: int, when: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    if when is not None:
        os.utime(path, (when, when))
    return path


def c_cache(root: Path) -> Path:
    """A C module cache as PyTensor lays it out: modules, support modules, the lock, a key file."""
    _file(root / "tmpaaaa" / "mabc.so", 1000, 1_000_000)
    _file(root / "tmpaaaa" / "mod.cpp", 200, 1_000_000)
    _file(root / "tmpaaaa" / "key.pkl", 50, 1_000_000)
    _file(root / "tmpbbbb" / "mdef.so", 3000, 2_000_000)
    _file(root / "tmpcccc" / "mod.cpp", 10, 3_000_000)  # no module: being written, or failed
    _file(root / "cutils_ext" / "cutils_ext.so", 500)
    _file(root / "lazylinker_ext.delete.me" / "old.so", 70)
    _file(root / ".lock", 0)
    _file(root / "__init__.py", 5)
    return root


def test_a_c_cache_is_its_module_directories_beside_what_pytensor_keeps(tmp_path: Path) -> None:
    cache = scan("C", c_cache(tmp_path / "c"), support=SUPPORT)
    assert [(e.name, e.size, e.complete) for e in cache.entries] == [
        ("tmpaaaa", 1250, True),
        ("tmpbbbb", 3000, True),
        ("tmpcccc", 10, False),
    ]  # fmt: skip  (least recently used first)
    assert cache.other == 500 + 70 + 5 and cache.size == 1250 + 3000 + 10 + 575
    assert cache.lock == tmp_path / "c" / ".lock" and cache.exists
    assert cache.entries[0].changed == 1_000_000 and cache.entries[0].paths == (tmp_path / "c" / "tmpaaaa",)
    assert rescan(cache) == cache


def test_links_are_neither_followed_nor_counted_as_theirs(tmp_path: Path) -> None:
    """PyTensor makes no link: a module directory holding one, or a link to a directory, is no
    entry (what a bound removes) and its target is not counted."""
    root = c_cache(tmp_path / "c")
    before = scan("C", root, support=SUPPORT)
    _file(tmp_path / "outside" / "big.bin", 10**6)
    (root / "tmpaaaa" / "link").symlink_to(tmp_path / "outside" / "big.bin")
    (root / "tmplink").symlink_to(tmp_path / "outside", target_is_directory=True)
    cache = scan("C", root, support=SUPPORT)
    assert sorted(e.name for e in cache.entries) == ["tmpbbbb", "tmpcccc"]
    assert 0 <= cache.size - (before.size - 1250) < 200  # the top link's own few bytes, not the megabyte


def test_only_what_pytensor_and_numba_write_is_an_entry(tmp_path: Path) -> None:
    """A compiledir set to a folder of one's own (an earlier version removed a user's folder
    unused for 31 days at the exit of a process that compiled): only module directories as
    PyTensor makes them are entries, and numba's own file names; nothing else is counted."""
    root = c_cache(tmp_path / "c")
    before = scan("C", root, support=SUPPORT)
    _file(root / "thesis" / "chapter1.tex", 10**4, 1_000)
    _file(root / "tmp" / "notes.txt", 10**4, 1_000)  # named tmp..., but not a module's
    _file(root / "tmpdata12" / "mod.cpp", 10, 1_000)
    _file(root / "tmpdata12" / "results.csv", 10**4, 1_000)
    _file(root / "tmpwith_sub" / "m.so", 10, 1_000)
    _file(root / "tmpwith_sub" / "data" / "x.npy", 10**4, 1_000)
    _file(root / "tmppyc" / "m.so", 10, 1_000)
    _file(root / "tmppyc" / "__pycache__" / "__init__.cpython-311.pyc", 5, 1_000)  # Python's own
    _file(root / "tmppycnotes" / "m.so", 10, 1_000)
    _file(root / "tmppycnotes" / "__pycache__" / "notes.txt", 10**4, 1_000)  # not Python's
    _file(root / "tmppyclink" / "m.so", 10, 1_000)
    (root / "tmppyclink" / "__pycache__").mkdir()
    (root / "tmppyclink" / "__pycache__" / "m.pyc").symlink_to(root / "thesis" / "chapter1.tex")
    _file(root / "tmpfifo" / "m.so", 10, 1_000)
    os.mkfifo(root / "tmpfifo" / "mod.cpp")  # a name PyTensor writes, but no file
    cache = scan("C", root, support=SUPPORT)
    assert [e.name for e in cache.entries] == ["tmppyc", *(e.name for e in before.entries)]
    assert cache.size == before.size + 15
    assert cache.entries[0][2:] == ((root / "tmppyc",), 15, 1_000, 1_000, True)
    numba = tmp_path / "numba"
    _file(numba / "f-1.py311.nbi", 10, 1_000)
    _file(numba / "f-1.py311.1.nbc", 10, 1_000)
    _file(numba / "f-1.py311.nbc.tmp.0123456789abcdef", 10, 1_000)  # numba writing
    _file(numba / "my_notes.txt", 10**4, 1_000)
    _file(numba / "f-1.py311.nbi.bak", 10**4, 1_000)
    found = scan("numba", numba)
    assert sorted(e.name for e in found.entries) == ["f-1.py311", "f-1.py311.nbc.tmp.0123456789abcdef"]
    assert found.size == 30


def test_numba_files_of_one_function_are_one_entry(tmp_path: Path) -> None:
    root = tmp_path / "numba"
    _file(root / "string.elemwise-ab12_fastmath1.py311.nbi", 100, 5_000)
    _file(root / "string.elemwise-ab12_fastmath1.py311.1.nbc", 900, 6_000)
    _file(root / "string.elemwise-ab12_fastmath1.py311.2.nbc", 800, 7_000)
    _file(root / "string.fgraph-cd34.py311.nbi", 50, 8_000)
    _file(root / "string.orphan-ef56.py311.1.nbc", 20, 9_000)  # its index gone
    _file(root / "string.fgraph-cd34.py311.nbi.tmp", 10, 10_000)  # numba writing
    cache = scan("numba", root)
    got = {e.name: (e.size, e.complete, len(e.paths)) for e in cache.entries}
    assert got == {
        "string.elemwise-ab12_fastmath1.py311": (1800, True, 3),
        "string.fgraph-cd34.py311": (50, True, 1),
        "string.orphan-ef56.py311": (20, False, 1),
        "string.fgraph-cd34.py311.nbi.tmp": (10, False, 1),
    }
    assert cache.lock is None and cache.entries[0].last_used == 7_000


def test_a_cache_not_made_yet_is_empty(tmp_path: Path) -> None:
    for kind in ("C", "numba"):
        cache = scan(kind, tmp_path / "none")  # type: ignore[arg-type]
        assert (cache.entries, cache.size, cache.exists) == ((), 0, False)


class _Sorted:
    """``os.scandir`` listing in name order (the system's order is any): a test that needs the
    order of a directory's files fixed uses it."""

    def __init__(self, path: Any) -> None:
        with _scandir(path) as it:
            self.items = sorted(it, key=lambda item: item.name)

    def __enter__(self) -> list[os.DirEntry[str]]:
        return self.items

    def __exit__(self, *exc: object) -> None:
        return None


_scandir = os.scandir


def test_a_module_directorys_times_are_its_newest_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``last_used``: the newest access or change of any of its files, the first listed too;
    ``changed``: the newest change (a file changed at the epoch still counts as its own time);
    an empty module directory: the directory's own time. A ``.pyd`` or ``.dylib`` is a compiled
    module as a ``.so`` is."""
    monkeypatch.setattr(os, "scandir", _Sorted)
    root = tmp_path / "c"
    a = _file(root / "tmpmod" / "a.pyd", 1)
    b = _file(root / "tmpmod" / "key.pkl", 1)
    os.utime(a, (9_000, 1_000))  # (atime, mtime): the newest access, listed first
    os.utime(b, (2_000, 8_000))  # the newest change
    _file(root / "tmpdylib" / "m.dylib", 1, 5_000)
    epoch = _file(root / "tmpepoch" / "mod.cpp", 1)
    os.utime(epoch, (5, 0))
    (root / "tmpempty").mkdir()
    os.utime(root / "tmpempty", (7_000, 7_000))
    got = {e.name: (e.last_used, e.changed, e.complete) for e in scan("C", root).entries}
    assert got == {
        "tmpmod": (9_000, 8_000, True),
        "tmpdylib": (5_000, 5_000, True),
        "tmpepoch": (5, 0, False),
        "tmpempty": (7_000, 7_000, False),
    }
    one = _file(tmp_path / "one" / "tmpx" / "m.so", 1)
    os.utime(one, (9_000, 1_000))
    assert scan("C", tmp_path / "one").entries[0].last_used == 9_000  # the access, not the change
    os.utime(one, (1_000, 9_000))
    assert scan("C", tmp_path / "one").entries[0].last_used == 9_000  # the change, newer


def test_what_pytensor_keeps_is_counted_whole_and_links_in_it_are_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A support module's files are counted in ``other``, every folder of it (two, so that a walk
    that stopped at the first would miss the other), a link's own bytes and not its target's; a
    folder that cannot be read is left out, the rest counted."""
    root = tmp_path / "c"
    _file(root / "cutils_ext" / "a.so", 100)
    _file(root / "cutils_ext" / "b.txt", 20)
    _file(root / "cutils_ext" / "one" / "x", 3)
    _file(root / "cutils_ext" / "two" / "y", 4000)
    _file(tmp_path / "outside" / "big.bin", 10**6)
    (root / "cutils_ext" / "big").symlink_to(tmp_path / "outside" / "big.bin")
    (root / "biglink").symlink_to(tmp_path / "outside" / "big.bin")  # beside the entries
    cache = scan("C", root, support=SUPPORT)
    assert 4123 <= cache.other < 4123 + 400  # (the two links' own few bytes)

    def unreadable(path: Any) -> Any:  # "two" read first (the walk is a stack: the last listed first)
        if str(path).endswith("two"):
            raise PermissionError(13, "Permission denied", str(path))
        return _Sorted(path)

    monkeypatch.setattr(os, "scandir", unreadable)
    assert scan("C", root, support=SUPPORT).other == cache.other - 4000  # "one" read all the same


def test_a_link_named_as_pytensor_or_numba_names_its_files_is_no_entry(tmp_path: Path) -> None:
    """A link is never PyTensor's or numba's, whatever its name and target (a bound would remove
    the link's target's cache as its own, or count a megabyte that is not the cache's)."""
    elsewhere = _file(tmp_path / "elsewhere" / "tmpreal" / "m.so", 10**6).parent
    _file(tmp_path / "outside.bin", 10**6)
    root = tmp_path / "c"
    _file(root / "tmplinked" / "m.so", 10)
    (root / "tmplinked" / "mod.cpp").symlink_to(tmp_path / "outside.bin")
    (root / "tmpdirlink").symlink_to(elsewhere, target_is_directory=True)
    _file(root / "notes" / "mod.cpp", 10)  # PyTensor's file names, but no module's directory name
    assert scan("C", root).entries == ()
    numba = tmp_path / "numba"
    _file(numba / "f.py311.nbi", 10)
    (numba / "g.py311.nbi").symlink_to(tmp_path / "outside.bin")
    assert [(e.name, e.size) for e in scan("numba", numba).entries] == [("f.py311", 10)]


def test_a_numba_data_file_without_its_number_is_an_entry_of_its_own(tmp_path: Path) -> None:
    _file(tmp_path / "n" / "f.py311.nbc", 10)  # no index between the stem and .nbc
    _file(tmp_path / "n" / "f.py311.2.nbc", 10)
    assert sorted(e.name for e in scan("numba", tmp_path / "n").entries) == ["f.py311", "f.py311.nbc"]


def test_a_rescan_keeps_the_lock_its_cache_was_scanned_with(tmp_path: Path) -> None:
    root = c_cache(tmp_path / "c")
    _file(root / ".mylock", 7)
    _file(root / ".mylock.holder", 9)  # its holder's note: comes and goes with it, not counted
    cache = scan("C", root, lock_name=".mylock", support=SUPPORT)
    assert cache.lock == root / ".mylock" and cache.other == 575  # (.lock, 0 bytes, is "other" now)
    again = rescan(cache)
    assert again == cache and again.lock == root / ".mylock"
    numba = scan("numba", tmp_path / "numba")
    assert rescan(numba) == numba and numba.lock is None


def test_this_processs_caches_are_where_pytensor_puts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg._pytensor import caches as where

    c_dir, numba_dir = c_cache(tmp_path / "c"), tmp_path / "numba"
    _file(numba_dir / "f.py311.nbi", 10)
    _file(c_dir / where.LOCK_NAME, 3)
    monkeypatch.setattr(where, "c_cache_dir", lambda: c_dir)
    monkeypatch.setattr(where, "numba_cache_dir", lambda: numba_dir)
    c, numba = caches()
    assert c == scan("C", c_dir, lock_name=where.LOCK_NAME, support=where.SUPPORT_MODULES)
    assert c.lock == c_dir / where.LOCK_NAME and len(c.entries) == 3 and numba == scan("numba", numba_dir)
    bare = caches(scanned=False)
    assert bare == (
        entries.Cache("C", c_dir, (), 0, c_dir / where.LOCK_NAME, where.SUPPORT_MODULES),
        entries.Cache("numba", numba_dir, (), 0, None),
    )
    assert rescan(bare[0]) == c and rescan(bare[1]) == numba
    monkeypatch.setattr(where, "LOCK_NAME", ".another.lock")  # PyTensor's name for its lock, read there
    assert caches()[0].lock == caches(scanned=False)[0].lock == c_dir / ".another.lock"
