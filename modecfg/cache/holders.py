"""Which processes hold a lock file, and which have a cached module loaded: asked of the kernel.

On Linux, ``/proc/locks`` lists every ``flock`` with the process that took it (and those
waiting for it), and ``/proc/PID/maps`` every file a process has mapped, a loaded ``.so``
among them. Elsewhere neither can be asked: the answers are ``None`` (unknown), and a
caller treats unknown as "maybe": a cache entry whose use cannot be ruled out is kept.
Only processes of this host are seen; a holder on another host of a shared filesystem is not.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = ["Holder", "lock_holders", "mapped_under"]

_PROC = Path("/proc")


class Holder(NamedTuple):
    """A process that holds (or waits for) a lock."""

    pid: int
    command: str  # its command line, as ps shows it ('' when it cannot be read)
    started: float | None  # when the process started (seconds since the epoch)
    host: str
    waiting: bool = False  # queued behind the holder, not holding

    def __str__(self) -> str:
        what = f"pid {self.pid}" + (f" ({self.command})" if self.command else "")
        return f"{what} on {self.host}" + (" (waiting)" if self.waiting else "")


def _command(pid: int) -> str:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    text = " ".join(raw.replace(b"\0", b" ").decode(errors="replace").split())  # one line, as ps shows it
    return text if len(text) <= 120 else text[:117] + "..."


def _started(pid: int) -> float | None:
    """The process's start, from its start tick (field 22 of /proc/PID/stat) and the boot time."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
        boot = next(
            float(line.split()[1])
            for line in (_PROC / "stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        ticks = int(
            stat.rsplit(")", 1)[1].split()[19]
        )  # fields after the command name, which may hold spaces
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def lock_holders(path: Path, *, locks: str | None = None) -> list[Holder] | None:
    """The processes of this host holding or waiting for an ``flock`` on ``path``: none when it is
    free; ``None`` when this system cannot say (no ``/proc/locks``) or ``path`` does not exist.
    ``locks`` stands for the text of ``/proc/locks`` (tests)."""
    try:
        st = path.stat()
        text = (_PROC / "locks").read_text() if locks is None else locks
    except OSError:
        return None
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    host = socket.gethostname()
    found = []
    for line in text.splitlines():
        words = line.split()
        waiting = len(words) > 1 and words[1] == "->"
        if waiting:
            del words[1]
        if len(words) < 6 or words[1] not in ("FLOCK", "POSIX", "OFDLCK"):
            continue
        try:
            major, minor, inode = words[5].split(":")
            where = (int(major, 16), int(minor, 16), int(inode))
            pid = int(words[4])
        except ValueError:
            continue
        if where == want and pid > 0:
            found.append(Holder(pid, _command(pid), _started(pid), host, waiting))
    return found


def _pids() -> Iterator[int]:
    for entry in os.scandir(_PROC):
        if entry.name.isdigit():
            yield int(entry.name)


def mapped_under(root: Path) -> set[Path] | None:
    """The files under ``root`` that some process of this host has mapped (a loaded module):
    ``None`` when this system cannot say. A process whose map cannot be read (it ended, or is
    another user's) is passed over; a cache is one user's, and so are the processes using it."""
    if not (_PROC / "self" / "maps").exists():
        return None
    prefix = str(root.resolve()) + os.sep
    found: set[Path] = set()
    for pid in _pids():
        try:
            with open(_PROC / str(pid) / "maps", encoding="utf-8", errors="replace") as maps:
                for line in maps:
                    start = line.find(prefix)
                    if start != -1:
                        found.add(Path(line[start:].rstrip("\n").removesuffix(" (deleted)")))
        except OSError:
            continue
    return found
