"""Flags in every script: ``modecfg run SCRIPT`` for one run, ``modecfg autoload on|off`` for an
environment. A script that never imports modecfg reads THEANO_FLAGS and rc files only so."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from modecfg import autoload
from modecfg.errors import ModecfgError
from tests.fresh import pythonpath

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """\
import sys
import pytensor
print(pytensor.config.floatX, pytensor.config.optimizer, sys.argv[1:], "modecfg" in sys.modules)
if "--fail" in sys.argv:
    def step():
        raise ValueError("the script's own error")
    step()
sys.exit(3 if "--three" in sys.argv else 0)
"""


def _env(**extra: str) -> dict[str, str]:
    keep = {
        k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC")) and k != "MODECFG_AUTOLOAD"
    }
    return {**keep, "THEANO_FLAGS": "floatX=float32,optimizer=None", "HOME": "/nonexistent", **extra}


def _run(args: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=_env(**extra), capture_output=True, text=True, timeout=300)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    return path


def test_a_script_that_does_not_import_modecfg_reads_pytensors_flags_only(script: Path) -> None:
    """What issue 50 saw: THEANO_FLAGS is not PyTensor's, so a bare script ignores it."""
    done = _run([sys.executable, str(script)], script.parent)
    assert done.stdout.split()[:2] == ["float64", "o4"] and done.returncode == 0


def test_modecfg_run_gives_the_script_the_flags_its_arguments_and_its_status(script: Path) -> None:
    done = _run([sys.executable, "-m", "modecfg", "run", str(script), "a", "--three"], script.parent)
    assert done.stdout.strip() == "float32 None ['a', '--three'] True", done.stderr
    assert done.returncode == 3


def test_modecfg_run_prints_the_scripts_error_from_its_own_frames(script: Path) -> None:
    done = _run([sys.executable, "-m", "modecfg", "run", str(script), "--fail"], script.parent)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1].startswith(f'  File "{script}", line 7, in <module>'), done.stderr
    assert lines[-1] == "ValueError: the script's own error"
    frames = [line for line in lines if line.startswith('  File "')]
    assert frames == [line for line in frames if line.startswith(f'  File "{script}"')]  # the script's alone


def test_modecfg_run_runs_a_module_as_python_m_does(tmp_path: Path) -> None:
    (tmp_path / "trainer.py").write_text(SCRIPT)
    done = _run([sys.executable, "-m", "modecfg", "run", "-m", "trainer", "x", "--three"], tmp_path)
    assert done.stdout.strip() == "float32 None ['x', '--three'] True", done.stderr
    assert done.returncode == 3


def test_modecfg_run_without_a_script_or_with_a_missing_one_says_so(tmp_path: Path) -> None:
    done = _run([sys.executable, "-m", "modecfg", "run"], tmp_path)
    assert (
        done.returncode == 2 and "usage: modecfg run SCRIPT [ARGS ...] | modecfg run -m MODULE" in done.stderr
    )
    done = _run([sys.executable, "-m", "modecfg", "run", "nothere.py"], tmp_path)
    assert done.returncode == 2 and f"can't open file {str(tmp_path / 'nothere.py')!r}" in done.stderr


def test_autoload_on_off_and_status_write_and_remove_one_file(tmp_path: Path) -> None:
    import modecfg_autoload

    path = tmp_path / autoload.PTH_NAME
    assert not autoload.enabled(path) and autoload.disable(path) is False
    module = os.path.abspath(modecfg_autoload.__file__)
    assert autoload.enable(path) == path
    assert (
        path.read_text()
        == f"import os; os.path.isfile({module!r}) and __import__('modecfg_autoload').arm()\n"
    )
    assert autoload.enabled(path) and not list(tmp_path.glob(".*"))  # no temporary left
    assert autoload.enable(path) == path and autoload.enabled(path)  # twice: the same
    assert autoload.disable(path) is True and not path.exists() and not autoload.enabled(path)
    path.write_text("import something_else\n")  # a file of that name that is not ours
    with pytest.raises(ModecfgError, match="is not the file `modecfg autoload on` writes"):
        autoload.disable(path)
    assert path.read_text() == "import something_else\n"
    assert autoload.pth_path().parent == Path(__import__("sysconfig").get_paths()["purelib"])


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anything")
def test_autoload_into_a_site_packages_one_cannot_write_says_what_to_do(tmp_path: Path) -> None:
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(ModecfgError, match="a virtual environment"):
            autoload.enable(tmp_path / autoload.PTH_NAME)
    finally:
        tmp_path.chmod(0o755)


