"""``modecfg.scripts`` and ``modecfg run``'s command, in this process: what a script is given, what
is put back after it, how its ending becomes a status. (``tests/test_scripts_vs_python.py`` runs a
corpus under ``python`` and ``modecfg run`` side by side, in subprocesses.)"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import types
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import modecfg
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


@pytest.fixture(autouse=True)
def _nothing_compared_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """CompareMode's counts are the process's: calls an earlier test compared would be said at the
    end of every run here."""
    compare = sys.modules.get("modecfg.compare.mode")
    if compare is not None:
        fresh = types.SimpleNamespace(calls=0, differences=0, functions=0, backends=set())
        monkeypatch.setattr(compare, "counted", fresh)


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
    argv, path, main = list(sys.argv), list(sys.path), sys.modules["__main__"]
    scripts.run_module("reporter_module_for_tests", ["seen.json"])
    seen = _seen(tmp_path / "seen.json")
    assert seen["argv"] == [str(tmp_path / "reporter_module_for_tests.py"), "seen.json"]
    assert seen["path0"] == str(tmp_path) and seen["name"] == "__main__"
    assert (sys.argv, sys.path, sys.modules["__main__"]) == (argv, path, main)  # the caller's, back


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
    """None of modecfg's frames (its CLI, modecfg.scripts) or runpy's come first (nor, under
    `make mutate`, the mutation tool's call switch between them)."""
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


# A script that writes the module names python gives it, as text, to the file its first argument names.
NAMES = """\
import json, sys
names = {name: repr(globals()[name]) if name in globals() else "(none)"
         for name in ("__cached__", "__doc__", "__package__", "__spec__", "__builtins__")}
loader = globals().get("__loader__")
names["__loader__"] = (type(loader).__name__, getattr(loader, "name", None), getattr(loader, "path", None))
with open(sys.argv[1], "w") as f:
    json.dump(names, f)
"""


def test_a_scripts_module_names_are_pythons_side_by_side(tmp_path: Path) -> None:
    """``__loader__`` (a SourceFileLoader named ``__main__`` over the file), ``__cached__``,
    ``__doc__``, ``__package__``, ``__spec__`` as ``python SCRIPT`` gives them, in this process
    (the corpus of tests/test_scripts_vs_python.py runs in child processes)."""
    import subprocess

    script = tmp_path / "names.py"
    script.write_text(NAMES)
    plain, ours = tmp_path / "plain.json", tmp_path / "ours.json"
    subprocess.run([sys.executable, str(script), str(plain)], check=True, timeout=60)
    scripts.run_script(str(script), [str(ours)])
    assert _seen(ours) == _seen(plain)
    assert _seen(ours)["__loader__"] == ["SourceFileLoader", "__main__", str(script)]


def _raised_through(*filenames: str) -> BaseException:
    """An exception whose traceback runs through a frame of each of ``filenames`` (code compiled
    as if from those files), the last raising."""
    namespace: dict[str, Any] = {}
    source = "def f0():\n    raise ValueError('deep')\n"
    exec(compile(source, filenames[-1], "exec"), namespace)
    for depth, filename in enumerate(reversed(filenames[:-1]), start=1):
        text = f"def f{depth}():\n    f{depth - 1}()\n"
        exec(compile(text, filename, "exec"), namespace)
    try:
        namespace[f"f{len(filenames) - 1}"]()
    except ValueError as exc:
        assert exc.__traceback__ is not None
        exc.__traceback__ = exc.__traceback__.tb_next  # (this test's own frame)
        return exc
    raise AssertionError("it raised")


def test_the_report_leaves_out_runpys_and_the_clis_frames_and_keeps_modecfgs_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Frames that come before the script's: runpy's (frozen or not) and modecfg's command line
    are left out; a frame of modecfg outside its command line (a library call the script made)
    is the script's story and stays."""
    here = Path(scripts.__file__).parent
    hooked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(sys, "excepthook", lambda *a: hooked.append(a))
    library = str(here / "configuration" / "live.py")
    exc = _raised_through("<frozen runpy>", str(here / "cli" / "running.py"), library)
    scripts.report(exc)
    tb = hooked[-1][2]
    assert tb is not None and tb.tb_frame.f_code.co_filename == library and tb.tb_next is None


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

    def theirs(status: int) -> None:  # an os._exit the program had put in place itself
        raise AssertionError("not called")

    monkeypatch.setattr(os, "_exit", theirs)
    monkeypatch.setattr(scripts, "_real_exit", ended)
    reported: list[int] = []
    script = tmp_path / "s.py"
    script.write_text("import os\nos._exit(7)\n")
    with pytest.raises(Ended) as info:
        scripts.run_script(str(script), before_exit=reported.append)
    assert info.value.args == (7,) and reported == [7]
    assert os._exit is theirs and scripts._before_exit == []  # what was there put back, nothing left
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
        assert sys.modules["__main__"].exit_was is theirs
    finally:
        sys.modules["__main__"] = main


def test_a_failing_report_never_stops_the_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ends: list[int] = []
    monkeypatch.setattr(os, "_exit", os._exit)
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


def test_run_dash_m_joined_to_a_one_letter_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "q.py").write_text(REPORTER)
    monkeypatch.chdir(tmp_path)
    assert _run(["-mq", "seen.json"]) == (0, "")
    assert _seen(tmp_path / "seen.json")["argv"][1:] == ["seen.json"]


