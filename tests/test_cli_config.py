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
