"""What is in a compile cache: its entries, their sizes and when each was last used.

A C module cache holds one directory per module (``tmpXXXXXXXX/``: the ``.so``, its source
and key) and PyTensor's support modules (``cutils_ext``, ...), which are no entry: PyTensor
keeps them. numba's cache holds, per function, an index (``NAME.nbi``) and data files
(``NAME.N.nbc``): together one entry. Nothing is opened: a key or an index is a pickle, and
sizes and times are all that is needed. Links are not followed; nothing outside the
directory is counted or, later, removed.

Only what PyTensor and numba write is an entry, since entries are what a bound removes: a
directory named as ``tempfile.mkdtemp`` names PyTensor's modules (``tmp...``) holding only
the files PyTensor writes there, and numba's own file names. Anything else in the directory
(a ``compiledir`` set to a folder of one's own, another program's temporary directory) is
neither an entry nor counted: plain PyTensor leaves such a folder alone, and so does modecfg
(an earlier version counted every directory an entry, and its bound at exit removed a user's
folder unused for 31 days).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Literal

from modecfg._record import Record

__all__ = ["Cache", "Entry", "Kind", "caches", "rescan", "scan"]

Kind = Literal["C", "numba"]


class Entry(Record):
    """One cached module (C) or function (numba)."""

    kind: Kind
    name: str
    paths: tuple[Path, ...]  # C: its directory; numba: its files
    size: int  # bytes
    last_used: float  # newest access or change of its files (seconds since the epoch)
    changed: float  # newest change of its files
    complete: bool  # C: holds a compiled module; numba: has its index


class Cache(Record):
    kind: Kind
    path: Path
    entries: tuple[Entry, ...]
    other: int  # bytes of what is no entry (support modules, the lock file)
    lock: Path | None  # the lock file its writers take (C), None (numba: none)
    support: tuple[str, ...] = ()  # directories that are no entry (C: PyTensor's support modules)

    @property
    def size(self) -> int:
        return self.other + sum(entry.size for entry in self.entries)

    @property
    def exists(self) -> bool:
        return self.path.is_dir()


# What PyTensor writes in a module's directory (and Python: __pycache__ of its __init__.py)
_MODULE_FILES = frozenset({"key.pkl", "mod.cpp", "__init__.py", "delete.me"})
_MODULE_SUFFIXES = (".so", ".pyd", ".dylib", ".o", ".obj", ".lib", ".exp")
# numba's cache files: an index, data, and either one being written (NAME.nbi.tmp.UID)
_NUMBA_FILE = re.compile(r".+\.nb[ic](\.tmp(\.[0-9a-f]+)?)?")


def _module(top: Path) -> tuple[int, float, float, bool] | None:
    """(bytes, newest access or change, newest change, holds a compiled module) of the files in
    ``top``, a directory named as PyTensor names a module's, if it holds only what PyTensor
    writes there (no link, no other file, no folder but ``__pycache__`` of ``.pyc`` files);
    None for any other (not PyTensor's: neither an entry nor counted), and for one that cannot
    be read or went while it was read (not one to remove)."""
    size, used, changed, compiled = 0, 0.0, 0.0, False
    try:
        with os.scandir(top) as it:
            items = [(item, item.stat(follow_symlinks=False)) for item in it]
        for item, st in items:
            if stat.S_ISDIR(st.st_mode):
                if item.name != "__pycache__":
                    return None
                with os.scandir(item.path) as it:
                    inner = [(i, i.stat(follow_symlinks=False)) for i in it]
                if not all(stat.S_ISREG(s.st_mode) and i.name.endswith(".pyc") for i, s in inner):
                    return None
                files = [s for _, s in inner]
            elif not stat.S_ISREG(st.st_mode):  # a link, a socket: PyTensor makes none
                return None
            elif item.name not in _MODULE_FILES and not item.name.endswith(_MODULE_SUFFIXES):
                return None
            else:
                files = [st]
                compiled = compiled or item.name.endswith((".so", ".pyd", ".dylib"))
            for one in files:
                size += one.st_size
                used = max(used, one.st_atime, one.st_mtime)
                changed = max(changed, one.st_mtime)
    except OSError:
        return None
    return size, used, changed, compiled


def _size(top: Path) -> int:
    """Bytes of the files under ``top`` (a directory PyTensor keeps: a support module, one it
    marked for deletion), links not followed."""
    size = 0
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(Path(entry.path))
                    else:
                        size += st.st_size
        except OSError:  # removed while we looked: what is left counts
            continue
    return size


def _scan_c(path: Path, support: tuple[str, ...], lock_name: str) -> tuple[list[Entry], int]:
    entries, other = [], 0
    with os.scandir(path) as it:
        for item in it:
            st = item.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                if not item.name.startswith(lock_name):  # the lock and its holder's note come and go
                    other += st.st_size
                continue
            if item.name in support or item.name.endswith(".delete.me"):
                other += _size(Path(item.path))
                continue
            module = _module(Path(item.path)) if item.name.startswith("tmp") else None
            if module is None:
                continue  # not PyTensor's: neither an entry nor counted
            size, used, changed, compiled = module
            if not used:  # no file in it (yet): the directory's own time
                used = changed = st.st_mtime
            entries.append(Entry("C", item.name, (Path(item.path),), size, used, changed, compiled))
    return entries, other


def _numba_stem(name: str) -> str:
    """``f-12.py311.nbi`` and ``f-12.py311.3.nbc`` are one entry, ``f-12.py311``."""
    if name.endswith(".nbi"):
        return name[: -len(".nbi")]
    if name.endswith(".nbc"):
        head, _, index = name[: -len(".nbc")].rpartition(".")
        return head if index.isdigit() else name
    return name  # another file (numba's temporary while it writes): an entry of its own, incomplete


OWN_FILES = ".modecfg-"  # modecfg's own files in a cache directory (the bound's stamp): never entries


def _scan_numba(path: Path) -> tuple[list[Entry], int]:
    groups: dict[str, list[tuple[Path, os.stat_result]]] = {}
    other = 0
    with os.scandir(path) as it:
        for item in it:
            st = item.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or not _NUMBA_FILE.fullmatch(item.name):
                continue  # (modecfg's own stamp, anything not numba's)
            groups.setdefault(_numba_stem(item.name), []).append((Path(item.path), st))
    entries = []
    for stem, files in groups.items():
        entries.append(
            Entry(
                "numba",
                stem,
                tuple(sorted(p for p, _ in files)),
                sum(st.st_size for _, st in files),
                max(max(st.st_atime, st.st_mtime) for _, st in files),
                max(st.st_mtime for _, st in files),
                any(p.name == stem + ".nbi" for p, _ in files),
            )
        )
    return entries, other


def scan(kind: Kind, path: Path, *, lock_name: str = ".lock", support: tuple[str, ...] = ()) -> Cache:
    """The entries of the cache of ``kind`` at ``path`` (none if it does not exist yet)."""
    entries: list[Entry] = []
    other = 0
    if path.is_dir():
        entries, other = _scan_c(path, support, lock_name) if kind == "C" else _scan_numba(path)
    entries.sort(key=lambda e: (e.last_used, e.name))
    return Cache(kind, path, tuple(entries), other, path / lock_name if kind == "C" else None, support)


def rescan(cache: Cache) -> Cache:
    """``cache`` as it is now."""
    if cache.lock is None:  # numba's: no lock, no support modules
        return scan(cache.kind, cache.path)
    return scan(cache.kind, cache.path, lock_name=cache.lock.name, support=cache.support)


def caches(*, scanned: bool = True) -> tuple[Cache, Cache]:
    """This process's C module cache and numba cache, as they are now (PyTensor says where);
    ``scanned=False``: where they are only, their entries not looked at (:func:`rescan` them)."""
    from modecfg._pytensor.caches import LOCK_NAME, SUPPORT_MODULES, c_cache_dir, numba_cache_dir

    c, numba = c_cache_dir(), numba_cache_dir()
    if not scanned:
        return (Cache("C", c, (), 0, c / LOCK_NAME, SUPPORT_MODULES), Cache("numba", numba, (), 0, None))
    return (scan("C", c, lock_name=LOCK_NAME, support=SUPPORT_MODULES), scan("numba", numba))
