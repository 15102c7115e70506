"""modecfg set / unset: in-place edits that keep every other byte, refuse bad values, and survive kills."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modecfg
from modecfg.configuration.edit import default_rc_file, set_flag, unset_flag
from tests.fresh import pythonpath

ROOT = Path(__file__).resolve().parents[2]

INI = """\
# my settings; keep this comment
[global]
floatX = float64   # for now
device=cpu

[traceback]
limit = 3

[custom_tool]   # not modecfg's
foo = bar
"""


def _flag(path: Path, name: str) -> object:
    """The value the file gives ``name``, read back by ``modecfg.load`` as a user's process reads
    it (not by the check ``set_flag`` makes before it writes). Other tools' sections, which
    modecfg refuses to load, are left out of a copy first; everything else is read as written."""
    kept, skipping = [], False
    for line in path.read_text().splitlines(keepends=True):
        if line.lstrip().startswith("["):
            skipping = line.lstrip().startswith(("[custom_tool]", "[other]"))
        if not skipping:
            kept.append(line)
    copy = path.with_name("readback-" + path.name)  # the same suffix: .toml is read as TOML
    copy.write_text("".join(kept))
    cfg = modecfg.load(env={}, rc_files=[copy])
    return cfg[name] if not cfg.is_default(name) else None


def _rc(tmp_path: Path, text: str = INI, name: str = "rc") -> Path:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o640)
    return path


def test_setting_an_existing_flag_changes_its_value_only(tmp_path: Path) -> None:
    rc = _rc(tmp_path)
    edit = set_flag("floatX", "float32", str(rc))
    assert edit.changed and edit.line == 3
    assert rc.read_text() == INI.replace("floatX = float64   # for now", "floatX = float32   # for now")
    assert (tmp_path / "rc.bak").read_text() == INI
    assert stat.S_IMODE(rc.stat().st_mode) == 0o640
    assert _flag(rc, "floatX") == "float32"


def test_a_new_flag_goes_to_the_end_of_its_section_or_a_new_one(tmp_path: Path) -> None:
    rc = _rc(tmp_path)
    set_flag("traceback.compile_limit", "5", str(rc))
    set_flag("NanGuardMode.big", "1e8", str(rc))
    text = rc.read_text()
    assert text.startswith(
        INI.split("[custom_tool]")[0].replace("limit = 3\n", "limit = 3\ncompile_limit = 5\n")
    )
    assert text.endswith("foo = bar\n\n[NanGuardMode]\nbig = 1e8\n")
    assert [_flag(rc, n) for n in ("traceback.compile_limit", "NanGuardMode.big", "traceback.limit")] == [
        5,
        1e8,
        3,
    ]


def test_unset_removes_the_setting_and_nothing_else(tmp_path: Path) -> None:
    rc = _rc(tmp_path)
    assert unset_flag("device", str(rc)).changed
    assert rc.read_text() == INI.replace("device=cpu\n", "")
    assert not unset_flag("device", str(rc)).changed  # said, not an error


def test_a_bad_value_or_an_unknown_flag_changes_nothing(tmp_path: Path) -> None:
    rc = _rc(tmp_path)
    with pytest.raises(modecfg.FlagValueError, match="float33"):
        set_flag("floatX", "float33", str(rc))
    with pytest.raises(modecfg.UnknownFlagError, match="did you mean floatX"):
        set_flag("floatx", "float32", str(rc))
    with pytest.raises(modecfg.RcFileError, match="would not give"):
        set_flag("blas.ldflags", "-lfoo # not a comment", str(rc))  # the reader would cut it
    assert rc.read_text() == INI and not (tmp_path / "rc.bak").exists()


def test_toml_keeps_its_comments_and_layout(tmp_path: Path) -> None:
    text = '# mine\nfloatX = "float64"  # for now\n\n[traceback]  # frames\nlimit = 3\n\n[other]\nx = 1\n'
    rc = _rc(tmp_path, text, "rc.toml")
    set_flag("floatX", "float32", str(rc))
    set_flag("traceback.limit", "-1", str(rc))
    set_flag("allow_gc", "off", str(rc))
    out = rc.read_text()
    assert out.startswith("# mine\n") and "# for now" in out and "[traceback]  # frames" in out
    assert "[other]\nx = 1" in out
    assert [_flag(rc, n) for n in ("floatX", "traceback.limit", "allow_gc")] == ["float32", -1, False]
    unset_flag("traceback.limit", str(rc))
    assert _flag(rc, "traceback.limit") is None and "[traceback]  # frames" in rc.read_text()


def test_the_default_file_is_the_one_that_sets_the_flag(tmp_path: Path) -> None:
    first, second = (
        _rc(tmp_path, "[global]\ndevice = cpu\n", "a"),
        _rc(tmp_path, "[global]\nfloatX = float32\n", "b"),
    )
    env = {"HOME": str(tmp_path), "MODECFGRC": f"{first}{os.pathsep}{second}"}
    assert default_rc_file("floatX", env) == str(second)
    assert default_rc_file("traceback.limit", env) == str(first)  # set nowhere: the first existing one
    assert default_rc_file("floatX", {"HOME": str(tmp_path / "nobody")}) == str(
        tmp_path / "nobody" / ".theanorc"
    )


def test_the_cli_says_which_file_and_what_else_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.cli import main

    rc = _rc(tmp_path, INI.split("[custom_tool]")[0])
    monkeypatch.setenv("MODECFGRC", str(rc))
    monkeypatch.setenv("THEANO_FLAGS", "floatX=float16")
    import io

    out = io.StringIO()
    assert main(["set", "floatX", "float32"], out, io.StringIO()) == 0
    said = out.getvalue()
    assert f"floatX = 'float32' set in {rc} (line 3)" in said
    assert f"kept as {rc}.bak" in said
    assert "note: THEANO_FLAGS also sets floatX, and that is what counts here" in said


@pytest.mark.parametrize(
    "words",
    [["set", "blas.ldflags", "-lopenblas"], ["set", "blas.ldflags", "--", "-lopenblas"],
     ["set", "--file", "{rc}", "blas.ldflags", "-lopenblas"],
     ["set", "blas.ldflags", "-lopenblas", "--file={rc}"]],
    ids=["value", "after --", "--file first", "--file= last"],
)  # fmt: skip
def test_the_cli_takes_a_value_that_starts_with_a_dash(
    tmp_path: Path, words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fix modecfg's own BLAS notice recommends was an argparse error (issue 31, item 9)."""
    import io

    from modecfg.cli import main

    rc = tmp_path / "rc.ini"
    rc.write_text("[global]\nfloatX = float32\n")
    monkeypatch.setenv("MODECFGRC", str(rc))
    out, err = io.StringIO(), io.StringIO()
    assert main([w.format(rc=rc) for w in words], out, err) == 0, err.getvalue()
    assert "[blas]\nldflags = -lopenblas" in rc.read_text()
    assert modecfg.load(env={"MODECFGRC": str(rc)}).blas.ldflags == "-lopenblas"


