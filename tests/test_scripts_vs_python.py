"""``modecfg run`` is ``python SCRIPT``: a corpus of scripts run both ways, in fresh processes,
comparing standard output, standard error, the exit status and the files left behind. What a
script prints is what it saw (``sys.argv``, ``__file__``, ``sys.path[0]``, warnings, pickles of
its classes from a thread and an ``atexit`` handler, ``os._exit`` in a thread and in a forked
child inside a ``TemporaryDirectory``), so a difference in any of them shows here. modecfg's own
lines on standard error (its notes about this machine) are left out of the comparison.

``modecfg compare``, ``profile`` and ``check-float32`` run scripts through the same runner
(:mod:`modecfg.scripts`): the corpus's exit statuses and files are compared for them too."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SCRIPTS: dict[str, str] = {
    "argv": """
        import os, sys
        print(sys.argv, os.path.isabs(__file__), os.path.basename(__file__), __name__)
        print(os.path.basename(sys.path[0]), __doc__, __package__, __spec__)
    """,
    "exit_code": """
        import sys
        print("before")
        sys.exit(3)
    """,
    "exit_message": """
        raise SystemExit("a message of its own")
    """,
    "exception": """
        def inner():
            raise ValueError("boom")
        inner()
    """,
    "excepthook": """
        import sys
        def hook(kind, value, tb):
            print("hook saw", kind.__name__, value, tb.tb_frame.f_code.co_name, file=sys.stderr)
        sys.excepthook = hook
        raise KeyError("k")
    """,
    # not "warnings": a script named warnings.py shadows the module where the interpreter's start
    # did not import it (python -c, a bare interpreter), and python and modecfg run then differ
    "warns": """
        import warnings
        warnings.warn("careful", UserWarning)
        print("after the warning")
    """,
    "pickle_later": """
        import atexit, pickle, threading
        class Point:
            def __init__(self, x): self.x = x
        def later():
            print("thread", pickle.loads(pickle.dumps(Point(2))).x, flush=True)
        t = threading.Thread(target=later)
        atexit.register(lambda: print("atexit", pickle.loads(pickle.dumps(Point(3))).x, flush=True))
        import time
        def delayed():
            time.sleep(0.2)
            later()
        threading.Thread(target=delayed).start()
        print("body done", flush=True)
    """,
    "os_exit_thread": """
        import os, threading, time
        def watchdog():
            os._exit(3)
        try:
            threading.Thread(target=watchdog).start()
            time.sleep(5)
            print("not reached")
        finally:
            print("finally ran", flush=True)
    """,
    "fork_child": """
        import multiprocessing, os, sys, tempfile
        def child(path):
            with open(path, "w") as f:
                f.write("checkpoint")
            os._exit(0)
        if __name__ == "__main__":
            ctx = multiprocessing.get_context("fork")
            with tempfile.TemporaryDirectory(dir=".") as d:
                path = os.path.join(d, "ckpt")
                p = ctx.Process(target=child, args=(path,))
                p.start(); p.join()
                print("exitcode", p.exitcode, "kept", open(path).read(), flush=True)
            print("removed", not os.path.exists(d))
    """,
    "future_annotations": """
        def f(x: undefined_name) -> None: pass
        print(f.__annotations__ if False else "annotations evaluated")
    """,
    "child_python": """
        import subprocess, sys
        done = subprocess.run([sys.executable, "-c", "import sys; print('child', sys.argv)"],
                              capture_output=True, text=True)
        print(done.returncode, repr(done.stdout), repr(done.stderr))
    """,
    "spawn_pool": """
        import multiprocessing
        def square(x):
            return x * x
        if __name__ == "__main__":
            for method in ("spawn", "forkserver"):
                with multiprocessing.get_context(method).Pool(2) as pool:
                    print(method, pool.map(square, [1, 2, 3]), flush=True)
    """,
    "type_hints": """
        from __future__ import annotations
        import dataclasses, enum, inspect, pickle, sys, typing
        @dataclasses.dataclass
        class P:
            x: int
            y: typing.ClassVar[int] = 3
        class Q:
            a: P
        class Color(enum.Enum):
            RED = 1
        print(typing.get_type_hints(Q), [f.name for f in dataclasses.fields(P)])
        print(pickle.loads(pickle.dumps(Color.RED)), pickle.loads(pickle.dumps(P(1))))
        def f():
            return 1
        print(inspect.getsource(f).strip(), inspect.getmodule(f).__name__)
        print(sys.modules["__main__"].__dict__ is globals(), type(__builtins__).__name__)
        print(type(__loader__).__name__, __loader__.name, __loader__.path == __file__)
    """,
    "cookie": "# -*- coding: latin-1 -*-\nprint(repr('\xe9'))\n",
    "writes_a_file": """
        with open("out.txt", "w") as f:
            f.write("data")
        print(open("out.txt").read())
    """,
}

ARGS = ["a", "--", "-x", "--flag=1", ""]
SIDES = (("python", [sys.executable]), ("modecfg", [sys.executable, "-m", "modecfg", "run"]))


def _normal(text: str, tmp: Path) -> str:
    """Output with the place it ran in named alike, and modecfg's own notes left out."""
    text = text.replace(str(tmp.resolve()), "TMP").replace(str(tmp), "TMP")
    text = re.sub(r"0x[0-9a-f]+", "0x", text)
    return "\n".join(line for line in text.splitlines() if not line.startswith("modecfg: "))


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str, list[str]]:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, env=env,
                          encoding="latin-1")  # fmt: skip
    files = sorted(str(p.relative_to(cwd)) for p in cwd.rglob("*") if "__pycache__" not in p.parts)
    return done.returncode, _normal(done.stdout, cwd), _normal(done.stderr, cwd), files


