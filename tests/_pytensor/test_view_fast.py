"""``pytensor.config.X``'s fast read (issue 62: reads no slower than PyTensor's own): while no
override holds a flag anywhere, a read is one attribute; every change, and every override that
begins to hold the flag in any thread or task, closes it. Held against the slow path's answer,
in interleavings of contexts, and at the two moments a read could keep a stale value."""

from __future__ import annotations

import contextvars
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modecfg

pytensor = pytest.importorskip("pytensor")

from modecfg._pytensor import view  # noqa: E402
from tests.fresh import run_json  # noqa: E402

VALUES = ("float32", "float64", "float16")


def _param(name: str = "floatX") -> Any:
    return type(pytensor.config).__dict__[name]


@pytest.fixture(autouse=True)
def _floatx_put_back() -> Any:
    """No override of an earlier test holds floatX (modecfg's own read sees that the last ended)."""
    import gc

    gc.collect()  # contexts an earlier test copied, and the overrides they hold
    modecfg.config.floatX  # noqa: B018
    if "floatX" in modecfg.config._cfg_store.shadowed:  # a context of an earlier test still alive
        pytest.skip("an override of an earlier test still holds floatX in this process")
    before = modecfg.config.origin("floatX")
    yield
    if before.layer is modecfg.Layer.DEFAULT:
        modecfg.config.reset("floatX")


def test_a_read_with_no_override_anywhere_is_the_fast_one_and_follows_each_change() -> None:
    param = _param()
    modecfg.config.floatX = "float32"
    assert pytensor.config.floatX == "float32" and param.fast == "float32"  # opened by the read
    modecfg.config.floatX = "float16"
    assert param.fast is view._SLOW  # a change closes it
    assert pytensor.config.floatX == "float16" and param.fast == "float16"
    modecfg.config.reset("floatX")
    assert pytensor.config.floatX == modecfg.config.floatX


def test_an_override_anywhere_closes_the_fast_read_until_it_ends() -> None:
    param = _param()
    modecfg.config.floatX = "float64"
    assert pytensor.config.floatX == "float64" and param.fast == "float64"
    other = contextvars.copy_context()
    block = modecfg.config.override(floatX="float32")
    other.run(block.__enter__)  # another task's override
    assert param.fast is view._SLOW
    assert pytensor.config.floatX == "float64"  # this context: the value below it
    assert other.run(lambda: pytensor.config.floatX) == "float32"  # that one: its own
    assert param.fast is view._SLOW  # never opened while it is held
    other.run(block.__exit__, None, None, None)
    del other, block  # nothing holds the override any more
    assert pytensor.config.floatX == "float64" and param.fast is view._SLOW  # (no churn of opening)
    assert modecfg.config.floatX == "float64"  # modecfg's own read sees the last override gone
    assert pytensor.config.floatX == "float64"
    assert param.fast == "float64"  # open again
    with pytensor.config.change_flags(floatX="float16"):  # PyTensor's door: the same
        assert param.fast is view._SLOW and pytensor.config.floatX == "float16"


