"""rc edits in detail: which file, where a new line goes, line endings, continuations, TOML tables,
what an edit says, and the files it refuses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import modecfg
from modecfg.configuration import edit
from modecfg.configuration.edit import default_rc_file, set_flag, unset_flag
from modecfg.configuration.origin import Layer, Origin
from modecfg.configuration.sources import RC_FILE_LIMIT


def _rc(tmp_path: Path, text: str, name: str = "rc") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def _read(path: Path, name: str) -> object:
    """The value a user's process reads from the file (defaults: None)."""
    cfg = modecfg.load(env={}, rc_files=[path])
    return None if cfg.is_default(name) else cfg[name]


# -- which file an edit goes to -------------------------------------------------------------------


def test_the_default_file_skips_listed_paths_that_are_no_files_or_no_paths(tmp_path: Path) -> None:
    a_dir = tmp_path / "a-directory"
    a_dir.mkdir()
    real = _rc(tmp_path, "[global]\ndevice = cpu\n")
    listed = [str(tmp_path / "missing"), str(a_dir), "~/relative-to-no-home", str(real)]
    env = {"HOME": "", "MODECFGRC": os.pathsep.join(listed)}
    assert default_rc_file("floatX", env) == str(real)
    assert default_rc_file(None, env) == str(real)


def test_names_that_are_no_paths_are_never_taken_for_files_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~").mkdir()
    _rc(tmp_path / "~", "[global]\nfloatX = float32\n")  # ./~/rc: not the home's rc
    _rc(tmp_path, "[global]\nfloatX = float32\n", "$MODECFGRC (inline text)")
    home = tmp_path / "home"
    for listed in ("~/rc", "[global]\nfloatX = float32\n"):
        env = {"HOME": "relative", "MODECFGRC": listed}
        with pytest.raises(modecfg.RcFileError, match="no home directory"):
            default_rc_file("floatX", env)
        assert default_rc_file("floatX", {**env, "HOME": str(home)}) in (
            str(home / "rc"),
            str(home / ".theanorc"),
        )


def test_inline_rc_text_is_no_file_to_edit(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "MODECFGRC": "[global]\nfloatX = float32\n"}
    assert default_rc_file("floatX", env) == str(tmp_path / ".theanorc")


def test_without_home_in_the_environment_the_user_s_home_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_rc_file("floatX", {}) == os.path.join(os.path.expanduser("~"), ".theanorc")


@pytest.mark.parametrize(
    "home, says",
    [("", "HOME is empty"), ("relative/home", "HOME is 'relative/home', relative")],
    ids=["empty", "relative"],
)
def test_without_a_usable_home_the_error_says_why_and_what_to_do(home: str, says: str) -> None:
    with pytest.raises(modecfg.RcFileError) as info:
        default_rc_file("floatX", {"HOME": home})
    assert str(info.value) == (
        f"no rc file to edit: there is no home directory for ~/.theanorc ({says}); name the file with --file"
    )


def test_the_file_that_sets_the_flag_is_found_in_toml_and_behind_a_byte_order_mark(tmp_path: Path) -> None:
    ini = _rc(tmp_path, "[global]\ndevice = cpu\n", "a")
    toml = _rc(tmp_path, 'floatX = "float32"\n', "b.toml")
    marked = _rc(tmp_path, "\ufeff[global]\nallow_gc = False\n", "c")
    env = {"HOME": str(tmp_path), "MODECFGRC": os.pathsep.join(map(str, (ini, toml, marked)))}
    assert default_rc_file("floatX", env) == str(toml)
    assert default_rc_file("allow_gc", env) == str(marked)
    assert default_rc_file("device", env) == str(ini)