# -- a writer killed at any step leaves the old file or the new one ------------------------------

KILLER = """
import os, signal, sys
sys.path.insert(0, {root!r})
from modecfg.configuration import edit
target, nth = {target!r}, {nth}
real = getattr(os, target)
calls = []
def dying(*args, **kwargs):
    calls.append(1)
    if len(calls) == nth:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)
setattr(os, target, dying)
edit.set_flag("floatX", "float32", {path!r})
print("finished")
"""


@pytest.mark.parametrize(
    ("target", "nth"),
    [
        ("fsync", 1),
        ("chmod", 1),
        ("link", 1),
        ("unlink", 1),
        ("fsync", 2),
        ("fsync", 3),
        ("chmod", 2),
        ("replace", 1),
        ("fsync", 4),
    ],
)
def test_a_writer_killed_between_any_two_steps_leaves_a_whole_file(
    tmp_path: Path, target: str, nth: int
) -> None:
    rc = _rc(tmp_path)
    code = KILLER.format(root=str(ROOT), target=target, nth=nth, path=str(rc))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    new = INI.replace("floatX = float64", "floatX = float32")
    assert proc.returncode == -9, proc.stderr  # it was killed at that step
    assert rc.read_text() in (INI, new)
    assert stat.S_IMODE(rc.stat().st_mode) == 0o640
    backup = tmp_path / "rc.bak"
    assert not backup.exists() or backup.read_text() == INI
    set_flag("floatX", "float32", str(rc))  # a leftover temporary file does not get in the way
    assert rc.read_text() == new


# -- every other byte is kept, whatever the file holds --------------------------------------------

_OTHER_LINES = st.sampled_from(
    [
        "# a comment",
        "; another",
        "",
        "   ",
        "device = cpu",
        "traceback.limit = 2",
        "cxx =",
        "unknown_section_value = 1",
    ]
)