def test_the_command_line_hands_run_and_every_word_after_it_to_the_script(tmp_path: Path) -> None:
    """``modecfg run`` is taken before the command line is parsed: the words after the script
    (``--json``, ``run``, ``-h``) are the script's, and what the command says goes to its stderr."""
    from modecfg.cli import main

    (tmp_path / "s.py").write_text(REPORTER)
    seen, out, err = tmp_path / "seen.json", io.StringIO(), io.StringIO()
    assert main(["run", str(tmp_path / "s.py"), str(seen), "--json", "run", "-h"], out, err) == 0
    assert _seen(seen)["argv"][1:] == [str(seen), "--json", "run", "-h"] and err.getvalue() == ""
    assert main(["run", str(tmp_path / "missing.py")], out, err) == 2
    assert err.getvalue().startswith("error: can't open file") and out.getvalue() == ""


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
    from modecfg.compare import mode as compare

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
    monkeypatch.delitem(sys.modules, "modecfg.compare.mode")  # never loaded: nothing to say
    assert _run([str(tmp_path / "s.py")]) == (0, "")


# -- modecfg compare, check-float32's listing, profile's files: on stand-ins for the script ------


@pytest.fixture
def comparing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """run_script replaced by a stand-in that does what the test's ``then`` says, seeing the flags
    the command set; CompareMode's counts made by hand."""
    from modecfg.compare import mode as compare

    counted = types.SimpleNamespace(calls=5, functions=1, backends={"cvm"})  # earlier calls of this process
    monkeypatch.setattr(compare, "counted", counted)
    state: dict[str, Any] = {"counted": counted, "then": None, "script": tmp_path / "s.py"}
    state["script"].write_text("pass\n")

    def run_script(path: str, args: Any, *, keep_main: bool, before_exit: Any) -> None:
        import modecfg

        cfg = modecfg.config
        state["flags"] = (cfg.mode, cfg.CompareMode.action, cfg.CompareMode.linkers, cfg.CompareMode.rtol)
        state["run"] = (path, list(args), keep_main)
        state["before_exit"] = before_exit
        state["then"](counted)

    monkeypatch.setattr(scripts, "run_script", run_script)
    return state


def _compare(state: dict[str, Any], **given: Any) -> tuple[int, str, str]:
    base = {"script": str(state["script"]), "args": ["a"], "keep_main": False, "linkers": None, "rtol": None,
            "atol": None}  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    import argparse

    code = running.cmd_compare(argparse.Namespace(**{**base, **given}), out, err)
    return code, out.getvalue(), err.getvalue()


