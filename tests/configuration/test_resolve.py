"""Merging the layers (modecfg.configuration.resolve): the words and origins of what goes wrong."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import modecfg
from modecfg.configuration.flags import FLAGS
from modecfg.configuration.origin import Layer, Origin, Setting
from modecfg.errors import FlagValueError, RcFileError, UnknownFlagError

ENV = Origin(Layer.ENV, "THEANO_FLAGS")
resolving = importlib.import_module(
    "modecfg.configuration.resolve"
)  # (the package has a function of that name)


def test_an_rc_file_passed_to_load_is_named_as_passed_by_rc_files(tmp_path: Path) -> None:
    missing = tmp_path / "theanorc"
    with pytest.raises(RcFileError) as info:
        modecfg.load(env={}, rc_files=[missing])
    assert str(info.value) == f"rc file {missing} (named by rc_files) does not exist"


def test_an_unknown_name_is_an_error_with_its_origin_hint_and_guess() -> None:
    (error,) = resolving.resolve([Setting("floatx", "float32", ENV)]).errors
    assert str(error) == "unknown flag 'floatx' (from THEANO_FLAGS); did you mean floatX?"
    assert isinstance(error, UnknownFlagError)
    assert (error.flag, error.origin, tuple(error.suggestions)) == ("floatx", ENV, ("floatX",))
    rc = Origin(Layer.RC, "/home/me/.theanorc", 3)
    (in_section,) = resolving.resolve([Setting("cxxflag", "-O3", rc, section="gcc")]).errors
    assert (
        str(in_section)
        == "unknown flag 'gcc.cxxflag' (from /home/me/.theanorc:3); did you mean gcc.cxxflags?"
    )
    (hinted,) = resolving.resolve([Setting("config.floatX", "float32", ENV)]).errors
    assert str(hinted) == (
        "unknown flag 'config.floatX' (from THEANO_FLAGS); drop the 'config.' prefix; did you mean floatX?"
    )


def test_a_setting_of_pytensors_own_flag_is_pytensors_and_its_name_read_here_says_so() -> None:
    setting = Setting("gcc_version_str", "x", ENV)  # PyTensor declares it; modecfg does not
    res = resolving.resolve([setting, Setting("floatX", "float32", ENV)])
    assert res.for_pytensor == [setting] and res.errors == [] and list(res.candidates) == ["floatX"]
    assert setting.pytensor_name == "gcc_version_str"
    assert Setting("warn_no_version", "1", ENV, section="cmodule").pytensor_name == "cmodule__warn_no_version"
    with pytest.raises(UnknownFlagError) as info:
        modecfg.config["gcc_version_str"]
    assert str(info.value) == (
        "unknown flag 'gcc_version_str'; it is PyTensor's own flag, which modecfg does not declare: "
        "pytensor.config.gcc_version_str reads and sets it, and PYTENSOR_FLAGS and rc files hand it "
        "to PyTensor"
    )


def test_an_unknown_name_gets_a_guess_unless_the_caller_is_out_of_budget() -> None:
    with pytest.raises(UnknownFlagError) as info:
        resolving.candidate(Setting("floatx", "float32", ENV), [])
    assert tuple(info.value.suggestions) == ("floatX",)
    with pytest.raises(UnknownFlagError) as info:
        resolving.candidate(Setting("floatx", "float32", ENV), [], suggest=False)
    assert tuple(info.value.suggestions) == ()


def test_an_unknown_flag_without_a_place_says_no_place() -> None:
    for origin in (None, Origin(Layer.ASSIGNMENT)):
        error = resolving.unknown_flag("nosuch", origin)
        assert str(error) == "unknown flag 'nosuch'" and error.origin == origin


def test_names_of_pytensors_own_flags_do_not_count_against_the_did_you_mean_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Names the installed PyTensor declares (here: as if it declared every zz_plugin_*) are its own.
    monkeypatch.setattr(resolving, "may_be_pytensors", lambda name: name.startswith("zz_plugin_"))
    held = [Setting(f"zz_plugin_{i}", "1", ENV) for i in range(resolving._SUGGESTED)]
    res = resolving.resolve([*held, Setting("floatx", "float32", ENV)])
    assert len(res.for_pytensor) == resolving._SUGGESTED
    (error,) = res.errors  # floatx is no flag of either: refused, with a search (they cost nothing)
    assert isinstance(error, UnknownFlagError) and error.suggestions == ("floatX",)


def test_a_value_error_without_an_origin_and_a_case_slip_is_told_the_right_spelling() -> None:
    spec = FLAGS["floatX"]
    error = resolving.value_error(spec, "FLOAT32", None, "not a valid choice")
    assert str(error) == (
        "floatX='FLOAT32': not a valid choice; valid choices: float64, float32, float16; "
        "did you mean 'float32'?"
    )
    assert (error.flag, error.origin, error.value, error.choices) == (
        "floatX",
        None,
        "FLOAT32",
        spec.choices(),
    )


def test_a_value_holding_another_flag_says_commas_separate_flags() -> None:
    spec = FLAGS["floatX"]
    error = resolving.value_error(spec, "float32 device=cpu", ENV, "not a valid choice")
    assert str(error) == (
        "floatX='float32 device=cpu' (from THEANO_FLAGS): not a valid choice; valid choices: float64, "
        "float32, float16; flags are separated by commas, not spaces"
    )


@pytest.mark.parametrize("second", ["blas__ldflags", "blas.ldflags"])
def test_a_space_instead_of_a_comma_in_a_text_flag_is_an_error(second: str) -> None:
    text = f"gcc.cxxflags=-O3 {second}=-lblas"
    with pytest.raises(FlagValueError) as info:
        modecfg.load(env={"THEANO_FLAGS": text})
    error = info.value
    assert str(error) == (
        "gcc.cxxflags='-O3 " + second + "=-lblas' (from THEANO_FLAGS) contains blas.ldflags=..., which "
        "looks like a second flag; flags are separated by commas, not spaces"
    )
    assert (error.flag, error.origin, error.value) == ("gcc.cxxflags", ENV, f"-O3 {second}=-lblas")


def test_a_text_flag_may_hold_name_value_pairs_that_are_no_flags() -> None:
    cfg = modecfg.load(env={"THEANO_FLAGS": "gcc.cxxflags=-O3 -DNDEBUG MYMACRO=1"})
    assert cfg.gcc__cxxflags == "-O3 -DNDEBUG MYMACRO=1"
