"""Who holds a compile lock and who has a cached module loaded; taking the lock, never blind.

On Linux, ``/proc/locks`` lists every ``flock`` with the process that took it (and those
waiting for it), and ``/proc/PID/maps`` every file a process has mapped, a loaded ``.so``
among them. Elsewhere neither can be asked: the answers are ``None`` (unknown), and a
caller treats unknown as "maybe": a cache entry whose use cannot be ruled out is kept.

The kernel sees only this host's processes. So a process that takes the lock through
:func:`hold` leaves a note beside it (``.lock.holder``, JSON: pid, host, since, command) and
removes it before letting go: a waiter on another host of a shared filesystem reads who holds
it there, and one on this host learns since when. A note whose writer does not hold the lock
is stale and ignored; one found when the lock is taken was left by a holder that died holding
it, and is said (its half-written module, if any, PyTensor sets aside as broken). The kernel
itself lets an ``flock`` go when its holder dies: no lock is ever taken over by force.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import filelock  # PyTensor's dependency, and its compile lock: this module is imported on demand

from modecfg._record import Record
from modecfg.errors import CacheLockTimeout
from modecfg.terminal import shown

__all__ = ["Holder", "LockTimeout", "hold", "holders", "lock_holders", "mapped_under", "note_path", "release"]


class LockTimeout(CacheLockTimeout, filelock.Timeout):
    """What :func:`hold` raises: a CacheLockTimeout that is also filelock's ``Timeout``, which
    PyTensor's own lock raised and callers (PyTensor's tests among them) catch."""

    def __init__(self, message: str, holders: Any = (), lock_file: str = "") -> None:
        filelock.Timeout.__init__(self, lock_file)  # (CacheLockTimeout's would reach it without the file)
        self.args = (message,)
        self.holders = tuple(holders)

    def __str__(self) -> str:
        return str(self.args[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.args[0]!r})"

    def __reduce__(self) -> Any:
        return type(self), (self.args[0], self.holders, self._lock_file)


_PROC = Path("/proc")


class Holder(Record):
    """A process that holds (or waits for) a lock."""

    pid: int
    command: str  # its command line, as ps shows it ('' when it cannot be read)
    started: float | None  # when the process started (seconds since the epoch)
    host: str
    waiting: bool = False  # queued behind the holder, not holding
    since: float | None = None  # when it took the lock (from its note), if known

    def __str__(self) -> str:  # command and host may come from a note anyone could write
        what = f"pid {self.pid}" + (f" ({shown(self.command)})" if self.command else "")
        return f"{what} on {shown(self.host)}" + (" (waiting)" if self.waiting else "")

    def describe(self, now: float) -> str:
        """``str(self)`` and for how long: holding the lock (known from its note) or running."""
        if self.since is not None:
            return f"{self}, holding it for {_span(now - self.since)}"
        if self.started is not None:
            return f"{self}, running for {_span(now - self.started)}"
        return str(self)


def _span(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


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


# -- the holder's note, and taking the lock ------------------------------------------------


def note_path(lock: Path) -> Path:
    return lock.with_name(lock.name + ".holder")


def _read_note(lock: Path) -> Holder | None:
    """The note beside ``lock``; None when there is none or it is not one (any file may be there)."""
    try:
        with open(note_path(lock), "rb") as f:
            raw = f.read(4097)
        data: Any = json.loads(raw) if len(raw) <= 4096 else None
        pid, host, since, command = data["pid"], data["host"], data["since"], data["command"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not (isinstance(pid, int) and isinstance(host, str) and isinstance(since, int | float)
            and isinstance(command, str)):  # fmt: skip
        return None
    return Holder(pid, command[:120], None, host[:255], False, float(since))


def holders(lock: Path, *, locks: str | None = None) -> list[Holder] | None:
    """Who holds (or waits for) ``lock``, as well as can be known: this host's kernel, enriched
    by the holder's note; a holder on another host by its note alone. Empty: free; None: this
    host cannot ask its kernel and there is no note."""
    local = lock_holders(lock, locks=locks)
    note = _read_note(lock)
    here = socket.gethostname()
    if local is None:
        return [note] if note is not None else None
    if note is None:
        return local
    if note.host == here:  # the kernel's holder, with since when (a note of a process not holding: stale)
        return [h._replace(since=note.since) if h.pid == note.pid and not h.waiting else h for h in local]
    if not any(not h.waiting for h in local):  # held on another host of a shared filesystem, or free
        return local if _free(lock) else [note, *local]  # a free lock's note is a dead holder's
    return local


def _free(lock: Path) -> bool:
    """Whether nobody holds ``lock`` now: a non-blocking flock of it succeeds (and is let go at
    once). Where it cannot be tried (no such file, not readable), it is not known to be free."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_note(lock: Path, on_stale: Callable[[Holder], None] | None) -> None:
    stale = _read_note(lock)
    here = socket.gethostname()
    if stale is not None and on_stale is not None and (stale.host != here or not _alive(stale.pid)):
        on_stale(stale)  # we hold the lock now: its writer let go without removing it, so it died holding it
    note = {"pid": os.getpid(), "host": here, "since": time.time(), "command": _command(os.getpid())}
    temporary = lock.with_name(f"{lock.name}.holder.{os.getpid()}")
    try:
        temporary.write_text(json.dumps(note), encoding="utf-8")
        os.replace(temporary, note_path(lock))
    except OSError:  # a read-only cache, a full disk: the note is a courtesy
        temporary.unlink(missing_ok=True)


def hold(
    lock: Path,
    *,
    timeout: float,
    say_after: float,
    on_wait: Callable[[list[Holder]], None] | None = None,
    on_stale: Callable[[Holder], None] | None = None,
) -> Any:
    """Take ``lock`` (a ``filelock.FileLock``, as PyTensor's compile lock is), waiting
    ``timeout`` seconds at most (0: one try); after ``say_after`` seconds of waiting, ``on_wait``
    is told once who holds it. A CacheLockTimeout names the holder and the fixes. Give it back
    with :func:`release`."""
    taken = filelock.FileLock(lock)
    start = time.monotonic()
    deadline = start + max(0.0, timeout)
    said = on_wait is None
    while True:
        now = time.monotonic()
        step = deadline - now if said else min(deadline - now, start + say_after - now)
        try:
            taken.acquire(timeout=max(0.0, step))
            break
        except filelock.Timeout:
            if time.monotonic() >= deadline:
                found = holders(lock) or []
                who = ", ".join(h.describe(time.time()) for h in found if not h.waiting)
                raise LockTimeout(
                    f"the compile lock {lock} stayed held for {timeout:g} s, by "
                    f"{who or 'a process this host cannot name'}; wait for it to finish, give this job "
                    "its own cache (base_compiledir=<a directory of its own>), or wait longer "
                    "(compile.timeout)",
                    found,
                    str(lock),
                ) from None
            if not said and time.monotonic() - start >= say_after:
                said = True
                assert on_wait is not None
                on_wait(holders(lock) or [])
    _write_note(lock, on_stale)
    return taken


def release(taken: Any) -> None:
    """Give back a lock :func:`hold` took (its note first, while it is still ours)."""
    try:
        note_path(Path(taken.lock_file)).unlink(missing_ok=True)
    except OSError:
        pass
    taken.release()
