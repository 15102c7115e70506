"""Trimming the compile caches: by age, by size, never under a process that uses them.

:func:`plan` is pure: given the entries, the bounds, the time and what is in use, it says
what goes and what stays, and why. :func:`clean` runs a plan holding the C cache's own
compile lock, the one PyTensor takes for every write, so no module is half written or half
read while it goes; it waits for the lock (saying once, after a moment, who holds it) and
gives up with a :class:`~modecfg.errors.CacheLockTimeout` naming the holder and the fixes.
An entry is kept, whatever its age, when a process of this host has its module loaded
(``/proc/PID/maps``), when it is being written (incomplete and changed in the last ten
minutes), or, where the system cannot tell what is loaded, when it was used in the last hour.
Both bounds are the ``cache.max_age`` and ``cache.max_size`` flags unless given;
:func:`bound_at_exit` applies them when a process that imported PyTensor ends, at most once
an hour per cache (a stamp file), and only if the lock is free at that moment.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from modecfg._record import Record
from modecfg.cache.entries import OWN_FILES, Cache, Entry, rescan
from modecfg.cache.entries import caches as current_caches
from modecfg.configuration import config
from modecfg.configuration.units import human_duration, human_size, seconds, size_bytes
from modecfg.errors import CacheLockTimeout, FlagValueError

if TYPE_CHECKING:  # holders imports filelock (~10 ms): loaded where a lock is taken or asked about
    from modecfg.cache.holders import Holder

__all__ = ["BEING_WRITTEN", "Bounds", "CleanReport", "Plan", "bound_at_exit", "bounds", "clean", "plan"]

log = logging.getLogger("modecfg.cache")

BEING_WRITTEN = 600.0  # seconds: an incomplete entry changed this recently is being written
UNKNOWN_USE = 3600.0  # seconds: where use cannot be asked, an entry used this recently is kept
EXIT_INTERVAL = 3600.0  # seconds between two bounds applied at exit, per cache
STAMP = OWN_FILES + "bounded"  # in the cache directory: when the last bound at exit ran
_SAY_AFTER = 2.0  # seconds of waiting for the lock before saying who holds it


class Bounds(Record):
    max_age: float | None  # seconds
    max_size: int | None  # bytes

    def __str__(self) -> str:
        age = "no age bound" if self.max_age is None else f"unused for over {human_duration(self.max_age)}"
        size = "no size bound" if self.max_size is None else f"over {human_size(self.max_size)} in all"
        return f"{age}; {size}"


def bounds(older_than: str | None = None, max_size: str | None = None) -> Bounds:
    """The bounds given (text, as the flags take it), or else the flags'; a FlagValueError
    names the flag a bad one stands for."""
    age_text = older_than if older_than is not None else config["cache.max_age"]
    size_text = max_size if max_size is not None else config["cache.max_size"]
    try:
        age = None if age_text is None else seconds(age_text)
    except ValueError as exc:
        raise FlagValueError(f"cache.max_age: {exc}", flag="cache.max_age", value=age_text) from None
    try:
        size = None if size_text is None else size_bytes(size_text)
    except ValueError as exc:
        raise FlagValueError(f"cache.max_size: {exc}", flag="cache.max_size", value=size_text) from None
    return Bounds(age, size)


class Plan(Record):
    remove: tuple[tuple[Entry, str], ...]  # (entry, why it goes)
    keep: tuple[tuple[Entry, str], ...]  # entries a bound chose that stay, and why

    @property
    def freed(self) -> int:
        return sum(entry.size for entry, _ in self.remove)


def _protected(entry: Entry, now: float, in_use: set[Path] | None) -> str:
    """Why ``entry`` must stay whatever the bounds say ('' when it may go)."""
    if not entry.complete and now - entry.changed < BEING_WRITTEN:
        return f"being written (changed {human_duration(now - entry.changed)} ago)"
    if entry.kind == "C":
        if in_use is None:
            if now - entry.last_used < UNKNOWN_USE:
                return "used in the last hour, and this system cannot tell which modules are loaded"
        elif any(p == root or root in p.parents for p in in_use for root in entry.paths):
            return "loaded by a running process"
    return ""


def plan(caches: Sequence[Cache], limits: Bounds, *, now: float, in_use: set[Path] | None) -> Plan:
    """What goes: entries unused for longer than ``max_age``; then, least recently used first,
    entries until the caches together are no larger than ``max_size``."""
    remove: list[tuple[Entry, str]] = []
    keep: list[tuple[Entry, str]] = []
    entries = sorted((e for c in caches for e in c.entries), key=lambda e: (e.last_used, e.name))
    total = sum(c.size for c in caches)
    for entry in entries:
        why = ""
        if limits.max_age is not None and now - entry.last_used > limits.max_age:
            why = f"unused for {human_duration(now - entry.last_used)}"
        elif limits.max_size is not None and total > limits.max_size:
            why = f"least recently used while the caches hold {human_size(total)}"
        if not why:
            continue
        reason = _protected(entry, now, in_use)
        if reason:
            keep.append((entry, reason))
            continue
        remove.append((entry, why))
        total -= entry.size
    return Plan(tuple(remove), tuple(keep))


class CleanReport(Record):
    caches: tuple[Cache, ...]  # as they were before
    plan: Plan
    removed: tuple[Entry, ...]
    failed: tuple[tuple[Entry, str], ...]  # could not be removed, and why
    dry_run: bool

    @property
    def freed(self) -> int:
        return sum(entry.size for entry in self.removed)


def _remove(entry: Entry) -> None:
    if entry.kind == "C":
        (directory,) = entry.paths
        # out of PyTensor's sight first (it never looks at a name that is not tmp...), then gone
        parked = directory.with_name(directory.name + ".modecfg-removing")
        os.rename(directory, parked)
        shutil.rmtree(parked)
    else:  # the index first: a reader then finds no entry rather than half of one
        for path in sorted(entry.paths, key=lambda p: not p.name.endswith(".nbi")):
            path.unlink(missing_ok=True)


def loaded(caches: Sequence[Cache]) -> set[Path] | None:
    """The files of the C caches that a process of this host has mapped (None: cannot say)."""
    from modecfg.cache.holders import mapped_under

    in_use: set[Path] | None = set()
    for cache in caches:
        if cache.kind == "C" and cache.exists:
            mapped = mapped_under(cache.path)
            in_use = None if mapped is None or in_use is None else in_use | mapped
    return in_use


def clean(
    caches: Sequence[Cache],
    limits: Bounds,
    *,
    dry_run: bool = False,
    wait: float | None = None,
    on_wait: Callable[[list[Holder]], None] | None = None,
    now: float | None = None,
) -> CleanReport:
    """Remove what :func:`plan` says, holding each C cache's compile lock (``wait`` seconds at
    most: ``compile.timeout`` unless given). A dry run takes no lock and removes nothing."""
    from modecfg.cache.holders import hold, release

    if wait is None:
        wait = float(config["compile.timeout"])
    locks = []
    try:
        if not dry_run:
            for cache in caches:
                if cache.lock is not None and cache.exists:
                    locks.append(hold(cache.lock, timeout=wait, say_after=_SAY_AFTER, on_wait=on_wait))
            # looked at again under the lock: what was written while we waited counts
            caches = [rescan(c) if c.exists else c for c in caches]
        chosen = plan(caches, limits, now=time.time() if now is None else now, in_use=loaded(caches))
        removed, failed = [], []
        if not dry_run:
            for entry, why in chosen.remove:
                try:
                    _remove(entry)
                except OSError as exc:
                    failed.append((entry, exc.strerror or str(exc)))
                else:
                    removed.append(entry)
                    log.info("removed %s %s (%s, %s)", entry.kind, entry.name, human_size(entry.size), why)
        return CleanReport(tuple(caches), chosen, tuple(removed), tuple(failed), dry_run)
    finally:
        for lock in locks:
            release(lock)


def prepare_exit(now: float | None = None) -> bool:
    """Whether a bound falls due at this process's exit (one is set, and some cache exists that
    was not bounded at an exit in the last :data:`EXIT_INTERVAL`), and if so, what
    :func:`bound_at_exit` runs imported now: at exit nothing may be imported. Asked at the
    process's first compile: a process whose caches were all bounded within the hour imports
    neither filelock (the lock, ~10 ms) nor pydantic (a size bound's units, ~60 ms), which plain
    PyTensor's compile does not; their bound is applied at the exit of a process that finds it due."""
    if config["cache.max_age"] is None and config["cache.max_size"] is None:
        return False
    if not any(_due(cache, time.time() if now is None else now) for cache in current_caches(scanned=False)):
        return False
    from modecfg._pytensor import caches  # noqa: F401 - entries.rescan imports it
    from modecfg.cache import holders  # noqa: F401 - clean takes the lock with it

    seconds("1d")  # the validators, made on first use
    if config["cache.max_size"] is not None:
        size_bytes("1MiB")
    return True


def _due(cache: Cache, now: float) -> bool:
    """The cache exists and no exit bounded it within :data:`EXIT_INTERVAL` of ``now``."""
    try:
        return now - (cache.path / STAMP).stat().st_mtime >= EXIT_INTERVAL
    except FileNotFoundError:
        return cache.exists
    except OSError:  # a cache this process may not look into: not its to trim
        return False


def bound_at_exit() -> None:
    """Apply the flags' bounds, at most once an hour per cache and only if its lock is free:
    registered with ``atexit`` at the process's first compile. Never raises (it runs at exit)."""
    try:
        limits = bounds()
        if limits == Bounds(None, None):
            return
        now = time.time()
        due = []
        for cache in current_caches(scanned=False):  # looked into only when due
            if not _due(cache, now):
                continue
            try:
                (cache.path / STAMP).touch()
            except OSError:  # a cache this process may not write: not its to trim
                continue
            due.append(rescan(cache))
        if due:
            report = clean(due, limits, wait=0.0)
            if report.removed:
                log.info("bounded the compile caches: %d entries removed, %s", len(report.removed),
                         human_size(report.freed))  # fmt: skip
    except CacheLockTimeout:
        log.debug("the compile lock was held at exit: the caches are bounded another time")
    except Exception:  # at exit, nothing may fail for this
        log.warning("could not bound the compile caches at exit", exc_info=True)
