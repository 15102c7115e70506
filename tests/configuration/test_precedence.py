"""Precedence is data: one table (``modecfg.configuration.origin.PRECEDENCE``) says which value wins,
and reading, resolution, explain and the generated example follow it."""

from __future__ import annotations

import importlib
import itertools
from pathlib import Path

import pytest

import modecfg
from modecfg.configuration import origin, sources
from modecfg.configuration.origin import PRECEDENCE, Layer, Origin, Setting, precedence_line, rung

resolve = importlib.import_module(
    "modecfg.configuration.resolve"
)  # (the package has a function of that name)


def test_the_table_has_every_layer_once_and_layers_compare_by_their_row() -> None:
    assert sorted(row.layer for row in PRECEDENCE) == list(Layer)  # sorted by rank: the table's order
    assert {row.layer for row in PRECEDENCE} == set(Layer) and len(PRECEDENCE) == len(Layer)
    for (i, low), (j, high) in itertools.combinations(enumerate(PRECEDENCE), 2):
        assert low.layer < high.layer and high.layer > low.layer and low.layer <= high.layer
        assert not low.layer >= high.layer and low.layer.rank == i and high.layer.rank == j
        assert rung(low.layer) is low
    for layer in Layer:  # a layer against itself, and against its own name (issue 59)
        assert layer >= layer and layer <= layer and not layer < layer and not layer > layer
        assert layer >= layer.value and layer <= layer.value and not layer > layer.value
    assert precedence_line() == (
        "defaults < rc files < THEANO_FLAGS < AESARA_FLAGS < PYTENSOR_FLAGS < MODECFG_FLAGS"
        " < assignments < overrides"
    )


def test_the_places_read_are_the_tables() -> None:
    assert sources.ENV_FLAG_VARS == rung(Layer.ENV).reads
    assert sources.RC_PATH_VARS == rung(Layer.RC).named_by
    assert sources.RC_PATH_VARS == ("THEANORC", "AESARARC", "PYTENSORRC", "MODECFGRC")
    assert sources.DEFAULT_RC_FILES == rung(Layer.RC).reads
    assert sources.LEGACY_FLAG_VARS == ("THEANO_FLAGS", "AESARA_FLAGS")
    assert sources.LEGACY_RC_FILES == ("~/.theanorc", "~/.theanorc.txt", "~/.aesararc")


def _rc(tmp_path: Path, name: str, value: str) -> str:
    path = tmp_path / name
    path.write_text(f"[global]\nfloatX = {value}\n")
    return str(path)


def test_each_row_wins_over_every_row_below_it(tmp_path: Path) -> None:
    """The code's behaviour, pair by pair, is the table's order: a value at each layer, and the
    higher layer's is the one read, with its origin."""
    values = {Layer.RC: "float16", Layer.ENV: "float32", Layer.ASSIGNMENT: "float64"}
    for low, high in itertools.combinations([row.layer for row in PRECEDENCE], 2):
        used = {low, high}
        cfg = modecfg.load(
            env={"THEANO_FLAGS": f"floatX={values[Layer.ENV]}"} if Layer.ENV in used else {},
            rc_files=[_rc(tmp_path, "rc", values[Layer.RC])] if Layer.RC in used else [],
            assignments={"floatX": values[Layer.ASSIGNMENT]} if Layer.ASSIGNMENT in used else None,
        )
        if high is Layer.OVERRIDE:
            with cfg.override(floatX="float16" if low is not Layer.RC else "float64"):
                assert cfg.origin("floatX").layer is Layer.OVERRIDE, (low, high)
            continue
        assert cfg.origin("floatX").layer is high, (low, high)
        assert cfg.floatX == values[high]
        assert [c.origin.layer for c in cfg.explain("floatX").layers] == [
            layer for layer in (Layer.RC, Layer.ENV, Layer.ASSIGNMENT) if layer in used
        ]


def test_within_a_row_the_later_place_wins(tmp_path: Path) -> None:
    env_vars = rung(Layer.ENV).reads
    for low, high in itertools.combinations(env_vars, 2):
        cfg = modecfg.load(env={high: "floatX=float32", low: "floatX=float16"}, rc_files=[])
        assert (cfg.floatX, cfg.origin("floatX").source) == ("float32", high)
    named = rung(Layer.RC).named_by
    for low, high in itertools.combinations(named, 2):
        env = {"HOME": str(tmp_path), high: _rc(tmp_path, "b", "float32"), low: _rc(tmp_path, "a", "float16")}
        cfg = modecfg.load(env=env)
        assert (cfg.floatX, cfg.origin("floatX").source) == ("float32", str(tmp_path / "b"))


