"""The view's parts, each on its own and in this process: the first reads that take turns, the
hand-over of a flag PyTensor fixes, a parameter's representation and its memo, other config
objects (an unpickled copy, PyTensor's tests' own), adoption and the late hand-off, attach and
detach. test_view.py proves the same behaviour end to end, mostly in fresh processes, where
``import pytensor`` does the attaching; these tests run it here, so that each line is seen."""

from __future__ import annotations

import configparser as stdlib
import logging
import pickle
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from modecfg import config
from modecfg.configuration import load
from modecfg.configuration.flags import FLAGS
from modecfg.configuration.origin import Layer, Origin, Setting
from modecfg.errors import HeldFlagWarning, ReadOnlyFlagError, UnknownFlagWarning

pytensor = pytest.importorskip("pytensor")

from pytensor.configparser import (  # noqa: E402
    ConfigAccessViolation,
    ConfigParam,
    EnumStr,
    PyTensorConfigParser,
)

from modecfg._pytensor import install, state, uninstall, view  # noqa: E402
from modecfg._pytensor.view import (  # noqa: E402
    ADOPTED,
    FlagParam,
    Float64Param,
    _hand_over,
    _TakingTurns,
    first_read,
)


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    yield
    for name in ("floatX", "optimizer", "linker", "exception_verbosity", "cast_policy"):
        config.reset(name)


def _root() -> PyTensorConfigParser:
    """Another config object, as PyTensor's tests make their own."""
    return PyTensorConfigParser({}, stdlib.ConfigParser(), stdlib.RawConfigParser())


class Recording(ConfigParam):  # type: ignore[misc]
    """A parameter of PyTensor's kind that remembers the config object each ``__set__`` named."""

    def __init__(self, default: Any, **kwargs: Any) -> None:
        super().__init__(default, **kwargs)
        self.set_on: list[Any] = []

    def __set__(self, cls: Any, val: Any) -> None:
        self.set_on.append(cls)
        super().__set__(cls, val)


def _unread(name: str, default: Any = lambda: "worked out", **kwargs: Any) -> Recording:
    param = Recording(default, mutable=False, **kwargs)
    param.name = name
    return param


