"""What a replaced function or method becomes (modecfg._pytensor.state's Wrapper and Method): it
calls the replacement with the original, and pickles by name as what it stands for does, so that a
program pickling ``pytensor.function`` or a bound method works as without modecfg."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from modecfg._pytensor import state


class Counter:
    """A class of this module (pickled by name), whose method the tests replace."""

    def __init__(self, start: int) -> None:
        self.start = start

    def add(self, n: int) -> int:
        return self.start + n


def twice(original: Any, n: int) -> int:
    return 2 * original(n)


def helper(n: int) -> int:
    return n + 1


def counting(instance: Counter, original: Any, n: int) -> int:
    return original(instance, n) * 10


@pytest.fixture
def replaced(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``Counter.add`` and this module's ``helper`` replaced, as the patch engine replaces them."""
    monkeypatch.setattr(Counter, "add", state.Method(counting, Counter.__dict__["add"]))
    monkeypatch.setattr(f"{__name__}.helper", state.Wrapper("test helper", twice, helper))
    monkeypatch.setitem(state.applied, "test helper", object())
    return Counter


def test_a_method_read_on_an_instance_calls_the_replacement_with_the_original(replaced: Any) -> None:
    counter = replaced(3)
    bound = counter.add
    assert bound(4) == 70
    assert bound.__self__ is counter
    assert replaced.add(counter, 4) == 70  # read on the class: the instance first


def test_a_method_read_on_an_instance_pickles_as_the_bound_method_it_stands_for(replaced: Any) -> None:
    bound = pickle.loads(pickle.dumps(replaced(3).add))
    assert bound(4) == 70  # what the name holds where it is loaded: the replacement, here
    assert bound.__self__.start == 3


def test_a_method_read_on_its_class_pickles_by_name(replaced: Any) -> None:
    method = replaced.__dict__["add"]
    assert pickle.loads(pickle.dumps(method)) is method
    assert b"modecfg" not in pickle.dumps(method)


def test_a_function_pickles_by_name_and_calls_the_original_once_its_patch_is_off(
    replaced: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    wrapper = sys.modules[__name__].helper
    assert wrapper(1) == 4
    assert pickle.loads(pickle.dumps(wrapper)) is wrapper
    assert b"modecfg" not in pickle.dumps(wrapper)
    monkeypatch.delitem(state.applied, "test helper")
    assert wrapper(1) == 2
