"""The caches at a glance (`modecfg cache show`) and their cleaning (`modecfg cache clean`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from modecfg._record import Record

if TYPE_CHECKING:
    from modecfg.cache.entries import Cache
    from modecfg.cache.holders import Holder
    from modecfg.cache.trim import Bounds, CleanReport, Plan

__all__ = ["Status", "clean", "show"]


class Status(Record):
    """What ``modecfg cache show`` says: the caches, their lock's holders, what the bounds take."""

    caches: tuple[Cache, ...]
    holders: tuple[list[Holder] | None, ...]  # per cache: None when it has no lock or this host cannot tell
    limits: Bounds
    due: Plan  # what a clean with the flags' bounds would remove now
    now: float

    def __str__(self) -> str:
        from modecfg.configuration.units import human_duration, human_size

        lines = []
        for cache, who in zip(self.caches, self.holders, strict=True):
            name = "C modules" if cache.kind == "C" else "numba"
            if not cache.exists:
                lines.append(f"{name:<10} {cache.path}: not created yet")
                continue
            ages = ""
            if cache.entries:
                oldest = self.now - cache.entries[0].last_used
                newest = self.now - cache.entries[-1].last_used
                ages = f"; last used {human_duration(newest)} to {human_duration(oldest)} ago"
            lines.append(
                f"{name:<10} {cache.path}\n"
                f"{'':<10} {human_size(cache.size)}, {len(cache.entries)} entries{ages}"
            )
            if cache.lock is not None:
                if who is None:
                    lock = "this system cannot say who holds it"
                elif not who:
                    lock = "free"
                else:
                    lock = "; ".join(_holder_text(h, self.now) for h in who)
                lines.append(f"{'':<10} lock {cache.lock.name}: {lock}")
        due = self.due
        lines.append(f"bounds     {self.limits} (cache.max_age, cache.max_size)")
        if due.remove:
            lines.append(f"{'':<10} {len(due.remove)} entries ({human_size(due.freed)}) beyond them: "
                         "`modecfg cache clean` removes them")  # fmt: skip
        else:
            lines.append(f"{'':<10} nothing beyond them")
        if due.keep:
            lines.append(f"{'':<10} {len(due.keep)} beyond them kept: {due.keep[0][1]}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "caches": [
                {
                    "kind": cache.kind,
                    "path": str(cache.path),
                    "exists": cache.exists,
                    "size": cache.size,
                    "entries": len(cache.entries),
                    "oldest_use": cache.entries[0].last_used if cache.entries else None,
                    "newest_use": cache.entries[-1].last_used if cache.entries else None,
                    "lock": None if cache.lock is None else str(cache.lock),
                    "holders": None if who is None else [h._asdict() for h in who],
                }
                for cache, who in zip(self.caches, self.holders, strict=True)
            ],
            "max_age": self.limits.max_age,
            "max_size": self.limits.max_size,
            "beyond_bounds": [
                {"kind": e.kind, "name": e.name, "size": e.size, "why": w} for e, w in self.due.remove
            ],
        }


def _holder_text(holder: Holder, now: float) -> str:
    return f"{'waiting' if holder.waiting else 'held'} by {holder.describe(now)}"


def show(*, now: float | None = None) -> Status:
    """The caches of this process's configuration, their lock's holders, what the bounds take."""
    import time

    from modecfg.cache.entries import caches
    from modecfg.cache.holders import holders
    from modecfg.cache.trim import bounds, loaded, plan

    found = caches()
    now = time.time() if now is None else now
    # a lock file not made yet is held by nobody (never "this system cannot say")
    who = tuple(
        (holders(c.lock) if c.lock.exists() else []) if c.lock is not None and c.exists else None
        for c in found
    )
    limits = bounds()
    return Status(found, who, limits, plan(found, limits, now=now, in_use=loaded(found)), now)


def clean(
    older_than: str | None = None,
    max_size: str | None = None,
    *,
    dry_run: bool = False,
    wait: float | None = None,
    on_wait: Callable[[list[Holder]], None] | None = None,
) -> CleanReport:
    """Remove the entries beyond the bounds (text as the flags take it: ``"7d"``, ``"1GiB"``;
    each left out means its flag, ``cache.max_age`` / ``cache.max_size``), safe while other
    processes compile: see :mod:`modecfg.cache.trim`."""
    from modecfg.cache.entries import caches
    from modecfg.cache.trim import bounds
    from modecfg.cache.trim import clean as _clean

    return _clean(caches(), bounds(older_than, max_size), dry_run=dry_run, wait=wait, on_wait=on_wait)