def test_autoload_into_a_directory_that_is_not_there_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ModecfgError, match=r"cannot write .*missing.*modecfg run SCRIPT"):
        autoload.enable(tmp_path / "missing" / autoload.PTH_NAME)


def _site(tmp_path: Path, code: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """Python started as with the .pth file in its site-packages: ``site.addsitedir`` reads a
    directory's .pth files as start-up does."""
    autoload.enable(tmp_path / autoload.PTH_NAME)
    prologue = f"import site, sys; site.addsitedir({str(tmp_path)!r}); "
    return _run([sys.executable, "-c", prologue + code], tmp_path, **extra)


def test_with_autoload_a_bare_script_honours_theano_flags_and_loads_nothing_before(tmp_path: Path) -> None:
    done = _site(tmp_path, "before = 'modecfg' in sys.modules; import pytensor; "
                 "print(before, pytensor.config.floatX, pytensor.config.optimizer)")  # fmt: skip
    assert done.stdout.split() == ["False", "float32", "None"], done.stderr
    off = _site(tmp_path, "import pytensor; print(pytensor.config.floatX, 'modecfg' in sys.modules)",
                MODECFG_AUTOLOAD="0")  # fmt: skip
    assert off.stdout.split() == ["float64", "False"], off.stderr
    quiet = _site(tmp_path, "import json; print('modecfg' in sys.modules, 'pytensor' in sys.modules)")
    assert quiet.stdout.split() == ["False", "False"]  # no PyTensor, nothing loaded


def test_autoload_never_breaks_pytensors_import(tmp_path: Path) -> None:
    """modecfg that cannot be imported: PyTensor imports as it is, and a log line says why."""
    code = "sys.modules['modecfg'] = None; import pytensor; print(pytensor.config.floatX)"
    done = _site(tmp_path, code)
    assert done.returncode == 0 and done.stdout.split() == ["float64"], done.stderr
    assert "modecfg autoload: modecfg could not be imported" in done.stderr


def test_armed_twice_or_after_pytensor_the_finder_is_put_in_once_or_not_at_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pytensor  # noqa: F401

    import modecfg_autoload

    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if f is not modecfg_autoload.Finder])
    modecfg_autoload.arm()  # PyTensor is imported in this process already
    assert modecfg_autoload.Finder not in sys.meta_path
    monkeypatch.delitem(sys.modules, "pytensor")
    monkeypatch.setenv("MODECFG_AUTOLOAD", " off ")
    modecfg_autoload.arm()
    assert modecfg_autoload.Finder not in sys.meta_path
    monkeypatch.delenv("MODECFG_AUTOLOAD")
    modecfg_autoload.arm()
    modecfg_autoload.arm()
    assert sys.meta_path.count(modecfg_autoload.Finder) == 1 and sys.meta_path[0] is modecfg_autoload.Finder
    assert modecfg_autoload.Finder.find_spec("numpy") is None  # only PyTensor's import is its business


def test_the_cli_says_autoload_on_off_and_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from modecfg.cli import main

    monkeypatch.setattr(autoload, "pth_path", lambda: tmp_path / autoload.PTH_NAME)
    for action, said in [
        ("status", "autoload off for"),
        ("on", "autoload on: every Python of this environment loads modecfg before PyTensor"),
        ("status", "autoload on for"),
        ("off", "autoload off: scripts that do not import modecfg"),
        ("off", "autoload off (it was not on)"),
    ]:
        out = io.StringIO()
        assert main(["autoload", action], out=out, err=io.StringIO()) == 0
        assert said in out.getvalue(), (action, out.getvalue())
    assert textwrap.dedent(SCRIPT)  # (the script above is what the end-to-end tests run)


