"""rc sources: what %(user)s means, where TOML errors point, when an rc variable holds text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import modecfg
from modecfg.configuration.origin import Layer, Origin
from modecfg.configuration.rcformats import interpolation_defaults, read_ini
from modecfg.configuration.sources import RcFile, _expand, find_rc_files, read_text
from modecfg.errors import RcFileError
from tests.fresh import run_json


@pytest.mark.parametrize(
    "env, user",
    [({"HOME": "/home/ann/", "USER": "bob"}, "bob"), ({"HOME": "/home/ann/"}, "ann"), ({}, ""),
     ({"HOME": ""}, "")],
    ids=["USER", "HOME's last part", "no HOME", "empty HOME"],
)  # fmt: skip
def test_user_in_an_rc_file_is_user_else_the_home_directory_s_name(env: dict[str, str], user: str) -> None:
    settings = read_ini(
        "[global]\nbase_compiledir = /scratch/%(user)s/x\n", "rc", interpolation_defaults(env)
    )
    assert [s.raw for s in settings] == [f"/scratch/{user}/x"]


def _toml_error(tmp_path: Path, text: str) -> RcFileError:
    path = tmp_path / "modecfg.toml"
    path.write_text(text)
    with pytest.raises(RcFileError) as info:
        modecfg.load(env={"HOME": str(tmp_path)}, rc_files=[path])
    return info.value


def test_invalid_toml_errors_carry_the_file_and_line_as_their_origin(tmp_path: Path) -> None:
    path = str(tmp_path / "modecfg.toml")
    error = _toml_error(tmp_path, 'floatX = "float32"\nthis is = not toml\n')
    assert error.origin == Origin(Layer.RC, path, 2) and str(error).startswith(f"{path}:2: invalid TOML: ")
    deep = _toml_error(tmp_path, "x = " + "[" * 5000 + "]" * 5000 + "\n")
    assert deep.origin is not None and deep.origin.source == path and "too deeply" in str(deep)
    tables = _toml_error(tmp_path, "[" + ".".join(["t"] * 3000) + "]\nx = 1\n")
    assert str(tables) == f"{path}: tables nested too deeply to be configuration"
    assert tables.origin == Origin(Layer.RC, path)


@pytest.mark.parametrize(
    "value, inline",
    [("[global]\nfloatX = float32", True), ("  [global] floatX = float32", True),
     ("floatX = x\ndevice = cpu", True), ("/home/ann/.theanorc", False), ("/odd/[name]", False)],
    ids=["a section", "one line", "no section", "a path", "a path with brackets"],
)  # fmt: skip
def test_an_rc_variable_holding_text_is_read_as_the_file_s_text(
    tmp_path: Path, value: str, inline: bool
) -> None:
    from modecfg.configuration.sources import find_rc_files

    (found,) = find_rc_files({"MODECFGRC": value, "HOME": str(tmp_path)})
    assert (found.text == value) is inline and (found.path == "$MODECFGRC (inline text)") is inline


# -- rc files as Theano users wrote them ------------------------------------------------------


def _error(rc: RcFile) -> RcFileError:
    with pytest.raises(RcFileError) as info:
        read_text(rc)
    return info.value


def test_every_unreadable_rc_file_is_an_error_whose_origin_is_the_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.rc")
    error = _error(RcFile(missing, "PYTENSORRC"))
    assert error.origin == Origin(Layer.RC, missing)
    assert str(error) == f"rc file {missing} (named by PYTENSORRC) does not exist"

    link = tmp_path / "link.rc"
    link.symlink_to(tmp_path / "gone.rc")
    error = _error(RcFile(str(link)))
    assert error.origin == Origin(Layer.RC, str(link))
    assert str(error) == f"rc file {link} is a link to {tmp_path / 'gone.rc'}, which does not exist"

    error = _error(RcFile(str(tmp_path), "MODECFGRC"))
    assert error.origin == Origin(Layer.RC, str(tmp_path))
    assert str(error).startswith(f"rc file {tmp_path} (named by MODECFGRC) is a directory, not a file")

    long = str(tmp_path / ("x" * 300))  # no file system takes a name this long
    error = _error(RcFile(long))
    assert error.origin == Origin(Layer.RC, long) and "cannot be read: File name too long" in str(error)

    error = _error(RcFile("a\0b", "THEANORC", problem="holds a NUL character"))
    assert error.origin == Origin(Layer.RC, "a\0b")
    assert str(error) == "rc file path 'a\\x00b' (named by THEANORC) holds a NUL character: not a file name"


def test_an_rc_file_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.rc"
    path.write_bytes("[global]\n# café\nfloatX = float32\n".encode("latin-1"))
    error = _error(RcFile(str(path)))
    assert error.origin == Origin(Layer.RC, str(path), 2)
    assert str(error) == f"{path}:2: not UTF-8 text (byte 0xe9); save the file as UTF-8"


def test_a_utf8_rc_file_saved_with_a_byte_order_mark_reads(tmp_path: Path) -> None:
    path = tmp_path / "bom.rc"
    path.write_bytes(b"\xef\xbb\xbf[global]\nfloatX = float32\n")
    assert read_text(RcFile(str(path))) == "[global]\nfloatX = float32\n"


def test_every_theano_interpolation_name_is_filled_from_the_environment() -> None:
    env = {"HOME": "/home/ann", "LSCRATCH": "/l", "TMPDIR": "/td", "TEMP": "/te", "TMP": "/tm"}
    text = "[global]\nbase_compiledir = %(lscratch)s|%(tmpdir)s|%(temp)s|%(tmp)s|%(user)s|%(pid)s\n"
    (setting,) = read_ini(text, "rc", interpolation_defaults(env))
    assert setting.raw == f"/l|/td|/te|/tm|ann|{os.getpid()}"
    (empty,) = read_ini(text, "rc", interpolation_defaults({}))
    assert empty.raw == f"|||||{os.getpid()}"  # unset variables are empty, as in Theano


def _values(text: str) -> dict[str, object]:
    return {s.key: s.raw for s in read_ini(text, "rc", {})}


def test_an_inline_comment_starts_at_a_hash_after_a_blank_outside_quotes() -> None:
    assert _values("[global]\nfloatX = float32 # fast\n") == {"floatX": "float32"}
    assert _values("[global]\nfloatX = # nothing yet\n") == {"floatX": ""}
    assert _values("[global]\ncxxflags = -DX # a macro\n") == {"cxxflags": "-DX"}
    assert _values("[global]\ncompiledir_format = a#b\n") == {"compiledir_format": "a#b"}
    assert _values("[global]\ncompiledir_format=#b \n") == {"compiledir_format": "#b"}
    assert _values("[global]\ncxxflags = '-I /a' # quoted, then a comment\n") == {"cxxflags": "-I /a"}
    assert _values('[global]\ncxxflags = "-D A=#1" # two hashes\n') == {"cxxflags": "-D A=#1"}


def test_an_indented_line_continues_the_option_above_until_a_blank_line_or_a_header() -> None:
    assert _values("[global]\ncxxflags = -O2\n  -march=native\n") == {"cxxflags": "-O2 -march=native"}
    after_blank = "[global]\ncxxflags = -O2\n\n  floatX = float32\n"
    assert _values(after_blank) == {"cxxflags": "-O2", "floatX": "float32"}
    after_header = "[global]\ncxxflags = -O2\n[traceback]\n  limit = 3\n"
    assert _values(after_header) == {"cxxflags": "-O2", "limit": "3"}


def test_a_malformed_header_is_said_as_written_with_a_hint_only_where_one_helps() -> None:
    with pytest.raises(RcFileError) as info:
        read_ini("[global\nfloatX = float32\n", "rc", {})
    assert str(info.value) == "rc:1: malformed section header '[global'"
    with pytest.raises(RcFileError) as info:
        read_ini("[floatX] = float32\n", "rc", {})
    assert str(info.value) == (
        "rc:1: malformed section header '[floatX] = float32'; did you mean 'floatX = float32' under [global]?"
    )


def test_an_interpolated_value_may_grow_to_the_limit_and_not_one_character_past_it() -> None:
    from modecfg.configuration.rcformats import INTERPOLATED_SIZE as limit

    a = "x" * (limit - 4)
    fits = {"%(a)s%%abc": "%abc", "abc%(a)s%%": "abc%", "%(a)s%(b)s": "wyz"}  # each exactly at the limit
    for value, rest in fits.items():
        settings = read_ini(f"[global]\na = {a}\nb = wxyz\nc = {value}\n", "rc", {})
        (c,) = [s for s in settings if s.key == "c"]
        assert len(str(c.raw)) == limit and str(c.raw).replace("x", "") == rest.replace("x", "")
    for value in ("%(a)s%%abcd", "abcd%(a)s%%", "%(a)s%(b)s!"):  # one character more
        with pytest.raises(RcFileError, match=r"^rc:4: c grows past 65,536 characters"):
            read_ini(f"[global]\na = {a}\nb = wxyz\nc = {value}\n", "rc", {})


@pytest.mark.parametrize(("name", "content"), [("empty.rc", ""), ("empty.toml", ""), ("bom.rc", "\ufeff")])
def test_an_rc_file_without_text_gives_no_settings_and_loads_no_reader(
    tmp_path: Path, name: str, content: str
) -> None:
    """``PYTENSORRC=/dev/null``, an empty file and one holding only a byte-order mark have nothing
    to parse: no settings, and neither format's reader is loaded for them (a fresh process; a
    file with text loads it)."""
    (tmp_path / name).write_text(content, encoding="utf-8")
    (tmp_path / "full.rc").write_text("[global]\nfloatX = float32\n")
    (tmp_path / "blank.toml").write_text("\n  \n")
    out = run_json(
        f"""
        import json, os, sys
        from modecfg.configuration.sources import RcFile, read_rc
        empty = read_rc(RcFile({str(tmp_path / name)!r}), {{}})
        null = read_rc(RcFile(os.devnull, named_by="PYTENSORRC"), {{}})
        loaded = "modecfg.configuration.rcformats" in sys.modules
        blank = read_rc(RcFile({str(tmp_path / "blank.toml")!r}), {{}})
        full = read_rc(RcFile({str(tmp_path / "full.rc")!r}), {{}})
        print(json.dumps({{"empty": empty, "null": null, "loaded": loaded, "blank": blank,
                          "full": [(s.name, s.raw, s.origin.line) for s in full],
                          "after": "modecfg.configuration.rcformats" in sys.modules}}))
        """
    )
    assert out["empty"] == [] and out["null"] == [] and out["loaded"] is False
    assert out["blank"] == []  # blanks are text: the TOML reader reads them, and finds nothing
    assert out["full"] == [["floatX", "float32", 2]] and out["after"] is True


_NO_HOME = "starts with ~ and there is no home directory (HOME is unset, empty or relative)"


def test_an_rc_path_expands_a_leading_tilde_alone_or_before_a_separator_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~`` and ``~/...`` (or ``~\\...``) are the home directory; ``~user``, ``~x``, a second
    character that is a separator after something else, stay relative paths (to the working
    directory), as written; every path comes back absolute and normalised, blanks stripped."""
    monkeypatch.chdir(tmp_path)
    home = str(tmp_path / "h")
    env = {"HOME": home}
    expected = {
        "~": home,
        "~/rc": os.path.join(home, "rc"),
        "  ~/a/../rc  ": os.path.join(home, "rc"),
        "~\\rc": home + "\\rc",  # (on POSIX a backslash is part of the name)
        "~x": str(tmp_path / "~x"),
        "~X/rc": str(tmp_path / "~X" / "rc"),
        "~user/rc": str(tmp_path / "~user" / "rc"),
        "a/rc": str(tmp_path / "a" / "rc"),
        "./rc": str(tmp_path / "rc"),
        str(tmp_path / "x" / ".." / "abs.rc"): str(tmp_path / "abs.rc"),
    }
    assert {part: _expand(part, env) for part in expected} == {
        part: (path, "") for part, path in expected.items()
    }


