"""``linker=per_graph``'s contacts, one at a time: the linker table that answers ``per_graph``
and the cvm linker that hands a graph on only where it is marked."""

from __future__ import annotations

import pickle
from types import SimpleNamespace
from typing import Any

import pytest

from modecfg._pytensor import marks
from modecfg.linkers.contacts import LinkerTable, rewrite_mode, vm_accept

pytest.importorskip("pytensor")


def _table() -> LinkerTable:
    from pytensor.link.vm import VMLinker

    return LinkerTable({"cvm": VMLinker(use_cloop=True), "py": VMLinker(use_cloop=False)})


def test_the_table_answers_per_graph_with_a_marked_copy_of_cvm_and_pytensors_names_as_they_are() -> None:
    table = _table()
    assert "per_graph" in table and "cvm" in table and "nope" not in table
    per_graph = table.get("per_graph")
    assert getattr(per_graph, marks.AUTO) is True and per_graph is not dict.__getitem__(table, "cvm")
    assert not getattr(dict.__getitem__(table, "cvm"), marks.AUTO, False)  # cvm itself unmarked
    assert table.get("py") is dict.__getitem__(table, "py")
    assert table.get("nope") is None and table.get("nope", "default") == "default"
    with pytest.raises(KeyError):
        table["nope"]


def test_the_table_pickles_as_a_plain_dict_of_pytensors_entries() -> None:
    back = pickle.loads(pickle.dumps(_table()))
    assert type(back) is dict and sorted(back) == ["cvm", "py"]
    assert "per_graph" not in back  # loads where modecfg is not installed


def test_only_a_marked_linker_hands_its_graph_on() -> None:
    accepted: list[Any] = []

    def accept(self: Any, fgraph: Any, no_recycling: Any, profile: Any) -> Any:
        accepted.append((self, fgraph, no_recycling, profile))
        return self

    fgraph = SimpleNamespace(**{marks.AUTO_CHOICE: "py"})
    unmarked = SimpleNamespace()
    assert vm_accept(unmarked, accept, fgraph, no_recycling=[1], profile="p") is unmarked
    assert accepted == [(unmarked, fgraph, [1], "p")]

    marked_cvm = SimpleNamespace(**{marks.AUTO: True})
    on_cvm = SimpleNamespace(**{marks.AUTO_CHOICE: "cvm"})
    nothing = SimpleNamespace()
    assert vm_accept(marked_cvm, accept, on_cvm) is marked_cvm
    assert vm_accept(marked_cvm, accept, nothing) is marked_cvm
    assert accepted[1:] == [(marked_cvm, on_cvm, None, None), (marked_cvm, nothing, None, None)]


def test_an_unmarked_mode_is_rewritten_as_it_is() -> None:
    import pytensor.tensor as pt
    from pytensor.compile.mode import Mode
    from pytensor.graph.fg import FunctionGraph

    x = pt.vector("x")
    fgraph = FunctionGraph([x], [pt.exp(x).sum()], clone=False)
    for linker in ("py", "cvm"):  # PyTensor's own linkers, with no mark: never handed on
        mode = Mode(linker=linker)
        assert rewrite_mode(fgraph, mode, None) is mode
    mode = SimpleNamespace(linker=SimpleNamespace())
    assert rewrite_mode(None, mode, None) is mode
