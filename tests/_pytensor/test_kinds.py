"""modecfg._pytensor.kinds: which of PyTensor's classes an object is, by its class hierarchy."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pytensor")

import pytensor.tensor as pt
from pytensor.compile.debug.debugmode import _DummyLinker
from pytensor.link.basic import PerformLinker, WrapLinker, WrapLinkerMany
from pytensor.link.c.basic import CLinker, OpWiseCLinker
from pytensor.link.jax.linker import JAXLinker
from pytensor.link.numba.linker import NumbaLinker
from pytensor.link.vm import VMLinker

from modecfg._pytensor import kinds, patches
from modecfg._pytensor.kinds import (
    is_cast,
    is_constant,
    is_elemwise,
    is_shape_op,
    linker_name,
    runs_c_code,
)
from modecfg.nanguard.mode import GuardLinker


@pytest.mark.parametrize(
    ("linker", "name"),
    [
        (VMLinker(use_cloop=True), "cvm"),
        (VMLinker(use_cloop=False), "vm"),
        (VMLinker(use_cloop=False, c_thunks=False), "vm (Python thunks)"),
        (CLinker(), "c"),
        (OpWiseCLinker(), "c|py"),
        (PerformLinker(), "py"),
        (NumbaLinker(), "numba"),  # a PerformLinker too: the most specific class decides
        (JAXLinker(), "jax"),
        (WrapLinker([PerformLinker()], lambda *a: None), "wrap (monitor)"),
        (WrapLinkerMany([PerformLinker()], [lambda *a: None]), "wrap (monitor)"),
        (_DummyLinker(), "debug (own)"),
        (GuardLinker(NumbaLinker()), "numba"),  # the guard is named by what it guards
        (GuardLinker(GuardLinker(VMLinker(use_cloop=True))), "cvm"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_each_linker_object_by_its_table_name(linker: Any, name: str) -> None:
    assert linker_name(linker) == name


class _Numbaish(NumbaLinker):  # a user's subclass of a backend's linker is that backend
    pass


class VMLinkerLookalike:  # a class of the same name elsewhere is not PyTensor's
    use_cloop = True


def test_subclasses_count_and_lookalikes_do_not() -> None:
    assert linker_name(_Numbaish()) == "numba"
    assert linker_name(VMLinkerLookalike()) == "VMLinkerLookalike"
    marked = VMLinker(use_cloop=True)
    marked.modecfg_auto = True  # type: ignore[attr-defined]
    assert linker_name(marked) == "per_graph (chosen per graph)"


def test_runs_c_code_follows_the_name() -> None:
    assert runs_c_code(VMLinker(use_cloop=True)) and runs_c_code(OpWiseCLinker())
    assert not runs_c_code(NumbaLinker()) and not runs_c_code(PerformLinker())
    assert not runs_c_code(VMLinker(use_cloop=False, c_thunks=False))
    assert not runs_c_code(None)


def test_the_kinds_the_float32_check_asks() -> None:
    x = pt.matrix("x")
    shape_node = x.shape.owner
    mean = pt.cast(x.shape[0], "float64") + pt.constant(1.5)
    cast_node = mean.owner.inputs[0].owner
    assert is_shape_op(shape_node.op) and not is_shape_op(cast_node.op)
    assert is_elemwise(cast_node.op) and is_cast(cast_node.op.scalar_op)
    assert not is_cast(cast_node.op) and not is_elemwise(shape_node.op)
    assert is_constant(pt.constant(1.5)) and not is_constant(x)


class Elemwise:  # the name alone decides nothing
    pass


def test_a_class_named_like_pytensors_is_not_it() -> None:
    assert not is_elemwise(Elemwise()) and not is_constant(type("Constant", (), {})())


def test_every_named_class_is_where_named_in_this_pytensor() -> None:
    assert kinds.missing() == []
    rows = {row.patch.name: row for row in patches.contacts()}
    assert (rows["class kinds"].state, rows["class kinds"].reason) == (
        "on", "every class named in modecfg._pytensor.kinds is where it is named"
    )  # fmt: skip


def test_a_class_pytensor_moved_or_dropped_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(kinds.CLASSES, "cast", (("pytensor.scalar.basic", "NoSuchCast"),))
    # imported there, defined elsewhere; not there; a function, not a class
    monkeypatch.setitem(kinds.LINKERS, ("pytensor.link.vm", "LocalLinker"), "vm")
    monkeypatch.setitem(kinds.LINKERS, ("pytensor.no_such_module", "X"), "x")
    monkeypatch.setitem(kinds.LINKERS, ("pytensor.link.basic", "WrapLinkerMany"), "wrap")
    assert kinds.missing() == [
        "pytensor.link.basic.WrapLinkerMany (not a class)",
        "pytensor.link.vm.LocalLinker (now pytensor.link.basic.LocalLinker)",
        "pytensor.no_such_module.X",
        "pytensor.scalar.basic.NoSuchCast",
    ]
    rows = {row.patch.name: row for row in patches.contacts()}
    assert rows["class kinds"].state == "failed"
    reason = rows["class kinds"].reason
    assert reason.startswith("this PyTensor has no pytensor.link.basic.WrapLinkerMany (not a class), ")
    assert reason.endswith(": the float32 check and the linker names no longer recognise them")


def test_the_class_kinds_are_checked_at_the_first_compile_not_at_the_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 61: the check imported this module and walked PyTensor's at every import. The
    import's check leaves it out; the process's first compile says a class that moved or went,
    once, at the line that compiled, in the modules PyTensor has loaded only."""
    import warnings

    import modecfg
    from modecfg import _wiring
    from modecfg._pytensor.hooks import hooks

    assert "class kinds" not in {row.patch.name for row in patches.contacts(asked=False)}
    assert "class kinds" in {row.patch.name for row in patches.contacts()}
    order = hooks.before_rewrites
    assert order.index(_wiring._say_missing_kinds) < order.index(_wiring._enforce_float32)
    monkeypatch.setattr(_wiring, "_kinds_said", [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _wiring._say_missing_kinds(None, None)  # this PyTensor's classes: nothing said
    monkeypatch.setitem(kinds.CLASSES, "cast", (("pytensor.scalar.basic", "NoSuchCast"),))
    monkeypatch.setitem(kinds.LINKERS, ("pytensor.never_imported_module", "X"), "x")  # not loaded: not asked
    monkeypatch.setattr(_wiring, "_kinds_said", [])
    with pytest.warns(modecfg.PyTensorIntegrationWarning) as said:
        _wiring._say_missing_kinds(None, None)
        _wiring._say_missing_kinds(None, None)  # the first compile only
    assert len(said) == 1 and str(said[0].message) == (
        "this PyTensor has no pytensor.scalar.basic.NoSuchCast: the float32 check and the linker "
        "names no longer recognise them (modecfg doctor lists the contact)"
    )
    assert said[0].filename == __file__  # at the line that compiled
