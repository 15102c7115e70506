"""INI rc files (.theanorc): the quirks of real files, line numbers, and every malformation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modecfg
from modecfg.configuration.rcformats import interpolation_defaults, read_ini
from modecfg.configuration.sources import RcFile, read_rc
from modecfg.errors import ConfigError, RcFileError

ENV = {"HOME": "/home/ann", "USER": "ann", "TMPDIR": "/scratch"}


def _read(text: str) -> dict[str, tuple[object, int | None]]:
    return {
        s.name: (s.raw, s.origin.line) for s in read_ini(text, "/etc/theanorc", interpolation_defaults(ENV))
    }


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> modecfg.Config:
    path = tmp_path / "theanorc"
    path.write_text(text, encoding="utf-8")
    return modecfg.load(env={"HOME": str(tmp_path), **(env or {})}, rc_files=[path])


def test_global_section_holds_plain_flags_and_sections_hold_dotted_ones() -> None:
    text = "[global]\nfloatX = float32\n\n[traceback]\nlimit = -1\n[DebugMode]\ncheck_strides=1\n"
    assert _read(text) == {
        "floatX": ("float32", 2),
        "traceback.limit": ("-1", 5),
        "DebugMode.check_strides": ("1", 7),
    }


def test_any_spacing_trailing_blanks_no_final_newline_and_blank_only_lines() -> None:
    text = "[global]   \nfloatX=float32   \n   \n\t\ndevice   =    cuda\n[traceback]\nlimit=2"
    assert _read(text) == {"floatX": ("float32", 2), "device": ("cuda", 5), "traceback.limit": ("2", 7)}


def test_comments_everywhere() -> None:
    text = (
        "#!sh\n# before the first header\n; semicolon comment\n[global]\n"
        "# commented: floatX = float64\n#[nvcc]\nfloatX = float32  # the GPU wants it — “really”\n"
        "[empty]\n[only_comments]\n# nothing here\n"
    )
    assert _read(text) == {"floatX": ("float32", 7)}


def test_an_empty_value_followed_by_a_comment_is_empty() -> None:
    assert _read("[blas]\nldflags =      # none: numpy does the products\n") == {"blas.ldflags": ("", 2)}
    assert _read("[gcc]\ncxxflags =#not-a-comment\n") == {"gcc.cxxflags": ("#not-a-comment", 2)}


def test_inline_hash_inside_quotes_or_without_a_blank_before_it_stays() -> None:
    text = "[gcc]\ncxxflags = '-DA # not a comment'\n[global]\ncompiledir_format = a#b\n"
    assert _read(text) == {"gcc.cxxflags": ("-DA # not a comment", 2), "compiledir_format": ("a#b", 4)}


def test_quoted_values_are_unwrapped() -> None:
    text = "[dnn.conv]\nalgo_fwd = \"time_once\"\nalgo_bwd_data = 'deterministic'\n"
    assert _read(text) == {
        "dnn.conv.algo_fwd": ("time_once", 2),
        "dnn.conv.algo_bwd_data": ("deterministic", 3),
    }


def test_empty_values_windows_paths_and_comma_laden_linker_flags() -> None:
    text = (
        "[blas]\nldflags =\n[global]\nbase_compiledir = C:\\Users\\ann\\My Theano (x86)\n"
        "[gcc]\ncxxflags = -L/opt/lib -lmkl_rt -Wl,--no-as-needed,-rpath=/opt/lib\n"
    )
    assert _read(text) == {
        "blas.ldflags": ("", 2),
        "base_compiledir": ("C:\\Users\\ann\\My Theano (x86)", 4),
        "gcc.cxxflags": ("-L/opt/lib -lmkl_rt -Wl,--no-as-needed,-rpath=/opt/lib", 6),
    }


def test_continuation_lines_join_with_a_space() -> None:
    text = "[blas]\nldflags = -L/opt/lib\n    -lopenblas\n    -lgfortran\n[global]\nfloatX=float32\n"
    assert _read(text) == {"blas.ldflags": ("-L/opt/lib -lopenblas -lgfortran", 2), "floatX": ("float32", 6)}


def test_colon_is_a_separator_too() -> None:
    assert _read("[global]\nfloatX: float32\n") == {"floatX": ("float32", 2)}


def test_user_placeholders_are_interpolated_and_unknown_ones_kept() -> None:
    text = (
        "[global]\nbase_compiledir = /tmp/%(user)s/theano_%(USER)s\n"
        "compiledir_format = compiledir_%(short_platform)s-%(processor)s\n"
        "scratch = %(tmpdir)s/x\n"
    )
    got = _read(text)
    assert got["base_compiledir"] == ("/tmp/ann/theano_ann", 2)
    assert got["compiledir_format"] == ("compiledir_%(short_platform)s-%(processor)s", 3)
    assert got["scratch"] == ("/scratch/x", 4)


def test_placeholders_can_name_options_of_the_same_section() -> None:
    text = "[global]\nroot = /data\nbase_compiledir = %(root)s/theano\n"
    assert _read(text)["base_compiledir"] == ("/data/theano", 3)


def test_option_names_match_in_any_case_section_names_exactly(tmp_path: Path) -> None:
    cfg = _load(
        tmp_path, "[global]\nFLOATX = float32\nDebugMode.Check_Strides = 2\n[DebugMode]\nPATIENCE = 3\n"
    )
    assert cfg.floatX == "float32"
    assert cfg.DebugMode.check_strides == 2
    assert cfg.DebugMode.patience == 3
    with pytest.raises(modecfg.UnknownFlagError, match=r"debugmode\.patience"):
        _load(tmp_path, "[debugmode]\npatience = 3\n")


def test_origin_names_the_file_and_line(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "# header\n[global]\n\nfloatX = float32\n")
    origin = cfg.origin("floatX")
    assert (origin.layer, origin.source, origin.line) == ("rc", str(tmp_path / "theanorc"), 4)


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("[global]\nfloatX = float32\nfloatx = float64\n", 3, "set twice in [global] (first at line 2)"),
        ("[global]\nfloatX = float32\n[global]\ndevice = cpu\n", 3, "appears again (first at line 1)"),
        ("floatX = float32\n[global]\n", 1, "before any [section] header; put it under [global]"),
        ("[global]\nthis is not an option\n", 2, "expected 'name = value'"),
        ("[global]\n[mode]=FAST_RUN\n", 2, "did you mean 'mode = FAST_RUN' under [global]?"),
        ("[global\nfloatX=float32\n", 1, "malformed section header"),
        ("[]\nfloatX=float32\n", 1, "malformed section header"),
        ("[global]\n= float32\n", 2, "cannot read"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path: Path, text: str, line: int, needle: str) -> None:
    path = tmp_path / "bad.theanorc"
    path.write_text(text)
    with pytest.raises(RcFileError) as info:
        modecfg.load(env={}, rc_files=[path])
    assert f"{path}:{line}" in str(info.value)
    assert needle in str(info.value)
    assert info.value.origin is not None and info.value.origin.line == line


def test_non_utf8_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1rc"
    path.write_bytes("[global]\n# caf\xe9\nfloatX = float32\n".encode("latin-1"))
    with pytest.raises(RcFileError, match=r"latin1rc:2: not UTF-8 text \(byte 0xe9\)"):
        modecfg.load(env={}, rc_files=[path])


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "bomrc"
    path.write_bytes(b"\xef\xbb\xbf[global]\nfloatX = float32\n")
    assert modecfg.load(env={}, rc_files=[path]).floatX == "float32"


def test_missing_unreadable_and_directory_files(tmp_path: Path) -> None:
    with pytest.raises(RcFileError, match="does not exist"):
        modecfg.load(env={}, rc_files=[tmp_path / "nope"])
    with pytest.raises(RcFileError, match="is a directory"):
        modecfg.load(env={}, rc_files=[tmp_path])


def test_an_unreadable_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "locked"
    path.write_text("[global]\nfloatX=float32\n")

    real_open = os.open

    def guarded_open(file: object, *args: object, **kwargs: object) -> object:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", guarded_open)  # chmod does not stop root, who runs CI
    with pytest.raises(RcFileError, match=r"locked .*cannot be read: Permission denied"):
        modecfg.load(env={}, rc_files=[path])


def test_misplaced_keys_are_errors_with_the_right_home(tmp_path: Path) -> None:
    with pytest.raises(
        modecfg.UnknownFlagError, match=r"optimizer_including is a \[global\] flag, not one of \[nvcc\]"
    ):
        _load(tmp_path, "[nvcc]\noptimizer_including = cudnn\n")


def test_root_under_global_suggests_cuda_root(tmp_path: Path) -> None:
    with pytest.raises(modecfg.UnknownFlagError, match=r"did you mean cuda\.root"):
        _load(tmp_path, "[global]\nroot = /usr/local/cuda\n")


def test_every_problem_of_a_file_set_is_reported_at_once(tmp_path: Path) -> None:
    a = tmp_path / "a"
    a.write_text("[global]\nfloatX = float33\nallow_gc = maybe\n")
    b = tmp_path / "b"
    b.write_text("nonsense\n")
    with pytest.raises(modecfg.ConfigErrors) as info:
        modecfg.load(env={}, rc_files=[a, b])
    kinds = sorted(type(e).__name__ for e in info.value.errors)
    assert kinds == ["FlagValueError", "FlagValueError", "RcFileError"]
    assert "3 configuration problems" in str(info.value)


def test_read_rc_uses_the_toml_reader_by_suffix(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text("floatX = 'float32'\n")
    (s,) = read_rc(RcFile(str(path)), ENV)
    assert (s.name, s.raw, s.typed) == ("floatX", "float32", True)


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from(list("[]=:#; \n\tab%()s\"'.")), max_size=60))
def test_the_ini_reader_raises_nothing_but_config_errors(text: str) -> None:
    try:
        read_ini(text, "fuzz.rc", interpolation_defaults(ENV))
    except ConfigError:
        pass


# -- interpolation that cannot hang a read (issue 32) ----------------------------------------------


def _bomb(levels: int = 9, fan: int = 10) -> str:
    """A small rc file whose values refer to each other ``fan``-fold, ``levels`` deep."""
    lines = ["[global]", "floatX = %(l0)s"]
    for level in range(levels):
        lines.append(f"l{level} = " + f"%(l{level + 1})s" * fan)
    lines.append(f"l{levels} = x")
    return "\n".join(lines) + "\n"


def test_an_interpolation_bomb_is_an_rc_file_error_not_a_hang() -> None:
    import subprocess
    import sys

    text = _bomb()
    assert len(text) < 700  # the 635-byte file: no answer in 25 s before
    code = (
        "from modecfg.configuration.rcformats import read_ini\n"
        f"try:\n    read_ini({text!r}, 'b.rc', {{}})\nexcept Exception: pass"
    )
    subprocess.run([sys.executable, "-c", code], timeout=60, check=True)  # a hang fails here, first
    with pytest.raises(RcFileError, match=r"bomb\.rc:2: floatX grows past 65,536 characters") as info:
        read_ini(text, "bomb.rc", interpolation_defaults(ENV))
    assert info.value.origin is not None and info.value.origin.line == 2
    assert "stops at 10 levels" in str(info.value)


def test_fifty_thousand_unknown_names_cost_a_handful_of_messages(tmp_path: Path) -> None:
    """An 868 KB rc file of 50,000 unknown names took 12 s of did-you-mean and 4.8 MB of
    warnings; now the first names get a did-you-mean and a message, the rest one line. None is
    a name PyTensor declares, so all are refused at the first read, before PyTensor's import."""
    from tests.fresh import run_json

    rc = tmp_path / "many.rc"
    rc.write_text("[global]\n" + "".join(f"unknown_name_{i} = {i}\n" for i in range(50_000)))
    out = run_json(
        """
        import json, sys
        import modecfg
        try:
            modecfg.config.floatX
        except modecfg.ConfigErrors as exc:
            print(json.dumps({"n": len(exc.errors), "text": str(exc), "pt": "pytensor" in sys.modules}))
        """,
        {"MODECFGRC": str(rc)},
        timeout=120,  # a minute of did-you-mean before: the timeout is the failure
    )
    assert out["n"] == 50_000 and not out["pt"]
    assert len(out["text"]) < 10_000
    assert out["text"].rstrip().endswith("and 49950 more (every one is in .errors)")


