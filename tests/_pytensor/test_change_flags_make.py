"""``pytensor.config.change_flags(...)``'s replacement (patch "change_flags (make)", issue 62: a
``with`` block no slower than PyTensor's): it must make the very object PyTensor's makes, raise
where and as PyTensor's raises, and leave every config object but the attached one to PyTensor."""

from __future__ import annotations

import configparser
from typing import Any

import pytest

import modecfg

pytensor = pytest.importorskip("pytensor")

from pytensor.configparser import PyTensorConfigParser, _ChangeFlagsDecorator  # noqa: E402

from modecfg._pytensor import replacements, view  # noqa: E402
from modecfg._pytensor import state as _state  # noqa: E402

PYTENSORS = _state.original("change_flags (make)")

GIVEN = [
    {"floatX": "float32"},  # one flag modecfg answers: the common case
    {"floatX": "float32", "mode": "FAST_COMPILE"},  # several
    {"gcc__cxxflags": "-O1"},  # a flag PyTensor answers
    {"optimizer": "fast_compile", "gcc__cxxflags": "-O1", "warn_float64": "ignore"},  # both kinds
    {"compute_test_value": "off"},  # one this PyTensor may lack: found by the table's lookup
    {},
]


def _held(made: Any) -> tuple[type, list[tuple[str, Any]]]:
    """What a decorator is: its class and its attributes in the order they were set."""
    return type(made), list(vars(made).items())


def test_the_patch_is_on_and_is_the_method_pytensor_config_has() -> None:
    assert PyTensorConfigParser.__dict__["change_flags"] is replacements.change_flags_make
    assert PYTENSORS is not replacements.change_flags_make and PYTENSORS.__qualname__.endswith("change_flags")
    assert _state.current_view is not None and _state.current_view.decorator is _ChangeFlagsDecorator


@pytest.mark.parametrize("given", GIVEN, ids=lambda given: ",".join(given) or "none")
def test_it_makes_the_very_object_pytensors_change_flags_makes(given: dict[str, str]) -> None:
    ours = pytensor.config.change_flags(**given)
    theirs = PYTENSORS(pytensor.config, **given)
    assert _held(ours) == _held(theirs)
    assert ours.confs is not theirs.confs and ours.new_vals is not given  # each its own dicts
    assert all(ours.confs[name] is pytensor.config._config_var_dict[name] for name in given)


@pytest.mark.parametrize("given", GIVEN[:4], ids=lambda given: ",".join(given))
def test_a_block_it_made_sets_the_values_and_puts_them_back(given: dict[str, str]) -> None:
    before = {name: getattr(pytensor.config, name) for name in given}
    with pytensor.config.change_flags(**given):
        assert {name: getattr(pytensor.config, name) for name in given} == given
    assert {name: getattr(pytensor.config, name) for name in given} == before


def test_as_a_decorator_it_sets_the_values_for_each_call() -> None:
    @pytensor.config.change_flags(floatX="float16")
    def inside() -> str:
        return str(pytensor.config.floatX)

    before = pytensor.config.floatX
    assert inside() == inside() == "float16"
    assert pytensor.config.floatX == before


@pytest.mark.parametrize(
    "given",
    [
        {"no_such_flag": 1},
        {"floatX": "float32", "no_such_flag": 1},
        {"_root": 1},
        {"floatX": "float32", "_root": 1},
    ],
    ids=["unknown", "unknown-second", "_root", "_root-second"],
)
def test_a_name_pytensor_refuses_raises_as_pytensor_raises(given: dict[str, Any]) -> None:
    with pytest.raises(Exception) as theirs:
        PYTENSORS(pytensor.config, **given)
    with pytest.raises(type(theirs.value)) as ours:
        pytensor.config.change_flags(**given)
    assert str(ours.value) == str(theirs.value)
    assert theirs.type in (KeyError, TypeError)


def test_a_bad_value_is_refused_at_the_block_as_in_pytensor() -> None:
    made = pytensor.config.change_flags(floatX="float99")  # made: PyTensor checks at the entry
    with pytest.raises(modecfg.ConfigError, match="float99"), made:
        pass
    assert pytensor.config.floatX == modecfg.config.floatX


def _another_config() -> PyTensorConfigParser:
    other = PyTensorConfigParser(
        flags_dict={},
        pytensor_cfg=configparser.ConfigParser(),
        pytensor_raw_cfg=configparser.RawConfigParser(),
    )
    from pytensor.configparser import ConfigParam

    other.add("plain_flag", "a flag of another config object", ConfigParam("a"), in_c_key=False)
    return other


def test_another_config_object_gets_pytensors_own(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    def spy(self: Any, **given: Any) -> Any:
        calls.append(self)
        return PYTENSORS(self, **given)

    monkeypatch.setitem(_state.originals, "change_flags (make)", spy)
    other = _another_config()
    made = other.change_flags(plain_flag="b")
    assert calls == [other] and _held(made) == _held(PYTENSORS(other, plain_flag="b"))
    with made:
        assert other.plain_flag == "b"
    assert other.plain_flag == "a"
    pytensor.config.change_flags(floatX="float32")  # the attached one: made here
    assert calls == [other]


def test_with_the_decorator_not_recognised_or_no_view_pytensors_own_makes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[dict[str, Any]] = []

    def spy(self: Any, **given: Any) -> Any:
        calls.append(given)
        return PYTENSORS(self, **given)

    monkeypatch.setitem(_state.originals, "change_flags (make)", spy)
    monkeypatch.setattr(_state.current_view, "decorator", None)
    made = pytensor.config.change_flags(floatX="float32")
    assert calls == [{"floatX": "float32"}] and type(made) is _ChangeFlagsDecorator
    current = _state.current_view
    monkeypatch.setattr(_state, "current_view", None)
    pytensor.config.change_flags(floatX="float16")
    assert calls == [{"floatX": "float32"}, {"floatX": "float16"}]
    monkeypatch.setattr(_state, "current_view", current)
    monkeypatch.setattr(current, "decorator", _ChangeFlagsDecorator)
    made = pytensor.config.change_flags(floatX="float16")
    assert len(calls) == 2 and type(made) is _ChangeFlagsDecorator


class _SetsMore:
    def __init__(self, _root: Any = None, **given: Any) -> None:
        self.confs = {name: _root._config_var_dict[name] for name in given}
        self.new_vals = given
        self._root = _root
        self.old_vals: dict[str, Any] = {}


class _OtherOrder:
    def __init__(self, _root: Any = None, **given: Any) -> None:
        self._root = _root
        self.new_vals = given
        self.confs = {name: _root._config_var_dict[name] for name in given}


class _Refuses:
    def __init__(self, _root: Any = None, **given: Any) -> None:
        raise TypeError("this PyTensor's decorator takes something else")


class _Module:
    def __init__(self, decorator: Any) -> None:
        self._ChangeFlagsDecorator = decorator


def test_the_view_recognises_pytensors_decorator_and_no_other() -> None:
    import pytensor.configparser as pytensors

    config = pytensor.config
    assert view._decorator_class(pytensors, config) is _ChangeFlagsDecorator
    assert view._decorator_class(_Module(_ChangeFlagsDecorator), config) is _ChangeFlagsDecorator
    for other in (_SetsMore, _OtherOrder, _Refuses, None, _ChangeFlagsDecorator(_root=config)):
        assert view._decorator_class(_Module(other), config) is None, other
    assert view._decorator_class(object(), config) is None
