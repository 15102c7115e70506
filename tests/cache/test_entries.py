"""modecfg.cache.entries: what a cache directory holds, read from names, sizes and times only."""

from __future__ import annotations

import os
from pathlib import Path

from modecfg.cache.entries import rescan, scan

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
