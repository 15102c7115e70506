"""The documented .theanorc.example reads cleanly and shows every flag."""

from __future__ import annotations

from pathlib import Path

import modecfg
from modecfg.config.compat import lookup
from modecfg.config.flags import FLAGS
from modecfg.config.sources import read_ini

EXAMPLE = Path(__file__).resolve().parents[1] / ".theanorc.example"


def test_the_example_loads_without_problems() -> None:
    report = modecfg.diagnose(env={"USER": "ann"}, rc_files=[EXAMPLE])
    assert report.errors == () and report.notes == ()
    cfg = modecfg.load(env={"USER": "ann"}, rc_files=[EXAMPLE])
    assert cfg.floatX == "float32" and str(cfg.base_compiledir) == "/tmp/ann/pytensor"


def test_the_example_shows_every_flag() -> None:
    settings = read_ini(EXAMPLE.read_text(), str(EXAMPLE), {})
    shown = {lookup(s.key, section=s.section).flag.name for s in settings}  # type: ignore[union-attr]
    assert set(FLAGS) - shown == {"compiledir"}  # shown commented out: its default is derived
    assert "# compiledir = " in EXAMPLE.read_text()
