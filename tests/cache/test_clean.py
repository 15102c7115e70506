"""modecfg.cache.trim: what goes by age and size, what stays (loaded, being written), the lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from modecfg.cache import trim as cleaning
from modecfg.cache.entries import Cache, Entry, scan
from modecfg.cache.trim import BEING_WRITTEN, Bounds, bounds, clean, plan
from modecfg.errors import CacheLockTimeout, FlagValueError

from .test_entries import SUPPORT, _file

NOW = 10_000_000.0
DAY = 86400.0


def entry(name: str, size: int, used: float, *, kind: str = "C", complete: bool = True) -> Entry:
    return Entry(kind, name, (Path("/c") / name,), size, used, used, complete)  # type: ignore[arg-type]


def caches(*entries: Entry, other: int = 0) -> list[Cache]:
    return [Cache("C", Path("/c"), tuple(entries), other, Path("/c/.lock"))]


def names(chosen: tuple[tuple[Entry, str], ...]) -> list[str]:
    return [e.name for e, _ in chosen]


def test_entries_unused_for_longer_than_the_age_go_with_the_reason() -> None:
    found = caches(entry("old", 10, NOW - 40 * DAY), entry("new", 10, NOW - DAY))
    chosen = plan(found, Bounds(31 * DAY, None), now=NOW, in_use=set())
    assert [(e.name, why) for e, why in chosen.remove] == [("old", "unused for 40.0 days")]
    assert chosen.keep == () and chosen.freed == 10


def test_the_least_recently_used_go_until_the_caches_fit() -> None:
    found = caches(
        entry("a", 400, NOW - 3 * DAY), entry("b", 300, NOW - 2 * DAY), entry("c", 200, NOW), other=50
    )
    assert names(plan(found, Bounds(None, 600), now=NOW, in_use=set()).remove) == ["a"]  # 950 -> 550
    assert names(plan(found, Bounds(None, 200), now=NOW, in_use=set()).remove) == ["a", "b", "c"]
    assert names(plan(found, Bounds(None, 950), now=NOW, in_use=set()).remove) == []
    why = plan(found, Bounds(None, 600), now=NOW, in_use=set()).remove[0][1]
    assert why == "least recently used while the caches hold 950 B"


def test_no_bound_removes_nothing() -> None:
    found = caches(entry("a", 10**9, 0.0))
    assert plan(found, Bounds(None, None), now=NOW, in_use=set()) == ((), ())


def test_a_loaded_module_stays_and_the_next_one_goes_in_its_place() -> None:
    found = caches(entry("loaded", 400, NOW - 3 * DAY), entry("b", 300, NOW - 2 * DAY), entry("c", 200, NOW))
    chosen = plan(found, Bounds(None, 600), now=NOW, in_use={Path("/c/loaded/m.so")})
    assert names(chosen.remove) == ["b"]  # 900 -> 600: it fits
    assert chosen.keep == ((found[0].entries[0], "loaded by a running process"),)


def test_an_entry_being_written_stays_and_an_old_broken_one_goes() -> None:
    writing = entry("writing", 10, NOW - 60, complete=False)
    broken = entry("broken", 10, NOW - BEING_WRITTEN - 1, complete=False)
    chosen = plan(caches(writing, broken), Bounds(30.0, None), now=NOW, in_use=set())
    assert names(chosen.remove) == ["broken"]
    assert chosen.keep == ((writing, "being written (changed 60 s ago)"),)


def test_where_loaded_modules_cannot_be_asked_a_module_used_this_hour_stays() -> None:
    recent, old = entry("recent", 10, NOW - 600), entry("old", 10, NOW - 2 * DAY)
    numba = entry("f", 10, NOW - 600, kind="numba")
    chosen = plan(caches(recent, old, numba), Bounds(60.0, None), now=NOW, in_use=None)
    assert names(chosen.remove) == ["old", "f"]  # numba's files are read, not mapped: they may go
    assert names(chosen.keep) == ["recent"] and "cannot tell which modules are loaded" in chosen.keep[0][1]


def test_the_bounds_are_the_flags_unless_given() -> None:
    from modecfg import config

    assert bounds() == Bounds(31 * DAY, None)  # the defaults
    with config.override({"cache.max_age": "None", "cache.max_size": "2GiB"}):
        assert bounds() == Bounds(None, 2 * 1024**3)
        assert bounds("12h", "500MB") == Bounds(12 * 3600, 500 * 10**6)
    with pytest.raises(FlagValueError, match=r"^cache.max_age: '5x' is not a duration") as caught:
        bounds("5x")
    assert caught.value.flag == "cache.max_age"
    with pytest.raises(FlagValueError, match=r"^cache.max_size: 'big' is not a size"):
        bounds(None, "big")


def real_cache(root: Path) -> Cache:
    now = time.time()
    _file(root / "tmpold" / "mold.so", 1000, now - 40 * DAY)
    _file(root / "tmpmid" / "mmid.so", 1000, now - 10 * DAY)
    _file(root / "tmpnew" / "mnew.so", 1000, now)
    _file(root / "cutils_ext" / "cutils_ext.so", 100, now - 99 * DAY)
    _file(root / ".lock", 0)
    return scan("C", root, support=SUPPORT)


def test_clean_removes_under_the_lock_and_leaves_what_pytensor_keeps(tmp_path: Path) -> None:
    cache = real_cache(tmp_path / "c")
    dry = clean([cache], Bounds(31 * DAY, None), dry_run=True)
    assert (names(dry.plan.remove), dry.removed, dry.dry_run) == (["tmpold"], (), True)
    assert (tmp_path / "c" / "tmpold").exists()
    report = clean([cache], Bounds(DAY, None), wait=5)
    assert [e.name for e in report.removed] == ["tmpold", "tmpmid"] and report.freed == 2000
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [".lock", "cutils_ext", "tmpnew"]
    assert report.failed == ()


def test_a_numba_entry_goes_index_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "numba"
    old = time.time() - 40 * DAY
    _file(root / "f.py311.nbi", 10, old)
    _file(root / "f.py311.1.nbc", 10, old)
    order: list[str] = []
    real_unlink = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        order.append(self.name)
        real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    report = clean([scan("numba", root)], Bounds(DAY, None))
    assert order == ["f.py311.nbi", "f.py311.1.nbc"] and len(report.removed) == 1
    assert list(root.iterdir()) == []


def test_an_entry_that_cannot_be_removed_is_said_and_the_rest_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = real_cache(tmp_path / "c")

    def refuse(entry: Entry) -> None:
        if entry.name == "tmpold":
            raise PermissionError(13, "Permission denied")
        cleaning_remove(entry)

    cleaning_remove = cleaning._remove
    monkeypatch.setattr(cleaning, "_remove", refuse)
    report = clean([cache], Bounds(DAY, None))
    assert [(e.name, why) for e, why in report.failed] == [("tmpold", "Permission denied")]
    assert [e.name for e in report.removed] == ["tmpmid"]


def _hold(lock: Path, seconds: float) -> subprocess.Popen[str]:
    code = textwrap.dedent(
        f"""
        import time, filelock
        lock = filelock.FileLock({str(lock)!r}); lock.acquire()
        print("held", flush=True)
        time.sleep({seconds})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_held_lock_is_waited_for_said_once_and_then_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = real_cache(tmp_path / "c")
    monkeypatch.setattr(cleaning, "_SAY_AFTER", 0.2)
    proc = _hold(tmp_path / "c" / ".lock", 1.5)
    said: list[list[object]] = []
    try:
        report = clean([cache], Bounds(DAY, None), wait=60, on_wait=said.append)
    finally:
        proc.wait(timeout=60)
    assert len(said) == 1 and [e.name for e in report.removed] == ["tmpold", "tmpmid"]
    if Path("/proc/locks").exists():
        assert [h.pid for h in said[0]] == [proc.pid]  # type: ignore[attr-defined]