def test_a_value_that_changes_while_a_read_works_it_out_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The read worked out the old value; the change came before it could keep it: the next read
    must answer the new one (the old value kept would be a silently wrong answer for good)."""
    param = _param()
    modecfg.config.floatX = "float64"
    real_show = param.show
    changed: list[bool] = []

    def show(value: Any) -> Any:
        shown = real_show(value)
        if not changed:
            changed.append(True)
            modecfg.config.floatX = "float16"  # another thread's assignment, at the worst moment
        return shown

    monkeypatch.setattr(param, "show", show)
    modecfg.config.floatX = "float32"
    assert pytensor.config.floatX == "float32"  # the value this read worked out
    monkeypatch.undo()
    assert param.fast is view._SLOW and param.below is view._UNREAD  # not kept
    assert pytensor.config.floatX == "float16"


def test_an_override_that_begins_while_a_read_works_it_out_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    param = _param()
    modecfg.config.floatX = "float64"
    other = contextvars.copy_context()
    block = modecfg.config.override(floatX="float32")
    real_show = param.show
    entered: list[bool] = []

    def show(value: Any) -> Any:
        shown = real_show(value)
        if not entered:
            entered.append(True)
            other.run(block.__enter__)  # another task enters an override at the worst moment
        return shown

    modecfg.config.floatX = "float16"  # the value below the overrides must be worked out again
    monkeypatch.setattr(param, "show", show)
    assert pytensor.config.floatX == "float16"
    monkeypatch.undo()
    assert param.fast is view._SLOW  # not opened: an override holds the flag
    assert other.run(lambda: pytensor.config.floatX) == "float32"
    other.run(block.__exit__, None, None, None)


def _take(step: tuple[Any, ...], contexts: list[Any], stacks: list[list[tuple[Any, str]]], base: str) -> str:
    """One step of the interleaving tests in its context (an "enter" without its last field is
    PyTensor's change_flags); the value below the overrides after it."""
    kind = step[0]
    if kind == "enter":
        _, where, value, *pytensors = step
        block = (
            pytensor.config.change_flags(floatX=value)
            if pytensors in ([], [True])
            else modecfg.config.override(floatX=value)
        )
        contexts[where].run(block.__enter__)
        stacks[where].append((block, value))
    elif kind == "exit" and stacks[step[1]]:
        block, _ = stacks[step[1]].pop()
        contexts[step[1]].run(block.__exit__, None, None, None)
    elif kind == "assign":
        base = step[1]
        modecfg.config.floatX = base
    elif kind == "reset":
        modecfg.config.reset("floatX")
        base = modecfg.config.floatX  # the default (nothing overrides it in this context)
    return base


def _leave_all(contexts: list[Any], stacks: list[list[tuple[Any, str]]]) -> None:
    for where, stack in enumerate(stacks):
        while stack:
            block, _ = stack.pop()
            contexts[where].run(block.__exit__, None, None, None)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("read"), st.integers(0, 2)),
            st.tuples(st.just("enter"), st.integers(0, 2), st.sampled_from(VALUES), st.booleans()),
            st.tuples(st.just("exit"), st.integers(0, 2)),
            st.tuples(st.just("assign"), st.sampled_from(VALUES)),
            st.tuples(st.just("reset")),
        ),
        max_size=30,
    )
)
def test_every_read_in_every_context_is_what_modecfg_answers_there(steps: list[tuple[Any, ...]]) -> None:
    """Three contexts (tasks), overrides entered and left in each (modecfg's and PyTensor's
    change_flags), assignments and resets: pytensor.config.floatX and modecfg.config.floatX agree
    in every context after every step, and with a model of what each context should see."""
    contexts = [contextvars.copy_context() for _ in range(3)]
    stacks: list[list[tuple[Any, str]]] = [[], [], []]
    base = "float64"
    modecfg.config.floatX = base
    try:
        for step in steps:
            base = _take(step, contexts, stacks, base)
            for where, ctx in enumerate(contexts):
                expected = stacks[where][-1][1] if stacks[where] else base
                got = ctx.run(lambda: (pytensor.config.floatX, modecfg.config.floatX))
                assert got == (expected, expected), (step, where)
            assert pytensor.config.floatX == base  # this context has none of theirs
    finally:
        _leave_all(contexts, stacks)


