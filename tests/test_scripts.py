"""``modecfg.scripts`` and ``modecfg run``'s command, in this process: what a script is given, what
is put back after it, how its ending becomes a status. (``tests/test_scripts_vs_python.py`` runs a
corpus under ``python`` and ``modecfg run`` side by side, in subprocesses.)"""

from __future__ import annotations

import io
import json
import os
import sys
import types
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modecfg import scripts
from modecfg.cli import running

# A script that writes what it was given to the file named by its first argument.
REPORTER = """\
import json, os, sys
seen = {"argv": sys.argv, "file": __file__, "path0": sys.path[0], "name": __name__,
        "main": sys.modules["__main__"].__dict__ is globals(), "cwd": os.getcwd()}
with open(sys.argv[1], "w") as f:
    json.dump(seen, f)
"""


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What a run with ``keep_main`` leaves as the script had it, put back after the test."""
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    monkeypatch.chdir(os.getcwd())
    yield


def _seen(path: Path) -> dict[str, Any]:
    seen: dict[str, Any] = json.loads(path.read_text())
    return seen


def test_a_script_gets_what_python_gives_it_and_the_caller_gets_its_own_back(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "s.py").write_text(REPORTER + "os.chdir(os.path.dirname(os.path.dirname(__file__)))\n")
    (tmp_path / "link.py").symlink_to(real / "s.py")
    out = tmp_path / "seen.json"
    argv, path, main, cwd = list(sys.argv), list(sys.path), sys.modules["__main__"], os.getcwd()
    scripts.run_script(str(tmp_path / "link.py"), [str(out), "--", "-x"])
    seen = _seen(out)
    assert seen["argv"] == [str(tmp_path / "link.py"), str(out), "--", "-x"]
    assert seen["file"] == str(tmp_path / "link.py")  # absolute, the link's own name
    assert seen["path0"] == str(real)  # the directory of the resolved file, as python puts first
    assert seen["name"] == "__main__" and seen["main"]
    assert (sys.argv, sys.path, sys.modules["__main__"], os.getcwd()) == (argv, path, main, cwd)


def test_a_relative_script_path_is_run_with_its_file_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s.py").write_text(REPORTER)
    monkeypatch.chdir(tmp_path)
    scripts.run_script("s.py", ["seen.json"])
    seen = _seen(tmp_path / "seen.json")
    assert seen["argv"][0] == "s.py" and seen["file"] == str(tmp_path / "s.py")


def test_keep_main_leaves_the_scripts_main_argv_and_path_in_place(tmp_path: Path, restored: None) -> None:
    (tmp_path / "s.py").write_text("import sys\nmarker = sys.argv[1]\n")
    scripts.run_script(str(tmp_path / "s.py"), ["kept"], keep_main=True)
    main = sys.modules["__main__"]
    assert isinstance(main, types.ModuleType) and main.marker == "kept"
    assert sys.argv == [str(tmp_path / "s.py"), "kept"] and sys.path[0] == str(tmp_path)


@pytest.mark.parametrize("kind", ["directory", "zip"])
def test_a_directory_or_zip_with_a_main_runs_as_python_runs_it(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "seen.json"
    if kind == "directory":
        target = tmp_path / "app"
        target.mkdir()
        (target / "__main__.py").write_text(REPORTER)
    else:
        target = tmp_path / "app.zip"
        with zipfile.ZipFile(target, "w") as z:
            z.writestr("__main__.py", REPORTER)
    path = list(sys.path)
    scripts.run_script(str(target), [str(out)])
    seen = _seen(out)
    assert seen["path0"] == str(target) and seen["argv"][1:] == [str(out)] and seen["name"] == "__main__"
    assert sys.path == path


def test_a_modules_run_puts_the_working_directory_first_and_its_file_in_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "reporter_module_for_tests.py").write_text(REPORTER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "reporter_module_for_tests", raising=False)
    scripts.run_module("reporter_module_for_tests", ["seen.json"])
    seen = _seen(tmp_path / "seen.json")
    assert seen["argv"] == [str(tmp_path / "reporter_module_for_tests.py"), "seen.json"]
    assert seen["path0"] == str(tmp_path) and seen["name"] == "__main__"


def test_the_script_is_compiled_as_python_compiles_a_file(tmp_path: Path) -> None:
    """Its encoding cookie is honoured; modecfg's own ``from __future__ import annotations`` is not
    inherited (an annotation is evaluated, as under python)."""
    script = tmp_path / "s.py"
    script.write_bytes(
        b"# -*- coding: latin-1 -*-\nimport sys\nx: int = 1\n"
        b"sys.modules['__main__'].result = ('\xe9', __annotations__['x'])\n"
    )
    main = sys.modules["__main__"]
    try:
        scripts.run_script(str(script), keep_main=True)
        assert sys.modules["__main__"].result == ("é", int)
    finally:
        sys.modules["__main__"] = main


def test_an_uncaught_error_is_reported_from_the_scripts_own_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """None of modecfg's frames (its CLI, modecfg.scripts) or runpy's come first."""
    script = tmp_path / "s.py"
    script.write_text("def step():\n    raise ValueError('in the script')\nstep()\n")
    hooked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(sys, "excepthook", lambda *a: hooked.append(a))
    with pytest.raises(ValueError, match="in the script"):
        scripts.run_script(str(script))  # its exceptions propagate to the caller
    assert running.run_command([str(script)], err=io.StringIO()) == 1
    ((kind, exc, tb),) = hooked
    assert kind is ValueError and str(exc) == "in the script" and tb is exc.__traceback__
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    assert frames == [(str(script), "<module>"), (str(script), "step")]


@pytest.mark.parametrize(
    ("code", "status", "said"),
    [
        (None, 0, ""),
        (0, 0, ""),
        (3, 3, ""),
        (-1, -1, ""),
        ("bad thing", 1, "bad thing\n"),
        (("a", 1), 1, "('a', 1)\n"),
    ],
)
def test_a_system_exit_is_the_status_python_ends_with(code: object, status: int, said: str) -> None:
    err = io.StringIO()
    assert scripts.exit_status(SystemExit(code), err) == status
    assert err.getvalue() == said


def test_os_exit_writes_the_report_first_in_this_process_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The script's os._exit still ends the process (here a stand-in that raises); the command's
    report is written first, once, and only in the process that asked for it."""

    class Ended(Exception):
        pass

    def ended(status: int) -> None:
        raise Ended(status)

    monkeypatch.setattr(scripts, "_real_exit", ended)
    reported: list[int] = []
    script = tmp_path / "s.py"
    script.write_text("import os\nos._exit(7)\n")
    with pytest.raises(Ended) as info:
        scripts.run_script(str(script), before_exit=reported.append)
    assert info.value.args == (7,) and reported == [7]
    assert os._exit is ended and scripts._before_exit == []  # put back, nothing left behind
    # a forked child's os._exit (another pid) ends it without the parent's report
    monkeypatch.setattr(scripts, "_before_exit", [(os.getpid() + 1, reported.append)])
    with pytest.raises(Ended):
        scripts._exit(4)
    assert reported == [7]
    # without before_exit, os._exit is not replaced at all
    script.write_text("import os, sys\nsys.modules[__name__].exit_was = os._exit\n")
    main = sys.modules["__main__"]
    try:
        scripts.run_script(str(script), keep_main=True)
        assert sys.modules["__main__"].exit_was is ended
    finally:
        sys.modules["__main__"] = main