def test_a_lock_held_too_long_is_an_error_naming_its_holder_and_the_fixes(tmp_path: Path) -> None:
    cache = real_cache(tmp_path / "c")
    proc = _hold(tmp_path / "c" / ".lock", 60)
    try:
        with pytest.raises(CacheLockTimeout) as caught:
            clean([cache], Bounds(DAY, None), wait=0.3)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    message = str(caught.value)
    assert message.startswith(f"the compile lock {tmp_path / 'c' / '.lock'} stayed held for 0.3 s, by ")
    assert "base_compiledir=<a directory of its own>" in message and "compile.timeout" in message
    if Path("/proc/locks").exists():
        assert f"pid {proc.pid} (" in message and [h.pid for h in caught.value.holders] == [proc.pid]  # type: ignore[attr-defined]
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [
        ".lock",
        "cutils_ext",
        "tmpmid",
        "tmpnew",
        "tmpold",
    ]
    assert isinstance(caught.value, TimeoutError) and caught.value.exit_code == 3


def test_a_dry_run_takes_no_lock(tmp_path: Path) -> None:
    cache = real_cache(tmp_path / "c")
    proc = _hold(tmp_path / "c" / ".lock", 60)
    try:
        report = clean([cache], Bounds(DAY, None), dry_run=True, wait=0.1)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert names(report.plan.remove) == ["tmpold", "tmpmid"]


