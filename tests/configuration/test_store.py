"""The store behind a Config (modecfg.configuration.store): settings of PyTensor's own flags, the undo of
a refused assignment, resets, subscriptions."""

from __future__ import annotations

import logging
import warnings

import pytest

import modecfg
from modecfg.configuration import Change
from modecfg.configuration.flags import FLAGS
from modecfg.configuration.live import build
from modecfg.configuration.origin import Layer, Origin, Setting
from modecfg.configuration.resolve import Resolution

ENV = Origin(Layer.ENV, "PYTENSOR_FLAGS")
RC = Origin(Layer.RC, "/home/u/.theanorc", 3)


# -- settings of PyTensor's own flags ----------------------------------------------------------------


def test_settings_of_pytensors_own_flags_are_kept_as_written_in_their_order() -> None:
    rc = Setting("gcc_version_str", "from-rc", RC)
    cfg = modecfg.load(env={"PYTENSOR_FLAGS": "gcc_version_str=from-env,floatX=float32"}, rc_files=[])
    (env,) = cfg.for_pytensor
    assert (env.key, env.raw, env.origin) == ("gcc_version_str", "from-env", ENV)
    assert cfg.floatX == "float32" and "gcc_version_str" not in cfg
    res = Resolution()
    res.for_pytensor.extend([rc, env])
    assert build(res).for_pytensor == (rc, env)  # PyTensor reads them in this order: the last wins


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


# -- the sections' classes -------------------------------------------------------------------------


def test_a_section_gets_a_class_of_its_own_when_a_descriptor_must_go_on_it() -> None:
    """Issue 61: a class per section cost every import; the sections share ``Section`` until an
    override (or a lazy default) puts a descriptor on theirs. Two sections holding an attribute of
    one name (NanGuardMode.action, CompareMode.action) never answer each other's overrides."""
    import threading

    from modecfg.configuration.sections import Section

    cfg = modecfg.load(env={}, rc_files=[])
    shared = [name for name in ("NanGuardMode", "CompareMode", "profiling", "scan")
              if type(getattr(cfg, name)) is Section]  # fmt: skip
    assert shared == ["NanGuardMode", "CompareMode", "profiling", "scan"]
    assert type(cfg.DebugMode) is not Section and type(cfg.compile) is not Section  # lazy defaults
    with cfg.override({"NanGuardMode.action": "warn"}):
        assert type(cfg.NanGuardMode) is not Section and type(cfg.CompareMode) is Section
        assert (cfg.NanGuardMode.action, cfg.CompareMode.action) == ("warn", "raise")
        with cfg.override({"CompareMode.action": "warn", "scan.allow_gc": True}):
            assert (cfg.NanGuardMode.action, cfg.CompareMode.action) == ("warn", "warn")
            assert cfg.scan.allow_gc is True and cfg.allow_gc is True
        assert (cfg.NanGuardMode.action, cfg.CompareMode.action) == ("warn", "raise")
    assert (cfg.NanGuardMode.action, cfg.CompareMode.action) == ("raise", "raise")

    # threads entering overrides of one section's flags at once, each its own first override
    fresh = modecfg.load(env={}, rc_files=[])
    names = [n for n in FLAGS if n.startswith("profiling.") and FLAGS[n].type is bool]
    start, seen, errors = threading.Barrier(len(names)), {}, []

    def enter(name: str) -> None:
        try:
            value = not fresh[name]
            start.wait()
            with fresh.override({name: value}):
                seen[name] = fresh[name] == value and getattr(fresh.profiling, name.split(".")[1]) == value
        except BaseException as exc:  # the test says which thread failed
            errors.append(exc)

    threads = [threading.Thread(target=enter, args=(n,)) for n in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(names) >= 2 and seen == dict.fromkeys(names, True)


def test_a_section_s_own_class_is_named_and_placed_as_the_shared_one() -> None:
    """The class a section gets of its own reads as ``Section`` of the sections module (reprs,
    pickling by name, a debugger's display): only its descriptors differ."""
    from modecfg.configuration.sections import Section

    cfg = modecfg.load(env={}, rc_files=[])
    with cfg.override({"NanGuardMode.action": "warn"}):
        own = type(cfg.NanGuardMode)
        assert own is not Section and issubclass(own, Section)
        assert (own.__name__, own.__qualname__, own.__module__) == ("Section", "Section", Section.__module__)


def test_a_flag_two_sections_deep_is_read_and_assigned_through_both_sections() -> None:
    """No flag modecfg declares is two sections deep; a configuration of such flags (``load``'s
    machinery takes any FlagSet) reads and assigns them through each section in turn."""
    from modecfg.configuration.flags import Flag, FlagSet

    deep, shallow = Flag("outer.inner.depth", int, 1, "doc"), Flag("outer.width", int, 2, "doc")
    flags = FlagSet({spec.name: spec for spec in (deep, shallow)})
    cfg = build(Resolution(), flags=flags)
    assert (cfg.outer.inner.depth, cfg.outer.width, cfg["outer.inner.depth"]) == (1, 2, 1)
    cfg.outer.inner.depth = 5  # the inner section's prefix names the flag: outer.inner.
    cfg.outer.width = 7
    assert (cfg["outer.inner.depth"], cfg.outer.inner.depth, cfg["outer.width"]) == (5, 5, 7)
    assert cfg.origin("outer.inner.depth").layer is Layer.ASSIGNMENT