def test_a_failing_report_never_stops_the_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ends: list[int] = []
    monkeypatch.setattr(scripts, "_real_exit", ends.append)

    def broken(status: int) -> None:
        raise RuntimeError("the report failed")

    monkeypatch.setattr(scripts, "_before_exit", [(os.getpid(), broken)])
    scripts._exit(5)
    assert ends == [5] and scripts._before_exit == []


# -- modecfg run's command ------------------------------------------------------------------


def _run(words: list[str], **kwargs: Any) -> tuple[int, str]:
    err = io.StringIO()
    return running.run_command(words, err=err, **kwargs), err.getvalue()


def test_run_passes_every_word_after_the_script_to_it(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text(REPORTER)
    out = tmp_path / "seen.json"
    assert _run(["--", str(tmp_path / "s.py"), str(out), "--", "-m", "x"]) == (0, "")
    assert _seen(out)["argv"][1:] == [str(out), "--", "-m", "x"]


@pytest.mark.parametrize("words", [["-m", "reporter_module_for_tests"], ["-mreporter_module_for_tests"]])
def test_run_dash_m_runs_the_module_with_the_words_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, words: list[str]
) -> None:
    (tmp_path / "reporter_module_for_tests.py").write_text(REPORTER)
    monkeypatch.chdir(tmp_path)
    assert _run([*words, "seen.json", "-v"]) == (0, "")
    assert _seen(tmp_path / "seen.json")["argv"][1:] == ["seen.json", "-v"]


