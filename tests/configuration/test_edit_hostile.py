"""modecfg set / unset under hostile conditions (issue 20): many writers at once, links, byte
order marks, files that are not text or not TOML, directories and files the user may not write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import modecfg
from modecfg.configuration.edit import set_flag, unset_flag
from modecfg.errors import RcFileError

FLAGS = ["traceback.limit", "DebugMode.patience", "profiling.n_apply", "profiling.n_ops"]


def _read(path: Path) -> modecfg.Config:
    """The file as a user's next program reads it."""
    return modecfg.load(env={}, rc_files=[str(path)])


def test_twenty_concurrent_set_processes_lose_no_edit(tmp_path: Path) -> None:
    rc = tmp_path / "shared.theanorc"
    rc.write_text("[global]\nfloatX = float64\n")
    code = (
        "import sys\n"
        "from modecfg.configuration.edit import set_flag\n"
        "set_flag(sys.argv[1], sys.argv[2], sys.argv[3])\n"
    )
    # every process sets a different flag
    jobs = [(FLAGS[i], str(10 + i)) for i in range(len(FLAGS))]
    jobs += [(name, "1") for name in ("DebugMode.check_strides", "openmp", "profile", "scan.allow_gc")]
    jobs += [(name, "true") for name in ("nocleanup", "profile_memory", "profile_optimizer", "numba.cache")]
    jobs += [(name, "false") for name in ("allow_gc", "check_input", "numba.fastmath", "DebugMode.check_py")]
    jobs += [(name, "warn") for name in ("on_unused_input", "on_shape_error")]
    jobs += [("exception_verbosity", "high"), ("cycle_detection", "fast")]
    assert len(jobs) == 20
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, name, value, str(rc)], stderr=subprocess.PIPE, text=True
        )
        for name, value in jobs
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    cfg = _read(rc)
    expected = {
        name: modecfg.load(env={}, rc_files=[], assignments={name: value})[name] for name, value in jobs
    }
    assert {name: cfg[name] for name in expected} == expected
    assert cfg.floatX == "float64"


def test_a_symbolic_link_is_edited_through(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "theanorc"
    real.parent.mkdir()
    real.write_text("[global]\nfloatX = float64\n")
    link = tmp_path / ".theanorc"
    link.symlink_to(real)
    set_flag("floatX", "float32", str(link))
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "[global]\nfloatX = float32\n"
    unset_flag("floatX", str(link))
    assert link.is_symlink() and "floatX" not in real.read_text()


def test_a_byte_order_mark_is_kept(tmp_path: Path) -> None:
    rc = tmp_path / ".theanorc"
    rc.write_bytes(b"\xef\xbb\xbf[global]\r\nfloatX = float64\r\n")
    set_flag("floatX", "float32", str(rc))
    assert rc.read_bytes() == b"\xef\xbb\xbf[global]\r\nfloatX = float32\r\n"
    assert _read(rc).floatX == "float32"


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        (
            ".theanorc",
            b"[global]\nfloatX = float64\ncxx = g\xe9\n",
            r"\.theanorc:3: not UTF-8 text \(byte 0xe9\)",
        ),
        ("modecfg.toml", b"floatX = [unclosed\n", r"modecfg\.toml cannot be edited: it does not parse"),
    ],
    ids=["not UTF-8", "TOML syntax error"],
)
def test_a_file_modecfg_cannot_read_is_one_clear_error_and_unchanged(
    tmp_path: Path, name: str, content: bytes, said: str
) -> None:
    rc = tmp_path / name
    rc.write_bytes(content)
    for edit in (lambda: set_flag("floatX", "float32", str(rc)), lambda: unset_flag("floatX", str(rc))):
        with pytest.raises(RcFileError, match=said):
            edit()
        assert rc.read_bytes() == content


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root may write anything")
def test_a_directory_that_cannot_be_written_is_one_clear_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    rc = locked / ".theanorc"
    rc.write_text("[global]\nfloatX = float64\n")
    locked.chmod(0o555)
    try:
        with pytest.raises(RcFileError, match=r"cannot write .*Permission denied.*nothing was changed"):
            set_flag("floatX", "float32", str(rc))
    finally:
        locked.chmod(0o755)
    assert rc.read_text() == "[global]\nfloatX = float64\n"


def test_an_unwritable_directory_or_file_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the user sees it whoever runs the tests (root passes every permission check, so
    the system's answer is given here as another user would get it)."""
    rc = tmp_path / ".theanorc"
    rc.write_text("[global]\nfloatX = float64\n")
    from modecfg.configuration import edit

    real_mkstemp = edit.tempfile.mkstemp

    def denied(*args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(edit.tempfile, "mkstemp", denied)
    with pytest.raises(RcFileError, match=r"cannot write .*\(Permission denied\); nothing was changed"):
        set_flag("floatX", "float32", str(rc))
    monkeypatch.setattr(edit.tempfile, "mkstemp", real_mkstemp)
    assert rc.read_text() == "[global]\nfloatX = float64\n"


def test_a_file_the_user_could_not_write_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user's 0644 file in a world-writable directory: a rename would replace it and
    give the file to this user. The check is the user's own permission on the file."""
    rc = tmp_path / ".theanorc"
    rc.write_text("[global]\nfloatX = float64\n")
    rc.chmod(0o644)
    from modecfg.configuration import edit

    real_access = os.access
    monkeypatch.setattr(
        edit.os,
        "access",
        lambda p, mode: False if str(p) == str(rc) and mode & os.W_OK else real_access(p, mode),
    )
    with pytest.raises(
        RcFileError, match=r"is not writable by you \(owner uid \d+, mode 644\): nothing was changed"
    ):
        set_flag("floatX", "float32", str(rc))
    assert rc.read_text() == "[global]\nfloatX = float64\n"
    assert not (tmp_path / ".theanorc.bak").exists()


def test_an_edit_that_waits_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import fcntl
    import threading

    rc = tmp_path / ".theanorc"
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another edit in progress
    done = threading.Event()

    def edit() -> None:
        set_flag("floatX", "float32", str(rc))
        done.set()

    with caplog.at_level("WARNING", logger="modecfg.config"):
        thread = threading.Thread(target=edit)
        thread.start()
        assert not done.wait(0.5)  # it waits for the lock
        os.close(fd)
        thread.join(30)
    assert done.is_set() and _read(rc).floatX == "float32"
    assert f"waiting for another edit of {rc} to finish" in caplog.text
