"""modecfg.cache: the caches of this process's configuration, `modecfg cache`, the bound at exit."""

from __future__ import annotations

import io
import json
import os
import time
import warnings
from pathlib import Path

import pytest

import modecfg
from modecfg import cache, config
from modecfg.cache import entries, trim
from modecfg.cache.entries import scan
from modecfg.cli import main
from tests.fresh import run_json

from .test_entries import _file

pytest.importorskip("pytensor")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_the_caches_are_where_pytensor_keeps_them() -> None:
    import pytensor

    c, numba = cache.caches()
    assert c.path == Path(pytensor.config.compiledir) and c.lock == c.path / ".lock"
    assert numba.path == Path(pytensor.config.base_compiledir) / "numba" and numba.lock is None
    assert "cutils_ext" in c.support


def test_show_says_size_entries_ages_lock_and_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = time.time()
    _file(tmp_path / "c" / "tmpa" / "ma.so", 2048, now - 3 * 86400)
    _file(tmp_path / "c" / "tmpb" / "mb.so", 1024, now - 60)
    _file(tmp_path / "c" / ".lock", 0)
    found = (scan("C", tmp_path / "c"), scan("numba", tmp_path / "none"))
    monkeypatch.setattr(entries, "caches", lambda: found)  # where show() and clean() find them
    with config.override({"cache.max_age": "1d"}):
        status = cache.show(now=now)
    text = str(status)
    assert f"C modules  {tmp_path / 'c'}\n" in text
    assert "3.0 KiB, 2 entries; last used 60 s to 3.0 days ago" in text
    assert "lock .lock: free" in text
    assert f"numba      {tmp_path / 'none'}: not created yet" in text
    assert "bounds     unused for over 24.0 h; no size bound (cache.max_age, cache.max_size)" in text
    assert "1 entries (2.0 KiB) beyond them: `modecfg cache clean` removes them" in text
    data = status.to_json()
    assert data["caches"][0]["entries"] == 2 and data["caches"][0]["holders"] == []
    assert data["beyond_bounds"] == [
        {"kind": "C", "name": "tmpa", "size": 2048, "why": "unused for 3.0 days"}
    ]
    json.dumps(data)  # all of it is JSON


def test_the_command_shows_and_dry_runs_on_this_configuration() -> None:
    code, out, err = _cli("cache", "show", "--json")
    assert code == 0 and err == ""
    kinds = [c["kind"] for c in json.loads(out)["caches"]]
    assert kinds == ["C", "numba"]
    code, out, err = _cli("cache", "clean", "--dry-run", "--older-than", "10000d")
    assert code == 0 and out.splitlines()[-1].startswith("would remove 0 entries, 0 B of ")


def test_the_command_refuses_a_bad_bound_as_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        _cli("cache", "clean", "--max-size", "lots")
    assert exited.value.code == 2
    assert "argument --max-size: 'lots' is not a size: write a number and a unit" in capsys.readouterr().err


def test_the_command_cleans_another_configurations_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = time.time()
    root = tmp_path / "c"
    _file(root / "tmpold" / "m.so", 100, now - 40 * 86400)
    _file(root / "tmpnew" / "m.so", 100, now)
    found = (scan("C", root), scan("numba", tmp_path / "numba"))
    monkeypatch.setattr(entries, "caches", lambda: found)  # where show() and clean() find them
    code, out, err = _cli("cache", "clean", "--verbose")
    assert code == 0, err
    assert out.splitlines() == [
        "removed C tmpold (100 B): unused for 40.0 days",
        "removed 1 entries, 100 B of 200 B",
    ]
    assert sorted(p.name for p in root.iterdir()) == [".lock", "tmpnew"]  # the lock file it took stays


