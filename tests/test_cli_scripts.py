"""``modecfg check-float32`` and ``modecfg profile`` end as ``python SCRIPT`` would (issue 20):
the script's exit status and message are passed on, ``os._exit`` loses nothing, and output
paths are resolved before the script runs (it may change directory)."""

from __future__ import annotations

import io
import json
import os
import textwrap
from pathlib import Path

import pytest

import modecfg
from modecfg.cli import main

pytest.importorskip("pytensor")

# A float64 finding under floatX=float32 (int32 * float32 -> float64), then the script's ending.
SCRIPT = """\
import sys, os
import numpy as np
import pytensor, pytensor.tensor as pt
import modecfg
modecfg.config.floatX = "float32"
i = pt.ivector("i"); x = pt.vector("x")
f = modecfg.function([i, x], i * x)
f(np.ones(2, dtype="int32"), np.ones(2, dtype="float32"))
{ending}
"""


def _script(tmp_path: Path, ending: str) -> Path:
    path = tmp_path / "s.py"
    path.write_text(SCRIPT.format(ending=textwrap.dedent(ending)))
    return path


def _cli(*argv: str) -> tuple[int, str, str]:
    """The command in this process; what it and the script assign is reset after it."""
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(list(argv), out, err)
    finally:
        for name in ("floatX", "profile"):  # the script's assignment, and modecfg profile's
            modecfg.config.reset(name)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", ["check-float32", "profile"])
@pytest.mark.parametrize(
    ("ending", "status", "message"),
    [("sys.exit(3)", 3, ""), ('raise SystemExit("bad thing")', 1, "bad thing\n"), ("sys.exit()", None, "")],
    ids=["exit 3", "exit with a message", "exit None"],
)
def test_the_scripts_exit_status_and_message_are_passed_on(
    tmp_path: Path, command: str, ending: str, status: int | None, message: str
) -> None:
    code, out, err = _cli(command, str(_script(tmp_path, ending)))
    if status is None:  # a clean exit: the command's own status (1 for check-float32's finding)
        assert code == (1 if command == "check-float32" else 0)
    else:
        assert code == status
    assert err == message
    assert "Mul" in out and (command == "check-float32" or "Profile of function compiled at" in out)


@pytest.mark.parametrize("command", ["check-float32", "profile", "compare"])
def test_os_exit_in_the_script_loses_no_report_and_still_ends_the_process(
    tmp_path: Path, command: str
) -> None:
    """os._exit ends the process at once, with its status, as under python (its finally blocks
    do not run); the command's report of what ran is written first."""
    import subprocess
    import sys

    script = _script(tmp_path, "try:\n    os._exit(7)\nfinally:\n    print('finally ran')")
    done = subprocess.run([sys.executable, "-m", "modecfg", command, str(script)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 7 and "finally ran" not in done.stdout
    said = {"check-float32": "float64 enters at 1 line(s)", "profile": "Profile of", "compare": "compare: "}
    assert said[command] in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("command", ["check-float32", "profile", "compare"])
def test_os_exit_in_the_script_is_reported_first_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The same, in this process (the real exit stood in for): the report is written before the
    exit, with the script's status."""
    from modecfg import scripts

    class Ended(BaseException):
        pass

    def ended(status: int) -> None:
        raise Ended(status)

    monkeypatch.setattr(os, "_exit", os._exit)  # the command puts "the real exit" (ended) back: undone after
    monkeypatch.setattr(scripts, "_real_exit", ended)
    out, err = io.StringIO(), io.StringIO()
    script = _script(tmp_path, "os._exit(7)")
    with pytest.raises(Ended) as caught:
        try:
            main([command, str(script)], out, err)
        finally:
            for name in ("floatX", "profile"):
                modecfg.config.reset(name)
    assert caught.value.args == (7,)
    said = {"check-float32": "float64 enters at 1 line(s)", "profile": "Profile of", "compare": "compare: "}
    assert said[command] in out.getvalue(), out.getvalue() + err.getvalue()


def test_the_real_os_exit_is_back_after_a_command(tmp_path: Path) -> None:
    _cli("check-float32", str(_script(tmp_path, "")))
    assert os._exit.__module__ in ("posix", "nt")


def test_output_paths_are_resolved_before_the_script_changes_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path, f"os.chdir({str(tmp_path / 'elsewhere')!r})")
    code, _, err = _cli("profile", str(script), "--json", "out/p.json")
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "p.json").read_text())
    assert not (tmp_path / "elsewhere" / "out").exists()
    assert Path.cwd() == tmp_path


def test_reports_of_a_script_in_a_directory_named_in_no_utf8_are_written_whole(tmp_path: Path) -> None:
    """Round five: a directory named in Latin-1 under LANG=C (its name read as surrogates):
    the HTML report was a traceback and an empty file."""
    import subprocess
    import sys

    folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.mkdir(folder)
    with open(os.path.join(folder, b"prof.py"), "w") as fh:
        fh.write("import numpy as np, pytensor, pytensor.tensor as pt\nx = pt.vector('x')\n"
                 "pytensor.function([x], x * 2)(np.ones(3))\n")  # fmt: skip
    env = {**os.environ, "LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"}
    script = os.path.join(b"caf\xe9", b"prof.py")
    command = [sys.executable, "-m", "modecfg", "profile", script, "--html", "p.html"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert page.endswith("</html>\n") and "caf\\udce9" in page
    assert not list(tmp_path.glob(".modecfg-*.tmp"))


def test_check_float32_says_floatx_first(tmp_path: Path) -> None:
    """Issue 60: under floatX=float64 it listed findings without saying floatX was float64."""
    script = tmp_path / "plain.py"
    script.write_text(
        "import pytensor, pytensor.tensor as pt\nx = pt.vector('x')\npytensor.function([x], x * 2)\n"
    )
    code, out, _ = _cli("check-float32", str(script))
    assert code == 1 and out.startswith("floatX=float64 (from ") and "every float64 the graphs take" in out
    with modecfg.config.override(floatX="float32"):
        code, out, _ = _cli("check-float32", str(script))
    assert code == 0 and out.startswith("float32 check: no float64")


def test_comparemode_by_flag_under_modecfg_run_ends_with_its_verdict(tmp_path: Path) -> None:
    """Issue 60: THEANO_FLAGS=mode=CompareMode modecfg run train.py ended with no verdict."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(
        "import numpy as np, pytensor, pytensor.tensor as pt\n"
        "x = pt.vector('x')\nf = pytensor.function([x], pt.exp(x) * 2)\n"
        "for _ in range(3):\n    f(np.ones(2))\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env["THEANO_FLAGS"] = "mode=CompareMode,CompareMode.linkers=py"
    done = subprocess.run([sys.executable, "-m", "modecfg", "run", str(script)], capture_output=True,
                          text=True, timeout=300, env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1].startswith("compare: 3 calls of 1 functions agree on "), done.stderr
    plain = subprocess.run([sys.executable, "-m", "modecfg", "run", str(script)], capture_output=True,
                           text=True, timeout=300, cwd=tmp_path)  # fmt: skip
    assert "compare:" not in plain.stderr
