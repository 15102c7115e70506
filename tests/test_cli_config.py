"""``modecfg show``, ``explain``, ``set`` and ``unset`` in this process, word for word, on a
configuration the test makes (its own environment and rc file)."""

from __future__ import annotations

import argparse
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

import modecfg
from modecfg.cli import config as commands


def _args(**given: Any) -> argparse.Namespace:
    return argparse.Namespace(**given)


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """modecfg.config read from THEANO_FLAGS and one rc file, for the test."""
    rc = tmp_path / "theanorc"
    rc.write_text("[global]\noptimizer = fast_compile\n")
    env = {"THEANO_FLAGS": "floatX=float32,gcc_version_str=9.9", "MODECFGRC": str(rc)}
    cfg = modecfg.load(env=env)
    monkeypatch.setattr(modecfg, "config", cfg)
    return cfg


def _show(**given: Any) -> str:
    out = io.StringIO()
    assert commands.cmd_show(_args(**{"all": False, "json": False, **given}), out, io.StringIO()) == 0
    return out.getvalue()


def test_show_lists_what_is_set_pytensors_own_flags_and_the_sources(configured: Any) -> None:
    cfg = configured
    assert _show() == (
        f"floatX     float32               {cfg.origin('floatX')}\n"
        f"optimizer  fast_compile          {cfg.origin('optimizer')}\n"
        "\nPyTensor's own flags, handed to it as written (modecfg does not declare them):\n"
        f"gcc_version_str  9.9                   {cfg.for_pytensor[0].origin}\n"
        f"\nread from: {', '.join(cfg.sources)}\n"
    )
    assert len(cfg.sources) == 2 and len(cfg.for_pytensor) == 1


def test_show_all_lists_every_flag(configured: Any) -> None:
    lines = _show(all=True).splitlines()
    flags = lines[: lines.index("")]
    assert [line.split()[0] for line in flags] == list(configured)  # every flag, in the table's order
    assert flags[0].startswith("floatX  ") and lines[-1].startswith("read from: ")


def test_show_with_nothing_set_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modecfg, "config", modecfg.load(env={}))
    assert _show() == "every flag has its default value (modecfg show --all lists them)\n"


def test_show_as_json_names_sources_values_origins_defaults_and_pytensors_own(configured: Any) -> None:
    text = _show(json=True)
    assert text.startswith('{\n  "sources": [\n') and text.endswith("}\n")
    shown = json.loads(text)
    assert shown["sources"] == list(configured.sources)
    assert shown["flags"] == [
        {
            "name": "floatX",
            "value": "float32",
            "origin": {"layer": "env", "source": "THEANO_FLAGS", "line": None},
            "default": "float64",
        },
        {
            "name": "optimizer",
            "value": "fast_compile",
            "origin": {"layer": "rc", "source": configured.sources[0], "line": 2},
            "default": "o4",
        },
    ]
    assert shown["pytensor_own"] == [
        {
            "name": "gcc_version_str",
            "raw": "9.9",
            "origin": {"layer": "env", "source": "THEANO_FLAGS", "line": None},
        }
    ]


def test_explain_as_text_and_as_json(configured: Any) -> None:
    out = io.StringIO()
    assert commands.cmd_explain(_args(flag="floatX", json=False), out, io.StringIO()) == 0
    assert out.getvalue() == f"{configured.explain('floatX')}\n"
    out = io.StringIO()
    assert commands.cmd_explain(_args(flag="floatX", json=True), out, io.StringIO()) == 0
    text = out.getvalue()
    assert text.startswith('{\n  "name": "floatX",\n') and text.endswith("}\n")
    shown = json.loads(text)
    assert shown == {
        "name": "floatX",
        "value": "float32",
        "origin": {"layer": "env", "source": "THEANO_FLAGS", "line": None},
        "default": "float64",
        "doc": configured.explain("floatX").doc,
        "type": configured.explain("floatX").kind,
        "choices": ["float64", "float32", "float16"],
        "layers": [
            {"raw": None, "value": "float64", "origin": {"layer": "default"}},
            {
                "raw": "float32",
                "value": "float32",
                "origin": {"layer": "env", "source": "THEANO_FLAGS", "line": None},
            },
        ],
    }


