"""modecfg.cache.holders: who holds a lock file and who has a module loaded, asked of the kernel."""

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

from modecfg.cache.holders import Holder, holders, lock_holders, mapped_under, note_path

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
    import modecfg.cache.holders as module

    monkeypatch.setattr(module, "_PROC", tmp_path / "no-proc")
    lock = tmp_path / ".lock"
    lock.touch()
    assert holders(lock) is None and mapped_under(tmp_path) is None
    _note(lock)
    assert [h.host for h in holders(lock) or []] == ["elsewhere"]


def test_the_timeout_is_filelocks_too_and_pickles(tmp_path: Path) -> None:
    import pickle

    import filelock

    from modecfg.cache.holders import LockTimeout
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
    from modecfg.cache import holders as _holders

    def refused(pid: int, signal: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    def gone(pid: int, signal: int) -> None:
        raise ProcessLookupError(3, "No such process")

    monkeypatch.setattr(os, "kill", refused)
    assert _holders._alive(4242) is True
    monkeypatch.setattr(os, "kill", gone)
    assert _holders._alive(4242) is False


# -- the pieces, one by one (what `make mutate MODULE=holders` found untested) ---------------


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(-5.0, "0 s"), (0.0, "0 s"), (89.4, "89 s"), (90.0, "2 min"), (5399.0, "90 min"), (5400.0, "1.5 h")],
)
def test_a_span_is_said_in_seconds_minutes_or_hours(seconds: float, said: str) -> None:
    from modecfg.cache.holders import _span

    assert _span(seconds) == said


def test_a_holder_says_how_long_it_holds_or_runs_or_neither() -> None:
    both = Holder(7, "", 100.0, "h", since=400.0)
    assert both.describe(460.0) == "pid 7 on h, holding it for 60 s"  # its note wins over its start
    assert both._replace(since=None).describe(460.0) == "pid 7 on h, running for 6 min"
    assert both._replace(since=None, started=None).describe(460.0) == "pid 7 on h"


@pytest.fixture
def proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A /proc of our own making: what the functions read, and nothing else."""
    import modecfg.cache.holders as module

    fake = tmp_path / "proc"
    fake.mkdir()
    monkeypatch.setattr(module, "_PROC", fake)
    return fake


def test_a_command_line_is_one_line_of_at_most_120_characters(proc: Path) -> None:
    from modecfg.cache.holders import _command

    (proc / "5").mkdir()
    (proc / "5" / "cmdline").write_bytes(b"python\0-c\0print(1)\0")
    assert _command(5) == "python -c print(1)"
    (proc / "5" / "cmdline").write_bytes(b"x" * 120)
    assert _command(5) == "x" * 120
    (proc / "5" / "cmdline").write_bytes(b"y" * 121)
    assert _command(5) == "y" * 117 + "..."
    assert _command(6) == ""  # no such process


def test_a_start_is_the_boot_time_plus_the_start_tick(proc: Path) -> None:
    from modecfg.cache.holders import _started

    tick = os.sysconf("SC_CLK_TCK")
    (proc / "5").mkdir()
    fields = ["S", *(["0"] * 18), str(250 * tick), "0"]  # field 22 is the start tick
    (proc / "5" / "stat").write_text("5 (a (strange) name) " + " ".join(fields))
    (proc / "stat").write_text("cpu  1 2 3\nbtime 1000\nprocesses 9\n")
    assert _started(5) == 1250.0
    (proc / "stat").write_text("cpu 1 2 3\n")  # no boot time
    assert _started(5) is None
    (proc / "stat").write_text("btime 1000\n")
    (proc / "5" / "stat").write_text("5 (short) S 1 2")
    assert _started(5) is None
    assert _started(6) is None


def test_only_a_process_with_a_pid_holds_and_every_kind_of_lock_counts(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.touch()
    text = "\n".join([
        f"1: POSIX  ADVISORY  WRITE 11 {_where(lock)} 0 EOF",
        f"2: OFDLCK ADVISORY  READ  12 {_where(lock)} 0 EOF",
        f"3: LEASE  ACTIVE    READ  13 {_where(lock)} 0 EOF",  # not a lock on the file's bytes
        f"4: FLOCK  ADVISORY  WRITE 0 {_where(lock)} 0 EOF",
        "5: FLOCK  ADVISORY  WRITE 14",  # cut short
        f"6: FLOCK  ADVISORY  WRITE 15 zz:00:{lock.stat().st_ino} 0 EOF",
    ])  # fmt: skip
    found = lock_holders(lock, locks=text)
    assert [(h.pid, h.waiting, h.host) for h in found or []] == [
        (11, False, socket.gethostname()), (12, False, socket.gethostname())
    ]  # fmt: skip


def _cache_and_maps(proc: Path, tmp_path: Path, pid: int) -> tuple[Path, Path]:
    """A cache directory, and where process ``pid``'s map of the fake /proc goes."""
    root = tmp_path / "cache"
    root.mkdir()
    (proc / "self").mkdir()
    (proc / "self" / "maps").write_text("")
    (proc / str(pid)).mkdir()
    return root, proc / str(pid) / "maps"


