"""rc sources: what %(user)s means, where TOML errors point, when an rc variable holds text."""

from __future__ import annotations

from pathlib import Path

import pytest

import modecfg
from modecfg.config.origin import Layer, Origin
from modecfg.config.sources import interpolation_defaults, read_ini
from modecfg.errors import RcFileError


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
    from modecfg.config.sources import find_rc_files

    (found,) = find_rc_files({"MODECFGRC": value, "HOME": str(tmp_path)})
    assert (found.text == value) is inline and (found.path == "$MODECFGRC (inline text)") is inline