def test_the_command_summarises_by_cache_and_reason_and_never_lists_its_own_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 50: 143 lines of tmpXXXX names, the tool's own stamp among them."""
    from modecfg.cache.trim import STAMP

    now = time.time()
    root, numba = tmp_path / "c", tmp_path / "numba"
    for i, days in enumerate((40, 45, 50)):
        _file(root / f"tmp{i}" / "m.so", 100, now - days * 86400)
    _file(numba / "f-1.py311.nbi", 10, now - 41 * 86400)
    _file(numba / "f-1.py311.0.nbc", 30, now - 41 * 86400)
    _file(numba / STAMP, 0, now - 60 * 86400)  # modecfg's own: never an entry
    found = (scan("C", root), scan("numba", numba))
    assert [e.name for e in found[1].entries] == ["f-1.py311"]
    monkeypatch.setattr(entries, "caches", lambda: found)  # where show() and clean() find them
    code, out, err = _cli("cache", "clean", "--dry-run", "--older-than", "30d")
    assert code == 0, err
    assert out.splitlines() == [
        "would remove 3 C entries (300 B): unused for 40.0 days to 50.0 days",
        "would remove 1 numba entry (40 B): unused for 41.0 days",
        "would remove 4 entries, 340 B of 340 B",
    ]
    assert STAMP not in out


def test_a_process_that_compiled_bounds_its_caches_at_exit(tmp_path: Path) -> None:
    code = """
        import json, os, time
        import modecfg, pytensor, pytensor.tensor as pt
        from pathlib import Path
        x = pt.vector("x")
        root = Path(pytensor.config.compiledir)
        old = root / "tmpold"; old.mkdir(parents=True)
        (old / "m.so").write_bytes(b"x"); os.utime(old / "m.so", (time.time() - 9 * 86400,) * 2)
        numba = Path(pytensor.config.base_compiledir) / "numba"; numba.mkdir(exist_ok=True)
        index = numba / "f.py311.nbi"
        index.write_bytes(b"x"); os.utime(index, (time.time() - 9 * 86400,) * 2)
        pytensor.function([x], x + 1, mode=pytensor.compile.mode.Mode(linker="py"))  # bounded at exit
        print(json.dumps({"root": str(root)}))
    """
    env = {"PYTENSOR_FLAGS": f"base_compiledir={tmp_path}", "MODECFG_FLAGS": "cache.max_age=7d"}
    root = Path(run_json(code, env)["root"])
    assert not (root / "tmpold").exists() and (root / ".modecfg-bounded").exists()
    assert list((tmp_path / "numba").glob("*.nbi")) == []
    env["MODECFG_FLAGS"] = "cache.max_age=None"
    os.remove(root / ".modecfg-bounded")
    run_json(code.replace("old.mkdir(parents=True)", "old.mkdir(parents=True, exist_ok=True)"), env)
    assert (root / "tmpold").exists()  # no bound: nothing goes, and nothing is stamped
    assert not (root / ".modecfg-bounded").exists()
    env["MODECFG_FLAGS"] = "cache.max_age=7d"
    run_json(
        code.replace("old.mkdir(parents=True)", "old.mkdir(parents=True, exist_ok=True)").replace(
            'pytensor.function([x], x + 1, mode=pytensor.compile.mode.Mode(linker="py"))', "pass"
        ),
        env,
    )
    assert (root / "tmpold").exists()  # compiled nothing: filled no cache, bounds none at exit


_IMPORTS_AT_FIRST_COMPILE = """
    import atexit, json, os, sys, time
    import modecfg, pytensor, pytensor.tensor as pt
    from pathlib import Path
    from modecfg.cache.trim import STAMP
    registered = []
    real = atexit.register
    atexit.register = lambda f, *a, **k: registered.append(f.__qualname__) or real(f, *a, **k)
    for cache in (Path(pytensor.config.compiledir), Path(pytensor.config.base_compiledir) / "numba"):
        cache.mkdir(parents=True, exist_ok=True)
        (cache / STAMP).touch()
        if os.environ["BOUNDED"] == "2 hours ago":
            os.utime(cache / STAMP, (time.time() - 7200,) * 2)
    x = pt.vector("x")
    f = pytensor.function([x], x + 1, mode=pytensor.compile.mode.Mode(linker="py"))
    print(json.dumps({"loaded": [m for m in ("filelock", "pydantic") if m in sys.modules],
                      "registered": [r for r in registered if "bound" in r]}))
"""


