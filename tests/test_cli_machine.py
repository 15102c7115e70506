"""``modecfg linkers``, ``modes``, ``doctor`` and ``autoload``, word for word, on tables made by hand:
what each prints does not depend on the machine that runs the test."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import modecfg
from modecfg._registry.linkers import LinkerInfo
from modecfg.cli import machine
from modecfg.modes.build import ModeInfo

LINKERS = (
    LinkerInfo("cvm", True, True, "lowest", "C virtual machine", "c++"),
    LinkerInfo("numba", False, False, "low", "numba-compiled graph", "numba"),
    LinkerInfo(
        "jax", True, False, "high", "JAX's jit", "jax", available=False, why_not="JAX is not installed"
    ),
)


def _args(**given: Any) -> argparse.Namespace:
    return argparse.Namespace(**given)


@pytest.fixture
def linkers(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg.linkers import auto

    monkeypatch.setattr(modecfg.linkers, "table", lambda: LINKERS)
    monkeypatch.setattr(modecfg.linkers, "limit", {"cvm": "", "numba": "no Scan here"}.__getitem__)
    monkeypatch.setattr(modecfg.linkers, "resolve_linker", lambda name: f"numba (for {name})")
    monkeypatch.setattr(auto, "rule_here", lambda: "cvm for small graphs")


def test_linkers_prints_the_table_with_what_limits_each(linkers: None) -> None:
    out = io.StringIO()
    assert machine.cmd_linkers(_args(json=False), out, io.StringIO()) == 0
    assert out.getvalue() == (
        "linker     usable  gc   by op  overhead  what it is\n"
        "cvm        yes     yes  yes    lowest    C virtual machine\n"
        "numba      partly  no   no     low       numba-compiled graph\n"
        "           no Scan here\n"
        "jax        no      yes  no     high      JAX's jit\n"
        "           JAX is not installed\n"
        "\n"
        "linker=auto (the default, PyTensor's): numba (for auto)\n"
        "linker=per_graph (modecfg's, opt-in): cvm for small graphs\n"
    )


def test_linkers_as_json_holds_every_field_and_the_limit(linkers: None) -> None:
    out = io.StringIO()
    assert machine.cmd_linkers(_args(json=True), out, io.StringIO()) == 0
    text = out.getvalue()
    assert text.endswith("}\n]\n") and text.startswith('[\n  {\n    "name": "cvm",\n')  # indented by 2
    rows = json.loads(text)
    assert [r["limit"] for r in rows] == ["", "no Scan here", ""]  # an unusable one has none
    assert rows[2] == {**LINKERS[2]._asdict(), "limit": ""}
    assert rows[1] == {**LINKERS[1]._asdict(), "limit": "no Scan here"}


MODES = [
    ModeInfo("FAST_RUN", "o4", "cvm", "speed", False, True, ""),
    ModeInfo("DebugMode", "fast_run", "debug", "checks every rewrite and C against Python", False, True, ""),
    ModeInfo("ProfileMode", "o4", "profiling", "old name", True, True, ""),
    ModeInfo("JAXMode", "fast_run", "jax", "JAX", False, False, "JAX is not installed"),
]


def test_modes_prints_the_table_its_aliases_and_where_the_mode_flag_comes_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(modecfg.modes, "table", lambda: MODES)
    monkeypatch.setattr(modecfg.modes, "mode_names", lambda: [*(m.name for m in MODES), "FAST", "Mode"])
    monkeypatch.setattr(modecfg.modes, "canonical_mode", {"FAST": "FAST_RUN", "Mode": "FAST_RUN"}.__getitem__)
    out = io.StringIO()
    with modecfg.config.override(mode="DebugMode"):
        assert machine.cmd_modes(_args(), out, io.StringIO()) == 0
        origin = modecfg.config.origin("mode")
    assert out.getvalue() == (
        "mode         optimizer  linker         what it is for\n"
        "FAST_RUN     o4         cvm            speed\n"
        "DebugMode    fast_run   debug          checks every rewrite and C against Python\n"
        "ProfileMode  o4         profiling      old name (deprecated)\n"
        "JAXMode      fast_run   unusable here  JAX\n"
        "             JAX is not installed\n"
        "\n"
        "FAST is another name for FAST_RUN\n"
        "Mode is another name for FAST_RUN\n"
        f"\nthe mode flag is DebugMode (from {origin})\n"
    )


def test_modes_without_aliases_and_with_short_names_keeps_the_titles_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [ModeInfo("A", "o", "c", "p", False, True, "")]
    monkeypatch.setattr(modecfg.modes, "table", lambda: rows)
    monkeypatch.setattr(modecfg.modes, "mode_names", lambda: ["A"])
    out = io.StringIO()
    machine.cmd_modes(_args(), out, io.StringIO())
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["mode  optimizer  linker  what it is for", "A     o          c       p"]
    assert lines[2] == "" and lines[3].startswith("the mode flag is ") and len(lines) == 4


def test_doctor_prints_the_verdict_then_each_section(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg import doctor

    seen: list[Any] = []
    report = {"machine": [("cores", "2"), ("gpu", "none")], "pytensor": [("version", "3.0.7")]}

    def verdict(config: Any, given: Any) -> list[str]:
        seen.append(given)
        return ["ready", "  (details with --verbose)"]

    monkeypatch.setattr(
        doctor, "diagnose_machine", lambda verbose: dict(report, asked=[("verbose", str(verbose))])
    )
    monkeypatch.setattr(doctor, "verdict", verdict)
    out = io.StringIO()
    assert machine.cmd_doctor(_args(verbose=True), out, io.StringIO()) == 0
    assert out.getvalue() == (
        "ready\n  (details with --verbose)\n\n"
        "machine\n  cores                  2\n  gpu                    none\n"
        "pytensor\n  version                3.0.7\n"
        "asked\n  verbose                True\n"
    )
    assert seen == [dict(report, asked=[("verbose", "True")])]  # the verdict is of that report


def test_autoload_on_off_and_status_say_what_they_did_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg import autoload

    pth = tmp_path / "modecfg-autoload.pth"
    monkeypatch.setattr(autoload, "pth_path", lambda: pth)

    def said(action: str) -> str:
        out = io.StringIO()
        assert machine.cmd_autoload(_args(action=action), out, io.StringIO()) == 0
        return out.getvalue()

    assert said("status") == f"autoload off for {sys.executable} ({pth})\n"
    assert said("on") == (
        "autoload on: every Python of this environment loads modecfg before PyTensor\n"
        f"  ({pth}; undo: modecfg autoload off; one run without it: MODECFG_AUTOLOAD=0)\n"
    )
    assert pth.is_file()
    assert said("status") == f"autoload on for {sys.executable} ({pth})\n"
    off = (
        "scripts that do not import modecfg run PyTensor without it "
        "(modecfg run SCRIPT loads it for one run)\n"
    )
    assert said("off") == f"autoload off: {off}"
    assert not pth.exists()
    assert said("off") == f"autoload off (it was not on): {off}"
