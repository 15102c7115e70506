"""Overrides exact in every context: copied contexts that outlive the block, every read path alike."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

import modecfg
from modecfg.configuration.origin import Layer
from modecfg.configuration.sections import Overridden


@pytest.fixture
def cfg() -> modecfg.Config:
    return modecfg.load(env={})


def _reads(cfg: modecfg.Config) -> tuple[object, ...]:
    """Every way of reading floatX in this context."""
    return (cfg.floatX, cfg["floatX"], cfg.origin("floatX").layer, cfg.overrides().get("floatX"))


def _descriptor_on_class(cfg: modecfg.Config) -> bool:
    return isinstance(type(cfg).__dict__.get("floatX"), Overridden)


def test_a_task_created_inside_an_override_keeps_it_after_the_block_ends(cfg: modecfg.Config) -> None:
    async def late_reader(started: asyncio.Event, go_on: asyncio.Event) -> tuple[object, ...]:
        started.set()
        await go_on.wait()  # the block that created this task has ended by now
        return _reads(cfg)

    async def main() -> tuple[tuple[object, ...], tuple[object, ...]]:
        started, go_on = asyncio.Event(), asyncio.Event()
        with cfg.override(floatX="float32"):
            task = asyncio.create_task(late_reader(started, go_on))
            await started.wait()
        outside = _reads(cfg)
        go_on.set()
        return outside, await task

    outside, in_task = asyncio.run(main())
    assert outside == ("float64", "float64", Layer.DEFAULT, None)
    assert in_task == ("float32", "float32", Layer.OVERRIDE, "float32")


def test_a_thread_running_a_copied_context_keeps_the_override(cfg: modecfg.Config) -> None:
    block_ended, read = threading.Event(), threading.Event()
    seen: list[tuple[object, ...]] = []

    def worker() -> None:
        block_ended.wait(10)
        seen.append(_reads(cfg))
        read.set()

    with cfg.override(floatX="float16"):
        ctx = contextvars.copy_context()
    thread = threading.Thread(target=ctx.run, args=(worker,))
    thread.start()
    # The main thread reads first, so that a descriptor taken away too early would show.
    assert _reads(cfg) == ("float64", "float64", Layer.DEFAULT, None)
    block_ended.set()
    assert read.wait(10)
    thread.join()
    assert seen == [("float16", "float16", Layer.OVERRIDE, "float16")]
    # The copied context is still alive (ctx): the fast read stays exact in it.
    assert ctx.run(lambda: cfg.floatX) == "float16"


def test_plain_reads_come_back_once_no_context_holds_the_override(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float32"):
        ctx = contextvars.copy_context()
    assert cfg.floatX == "float64"
    assert _descriptor_on_class(cfg)  # ctx still holds the frame
    del ctx
    gc.collect()
    assert cfg.floatX == "float64"  # this read takes the descriptor away
    assert not _descriptor_on_class(cfg)
    assert cfg.floatX == "float64"


def test_without_copies_the_descriptor_goes_at_the_first_read_after_the_block(cfg: modecfg.Config) -> None:
    for _ in range(3):
        with cfg.override(floatX="float32"):
            assert cfg.floatX == "float32" and _descriptor_on_class(cfg)
        assert cfg.floatX == "float64"
        assert not _descriptor_on_class(cfg)


def test_nested_overrides_in_a_copied_context_keep_both_levels(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float32"):
        with cfg.override(traceback__limit=2):
            ctx = contextvars.copy_context()
    assert (cfg.floatX, cfg.traceback.limit) == ("float64", 8)
    assert ctx.run(lambda: (cfg.floatX, cfg.traceback.limit, cfg["traceback.limit"])) == ("float32", 2, 2)


def test_an_assignment_inside_an_override_is_undone_with_it_and_seen_by_copies(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float32"):
        cfg.floatX = "float16"  # changes the override
        ctx = contextvars.copy_context()
        assert cfg.floatX == "float16"
    assert cfg.floatX == "float64"
    assert ctx.run(lambda: (cfg.floatX, cfg["floatX"])) == ("float16", "float16")
    del ctx
    gc.collect()
    assert cfg.floatX == "float64" and not _descriptor_on_class(cfg)


def test_many_tasks_outliving_their_overrides(cfg: modecfg.Config) -> None:
    values = ["float16", "float32", "float64"]

    async def reader(want: str, go_on: asyncio.Event) -> bool:
        await go_on.wait()
        return all(r == want for r in (cfg.floatX, cfg["floatX"], cfg.overrides()["floatX"]))

    async def main() -> list[bool]:
        go_on = asyncio.Event()
        tasks = []
        for i in range(30):
            with cfg.override(floatX=values[i % 3]):
                tasks.append(asyncio.create_task(reader(values[i % 3], go_on)))
        assert cfg.floatX == "float64"
        go_on.set()
        return await asyncio.gather(*tasks)

    assert all(asyncio.run(main()))
    gc.collect()
    # Lingering frames are swept a share at each read: plain reads are back within a few.
    assert [cfg.floatX for _ in range(10)] == ["float64"] * 10
    assert not _descriptor_on_class(cfg)


# -- change notification -----------------------------------------------------------------


def test_subscribers_hear_assignments_resets_and_overrides_when_entered() -> None:
    cfg = modecfg.load(env={"THEANO_FLAGS": "floatX=float32"})
    heard: list[tuple[str, object, str]] = []
    stop = cfg.subscribe(lambda c: heard.append((c.name, c.value, c.kind)), ["floatX"], overrides=True)
    cfg.traceback.limit = 2  # not a flag it asked for
    cfg.floatX = "float16"
    del cfg.floatX
    override = cfg.override(floatX="float64")
    assert heard == [("floatX", "float16", "assigned"), ("floatX", "float32", "reset")]
    with override:  # told when entered, not when made
        assert heard[-1] == ("floatX", "float64", "override")
    stop()
    cfg.floatX = "float16"
    assert len(heard) == 3


def test_subscribers_without_overrides_do_not_hear_them() -> None:
    cfg = modecfg.load(env={})
    heard: list[str] = []
    cfg.subscribe(lambda c: heard.append(c.kind))
    with cfg.override(floatX="float32"):
        pass
    cfg.floatX = "float32"
    assert heard == ["assigned"]


def test_a_lazy_config_tells_what_its_sources_set_when_first_read() -> None:
    from modecfg.configuration.live import build
    from modecfg.configuration.origin import Origin, Setting
    from modecfg.configuration.resolve import Resolution, resolve

    def loader(flags: Any) -> Resolution:
        res = Resolution()
        resolve([Setting("floatX", "float32", Origin(Layer.ENV, "THEANO_FLAGS"))], res, flags)
        return res

    cfg = build(loader)
    heard: list[tuple[str, object, str]] = []
    cfg.subscribe(lambda c: heard.append((c.name, c.value, c.kind)))
    assert heard == [] and not cfg.loaded
    assert cfg.traceback.limit == 8
    assert heard == [("floatX", "float32", "loaded")] and cfg.loaded


def test_a_guard_refuses_an_assignment_of_a_flag_fixed_per_process_and_nothing_changes() -> None:
    cfg = modecfg.load(env={})
    heard: list[str] = []
    cfg.subscribe(lambda c: heard.append(c.name))
    asked: list[str] = []

    def not_that_one(spec: Any, value: object) -> None:
        asked.append(spec.name)
        if value == "/opt/bad/g++":
            raise modecfg.ReadOnlyFlagError("not today", flag="cxx")

    remove = cfg.guard(not_that_one)
    default = cfg.cxx
    with pytest.raises(modecfg.ReadOnlyFlagError):
        cfg.cxx = "/opt/bad/g++"
    assert cfg.cxx == default and cfg.origin("cxx").layer is Layer.DEFAULT and heard == []
    cfg.cxx = "/opt/good/g++"
    cfg.floatX = "float32"  # not fixed per process: no guard is asked
    assert asked == ["cxx", "cxx"]
    remove()
    cfg.cxx = "/opt/bad/g++"
    assert cfg.cxx == "/opt/bad/g++" and asked == ["cxx", "cxx"]


def test_a_guard_is_asked_before_an_assignment_of_a_fixed_flag_is_dropped(tmp_path: Any) -> None:
    """Dropping an assignment changes the value as assigning does: a flag PyTensor already uses
    (``del config.cxx`` after PyTensor compiled with it) kept the assignment's value in PyTensor
    and showed the default in modecfg. The guard is asked with the value the drop would give
    (a source's, else the default, a lazy one worked out); refused, nothing changes."""
    rc = tmp_path / "rc.toml"
    rc.write_text('[global]\ncxx = "/opt/rc/g++"\n')
    cfg = modecfg.load(env={}, rc_files=[rc])
    heard: list[str] = []
    cfg.subscribe(lambda c: heard.append(c.name))
    asked: list[tuple[str, object]] = []

    def uses(spec: Any, value: object) -> None:
        asked.append((spec.name, value))
        if value != "/opt/used/g++":
            raise modecfg.ReadOnlyFlagError("PyTensor uses another", flag=spec.name)

    cfg.cxx = "/opt/used/g++"
    cfg.base_compiledir = tmp_path  # fixed, and no source: its default is worked out (lazy)
    remove = cfg.guard(uses)
    heard.clear()
    with pytest.raises(modecfg.ReadOnlyFlagError):
        del cfg.cxx
    with pytest.raises(modecfg.ReadOnlyFlagError):
        cfg.reset("base_compiledir")
    assert asked[0] == ("cxx", "/opt/rc/g++") and heard == []
    assert (cfg.cxx, cfg.origin("cxx").layer) == ("/opt/used/g++", Layer.ASSIGNMENT)
    assert cfg.base_compiledir == tmp_path
    cfg.reset("floatX")  # not fixed per process: no guard is asked
    assert len(asked) == 2
    remove()
    del cfg.cxx
    del cfg.base_compiledir
    assert (cfg.cxx, cfg.origin("cxx").layer) == ("/opt/rc/g++", Layer.RC)
    assert asked[1] == ("base_compiledir", cfg.base_compiledir) != ("base_compiledir", tmp_path)
    assert heard == ["floatX", "cxx", "base_compiledir"]


def test_a_copy_made_before_an_assignment_inside_the_override_keeps_what_it_saw(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float32"):
        before = contextvars.copy_context()
        cfg.floatX = "float16"
    assert cfg.floatX == "float64"
    assert before.run(lambda: (cfg.floatX, cfg["floatX"], cfg.origin("floatX").layer)) == (
        "float32",
        "float32",
        Layer.OVERRIDE,
    )
    del before
    gc.collect()
    assert [cfg.floatX for _ in range(3)] == ["float64"] * 3 and not _descriptor_on_class(cfg)


# -- leaving out of order, elsewhere, and after an assignment inside -------------------------------


def _together(*bodies: Any) -> None:
    """Each of ``bodies`` in a thread of its own, all started, then all joined."""
    threads = [threading.Thread(target=body) for body in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)


def _left_from_another_thread(block: Any) -> list[BaseException]:
    """Leave ``block`` from a thread of its own; what that raised."""
    errors: list[BaseException] = []

    def leave() -> None:
        try:
            block.__exit__(None, None, None)
        except BaseException as exc:  # the caller checks what it was
            errors.append(exc)

    _together(leave)
    return errors


def _in_thread_left_by_another(cfg: modecfg.Config, setup: Any, block: Any) -> dict[str, Any]:
    """``setup()`` then ``block.__enter__()`` in one thread; ``block.__exit__`` in another; the
    first thread then reads floatX, traceback.limit and their layers, inside ``setup()`` and after."""
    entered, left, seen = threading.Event(), threading.Event(), {}

    def enters() -> None:
        try:
            with setup():
                block.__enter__()
                cfg.floatX = "float16"  # an assignment inside: the block's scope is replaced
                entered.set()
                left.wait(10)
                seen["after"] = (cfg.floatX, cfg.traceback.limit, cfg.origin("floatX").layer)
            seen["end"] = (cfg.floatX, cfg.traceback.limit, cfg.origin("floatX").layer)
        except Exception as exc:  # said in the result: the test names it
            seen["error"] = repr(exc)

    def leaves() -> None:
        entered.wait(10)
        try:
            block.__exit__(None, None, None)
        except Exception as exc:  # said in the result: the test names it
            seen["error"] = repr(exc)
        left.set()

    _together(enters, leaves)
    return seen


def test_a_block_left_elsewhere_gives_back_what_the_enclosing_block_set(cfg: modecfg.Config) -> None:
    block = cfg.override(floatX="float32", traceback__limit=3)
    seen = _in_thread_left_by_another(cfg, lambda: cfg.override(floatX="float64"), block)
    # the outer block's floatX and the default limit; then, the outer block left, the defaults
    assert seen == {"after": ("float64", 8, Layer.OVERRIDE), "end": ("float64", 8, Layer.DEFAULT)}


def test_a_block_left_elsewhere_with_nothing_around_it_gives_back_the_defaults(cfg: modecfg.Config) -> None:
    import contextlib

    block = cfg.override(floatX="float32", traceback__limit=3)
    seen = _in_thread_left_by_another(cfg, contextlib.nullcontext, block)
    assert seen == {"after": ("float64", 8, Layer.DEFAULT), "end": ("float64", 8, Layer.DEFAULT)}


def test_a_block_left_elsewhere_is_no_override_by_any_read_in_the_thread_that_entered_it(
    cfg: modecfg.Config,
) -> None:
    block = cfg.override(floatX="float32", traceback__limit=3)
    entered, left, seen = threading.Event(), threading.Event(), {}

    def enters() -> None:
        block.__enter__()
        entered.set()
        left.wait(10)
        seen["reads"] = (*_reads(cfg), cfg.overrides(), cfg.explain("floatX").origin.layer)
        cfg.floatX = "float16"  # nothing open here now: a plain assignment, kept after
        seen["assigned"] = (cfg.floatX, cfg.origin("floatX").layer)

    def leaves() -> None:
        entered.wait(10)
        block.__exit__(None, None, None)
        left.set()

    _together(enters, leaves)
    assert seen == {
        "reads": ("float64", "float64", Layer.DEFAULT, None, {}, Layer.DEFAULT),
        "assigned": ("float16", Layer.ASSIGNMENT),
    }
    assert (cfg.floatX, cfg.origin("floatX").layer) == ("float16", Layer.ASSIGNMENT)


def test_deep_nesting_of_many_flags_unwinds_to_the_defaults(cfg: modecfg.Config) -> None:
    """Each entry sets its own flags' variables only: 60 nested blocks over four flags, some of
    several flags, left in order and one out of order, give back each level's values."""
    from contextlib import ExitStack

    names = ("floatX", "traceback__limit", "on_opt_error", "allow_gc")
    values = (("float16", "float32"), (1, 2, 3), ("raise", "ignore"), (False, True))
    want = []
    with ExitStack() as stack:
        blocks = []
        for level in range(60):
            flags = {names[level % 4]: values[level % 4][level % len(values[level % 4])]}
            if level % 7 == 0:
                flags[names[(level + 1) % 4]] = values[(level + 1) % 4][0]
            blocks.append(cfg.override(**flags))
            stack.enter_context(blocks[-1])
            want.append(_values4(cfg))
        assert _values4(cfg) == want[-1]
        blocks[30].__exit__(None, None, None)  # out of order: the levels above it keep their own
        assert cfg.floatX == want[-1][0] and cfg.traceback.limit == want[-1][1]
        stack.pop_all()
        for block in reversed(blocks[31:]):
            block.__exit__(None, None, None)
        for level in range(29, -1, -1):
            assert _values4(cfg) == want[level]
            blocks[level].__exit__(None, None, None)
    assert _values4(cfg) == ("float64", 8, "warn", True)
    assert cfg.overrides() == {}


def _values4(cfg: modecfg.Config) -> tuple[object, ...]:
    return (cfg.floatX, cfg.traceback.limit, cfg.on_opt_error, cfg.allow_gc)


@pytest.mark.parametrize("flags", [{"floatX": "float32"}, {"floatX": "float32", "traceback__limit": 3}])
def test_a_block_with_an_assignment_inside_can_still_be_left_elsewhere(
    cfg: modecfg.Config, flags: dict[str, object]
) -> None:
    import contextlib

    seen = _in_thread_left_by_another(cfg, contextlib.nullcontext, cfg.override(**flags))
    # the assignment inside replaced the block's floatX; leaving elsewhere still ends the block
    assert seen == {"after": ("float64", 8, Layer.DEFAULT), "end": ("float64", 8, Layer.DEFAULT)}


def test_leaving_a_block_around_one_left_elsewhere_keeps_the_block_entered_after_it(
    cfg: modecfg.Config,
) -> None:
    """One flag, three blocks: the middle one is ended from another thread, then the outer one
    is left before the inner one: the inner one's value stays until it is left."""
    block = cfg.override(floatX="float32")
    entered, left, seen = threading.Event(), threading.Event(), {}

    def enters() -> None:
        outer = cfg.override(floatX="float16")
        outer.__enter__()
        block.__enter__()
        entered.set()
        left.wait(10)
        inner = cfg.override(floatX="float64")
        inner.__enter__()  # on top of the block ended elsewhere, over the same flag
        outer.__exit__(None, None, None)  # out of order: inner stays
        seen["inner"] = (cfg.floatX, cfg.origin("floatX").layer, cfg.overrides())
        inner.__exit__(None, None, None)
        seen["none"] = (cfg.floatX, cfg.origin("floatX").layer, cfg.overrides())

    def leaves() -> None:
        entered.wait(10)
        block.__exit__(None, None, None)
        left.set()

    _together(enters, leaves)
    assert seen == {
        "inner": ("float64", Layer.OVERRIDE, {"floatX": "float64"}),
        "none": ("float64", Layer.DEFAULT, {}),
    }


@pytest.mark.parametrize("flags", [{"floatX": "float32"}, {"floatX": "float32", "traceback__limit": 2}])
def test_a_block_left_out_of_order_cannot_be_left_again_from_another_thread(
    cfg: modecfg.Config, flags: dict[str, object]
) -> None:
    block = cfg.override(**flags)
    later = cfg.override(floatX="float16", traceback__limit=5)
    block.__enter__()
    later.__enter__()
    block.__exit__(None, None, None)  # out of order: later stays
    assert (cfg.floatX, cfg.traceback.limit) == ("float16", 5)
    errors = _left_from_another_thread(block)
    assert [type(e) for e in errors] == [RuntimeError]
    assert (cfg.floatX, cfg.traceback.limit) == ("float16", 5)
    later.__exit__(None, None, None)
    assert cfg.overrides() == {}


@pytest.mark.parametrize("flags", [{"floatX": "float32"}, {"floatX": "float32", "traceback__limit": 3}])
def test_one_object_entered_in_two_threads_left_by_one_can_still_be_left_elsewhere_by_the_other(
    cfg: modecfg.Config, flags: dict[str, object]
) -> None:
    """Thread 1 enters and leaves; thread 2 entered after it: its block, the newest entry, is
    still open, and a third thread may end it (as PyTensor's change_flags may be left anywhere)."""
    block = cfg.override(**flags)
    first_in, second_in, first_out, ended = (threading.Event() for _ in range(4))
    seen: dict[str, object] = {}

    def first() -> None:
        block.__enter__()
        first_in.set()
        second_in.wait(10)
        block.__exit__(None, None, None)  # its own entry, in order; not the newest
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        block.__enter__()
        second_in.set()
        ended.wait(10)
        seen["second"] = (cfg.floatX, cfg.overrides())

    def third() -> None:
        first_out.wait(10)
        try:
            block.__exit__(None, None, None)
        except Exception as exc:  # said in the result: the test names it
            seen["error"] = repr(exc)
        ended.set()

    _together(first, second, third)
    assert seen == {"second": ("float64", {})}


def test_an_override_never_entered_cannot_be_left() -> None:
    cfg = modecfg.load(env={})
    with pytest.raises(RuntimeError) as info:
        cfg.override(floatX="float32", traceback__limit=3).__exit__(None, None, None)
    assert str(info.value) == "override exited without being entered in this context, nor open in another"


def test_leaving_a_block_before_the_one_inside_it_keeps_the_outer_ones(cfg: modecfg.Config) -> None:
    outer = cfg.override(traceback__limit=2)
    middle = cfg.override(floatX="float32")
    inner = cfg.override(allow_gc=False)
    outer.__enter__()
    middle.__enter__()
    inner.__enter__()
    middle.__exit__(None, None, None)  # out of order: inner stays, rebuilt on outer
    assert (cfg.traceback.limit, cfg.floatX, cfg.allow_gc) == (2, "float64", False)
    assert cfg.origin("traceback.limit").layer is Layer.OVERRIDE
    inner.__exit__(None, None, None)
    assert (cfg.traceback.limit, cfg.floatX, cfg.allow_gc) == (2, "float64", True)
    outer.__exit__(None, None, None)
    assert cfg.traceback.limit == 8 and cfg.is_default("traceback.limit")


def test_an_assignment_inside_a_block_leaves_no_descriptor_behind(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float32"):
        cfg.floatX = "float16"
    assert cfg.floatX == "float64"
    assert not _descriptor_on_class(cfg)


def test_a_decorated_generator_runs_each_step_under_the_override(cfg: modecfg.Config) -> None:
    @cfg.override(floatX="float32")
    def steps() -> Iterator[str]:
        yield cfg.floatX
        yield cfg.floatX

    gen = steps()
    assert cfg.floatX == "float64"
    assert next(gen) == "float32" and cfg.floatX == "float64"
    assert next(gen) == "float32"


def test_an_override_shows_its_values() -> None:
    cfg = modecfg.load(env={})
    assert repr(cfg.override(floatX="float32", traceback__limit=3)) == (
        "<override floatX=float32,traceback.limit=3>"
    )


def test_blocks_entered_after_one_left_elsewhere_survive_leaving_the_block_around_them(
    cfg: modecfg.Config,
) -> None:
    block = cfg.override(floatX="float32")
    entered, left, seen = threading.Event(), threading.Event(), {}

    def enters() -> None:
        outer = cfg.override(traceback__limit=2)
        outer.__enter__()
        block.__enter__()
        entered.set()
        left.wait(10)
        inner = cfg.override(allow_gc=False)
        inner.__enter__()  # on top of the block ended elsewhere
        outer.__exit__(None, None, None)  # out of order: inner stays
        seen["inner"] = (cfg.allow_gc, cfg.traceback.limit, cfg.floatX)
        inner.__exit__(None, None, None)
        seen["none"] = (cfg.allow_gc, cfg.traceback.limit, cfg.floatX)

    def leaves() -> None:
        entered.wait(10)
        block.__exit__(None, None, None)
        left.set()

    _together(enters, leaves)
    assert seen == {"inner": (False, 8, "float64"), "none": (True, 8, "float64")}


# -- overrides of several flags at once (their own class) ---------------------------------------


def _values(cfg: modecfg.Config) -> tuple[object, ...]:
    return (cfg.floatX, cfg.mode, cfg.traceback.limit, cfg.on_opt_error)


DEFAULTS = ("float64", "Mode", 8, "warn")


def test_overrides_of_several_flags_exited_out_of_order_take_away_only_their_own(cfg: modecfg.Config) -> None:
    assert _values(cfg) == DEFAULTS
    a = cfg.override(floatX="float32", mode="FAST_COMPILE")
    b = cfg.override(traceback__limit=3, on_opt_error="raise")
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)  # out of order, as an ExitStack or a fixture can do
    assert _values(cfg) == ("float64", "Mode", 3, "raise")
    assert cfg.overrides() == {"traceback.limit": 3, "on_opt_error": "raise"}
    b.__exit__(None, None, None)
    assert _values(cfg) == DEFAULTS and cfg.overrides() == {}


@pytest.mark.parametrize("flags", [{"floatX": "float32"}, {"floatX": "float32", "traceback__limit": 2}])
def test_an_override_left_then_left_again_from_another_thread_is_an_error(
    cfg: modecfg.Config, flags: dict[str, object]
) -> None:
    block = cfg.override(**flags)
    with block:
        pass
    errors = _left_from_another_thread(block)
    assert [type(e) for e in errors] == [RuntimeError]
    assert "without being entered in this context, nor open in another" in str(errors[0])
    assert cfg.floatX == "float64" and cfg.overrides() == {}


def test_a_copied_context_keeps_an_override_of_several_flags_after_the_block(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float16", traceback__limit=2):
        ctx = contextvars.copy_context()
    # read here first: a descriptor taken away too early would show in the copy below
    assert (cfg.floatX, cfg.traceback.limit) == ("float64", 8)
    seen: list[tuple[object, ...]] = []

    def read() -> None:
        seen.append((cfg.floatX, cfg.traceback.limit, cfg.origin("floatX").layer))

    thread = threading.Thread(target=ctx.run, args=(read,))
    thread.start()
    thread.join(10)
    assert seen == [("float16", 2, Layer.OVERRIDE)]
    del ctx
    gc.collect()
    assert (cfg.floatX, cfg.traceback.limit) == ("float64", 8)


def _store(cfg: modecfg.Config) -> Any:
    return cfg._cfg_store  # type: ignore[attr-defined]


def _held(store: Any, name: str) -> int:
    """How many live scopes hold ``name`` (each by a weak reference to its Held), checked against
    the Held's own answer."""
    count = weakref.getweakrefcount(store.held[name])
    assert bool(store.held[name]) is (count > 0)
    return count


def test_a_scope_freed_late_stays_counted_until_it_is_freed(cfg: modecfg.Config) -> None:
    """What an interpreter that frees late (a reference cycle here) does: the scope is counted, its
    flag read through the descriptor, until it is freed; then the count goes with no read's help."""
    store = _store(cfg)
    gc.disable()
    try:
        with cfg.override(floatX="float32"):
            ctx = contextvars.copy_context()
        cycle: list[object] = [ctx]
        cycle.append(cycle)
        del ctx
        assert cfg.floatX == "float64" and _descriptor_on_class(cfg)
        assert _held(store, "floatX") == 1
        assert cycle[0].run(lambda: cfg.floatX) == "float32"  # type: ignore[attr-defined]
        del cycle
        assert _held(store, "floatX") == 1  # not freed yet: still counted
        gc.collect()
        assert _held(store, "floatX") == 0
    finally:
        gc.enable()
    assert _descriptor_on_class(cfg)
    assert cfg.floatX == "float64"  # the first read after takes it away
    assert not _descriptor_on_class(cfg)


@pytest.mark.parametrize("flags", [{"floatX": "float32"}, {"floatX": "float32", "traceback__limit": 2}])
def test_each_copied_context_holds_its_own_count(cfg: modecfg.Config, flags: dict[str, object]) -> None:
    store = _store(cfg)
    block = cfg.override(**flags)
    copies = []
    for _ in range(3):
        with block:
            copies.append(contextvars.copy_context())
    names = ["floatX", "traceback.limit"][: len(flags)]
    assert [_held(store, name) for name in names] == [3] * len(names)
    assert repr(store.held["floatX"]) == "<Held floatX: 3 items>"
    copies.pop()
    assert [_held(store, name) for name in names] == [2] * len(names)
    copies.clear()
    assert [_held(store, name) for name in names] == [0] * len(names)


def test_a_scope_left_with_no_copy_is_not_kept_lingering(cfg: modecfg.Config) -> None:
    store = _store(cfg)
    with cfg.override(floatX="float32"), cfg.override(floatX="float16", traceback__limit=3):
        pass
    assert _held(store, "floatX") == _held(store, "traceback.limit") == 0


def test_the_outer_scope_of_a_copied_inner_one_lingers_with_it(cfg: modecfg.Config) -> None:
    """A copy made inside a nested block holds the inner scope, and the outer through it."""
    store = _store(cfg)
    with cfg.override(floatX="float32"):
        with cfg.override(traceback__limit=2):
            ctx = contextvars.copy_context()
        assert (_held(store, "floatX"), _held(store, "traceback.limit")) == (1, 1)
    assert _held(store, "floatX") == _held(store, "traceback.limit") == 1  # each by its own scope
    assert ctx.run(lambda: (cfg.floatX, cfg.traceback.limit)) == ("float32", 2)
    del ctx
    gc.collect()
    assert _held(store, "floatX") == _held(store, "traceback.limit") == 0
    assert (cfg.floatX, cfg.traceback.limit) == ("float64", 8)


def test_threads_entering_and_copying_at_once_leave_every_count_at_zero(cfg: modecfg.Config) -> None:
    store = _store(cfg)
    copies: list[contextvars.Context] = []
    barrier = threading.Barrier(8)
    wrong: list[object] = []

    def worker(i: int) -> None:
        barrier.wait(10)
        for k in range(200):
            value = ("float16", "float32")[(i + k) % 2]
            with cfg.override(floatX=value):
                if k % 50 == 0:
                    copies.append(contextvars.copy_context())
                if cfg.floatX != value:
                    wrong.append((i, k, cfg.floatX))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert wrong == []
    assert _held(store, "floatX") == len(copies) == 32
    assert sorted(c.run(lambda: cfg.floatX) for c in copies) == ["float16"] * 16 + ["float32"] * 16
    copies.clear()
    gc.collect()
    assert _held(store, "floatX") == 0
    assert cfg.floatX == "float64" and not _descriptor_on_class(cfg)


def test_no_module_reads_a_reference_count() -> None:
    """Scopes are tracked by weak references: nothing in modecfg asks for a reference count,
    whose meaning changes with the interpreter (free-threaded builds, 3.14's borrowed references)."""
    import ast
    from pathlib import Path

    root = Path(modecfg.__file__).parent
    found = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute | ast.Name)
        and (node.attr if isinstance(node, ast.Attribute) else node.id) == "getrefcount"
    ]
    assert found == []