def test_bound_at_exit_runs_once_an_hour_and_never_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.cache import entries

    root = tmp_path / "c"
    cache = real_cache(root)
    monkeypatch.setattr(cleaning, "current_caches", lambda **_: (entries.rescan(cache),))
    proc = _hold(root / ".lock", 60)
    try:
        cleaning.bound_at_exit()  # the lock is busy: nothing now, and no error
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert (root / "tmpold").exists() and (root / cleaning.STAMP).exists()
    os.utime(root / cleaning.STAMP, (time.time() - 2 * 3600,) * 2)
    cleaning.bound_at_exit()
    assert not (root / "tmpold").exists() and (root / "tmpmid").exists()
    _file(root / "tmpold" / "mold.so", 10, time.time() - 40 * DAY)
    cleaning.bound_at_exit()  # bounded less than an hour ago
    assert (root / "tmpold").exists()


def test_bound_at_exit_passes_over_a_cache_it_may_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from modecfg.cache import entries

    root = tmp_path / "c"
    cache = real_cache(root)
    monkeypatch.setattr(cleaning, "current_caches", lambda **_: (entries.rescan(cache),))

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "touch", refuse)
    cleaning.bound_at_exit()
    assert (root / "tmpold").exists() and caplog.records == []


def test_bound_at_exit_looks_into_a_cache_only_when_it_is_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.cache import entries

    root = tmp_path / "c"
    cache = real_cache(root)
    unscanned = cache._replace(entries=())
    monkeypatch.setattr(cleaning, "current_caches", lambda **_: (unscanned,))
    looked: list[Path] = []
    monkeypatch.setattr(cleaning, "rescan", lambda c: looked.append(c.path) or entries.rescan(c))
    cleaning.bound_at_exit()
    assert looked == [root, root] and not (root / "tmpold").exists()  # when due, and again under the lock
    cleaning.bound_at_exit()  # bounded less than an hour ago: not looked into at all
    assert looked == [root, root]


# -- what bound_at_exit says and asks (issue 47: make mutate on trim) ----------------------------


def test_bad_bounds_name_their_flag_and_the_value_given() -> None:
    with pytest.raises(FlagValueError) as age:
        bounds("5x")
    with pytest.raises(FlagValueError) as size:
        bounds(None, "big")
    assert (age.value.flag, age.value.value) == ("cache.max_age", "5x")
    assert (size.value.flag, size.value.value) == ("cache.max_size", "big")


def _two_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, list[dict[str, object]]]:
    """Where the process's two caches are (made by the test), and how prepare_exit asked."""
    first, second = tmp_path / "c", tmp_path / "numba"
    found = (Cache("C", first, (), 0, first / ".lock"), Cache("numba", second, (), 0, None))
    asked: list[dict[str, object]] = []
    monkeypatch.setattr(cleaning, "current_caches", lambda **kwargs: asked.append(kwargs) or found)
    return first, second, asked


def _one_cache_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The process's two caches as prepare_exit asks (:func:`_two_caches`), the first made."""
    first, _, _ = _two_caches(tmp_path, monkeypatch)
    first.mkdir()
    return first


def _stamped(cache: Path, when: float) -> None:
    (cache / cleaning.STAMP).touch()
    os.utime(cache / cleaning.STAMP, (when, when))