# -- set and unset -------------------------------------------------------------------------


def _edit(command: str, **given: Any) -> str:
    out = io.StringIO()
    run = commands.cmd_set if command == "set" else commands.cmd_unset
    assert run(_args(**given), out, io.StringIO()) == 0
    return out.getvalue()


def test_set_and_unset_say_what_changed_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc = tmp_path / "theanorc"
    rc.write_text("[global]\nfloatX = float64\n")
    monkeypatch.setenv("MODECFGRC", str(rc))
    monkeypatch.delenv("THEANO_FLAGS", raising=False)
    said = _edit("set", flag="floatX", value="float32", file=str(rc))
    assert said.startswith(f"floatX = 'float32' set in {rc} (line 2)\nthe previous file is kept as ")
    assert said.count("\n") == 2  # the file decides: no note
    assert _edit("set", flag="floatX", value="float32", file=str(rc)) == (
        f"floatX = 'float32' already set in {rc} (line 2)\n"
    )
    assert _edit("unset", flag="floatX", file=str(rc)).startswith(f"floatX removed from {rc}\n")
    assert _edit("unset", flag="floatX", file=str(rc)) == f"floatX is not set in {rc}: nothing to do\n"
    assert "floatX" not in rc.read_text()


def test_set_says_once_which_obsolete_flags_the_file_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = tmp_path / "theanorc"
    monkeypatch.setenv("MODECFGRC", str(rc))
    monkeypatch.delenv("THEANO_FLAGS", raising=False)
    rc.write_text("[lib]\ncnmem = .75\n")
    note = "modecfg validate says why, modecfg unset NAME removes one\n"
    assert _edit("set", flag="floatX", value="float32", file=str(rc)).endswith(
        f"note: 1 obsolete flag here too (lib.cnmem): {note}"
    )
    rc.write_text("[lib]\ncnmem = .75\n[nvcc]\nfastmath = True\n")
    said = _edit("set", flag="floatX", value="float32", file=str(rc))
    assert said.endswith(f"note: 2 obsolete flags here too (lib.cnmem, nvcc.fastmath): {note}")
    assert said.count("obsolete") == 1


def test_an_edit_says_when_the_environment_or_another_file_decides_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc, other = tmp_path / "theanorc", tmp_path / "other"
    other.write_text("[global]\nfloatX = float16\n")
    monkeypatch.setenv("MODECFGRC", os.pathsep.join([str(rc), str(other)]))  # the later file wins
    monkeypatch.delenv("THEANO_FLAGS", raising=False)
    said = _edit("set", flag="floatX", value="float32", file=str(rc))
    winner = modecfg.load().origin("floatX")
    note = f"note: {winner} also sets floatX, and that is what counts here\n"
    assert said == f"floatX = 'float32' set in {rc} (line 2)\n{note}"
    assert str(other) in str(winner)
    monkeypatch.setenv("MODECFGRC", str(rc))
    monkeypatch.setenv("THEANO_FLAGS", "floatX=float64")
    said = _edit("set", flag="optimizer", value="fast_run", file=str(rc))
    assert "also sets" not in said  # the environment sets floatX only
    said = _edit("unset", flag="floatX", file=str(rc))
    winner = modecfg.load().origin("floatX")
    assert winner.layer is modecfg.Layer.ENV
    assert said.startswith(f"floatX removed from {rc}\nthe previous file is kept as {rc}.bak")
    assert said.endswith(f"\nnote: {winner} also sets floatX, and that is what counts here\n")


# -- migrate, schema, validate ------------------------------------------------------------------


def _migrate(**given: Any) -> tuple[int, str, str]:
    base = {"file": None, "flags": None, "to": None, "write": False}
    out, err = io.StringIO(), io.StringIO()
    code = commands.cmd_migrate(_args(**{**base, **given}), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"file": "a.ini", "flags": "floatX=float32"}, "give a FILE or --flags, not both"),
        (
            {"file": "a.ini", "write": True},
            "--write rewrites a Python script (modecfg migrate SCRIPT.py --write)",
        ),
        ({"write": True}, "--write rewrites a Python script (modecfg migrate SCRIPT.py --write)"),
    ],
)
def test_migrate_refuses_what_it_cannot_do_with_the_usage(given: dict[str, Any], said: str) -> None:
    from modecfg.cli.common import _Usage

    with pytest.raises(_Usage) as refused:
        _migrate(**given)
    assert str(refused.value) == said


