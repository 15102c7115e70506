"""The command on the compile caches: show, export, import, clean."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["cmd_cache"]


def cmd_cache(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg import cache
    from modecfg.configuration.units import human_size

    if args.action == "export":
        done = cache.export_cache(args.file)
        unsigned = ", unsigned (no key of yours: importing it will need --trust)"
        out.write(f"exported {done.entries} entries ({human_size(done.size)}) to {done.path}"
                  f"{'' if done.signed else unsigned}\n")  # fmt: skip
        return 0
    if args.action == "import":
        got = cache.import_cache(args.file, trust=args.trust)
        out.write(
            f"imported {len(got.added)} entries from {args.file}; {len(got.present)} were here already\n"
        )
        return 0
    if args.action == "show":
        status = cache.show()
        out.write(json.dumps(status.to_json(), indent=2) + "\n" if args.json else f"{status}\n")
        return 0

    def waiting(holders: list[cache.Holder]) -> None:
        who = ", ".join(str(h) for h in holders if not h.waiting) or "a process this host cannot name"
        err.write(f"waiting for the compile lock, held by {who}\n")

    report = cache.clean(args.older_than, args.max_size, dry_run=args.dry_run, on_wait=waiting)
    verb = "would remove" if report.dry_run else "removed"
    chosen = (
        report.plan.remove
        if report.dry_run
        else [(e, w) for e, w in report.plan.remove if e in report.removed]
    )
    if args.verbose:
        for entry, why in chosen:
            out.write(f"{verb} {entry.kind} {entry.name} ({human_size(entry.size)}): {why}\n")
        for entry, why in report.plan.keep:
            out.write(f"kept {entry.kind} {entry.name} ({human_size(entry.size)}): {why}\n")
    else:
        out.writelines(_entries_in_short(verb, chosen))
        out.writelines(_entries_in_short("kept", report.plan.keep))
    for entry, why in report.failed:
        err.write(f"error: could not remove {entry.kind} {entry.name}: {why}\n")
    freed = report.plan.freed if report.dry_run else report.freed
    before = sum(c.size for c in report.caches)
    out.write(f"{verb} {len(chosen)} entries, {human_size(freed)} of {human_size(before)}\n")
    return 1 if report.failed else 0


def _entries_in_short(verb: str, rows: Sequence[tuple[Any, str]]) -> list[str]:
    """Cache entries in short: a line per cache and reason, with the count, the size and the
    range the reason spans ("unused for 39 min to 6.1 h")."""
    import re

    from modecfg.configuration.units import human_size

    groups: dict[tuple[str, str], list[tuple[Any, str]]] = {}
    for entry, why in rows:
        reason = re.split(r" \d", why, maxsplit=1)[0]  # "unused for 6.1 h": "unused for"
        groups.setdefault((entry.kind, reason), []).append((entry, why))
    lines = []
    for (kind, reason), found in groups.items():
        whys = [why for _, why in sorted(found, key=lambda row: row[0].last_used)]  # the oldest first
        said = whys[0] if whys[0] == whys[-1] else f"{whys[-1]} to {whys[0][len(reason) :].strip()}"
        size = human_size(sum(entry.size for entry, _ in found))
        lines.append(f"{verb} {len(found)} {kind} entr{'y' if len(found) == 1 else 'ies'} ({size}): {said}\n")
    return lines