def test_reads_after_the_last_block_ends_open_the_fast_read_again() -> None:
    """Issue 62: a read through pytensor.config never took modecfg's descriptor away, so after a
    process's first block of a flag every read stayed slow (1.5x PyTensor's own). After
    ``_REOPEN_AFTER`` slow reads with no override in their context, a read asks whether any
    holds the flag anywhere: none does, the fast read opens; one does (another task), it stays
    closed and each context reads its own value."""
    param = _param()
    store = modecfg.config._cfg_store
    modecfg.config.floatX = "float64"
    with pytensor.config.change_flags(floatX="float32"):
        assert pytensor.config.floatX == "float32"
    param.idle = 0  # (the count runs on from earlier reads: from zero, the reads below say when)
    for _ in range(view._REOPEN_AFTER - 1):
        assert pytensor.config.floatX == "float64"
    assert param.fast is view._SLOW and "floatX" in store.shadowed  # (no churn: not yet)
    assert pytensor.config.floatX == "float64"
    assert param.fast == "float64" and "floatX" not in store.shadowed  # open, the descriptor gone
    other = contextvars.copy_context()
    block = pytensor.config.change_flags(floatX="float16")
    other.run(block.__enter__)  # another task's block, left open
    param.idle = 0
    for _ in range(view._REOPEN_AFTER):
        assert pytensor.config.floatX == "float64"
    assert param.idle == 0  # the look made at the last of them: the count starts again from it
    for _ in range(view._REOPEN_AFTER + 1):
        assert pytensor.config.floatX == "float64"
    assert param.fast is view._SLOW and "floatX" in store.shadowed  # held elsewhere: stays closed
    assert other.run(lambda: pytensor.config.floatX) == "float16"
    other.run(block.__exit__, None, None, None)
    del other, block
    assert [pytensor.config.floatX for _ in range(view._REOPEN_AFTER)] == ["float64"] * view._REOPEN_AFTER
    assert param.fast == "float64"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("read"), st.integers(0, 2)),
            st.tuples(st.just("enter"), st.integers(0, 2), st.sampled_from(VALUES)),
            st.tuples(st.just("exit"), st.integers(0, 2)),
            st.tuples(st.just("assign"), st.sampled_from(VALUES)),
        ),
        max_size=30,
    ),
    st.sampled_from([1, 2, 3]),
)
def test_reads_that_reopen_the_fast_read_answer_what_each_context_holds(
    steps: list[tuple[Any, ...]], reopen_after: int
) -> None:
    """The interleavings above, read through pytensor.config alone (modecfg's own read takes the
    descriptor away itself) and with the fast read asked to open after 1 to 3 slow reads: every
    read in every context is the model's value."""
    from unittest import mock

    contexts = [contextvars.copy_context() for _ in range(3)]
    stacks: list[list[tuple[Any, str]]] = [[], [], []]
    base = "float64"
    modecfg.config.floatX = base
    try:
        with mock.patch.object(view, "_REOPEN_AFTER", reopen_after):
            for step in steps:
                base = _take(step, contexts, stacks, base)
                for _ in range(2):  # twice: a read that opens, then one through what it opened
                    for where, ctx in enumerate(contexts):
                        expected = stacks[where][-1][1] if stacks[where] else base
                        assert ctx.run(lambda: pytensor.config.floatX) == expected, (step, where)
                    assert pytensor.config.floatX == base
    finally:
        _leave_all(contexts, stacks)


def test_the_view_hears_of_changes_to_the_flags_it_answers_and_no_others() -> None:
    """One listener for the flags the view answers, of changes below the overrides only: an
    override's beginning and end are the shadow listener's (a change heard there too would drop
    every kept value at each block), and a flag PyTensor fixes per process (handed over at its
    import) is not the view's: a change to it heard by the view would look up a parameter it
    does not have, and the assignment would fail."""
    from modecfg._pytensor import state
    from modecfg.configuration.flags import FLAGS

    current = state.current_view
    store = modecfg.config._cfg_store
    heard = {name for name, told in store.listeners.items() if current.changed in told}
    assert heard == set(current.by_flag)
    assert not any(current.changed in told for told in store.override_listeners.values())
    others = [spec.name for spec in FLAGS.values() if spec.name not in current.by_flag]
    assert "compile.timeout" in others  # handed over, and PyTensor reads it only when it first waits
    # (in a fresh process: here an earlier test's compile may have had PyTensor read it already)
    done = run_json("""
        import json, modecfg, pytensor
        modecfg.config.compile.timeout = 127
        print(json.dumps({"timeout": modecfg.config.compile.timeout}))
    """)  # fmt: skip
    assert done["timeout"] == 127


def test_a_value_read_before_a_change_and_an_override_ending_is_not_kept() -> None:
    """A read keeps what it worked out only if the flag's version is still the one it began at:
    a change and an override ending between its start and its end each move the version on, so
    together they never bring it back to where the read began (a change stepping it down, or an
    ending setting it, would: the stale value kept, and read from then on)."""
    param = _param()
    param.version = 0  # (as a flag nothing changed yet: only equality with it matters)
    param.changed()
    began = param.version
    param.changed()  # the value below the overrides changed meanwhile
    param.shadowed(False)  # and the last override holding the flag ended
    param._keep("stale", began)
    assert param.below is view._UNREAD and param.fast is view._SLOW
    assert pytensor.config.floatX == modecfg.config.floatX
