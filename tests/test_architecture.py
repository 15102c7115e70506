"""ARCHITECTURE.md is the map of the package: its layer table is the one the import test holds
the code to, and its list of contacts with PyTensor is the patch list."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def _table(heading: str) -> list[list[str]]:
    """The rows of the first table under ``## heading``, each a list of cells."""
    section = TEXT.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def test_the_layer_table_is_the_one_the_import_test_holds() -> None:
    documented = [tuple(re.findall(r"`([\w.]+)`", row[1])) for row in _table("The layers (lowest first)")]
    assert documented == [tuple(layer) for layer in LAYERS]


def test_every_contact_with_pytensor_is_listed_with_its_target_and_no_other() -> None:
    from modecfg._pytensor.patches import PATCHES

    rows = _table("The contacts with PyTensor")
    documented = {
        (row[0].replace(" *(on demand)*", ""), row[1].strip("`"), row[0].endswith("*(on demand)*"))
        for row in rows
    }
    actual = {(p.name, p.target, p.on_demand) for p in PATCHES}
    assert documented == actual
    assert all(row[2] for row in rows)  # each says why


def test_the_measure_it_quotes_is_the_tool_s() -> None:
    assert "python tools/calls.py" in TEXT and (ROOT / "tools" / "calls.py").exists()


def test_the_order_it_states_is_the_precedence_table() -> None:
    from modecfg.config.origin import precedence_line

    flat = " ".join(TEXT.split("## One value, from")[1].split("3. ")[0].split()).replace("`", "")
    assert precedence_line() in flat