def test_a_bound_is_due_at_exit_for_a_cache_no_exit_bounded_within_the_hour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, asked = _two_caches(tmp_path, monkeypatch)
    now = time.time()
    assert cleaning.prepare_exit(now) is False  # neither exists: nothing to bound
    assert asked == [{"scanned": False}]  # (where they are: their entries not looked at)
    first.mkdir()
    assert cleaning.prepare_exit(now) is True  # one exists and no exit bounded it
    _stamped(first, now - cleaning.EXIT_INTERVAL + 1)
    assert cleaning.prepare_exit(now) is False  # bounded a second less than an hour ago
    _stamped(first, now - cleaning.EXIT_INTERVAL)
    assert cleaning.prepare_exit(now) is True  # an hour ago: due again
    _stamped(first, now - 10)
    second.mkdir()
    assert cleaning.prepare_exit(now) is True  # the other one is due
    _stamped(second, now - 10)
    assert cleaning.prepare_exit(now) is False
    _stamped(second, time.time() - 2 * cleaning.EXIT_INTERVAL)
    assert cleaning.prepare_exit() is True  # asked without a time: now
    _stamped(second, now)
    assert cleaning.prepare_exit(now + 2 * cleaning.EXIT_INTERVAL) is True  # the time given, not the clock's


def test_no_bound_is_due_where_none_is_set_and_one_size_bound_is_enough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modecfg

    first, _, asked = _two_caches(tmp_path, monkeypatch)
    first.mkdir()
    with modecfg.config.override({"cache.max_age": None}):
        assert cleaning.prepare_exit() is False
        assert asked == []  # no bound: no cache looked for
        with modecfg.config.override({"cache.max_size": "1GiB"}):
            assert cleaning.prepare_exit() is True
    with modecfg.config.override({"cache.max_age": "31d", "cache.max_size": None}):
        assert cleaning.prepare_exit() is True


def test_a_cache_this_process_may_not_look_into_is_not_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _one_cache_made(tmp_path, monkeypatch)
    cache = Cache("C", first, (), 0, None)
    real_stat = Path.stat

    def refuse(self: Path, *args: object, **kwargs: object) -> os.stat_result:
        if self.name == cleaning.STAMP:
            raise PermissionError(13, "Permission denied")
        return real_stat(self, *args, **kwargs)  # type: ignore[arg-type]

    assert cleaning._due(cache, time.time()) is True
    monkeypatch.setattr(Path, "stat", refuse)
    assert cleaning._due(cache, time.time()) is False
    assert cleaning.prepare_exit() is False