def test_compare_counts_only_the_scripts_own_calls_and_sets_its_flags(comparing: dict[str, Any]) -> None:
    import modecfg

    def calls(counted: Any) -> None:
        counted.calls += 12
        counted.functions += 2
        counted.backends |= {"numba", "py"}

    comparing["then"] = calls
    before = modecfg.config.mode
    assert _compare(comparing, linkers="py:numba", rtol=1e-3) == (
        0, "compare: 12 calls of 2 functions agree on cvm, numba, py\n", ""
    )  # fmt: skip
    assert comparing["flags"] == ("CompareMode", "raise", "py:numba", 1e-3)
    assert comparing["run"] == (str(comparing["script"]), ["a"], False)
    assert modecfg.config.mode == before  # the flags put back after


@pytest.mark.parametrize(
    ("then", "code", "out", "err"),
    [
        ("nothing", 1, "compare: no call was compared (did the script compile and call a function without "
         "a mode of its own?)\n", ""),
        ("exit 3", 3, "compare: 1 calls of 0 functions agree on cvm\n", ""),
        ("exit 0 without calls", 1, "compare: no call was compared", ""),
        ("exit 4 without calls", 4, "compare: no call was compared", ""),
        ("differs", 1, "the report of the difference\n", ""),
        ("fails", 2, "", "error: {script} raised ValueError: the script's own\n"),
    ],
)  # fmt: skip
def test_compare_ends_with_the_verdict_or_the_scripts_ending(
    comparing: dict[str, Any], then: str, code: int, out: str, err: str
) -> None:
    from modecfg.errors import CompareError

    def act(counted: Any) -> None:
        if then == "exit 3":
            counted.calls += 1
            raise SystemExit(3)
        if then.startswith("exit"):
            raise SystemExit(int(then.split()[1]))
        if then == "differs":
            raise CompareError("the report of the difference")
        if then == "fails":
            raise ValueError("the script's own")

    comparing["then"] = act
    got = _compare(comparing)
    assert got[0] == code and got[1].startswith(out) and got[2] == err.format(script=comparing["script"])


def test_compare_says_its_verdict_before_the_scripts_os_exit(comparing: dict[str, Any]) -> None:
    out = io.StringIO()

    def exits(counted: Any) -> None:
        counted.calls += 2
        counted.functions += 1
        comparing["before_exit"](0)  # what os._exit calls first

    comparing["then"] = exits
    code, said, _ = _compare(comparing)
    assert said == "compare: 2 calls of 1 functions agree on cvm\n" * 2  # at the exit, then at the end
    assert code == 0 and out.getvalue() == ""


class _Source:
    def __init__(self, file: str, line: int) -> None:
        self.file, self.line, self.code = file, line, f"code of {line}"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def _finding(file: str | None, line: int, reason: str, op: str, fix: str, dtypes: tuple[str, ...]) -> Any:
    source = None if file is None else _Source(file, line)
    return types.SimpleNamespace(source=source, reason=reason, op=op, input_dtypes=list(dtypes), fix=fix)


def test_check_float32_lists_findings_by_line_each_once_with_how_often() -> None:
    b9 = _finding("b.py", 9, "a float64 constant", "Mul", "use np.float32(2)", ("float32", "float64"))
    a3 = _finding("a.py", 3, "an int64 input", "Add", "cast it", ("int64", "float32"))
    nowhere = _finding(None, 0, "made inside PyTensor", "Cast", "nothing to do", ("float32",))
    a12 = _finding("a.py", 12, "an int64 input", "Sub", "cast it", ("int64",))
    out = io.StringIO()
    running._print_findings([b9, a3, nowhere, b9, a12, b9, a3], out)
    assert out.getvalue() == (
        "float32 check: float64 enters at 4 line(s) (4 finding(s))\n"
        "\na.py:3: code of 3\n"
        "  an int64 input: Add(int64, float32) -> float64 (in 2 compiled functions)\n  fix: cast it\n"
        "\na.py:12: code of 12\n"
        "  an int64 input: Sub(int64) -> float64\n  fix: cast it\n"
        "\nb.py:9: code of 9\n"
        "  a float64 constant: Mul(float32, float64) -> float64 (in 3 compiled functions)\n"
        "  fix: use np.float32(2)\n"
        "\n(no line recorded)\n"
        "  made inside PyTensor: Cast(float32) -> float64\n  fix: nothing to do\n"
    )
    out = io.StringIO()
    running._print_findings([], out)
    assert out.getvalue() == "float32 check: no float64 enters any compiled graph\n"


