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
    from modecfg._pytensor.patches import every

    rows = _table("The contacts with PyTensor")
    documented = {
        (row[0].replace(" *(on demand)*", ""), row[1].strip("`"), row[0].endswith("*(on demand)*"))
        for row in rows
    }
    actual = {(p.name, p.target, p.on_demand) for p in every()}
    assert documented == actual
    assert all(row[2] for row in rows)  # each says why


def test_what_a_patch_also_changes_is_named_in_its_row() -> None:
    """Issue 61: the config view also replaced two methods of PyTensor's config class, unlisted."""
    from modecfg._pytensor.patches import every

    why = {row[0].replace(" *(on demand)*", ""): row[2] for row in _table("The contacts with PyTensor")}
    named = [also.split()[0] in why[patch.name] for patch in every() for also in patch.also]
    assert named and all(named)


def test_the_measure_it_quotes_is_the_tool_s() -> None:
    assert "python tools/calls.py" in TEXT and (ROOT / "tools" / "calls.py").exists()


def test_the_order_it_states_is_the_precedence_table() -> None:
    from modecfg.configuration.origin import precedence_line

    flat = " ".join(TEXT.split("## One value, from")[1].split("3. ")[0].split()).replace("`", "")
    assert precedence_line() in flat


def test_the_modules_below_the_line_that_load_pytensor_are_the_ones_it_names() -> None:
    """Issue 61: "below the line never imports PyTensor" held for import statements, while
    ``import modecfg.nanguard.mode`` loaded PyTensor. Each module of the behaviour layer is
    imported in a process of its own (forked from one that has not loaded PyTensor)."""
    from tests.fresh import run_json

    sentence = TEXT.split("load PyTensor when they are imported", 1)[1].split("the others load", 1)[0]
    named = sorted(re.findall(r"`(modecfg\.[\w.]+)`", sentence))
    out = run_json(
        """
        import importlib, json, os, pkgutil, sys
        import modecfg
        names = []
        for package in os.environ["LAYER_PACKAGES"].split(","):
            path = importlib.import_module(package).__path__
            names += [package, *(f"{package}.{m.name}" for m in pkgutil.iter_modules(path))]
        assert "pytensor" not in sys.modules
        loads = []
        for name in names:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                try:
                    importlib.import_module(name)
                    os.write(w, b"1" if "pytensor" in sys.modules else b"0")
                finally:
                    os._exit(0)
            os.close(w)
            said = os.read(r, 1)
            os.waitpid(pid, 0)
            os.close(r)
            assert said in (b"0", b"1"), name  # the child imported it
            if said == b"1":
                loads.append(name)
        print(json.dumps({"loads": sorted(loads), "count": len(names)}))
        """,
        env={"LAYER_PACKAGES": ",".join(LAYERS[3])},  # the behaviour layer's packages
    )
    assert out["count"] > 30  # every module of the layer was tried
    assert out["loads"] == named