def test_a_loaded_module_is_found_under_its_root_also_when_deleted(proc: Path, tmp_path: Path) -> None:
    root, maps = _cache_and_maps(proc, tmp_path, 7)
    maps.write_text(
        f"7f00-7f01 r-xp 0 08:01 12 {root}/a/m.so\n"
        f"7f01-7f02 r--p 0 08:01 13 {root}/b/n.so (deleted)\n"
        f"7f02-7f03 r--p 0 08:01 14 {tmp_path}/elsewhere.so\n"
        f"7f03-7f04 r--p 0 08:01 15 {root}x/sibling.so\n"
    )
    (proc / "8").mkdir()
    (proc / "8" / "maps").mkdir()  # unreadable as a file: passed over
    (proc / "net").mkdir()  # not a process
    (proc / "net" / "maps").write_text(f"0-1 r 0 0 0 {root}/c/o.so\n")
    assert mapped_under(root) == {root / "a" / "m.so", root / "b" / "n.so"}


def test_a_note_is_cut_to_size_and_read_up_to_4096_bytes(tmp_path: Path) -> None:
    from modecfg.cache.holders import _read_note

    lock = tmp_path / ".lock"
    _note(lock, command="c" * 300, host="h" * 300, since=5)
    note = _read_note(lock)
    assert note is not None and (len(note.command), len(note.host), note.since) == (120, 255, 5.0)
    assert isinstance(note.since, float) and note.started is None and not note.waiting
    base = json.dumps({"pid": 1, "host": "h", "since": 1, "command": ""})
    note_path(lock).write_text(base[:-1] + " " * (4096 - len(base)) + "}")
    assert len(note_path(lock).read_bytes()) == 4096 and _read_note(lock) is not None
    note_path(lock).write_text(base[:-1] + " " * (4097 - len(base)) + "}")
    assert _read_note(lock) is None
    for bad in ({"host": 1}, {"since": "1"}, {"command": None}):
        _note(lock, **bad)
        assert _read_note(lock) is None, bad


