"""Flags PyTensor declares and modecfg does not are adopted from PyTensor's declaration."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

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
    assert "gcc_version_str" in modecfg.config


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


def test_a_name_neither_declares_is_refused_before_pytensor_s_import_as_after() -> None:
    """load() used to hold bogus_thing before ``import pytensor`` (then warn the independent
    Config at that import) and raise after it: the same call now raises the same error both times."""
    done = _run(
        """
        import json, sys
        import modecfg
        said = []
        for _ in range(2):
            try:
                modecfg.load(env={"PYTENSOR_FLAGS": "bogus_thing=3,floatx=float32"}, rc_files=[])
            except modecfg.ConfigErrors as exc:
                said.append([str(e) for e in exc.errors])
            import pytensor
        try:
            modecfg.config.floatX
        except modecfg.UnknownFlagError as exc:
            said.append(str(exc))
        print(json.dumps(said))
        """,
        PYTENSOR_FLAGS="bogus_thing=3",
    )
    assert done.returncode == 0, done.stderr
    import json

    before, after, process_wide = json.loads(done.stdout)
    expected = [
        "unknown flag 'bogus_thing' (from PYTENSOR_FLAGS)",
        "unknown flag 'floatx' (from PYTENSOR_FLAGS); did you mean floatX?",
    ]
    assert before == after == expected
    assert process_wide == "unknown flag 'bogus_thing' (from PYTENSOR_FLAGS)"


def test_a_config_loaded_before_pytensor_s_import_is_not_touched_by_it() -> None:
    """Its flags are a value (a FlagSet): the import adopts PyTensor's flags into a new one, which
    the process-wide Config takes; the independent Config keeps its own and what it held."""
    done = _run(
        """
        import sys, warnings
        import modecfg
        cfg = modecfg.load(env={"PYTENSOR_FLAGS": "gcc_version_str=mine"}, rc_files=[])
        flags = cfg.flags
        assert [s.key for s in cfg.held] == ["gcc_version_str"] and "gcc_version_str" not in cfg
        heard = []
        cfg.subscribe(heard.append)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            import pytensor
        assert cfg.flags is flags and len(cfg) == len(flags) and "gcc_version_str" not in cfg
        assert [s.key for s in cfg.held] == ["gcc_version_str"] and heard == []
        assert "gcc_version_str" in modecfg.config and modecfg.config.flags is not flags
        after = modecfg.load(env={"PYTENSOR_FLAGS": "gcc_version_str=mine"}, rc_files=[])
        assert after.gcc_version_str == "mine" and after.held == () and after.flags is modecfg.config.flags
        print("ok")
        """,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_names_pytensor_declares_are_read_from_its_source_exactly() -> None:
    """The reading that decides, without importing PyTensor, which unknown names are held."""
    from modecfg._pytensor import declared, patches
    from modecfg.config.compat import canonical

    assert declared.names() == {canonical(n) for n in pytensor.config._config_var_dict}
    (row,) = [r for r in patches.contacts() if r.patch.name == "flag names"]
    assert row.state == "on", row.reason


def test_a_file_that_does_not_parse_or_declares_otherwise_gives_no_names(tmp_path: Path) -> None:
    from modecfg._pytensor.declared import declared_in

    (tmp_path / "a.py").write_text('config.add("alpha__beta", "doc", None)\nother.add("nope", 1)\n')
    (tmp_path / "b.py").write_text("config.add(\n")  # config.add( but no Python
    (tmp_path / "c.py").write_bytes(b"\xff\xfe config.add(")
    (tmp_path / "d.py").write_text('name = "x"\nconfig.add(name, "doc", None)\n')  # not a literal
    assert declared_in(tmp_path / "a.py") == {"alpha.beta"}
    assert [declared_in(tmp_path / f) for f in ("b.py", "c.py", "d.py", "missing.py")] == [set()] * 4


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
