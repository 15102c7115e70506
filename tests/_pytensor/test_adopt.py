"""Flags PyTensor declares and modecfg does not are adopted from PyTensor's declaration."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytensor
import pytest

import modecfg
from modecfg.config.flags import FLAGS


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **env},
    )


def test_gcc_version_str_is_adopted_with_pytensor_s_computed_default() -> None:
    spec = FLAGS["gcc_version_str"]
    assert spec.adopted == pytensor.__version__ and spec.pytensor and spec.fixed
    assert modecfg.config.gcc_version_str == pytensor.config.gcc_version_str
    exp = modecfg.config.explain("gcc_version_str")
    assert exp.adopted == pytensor.__version__
    assert f"adopted from PyTensor {pytensor.__version__}'s declaration" in str(exp)
    assert "gcc_version_str" in modecfg.config.as_dict()


def test_a_dump_never_sets_an_adopted_flag() -> None:
    assert FLAGS["gcc_version_str"].reaches  # modecfg cannot say what it reaches


@pytest.mark.parametrize(
    "order", ["import modecfg; modecfg.config.floatX; import pytensor", "import pytensor, modecfg"]
)
def test_a_pytensor_only_flag_in_the_environment_is_held_then_adopted(order: str) -> None:
    done = _run(
        f"""
        import warnings; warnings.simplefilter("error", UserWarning)
        {order}
        import modecfg
        c = modecfg.config
        assert c.held == (), c.held
        assert c.gcc_version_str == "x" == pytensor.config.gcc_version_str
        origin = c.origin("gcc_version_str")
        assert (str(origin.layer), origin.source) == ("env", "PYTENSOR_FLAGS"), origin
        """,
        PYTENSOR_FLAGS="gcc_version_str=x",
    )
    assert done.returncode == 0, done.stderr


def test_a_name_no_flag_has_is_held_and_said_at_pytensor_s_import() -> None:
    done = _run(
        """
        import warnings
        import modecfg
        modecfg.config.floatX  # the sources are read now; PyTensor's flags are not known yet
        assert [s.key for s in modecfg.config.held] == ["bogus_thing"]
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            import pytensor
        held = [w for w in seen if issubclass(w.category, modecfg.HeldFlagWarning)]
        assert len(held) == 1, [str(w.message) for w in seen]
        assert "unknown flag 'bogus_thing' (from PYTENSOR_FLAGS)" in str(held[0].message)
        assert modecfg.config.held == ()
        """,
        PYTENSOR_FLAGS="bogus_thing=3",
    )
    assert done.returncode == 0, done.stderr


def test_validate_reports_a_name_no_flag_has_and_accepts_an_adopted_one() -> None:
    bad = _run(
        "from modecfg.cli import main; raise SystemExit(main(['validate']))", PYTENSOR_FLAGS="bogus_thing=3"
    )
    assert bad.returncode == 1 and "error: unknown flag 'bogus_thing' (from PYTENSOR_FLAGS)" in bad.stdout
    good = _run(
        "from modecfg.cli import main; raise SystemExit(main(['validate']))",
        PYTENSOR_FLAGS="gcc_version_str=x",
    )
    assert "unknown flag" not in good.stdout + good.stderr
    shown = _run(
        "from modecfg.cli import main; raise SystemExit(main(['show']))", PYTENSOR_FLAGS="gcc_version_str=x"
    )
    assert shown.returncode == 0 and "gcc_version_str  x" in shown.stdout and "PYTENSOR_FLAGS" in shown.stdout


def test_diagnose_reports_held_names_even_before_pytensor_is_imported() -> None:
    report = modecfg.diagnose(env={"PYTENSOR_FLAGS": "bogus_thing=3"}, rc_files=[])
    assert [type(e).__name__ for e in report.errors] == ["UnknownFlagError"]


def test_an_isolated_config_has_the_adopted_flag_and_stays_isolated() -> None:
    before = pytensor.config.gcc_version_str
    cfg = modecfg.load(env={"PYTENSOR_FLAGS": "gcc_version_str=y"}, rc_files=[])
    assert cfg["gcc_version_str"] == "y"
    assert cfg.origin("gcc_version_str").source == "PYTENSOR_FLAGS"
    assert pytensor.config.gcc_version_str == before == modecfg.config.gcc_version_str


def test_each_kind_of_pytensor_parameter_becomes_a_typed_flag() -> None:
    """PyTensor's parameters of every kind, declared after modecfg is imported, as a later
    PyTensor release would: types, choices, PyTensor's own validation, fixed, the view."""
    done = _run(
        """
        import pytensor, modecfg
        from pytensor.configparser import BoolParam, EnumStr, FloatParam, IntParam, StrParam
        from modecfg.errors import FlagValueError, ReadOnlyFlagError
        pc = pytensor.config
        pc.add("zz_enum", "An enum.", EnumStr("a", ["b", "c"]), in_c_key=False)
        pc.add("zz_bool", "A bool.", BoolParam(False), in_c_key=False)
        pc.add("zz__int", "A positive int.", IntParam(3, validate=lambda v: v > 0), in_c_key=False)
        pc.add("zz_float", "A float.", FloatParam(0.5), in_c_key=False)
        pc.add("zz_str", "Fixed text.", StrParam("t", mutable=False), in_c_key=False)
        from modecfg.config.flags import FLAGS
        adopted = {n for n, s in FLAGS.items() if s.adopted and n.startswith("zz")}
        assert adopted == {"zz_enum", "zz_bool", "zz.int", "zz_float", "zz_str"}, adopted
        c = modecfg.config
        assert (c.zz_enum, c.zz_bool, c.zz.int, c.zz_float, c.zz_str) == ("a", False, 3, 0.5, "t")
        assert c.explain("zz_enum").choices == ("a", "b", "c")
        try:
            c.zz_enum = "d"
        except FlagValueError as exc:
            assert "valid choices: a, b, c" in str(exc) and "assignment at <string>:" in str(exc), exc
        else:
            raise AssertionError("zz_enum=d accepted")
        try:
            c.zz.int = 0  # PyTensor's own validate refuses it
        except FlagValueError as exc:
            assert "zz.int" in str(exc), exc
        else:
            raise AssertionError("zz.int=0 accepted")
        c.zz_bool = "true"
        assert c.zz_bool is True
        assert modecfg.config.explain("zz_str").fixed
        assert c.to_flags() == "zz_bool=True", c.to_flags()
        pc.zz_enum = "b"  # through the view: a modecfg assignment
        assert c.zz_enum == "b" == pc.zz_enum and c.origin("zz_enum").layer == "assignment"
        with c.override(zz_float=2.0):
            assert pc.zz_float == 2.0
        assert pc.zz_float == 0.5
        """
    )
    assert done.returncode == 0, done.stderr