def test_without_a_home_a_tilde_path_is_kept_and_says_why(tmp_path: Path) -> None:
    home = str(tmp_path)
    assert _expand("~/rc", {"USERPROFILE": home}) == (os.path.join(home, "rc"), "")  # Windows' name
    assert _expand("~/rc", {"HOME": "", "USERPROFILE": home}) == (os.path.join(home, "rc"), "")
    for env in ({}, {"HOME": ""}, {"HOME": "relative/home"}, {"userprofile": home}):
        assert _expand(" ~/rc ", env) == ("~/rc", _NO_HOME)


def test_a_relative_rc_path_where_the_working_directory_is_gone_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # (rm -rf build && cd -)
    assert _expand("rc", {}) == ("rc", "is relative, and the working directory no longer exists")
    assert _expand(str(tmp_path / "abs.rc"), {}) == (str(tmp_path / "abs.rc"), "")


def test_the_rc_variables_each_name_their_files_inline_text_or_a_refused_path(tmp_path: Path) -> None:
    """Every rc variable set is read, in precedence order, each entry marked with the variable
    that named it: pasted text, a path with a NUL byte (refused when read, shown with ``\\0``),
    the paths of a list (empty entries skipped)."""
    text = "[global]\nfloatX = float32\n"
    found = find_rc_files(
        {
            "HOME": str(tmp_path),
            "THEANORC": text,
            "AESARARC": f"a\0b{os.pathsep}{os.pathsep} {tmp_path / 'x.rc'} ",
            "MODECFGRC": str(tmp_path / "m.toml"),
        }
    )
    assert found == [
        RcFile("$THEANORC (inline text)", named_by="THEANORC", text=text),
        RcFile("a\\0b", named_by="AESARARC", problem="contains a NUL byte"),
        RcFile(str(tmp_path / "x.rc"), named_by="AESARARC"),
        RcFile(str(tmp_path / "m.toml"), named_by="MODECFGRC"),
    ]
    assert find_rc_files({"HOME": str(tmp_path), "PYTENSORRC": ""}) == []  # set, and empty: no file
    (tmp_path / ".pytensorrc").write_text(text)
    assert find_rc_files({"HOME": str(tmp_path)}) == [RcFile(str(tmp_path / ".pytensorrc"))]