def test_migrate_writes_a_file_in_the_format_its_name_or_to_says(tmp_path: Path) -> None:
    from modecfg.configuration.migrate import migrate_file

    rc = tmp_path / "old.theanorc"
    rc.write_text("[global]\nfloatX = float32\n")
    toml = tmp_path / "old.toml"
    toml.write_text('[global]\nfloatX = "float32"\n')
    assert _migrate(file=str(rc)) == (0, migrate_file(str(rc)).render("ini"), "")
    assert _migrate(file=str(toml)) == (0, migrate_file(str(toml)).render("toml"), "")
    assert _migrate(file=str(rc), to="flags") == (0, migrate_file(str(rc)).render("flags"), "")
    assert _migrate(flags="floatX=float32")[1] == migrate_file(str(rc)).render("flags")


def test_migrate_with_nothing_named_takes_the_legacy_variable_then_the_legacy_rc_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.configuration.migrate import migrate_file, migrate_flags

    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("THEANO_FLAGS", "AESARA_FLAGS"):
        monkeypatch.delenv(var, raising=False)
    code, out, err = _migrate()
    assert (code, out) == (0, "") and err.startswith("nothing to migrate: no THEANO_FLAGS, ")
    assert "~/.theanorc" in err
    (tmp_path / ".theanorc").write_text("[global]\nfloatX = float32\n")
    assert _migrate() == (0, migrate_file(str(tmp_path / ".theanorc")).render("ini"), "")
    assert _migrate(to="toml")[1] == migrate_file(str(tmp_path / ".theanorc")).render("toml")
    monkeypatch.setenv("THEANO_FLAGS", "floatX=float32,optimizer=None")
    expected = migrate_flags("floatX=float32,optimizer=None", source="THEANO_FLAGS")
    assert _migrate() == (0, expected.render("flags"), "")
    assert _migrate(to="ini")[1] == expected.render("ini")


def test_migrate_of_a_script_says_each_rename_and_what_it_rewrote(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import theano\nf = theano.function\nr = theano.sandbox.cuda.basic_ops\n")
    code, out, err = _migrate(file=str(script))
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"{script}:1:") and len(lines) >= 2
    code, out, _ = _migrate(file=str(script), write=True)
    assert code == 1  # one left to change by hand
    backup = next(tmp_path.glob("train.py.bak*"))
    by_hand = [line for line in out.splitlines() if "by hand" in line]
    assert by_hand
    rewrote = out.splitlines()[-1]
    assert rewrote.startswith("rewrote ") and rewrote.endswith(
        f" names in {script} (the previous file is kept as {backup})"
    )
    clean = tmp_path / "clean.py"
    clean.write_text("import numpy\n")
    assert _migrate(file=str(clean), write=True) == (0, f"{clean}: no Theano or Aesara name to change\n", "")


def test_schema_as_ini_or_as_json_indented() -> None:
    from modecfg.configuration.example import theanorc_example
    from modecfg.configuration.schema import json_schema

    out = io.StringIO()
    assert commands.cmd_schema(_args(format="ini"), out, io.StringIO()) == 0
    assert out.getvalue() == theanorc_example()
    out = io.StringIO()
    assert commands.cmd_schema(_args(format="json"), out, io.StringIO()) == 0
    assert out.getvalue() == json.dumps(json_schema(), indent=2) + "\n"


def test_validate_with_nothing_set_says_everything_is_at_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("THEANO_FLAGS", "PYTENSOR_FLAGS", "MODECFG_FLAGS", "AESARA_FLAGS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MODECFGRC", "")
    out = io.StringIO()
    code = commands.cmd_validate(_args(rc=[], all=False), out, io.StringIO())
    said = out.getvalue()
    assert said.startswith("no flag variables or rc files are set: everything is at its default\n")
    assert code == 0 and said.endswith(")\n") and "configuration OK, and this machine can run it (" in said
