"""The user's dump key: where it lives, when it is made, when it is refused, what a signature proves."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from modecfg import signing
from modecfg.signing import KeyProblem


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def _key(home: Path) -> Path:
    return home / "modecfg" / "dump.key"


def _made() -> bytes:
    key = signing.signing_key(create=True)
    assert isinstance(key, bytes), key
    return key


# -- where the key lives ----------------------------------------------------------------------


def test_the_key_lives_in_xdg_config_home_when_it_is_an_absolute_path(config_home: Path) -> None:
    assert signing.key_path() == str(_key(config_home))


@pytest.mark.parametrize("xdg", ["", "relative/config"], ids=["empty", "relative"])
def test_an_empty_or_relative_xdg_config_home_is_ignored_for_home_dot_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: str
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", xdg)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert signing.key_path() == str(tmp_path / ".config" / "modecfg" / "dump.key")


@pytest.mark.skipif(os.name != "posix", reason="HOME decides the home directory on POSIX only")
@pytest.mark.parametrize("home", [None, "", "relative/home"], ids=["unset", "empty", "relative"])
def test_without_an_absolute_home_there_is_no_key_and_it_says_why(
    monkeypatch: pytest.MonkeyPatch, home: str | None
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    if home is None:
        monkeypatch.delenv("HOME", raising=False)
    else:
        monkeypatch.setenv("HOME", home)
    found = signing.key_path()
    assert found == KeyProblem("", "no home directory (HOME is unset, empty or relative): no dump key")
    assert str(found) == found.reason  # no empty path in front of it
    assert signing.signing_key(create=True) == found
    assert signing.key_problem() == found.reason


# -- made on first use ------------------------------------------------------------------------


def test_without_create_a_missing_key_is_not_made(config_home: Path) -> None:
    found = signing.signing_key(create=False)
    says = "no dump key yet (one is made when this user's first dump is written)"
    assert found == KeyProblem(str(_key(config_home)), says)
    assert str(found) == f"{_key(config_home)}: {says}"
    assert not config_home.exists()


def test_the_key_is_made_once_owner_only_and_found_again(config_home: Path) -> None:
    key = _made()
    path = _key(config_home)
    assert len(key) == 32 and path.read_bytes() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert _made() == key and signing.signing_key(create=False) == key
    assert os.listdir(path.parent) == ["dump.key"]  # no temporary file left behind
    assert signing.key_problem() == ""


def test_two_keys_made_in_two_places_differ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = []
    for place in ("a", "b"):
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / place))
        keys.append(_made())
    assert keys[0] != keys[1]


def _make_at_once(threads: int) -> list[bytes | KeyProblem]:
    start = threading.Barrier(threads)
    got: list[bytes | KeyProblem] = []

    def make() -> None:
        start.wait(10)
        got.append(signing.signing_key(create=True))

    running = [threading.Thread(target=make) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(10)
    return got


def test_threads_making_the_key_at_once_all_get_the_one_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for attempt in range(10):
        home = tmp_path / str(attempt)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
        assert _make_at_once(4) == [_key(home).read_bytes()] * 4
        assert os.listdir(_key(home).parent) == ["dump.key"]


def test_a_key_that_cannot_be_made_is_a_problem_not_an_error(config_home: Path) -> None:
    config_home.mkdir()
    (config_home / "modecfg").symlink_to(config_home / "nowhere")  # where its directory should be
    found = signing.signing_key(create=True)
    assert found == KeyProblem(str(_key(config_home)), "cannot be created (File exists)")
    # validate says so before a dump is written, naming what cannot be written
    unwritable = config_home / "modecfg"
    assert signing.key_problem() == f"{found.path}: cannot be created ({unwritable} cannot be written)"


def test_a_file_where_the_key_directory_should_be_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    path = str(blocker / "modecfg" / "dump.key")
    found = signing.signing_key(create=True)
    assert found == KeyProblem(path, "cannot be read (Not a directory)")
    assert signing.key_problem() == str(found)
    assert blocker.read_text() == "not a directory"


def test_a_key_not_made_yet_is_no_problem_where_the_nearest_existing_parent_is_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "not" / "there" / "yet"))
    assert signing.key_problem() == ""
    assert not (tmp_path / "not").exists()  # asking makes nothing


def test_the_key_is_made_whatever_the_working_directory_is(
    config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "cwd"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # nothing can be made in it: the key is written in its own directory only
    key = _made()
    assert _key(config_home).read_bytes() == key


def test_a_link_planted_at_the_temporary_name_is_never_followed(
    config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whoever can guess the temporary name (here: by fixing the random part) and plants a link
    # there gets no key written through it.
    monkeypatch.setattr(signing.secrets, "token_hex", lambda n: "0" * (2 * n))
    directory = config_home / "modecfg"
    directory.mkdir(parents=True, mode=0o700)
    target = tmp_path / "attacker"
    (directory / f".dump.key-{os.getpid()}-00000000").symlink_to(target)
    found = signing.signing_key(create=True)
    assert found == KeyProblem(str(_key(config_home)), "cannot be created (File exists)")
    assert not target.exists() and not _key(config_home).exists()


def test_a_key_removed_while_it_is_made_is_said(config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unlink = os.unlink

    def and_another_process_removes_the_key(path: str) -> None:  # between link and read
        unlink(path)
        if os.path.basename(path).startswith(".dump.key-"):
            unlink(_key(config_home))

    monkeypatch.setattr(signing.os, "unlink", and_another_process_removes_the_key)
    assert signing.signing_key(create=True) == KeyProblem(
        str(_key(config_home)), "vanished while it was made"
    )


def test_a_key_that_cannot_be_made_in_an_unwritable_directory_is_said_before_a_dump(
    unwritable: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(unwritable / "config"))
    path = unwritable / "config" / "modecfg" / "dump.key"
    assert signing.key_problem() == f"{path}: cannot be created ({unwritable} cannot be written)"
    found = signing.signing_key(create=True)
    assert isinstance(found, KeyProblem) and found.reason.startswith("cannot be created (")


# -- a key that is refused --------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o604, 0o620, 0o640, 0o601, 0o700 | 0o006])
def test_a_key_others_may_read_or_write_is_refused_with_the_command_that_fixes_it(
    config_home: Path, mode: int
) -> None:
    _made()
    path = _key(config_home)
    path.chmod(mode)
    found = signing.signing_key(create=True)
    assert found == KeyProblem(
        str(path), f"may be read or written by others (mode {mode:o}): chmod 600 {path}"
    )
    assert path.exists()  # refused, never replaced
    assert signing.key_problem() == str(found)


def test_an_owner_only_key_that_is_also_executable_is_still_the_key(config_home: Path) -> None:
    key = _made()
    _key(config_home).chmod(0o700)
    assert signing.signing_key(create=False) == key


@pytest.mark.parametrize("size", [0, 31, 33, 64])
def test_a_key_file_of_another_size_is_no_key_and_is_never_overwritten(config_home: Path, size: int) -> None:
    _made()
    path = _key(config_home)
    path.write_bytes(b"k" * size)
    found = signing.signing_key(create=True)
    says = f"is not a dump key ({size} bytes, not 32): remove it to make a new one"
    assert found == KeyProblem(str(path), says)
    assert path.read_bytes() == b"k" * size


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_a_key_that_belongs_to_another_user_is_refused(config_home: Path) -> None:
    _made()
    path = _key(config_home)
    os.chown(path, 4321, -1)
    assert signing.signing_key(create=True) == KeyProblem(str(path), "belongs to another user (uid 4321)")


def test_a_directory_where_the_key_should_be_is_no_key(config_home: Path) -> None:
    _key(config_home).mkdir(parents=True)
    assert signing.signing_key(create=True) == KeyProblem(str(_key(config_home)), "is not a regular file")


def test_a_symbolic_link_is_not_followed_even_to_a_good_key(config_home: Path, tmp_path: Path) -> None:
    key = _made()
    path = _key(config_home)
    real = tmp_path / "real.key"
    path.rename(real)
    path.symlink_to(real)
    found = signing.signing_key(create=True)
    assert isinstance(found, KeyProblem) and found.reason.startswith("cannot be read (")
    assert real.read_bytes() == key


# -- what a signature proves -----------------------------------------------------------------


def test_a_signature_verifies_only_with_its_key_and_its_manifest() -> None:
    key, other = b"k" * 32, b"o" * 32
    manifest = b'{"parts": {}}'
    signature = signing.sign(key, manifest)
    assert len(signature) == 64 and int(signature, 16) >= 0  # hex HMAC-SHA256
    assert signing.sign(key, manifest) == signature  # deterministic
    assert signing.verify(key, manifest, signature)
    assert not signing.verify(other, manifest, signature)
    assert not signing.verify(key, manifest + b" ", signature)
    assert not signing.verify(key, manifest, signature[:-1] + ("0" if signature[-1] != "0" else "1"))
    assert not signing.verify(key, manifest, "")


def test_a_key_s_id_stays_what_earlier_versions_wrote_into_their_dumps() -> None:
    # dumps name the key that signed them: a key's id must not change between versions
    assert signing.key_id(b"k" * 32) == "ca59f6e8bf8fb4d9"


def test_a_key_id_names_a_key_without_revealing_it() -> None:
    key, other = b"k" * 32, b"o" * 32
    assert signing.key_id(key) == signing.key_id(key)
    assert signing.key_id(key) != signing.key_id(other)
    assert len(signing.key_id(key)) == 16 and int(signing.key_id(key), 16) >= 0
    assert signing.key_id(key) not in (key.hex(), signing.sign(key, b""))
