"""Warm caches that travel: a compile cache exported to one file, imported on another machine.

A fresh worker compiles everything again: minutes before a sampler's first step. An export
holds the complete entries of both caches (C modules with PyTensor's support modules, numba's
functions) in one ZIP file, with a manifest (JSON: each file's size and SHA-256, and the
*signature* of the machine that built them: PyTensor, numpy, numba, Python, compiler and
flags, CPU features) and an HMAC of the manifest made with the user's own key (the key that
signs NaN-guard dumps, ``~/.config/modecfg/dump.key``).

A cache is code: PyTensor loads its modules and unpickles its keys, numba unpickles its data.
So an import runs nothing before it knows the file is the user's own (signed with their key;
the machines of one cluster share a home, and so the key) or the user said ``trust``. Then
it is refused where the signature differs (a module built for another CPU, compiler or
PyTensor would crash, or be rebuilt anyway), every file is checked against its digest, and the
entries missing here are put in place under the compile lock, each whole or not at all;
entries this cache has already are left as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

from modecfg._record import Record
from modecfg.cache.entries import Cache, caches
from modecfg.cache.holders import hold, release
from modecfg.configuration import config
from modecfg.errors import CacheArchiveError, UntrustedCacheError

__all__ = ["Exported", "Imported", "export_cache", "import_cache"]

FORMAT = 1
_MANIFEST, _SIGNATURE = "manifest.json", "manifest.sig"
_LIMIT = 8 * 1024**3  # bytes an archive may unpack to
_SAY_AFTER = 2.0


class Exported(Record):
    path: Path
    entries: int
    size: int  # bytes of the files held (uncompressed)
    signed: bool


class Imported(Record):
    added: tuple[str, ...]  # "C/tmpabc", "numba/f.py311"
    present: tuple[str, ...]  # already here, left as they are
    size: int


def _files_of(cache: Cache) -> list[tuple[str, list[Path], Path]]:
    """(entry id, its files, the directory they are relative to) of the complete entries and, for
    C, PyTensor's support modules (a fresh machine builds them first, for seconds)."""
    found = []
    for entry in cache.entries:
        if not entry.complete:
            continue
        if cache.kind == "C":
            (top,) = entry.paths
            files = sorted(p for p in top.rglob("*") if p.is_file() and not p.is_symlink())
            found.append((f"C/{entry.name}", files, cache.path))
        else:
            found.append((f"numba/{entry.name}", list(entry.paths), cache.path))
    if cache.kind == "C":
        for name in cache.support:
            top = cache.path / name
            if top.is_dir() and not top.is_symlink():
                files = sorted(p for p in top.rglob("*") if p.is_file() and not p.is_symlink())
                found.append((f"C/{name}", files, cache.path))
    return found


def export_cache(path: str | os.PathLike[str], *, found: tuple[Cache, ...] | None = None) -> Exported:
    """Write this process's caches (complete entries) to ``path``, signed with the user's key
    (unsigned, and said in the result, when there is no usable key)."""
    from modecfg._pytensor.caches import signature
    from modecfg.signing import KeyProblem, sign, signing_key

    found = caches() if found is None else found
    target = Path(path)
    manifest: dict[str, Any] = {"format": FORMAT, "created": time.time(), "signature": signature(),
                                "entries": []}  # fmt: skip
    size = 0
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
            for cache in found:
                if not cache.exists:
                    continue
                for entry_id, files, root in _files_of(cache):
                    listed = []
                    for file in files:
                        relative = file.relative_to(root).as_posix()
                        member = f"{cache.kind}/{relative}"
                        data = file.read_bytes()  # once: a file numba rewrites meanwhile stays whole
                        zf.writestr(member, data)
                        digest = hashlib.sha256(data).hexdigest()
                        listed.append({"path": member, "size": len(data), "sha256": digest})
                        size += len(data)
                    manifest["entries"].append({"id": entry_id, "files": listed})
            text = json.dumps(manifest, sort_keys=True).encode()
            zf.writestr(_MANIFEST, text)
            key = signing_key(create=True)
            signed = not isinstance(key, KeyProblem)
            if signed:
                assert isinstance(key, bytes)
                zf.writestr(_SIGNATURE, sign(key, text))
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return Exported(target, len(manifest["entries"]), size, signed)


def _read_manifest(zf: zipfile.ZipFile, path: Path, trust: bool) -> dict[str, Any]:
    from modecfg.signing import KeyProblem, signing_key, verify

    try:
        text = zf.read(_MANIFEST)
    except KeyError:
        raise CacheArchiveError(f"{path}: no {_MANIFEST}: not a cache exported by modecfg") from None
    if not trust:
        try:
            signature = zf.read(_SIGNATURE).decode("ascii", errors="replace").strip()
        except KeyError:
            signature = ""
        key = signing_key(create=False)
        if isinstance(key, KeyProblem) or not signature or not verify(key, text, signature):
            why = "it is unsigned" if not signature else "it is not signed with your key"
            if isinstance(key, KeyProblem):
                why = f"there is no key of yours to check it with ({key})"
            raise UntrustedCacheError(
                f"{path}: not imported: {why}. A cache holds compiled code that PyTensor loads and "
                "pickles that PyTensor and numba unpickle; import one only if you know where it comes "
                "from: modecfg cache import --trust FILE (trust=True)"
            )
    try:
        manifest = json.loads(text)
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ValueError(f"format {manifest.get('format') if isinstance(manifest, dict) else None!r}")
        _check_entries(manifest.get("entries"))
        return dict(manifest)
    except (ValueError, KeyError, TypeError) as exc:
        raise CacheArchiveError(f"{path}: its manifest cannot be read ({exc})") from None


