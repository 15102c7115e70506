"""Flags PyTensor declares and modecfg does not (``gcc_version_str``) are PyTensor's, end to end:
modecfg hands PyTensor what its sources set for them, and ``pytensor.config`` keeps PyTensor's
own parameter; a name neither declares is an UnknownFlagError at once."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytensor
import pytest

import modecfg


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **env},
    )


@pytest.mark.parametrize(
    "order", ["import modecfg; modecfg.config.floatX; import pytensor", "import pytensor, modecfg"]
)
@pytest.mark.parametrize("variable", ["PYTENSOR_FLAGS", "THEANO_FLAGS", "MODECFG_FLAGS"])
def test_a_setting_of_pytensors_own_flag_reaches_pytensor_in_either_import_order(
    order: str, variable: str
) -> None:
    """PYTENSOR_FLAGS PyTensor reads itself; the others only modecfg reads: handed to PyTensor at
    its import, or when modecfg comes after it."""
    done = _run(
        f"""
        import warnings; warnings.simplefilter("error", UserWarning)
        {order}
        import modecfg
        from modecfg.configuration.store import Store
        assert pytensor.config.gcc_version_str == "x", pytensor.config.gcc_version_str
        assert type(pytensor.config._config_var_dict["gcc_version_str"]).__module__ == "pytensor.configparser"
        assert [(s.key, s.raw) for s in modecfg.config.for_pytensor] == [("gcc_version_str", "x")]
        assert "gcc_version_str" not in modecfg.config
        """,
        **{variable: "gcc_version_str=x"},
    )
    assert done.returncode == 0, done.stderr


def test_a_setting_pytensor_does_not_take_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyTensor imported before modecfg has fixed gcc_version_str already; a name its source
    seemed to declare and its import did not (a contact that no longer verifies): each said."""
    from modecfg._pytensor import view as bridge
    from modecfg.configuration.live import build
    from modecfg.configuration.origin import Layer, Origin, Setting
    from modecfg.configuration.resolve import Resolution
    from modecfg.errors import HeldFlagWarning

    current = bridge.view()
    assert current is not None
    pytensor.config.gcc_version_str  # noqa: B018  (read: PyTensor fixes it)
    res = Resolution()
    origin = Origin(Layer.ENV, "THEANO_FLAGS")
    res.for_pytensor += [Setting("gcc_version_str", "other", origin), Setting("zz_gone", "1", origin)]
    monkeypatch.setattr(bridge, "_config", build(res))
    monkeypatch.setattr(bridge, "HAND_OFF", ["read through the view after import"])
    with pytest.warns(HeldFlagWarning) as said:
        current.hand_late()
    assert [str(w.message) for w in said] == [
        "gcc_version_str='other' (from THEANO_FLAGS): PyTensor refuses it (Can't change the value of "
        "gcc_version_str config parameter after initialization!)",
        "zz_gone='1' (from THEANO_FLAGS): PyTensor declares no such flag, though its source seemed to; "
        "the setting does nothing",
    ]
    assert pytensor.config.gcc_version_str != "other"
    monkeypatch.setattr(bridge, "HAND_OFF", ["handed over at import"])  # PyTensor had it then
    with pytest.warns(HeldFlagWarning) as said:
        current.hand_late()
    assert len(said) == 1 and "zz_gone" in str(said[0].message)


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


def test_the_names_pytensor_declares_are_read_from_its_source_exactly() -> None:
    """The reading that decides, without importing PyTensor, which unknown names are held."""
    from modecfg._pytensor import declared, patches
    from modecfg.configuration.compat import canonical

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


def test_validate_reports_a_name_no_flag_has_and_show_lists_pytensors_own() -> None:
    bad = _run(
        "from modecfg.cli import main; raise SystemExit(main(['validate']))", PYTENSOR_FLAGS="bogus_thing=3"
    )
    assert bad.returncode == 1 and "error: unknown flag 'bogus_thing' (from PYTENSOR_FLAGS)" in bad.stdout
    good = _run(
        "from modecfg.cli import main; raise SystemExit(main(['validate']))",
        PYTENSOR_FLAGS="gcc_version_str=x",
    )
    assert good.returncode == 0 and "unknown flag" not in good.stdout + good.stderr
    code = "import sys; from modecfg.cli import main; raise SystemExit(main(['show', *sys.argv[1:]]))"
    shown = _run(code, THEANO_FLAGS="gcc_version_str=x")
    assert shown.returncode == 0, shown.stderr
    assert "PyTensor's own flags, handed to it as written" in shown.stdout
    (line,) = [text for text in shown.stdout.splitlines() if text.startswith("gcc_version_str")]
    assert line.split() == ["gcc_version_str", "x", "THEANO_FLAGS"], line
    as_json = subprocess.run(
        [sys.executable, "-c", code, "--json"], capture_output=True, text=True, timeout=120,
        env={**{k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))},
             "THEANO_FLAGS": "gcc_version_str=x"},
    )  # fmt: skip
    import json

    assert json.loads(as_json.stdout)["pytensor_own"] == [
        {
            "name": "gcc_version_str",
            "raw": "x",
            "origin": {"layer": "env", "source": "THEANO_FLAGS", "line": None},
        }
    ]


def test_diagnose_reports_an_unknown_name_and_leaves_pytensors_own_to_pytensor() -> None:
    report = modecfg.diagnose(env={"PYTENSOR_FLAGS": "bogus_thing=3,gcc_version_str=y"}, rc_files=[])
    assert [str(e) for e in report.errors] == ["unknown flag 'bogus_thing' (from PYTENSOR_FLAGS)"]