@pytest.fixture
def sources(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Gives the view a configuration of the sources a test names (``modecfg.config.load``)."""

    def use(**given: Any) -> Any:
        loaded = load(rc_files=[], **given)
        monkeypatch.setattr(view, "_config", loaded)
        return loaded

    return use


# -- first reads and the hand-over of a flag PyTensor fixes ------------------------------------


def test_a_first_read_is_pytensors_own_worked_out_on_the_object_asked() -> None:
    root = _root()
    param = _unread("modecfgtest_first")
    root._config_var_dict[param.name] = param
    assert first_read(param, root) == "worked out" == param.val
    assert first_read(param, root) == "worked out"  # stored: not worked out again
    assert param.set_on == [root]
    elsewhere = _unread("modecfgtest_first")
    with pytest.raises(ConfigAccessViolation):  # PyTensor's safeguard: the name is not root's
        first_read(elsewhere, _root())


def test_the_hand_over_gives_pytensor_the_top_layers_value_as_text(sources: Any) -> None:
    sources(env={"THEANO_FLAGS": "compiledir=/tmp/c", "MODECFG_FLAGS": "compiledir=/tmp/b"},
            assignments={"compiledir": "/tmp/a"})  # fmt: skip
    root = _root()
    param = _unread("compiledir")
    _hand_over(param, FLAGS["compiledir"], root)
    assert param.val == "/tmp/a" and param.set_on == [root]  # str() of the Path, as PyTensor parses


def test_the_hand_over_leaves_a_parameter_read_meanwhile_alone(sources: Any) -> None:
    sources(assignments={"compiledir": "/tmp/a"})
    param = _unread("compiledir")
    param.val = "/already/read"  # another thread read it first
    _hand_over(param, FLAGS["compiledir"], _root())
    assert param.val == "/already/read" and param.set_on == []


def test_the_hand_over_gives_nothing_where_no_layer_set_the_flag(sources: Any) -> None:
    sources()
    param = _unread("compiledir")
    _hand_over(param, FLAGS["compiledir"], _root())
    assert not hasattr(param, "val") and param.set_on == []  # PyTensor works its default out


def test_the_hand_over_gives_nothing_pytensor_does_not_take(sources: Any) -> None:
    """``compiledir=None`` is modecfg's "base_compiledir/compiledir_format": PyTensor has no such
    value; its own default stands."""
    sources(env={"THEANO_FLAGS": "compiledir=/tmp/c"}, assignments={"compiledir": None})
    param = _unread("compiledir")
    _hand_over(param, FLAGS["compiledir"], _root())
    assert not hasattr(param, "val") and param.set_on == []


def test_a_value_pytensor_refuses_at_the_hand_over_is_said_and_pytensors_own_stands(
    sources: Any, caplog: pytest.LogCaptureFixture
) -> None:
    sources(env={"THEANO_FLAGS": "compiledir=/tmp/ok", "MODECFG_FLAGS": "compiledir=/tmp/ok2"},
            assignments={"compiledir": "/tmp/refused"})  # fmt: skip
    param = _unread("compiledir", validate=lambda value: value != "/tmp/refused")
    with caplog.at_level(logging.WARNING, logger="modecfg.bridge"):
        _hand_over(param, FLAGS["compiledir"], _root())
    assert not hasattr(param, "val")
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "pytensor.config.compiledir keeps PyTensor's own value: compiledir=PosixPath('/tmp/refused') "
        "is refused by PyTensor (Invalid value (/tmp/refused) for configuration variable "
        "'compiledir'.)"
    )


def test_a_parameter_taking_turns_hands_over_at_the_first_read_of_pytensors_config(
    sources: Any,
) -> None:
    sources(assignments={"compiledir": "/tmp/handed"})
    pc = pytensor.config
    param = _unread("modecfgtest_turns")
    turns = _TakingTurns(param, FLAGS["compiledir"])
    assert (turns.param, turns.spec) == (param, FLAGS["compiledir"])
    assert turns.__get__(None, type(pc)) is param  # on the class: the parameter itself
    pc._config_var_dict[param.name] = param
    try:
        assert turns.__get__(pc, type(pc)) == "/tmp/handed" and param.set_on == [pc]
        assert turns.__get__(pc, type(pc)) == "/tmp/handed" and param.set_on == [pc]  # stored
    finally:
        del pc._config_var_dict[param.name]


def test_a_parameter_taking_turns_hands_nothing_to_another_config_object(sources: Any) -> None:
    sources(assignments={"compiledir": "/tmp/handed"})
    root = _root()
    param = _unread("modecfgtest_turns")
    root._config_var_dict[param.name] = param
    turns = _TakingTurns(param, FLAGS["compiledir"])
    assert turns.__get__(root, type(root)) == "worked out"  # PyTensor's own default there
    with pytest.raises(Exception, match="Can't change the value of modecfgtest_turns"):
        turns.__set__(root, "set")  # immutable once read: PyTensor's own check
    assert param.val == "worked out"


def test_a_parameter_taking_turns_is_assigned_through_pytensors_own_before_its_first_read() -> None:
    """``pytensor.config.gcc_version_str = ...`` (PyTensor's alone) before anything read it."""
    root = _root()
    param = _unread("modecfgtest_turns")
    root._config_var_dict[param.name] = param
    _TakingTurns(param).__set__(root, "given")
    assert (param.val, param.set_on) == ("given", [root])


def test_a_parameter_taking_turns_without_a_flag_is_pytensors_alone(sources: Any) -> None:
    sources(assignments={"compiledir": "/tmp/handed"})
    pc = pytensor.config
    param = _unread("modecfgtest_turns")
    pc._config_var_dict[param.name] = param
    try:
        assert _TakingTurns(param).__get__(pc, type(pc)) == "worked out"
    finally:
        del pc._config_var_dict[param.name]


def test_the_view_takes_turns_on_the_parameters_pytensor_works_out_with_their_flags() -> None:
    uninstall()
    install()  # attached in this process (the suite's own view was attached at import)
    on_class = PyTensorConfigParser.__dict__
    current = view.view()
    assert current is not None
    assert sorted(current.taking_turns) == ["compile__timeout", "compiledir", "gcc_version_str"]
    assert on_class["compiledir"].spec is FLAGS["compiledir"]
    assert on_class["compile__timeout"].spec is FLAGS["compile.timeout"]
    assert on_class["gcc_version_str"].spec is None  # PyTensor's alone
    assert isinstance(on_class["floatX"], FlagParam) and not isinstance(on_class["floatX"], _TakingTurns)


def test_assigning_a_flag_pytensor_fixes_through_its_config_is_a_modecfg_assignment() -> None:
    pc = pytensor.config
    pc.compiledir  # noqa: B018  (read: PyTensor fixed it)
    with pytest.raises(ReadOnlyFlagError, match=r"compiledir cannot change to PosixPath\('/tmp/late'\)"):
        pc.compiledir = "/tmp/late"


# -- a parameter: its representation, its memo, what PyTensor asks of it -----------------------


def _declared(original: ConfigParam, name: str, root: Any = None) -> ConfigParam:
    """``original`` as PyTensor's ``add`` leaves it (in ``root``'s table, if given)."""
    original.name, original.in_c_key = name, True
    if root is not None:
        root._config_var_dict[name] = original
    return original


def _param(name: str, original: ConfigParam | None, root: Any = None) -> FlagParam:
    spec = FLAGS[name]
    if original is not None:
        _declared(original, spec.pytensor_name, root)
    return FlagParam(spec, original, pytensor.config if root is None else root)


class Counting(ConfigParam):  # type: ignore[misc]
    """A parameter whose ``apply`` counts its calls (PyTensor's filter, asked by the view)."""

    def __init__(self, default: Any, apply: Any = str.upper) -> None:
        super().__init__(default, apply=apply)
        self.applied: list[Any] = []

    def apply(self, value: Any) -> Any:
        self.applied.append(value)
        return super().apply(value)


def test_a_value_is_shown_through_pytensors_filter_once_per_value() -> None:
    original = Counting("default")
    param = _param("exception_verbosity", original)
    assert param.show("high") == "HIGH" and param.show("high") == "HIGH"
    param.last = (None, None)  # past the last-shown shortcut: the memo answers
    assert param.show("high") == "HIGH"
    assert param.show("low") == "LOW" and param.show("high") == "HIGH"
    assert original.applied == ["high", "low"]


def test_the_memo_of_shown_values_holds_257_values_then_starts_again() -> None:
    param = _param("exception_verbosity", Counting("default"))
    for number in range(257):
        param.show(str(number))
    assert len(param.shown) == 257
    param.show("one more")
    assert len(param.shown) == 1 and param.show("one more") == "ONE MORE"


def test_a_value_pytensor_takes_no_such_value_of_is_shown_as_pytensor_holds_it() -> None:
    """``compiledir=None`` (modecfg: base_compiledir/compiledir_format) shows PyTensor's own."""
    original = Counting(lambda: "/pytensors/own", apply=None)
    param = _param("compiledir", original, _root())
    assert param.show(None) == "/pytensors/own" and original.val == "/pytensors/own"
    assert param.show(Path("/mine")) == "/mine"  # taken: PyTensor's filter of its text


def test_a_value_pytensors_filter_refuses_shows_pytensors_own_and_says_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def refuse(value: str) -> str:
        if value == "modecfgs":
            raise ValueError("not one of PyTensor's")
        return value

    param = _param("exception_verbosity", Counting("pytensors", apply=refuse), _root())
    with caplog.at_level(logging.DEBUG, logger="modecfg.bridge"):
        assert param.show("modecfgs") == "pytensors"
    assert [r.getMessage() for r in caplog.records] == [
        "pytensor.config.exception_verbosity shows 'pytensors': not one of PyTensor's"
    ]


def test_pytensors_own_value_is_worked_out_without_its_blas_warning_only() -> None:
    def noisy() -> str:
        warnings.warn(
            "PyTensor could not link to a BLAS installation (four lines)", UserWarning, stacklevel=1
        )
        warnings.warn("PyTensor could not link to a BLAS installation, said otherwise", FutureWarning,
                      stacklevel=1)  # fmt: skip
        warnings.warn("another note of PyTensor's", UserWarning, stacklevel=1)
        return "-lblas"

    param = _param("blas.ldflags", ConfigParam(noisy), _root())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert param.pytensors() == "-lblas"
    assert sorted(str(w.message) for w in caught) == [
        "PyTensor could not link to a BLAS installation, said otherwise",
        "another note of PyTensor's",
    ]


def test_what_pytensor_asks_of_a_parameter_is_its_originals_or_modecfgs() -> None:
    original = ConfigParam("low", apply=str.lower, validate=lambda value: value in ("low", "high"))
    param = _param("exception_verbosity", original)
    original.doc = param.doc = "PyTensor's doc"
    assert (param.name, param.doc, param.default, param.mutable) == (
        "exception_verbosity", "PyTensor's doc", "low", True)  # fmt: skip
    assert str(param) == str(original) and param.apply("HIGH") == "high"
    assert param.validate("high") is True
    with pytest.raises(ValueError, match="Invalid value"):
        param.validate("medium")
    alone = _param("device", None)
    spec = FLAGS["device"]
    assert (alone.doc, alone.default, alone.in_c_key) == (spec.doc, spec.default, False)
    assert str(alone) == f"device ({spec.doc})"
    assert alone.validate("anything") is True and alone.apply("cuda") == "cuda"


def test_a_read_inside_an_override_shows_the_value_once() -> None:
    param = pytensor.config._config_var_dict["floatX"]
    shown: list[Any] = []

    def show(value: Any) -> Any:
        shown.append(value)
        return FlagParam.show(param, value)

    param.show = show
    try:
        with config.override(floatX="float16"):
            assert [pytensor.config.floatX for _ in range(3)] == ["float16"] * 3
    finally:
        del param.show
    assert shown == ["float16"]


def test_each_parameter_hears_only_of_its_own_flag() -> None:
    uninstall()
    install()  # the parameters made in this process
    param = pytensor.config._config_var_dict["floatX"]
    pytensor.config.floatX  # noqa: B018  (worked out and kept)
    kept = param.below
    config.optimizer = "fast_compile"
    assert param.below is kept
    config.floatX = "float32"
    assert pytensor.config.floatX == "float32" and param.below == "float32"


def test_warn_float64_alone_is_shown_as_ignore_where_modecfg_checks_compiles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from modecfg._pytensor.hooks import hooks

    uninstall()
    install()  # the parameters made in this process
    params = pytensor.config._config_var_dict
    assert type(params["warn_float64"]) is Float64Param and type(params["floatX"]) is FlagParam
    monkeypatch.setattr(hooks, "float64_checked", lambda: True)
    with config.override(warn_float64="warn"):
        assert pytensor.config.warn_float64 == "ignore" and config.warn_float64 == "warn"
    with config.override(warn_float64="raise"):
        assert pytensor.config.warn_float64 == "raise"
    monkeypatch.setattr(hooks, "float64_checked", lambda: False)
    with config.override(warn_float64="warn"):
        assert pytensor.config.warn_float64 == "warn"


# -- other config objects: an unpickled copy, PyTensor's tests' own ----------------------------


def test_a_pickled_pytensor_config_holds_the_values_in_effect_as_pytensors_own_parameters() -> None:
    with config.override(floatX="float16"):
        copy = pickle.loads(pickle.dumps(pytensor.config))
    assert type(copy._config_var_dict) is dict
    param = copy._config_var_dict["floatX"]
    assert type(param) is not FlagParam and "__set__" not in vars(param)
    assert (param.val, copy.floatX, pytensor.config.floatX) == ("float16", "float16", "float64")
    copy.floatX = "float32"  # the copy's own parameter: modecfg's configuration is not touched
    assert (copy.floatX, pytensor.config.floatX, config.floatX) == ("float32", "float64", "float64")
    with pytest.raises(ValueError, match="Invalid value"):
        copy.floatX = "float8"


def test_a_parameter_only_modecfg_has_does_not_pickle() -> None:
    device = PyTensorConfigParser.__dict__["device"]
    with pytest.raises(TypeError, match=r"^pytensor.config.device is modecfg's alone: it does not pickle$"):
        pickle.dumps(device)
    assert pickle.loads(pickle.dumps(pytensor.config._config_var_dict["floatX"])).val == config.floatX


def test_a_config_object_without_the_flag_is_refused_as_pytensor_refuses_it() -> None:
    half = _root()
    del half._config_var_dict
    floatx = PyTensorConfigParser.__dict__["floatX"]
    message = (
        "The config parameter 'floatX' was registered on a different instance of the "
        f"PyTensorConfigParser. It is not accessible through the instance with id '{id(half)}' "
        "because of safeguarding."
    )
    with pytest.raises(ConfigAccessViolation) as info:
        floatx.__get__(half, type(half))
    assert str(info.value) == message
    with pytest.raises(ConfigAccessViolation):
        floatx.__set__(half, "float32")
    holding = _root()  # an object whose table holds the bridge's own parameter (a shallow copy's)
    holding._config_var_dict["floatX"] = floatx
    assert floatx.__get__(holding, type(holding)) == config.floatX  # as PyTensor answers a copy


def test_another_config_object_declaring_a_flag_modecfg_answers_keeps_its_own() -> None:
    """PyTensor's tests make their own config object and declare flags on it; PyTensor's ``add``
    puts the parameter on the class, shared by every object: the bridge's stays there."""
    pc = pytensor.config
    root = _root()
    root.add("floatX", "a test's own", EnumStr("float32", ["float64"]), in_c_key=False)
    assert isinstance(PyTensorConfigParser.__dict__["floatX"], FlagParam)
    assert (root.floatX, pc.floatX) == ("float32", "float64")
    root.floatX = "float64"
    with config.override(floatX="float16"):
        assert (root.floatX, pc.floatX) == ("float64", "float16")


def test_a_parameter_pytensor_declares_later_that_works_its_default_out_takes_turns() -> None:
    pc = pytensor.config
    name = "modecfgtest_declared_late"
    pc.add(name, "worked out at the first read (test)", ConfigParam(lambda: "late", mutable=False),
           in_c_key=False)  # fmt: skip
    try:
        assert isinstance(PyTensorConfigParser.__dict__[name], _TakingTurns)
        assert getattr(pc, name) == "late"
    finally:
        current = view.view()
        assert current is not None
        current.taking_turns.remove(name)
        del pc._config_var_dict[name]
        delattr(PyTensorConfigParser, name)


# -- assignments on pytensor.config -------------------------------------------------------------


def test_a_private_attribute_of_pytensors_config_is_set_without_a_word() -> None:
    pc = pytensor.config
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pc._modecfgtest_private = 1
    assert vars(pc).pop("_modecfgtest_private") == 1


def test_a_typo_in_pytensors_spelling_gets_modecfgs_did_you_mean() -> None:
    view._said.discard("blas__ldflag")  # said once a process: a run before this one said it
    with pytest.warns(UnknownFlagWarning, match=r"pytensor.config.blas__ldflag is no flag .*blas.ldflags"):
        pytensor.config.blas__ldflag = "-lblas"
    assert vars(pytensor.config).pop("blas__ldflag") == "-lblas"


# -- what PyTensor held before the view: adoption, the late hand-off ---------------------------


def test_what_pytensor_would_have_comes_from_its_own_sources_or_its_default(sources: Any) -> None:
    current = view.view()
    assert current is not None
    sources(env={"PYTENSOR_FLAGS": "floatX=float32", "THEANO_FLAGS": "floatX=float16"},
            assignments={"floatX": "float64"})  # fmt: skip
    assert current.pytensor_would_have("floatX") == "float32"  # PyTensor read PYTENSOR_FLAGS itself
    sources(env={"THEANO_FLAGS": "floatX=float16"})
    assert current.pytensor_would_have("floatX") == "float64"  # PyTensor's default
    assert current.pytensor_would_have("cxx") is view._UNKNOWN  # worked out: cannot be said


def test_a_value_pytensor_was_given_inside_a_modecfg_override_is_not_adopted(
    pytensor_alone: object,
) -> None:
    """PyTensor, alone, was handed the value below the override; it is assigned the override's
    value meanwhile (a block of PyTensor's own, entered inside modecfg's): that is no change of
    PyTensor's to adopt."""
    pc = pytensor.config
    with config.override(floatX="float16"):
        pc.floatX = "float16"
        install()
        origin = config.origin("floatX")
        assert (origin.layer, origin.source) == (Layer.OVERRIDE, __file__)  # the override's, as it was
    assert config.origin("floatX").layer is Layer.DEFAULT and config.floatX == "float64"


def test_adoption_goes_past_a_flag_pytensor_was_handed_from_below_an_override(
    pytensor_alone: object,
) -> None:
    """Detached inside an override, PyTensor holds the value below it (the user's float32):
    nothing to adopt there; a later flag PyTensor was given meanwhile is adopted."""
    pc = pytensor.config
    order = list(pc._config_var_dict)
    assert order.index("floatX") < order.index("exception_verbosity")
    install()
    config.floatX = "float32"
    with config.override(floatX="float16"):
        uninstall()
        assert pc.floatX == "float32"
        pc.exception_verbosity = "high"
        install()
        assert config.origin("exception_verbosity").source == ADOPTED
        assert config.origin("floatX").layer is Layer.OVERRIDE
    assert (config.floatX, config.origin("floatX").source) == ("float32", __file__)


def test_adoption_goes_past_a_flag_set_to_modecfgs_own_value(pytensor_alone: object) -> None:
    pc = pytensor.config
    params = pc._config_var_dict
    order = list(params)
    assert order.index("floatX") < order.index("exception_verbosity")
    with config.override(floatX="float16"):
        pc.floatX = "float16"  # modecfg's value in effect here: nothing to adopt
        pc.exception_verbosity = "high"  # later in PyTensor's table: adopted
        install()
    assert (config.exception_verbosity, config.origin("exception_verbosity").source) == ("high", ADOPTED)


def test_a_value_pytensor_held_that_modecfg_refuses_is_said_and_the_rest_adopted(
    pytensor_alone: object, caplog: pytest.LogCaptureFixture
) -> None:
    pc = pytensor.config
    params = pc._config_var_dict
    order = list(params)
    assert order.index("floatX") < order.index("exception_verbosity")
    vars(params["floatX"])["val"] = "float8"  # past PyTensor's own check: nothing modecfg takes
    pc.exception_verbosity = "high"
    with caplog.at_level(logging.WARNING, logger="modecfg.bridge"):
        install()
    assert config.floatX == "float64"
    assert (config.exception_verbosity, config.origin("exception_verbosity").source) == ("high", ADOPTED)
    [record] = [r for r in caplog.records if "set before modecfg" in r.getMessage()]
    assert record.getMessage().startswith(
        "pytensor.config.floatX='float8' (set before modecfg was imported) is not taken: "
    )
    assert "float8" in record.getMessage().split("is not taken: ", 1)[1]


@pytest.fixture
def late() -> Iterator[Any]:
    """PyTensor imported before modecfg: its own flags' settings are handed to it at attach."""
    assert view.__dict__["HAND_OFF"] is state.HAND_OFF  # the one list the view reads
    held = list(state.HAND_OFF)
    state.HAND_OFF[:] = ["read through the view after import (PyTensor was imported before modecfg)"]
    root = _root()
    root.add("modecfgtest_own", "PyTensor's own (test)", EnumStr("a", ["b", "c"]), in_c_key=False)
    current = SimpleNamespace(params=root._config_var_dict, target=root)
    try:
        yield current
    finally:
        state.HAND_OFF[:] = held
        delattr(PyTensorConfigParser, "modecfgtest_own")


def _setting(raw: str, source: str, name: str = "modecfgtest_own") -> Setting:
    return Setting(name, raw, Origin(Layer.ENV, source))


def _hand_late(current: Any, monkeypatch: pytest.MonkeyPatch, *settings: Setting) -> None:
    monkeypatch.setattr(view, "_config", SimpleNamespace(for_pytensor=settings))
    view._View.hand_late(current)


def test_pytensors_own_flags_are_handed_to_it_late_except_what_it_read_itself(
    late: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hand_late(late, monkeypatch, _setting("b", "THEANO_FLAGS"))
    assert late.target.modecfgtest_own == "b"
    _hand_late(late, monkeypatch, _setting("c", "PYTENSOR_FLAGS"))  # PyTensor read it itself
    assert late.target.modecfgtest_own == "b"


def test_pytensors_own_flags_are_not_handed_again_after_its_import(
    late: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    state.HAND_OFF[:] = ["handed over at import"]
    _hand_late(late, monkeypatch, _setting("b", "THEANO_FLAGS"))
    assert late.target.modecfgtest_own == "a"


def test_a_late_setting_pytensor_refuses_or_does_not_know_is_a_warning(
    late: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.warns(HeldFlagWarning) as said:
        _hand_late(late, monkeypatch, _setting("d", "THEANO_FLAGS"),
                   _setting("1", "/home/u/.theanorc", name="modecfgtest_gone"))  # fmt: skip
    assert late.target.modecfgtest_own == "a"
    refused, unknown = (str(w.message) for w in said)
    assert refused.startswith(
        "modecfgtest_own='d' (from THEANO_FLAGS): PyTensor refuses it (Invalid value ('d') for "
        "configuration variable 'modecfgtest_own'. Valid options are "
    )
    assert unknown == (
        "modecfgtest_gone='1' (from /home/u/.theanorc): PyTensor declares no such flag, though "
        "its source seemed to; the setting does nothing"
    )


# -- attach and detach --------------------------------------------------------------------------


def test_attach_patches_pytensors_class_and_detach_gives_back_what_was_there() -> None:
    uninstall()
    try:
        assert PyTensorConfigParser.add is view._ORIGINAL_ADD
        config.linker = "py"  # modecfg's, while detached: PyTensor is not told
    finally:
        install()
    assert PyTensorConfigParser.add is view._add and PyTensorConfigParser.__setattr__ is view._setattr
    originals = dict(view.view().originals)  # type: ignore[union-attr]
    assert all(type(vars(p)["__set__"]) is view.SetByPyTensor for p in originals.values())
    config.linker = "py"
    uninstall()
    try:
        assert pytensor.config.linker == "py"  # the value in effect, held by PyTensor's own
        assert all("__set__" not in vars(p) for p in originals.values())
        assert pytensor.config._config_var_dict["linker"] is originals["linker"]
    finally:
        install()


def test_a_flag_only_pytensor_declares_is_read_through_modecfg_and_set_through_pytensor() -> None:
    """``modecfg.config.gcc_version_str`` reads PyTensor's parameter; assigning it through modecfg
    is refused before any descriptor, saying to set it through ``pytensor.config``."""
    import pytensor

    from modecfg import UnknownFlagError

    attached = view.view()
    assert attached is not None
    name = sorted(attached.through)[0]
    assert getattr(config, name) == getattr(pytensor.config, name)
    before = getattr(pytensor.config, name)
    with pytest.raises(UnknownFlagError, match=rf"pytensor\.config\.{name} reads and sets it"):
        setattr(config, name, "something else")
    assert getattr(pytensor.config, name) == before


def test_detach_takes_away_what_attach_put_on_modecfgs_side() -> None:
    """The descriptors of PyTensor's own flags on modecfg's ``Config`` class, and the view's
    listener of overrides, go with the view (a detach that skipped either passed every test:
    mutants of ``_View.detach``)."""
    from modecfg.configuration.live import Config

    attached = view.view()
    assert attached is not None and attached.through  # PyTensor declares flags modecfg does not
    listeners = config._cfg_store.shadow_listeners
    assert attached.shadowed in listeners
    uninstall()
    try:
        assert [n for n, v in vars(Config).items() if isinstance(v, view.PyTensorsFlag)] == []
        assert attached.shadowed not in listeners
    finally:
        install()
    again = view.view()
    assert again is not None and again is not attached and sorted(again.through) == sorted(attached.through)
    assert all(isinstance(vars(Config)[name], view.PyTensorsFlag) for name in again.through)
    assert again.shadowed in listeners and attached.shadowed not in listeners


def test_a_block_of_change_flags_in_a_reinstalled_view_is_seen_from_its_users_line() -> None:
    uninstall()
    install()
    current = view.view()
    assert current is not None and current.wrapper is not None

    @pytensor.config.change_flags(floatX="float16")  # type: ignore[untyped-decorator]
    def decorated() -> Any:
        return config.origin("floatX")

    origin = decorated()  # the line of this call, not PyTensor's wrapper
    assert (origin.layer, origin.source) == (Layer.OVERRIDE, __file__)


def test_a_shallow_copy_of_pytensors_config_answers_as_plain_pytensor_does() -> None:
    """copy.copy(pytensor.config) shares its table: plain PyTensor reads and assigns through it
    (round five: modecfg raised ConfigAccessViolation)."""
    import copy

    import pytensor

    shallow = copy.copy(pytensor.config)
    try:
        assert shallow.floatX == pytensor.config.floatX == config.floatX
        shallow.floatX = "float32"
        assert pytensor.config.floatX == config.floatX == "float32"
        assert config.explain("floatX").origin.layer is Layer.ASSIGNMENT
    finally:
        config.reset("floatX")


def test_a_default_worked_out_from_another_flag_follows_it_after_a_first_read() -> None:
    """DebugMode.check_c's default is whether there is a C compiler (cxx): read once, then read
    inside change_flags(cxx=""), it follows (the memo never keeps a lazy default; issue 59)."""
    import pytensor

    if not config.cxx:
        pytest.skip("no C compiler here: cxx is '' already")
    assert pytensor.config.DebugMode__check_c is True  # the first read
    with pytensor.config.change_flags(cxx=""):
        assert pytensor.config.DebugMode__check_c is False
        assert config.DebugMode.check_c is False
    assert pytensor.config.DebugMode__check_c is True


def test_a_parameter_taking_turns_read_while_no_view_is_attached_is_pytensors_alone(
    sources: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between uninstall's taking the view away and its putting PyTensor's parameters back, a
    thread may still find one taking turns: its first read is PyTensor's own, handing nothing."""
    from modecfg._pytensor import view

    sources(assignments={"compiledir": "/tmp/handed"})
    pc = pytensor.config
    param = _unread("modecfgtest_turns")
    monkeypatch.setattr(view, "_VIEW", None)
    pc._config_var_dict[param.name] = param
    try:
        assert _TakingTurns(param, FLAGS["compiledir"]).__get__(pc, type(pc)) == "worked out"  # not handed
    finally:
        del pc._config_var_dict[param.name]
