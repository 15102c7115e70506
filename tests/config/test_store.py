"""The store behind a Config (modecfg.config.store): values held until PyTensor's flags are
known, the undo of a refused assignment, resets, subscriptions, adopted flags."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator

import pytensor  # noqa: F401  (its flags are adopted: what was held for them can resolve)
import pytest

import modecfg
from modecfg.config import Change, Config
from modecfg.config import flags as flags_module
from modecfg.config import store as store_module
from modecfg.config.flags import FLAGS, Flag, Lazy
from modecfg.config.live import build
from modecfg.config.origin import Layer, Origin, Setting
from modecfg.config.resolve import Candidate, Resolution
from modecfg.errors import HeldFlagWarning

ENV = Origin(Layer.ENV, "PYTENSOR_FLAGS")
RC = Origin(Layer.RC, "/home/u/.theanorc", 3)


def _held(*settings: Setting, candidates: dict[str, list[Candidate]] | None = None) -> Config:
    """A Config whose sources named flags not declared when they were read (PyTensor's, before
    its import): the process-wide one holds them until PyTensor's declarations are adopted."""
    res = Resolution()
    res.candidates.update(candidates or {})
    res.pending.extend(settings)
    cfg = build(res)
    _SETTLED[:] = [cfg]
    return cfg


_SETTLED: list[Config] = []  # the Configs the next _pytensor_imported() settles