def test_set_without_a_file_edits_the_file_that_sets_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _rc(tmp_path, "[global]\ndevice = cpu\n", "a")
    second = _rc(tmp_path, "[global]\nfloatX = float64\n", "b")
    monkeypatch.setenv("MODECFGRC", f"{first}{os.pathsep}{second}")
    edit = set_flag("floatX", "float32")
    assert edit.path == str(second) and second.read_text() == "[global]\nfloatX = float32\n"
    assert first.read_text() == "[global]\ndevice = cpu\n"


# -- INI: values, endings, where a new line goes -------------------------------------------------


@pytest.mark.parametrize("value", ["-L/opt/100%/lib -lblas", "%(user)s", "50%"])
def test_a_value_with_a_percent_sign_reads_back_as_written(tmp_path: Path, value: str) -> None:
    rc = _rc(tmp_path, "[blas]\nldflags = -lblas\n")
    set_flag("blas.ldflags", value, str(rc))
    assert rc.read_text() == f"[blas]\nldflags = {value.replace('%', '%%')}\n"
    assert _read(rc, "blas.ldflags") == value


@pytest.mark.parametrize(
    "old, after",
    [("cpuX", ""), ("cpu\r", "\r"), ("cpu  ", "  "), ("cpu \t", " \t")],
    ids=["ends in X", "ends in CR", "trailing blanks", "blank and tab"],
)
def test_set_replaces_the_whole_old_value_and_keeps_what_follows_it(
    tmp_path: Path, old: str, after: str
) -> None:
    rc = _rc(tmp_path, f"[global]\ncxx = {old}\nfloatX = float64\n")
    set_flag("cxx", "g++", str(rc))
    assert rc.read_bytes() == f"[global]\ncxx = g++{after}\nfloatX = float64\n".encode()
    assert _read(rc, "cxx") == "g++"