def test_a_size_bounds_units_are_made_ready_only_where_a_size_bound_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(pydantic reads them: ~60 ms a process's first compile paid for a bound it did not have.)"""
    import modecfg

    _one_cache_made(tmp_path, monkeypatch)
    asked: list[str] = []
    monkeypatch.setattr(cleaning, "size_bytes", asked.append)
    assert cleaning.prepare_exit() is True and asked == []  # the default: no size bound
    with modecfg.config.override({"cache.max_size": "2GiB"}):
        assert cleaning.prepare_exit() is True and asked == ["1MiB"]


def test_prepare_exit_makes_the_validators_bound_at_exit_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modecfg

    _one_cache_made(tmp_path, monkeypatch)
    with modecfg.config.override({"cache.max_size": "2GiB"}):
        assert cleaning.prepare_exit() is True  # a text its own validators refuse would raise here
    assert cleaning.seconds("1d") == DAY and cleaning.size_bytes("1MiB") == 1024**2


def test_bound_at_exit_says_what_it_removed_asks_no_wait_and_looks_into_no_cache_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = real_cache(tmp_path / "a"), real_cache(tmp_path / "b")
    (first.path / cleaning.STAMP).touch()  # bounded a moment ago: passed over, the next one is not
    asked: list[dict[str, object]] = []

    def current(**kwargs: object) -> tuple[Cache, ...]:
        asked.append(kwargs)
        return (first, second)

    waits: list[object] = []
    real_clean = cleaning.clean
    monkeypatch.setattr(cleaning, "current_caches", current)
    monkeypatch.setattr(
        cleaning,
        "clean",
        lambda due, limits, **kw: waits.append(kw.get("wait")) or real_clean(due, limits, **kw),
    )
    caplog.set_level("DEBUG", logger=cleaning.log.name)
    cleaning.bound_at_exit()
    assert asked == [{"scanned": False}] and waits == [0.0]
    assert (tmp_path / "a" / "tmpold").exists() and not (tmp_path / "b" / "tmpold").exists()
    said = [r.getMessage() for r in caplog.records if r.name == cleaning.log.name and r.levelname == "INFO"]
    assert said[-1] == "bounded the compile caches: 1 entries removed, 1000 B", said


def test_bound_at_exit_says_a_held_lock_at_debug_and_a_failure_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG", logger=cleaning.log.name)

    def held(**_: object) -> tuple[Cache, ...]:
        raise CacheLockTimeout("held by someone")

    monkeypatch.setattr(cleaning, "current_caches", held)
    cleaning.bound_at_exit()
    (record,) = [r for r in caplog.records if r.name == cleaning.log.name]
    assert (record.levelname, record.getMessage()) == (
        "DEBUG",
        "the compile lock was held at exit: the caches are bounded another time",
    )
    caplog.clear()

    def broken(**_: object) -> tuple[Cache, ...]:
        raise OSError("disk gone")

    monkeypatch.setattr(cleaning, "current_caches", broken)
    cleaning.bound_at_exit()  # never raises: it runs at exit
    (record,) = [r for r in caplog.records if r.name == cleaning.log.name]
    assert (record.levelname, record.getMessage()) == (
        "WARNING",
        "could not bound the compile caches at exit",
    )
    assert record.exc_info is not None and isinstance(record.exc_info[1], OSError)


def test_bounds_say_themselves_in_words() -> None:
    assert str(Bounds(None, None)) == "no age bound; no size bound"
    assert str(Bounds(DAY, 2 * 1024**3)) == "unused for over 24.0 h; over 2.0 GiB in all"


def test_each_removed_entry_is_said_with_its_kind_name_size_and_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = real_cache(tmp_path / "c")
    caplog.set_level("INFO", logger=cleaning.log.name)
    clean([cache], Bounds(31 * DAY, None), wait=5)
    said = [r.getMessage() for r in caplog.records if r.name == cleaning.log.name]
    assert said == ["removed C tmpold (1000 B, unused for 40.0 days)"], said


# -- a compiledir that is a folder of one's own: the side-by-side test of the data loss ------------

_COMPILE = """
import sys
if sys.argv[1] == "modecfg":
    import modecfg
import pytensor, pytensor.tensor as pt
x = pt.vector("x")
print(pytensor.function([x], 2 * x)([1.0]))
"""


@pytest.mark.parametrize("side", ["pytensor", "modecfg"])
def test_a_users_folder_in_the_compiledir_outlives_the_bound_at_exit(tmp_path: Path, side: str) -> None:
    """``compiledir`` set to a folder of one's own (a scratch directory): its old files are not
    the cache's. An earlier version's bound at exit (cache.max_age, 31 days by default) removed
    every directory in it unused for longer, at the exit of any process that compiled a
    function; plain PyTensor leaves them, and so must modecfg. PyTensor's old module directory
    is bounded as before."""
    compiledir = tmp_path / "scratch"
    old = time.time() - 60 * 86400
    mine = [
        _file(compiledir / "thesis" / "chapter1.tex", 100, old),
        _file(compiledir / "tmp" / "notes.txt", 100, old),
        _file(compiledir / "tmpresults" / "run.csv", 100, old),
        _file(compiledir / "numbers.npy", 100, old),
    ]
    for folder in {path.parent for path in mine}:
        os.utime(folder, (old, old))
    module = _file(compiledir / "tmpabcd1234" / "m0123.so", 100, old).parent
    _file(module / "key.pkl", 10, old)
    os.utime(module, (old, old))
    env = {**os.environ, "PYTENSOR_FLAGS": f"compiledir={compiledir}", "THEANO_FLAGS": ""}
    env.pop("MODECFG_FLAGS", None)
    done = subprocess.run([sys.executable, "-c", _COMPILE, side], env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert all(path.read_bytes() == b"x" * 100 for path in mine)
    if side == "modecfg":  # the bound still applies to what is the cache's
        assert not module.exists()