@pytest.mark.parametrize(
    ("words", "status", "said"),
    [
        (["-m"], 2, "error: -m needs a module name (modecfg run -m NAME ARGS)\n"),
        (["--", "-m"], 2, "error: -m needs a module name (modecfg run -m NAME ARGS)\n"),
        ([], 2, "usage: modecfg run SCRIPT [ARGS ...] | modecfg run -m MODULE [ARGS ...]\n"),
        (["-h"], 0, "usage: modecfg run SCRIPT [ARGS ...] | modecfg run -m MODULE [ARGS ...]\n"),
        (["--help"], 0, "usage: modecfg run SCRIPT [ARGS ...] | modecfg run -m MODULE [ARGS ...]\n"),
    ],
)
def test_run_without_a_script_says_how_to_call_it(words: list[str], status: int, said: str) -> None:
    code, err = _run(words)
    assert code == status and err.startswith(said)
    if "usage" in said:
        assert "Every\nword after SCRIPT is the script's; its exit status is the command's.\n" in err


def test_run_of_a_missing_script_says_so_as_python_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _run(["nothing.py", "a"]) == (
        2,
        f"error: can't open file {str(tmp_path / 'nothing.py')!r}: no such file (modecfg run SCRIPT ARGS)\n",
    )


@pytest.mark.parametrize(
    ("body", "status", "said", "hooked"),
    [
        ("pass", 0, "", None),
        ("raise SystemExit(3)", 3, "", None),
        ("raise SystemExit('stopped')", 1, "stopped\n", None),
        ("raise KeyboardInterrupt", 130, "", KeyboardInterrupt),
        ("raise LookupError('lost')", 1, "", LookupError),
    ],
)
def test_run_ends_with_the_status_python_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, status: int, said: str, hooked: type | None
) -> None:
    seen: list[type] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, exc, tb: seen.append(kind))
    (tmp_path / "s.py").write_text(body + "\n")
    assert _run([str(tmp_path / "s.py")]) == (status, said)
    assert seen == ([hooked] if hooked else [])


def test_run_that_keeps_main_makes_the_pythons_it_starts_load_modecfg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restored: None
) -> None:
    monkeypatch.setenv("PYTHONPATH", "")
    (tmp_path / "s.py").write_text(
        "import os, sys\nsys.modules['__main__'].path = os.environ['PYTHONPATH']\n"
    )
    assert _run([str(tmp_path / "s.py")], keep_main=True) == (0, "")
    site = str(Path(running.__file__).resolve().parents[1] / "_site")
    assert sys.modules["__main__"].path == site
    monkeypatch.setenv("PYTHONPATH", "")
    assert _run([str(tmp_path / "s.py")]) == (0, "")  # a run inside this process: nothing changed
    assert os.environ["PYTHONPATH"] == ""


def test_children_load_modecfg_puts_its_site_first_once_keeping_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site = str(Path(running.__file__).resolve().parents[1] / "_site")
    assert (Path(site) / "sitecustomize.py").is_file()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/a", "", "/b"]))
    running.children_load_modecfg()
    running.children_load_modecfg()
    assert os.environ["PYTHONPATH"] == os.pathsep.join([site, "/a", "/b"])
    monkeypatch.delenv("PYTHONPATH")
    running.children_load_modecfg()
    assert os.environ["PYTHONPATH"] == site


def test_run_ends_with_comparemodes_verdict_where_the_script_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.modes import compare

    (tmp_path / "s.py").write_text("pass\n")
    counted = types.SimpleNamespace(calls=0, differences=0, functions=0, backends=set())
    monkeypatch.setattr(compare, "counted", counted)
    assert _run([str(tmp_path / "s.py")]) == (0, "")  # nothing compared: nothing said
    counted.calls, counted.functions, counted.backends = 32, 2, {"py", "cvm", "numba"}
    assert _run([str(tmp_path / "s.py")]) == (0, "compare: 32 calls of 2 functions agree on cvm, numba, py\n")
    counted.differences = 3
    assert _run([str(tmp_path / "s.py")]) == (
        0,
        "compare: 3 of 32 calls of 2 functions differ (above); the others agree on cvm, numba, py\n",
    )
    monkeypatch.delitem(sys.modules, "modecfg.modes.compare")  # never loaded: nothing to say
    assert _run([str(tmp_path / "s.py")]) == (0, "")
