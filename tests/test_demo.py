"""The demo trains: the README's first command does what it says."""

from __future__ import annotations

import io

import pytest

import modecfg

pytest.importorskip("pytensor")


def test_the_demo_trains_and_reports_its_configuration() -> None:
    from modecfg.cli import main

    assert modecfg.config.is_default("floatX")
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(["demo", "--steps", "30"], out, err)
    finally:
        modecfg.config.reset("floatX")  # the demo assigns float32 when floatX is not set
    text = out.getvalue()
    assert code == 0, err.getvalue()
    assert "floatX                   float32" in text
    assert "time per step" in text and "compile time" in text
    accuracy = float(text.split("accuracy")[1].split("%")[0])
    assert accuracy > 90.0
    first, last = (float(x) for x in text.split("cost")[1].split("\n")[0].split("->"))
    assert last < first
