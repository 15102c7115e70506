"""The declarations: defaults valid, shortcuts agree with pydantic, PyTensor's flags covered."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import modecfg
from modecfg.configuration.flags import FLAGS, Flag
from modecfg.configuration.schema import BOOL_WORDS, _adapter, flags_model, validate

pytensor = pytest.importorskip("pytensor")


@pytest.mark.parametrize("spec", [f for f in FLAGS.values() if not f.is_lazy], ids=lambda f: f.name)
def test_every_default_is_valid_for_its_own_type(spec: Flag) -> None:
    value = validate(spec, spec.default)
    assert value == spec.default or (isinstance(value, float) and math.isnan(value))


def _expected_lazy_default(name: str) -> object:
    """What each computed default must be, worked out from the machine, not from modecfg."""
    import shutil
    from pathlib import Path

    cxx = shutil.which("g++") or ""
    return {
        "cxx": cxx,
        "compile.timeout": 24 * 5,  # 24 x compile.wait, whose default is 5
        "base_compiledir": Path("~/.pytensor").expanduser(),
        "DebugMode.check_c": bool(cxx),
    }[name]


@pytest.mark.parametrize("spec", [f for f in FLAGS.values() if f.is_lazy], ids=lambda f: f.name)
def test_lazy_defaults_compute_what_they_document(spec: Flag) -> None:
    cfg = modecfg.load(env={"HOME": str(Path.home())})
    assert cfg[spec.name] == _expected_lazy_default(spec.name)
    assert validate(spec, cfg[spec.name]) == cfg[spec.name]


def test_lazy_defaults_follow_the_flags_they_are_computed_from() -> None:
    cfg = modecfg.load(env={"MODECFG_FLAGS": "compile.wait=2,cxx="})
    assert cfg["compile.timeout"] == 48
    assert cfg.DebugMode.check_c is False


@pytest.mark.parametrize("spec", list(FLAGS.values()), ids=lambda f: f.name)
def test_every_flag_has_a_doc_and_a_kind(spec: Flag) -> None:
    assert len(spec.doc) > 10 and spec.doc.endswith(".")
    assert spec.kind()


@pytest.mark.parametrize(
    "spec", [f for f in FLAGS.values() if f.choices() and f.check is None], ids=lambda f: f.name
)
def test_the_choice_shortcut_agrees_with_pydantic(spec: Flag) -> None:
    for choice in spec.choices():
        assert validate(spec, choice) == _adapter(spec.name).validate_python(choice)


def test_the_boolean_shortcut_agrees_with_pydantic() -> None:
    adapter = _adapter("allow_gc")
    for word, expected in BOOL_WORDS.items():
        for spelling in (word, word.upper(), word.capitalize()):
            assert validate(FLAGS["allow_gc"], spelling) is expected
            assert adapter.validate_python(spelling) is expected
    with pytest.raises(ValidationError):
        adapter.validate_python("maybe")


def _version() -> tuple[int, int]:
    major, minor = pytensor.__version__.split(".")[:2]
    return int(major), int(minor)


def test_pytensor_flags_exist_in_pytensor_where_declared() -> None:
    known = set(pytensor.config._config_var_dict)
    here = [f for f in FLAGS.values() if f.in_pytensor(_version())]
    assert [f.name for f in here if f.pytensor_name not in known] == []
    gone = [f.name for f in FLAGS.values() if f.pytensor and not f.in_pytensor(_version())]
    assert [name for name in gone if FLAGS[name].pytensor_name in known] == []


_LACKING = """
import warnings
warnings.simplefilter("always")
{before}
import modecfg, pytensor
{after}
"""


@pytest.mark.parametrize("how", ["MODECFG_FLAGS", "assignment before import", "assignment after import"])
def test_a_flag_this_pytensor_lacks_is_said_and_not_handed_to_pytensor(how: str) -> None:
    """The paths a user takes (issue 23, item 6): the hand-off at PyTensor's import did not know
    PyTensor's version yet (its __version__ is set later), passed the flag on, and PyTensor said
    "does not recognise this flag" where modecfg should have; an assignment said nothing."""
    import subprocess
    import sys

    spec = FLAGS["generated_src_dir"] if _version() < (3, 3) else FLAGS["warn.ignore_bug_before"]
    assert not spec.in_pytensor(_version())
    value = "/tmp/x" if spec.name == "generated_src_dir" else "all"
    set_it = f"modecfg.config[{spec.name!r}] = {value!r}"
    before = f"import modecfg; {set_it}" if how == "assignment before import" else ""
    after = set_it if how == "assignment after import" else ""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    if how == "MODECFG_FLAGS":
        env["MODECFG_FLAGS"] = f"{spec.name}={value}"
    code = _LACKING.format(before=before, after=after)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert f"{spec.name} is a PyTensor" in done.stderr and "the value set has no effect" in done.stderr
    assert "does not recognise this flag" not in done.stderr, done.stderr


def test_the_one_pytensor_flag_modecfg_does_not_declare_is_pytensors_own() -> None:
    ours = {f.pytensor_name for f in FLAGS.values()}
    assert set(pytensor.config._config_var_dict) - ours == {"gcc_version_str"}  # PyTensor 3.0-3.3
    assert "gcc_version_str" not in FLAGS and "gcc_version_str" not in modecfg.config


def test_pytensor_fixed_flags_are_fixed_or_applied_per_compile_by_us() -> None:
    per_compile = {"optimizer", "optimizer_excluding", "optimizer_including", "optimizer_requiring"}
    for name, param in pytensor.config._config_var_dict.items():
        spec = next((f for f in FLAGS.values() if f.pytensor_name == name), None)
        if spec is None or param.mutable or spec.name in per_compile:
            continue
        assert spec.fixed, spec.name


def test_the_pydantic_model_holds_every_flag_with_docs() -> None:
    model = flags_model()
    schema = model.model_json_schema()
    assert schema["properties"]["floatX"]["description"].startswith("Default floating-point")
    snap = modecfg.load(env={"THEANO_FLAGS": "floatX=float32,traceback.limit=-1"}).model()
    assert snap.floatX == "float32"  # type: ignore[attr-defined]
    assert snap.traceback.limit == -1  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        snap.floatX = "float64"  # type: ignore[attr-defined]  # frozen


def test_choices_of_mode_and_linker_come_from_their_registries() -> None:
    from modecfg.linkers import linker_names
    from modecfg.modes import mode_names

    assert FLAGS["mode"].choices() == tuple(mode_names())
    assert FLAGS["linker"].choices() == tuple(linker_names())


def test_a_registered_mode_name_becomes_a_valid_mode() -> None:
    from modecfg._registry.modes import _MODES, register_name

    with pytest.raises(modecfg.FlagValueError):
        modecfg.load(env={"MODECFG_FLAGS": "mode=MyTestMode"})
    register_name("MyTestMode", "a mode for this test")
    try:
        assert modecfg.load(env={"MODECFG_FLAGS": "mode=MyTestMode"}).mode == "MyTestMode"
        with pytest.raises(ValueError, match="already registered"):
            register_name("MyTestMode", "twice")
    finally:
        del _MODES["MyTestMode"]


SAMPLES = [
    "float32", "float64", "None", " None ", "True", "false", "YES", "off", "1", "0", "-1", "17", " 8 ", "-0",
    "08", "1.5", "abc", "", " ", "cuda", "cuda0", "gpu", "FAST_RUN", "DEBUG_MODE", "cvm", "c|py", "/tmp/x",
    "~/y", "initial:previous", "bogus", "o4", "raise", "--1", "1-", "inf", "1e3",
    ".75", "-0.5", "1e8", "1E+12", "2.", "+3", "0.0", "1e10", "5e-3", "1_000", "0x1", " 7.5 ", "3", "-3",
]  # fmt: skip


@pytest.mark.parametrize("spec", list(FLAGS.values()), ids=lambda f: f.name)
def test_every_shortcut_agrees_with_pydantic(spec: Flag) -> None:
    from modecfg.configuration.schema import _NO_SHORTCUT, shortcut

    adapter = _adapter(spec.name)
    for raw in SAMPLES:
        try:
            expected = ("ok", adapter.validate_python(raw))
        except ValidationError:
            expected = ("error", None)
        try:
            got = shortcut(spec, raw)
        except ValueError:
            got = ("error", None)
        else:
            if got is _NO_SHORTCUT:
                continue
            got = ("ok", got)
        assert got == expected, (spec.name, raw)


def test_a_device_that_is_not_one_says_what_is() -> None:
    with pytest.raises(modecfg.FlagValueError, match="'tpu0' is not a device; use cpu, cuda or cudaN"):
        modecfg.load(env={"THEANO_FLAGS": "device=tpu0"})


def test_mode_names_must_be_usable_as_flag_values() -> None:
    from modecfg._registry.modes import register_name

    for bad in ("", " padded", "a,b"):
        with pytest.raises(ValueError, match="cannot be a mode name"):
            register_name(bad, "bad")


def test_flag_names_are_strings() -> None:
    with pytest.raises(TypeError, match="flag names are strings, not int"):
        modecfg.load(env={})[42]  # type: ignore[index]


def test_a_mode_object_is_recognised_without_building_its_optimizer() -> None:
    """PyTensor's compiles pass change_flags(mode=<a Mode>); Mode.optimizer is a property that
    builds the optimizer (8 ms a compile when the check called it)."""
    from pytensor.compile.mode import Mode

    from modecfg.configuration.declarations import _is_mode_object

    built = []

    class Counting(Mode):  # type: ignore[misc]
        @property
        def optimizer(self) -> object:
            built.append(1)
            return super().optimizer

    assert _is_mode_object(Counting(linker="py")) and built == []
    assert not _is_mode_object("FAST_RUN") and not _is_mode_object(object())


# Values already of a flag's type, as PyTensor's own compiles pass them (change_flags(traceback__limit=8)):
# the edges of the flags' ranges among them, and NaN, the infinities and -0.0.
TYPED = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([-1, 0, 1, 2, 5, 8, 100, -0.0, 0.0, 0.5, 1.0, math.inf, -math.inf, math.nan]),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
)


def _pydantics(spec: Flag, raw: object) -> tuple[str, object, type | None]:
    from modecfg.configuration.schema import _describe

    try:
        value = _adapter(spec.name).validate_python(raw)
    except ValidationError as exc:
        return ("error", _describe(spec, exc), None)
    return ("ok", value, type(value))


@pytest.mark.parametrize("spec", list(FLAGS.values()), ids=lambda f: f.name)
@given(raw=TYPED)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_typed_shortcut_agrees_with_pydantic(spec: Flag, raw: object) -> None:
    """The value pydantic gives, of the type it gives, or its error in the same words; NaN compared
    as NaN (validate refuses it after either)."""
    from modecfg.configuration.schema import _NO_SHORTCUT, typed_shortcut

    try:
        value = typed_shortcut(spec, raw)
    except ValueError as exc:
        got: tuple[str, object, type | None] = ("error", str(exc), None)
    else:
        if value is _NO_SHORTCUT:
            return
        got = ("ok", value, type(value))
    expected = _pydantics(spec, raw)
    if got[0] == expected[0] == "ok" and isinstance(raw, float) and math.isnan(raw):
        assert math.isnan(got[1]) and got[2] is expected[2]  # type: ignore[arg-type]
        return
    assert got == expected, (spec.name, raw)


def test_the_typed_shortcut_takes_the_values_pytensors_compiles_pass() -> None:
    """PyTensor's every compile enters change_flags(traceback__limit=<int>): no pydantic for that."""
    from modecfg.configuration.schema import _NO_SHORTCUT, typed_shortcut

    assert typed_shortcut(FLAGS["traceback.limit"], 8) == 8
    assert typed_shortcut(FLAGS["traceback.limit"], True) is _NO_SHORTCUT  # a bool is no int here
    assert typed_shortcut(FLAGS["traceback.limit"], 8.0) is _NO_SHORTCUT
    assert typed_shortcut(FLAGS["cache.max_size"], None) is None
    assert typed_shortcut(FLAGS["floatX"], None) is _NO_SHORTCUT
    assert typed_shortcut(FLAGS["compute_test_value"], "off") is _NO_SHORTCUT  # text: the other shortcut's