# -- autoload never breaks an environment (issue 58) -------------------------------------------


def test_after_modecfg_is_uninstalled_its_pth_line_is_silent(tmp_path: Path) -> None:
    """pip uninstall leaves the .pth file `autoload on` wrote: Python's start says nothing."""
    import modecfg_autoload

    site_dir = tmp_path / "site"
    site_dir.mkdir()
    gone = tmp_path / "gone" / "modecfg_autoload.py"  # where the module was
    (site_dir / autoload.PTH_NAME).write_text(modecfg_autoload.line(str(gone)))
    prologue = (
        f"import site, sys; sys.modules['modecfg_autoload'] = None; site.addsitedir({str(site_dir)!r}); "
    )
    done = _run([sys.executable, "-c", prologue + "print('started')"], tmp_path)
    assert done.returncode == 0 and done.stdout == "started\n" and done.stderr == "", done.stderr
    old = site_dir / "old.pth"  # the line of earlier versions, for comparison: Python complains
    old.write_text(modecfg_autoload.LINE)
    done = _run([sys.executable, "-c", prologue + "print('started')"], tmp_path)
    assert "Error processing line 1" in done.stderr


def test_a_missing_dependency_never_fails_a_plain_compile(tmp_path: Path) -> None:
    code = (
        "sys.modules['pydantic'] = None; import numpy as np, pytensor, pytensor.tensor as pt; "
        "x = pt.vector('x'); print(pytensor.function([x], x * 2)(np.ones(2)).sum(), 'modecfg' in sys.modules)"
    )
    done = _site(tmp_path, code)
    assert done.returncode == 0 and done.stdout.split() == ["4.0", "False"], done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("modecfg")]  # its log lines
    assert said == ["modecfg autoload: modecfg could not be imported (pydantic cannot be found); "
                    "PyTensor runs without it"], done.stderr  # fmt: skip


def test_a_foreign_pth_file_of_that_name_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / autoload.PTH_NAME
    path.write_text("import their_own_thing\n")
    with pytest.raises(ModecfgError, match="is not the file `modecfg autoload on` writes: left as it is"):
        autoload.enable(path)
    assert path.read_text() == "import their_own_thing\n"


def test_an_earlier_versions_pth_file_is_ours_and_rewritten(tmp_path: Path) -> None:
    from modecfg_autoload import LINE

    path = tmp_path / autoload.PTH_NAME
    path.write_text(LINE)
    assert autoload.enabled(path) and autoload.enable(path) == path and path.read_text() != LINE


@pytest.mark.parametrize("word", ["0", "off", "OFF", " False ", "No", "oFf"])
def test_modecfg_autoload_takes_modecfgs_false_words_in_any_case(
    word: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modecfg_autoload

    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if f is not modecfg_autoload.Finder])
    monkeypatch.delitem(sys.modules, "pytensor", raising=False)
    monkeypatch.setenv("MODECFG_AUTOLOAD", word)
    modecfg_autoload.arm()
    assert modecfg_autoload.Finder not in sys.meta_path
    monkeypatch.setenv("MODECFG_AUTOLOAD", "on")
    modecfg_autoload.arm()
    assert modecfg_autoload.Finder in sys.meta_path


CHILDREN = """\
import multiprocessing, subprocess, sys

def child(queue):
    import pytensor
    queue.put(pytensor.config.floatX)

if __name__ == "__main__":
    import pytensor
    seen = [pytensor.config.floatX]
    for method in ("spawn", "forkserver"):
        ctx = multiprocessing.get_context(method)
        queue = ctx.Queue()
        p = ctx.Process(target=child, args=(queue,))
        p.start(); seen.append(queue.get(timeout=120)); p.join()
    seen.append(subprocess.run([sys.executable, "-c", "import pytensor; print(pytensor.config.floatX)"],
                               capture_output=True, text=True).stdout.strip())
    print(*seen)
"""