def _check_entries(entries: Any) -> None:
    """Every entry an object with an ``id`` and ``files``, each file with a ``path``, a ``size``
    and a ``sha256``, of their types: ValueError naming the first that is not (a manifest signed
    with your key may still be malformed)."""
    if not isinstance(entries, list):
        raise ValueError("'entries' is not a list")
    for k, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ValueError(f"entry {k} is not an object with an 'id'")
        files = entry.get("files")
        if not isinstance(files, list):
            raise ValueError(f"entry {entry['id']!r} has no list of 'files'")
        for file in files:
            if not (
                isinstance(file, dict) and isinstance(file.get("path"), str)
                and type(file.get("size")) is int and file["size"] >= 0
                and isinstance(file.get("sha256"), str)
            ):  # fmt: skip
                raise ValueError(f"entry {entry['id']!r} lists a file without a path, a size and a sha256")


def _differences(theirs: dict[str, Any], ours: dict[str, str]) -> list[str]:
    return [
        f"{name} {theirs.get(name)!r} there, {ours[name]!r} here"
        for name in ours
        if theirs.get(name) != ours[name]
    ]


def import_cache(
    path: str | os.PathLike[str], *, trust: bool = False, found: tuple[Cache, ...] | None = None
) -> Imported:
    """Put the entries of an exported cache that are missing here into this process's caches;
    see the module's text for what is refused, and why."""
    from modecfg._pytensor.caches import signature

    source = Path(path)
    found = caches() if found is None else found
    by_kind: dict[str, Cache] = {cache.kind: cache for cache in found}
    try:
        zf = zipfile.ZipFile(source)
    except (OSError, zipfile.BadZipFile) as exc:
        raise CacheArchiveError(f"{source}: cannot be read as an exported cache ({exc})") from None
    with zf:
        manifest = _read_manifest(zf, source, trust)
        differs = _differences(manifest.get("signature") or {}, signature())
        if differs:
            raise CacheArchiveError(
                f"{source}: built for another machine or versions, not imported: {'; '.join(differs)}. "
                "Export it where these are the same (or give this kind of machine a cache of its own: "
                "compiledir_format with %(cpu_features)s)"
            )
        members = {info.filename: info for info in zf.infolist()}
        total = 0
        entries: list[tuple[str, str, list[dict[str, Any]]]] = []
        for entry in manifest["entries"]:
            entry_id = str(entry["id"])
            kind, _, name = entry_id.partition("/")
            if kind not in by_kind or not name or "/" in name or name in (".", ".."):
                raise CacheArchiveError(f"{source}: an entry named {entry_id!r} is not one of a cache")
            for file in entry["files"]:
                member = str(file["path"])
                parts = member.split("/")
                own = (len(parts) > 2 and parts[1] == name) if kind == "C" else (
                    len(parts) == 2 and parts[1].startswith(name + ".")
                )  # fmt: skip
                if parts[0] != kind or not own or ".." in parts or "" in parts or member not in members:
                    raise CacheArchiveError(f"{source}: {member!r} is not a file of entry {entry_id}")
                if members[member].file_size != file["size"]:
                    raise CacheArchiveError(f"{source}: {member} is not the size its manifest says")
                total += int(file["size"])
            entries.append((kind, name, entry["files"]))
        if total > _LIMIT:
            raise CacheArchiveError(f"{source}: unpacks to {total} bytes, over the {_LIMIT} allowed")
        return _place(zf, source, entries, by_kind, total)


def _place(
    zf: zipfile.ZipFile, source: Path, entries: list[tuple[str, str, list[dict[str, Any]]]],
    by_kind: dict[str, Cache], total: int,
) -> Imported:  # fmt: skip
    added: list[str] = []
    present: list[str] = []
    c_cache = by_kind.get("C")
    lock = None
    for cache in by_kind.values():
        cache.path.mkdir(parents=True, exist_ok=True)
    if c_cache is not None and c_cache.lock is not None:
        lock = hold(c_cache.lock, timeout=float(config["compile.timeout"]), say_after=_SAY_AFTER)
    try:
        for kind, name, files in entries:
            cache = by_kind[kind]
            staging = Path(tempfile.mkdtemp(prefix=".modecfg-import-", dir=cache.path))
            try:
                for file in files:
                    member = str(file["path"])
                    out = staging.joinpath(*member.split("/")[1:])
                    out.parent.mkdir(parents=True, exist_ok=True)
                    h = hashlib.sha256()
                    try:
                        with zf.open(member) as src, open(out, "wb") as dst:
                            for block in iter(lambda: src.read(1 << 20), b""):
                                h.update(block)
                                dst.write(block)
                    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:  # a flipped byte, a cut member
                        raise CacheArchiveError(
                            f"{source}: {member} cannot be read ({exc}): damaged"
                        ) from None
                    if h.hexdigest() != file["sha256"]:
                        raise CacheArchiveError(f"{source}: {member} does not match its digest: damaged")
                moved = _move_in(kind, name, staging, cache.path)
                (added if moved else present).append(f"{kind}/{name}")
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    finally:
        if lock is not None:
            release(lock)
    return Imported(tuple(added), tuple(present), total)


def _move_in(kind: str, name: str, staging: Path, root: Path) -> bool:
    """Put a staged entry in place unless the cache has it: a C directory by one rename; numba's
    data files before its index, so a reader finds the entry whole or not at all."""
    if kind == "C":
        target = root / name
        if target.exists():
            return False
        os.rename(staging / name, target)
        return True
    staged = sorted(p for p in staging.rglob("*") if p.is_file())
    if (root / f"{name}.nbi").exists():
        return False
    for file in sorted(staged, key=lambda p: p.name.endswith(".nbi")):
        os.replace(file, root / file.relative_to(staging))
    return True
