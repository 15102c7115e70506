"""modecfg.cache.holders: who holds a lock file and who has a module loaded, asked of the kernel."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from modecfg.cache.holders import Holder, lock_holders, mapped_under

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