def _both(
    tmp_path: Path, name: str, body: str, how: list[str], args: list[str], env: dict[str, str] | None = None
) -> None:
    results = []
    for side, command in SIDES:
        place = tmp_path / side / "work"
        place.mkdir(parents=True)
        if body.startswith("# -*-"):
            (place / f"{name}.py").write_bytes(body.encode("latin-1"))
        else:
            (place / f"{name}.py").write_text(textwrap.dedent(body))
        target = [a.replace("SCRIPT", f"{name}.py") for a in how]
        results.append(_run([*command, *target, *args], place, env))
    assert results[0] == results[1], f"python: {results[0]}\nmodecfg: {results[1]}"


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_runs_as_python_runs_it(tmp_path: Path, name: str) -> None:
    _both(tmp_path, name, SCRIPTS[name], ["SCRIPT"], ARGS)


@pytest.mark.parametrize("filters", ["error", "ignore"])
def test_pythonwarnings_is_honoured(tmp_path: Path, filters: str) -> None:
    env = {**os.environ, "PYTHONWARNINGS": filters}
    _both(tmp_path, "warns", SCRIPTS["warns"], ["SCRIPT"], [], env)


def _side_by_side(tmp_path: Path, lay_out: Callable[[Path], list[str]]) -> tuple[Any, Any]:
    """``lay_out`` makes the files in a fresh folder of each side and gives the words after the
    command; each side runs there: python's result, modecfg's."""
    results = []
    for side, command in SIDES:
        place = tmp_path / side / "work"
        place.mkdir(parents=True)
        results.append(_run([*command, *lay_out(place)], place))
    return results[0], results[1]


def test_a_module_keeps_every_argument(tmp_path: Path) -> None:
    def lay_out(place: Path) -> list[str]:
        (place / "pkg").mkdir()
        (place / "pkg" / "__init__.py").write_text("")
        (place / "pkg" / "tool.py").write_text(
            "import os, sys\n"
            "print(os.path.basename(sys.argv[0]), sys.argv[1:], sys.path[0] == os.getcwd(), __name__)\n"
        )
        return ["-m", "pkg.tool", "x", "--", "y", "-m"]

    python, ours = _side_by_side(tmp_path, lay_out)
    assert python == ours and "['x', '--', 'y', '-m']" in python[1]