def test_a_cycle_of_references_is_an_rc_file_error() -> None:
    with pytest.raises(RcFileError, match=r"more than 10 levels deep"):
        read_ini("[global]\na = %(b)s\nb = %(a)s\n", "cycle.rc", {})


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c", "d"]),
        st.lists(st.one_of(st.sampled_from(["%(a)s", "%(b)s", "%(c)s", "%(d)s", "%%", "%(zz)s", "%"]),
                           st.text("xy/ ", max_size=3)), max_size=4).map("".join),
        min_size=1,
    )
)  # fmt: skip
def test_interpolation_gives_what_configparser_gives(values: dict[str, str]) -> None:
    """Where configparser expands a value, the same text; where it refuses one (an unknown name,
    a lone %), the value as written, as Theano kept it; where it recurses too deep, an error."""
    import configparser

    text = "[global]\n" + "".join(f"{k} = {v}\n" for k, v in values.items())
    parser = configparser.ConfigParser(interpolation=configparser.BasicInterpolation())
    parser.read_string(text.replace("[global]", "[g]"))
    expected: dict[str, str | None] = {}
    for key in values:
        try:
            expected[key] = parser.get("g", key)
        except configparser.InterpolationDepthError:
            expected[key] = None  # too deep: an error here
        except (configparser.InterpolationError, ValueError):
            expected[key] = parser.get("g", key, raw=True)
    if None in expected.values():
        with pytest.raises(RcFileError):
            read_ini(text, "h.rc", {})
        return
    got = {s.name: s.raw for s in read_ini(text, "h.rc", {})}
    assert got == expected