@pytest.mark.parametrize(
    ("bounded", "flags", "loaded", "registered"),
    [
        ("now", "", [], []),
        ("now", "cache.max_size=2GiB", ["pydantic"], []),  # (the flag's check imported pydantic)
        ("2 hours ago", "", ["filelock"], ["bound_at_exit"]),
        ("2 hours ago", "cache.max_size=2GiB", ["filelock", "pydantic"], ["bound_at_exit"]),
    ],
)
def test_a_first_compile_imports_the_exit_bounds_code_only_when_a_bound_is_due(
    tmp_path: Path, bounded: str, flags: str, loaded: list[str], registered: list[str]
) -> None:
    """Issue 62: every process's first compile imported filelock (~10 ms) and pydantic (~60 ms),
    which plain PyTensor's compile does not, for a bound at exit that is due once an hour."""
    env = {"PYTENSOR_FLAGS": f"base_compiledir={tmp_path}", "MODECFG_FLAGS": flags, "BOUNDED": bounded}
    out = run_json(_IMPORTS_AT_FIRST_COMPILE, env)
    assert (out["loaded"], out["registered"]) == (loaded, registered)
    assert out["stderr"] == ""


def test_the_layout_contact_checks_pytensors_source(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg._pytensor import caches as layout
    from modecfg._pytensor import patches

    rows = {row.patch.name: row for row in patches.contacts()}
    assert rows["cache layout"].state == "on"
    real = layout._source
    monkeypatch.setattr(
        layout,
        "_source",
        lambda m: real(m).replace('/ ".lock"', '/ "lockfile"') if m.endswith("compilelock") else real(m),
    )
    rows = {row.patch.name: row for row in patches.contacts()}
    assert (rows["cache layout"].state, rows["cache layout"].reason) == (
        "failed",
        "PyTensor's cache layout is not as modecfg knows it: "
        'pytensor.compile.compilelock (Path(lock_dir) / ".lock")',
    )


def test_the_layout_is_checked_at_the_first_compile_not_at_each_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 61: the check read three of PyTensor's source files at every import. The import's
    check leaves it out; the process's first compile (before modecfg fills, bounds or locks any
    cache) says a layout modecfg does not know, once, as the import did."""
    import atexit

    from modecfg._pytensor import caches as layout
    from modecfg._pytensor import patches
    from modecfg.cache import contacts

    assert "cache layout" not in {row.patch.name for row in patches.contacts(asked=False)}
    assert "cache layout" in {row.patch.name for row in patches.contacts()}

    registered: list[object] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(contacts, "_first", [])
    monkeypatch.setattr(trim, "prepare_exit", lambda: True)  # a bound due at exit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        contacts.first_compile(None, None)  # this PyTensor's layout: nothing said
    assert registered == [contacts.bound_at_exit]
    monkeypatch.setattr(contacts, "_first", [])
    monkeypatch.setattr(trim, "prepare_exit", lambda: False)  # none due
    contacts.first_compile(None, None)
    assert registered == [contacts.bound_at_exit]  # nothing more registered
    real = layout._source
    monkeypatch.setattr(
        layout,
        "_source",
        lambda m: real(m).replace('/ ".lock"', '/ "lockfile"') if m.endswith("compilelock") else real(m),
    )
    monkeypatch.setattr(contacts, "_first", [])
    with pytest.warns(modecfg.PyTensorIntegrationWarning) as said:
        contacts.first_compile(None, None)
        contacts.first_compile(None, None)  # the first compile only
    assert len(said) == 1 and str(said[0].message) == (
        "PyTensor's cache layout is not as modecfg knows it: "
        'pytensor.compile.compilelock (Path(lock_dir) / ".lock"). modecfg\'s compile lock, '
        "`modecfg cache` and the cache bounds may miss PyTensor's own (modecfg doctor lists the contact)"
    )
    assert said[0].filename == __file__  # at the line that compiled


def test_the_layout_contact_checks_the_keys_pytensor_fills(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytensor.configdefaults

    from modecfg._pytensor import patches

    monkeypatch.setattr(pytensor.configdefaults, "_compiledir_format_keys", {"hostname", "new_key"})
    rows = {row.patch.name: row for row in patches.contacts()}
    assert rows["cache layout"].state == "failed"
    assert rows["cache layout"].reason.endswith("_compiledir_format_keys (['hostname', 'new_key'])")