def test_a_waiter_of_this_host_never_takes_the_notes_since(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.touch()
    _note(lock, pid=4242, host=socket.gethostname())
    text = "\n".join([
        f"1: FLOCK  ADVISORY  WRITE 11 {_where(lock)} 0 EOF",
        f"1: -> FLOCK  ADVISORY  WRITE 4242 {_where(lock)} 0 EOF",
    ])  # fmt: skip
    assert [(h.pid, h.since) for h in holders(lock, locks=text) or []] == [(11, None), (4242, None)]


def test_a_note_of_another_host_beside_a_lock_held_here_is_not_listed(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.touch()
    _note(lock)
    waiting = f"1: -> FLOCK  ADVISORY  WRITE 11 {_where(lock)} 0 EOF"
    import fcntl

    taken = os.open(lock, os.O_RDONLY)
    fcntl.flock(taken, fcntl.LOCK_EX)
    try:  # only a waiter here: the holder is the note's, on the other host
        assert [(h.pid, h.host) for h in holders(lock, locks=waiting) or []] == [
            (4242, "elsewhere"), (11, socket.gethostname())
        ]  # fmt: skip
    finally:
        os.close(taken)
    assert [h.pid for h in holders(lock, locks=waiting) or []] == [11]  # free now: the note is a dead one's


def test_a_lock_that_cannot_be_opened_is_not_known_to_be_free(tmp_path: Path) -> None:
    from modecfg.cache.holders import _free

    assert _free(tmp_path / "missing") is False
    lock = tmp_path / ".lock"
    lock.touch()
    assert _free(lock) is True
    assert _free(lock) is True  # it was let go after the try


@linux
def test_hold_takes_a_free_lock_notes_itself_and_release_removes_the_note(tmp_path: Path) -> None:
    from modecfg.cache.holders import hold, release

    lock = tmp_path / ".lock"
    before = time.time()
    taken = hold(lock, timeout=0, say_after=0)
    try:
        note = json.loads(note_path(lock).read_text())
        assert (note["pid"], note["host"]) == (os.getpid(), socket.gethostname())
        from modecfg.cache.holders import _command

        assert before <= note["since"] <= time.time() and note["command"] == _command(os.getpid()) != ""
        assert not list(tmp_path.glob(".lock.holder.*"))  # the temporary is gone
        (me,) = holders(lock) or []
        assert me.pid == os.getpid() and me.since == note["since"]
    finally:
        release(taken)
    assert not note_path(lock).exists() and not taken.is_locked
    assert holders(lock) == []


@linux
def test_hold_says_who_holds_it_once_then_names_them_when_it_gives_up(
    holder: tuple[subprocess.Popen[str], Path],
) -> None:
    from modecfg.cache.holders import LockTimeout, hold

    proc, root = holder
    told: list[list[Holder]] = []
    start = time.monotonic()
    with pytest.raises(LockTimeout) as caught:
        hold(root / ".lock", timeout=0.6, say_after=0.2, on_wait=told.append)
    assert time.monotonic() - start >= 0.6
    assert [[h.pid for h in found] for found in told] == [[proc.pid]]
    message = str(caught.value)
    assert message.startswith(f"the compile lock {root / '.lock'} stayed held for 0.6 s, by pid {proc.pid} (")
    assert "running for" in message and "compile.timeout" in message and "base_compiledir" in message
    assert [h.pid for h in caught.value.holders] == [proc.pid]
    assert caught.value.lock_file == str(root / ".lock")
    with pytest.raises(LockTimeout):
        hold(root / ".lock", timeout=0, say_after=0, on_wait=told.append)  # one try, nothing said
    assert len(told) == 1


@linux
def test_a_note_left_by_a_dead_holder_is_said_when_the_lock_is_taken(tmp_path: Path) -> None:
    from modecfg.cache.holders import hold, release

    lock = tmp_path / ".lock"
    stale: list[Holder] = []
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    cases = [
        ({"pid": int(dead.stdout), "host": socket.gethostname()}, True),  # died holding it
        ({"pid": os.getppid(), "host": socket.gethostname()}, False),  # alive: its note, not ours to say
        ({}, True),  # another host's: it let go without removing its note
    ]
    for fields, said in cases:
        _note(lock, **fields)
        release(hold(lock, timeout=0, say_after=0, on_stale=stale.append))
        assert bool(stale) is said, fields
        if said:
            assert stale.pop().pid == fields.get("pid", 4242)
    _note(lock)
    release(hold(lock, timeout=0, say_after=0))  # nobody to tell: no error


@linux
def test_a_note_that_cannot_be_written_is_left_out(tmp_path: Path) -> None:
    from modecfg.cache.holders import hold, release

    lock = tmp_path / ".lock"
    lock.touch()
    os.mkdir(note_path(lock))  # os.replace cannot put a file there
    taken = hold(lock, timeout=0, say_after=0)
    try:
        assert taken.is_locked and not list(tmp_path.glob(".lock.holder.*"))
    finally:
        release(taken)  # and the note's removal fails quietly
    assert not taken.is_locked


def test_the_timeouts_defaults_and_repr() -> None:
    from modecfg.cache.holders import LockTimeout

    bare = LockTimeout("held")
    assert (bare.lock_file, bare.holders) == ("", ())
    assert repr(bare) == "LockTimeout('held')"


def test_alive_asks_with_signal_zero_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """kill(pid, 0) asks whether the process exists; any other signal would be sent to it."""
    from modecfg.cache import holders as _holders

    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, signal: sent.append((pid, signal)))
    assert _holders._alive(4242) is True and sent == [(4242, 0)]


def test_hours_are_said_to_a_tenth() -> None:
    from modecfg.cache.holders import _span

    assert _span(8460.0) == "2.4 h"  # 2.35 h: a divisor off by one second says 2.3


def test_maps_that_are_not_utf8_and_paths_of_every_shape_are_read(proc: Path, tmp_path: Path) -> None:
    root, maps = _cache_and_maps(proc, tmp_path, 9)
    maps.write_bytes(
        b"7f00-7f01 r--p 0 08:01 11 /opt/caf\xe9/lib.so\n"  # another program's path, not UTF-8
        + f"7f01-7f02 r--p 0 08:01 12 {root}/a{root}/m.so\n".encode()  # the root's text twice in one path
        + f"7f02-7f03 r--p 0 08:01 13 {root}/trailing.so \n".encode()  # a name ending in a blank
        + f"7f03-7f04 r--p 0 08:01 14 {root}/MAX\n".encode()
    )
    assert mapped_under(root) == {
        Path(f"{root}/a{root}/m.so"), Path(f"{root}/trailing.so "), Path(f"{root}/MAX"),
    }  # fmt: skip


@linux
def test_a_note_whose_temporary_cannot_be_made_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk or a read-only cache: the temporary is never made, and the lock is still taken."""
    from modecfg.cache.holders import hold, release

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", refuse)
    taken = hold(tmp_path / ".lock", timeout=0, say_after=0)
    try:
        assert taken.is_locked and not note_path(tmp_path / ".lock").exists()
    finally:
        release(taken)


@linux
def test_hold_gives_up_at_its_timeout_whether_or_not_it_has_someone_to_tell(
    holder: tuple[subprocess.Popen[str], Path],
) -> None:
    """No one to tell (on_wait None): it waits, silent, and gives up at the timeout; a say_after
    longer than the timeout never makes it wait past the timeout."""
    from modecfg.cache.holders import LockTimeout, hold

    _, root = holder
    start = time.monotonic()
    with pytest.raises(LockTimeout):
        hold(root / ".lock", timeout=0.5, say_after=0.1)
    assert 0.5 <= time.monotonic() - start < 3.0
    told: list[object] = []
    start = time.monotonic()
    with pytest.raises(LockTimeout):
        hold(root / ".lock", timeout=0.3, say_after=30.0, on_wait=told.append)
    assert time.monotonic() - start < 3.0 and told == []