def test_a_file_with_crlf_line_endings_keeps_them_everywhere(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[global]\r\nfloatX = float64\r\n\r\n[traceback]\r\nlimit = 3\r\n")
    set_flag("floatX", "float32", str(rc))
    set_flag("traceback.compile_limit", "4", str(rc))
    set_flag("NanGuardMode.big", "1e8", str(rc))
    assert rc.read_bytes() == (
        b"[global]\r\nfloatX = float32\r\n\r\n[traceback]\r\nlimit = 3\r\ncompile_limit = 4\r\n"
        b"\r\n[NanGuardMode]\r\nbig = 1e8\r\n"
    )


def test_a_file_without_a_final_newline_gets_the_new_line_on_a_line_of_its_own(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "# mine\n[global]\nfloatX = float64")
    edit = set_flag("device", "cpu", str(rc))
    assert rc.read_text() == "# mine\n[global]\nfloatX = float64\ndevice = cpu\n" and edit.line == 4
    other = _rc(tmp_path, "# mine\n[traceback]\nlimit = 3", "other")
    set_flag("floatX", "float32", str(other))
    assert other.read_text() == "# mine\n[traceback]\nlimit = 3\n\n[global]\nfloatX = float32\n"


def test_a_file_with_old_mac_line_endings_gets_no_extra_line_break(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "# mine\r[global]\rfloatX = float64\r")
    set_flag("device", "cpu", str(rc))
    assert rc.read_bytes() == b"# mine\r[global]\rfloatX = float64\rdevice = cpu\n"
    assert _read(rc, "device") == "cpu" and _read(rc, "floatX") == "float64"


def test_a_new_section_follows_a_blank_line_once(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n\n")
    edit = set_flag("traceback.limit", "5", str(rc))
    assert rc.read_text() == "[global]\nfloatX = float64\n\n[traceback]\nlimit = 5\n"
    assert edit.line == 5
    empty = _rc(tmp_path, "", "empty")
    set_flag("traceback.limit", "5", str(empty))
    assert empty.read_text() == "[traceback]\nlimit = 5\n"


def test_a_new_flag_goes_after_its_section_s_last_setting_before_the_blank_lines(tmp_path: Path) -> None:
    text = (
        "# top\n[global]\nfloatX = float64\n\n  ; about traceback\n\n"
        "[traceback]\nlimit = 3\n\n\n[other]\nx = 1\n"
    )
    rc = _rc(tmp_path, text)
    edit = set_flag("device", "cpu", str(rc))
    assert rc.read_text() == text.replace("floatX = float64\n", "floatX = float64\ndevice = cpu\n")
    assert edit.line == 4
    edit = set_flag("traceback.compile_limit", "2", str(rc))
    assert "[traceback]\nlimit = 3\ncompile_limit = 2\n\n\n[other]" in rc.read_text()
    assert rc.read_text().splitlines()[edit.line - 1] == "compile_limit = 2"


def test_a_new_flag_in_an_empty_section_goes_right_under_its_header(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[traceback]\n\n[other]\nx = 1\n")
    edit = set_flag("traceback.limit", "2", str(rc))
    assert rc.read_text() == "[traceback]\nlimit = 2\n\n[other]\nx = 1\n" and edit.line == 2


def test_a_one_line_crlf_file_gets_crlf(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[global]\r\n")
    set_flag("floatX", "float32", str(rc))
    assert rc.read_bytes() == b"[global]\r\nfloatX = float32\r\n"


def test_a_section_header_with_a_comment_or_spaces_is_found(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[ traceback ]   # frames\nlimit = 3\n")
    edit = set_flag("traceback.compile_limit", "2", str(rc))
    assert rc.read_text() == "[ traceback ]   # frames\nlimit = 3\ncompile_limit = 2\n" and edit.line == 3


def test_unset_removes_a_value_s_continuation_lines_and_nothing_after(tmp_path: Path) -> None:
    text = "[blas]\nldflags = -L/opt/lib\n    -lopenblas\n\t-lgfortran\ncheck_openmp = False\n"
    rc = _rc(tmp_path, text)
    edit = unset_flag("blas.ldflags", str(rc))
    assert rc.read_text() == "[blas]\ncheck_openmp = False\n" and edit.line == 2


def test_unset_removes_one_continuation_line_and_keeps_the_next_setting(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[blas]\nldflags = -L/opt/lib\n  -lopenblas\ncheck_openmp = False\n")
    unset_flag("blas.ldflags", str(rc))
    assert rc.read_text() == "[blas]\ncheck_openmp = False\n"


def test_unset_of_an_indented_setting_keeps_the_next_setting_at_its_indent(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[global]\n  floatX = float64\n  device = cpu\n")
    unset_flag("floatX", str(rc))
    assert rc.read_text() == "[global]\n  device = cpu\n"


# -- TOML ----------------------------------------------------------------------------------------


def test_toml_set_makes_a_missing_table_and_writes_a_path_as_text(tmp_path: Path) -> None:
    rc = _rc(tmp_path, 'floatX = "float64"\n', "rc.toml")
    set_flag("NanGuardMode.big", "1e8", str(rc))
    set_flag("base_compiledir", "/scratch/cache", str(rc))
    assert rc.read_text() == (
        'floatX = "float64"\nbase_compiledir = "/scratch/cache"\n\n[NanGuardMode]\nbig = 100000000.0\n'
    )
    assert _read(rc, "NanGuardMode.big") == 1e8 and str(_read(rc, "base_compiledir")) == "/scratch/cache"


@pytest.mark.parametrize(
    "text",
    ['[global]\nfloatX = "float64"\ndevice = "cpu"\n', '"traceback.limit" = 3\ndevice = "cpu"\n'],
    ids=["[global]", "quoted dotted key"],
)
def test_toml_set_moves_a_flag_written_elsewhere_to_its_table(tmp_path: Path, text: str) -> None:
    rc = _rc(tmp_path, text, "rc.toml")
    name, value = ("floatX", "float32") if "global" in text else ("traceback.limit", "5")
    set_flag(name, value, str(rc))
    out = rc.read_text()
    assert out.count("float64") == 0 and '"traceback.limit"' not in out
    assert str(_read(rc, name)) == value


@pytest.mark.parametrize(
    "text, name",
    [('[global]\nfloatX = "float64"\ndevice = "cpu"\n', "floatX"),
     ('"traceback.limit" = 3\ndevice = "cpu"\n', "traceback.limit"),
     ('device = "cpu"\n[traceback]\nlimit = 3\n', "traceback.limit")],
    ids=["[global]", "quoted dotted key", "table"],
)  # fmt: skip
def test_toml_unset_removes_the_flag_wherever_it_is_written(tmp_path: Path, text: str, name: str) -> None:
    rc = _rc(tmp_path, text, "rc.toml")
    edit = unset_flag(name, str(rc))
    assert edit.changed and edit.line is None and edit.backup == f"{rc}.bak"
    assert _read(rc, name) is None and _read(rc, "device") == "cpu"


def test_toml_set_in_an_inline_table_keeps_it_inline_and_a_comment_stays(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "traceback = {limit = 3}\n[NanGuardMode]\nbig = 5.0  # mine\n", "rc.toml")
    set_flag("traceback.limit", "5", str(rc))
    set_flag("NanGuardMode.big", "7", str(rc))
    assert rc.read_text() == "traceback = {limit = 5}\n[NanGuardMode]\nbig = 7.0  # mine\n"


def test_toml_unset_where_the_table_name_holds_a_value_changes_nothing(tmp_path: Path) -> None:
    text = 'traceback = 3\nfloatX = "float32"\n'
    rc = _rc(tmp_path, text, "rc.toml")
    assert not unset_flag("traceback.limit", str(rc)).changed and rc.read_text() == text


def test_toml_unset_of_a_flag_it_does_not_set_changes_nothing(tmp_path: Path) -> None:
    text = '# mine\ndevice = "cpu"\n[traceback]\nlimit = 3\n'
    rc = _rc(tmp_path, text, "rc.toml")
    edit = unset_flag("floatX", str(rc))
    assert not edit.changed and edit.line is None and edit.backup is None
    assert rc.read_text() == text and not Path(f"{rc}.bak").exists()


# -- what an edit says -----------------------------------------------------------------------------


def test_an_edit_says_what_it_did_and_an_edit_that_changes_nothing_says_so(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    edit = set_flag("floatX", "float32", str(rc))
    assert edit == (str(rc), "floatX", "float32", True, f"{rc}.bak", 2)
    again = set_flag("floatX", "float32", str(rc))
    assert again == (str(rc), "floatX", "float32", False, None, 2)
    limit = set_flag("traceback.limit", "7", str(rc))
    assert limit.value == 7 and limit.line == 5  # typed, and where it is now (after a blank line)


def test_through_a_linked_directory_the_backup_is_named_as_the_file_was(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    rc = _rc(real, "[global]\nfloatX = float64\n")
    named = tmp_path / "link" / "rc"
    edit = set_flag("floatX", "float32", str(named))
    assert edit.path == str(named) and edit.backup == f"{named}.bak"
    assert rc.read_text() == "[global]\nfloatX = float32\n" and (real / "rc.bak").exists()


@pytest.mark.parametrize(
    "name, says",
    [("lib.cnmem", "unknown flag 'lib.cnmem'; it is obsolete: GPU memory preallocation is now XLA's "
      "business: set the environment variable XLA_PYTHON_CLIENT_MEM_FRACTION=<fraction> (or "
      "XLA_PYTHON_CLIENT_PREALLOCATE=false) (modecfg unset lib.cnmem removes it from a file)"),
     ("config.floatX", "unknown flag 'config.floatX'; drop the 'config.' prefix; did you mean floatX?"),
     ("floatx", "unknown flag 'floatx'; did you mean floatX?")],
)  # fmt: skip
def test_an_edit_of_a_name_no_flag_has_says_why_and_what_to_write(
    tmp_path: Path, name: str, says: str
) -> None:
    """set refuses it; unset removes it where the file has it (the fix for an obsolete name),
    says there is nothing to do for an obsolete one it has not, and refuses an unknown one."""
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    with pytest.raises(modecfg.UnknownFlagError) as info:
        set_flag(name, "1", str(rc))
    assert str(info.value) == says
    if "obsolete" in says:
        assert unset_flag(name, str(rc)).changed is False
    else:
        with pytest.raises(modecfg.UnknownFlagError) as info:
            unset_flag(name, str(rc))
        head, _, tail = says.partition("; did you mean")
        assert str(info.value) == f"{head}; {rc} does not set it either; did you mean{tail}"
    assert rc.read_text() == "[global]\nfloatX = float64\n"


# -- files an edit refuses -------------------------------------------------------------------------


def test_a_file_that_is_not_utf8_is_refused_naming_its_line_and_byte(tmp_path: Path) -> None:
    rc = tmp_path / "rc"
    rc.write_bytes(b"[global]\n# caf\xe9\nfloatX = float64\n")
    with pytest.raises(modecfg.RcFileError) as info:
        set_flag("floatX", "float32", str(rc))
    assert str(info.value) == (
        f"{rc}:2: not UTF-8 text (byte 0xe9); save the file as UTF-8; nothing was changed"
    )
    assert info.value.origin == Origin(Layer.RC, str(rc), 2)
    marked = tmp_path / "marked"
    marked.write_bytes(b"\xef\xbb\xbf[global]\n\xff\n")
    with pytest.raises(modecfg.RcFileError, match=r":2: not UTF-8 text \(byte 0xff\)"):
        unset_flag("floatX", str(marked))


def test_a_directory_is_refused_with_its_origin(tmp_path: Path) -> None:
    with pytest.raises(modecfg.RcFileError) as info:
        set_flag("floatX", "float32", str(tmp_path))
    assert str(info.value) == f"{tmp_path} is a directory, not an rc file"
    assert info.value.origin == Origin(Layer.RC, str(tmp_path))


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "rc"
    os.mkfifo(fifo)
    with pytest.raises(modecfg.RcFileError) as info:
        set_flag("floatX", "float32", str(fifo))
    assert str(info.value) == f"{fifo} is a FIFO (a named pipe), not a regular file"
    assert info.value.origin == Origin(Layer.RC, str(fifo))


def test_a_file_larger_than_any_rc_file_is_refused(tmp_path: Path) -> None:
    rc = tmp_path / "rc"
    rc.write_bytes(b"[global]\n" + b"#" * RC_FILE_LIMIT + b"\n")
    with pytest.raises(modecfg.RcFileError) as info:
        set_flag("floatX", "float32", str(rc))
    assert str(info.value) == f"{rc} is larger than {RC_FILE_LIMIT:,} bytes"


def test_a_file_that_cannot_be_opened_says_why_and_that_nothing_changed(tmp_path: Path) -> None:
    rc = tmp_path / "rc"
    rc.symlink_to(rc)  # a loop: open() fails with ELOOP
    with pytest.raises(modecfg.RcFileError) as info:
        set_flag("floatX", "float32", str(rc))
    assert str(info.value).endswith("; nothing was changed") and "cannot be read (" in str(info.value)
    assert info.value.origin == Origin(Layer.RC, str(rc))


# -- errors say where ------------------------------------------------------------------------------


def test_a_bad_value_names_the_file_it_was_for(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    with pytest.raises(modecfg.FlagValueError) as info:
        set_flag("floatX", "float33", str(rc))
    assert info.value.origin == Origin(Layer.RC, f"the command line, for {rc}")  # the value is not the file's
    assert str(info.value).startswith(f"floatX='float33' (from the command line, for {rc}): ")


def test_a_write_that_fails_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")

    def denied(*args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(edit.tempfile, "mkstemp", denied)
    with pytest.raises(modecfg.RcFileError) as info:
        set_flag("floatX", "float32", str(rc))
    assert str(info.value) == f"cannot write {rc} (Permission denied); nothing was changed"
    assert info.value.origin == Origin(Layer.RC, str(rc))


def test_a_file_not_writable_by_you_is_named_with_its_owner_and_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    rc.chmod(0o444)
    real_access = os.access
    monkeypatch.setattr(
        edit.os, "access", lambda p, mode: False if str(p) == str(rc) else real_access(p, mode)
    )
    with pytest.raises(modecfg.RcFileError) as info:
        unset_flag("floatX", str(rc))
    assert str(info.value) == (
        f"{rc} is not writable by you (owner uid {os.getuid()}, mode 444): nothing was changed"
    )
    assert info.value.origin == Origin(Layer.RC, str(rc))


# -- unset -----------------------------------------------------------------------------------------


def test_unset_without_a_file_edits_the_file_that_sets_the_flag_and_keeps_a_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _rc(tmp_path, "\ufeff[global]\ndevice = cpu\n", "a")
    second = _rc(tmp_path, "\ufeff[global]\nfloatX = float64\ndevice = cpu\n", "b")
    monkeypatch.setenv("MODECFGRC", f"{first}{os.pathsep}{second}")
    done = unset_flag("floatX")
    assert done == (str(second), "floatX", None, True, f"{second}.bak", 2)
    assert second.read_bytes() == "\ufeff[global]\ndevice = cpu\n".encode()  # its byte order mark kept
    assert first.read_bytes() == "\ufeff[global]\ndevice = cpu\n".encode()


# -- the write itself ------------------------------------------------------------------------------


def test_the_new_file_is_written_beside_the_old_one_and_renamed_over_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        renames.append((src, dst))
        real_replace(src, dst)

    real_link = os.link

    def link(src: str, dst: str) -> None:  # the backup: a new name, never over a file
        renames.append((src, dst))
        real_link(src, dst)

    monkeypatch.setattr(edit.os, "replace", replace)
    monkeypatch.setattr(edit.os, "link", link)
    set_flag("floatX", "float32", str(rc))
    assert [dst for _, dst in renames] == [f"{rc}.bak", str(rc)]
    for src, _dst in renames:  # a rename in one directory: atomic, never a copy across file systems
        name = os.path.basename(src)
        assert os.path.dirname(src) == str(tmp_path)
        assert name.startswith(f".{os.path.basename(str(rc))}.") and name.endswith(".tmp")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rc", "rc.bak"]


def test_an_existing_backup_is_never_replaced(tmp_path: Path) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    mine = tmp_path / "rc.bak"
    mine.write_text("the user's own backup\n")
    (tmp_path / "rc.bak.1").symlink_to(tmp_path / "nowhere")  # a dangling link takes a name too
    edit_ = set_flag("floatX", "float32", str(rc))
    assert edit_.backup == f"{rc}.bak.2"
    assert mine.read_text() == "the user's own backup\n"
    assert (tmp_path / "rc.bak.2").read_text() == "[global]\nfloatX = float64\n"
    again = set_flag("floatX", "float16", str(rc))
    assert (
        again.backup == f"{rc}.bak.3"
        and (tmp_path / "rc.bak.3").read_text() == "[global]\nfloatX = float32\n"
    )


# -- any value: read back as written, or refused with the file unchanged -----------------------

_VALUE_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("%#;\"'\\\n\r\t[]=$"),
    max_size=24,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_VALUE_TEXT, suffix=st.sampled_from(["", ".toml"]))
@example(value='""', suffix="")  # wrapped whole in quotes: INI's reader takes a pair off (found by this test)
@example(value="'-O3'", suffix="")
@example(value='"a\\"b"', suffix="")
def test_any_value_reads_back_as_written_or_is_refused_with_the_file_unchanged(
    tmp_path: Path, value: str, suffix: str
) -> None:
    """``modecfg set`` of a string flag: ``%(user)s`` in INI, ``#`` and newlines in TOML, quotes,
    backslashes, brackets. What the user's process then reads is exactly the value given; a value
    the format cannot hold (a newline in INI, a NUL) is a ModecfgError and the file keeps its bytes."""
    text = "[gcc]\ncxxflags = -O2\n" if not suffix else '[gcc]\ncxxflags = "-O2"\n'
    rc = _rc(tmp_path, text, "rc" + suffix)
    try:
        set_flag("gcc.cxxflags", value, str(rc))
    except modecfg.ModecfgError as error:
        assert rc.read_bytes() == text.encode(), error
        if "\x00" in value:  # no flag of a file name, program or option holds one
            assert isinstance(error, modecfg.FlagValueError) and "NUL" in str(error)
            return
        assert not suffix and "a TOML rc file (name ending .toml) holds any text" in str(error), (
            value,
            error,
        )
        line_break = len(f"x{value}x".splitlines()) > 1  # \n, \r, \x85, U+2028 ...: str.splitlines's
        assert line_break or "#" in value or value != value.strip(), value  # INI's limits, no others
        return
    assert _read(rc, "gcc.cxxflags") == value


def test_without_hard_links_a_backup_is_still_never_written_over_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    (tmp_path / "rc.bak").write_text("mine\n")

    def no_links(src: str, dst: str) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(edit.os, "link", no_links)
    done = set_flag("floatX", "float32", str(rc))
    assert done.backup == f"{rc}.bak.1" and (tmp_path / "rc.bak").read_text() == "mine\n"
    assert (tmp_path / "rc.bak.1").read_text() == "[global]\nfloatX = float64\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rc", "rc.bak", "rc.bak.1"]


def test_a_backup_name_taken_meanwhile_moves_on_to_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer takes rc.bak between the look and the link: the next name is used."""
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    real_link = os.link

    def taken_once(src: str, dst: str) -> None:
        if dst.endswith(".bak"):
            Path(dst).write_text("theirs\n")
            raise FileExistsError(dst)
        real_link(src, dst)

    monkeypatch.setattr(edit.os, "link", taken_once)
    done = set_flag("floatX", "float32", str(rc))
    assert done.backup == f"{rc}.bak.1" and (tmp_path / "rc.bak").read_text() == "theirs\n"


def test_without_hard_links_the_backup_keeps_the_files_mode_and_a_race_moves_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    rc.chmod(0o640)
    real_open = os.open

    def no_links(src: str, dst: str) -> None:
        raise PermissionError(1, "Operation not permitted")

    def taken_once(path: str, flags: int, mode: int = 0o777) -> int:
        if str(path).endswith(".bak") and flags & os.O_EXCL:
            Path(path).write_text("theirs\n")
            raise FileExistsError(path)
        return real_open(path, flags, mode)

    monkeypatch.setattr(edit.os, "link", no_links)
    monkeypatch.setattr(edit.os, "open", taken_once)
    done = set_flag("floatX", "float32", str(rc))
    assert done.backup == f"{rc}.bak.1" and (tmp_path / "rc.bak").read_text() == "theirs\n"
    assert ((tmp_path / "rc.bak.1").stat().st_mode & 0o777) == 0o640


def test_when_every_backup_name_is_taken_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = _rc(tmp_path, "[global]\nfloatX = float64\n")
    monkeypatch.setattr(edit.os.path, "lexists", lambda path: True)
    with pytest.raises(
        modecfg.RcFileError, match=r"cannot write .*rc \(.*9,999 more backup names are taken\)"
    ):
        set_flag("floatX", "float32", str(rc))
    assert rc.read_text() == "[global]\nfloatX = float64\n"