def test_every_problem_of_a_file_is_found_in_one_pass_and_every_readable_setting_kept() -> None:
    """Each kind of problem, one after another in one file: each said at its line, in this file,
    and the reading goes on past it (the options under a repeated header are read, those under
    a header that cannot be read are not); continuation lines join with one blank, also where
    an interpolation reads them."""
    text = (
        "early = 1\n"  # 1: before any header
        "[global]\n"  # 2
        "floatX = float32\n"  # 3
        "FLOATX = float64\n"  # 4: set twice (an option's case does not matter)
        "not an option line\n"  # 5
        "[global]\n"  # 6: the section again
        "device = cuda\n"  # 7
        "[bad\n"  # 8: cannot be read
        "ignored = 1\n"  # 9
        "[traceback]\n"  # 10
        "a = %(b)s\n"  # 11: a cycle: refused
        "b = %(a)s\n"  # 12
        "words = x\n"  # 13
        "    y\n"  # 14
        "said = %(words)s!\n"  # 15
        "limit = 3\n"  # 16
    )
    with pytest.raises(modecfg.RcFileErrors) as caught:
        read_ini(text, "p.rc", {})
    errors = caught.value.errors
    lines = (1, 4, 5, 6, 8, 11, 12)
    assert [(e.origin.source, e.origin.line) for e in errors] == [("p.rc", n) for n in lines]
    assert str(errors[2]).endswith(
        "p.rc:5: cannot read 'not an option line'; expected 'name = value', a [section] header or a # comment"
    )
    assert [(s.name, s.raw, s.origin.source, s.origin.line) for s in caught.value.settings] == [  # type: ignore[attr-defined]
        ("floatX", "float32", "p.rc", 3),
        ("device", "cuda", "p.rc", 7),
        ("traceback.words", "x y", "p.rc", 13),
        ("traceback.said", "x y!", "p.rc", 15),
        ("traceback.limit", "3", "p.rc", 16),
    ]
