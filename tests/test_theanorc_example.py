"""The documented .theanorc.example is generated from the flag declarations and reads cleanly."""

from __future__ import annotations

from pathlib import Path

import modecfg
from modecfg.configuration.compat import lookup
from modecfg.configuration.example import theanorc_example
from modecfg.configuration.flags import FLAGS
from modecfg.configuration.rcformats import read_ini

EXAMPLE = Path(__file__).resolve().parents[1] / ".theanorc.example"


def test_the_committed_example_is_what_the_declarations_generate() -> None:
    assert EXAMPLE.read_text() == theanorc_example(), (
        "regenerate it: modecfg schema --format ini > .theanorc.example"
    )


def test_the_example_loads_without_problems_and_gives_every_default() -> None:
    report = modecfg.diagnose(env={"USER": "ann"}, rc_files=[EXAMPLE])
    assert report.errors == () and report.notes == ()
    from_file = modecfg.load(env={"USER": "ann"}, rc_files=[EXAMPLE])
    defaults = modecfg.load(env={"USER": "ann"}, rc_files=[])
    assert [name for name in FLAGS if from_file[name] != defaults[name]] == []


def test_the_example_shows_every_flag_and_comments_out_the_unset_and_computed_ones() -> None:
    text = EXAMPLE.read_text()
    settings = read_ini(text, str(EXAMPLE), {})
    shown = {lookup(s.key, section=s.section).flag.name for s in settings}  # type: ignore[union-attr]
    declared = set(FLAGS)
    commented = {spec.name for spec in FLAGS.values() if spec.is_lazy or spec.default is None} & declared
    assert shown == declared - commented
    for name in commented:
        assert f"# {name.rsplit('.', 1)[-1]} =    (default: " in text
    for spec in FLAGS.values():
        assert spec.doc.split(".")[0][:40] in " ".join(line[2:] for line in text.splitlines())
