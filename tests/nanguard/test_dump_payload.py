"""A dump the user trusts is still checked before it runs: a graph part that is not the shape of a
NaN-guard call, or that names values the dump does not hold, is refused with what is off.

The graph part of a signed dump is unpickled (the user wrote it); what comes out must be
``{"inputs", "outputs", "n_outputs", "target_indices"}`` with graph variables, one captured value
per input, outputs and updates that add up, updates of inputs that exist. A damaged or
hand-edited dump otherwise fails deep inside a compile, far from its cause.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.errors import DumpError
from modecfg.nanguard import dump as dump_module
from modecfg.nanguard import dump_reading
from tests.nanguard.dumptools import craft, rebuild

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


@pytest.fixture(scope="module")
def graph() -> tuple[Any, Any, Any]:
    x = pt.vector("x")
    y = pt.vector("y")
    return x, y, pt.log(x)


@pytest.fixture(scope="module")
def one_input(tmp_path_factory: pytest.TempPathFactory, graph: tuple[Any, Any, Any]) -> Path:
    """A dump of log(x) on one captured value, as modecfg writes it (unsigned; each test signs its copy)."""
    x, _, out = graph
    path = tmp_path_factory.mktemp("payload") / "log.npz"
    return craft(path, [x], [out], [np.array([-1.0, 2.0])], {"mode": "FAST_COMPILE", "linker": "py"})


def _pickled(payload: Any, ids: dict[int, Any] | None = None) -> bytes:
    """``payload`` pickled as the dump's graph part, the objects in ``ids`` by persistent id."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.persistent_id = lambda obj: (ids or {}).get(id(obj))  # type: ignore[method-assign]
    pickler.dump(payload)
    return out.getvalue()


def _replay_refusal(source: Path, target: Path, graph_part: bytes) -> str:
    signed = rebuild(source, target, replace={dump_module.GRAPH: graph_part})
    assert modecfg.load_dump(signed).signed_by_you  # the user's own dump: only its shape stops it
    with pytest.raises(DumpError) as info:
        modecfg.replay(signed)
    return str(info.value)


def test_the_crafted_dump_replays_when_its_graph_part_is_whole(
    one_input: Path, tmp_path: Path, graph: tuple[Any, Any, Any]
) -> None:
    x, _, out = graph
    whole = {"inputs": [x], "outputs": [out], "n_outputs": 1, "target_indices": []}
    signed = rebuild(one_input, tmp_path / "whole.npz", replace={dump_module.GRAPH: _pickled(whole)})
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):  # it ran: the baseline the refusals
        modecfg.replay(signed)  # below differ from by one thing


def _shapes(x: Any, y: Any, out: Any) -> list[tuple[Any, str]]:
    full = {"inputs": [x], "outputs": [out], "n_outputs": 1, "target_indices": []}
    return [
        ([x, out], "its graph is not a NaN-guard call"),
        ({"inputs": [x]}, "missing n_outputs, outputs, target_indices"),
        ({k: v for k, v in full.items() if k != "target_indices"}, "missing target_indices"),
        ({**full, "inputs": (x,)}, "inputs, outputs and target_indices must be lists"),
        ({**full, "outputs": (out,)}, "inputs, outputs and target_indices must be lists"),
        ({**full, "target_indices": ()}, "inputs, outputs and target_indices must be lists"),
        ({**full, "outputs": [out, "x"]}, "its inputs and outputs are not graph variables"),
        ({**full, "inputs": [np.zeros(2)]}, "its inputs and outputs are not graph variables"),
        ({**full, "inputs": [x, y]}, "1 values for 2 inputs"),
        ({**full, "inputs": []}, "1 values for 0 inputs"),
        ({**full, "n_outputs": 1.0}, "its outputs and updates do not add up"),
        ({**full, "n_outputs": -1}, "its outputs and updates do not add up"),
        ({**full, "n_outputs": 2}, "its outputs and updates do not add up"),
        ({**full, "n_outputs": 0}, "its outputs and updates do not add up"),  # one update, no target
        ({**full, "target_indices": [0]}, "its outputs and updates do not add up"),  # a target, no update
        ({**full, "n_outputs": 0, "target_indices": [1]}, "an update names an input that does not exist"),
        ({**full, "n_outputs": 0, "target_indices": [-1]}, "an update names an input that does not exist"),
        ({**full, "n_outputs": 0, "target_indices": [0.0]}, "an update names an input that does not exist"),
    ]


@pytest.mark.parametrize("case", range(18))
def test_a_graph_part_not_shaped_as_a_call_is_refused_saying_what_is_off(
    case: int, one_input: Path, tmp_path: Path, graph: tuple[Any, Any, Any]
) -> None:
    payload, what = _shapes(*graph)[case]
    said = _replay_refusal(one_input, tmp_path / "bad.npz", _pickled(payload))
    assert said == f"{tmp_path / 'bad.npz'}: the dump is corrupted ({what})"


def test_an_update_of_the_one_input_is_accepted(
    one_input: Path, tmp_path: Path, graph: tuple[Any, Any, Any]
) -> None:
    """The edges of the checks above: no outputs, one update of input 0."""
    x, _, out = graph
    payload = {"inputs": [x], "outputs": [out], "n_outputs": 0, "target_indices": [0]}
    signed = rebuild(one_input, tmp_path / "update.npz", replace={dump_module.GRAPH: _pickled(payload)})
    part = dump_reading.code_part(signed, trust=False)
    assert (part.n_outputs, part.target_indices, len(part.outputs)) == (0, [0], 1)


@pytest.mark.parametrize(
    ("pid", "what"),
    [
        (("captured", 1), "its graph names value 1"),
        (("captured", -1), "its graph names value -1"),
        (("captured", "0"), "its graph names a value ('captured', '0')"),
        (("elsewhere", 0), "its graph names a value ('elsewhere', 0)"),
        (("captured", 0, 0), "its graph names a value ('captured', 0, 0)"),
        (["captured", 0], "its graph names a value ['captured', 0]"),
    ],
)
def test_a_graph_naming_a_value_the_dump_does_not_hold_is_refused(
    pid: Any, what: str, one_input: Path, tmp_path: Path, graph: tuple[Any, Any, Any]
) -> None:
    x, _, out = graph
    marker = np.zeros(1)
    payload = {"inputs": [x], "outputs": [out], "n_outputs": 1, "target_indices": [], "value": marker}
    said = _replay_refusal(one_input, tmp_path / "bad.npz", _pickled(payload, {id(marker): pid}))
    assert said == f"{tmp_path / 'bad.npz'}: the dump is corrupted ({what})"


def test_a_graph_naming_the_captured_value_gets_the_dumps_array(
    one_input: Path, tmp_path: Path, graph: tuple[Any, Any, Any]
) -> None:
    x, _, out = graph
    marker = np.zeros(1)
    payload = {"inputs": [x], "outputs": [out], "n_outputs": 1, "target_indices": [], "value": marker}
    signed = rebuild(
        one_input,
        tmp_path / "named.npz",
        replace={dump_module.GRAPH: _pickled(payload, {id(marker): ("captured", 0)})},
    )
    part = dump_reading.code_part(signed, trust=False)
    np.testing.assert_array_equal(part.values[0], [-1.0, 2.0])
    assert (
        part.n_outputs == 1
        and part.target_indices == []
        and part.flags == {"mode": "FAST_COMPILE", "linker": "py"}
    )
