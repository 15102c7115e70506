"""TOML rc files: tables for sections, typed values, line numbers, decode errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modecfg
from modecfg.configuration.rcformats import read_toml
from modecfg.errors import ConfigError, FlagValueError, RcFileError


def _load(tmp_path: Path, text: str) -> modecfg.Config:
    path = tmp_path / "modecfg.toml"
    path.write_text(text)
    return modecfg.load(env={}, rc_files=[path])


def test_top_level_keys_tables_and_dotted_keys(tmp_path: Path) -> None:
    cfg = _load(
        tmp_path,
        'floatX = "float32"\nallow_gc = false\noptdb.max_use_ratio = 4\n\n'
        "[traceback]\nlimit = -1\n\n[NanGuardMode]\nbig = 1e6\n",
    )
    assert cfg.floatX == "float32"
    assert cfg.allow_gc is False
    assert cfg.traceback.limit == -1
    assert cfg.optdb.max_use_ratio == 4.0
    assert cfg.NanGuardMode.big == 1e6


def test_a_global_table_holds_plain_flags(tmp_path: Path) -> None:
    cfg = _load(tmp_path, '[global]\nfloatX = "float32"\n')
    assert cfg.floatX == "float32"
    assert cfg.origin("floatX").line == 2


def test_origins_carry_the_line(tmp_path: Path) -> None:
    cfg = _load(tmp_path, '# comment\nfloatX = "float32"\n\n[traceback]\nlimit = -1\n')
    assert cfg.origin("floatX").line == 2
    assert cfg.origin("traceback.limit").line == 5
    assert cfg.origin("traceback.limit").source == str(tmp_path / "modecfg.toml")


def test_integers_are_numbers_for_float_flags(tmp_path: Path) -> None:
    assert _load(tmp_path, "[NanGuardMode]\nbig = 1000\n").NanGuardMode.big == 1000.0


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("floatX = 32\n", "expected a TOML string, got an integer"),
        ('allow_gc = "yes"\n', "expected a TOML boolean, got a string"),
        ("[traceback]\nlimit = 1.5\n", "expected a TOML integer, got a float"),
        ('[traceback]\nlimit = "3"\n', "expected a TOML integer, got a string"),
        ("[traceback]\nlimit = true\n", "expected a TOML integer, got a boolean"),
        ('floatX = ["float32"]\n', "expected a TOML string, got an array"),
        ("[NanGuardMode]\nbig = -1.0\n", "greater than 0"),
    ],
)
def test_a_value_of_the_wrong_type_is_an_error_with_file_and_line(
    tmp_path: Path, text: str, needle: str
) -> None:
    with pytest.raises(FlagValueError) as info:
        _load(tmp_path, text)
    assert needle in str(info.value)
    assert f"modecfg.toml:{text.count(chr(10))}" in str(info.value)


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(RcFileError, match=r"modecfg.toml:2: invalid TOML"):
        _load(tmp_path, 'floatX = "float32"\nthis is = not toml = at all\n')


def test_unknown_flags_in_toml_get_suggestions(tmp_path: Path) -> None:
    with pytest.raises(modecfg.UnknownFlagError, match="did you mean floatX"):
        _load(tmp_path, 'floatx = "float32"\n')


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from(list("[]=.\"' \nabx1#{},tf")), max_size=50))
def test_the_toml_reader_raises_nothing_but_config_errors(text: str) -> None:
    try:
        read_toml(text, "fuzz.toml")
    except ConfigError:
        pass