@settings(max_examples=60, deadline=None)
@given(before=st.lists(_OTHER_LINES, max_size=6), after=st.lists(_OTHER_LINES, max_size=6))
def test_only_the_flag_s_line_changes(
    tmp_path_factory: pytest.TempPathFactory, before: list[str], after: list[str]
) -> None:
    lines = [*before, "floatX = float64  # keep me", *after]
    lines = [ln for ln in lines if ln != "unknown_section_value = 1"]
    seen: set[str] = set()
    unique = []
    for line in lines:  # a flag set twice in one section is an error of the file itself
        key = line.split("=")[0].strip()
        if "=" in line and key in seen:
            continue
        seen.add(key)
        unique.append(line)
    text = "[global]\n" + "\n".join(unique) + "\n[tool]\nx = 1\n"
    rc = tmp_path_factory.mktemp("rc") / "rc"
    rc.write_text(text)
    set_flag("floatX", "float32", str(rc))
    assert rc.read_text() == text.replace("floatX = float64  # keep me", "floatX = float32  # keep me")
    unset_flag("floatX", str(rc))
    assert rc.read_text() == text.replace("floatX = float64  # keep me\n", "")


def test_an_rc_path_that_is_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(modecfg.RcFileError, match="is a directory, not an rc file"):
        set_flag("floatX", "float32", str(tmp_path))
    with pytest.raises(modecfg.RcFileError, match="is a directory, not an rc file"):
        unset_flag("floatX", str(tmp_path))


def test_unset_removes_an_obsolete_or_unknown_name_it_is_the_fix_for_it(tmp_path: Path) -> None:
    """``modecfg unset lib.cnmem`` is what the obsolete-flag warning asks for: it removes the name,
    in INI and TOML, and nothing else; a name the file does not have, and no flag has, is refused."""
    rc = tmp_path / "theanorc"
    rc.write_text(
        "[global]\nfloatX = float32  # ours\n[lib]\ncnmem = .75\nBogus_Thing = 1\n[nvcc]\nfastmath = True\n"
    )
    assert unset_flag("lib.cnmem", str(rc)).changed
    assert unset_flag("nvcc__fastmath", str(rc)).flag == "nvcc.fastmath"
    edit = unset_flag("lib.bogus_thing", str(rc))  # unknown: as written, case folded as INI reads it
    assert edit.changed and edit.line == 4
    assert rc.read_text() == "[global]\nfloatX = float32  # ours\n[lib]\n[nvcc]\n"
    assert unset_flag("lib.cnmem", str(rc)).changed is False  # gone: nothing to do, no error
    with pytest.raises(
        modecfg.UnknownFlagError, match=r"'flaotX'.*does not set it either; did you mean floatX"
    ):
        unset_flag("flaotX", str(rc))
    toml = tmp_path / "rc.toml"
    toml.write_text('floatX = "float32"\n\n[lib]\ncnmem = 0.5  # old\n')
    assert unset_flag("lib.cnmem", str(toml)).changed
    assert toml.read_text() == 'floatX = "float32"\n\n[lib]\n'


def test_a_bad_value_given_to_set_is_said_to_come_from_the_command_line(tmp_path: Path) -> None:
    rc = tmp_path / "theanorc"
    rc.write_text("[global]\nfloatX = float32\n")
    with pytest.raises(modecfg.FlagValueError) as caught:
        set_flag("floatX", "float33", str(rc))
    assert f"floatX='float33' (from the command line, for {rc}): not a valid choice" in str(caught.value)
    assert rc.read_text() == "[global]\nfloatX = float32\n"


def test_set_refuses_an_obsolete_name_and_says_unset_removes_it(tmp_path: Path) -> None:
    with pytest.raises(modecfg.UnknownFlagError, match=r"obsolete.*modecfg unset lib\.cnmem removes it"):
        set_flag("lib.cnmem", "0.5", str(tmp_path / "rc"))


def test_set_and_validate_say_a_files_obsolete_flags_once(tmp_path: Path) -> None:
    """Issue 50: every set re-printed each obsolete flag's warning, and validate printed each twice
    (its report on stdout, the warning on stderr)."""
    rc = tmp_path / "theanorc"
    rc.write_text("[global]\nfloatX = float32\n[lib]\ncnmem = .75\n[nvcc]\nfastmath = True\n")
    env = {**os.environ, "THEANORC": str(rc), "PYTHONPATH": pythonpath()}
    env.pop("THEANO_FLAGS", None)
    edit = subprocess.run([sys.executable, "-m", "modecfg", "set", "floatX", "float64", "--file", str(rc)],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert edit.returncode == 0 and "ObsoleteFlagWarning" not in edit.stderr, edit.stderr
    assert edit.stdout.count("obsolete") == 1
    said = "note: 2 obsolete flags here too (lib.cnmem, nvcc.fastmath): modecfg validate says why"
    assert said in edit.stdout
    check = subprocess.run([sys.executable, "-m", "modecfg", "validate"], env=env, capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    assert check.stderr == "" and check.stdout.count("lib.cnmem is obsolete") == 1, check.stderr