def test_a_symlinked_script_sees_its_real_directory_first(tmp_path: Path) -> None:
    def lay_out(place: Path) -> list[str]:
        (place / "real").mkdir()
        (place / "real" / "helper.py").write_text("WHERE = 'real'\n")
        (place / "real" / "s.py").write_text(
            "import os, sys, helper\n"
            "print(helper.WHERE, os.path.basename(sys.path[0]), __file__.endswith('s.py'))\n"
        )
        (place / "link.py").symlink_to(place / "real" / "s.py")
        return ["link.py"]

    python, ours = _side_by_side(tmp_path, lay_out)
    assert python == ours
    assert python[1] == "real real False"  # __file__ is the link's path, sys.path[0] its target's


@pytest.mark.parametrize("kind", ["directory", "zip"])
def test_a_directory_or_zip_with_a_main_runs_it(tmp_path: Path, kind: str) -> None:
    def lay_out(place: Path) -> list[str]:
        app = place / "app"
        app.mkdir()
        (app / "__main__.py").write_text(
            "import sys, helper\nprint('main of', helper.NAME, sys.argv[1:], __name__)\n"
        )
        (app / "helper.py").write_text("NAME = 'app'\n")
        if kind == "directory":
            return ["app", "1", "--", "2"]
        with zipfile.ZipFile(place / "app.zip", "w") as z:
            z.write(app / "__main__.py", "__main__.py")
            z.write(app / "helper.py", "helper.py")
        shutil.rmtree(app)
        return ["app.zip", "1", "--", "2"]

    python, ours = _side_by_side(tmp_path, lay_out)
    assert python == ours and "main of app ['1', '--', '2'] __main__" in python[1]


def test_a_forked_childs_exit_leaves_the_parents_files(tmp_path: Path) -> None:
    """The report's loss: the child's os._exit was a SystemExit that ran the parent's finally."""
    _both(tmp_path, "fork_child", SCRIPTS["fork_child"], ["SCRIPT"], [])
    place = tmp_path / "modecfg" / "work"
    out = subprocess.run([sys.executable, "-m", "modecfg", "run", "fork_child.py"], cwd=place,
                         capture_output=True, text=True, timeout=120).stdout  # fmt: skip
    assert "exitcode 0 kept checkpoint" in out


@pytest.mark.parametrize("command", ["compare", "profile", "check-float32"])
@pytest.mark.parametrize("name", ["os_exit_thread", "fork_child", "exit_code", "pickle_later"])
def test_the_other_commands_that_run_a_script_keep_its_exits_and_files(
    tmp_path: Path, command: str, name: str
) -> None:
    results = []
    for side, prefix in (
        ("python", [sys.executable]),
        ("modecfg", [sys.executable, "-m", "modecfg", command]),
    ):
        place = tmp_path / side / "work"
        place.mkdir(parents=True)
        (place / f"{name}.py").write_text(textwrap.dedent(SCRIPTS[name]))
        code, out, _, files = _run([*prefix, f"{name}.py"], place)
        results.append((code, files, [line for line in out.splitlines() if line in _SCRIPT_LINES[name]]))
    python, ours = results
    assert ours[1] == python[1]  # the same files left
    assert ours[2] == python[2]  # the script's own lines, in order
    if name in ("os_exit_thread", "exit_code"):
        assert ours[0] == python[0]  # its exit status where it chose one


_SCRIPT_LINES = {
    "os_exit_thread": {"not reached", "finally ran"},
    "fork_child": {"exitcode 0 kept checkpoint", "removed True"},
    "exit_code": {"before"},
    "pickle_later": {"body done", "thread 2", "atexit 3"},
}
