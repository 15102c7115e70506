"""The device path's doors (modecfg.device.contacts): an array handed out by ``get_value(borrow=True)``,
taken in by ``set_value(a, borrow=True)`` or made a variable of by ``shared(a, borrow=True)`` is
recorded as lent, from PyTensor's import on, before any JAX function; what each door returns or
raises is PyTensor's own until a JAX function is linked. (What a JAX function then reads is
tested side by side with plain PyTensor in test_jax_residency.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import modecfg  # noqa: E402, F401  (the doors are put on at PyTensor's import)
from modecfg._pytensor import hostwrites  # noqa: E402
from modecfg._pytensor.state import applied  # noqa: E402
from modecfg.device import contacts  # noqa: E402


@pytest.fixture
def told(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The arrays lent from now on, in order (a fresh record, the JAX path's listener left out)."""
    lent: list[Any] = []
    monkeypatch.setattr(hostwrites, "lent", {})
    monkeypatch.setattr(contacts, "_lent", None)  # (bound again to the fresh record at its first use)
    monkeypatch.setattr(hostwrites, "lent_listeners", [lambda container, value: lent.append(value)])
    return lent


@pytest.fixture
def before_jax(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a process that has linked no JAX function yet."""
    monkeypatch.setattr(contacts, "_jax_linked", [])


def test_the_lending_doors_are_on_from_the_import() -> None:
    assert {"shared values", "shared values (set)", "shared values (made)"} <= set(applied)


def test_a_borrowed_get_value_lends_the_array_once_and_returns_pytensors(told: list[Any]) -> None:
    w = pytensor.shared(np.arange(3.0), name="w")
    own = w.container.storage[0]
    assert w.get_value(borrow=True) is own
    assert w.get_value(borrow=True) is own
    assert told == [own]  # recorded once, however often handed out
    assert hostwrites.is_lent(own)


def test_a_copied_get_value_lends_nothing(told: list[Any]) -> None:
    w = pytensor.shared(np.arange(3.0), name="w")
    got = w.get_value()
    assert got is not w.container.storage[0]
    np.testing.assert_array_equal(got, [0.0, 1.0, 2.0])
    got = w.get_value(return_internal_type=True)
    assert got is not w.container.storage[0]
    assert told == []
    assert not hostwrites.is_lent(w.container.storage[0])


def test_what_is_no_array_is_handed_out_as_it_is_and_lends_nothing(told: list[Any]) -> None:
    held = [1, 2]
    generic = pytensor.shared(held, borrow=True, name="generic")  # PyTensor's generic variable: a list
    assert generic.get_value(borrow=True) is held
    assert told == []


@pytest.mark.parametrize("jax_linked", [[], [True]], ids=["before a JAX link", "after"])
def test_a_borrowed_set_value_lends_the_array_it_keeps(
    told: list[Any], jax_linked: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(contacts, "_jax_linked", jax_linked)
    w = pytensor.shared(np.zeros(3), name="w")
    given = np.ones(3)
    w.set_value(given, borrow=True)
    assert w.container.storage[0] is given
    assert told == [given]
    copied = np.full(3, 2.0)
    w.set_value(copied)
    assert w.container.storage[0] is not copied
    assert told == [given]  # a copy is the variable's alone
    assert not hostwrites.is_lent(w.container.storage[0])


@pytest.mark.usefixtures("before_jax")
def test_before_any_jax_function_set_values_errors_are_pytensors(told: list[Any]) -> None:
    """Until a JAX function is linked the door only notes what is lent: a value the variable's type
    refuses raises PyTensor's own error (after the link, modecfg's SharedValueError, which names
    the variable), and the variable keeps its value."""
    from modecfg.errors import SharedValueError

    w = pytensor.shared(np.zeros(3), name="w")
    with pytest.raises((TypeError, ValueError)) as raised:
        w.set_value(np.zeros((2, 2)), borrow=True)
    assert not isinstance(raised.value, SharedValueError)
    np.testing.assert_array_equal(w.get_value(), np.zeros(3))
    assert told == []


def test_after_a_jax_function_set_values_errors_name_the_variable(
    told: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.errors import SharedValueError

    monkeypatch.setattr(contacts, "_jax_linked", [True])
    w = pytensor.shared(np.zeros(3), name="named")
    with pytest.raises(SharedValueError, match="'named'"):
        w.set_value(np.zeros((2, 2)), borrow=True)
    np.testing.assert_array_equal(w.get_value(), np.zeros(3))
    given = np.ones(3)
    w.set_value(given, borrow=True)
    assert told == [given]


def test_a_variable_made_of_an_array_as_it_is_has_lent_it(told: list[Any]) -> None:
    given = np.ones(3)
    made = pytensor.shared(given, borrow=True, name="made")
    assert made.container.storage[0] is given
    assert told == [given]


def test_a_variable_made_of_a_copy_or_of_no_array_lends_nothing(told: list[Any]) -> None:
    copied = pytensor.shared(np.ones(3), name="copied")  # PyTensor copies without borrow
    listed = pytensor.shared([1, 2], borrow=True, name="listed")  # held as it is, but no array
    assert not hostwrites.is_lent(copied.container.storage[0])
    assert listed.container.storage[0] == [1, 2]
    assert told == []


def test_a_variable_made_with_borrow_of_an_array_it_converts_lends_nothing(told: list[Any]) -> None:
    """``borrow=True`` of an array the variable's type converts (a subclass becomes a view of it):
    the variable holds another object, a view that is never taken for private anyway."""
    given = np.ones(3).view(np.recarray)
    made = pytensor.shared(given, borrow=True, name="converted")
    assert made.container.storage[0] is not given
    assert told == []


def test_the_original_is_called_with_every_argument_as_given(told: list[Any]) -> None:
    from pytensor.compile.sharedvalue import shared_constructor

    made = shared_constructor(np.ones(2), "positional", True, None, borrow=False)
    assert made.name == "positional" and made.type.shape == (None,)
    given = np.ones(2)
    lent = shared_constructor(given, "borrowed", borrow=True)
    assert lent.name == "borrowed" and told == [given]
    told.clear()
    strict = pytensor.shared(np.ones(2, dtype="int32"), name="strict", strict=True)
    with pytest.raises(TypeError):
        strict.set_value(np.ones(2))  # strict: float64 refused as PyTensor refuses it
    assert told == []


def test_a_variables_creation_trace_is_the_callers_as_without_modecfg() -> None:
    """PyTensor records where a shared variable was made (its tag's trace, which its error messages
    show): no frame of modecfg's is among them (a replacement of ``pytensor.shared`` itself put two
    there, before the user's lines)."""
    from modecfg._pytensor import state

    def make() -> Any:
        return pytensor.shared(np.zeros(3), borrow=True, name="traced")

    frames = make().tag.trace[0]
    assert frames[-1][2] == "make"
    assert {contacts.__file__, state.__file__}.isdisjoint(frame[0] for frame in frames)


def test_pytensors_modules_that_register_constructors_later_still_can() -> None:
    """PyTensor's sparse module registers its constructor when first imported, through the name it
    imports (modecfg's stand-in by then): it reaches PyTensor's dispatcher."""
    from tests.fresh import run_json

    out = run_json(
        """
        import json
        import numpy as np, scipy.sparse
        import modecfg, pytensor
        from pytensor.compile import sharedvalue
        made = pytensor.shared(scipy.sparse.csr_matrix(np.eye(2)), name="sparse")
        import pytensor.sparse.sharedvar as sparse_shared
        print(json.dumps({"kind": type(made).__name__,
                          "stand_in": sparse_shared.shared_constructor is sharedvalue.shared_constructor}))
        """
    )
    assert out["kind"] == "SparseTensorSharedVariable"
    assert out["stand_in"] is True


def test_an_array_lent_twice_is_recorded_once_and_no_other_object_at_all(told: list[Any]) -> None:
    w = pytensor.shared(np.zeros(3), name="w")
    contacts.lend(w.container)
    contacts.lend(w.container)
    assert told == [w.container.storage[0]]
    generic = pytensor.shared([1, 2], name="generic")
    contacts.lend(generic.container)
    assert told == [w.container.storage[0]]