def test_a_report_file_is_written_whole_in_utf8_with_the_users_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "p.html"
    old = os.umask(0o002)  # leaves "others" their read bit: 0o666 and 0o667 would differ
    try:
        running._write_whole(str(target), "σ² \udcff")  # a surrogate (an undecodable file name byte)
    finally:
        os.umask(old)
    assert target.read_bytes() == "σ² ".encode() + b"\\udcff"
    assert target.stat().st_mode & 0o777 == 0o664
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.html"]  # no temporary file left

    def broken(src: Any, dst: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        running._write_whole(str(target), "new")
    assert target.read_bytes().startswith("σ²".encode())  # the old file whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.html"]


def test_a_report_files_temporary_is_hidden_beside_it_so_the_rename_is_atomic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renamed: list[tuple[str, str]] = []
    real = os.replace

    def replace(src: str, dst: str) -> None:
        renamed.append((src, dst))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    running._write_whole(str(tmp_path / "p.json"), "{}")
    ((src, dst),) = renamed
    assert os.path.dirname(src) == str(tmp_path) and os.path.basename(src).startswith(".")
    assert dst == str(tmp_path / "p.json")


def test_profile_prints_each_report_the_merged_one_and_writes_the_files_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    import modecfg
    from modecfg.profiles import ProfileReport, session
    from modecfg.profiles.render import to_html, to_json, to_trace
    from tests.profiles.test_html_golden import reports

    found = reports()
    asked: list[Any] = []

    def given(since: int) -> list[Any]:
        asked.append(since)
        return found

    monkeypatch.setattr(session, "reports", given)
    monkeypatch.setattr(session, "all_stats", lambda: ["s0", "s1", "s2", "s3"])
    monkeypatch.setattr(session, "mark_printed", lambda stats: asked.append(list(stats)))
    assert found[0].text(3, 1) != found[0].text(3, None)  # the op rows are cut at n_ops: it is passed on
    paths = {kind: str(tmp_path / f"p.{kind}") for kind in ("json", "trace", "html")}
    out = io.StringIO()
    with modecfg.config.override(**{"profiling.n_apply": 3, "profiling.n_ops": 1}):
        code = running._profile_report(argparse.Namespace(**paths), 1, 5, out)
    assert code == 5 and asked == [1, ["s1", "s2", "s3"]]  # the script's functions only
    assert out.getvalue() == (
        found[0].text(3, 1)
        + "\n\n"
        + found[1].text(3, 1)
        + "\n\n"
        + ProfileReport.merged(found).text(3, 1)
        + "\n"
        f"wrote {paths['json']}\nwrote {paths['trace']}\nwrote {paths['html']}\n"
    )
    text = Path(paths["json"]).read_text()
    written, expected = json.loads(text), to_json(found)
    assert text == json.dumps(written, indent=1)
    # the file was written a moment before: its stamp is its own (a second may have turned since)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", written.pop("generated"))
    expected.pop("generated")
    assert written == expected
    assert Path(paths["trace"]).read_text() == json.dumps(to_trace(found), indent=1)
    assert Path(paths["html"]).read_text() == to_html(found, 3, 1)
    # one report: no merged one; nothing asked: no file
    monkeypatch.setattr(session, "reports", lambda since: found[:1])
    out = io.StringIO()
    none = dict.fromkeys(paths)
    with modecfg.config.override(**{"profiling.n_apply": 3, "profiling.n_ops": 1}):
        assert running._profile_report(argparse.Namespace(**none), 0, 0, out) == 0
    assert out.getvalue() == found[0].text(3, 1) + "\n\n"
    monkeypatch.setattr(session, "reports", lambda since: [])
    out = io.StringIO()
    assert running._profile_report(argparse.Namespace(**none), 0, 0, out) == 1
    assert out.getvalue() == "no function was profiled (did the script compile any?)\n"
    assert running._profile_report(argparse.Namespace(**none), 0, 4, io.StringIO()) == 4


# -- check-float32 and replay, on stand-ins ------------------------------------------------------


@pytest.fixture
def checking(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """``check_script`` replaced: what it was asked, and what it gives (``.result``: findings, or
    an exception to raise); the script ``s.py`` in the working directory."""
    import modecfg.checks.script as check

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.py").write_text("pass\n")
    seen: dict[str, Any] = {"result": []}

    def check_script(script: str, args: list[str], *, keep_main: bool, before_exit: Any) -> Any:
        seen["asked"] = (script, list(args), keep_main, before_exit)
        if isinstance(seen["result"], BaseException):
            raise seen["result"]
        return seen["result"]

    monkeypatch.setattr(check, "check_script", check_script)
    return seen


def _check(*words: str, floatX: str = "float32") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(script="s.py", args=list(words), keep_main=True, modecfg_flags=None)
    with modecfg.config.override(floatX=floatX):
        status = running.cmd_check_float32(args, out, err)
    return status, out.getvalue(), err.getvalue()


def test_check_float32_says_floatx_first_when_it_is_not_float32(checking: dict[str, Any]) -> None:
    status, out, _ = _check(floatX="float64")
    assert status == 0
    assert out.startswith("floatX=float64 (from override at ")
    assert out.endswith(
        "): float64 is this configuration's own dtype, so every float64 the graphs take is listed; a GPU "
        "run has floatX=float32 (THEANO_FLAGS=floatX=float32 modecfg check-float32 SCRIPT)\n"
        "float32 check: no float64 enters any compiled graph\n"
    )
    assert _check()[1] == "float32 check: no float64 enters any compiled graph\n"  # float32: no preamble


def test_check_float32_passes_the_script_its_words_and_a_report_for_its_os_exit(
    checking: dict[str, Any],
) -> None:
    found = [_finding("a.py", 3, "an int64 input", "Add", "cast it", ("int64",))]
    checking["result"] = found
    out = io.StringIO()
    args = argparse.Namespace(script="s.py", args=["--epochs", "2"], keep_main=True, modecfg_flags=None)
    with modecfg.config.override(floatX="float32"):
        assert running.cmd_check_float32(args, out, io.StringIO()) == 1  # findings: status 1
    script, words, keep_main, before_exit = checking["asked"]
    assert (script, words, keep_main) == ("s.py", ["--epochs", "2"], True)
    listed = out.getvalue()
    assert listed.startswith("float32 check: float64 enters at 1 line(s)")
    before_exit(found, 0)  # the script's os._exit: what was found is printed before the process ends
    assert out.getvalue() == listed * 2


@pytest.mark.parametrize(("code", "status"), [(None, 0), (4, 4), ("bye", 1)])
def test_check_float32_ends_with_the_scripts_own_exit_keeping_what_was_found(
    checking: dict[str, Any], code: object, status: int
) -> None:
    ended = SystemExit(code)
    ended.findings = [_finding("a.py", 3, "an int64 input", "Add", "cast it", ("int64",))]  # type: ignore[attr-defined]
    checking["result"] = ended
    got, out, err = _check()
    assert got == (status or 1) and "float64 enters at 1 line(s)" in out
    assert err == ("bye\n" if code == "bye" else "")
    checking["result"] = SystemExit(4)  # no findings kept on it
    got, out, _ = _check()
    assert got == 4 and out == "float32 check: no float64 enters any compiled graph\n"


def test_check_float32_of_a_script_that_raises_says_what_and_what_was_found(checking: dict[str, Any]) -> None:
    failed = ValueError("bad input")
    failed.findings = [_finding("a.py", 3, "an int64 input", "Add", "cast it", ("int64",))]  # type: ignore[attr-defined]
    checking["result"] = failed
    status, out, err = _check()
    assert status == 2 and err == "error: s.py raised ValueError: bad input\n"
    assert out.startswith("float32 check: incomplete: the script stopped at ValueError; only the graphs ")
    assert "float64 enters at 1 line(s)" in out
    checking["result"] = KeyError("k")
    status, out, err = _check()
    assert (status, err) == (2, "error: s.py raised KeyError: 'k'\n")
    assert out == (
        "float32 check: incomplete: the script stopped at KeyError; only the graphs compiled before "
        "that were checked\nfloat32 check: no float64 enters any compiled graph of those\n"
    )


class _Bad:
    def __init__(self, kind: str, where: str) -> None:
        self.kind, self.where = kind, where

    def describe(self) -> str:
        return f"{self.kind} at {self.where}"

    def __str__(self) -> str:
        return f"the dump's {self.kind} at {self.where}"


@pytest.fixture
def replaying(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    import modecfg

    seen: dict[str, Any] = {"signed": True, "bad": _Bad("nan", "Log"), "raise": None}
    dump = types.SimpleNamespace(
        summary=lambda: "SUMMARY\n", signature="someone else's key", bad=None,
        signed_by_you=True,
    )  # fmt: skip

    def load_dump(path: str) -> Any:
        dump.signed_by_you, dump.bad = seen["signed"], seen["bad"]
        return dump

    def replay(path: str, *, dump: Any, trust: bool) -> None:
        seen["asked"] = (path, dump, trust)
        if seen["raise"] is not None:
            raise seen["raise"]

    monkeypatch.setattr(modecfg, "load_dump", load_dump)
    monkeypatch.setattr(modecfg, "replay", replay)
    return seen


def _replay(trust: bool = False, write_dump: Any = None) -> tuple[int, str]:
    out = io.StringIO()
    args = argparse.Namespace(dump="d.pkl", trust=trust, write_dump=write_dump)
    return running.cmd_replay(args, out, io.StringIO()), out.getvalue()


def _guard_error(bad: Any, outputs: tuple[str, ...] = ("cost",), path: str | None = None) -> Any:
    from modecfg.errors import NanGuardError

    exc = NanGuardError.__new__(NanGuardError)
    exc.bad, exc.bad_outputs, exc.dump_path = bad, list(outputs), path
    return exc


def test_replay_of_someone_elses_dump_shows_it_and_says_how_to_go_further(replaying: dict[str, Any]) -> None:
    replaying["signed"] = False
    status, out = _replay()
    assert status == 3 and "asked" not in replaying
    assert out == (
        "SUMMARY\n"
        "\nnot run: this dump is not yours (its signature: someone else's key), and replaying it\n"
        "runs the code its pickled graph holds. To go further:\n"
        "  modecfg replay --trust d.pkl\n"
        "      runs it as its writer compiled it: only a dump you trust, after reading the above\n"
        "  modecfg.load_dump('d.pkl').call(f)\n"
        "      runs YOUR compiled function f on its captured inputs and shared values\n"
    )


def test_replay_says_reproduced_where_the_dump_said_or_elsewhere(replaying: dict[str, Any]) -> None:
    replaying["raise"] = _guard_error(_Bad("nan", "Log"), path="new.pkl")
    assert _replay(write_dump="w") == (0, "reproduced: nan at Log\nnew dump: new.pkl\n")
    assert replaying["asked"] == ("d.pkl", "w", False)
    replaying["raise"] = _guard_error(_Bad("inf", "Exp"))
    assert _replay() == (0, "reproduced, elsewhere: inf at Exp\n  the dump said: the dump's nan at Log\n")
    replaying["raise"] = _guard_error(None, ("cost", "grad"))  # the guard could not say the node
    assert _replay() == (0, "reproduced: bad values in cost, grad\n")
    replaying["raise"] = _guard_error(_Bad("inf", "Exp"))
    assert _replay(trust=True) == (0, "reproduced: inf at Exp\n")  # trusted: not read before, not compared
    assert replaying["asked"] == ("d.pkl", None, True)


def test_replay_that_no_longer_fails_says_so_with_status_one(replaying: dict[str, Any]) -> None:
    assert _replay() == (1, "not reproduced: d.pkl: the call no longer produces a bad value\n")