def test_gather_reads_in_the_tables_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"PYTENSOR_FLAGS": "floatX=float32", "THEANO_FLAGS": "floatX=float16"}
    rc = _rc(tmp_path, "rc", "float64")
    _, errors, read = resolve.gather(env, [rc])
    assert errors == [] and read == [rc, "THEANO_FLAGS", "PYTENSOR_FLAGS"]
    swapped = (PRECEDENCE[0], PRECEDENCE[2]._replace(reads=("PYTENSOR_FLAGS", "THEANO_FLAGS")), PRECEDENCE[1],
               *PRECEDENCE[3:])  # fmt: skip
    monkeypatch.setattr(resolve, "PRECEDENCE", swapped)
    settings, _, read = resolve.gather(env, [rc])
    assert read == ["PYTENSOR_FLAGS", "THEANO_FLAGS", rc]
    assert [s.raw for s in settings] == ["float32", "float16", "float64"]


def test_candidates_are_kept_in_the_tables_order_whatever_order_they_arrive_in() -> None:
    settings = [
        Setting("floatX", "float32", Origin(Layer.ENV, "THEANO_FLAGS")),
        Setting("floatX", "float64", Origin(Layer.ASSIGNMENT, "x.py", 3)),
        Setting("floatX", "float16", Origin(Layer.RC, "/rc", 1)),
        Setting("floatX", "float16", Origin(Layer.ENV, "MODECFG_FLAGS")),
    ]
    found = resolve.resolve(settings).candidates["floatX"]
    assert [(c.origin.layer, c.origin.source) for c in found] == [
        (Layer.RC, "/rc"), (Layer.ENV, "THEANO_FLAGS"), (Layer.ENV, "MODECFG_FLAGS"),
        (Layer.ASSIGNMENT, "x.py"),
    ]  # fmt: skip
    assert resolve.ranked(list(reversed(found)))[-1].origin.layer is Layer.ASSIGNMENT
    # the ranks are the table's: a table that put rc files above the variables orders them so
    swapped = (PRECEDENCE[0], PRECEDENCE[2], PRECEDENCE[1], *PRECEDENCE[3:])
    ranks = {row.layer: i for i, row in enumerate(swapped)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(origin, "_RANK", ranks)
        assert [c.origin.layer for c in resolve.ranked(found)][:3] == [Layer.ENV, Layer.ENV, Layer.RC]


def test_the_example_rc_file_states_the_tables_order() -> None:
    from modecfg.configuration.example import theanorc_example

    text = theanorc_example()
    assert "#   defaults < rc files < THEANO_FLAGS < AESARA_FLAGS < PYTENSOR_FLAGS < MODECFG_FLAGS\n" in text
    assert "#            < assignments < overrides\n" in text
    flat = " ".join(line.removeprefix("#").strip() for line in text.splitlines()[:16])
    assert "the path lists in THEANORC, AESARARC, PYTENSORRC, MODECFGRC (a file" in flat
    assert "or else ~/.theanorc, ~/.theanorc.txt, ~/.aesararc, ~/.pytensorrc and ~/.modecfg.toml (a" in flat


def test_the_configuration_page_states_the_tables_order() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = page.split("Where values come from, highest precedence first:\n", 1)[1].split("\n\n", 2)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in section.splitlines()[3:]]
    said = {"environment": Layer.ENV, "rc files": Layer.RC}
    assert [said.get(row[0], row[0]) for row in rows] == [row.layer for row in reversed(PRECEDENCE)]
    env = dict(rows)["environment"]
    assert env == " > ".join(f"`{var}`" for var in reversed(rung(Layer.ENV).reads))
    rc = dict(rows)["rc files"]
    assert rc.startswith(" > ".join(f"`{var}`" for var in reversed(rung(Layer.RC).named_by)))
    assert rc.endswith(", ".join(f"`{path}`" for path in rung(Layer.RC).reads))
