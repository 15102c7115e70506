"""modecfg._holders: who holds a lock file and who has a module loaded, asked of the kernel."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from modecfg._holders import Holder, holders, lock_holders, mapped_under, note_path

linux = pytest.mark.skipif(not Path("/proc/locks").exists(), reason="asks Linux's /proc")


def _where(path: Path) -> str:
    st = path.stat()
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"


def test_the_lines_of_proc_locks_that_name_the_file_are_its_holders_and_waiters(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.touch()
    other = tmp_path / "other"
    other.touch()
    text = "\n".join([
        f"1: FLOCK  ADVISORY  WRITE {os.getpid()} {_where(lock)} 0 EOF",
        f"1: -> FLOCK  ADVISORY  WRITE 999999 {_where(lock)} 0 EOF",
        f"2: POSIX  ADVISORY  WRITE 12 {_where(other)} 0 EOF",
        f"3: OFDLCK ADVISORY  READ  -1 {_where(lock)} 0 EOF",  # no process to name
        "4: garbage",
        f"5: FLOCK  ADVISORY  WRITE notapid {_where(lock)} 0 EOF",
    ])  # fmt: skip
    found = lock_holders(lock, locks=text)
    assert found is not None
    assert [(h.pid, h.waiting) for h in found] == [(os.getpid(), False), (999999, True)]
    me = found[0]
    assert "pytest" in me.command or "python" in me.command
    assert me.started is not None and me.started <= time.time()
    assert found[1].command == "" and found[1].started is None  # gone: nothing to read
    assert str(found[1]) == f"pid 999999 on {found[1].host} (waiting)"
    assert lock_holders(tmp_path / "missing", locks=text) is None
    assert lock_holders(lock, locks="") == []


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """Another process holding a FileLock on tmp_path/.lock (as PyTensor's compile does) and
    mapping tmp_path/tmpmod/m.so (as a loaded module is)."""
    lock = tmp_path / ".lock"
    module = tmp_path / "tmpmod" / "m.so"
    module.parent.mkdir()
    module.write_bytes(b"\0" * 4096)
    code = textwrap.dedent(
        f"""
        import mmap, sys, filelock
        lock = filelock.FileLock({str(lock)!r}); lock.acquire()
        f = open({str(module)!r}, "rb"); m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        print("ready", flush=True)
        sys.stdin.read()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    try:
        yield proc, tmp_path
    finally:
        proc.kill()
        proc.wait(timeout=30)


@linux
def test_a_real_holder_and_its_loaded_module_are_found(holder: tuple[subprocess.Popen[str], Path]) -> None:
    proc, root = holder
    found = lock_holders(root / ".lock")
    assert found == [Holder(proc.pid, found[0].command, found[0].started, found[0].host)] if found else False
    assert "filelock.FileLock" in found[0].command and not found[0].waiting
    assert mapped_under(root) == {root.resolve() / "tmpmod" / "m.so"}
    proc.kill()
    proc.wait(timeout=30)
    assert lock_holders(root / ".lock") == []  # the kernel let the lock go with its holder
    assert mapped_under(root) == set()


def _note(lock: Path, **fields: object) -> None:
    note = {"pid": 4242, "host": "elsewhere", "since": 1000.0, "command": "python train.py"} | fields
    note_path(lock).write_text(json.dumps(note))


def test_a_holder_on_another_host_is_known_by_its_note_alone(tmp_path: Path) -> None:
    import fcntl

    lock = tmp_path / ".lock"
    lock.touch()
    _note(lock)
    taken = os.open(lock, os.O_RDONLY)  # the other host's flock, as a shared filesystem shows it here
    fcntl.flock(taken, fcntl.LOCK_EX)
    try:
        (remote,) = holders(lock, locks="") or []
    finally:
        os.close(taken)
    assert (remote.pid, remote.host, remote.since, remote.command) == (
        4242,
        "elsewhere",
        1000.0,
        "python train.py",
    )
    assert remote.describe(1000.0 + 600) == "pid 4242 (python train.py) on elsewhere, holding it for 10 min"
    here = f"1: FLOCK  ADVISORY  WRITE {os.getpid()} {_where(lock)} 0 EOF"
    assert [h.pid for h in holders(lock, locks=here) or []] == [os.getpid()]  # held here: the note is stale


def test_a_note_left_by_a_dead_holder_of_another_host_is_no_holder_and_shows_no_escapes(
    tmp_path: Path,
) -> None:
    """Round five: a note of a process of another host that died, its command holding escapes;
    the lock is free (a non-blocking flock succeeds): nobody holds it."""
    lock = tmp_path / ".lock"
    lock.touch()
    note = {"pid": 4242, "host": "gpu07\x1b]8;;http://x\x07", "since": 1000.0,
            "command": "python train.py\r\x1b[2Kall clear"}  # fmt: skip
    note_path(lock).write_text(json.dumps(note))
    assert holders(lock, locks="") == []
    shown = str(Holder(4242, note["command"], None, note["host"]))
    assert "\x1b" not in shown and "\r" not in shown and "\x07" not in shown
    assert shown == "pid 4242 (python train.py\\x0d\\x1b[2Kall clear) on gpu07\\x1b]8;;http://x\\x07"


def test_this_hosts_note_says_since_when_its_writer_holds_it(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.touch()
    here = f"1: FLOCK  ADVISORY  WRITE {os.getpid()} {_where(lock)} 0 EOF"
    _note(lock, pid=os.getpid(), host=socket.gethostname())
    (me,) = holders(lock, locks=here) or []
    assert me.since == 1000.0 and ", holding it for " in me.describe(2000.0)
    _note(lock, pid=os.getpid() + 1, host=socket.gethostname())  # another process's note: stale
    (me,) = holders(lock, locks=here) or []
    assert me.since is None


@pytest.mark.parametrize(
    "text",
    ["not json", "[1, 2]", '{"pid": "1", "host": "h", "since": 1, "command": ""}', '{"pid": 1}', "x" * 5000],
)
def test_a_note_that_is_not_one_is_no_holder(tmp_path: Path, text: str) -> None:
    lock = tmp_path / ".lock"
    lock.touch()
    note_path(lock).write_text(text)
    assert holders(lock, locks="") == []


def test_where_the_kernel_cannot_be_asked_the_note_is_all_there_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modecfg._holders as module

    monkeypatch.setattr(module, "_PROC", tmp_path / "no-proc")
    lock = tmp_path / ".lock"
    lock.touch()
    assert holders(lock) is None and mapped_under(tmp_path) is None
    _note(lock)
    assert [h.host for h in holders(lock) or []] == ["elsewhere"]


def test_the_timeout_is_filelocks_too_and_pickles(tmp_path: Path) -> None:
    import pickle

    import filelock

    from modecfg._holders import LockTimeout
    from modecfg.errors import CacheLockTimeout

    error = LockTimeout(
        "the compile lock x stayed held", [Holder(1, "c", None, "h")], str(tmp_path / ".lock")
    )
    assert isinstance(error, CacheLockTimeout) and isinstance(error, filelock.Timeout)
    assert isinstance(error, TimeoutError) and str(error) == "the compile lock x stayed held"
    assert error.lock_file == str(tmp_path / ".lock")
    back = pickle.loads(pickle.dumps(error))  # multiprocessing sends it to the parent
    assert (type(back), str(back), back.holders, back.lock_file) == (
        LockTimeout, str(error), error.holders, error.lock_file
    )  # fmt: skip


def test_a_process_of_another_user_is_alive_not_dead(monkeypatch: pytest.MonkeyPatch) -> None:
    """kill(pid, 0) on another user's process is refused (EPERM): it exists, so a lock note it
    left is a live holder's, never taken for stale."""
    from modecfg import _holders

    def refused(pid: int, signal: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    def gone(pid: int, signal: int) -> None:
        raise ProcessLookupError(3, "No such process")

    monkeypatch.setattr(os, "kill", refused)
    assert _holders._alive(4242) is True
    monkeypatch.setattr(os, "kill", gone)
    assert _holders._alive(4242) is False