def _pytensor_imported() -> list[str]:
    """What happens to the process-wide Config at the end of ``import pytensor`` (here to the
    last one _held made): held names resolved, what is still unknown warned about."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for cfg in _SETTLED:
            store_module.settle_and_warn(cfg._cfg_store)  # type: ignore[attr-defined]
    return [str(w.message) for w in seen if issubclass(w.category, HeldFlagWarning)]


# -- names held until PyTensor's flags are known ---------------------------------------------------


def test_a_held_value_is_taken_at_pytensors_import_the_highest_layer_winning() -> None:
    earlier = Candidate("gcc-from-an-old-rc", "gcc-from-an-old-rc", Origin(Layer.RC, "/etc/theanorc", 1))
    cfg = _held(
        Setting("gcc_version_str", "from-rc", RC),
        Setting("gcc_version_str", "from-env", ENV),
        candidates={"gcc_version_str": [earlier]},
    )
    heard: list[Change] = []
    cfg.subscribe(heard.append, ["gcc_version_str"])
    assert _pytensor_imported() == []
    assert cfg.gcc_version_str == "from-env" and cfg.origin("gcc_version_str") == ENV
    layers = [c.value for c in cfg.explain("gcc_version_str").layers]
    assert layers == ["gcc-from-an-old-rc", "from-rc", "from-env"]
    assert heard == [Change("gcc_version_str", "from-env", ENV, "loaded")]
    assert cfg.held == ()
    assert _pytensor_imported() == [] and len(heard) == 1  # said once: nothing is held any more


def test_names_still_unknown_at_pytensors_import_are_warned_five_by_name_the_rest_in_one_line() -> None:
    other = Origin(Layer.RC, "/a/.theanorc", 9)
    names = [f"no_such_flag_{i}" for i in range(8)]
    _held(*(Setting(n, "1", ENV if i < 6 else other) for i, n in enumerate(names)))
    said = _pytensor_imported()
    assert len(said) == 6
    for name, message in zip(names, said[:5], strict=False):
        assert f"unknown flag {name!r} (from PYTENSOR_FLAGS)" in message
    assert said[5] == (
        "and 3 more names no flag has, in /a/.theanorc, PYTENSOR_FLAGS (modecfg validate lists them all)"
    )


def test_five_unknown_names_are_five_messages_and_no_summary() -> None:
    _held(*(Setting(f"no_such_flag_{i}", "1", ENV) for i in range(5)))
    said = _pytensor_imported()
    assert len(said) == 5 and not any(m.startswith("and ") for m in said)


# -- an assignment a listener refuses --------------------------------------------------------------


def test_a_refused_assignment_tells_those_that_heard_where_the_value_now_comes_from() -> None:
    cfg = modecfg.load(env={"PYTENSOR_FLAGS": "floatX=float32"}, rc_files=[])
    heard: list[Change] = []
    cfg.subscribe(heard.append, ["floatX"])

    def refuse(change: Change) -> None:
        if change.kind == "assigned":
            raise RuntimeError("refused")

    cfg.subscribe(refuse, ["floatX"])
    with pytest.raises(RuntimeError, match="refused"):
        cfg.floatX = "float64"
    assert heard[-1] == Change("floatX", "float32", ENV, "reset")
    assert cfg.floatX == "float32" and cfg.origin("floatX") == ENV

    plain = modecfg.load(env={}, rc_files=[])
    told: list[Change] = []
    plain.subscribe(told.append, ["floatX"])
    plain.subscribe(refuse, ["floatX"])
    with pytest.raises(RuntimeError):
        plain.floatX = "float32"
    assert told[-1] == Change("floatX", "float64", Origin(Layer.DEFAULT), "reset")


def test_a_refused_assignment_to_a_computed_default_leaves_it_computed() -> None:
    cfg = modecfg.load(env={"PYTENSOR_FLAGS": "compile.wait=7"}, rc_files=[])
    computed = cfg.compile.timeout
    assert computed != 1  # computed from compile.wait

    def refuse(change: Change) -> None:
        raise RuntimeError("refused")

    cfg.subscribe(refuse, ["compile.timeout"])
    with pytest.raises(RuntimeError):
        cfg.compile.timeout = 1
    assert cfg.compile.timeout == computed and cfg.origin("compile.timeout").layer is Layer.DEFAULT


def test_a_listener_failing_on_the_undo_is_logged_and_the_others_are_still_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cfg = modecfg.load(env={}, rc_files=[])
    told: list[str] = []

    def fails_on_undo(change: Change) -> None:
        if change.kind == "reset":
            raise ValueError("cannot go back")

    def then_told(change: Change) -> None:
        told.append(change.kind)

    def refuse(change: Change) -> None:
        raise RuntimeError("refused")

    cfg.subscribe(fails_on_undo, ["floatX"])
    cfg.subscribe(then_told, ["floatX"])
    cfg.subscribe(refuse, ["floatX"])
    with caplog.at_level(logging.ERROR, logger="modecfg.config"):
        with pytest.raises(RuntimeError, match="refused"):
            cfg.floatX = "float32"
    assert told == ["assigned", "reset"]
    [record] = [r for r in caplog.records if r.name == "modecfg.config"]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == (
        f"listener {fails_on_undo!r} failed on reset of floatX (ValueError: cannot go back)"
    )


# -- reset ----------------------------------------------------------------------------------------


def test_reset_tells_the_listeners_which_layer_decides_now() -> None:
    cfg = modecfg.load(env={"PYTENSOR_FLAGS": "floatX=float32"}, rc_files=[])
    heard: list[Change] = []
    cfg.subscribe(heard.append, ["floatX", "traceback.limit"])
    cfg.floatX = "float16"
    cfg.reset("floatX")
    assert heard[-1] == Change("floatX", "float32", ENV, "reset")
    cfg.traceback.limit = 3
    cfg.reset("traceback.limit")
    default = FLAGS["traceback.limit"].default
    assert heard[-1] == Change("traceback.limit", default, Origin(Layer.DEFAULT), "reset")


def test_resetting_a_computed_default_never_assigned_is_harmless() -> None:
    cfg = modecfg.load(env={}, rc_files=[])
    before = cfg.compile.timeout
    cfg.reset("compile.timeout")
    del cfg.compile.timeout  # the same, spelled as Python spells it
    assert cfg.compile.timeout == before and cfg.origin("compile.timeout").layer is Layer.DEFAULT


# -- subscriptions --------------------------------------------------------------------------------


def test_a_subscription_to_some_flags_hears_their_overrides_only() -> None:
    cfg = modecfg.load(env={}, rc_files=[])
    heard: list[Change] = []
    cfg.subscribe(heard.append, ["floatX"], overrides=True)
    with cfg.override(**{"traceback.limit": 2}):
        pass
    assert heard == []
    with cfg.override(floatX="float32"):
        pass
    assert [(c.name, c.kind) for c in heard] == [("floatX", "override")]


PLAIN = Flag("test_adopted_plain", int, 5, "a flag adopted from PyTensor (test)", pytensor=True)
LAZY = Flag("test_adopted_lazy", int, Lazy(lambda c: c.test_adopted_plain * 2, "twice the other"), "a test",
            pytensor=True)  # fmt: skip


@pytest.fixture
def adopt(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Config, Flag], None]]:
    """Declare a flag in an existing Config as PyTensor's import does in the process-wide one
    (for this test only)."""

    def adopt(cfg: Config, spec: Flag) -> None:
        monkeypatch.setitem(FLAGS, spec.name, spec)
        flags_module._declared.clear()  # a new FlagSet, as flags.adopt makes
        cfg._cfg_store.adopt(spec)

    yield adopt
    monkeypatch.undo()
    flags_module._declared.clear()


def test_a_flag_adopted_after_a_config_was_read_has_its_default_there(
    adopt: Callable[[Config, Flag], None],
) -> None:
    plain, lazy = PLAIN, LAZY
    cfg = modecfg.load(env={}, rc_files=[])
    store = cfg._cfg_store
    adopt(cfg, plain)
    adopt(cfg, lazy)
    assert cfg.test_adopted_plain == 5
    assert cfg.test_adopted_lazy == 10  # computed, not the Lazy object
    store.assign(plain, 7, "7", Origin(Layer.ASSIGNMENT, "t.py", 1))
    assert cfg.test_adopted_lazy == 14


def test_a_subscription_to_every_flag_hears_flags_adopted_later(
    adopt: Callable[[Config, Flag], None],
) -> None:
    plain = PLAIN
    cfg = modecfg.load(env={}, rc_files=[])
    every: list[str] = []
    some: list[str] = []
    cfg.subscribe(lambda c: every.append(c.name))
    cfg.subscribe(lambda c: some.append(c.name), ["floatX"])
    adopt(cfg, plain)
    cfg._cfg_store.assign(plain, 7, "7", Origin(Layer.ASSIGNMENT, "t.py", 1))
    assert every == ["test_adopted_plain"] and some == []


# -- reads ----------------------------------------------------------------------------------------


def test_a_misspelt_name_in_a_section_says_which_kind_of_object_has_no_such_attribute() -> None:
    cfg = modecfg.load(env={}, rc_files=[])
    with pytest.raises(AttributeError, match=r"^'Section' object has no attribute 'limt'$"):
        cfg.traceback.limt  # noqa: B018
    assert "limit" in dir(cfg.traceback)  # whence Python's "Did you mean: 'limit'?"


def test_introspection_of_a_configs_class_sees_pytensors_spellings() -> None:
    """IDEs, Sphinx and IPython's ``?`` walk the class's attributes: PyTensor's ``__`` spellings are
    there as what they are, not read (there is no instance to read them from)."""
    import inspect

    cfg = modecfg.load(env={}, rc_files=[])
    members = dict(inspect.getmembers(type(cfg)))
    assert type(members["traceback__limit"]).__name__ == "Alias"
    assert cfg.traceback__limit == cfg.traceback.limit


def test_each_obsolete_flag_is_warned_once_however_often_it_is_set() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        modecfg.load(env={"THEANO_FLAGS": "lib.cnmem=1,lib.cnmem=2,cuda.root=/x,cuda.root=/y"}, rc_files=[])
    said = [str(w.message) for w in seen if w.category is modecfg.ObsoleteFlagWarning]
    assert len(said) == 2 and "lib.cnmem" in said[0] and "cuda.root" in said[1]


def test_the_value_a_view_asks_for_is_the_reading_context_s() -> None:
    """Store.value: the override of this thread or task, else the value below (what the config
    view shows PyTensor for a flag whose value is not in its dict)."""
    cfg = modecfg.load(env={"PYTENSOR_FLAGS": "floatX=float32"}, rc_files=[])
    store = cfg._cfg_store  # type: ignore[attr-defined]
    assert store.value("floatX") == "float32"
    with cfg.override(floatX="float16"):
        assert store.value("floatX") == "float16" and store.base("floatX") == "float32"
        assert store.value("traceback.limit") == 8  # not overridden: the value below
    assert store.value("compile.timeout") == 5 * 24  # computed, below the overrides