def test_modecfg_run_gives_spawn_forkserver_and_subprocess_children_the_same_flags(tmp_path: Path) -> None:
    """As autoload gives every Python of an environment: the Pythons a script started by
    `modecfg run` starts load modecfg before PyTensor too (THEANO_FLAGS reaches them)."""
    script = tmp_path / "children.py"
    script.write_text(CHILDREN)
    done = _run([sys.executable, "-m", "modecfg", "run", str(script)], tmp_path)
    assert done.returncode == 0 and done.stdout.split() == ["float32"] * 4, done.stderr
    plain = _run([sys.executable, str(script)], tmp_path)  # what python alone gives: PyTensor's flags
    assert plain.stdout.split() == ["float64"] * 4, plain.stderr
    off = _run([sys.executable, "-m", "modecfg", "run", str(script)], tmp_path, MODECFG_AUTOLOAD="0")
    assert off.stdout.split() == ["float32", "float64", "float64", "float64"], off.stderr


def test_the_environments_own_sitecustomize_still_runs_under_modecfg_run(tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import builtins\nbuiltins.SITE_WAS_HERE = True\n")
    script = tmp_path / "s.py"
    script.write_text(
        "import subprocess, sys\n"
        "print(subprocess.run([sys.executable, '-c', 'print(SITE_WAS_HERE)'], capture_output=True, "
        "text=True).stdout.strip())\n"
    )
    done = _run([sys.executable, "-m", "modecfg", "run", str(script)], tmp_path, PYTHONPATH=pythonpath(own))
    assert done.stdout.strip() == "True", done.stderr


@pytest.mark.parametrize(
    "own",
    [
        None,
        "import builtins\nbuiltins.SITE_WAS_HERE = True\n",
        "undefined_name\n",
        "import no_such_module_here\n",
    ],
)
def test_a_child_python_says_what_it_says_under_python_whatever_the_environments_sitecustomize(
    tmp_path: Path, own: str | None
) -> None:
    """modecfg's sitecustomize, first on a child's PYTHONPATH, runs the environment's own after
    it: none (before the fix, every child said "Error in sitecustomize ... KeyError"), one that
    works, one that fails (Python's own message about it, as without modecfg)."""
    folder = tmp_path / "own"
    folder.mkdir()
    if own is not None:
        (folder / "sitecustomize.py").write_text(own)
    script = tmp_path / "s.py"
    script.write_text(
        "import subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-c', 'print(1)'], capture_output=True, text=True)\n"
        "print(repr(done.stdout), repr(done.stderr))\n"
    )
    plain = _run([sys.executable, str(script)], tmp_path, PYTHONPATH=pythonpath(folder))
    ran = _run([sys.executable, "-m", "modecfg", "run", str(script)], tmp_path, PYTHONPATH=pythonpath(folder))
    assert ran.returncode == plain.returncode == 0
    assert ran.stdout == plain.stdout, ran.stderr
    assert plain.stdout.startswith("'1\\n'")


def test_modecfg_run_dash_m_without_a_module_says_so(tmp_path: Path) -> None:
    done = _run([sys.executable, "-m", "modecfg", "run", "-m"], tmp_path)
    assert (
        done.returncode == 2 and done.stderr == "error: -m needs a module name (modecfg run -m NAME ARGS)\n"
    )


# -- the Finder, in this process (the subprocess tests above show it end to end) -------------


class _Recorder:
    """A meta path finder that records what it was asked of PyTensor and answers ``answer``."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.asked: list[tuple[object, ...]] = []

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        if fullname != "pytensor":
            return None  # other imports (importlib's own look-ups) go on as they would
        self.asked.append((fullname, path, target))
        return self.answer


def test_the_finder_hands_pytensors_import_to_the_first_finder_after_it_that_knows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import modecfg_autoload
    from modecfg_autoload import Finder

    silent, knows, later = _Recorder(None), _Recorder("the spec"), _Recorder("another spec")
    no_find_spec = object()  # a legacy finder: skipped, and the search goes on past it
    monkeypatch.setattr(sys, "meta_path", [Finder, no_find_spec, silent, knows, later])
    monkeypatch.setattr(Finder, "done", False)
    monkeypatch.setattr(modecfg_autoload, "NEEDS", ("os",))  # all there
    path, target = ["a path"], object()
    assert Finder.find_spec("pytensor.tensor", path, target) is None and not Finder.done  # not its name
    assert Finder.find_spec("PyTensor") is None and not Finder.done
    assert Finder.find_spec("pytensor", path, target) == "the spec"
    assert silent.asked == knows.asked == [("pytensor", path, target)] and later.asked == []
    assert Finder.done
    assert Finder.find_spec("pytensor", path, target) is None  # once: inert after
    assert len(knows.asked) == 1


def test_the_finder_steps_aside_with_one_log_line_naming_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    import modecfg_autoload
    from modecfg_autoload import Finder

    knows = _Recorder("the spec")
    monkeypatch.setattr(sys, "meta_path", [Finder, knows])
    monkeypatch.setattr(Finder, "done", False)
    monkeypatch.setattr(modecfg_autoload, "NEEDS", ("os", "no_such_module_a", "no_such_module_b"))
    with caplog.at_level(logging.WARNING, logger="modecfg"):
        assert Finder.find_spec("pytensor") is None  # PyTensor's own finders go on without modecfg
    assert knows.asked == [] and Finder.done
    said = [(r.name, r.getMessage()) for r in caplog.records]
    assert said == [
        (
            "modecfg",
            "modecfg autoload: modecfg could not be imported (no_such_module_a, no_such_module_b cannot be "
            "found); PyTensor runs without it",
        )
    ]


def test_missing_names_the_modules_that_cannot_be_found_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg_autoload import _missing

    monkeypatch.setitem(sys.modules, "blocked_module", None)  # find_spec raises ValueError for it
    assert _missing(["os", "no_such_module_a", "json", "blocked_module", "no_such_module_b"]) == [
        "no_such_module_a",
        "blocked_module",
        "no_such_module_b",
    ]
    assert _missing([]) == []


def test_only_the_one_line_autoload_writes_is_taken_for_its_file() -> None:
    from modecfg.autoload import _ours
    from modecfg_autoload import LINE, line

    assert _ours(line("/any/place/modecfg_autoload.py")) and _ours(line("/é/ü.py")) and _ours(LINE)
    one = line("/a/modecfg_autoload.py")
    assert not _ours(one[:-1] + "\n" + one)  # two lines: the head of ours and a tail of ours
    assert not _ours(one + "import something_else\n")  # ours, then a line of another's
    assert not _ours("import something_else\n" + one)
    assert not _ours(one.replace("arm()", "arm(); run()"))
    assert not _ours("")


def test_an_autoload_file_that_cannot_be_removed_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pth = tmp_path / "modecfg-autoload.pth"
    autoload.enable(pth)

    def refuse(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "unlink", refuse)
    with pytest.raises(ModecfgError) as raised:
        autoload.disable(pth)
    assert str(raised.value) == f"cannot remove {pth} (Permission denied)"

    def fail(self: Path, missing_ok: bool = False) -> None:
        raise OSError("no reason given")

    monkeypatch.setattr(Path, "unlink", fail)
    with pytest.raises(ModecfgError) as raised:
        autoload.disable(pth)
    assert str(raised.value) == f"cannot remove {pth} (no reason given)"


def test_the_suite_never_sees_the_real_site_packages() -> None:
    """The guard of tests/conftest.py: autoload's file would go to a directory of the suite's."""
    import site

    real = {Path(p).resolve() for p in site.getsitepackages()}
    assert autoload.pth_path().parent.resolve() not in real
    assert autoload.pth_path().parent.is_dir()


def test_a_place_autoload_cannot_write_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    from modecfg import autoload
    from modecfg.errors import ModecfgError

    path = tmp_path / "missing" / "modecfg-autoload.pth"  # its directory is not there
    with pytest.raises(ModecfgError) as caught:
        autoload.enable(path)
    assert str(caught.value) == (
        f"cannot write {path} (No such file or directory): autoload needs a Python environment you can "
        "write to (a virtual environment: python -m venv .venv, then .venv/bin/modecfg autoload on); or "
        "run one script with `modecfg run SCRIPT`"
    )
    assert not tmp_path.joinpath("missing").exists()
