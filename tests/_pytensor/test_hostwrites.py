"""Which shared variables a function on a host linker updates (modecfg._pytensor.hostwrites):
every compiled function's updates are recorded, a JAX function's excepted (its updates stay on
the device), and the JAX path is told of each function's as it is compiled. A host function
taken for a JAX one would leave a JAX function reading a stale device copy: the worst case."""

from __future__ import annotations

import types
import warnings
from typing import Any

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt  # noqa: E402
from pytensor.compile.mode import Mode  # noqa: E402

import modecfg  # noqa: E402, F401  (the compile hook records what each function updates)
from modecfg._pytensor import hostwrites  # noqa: E402


def _updating(linker: str, *, updates: bool = True) -> tuple[Any, Any, Any]:
    """A shared variable, a function on ``linker`` that updates it (or only reads it), compiled."""
    state = pytensor.shared(np.zeros(3), name=f"state_{linker}")
    x = pt.vector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (numba's and JAX's first-use notes)
        fn = pytensor.function(
            [x], state + x, updates=[(state, state + x)] if updates else [], mode=Mode(linker=linker)
        )
    return state, x, fn


@pytest.mark.parametrize("linker", ["cvm", "py", "numba"])
def test_a_host_functions_updates_are_recorded_as_it_is_compiled(linker: str) -> None:
    if linker == "numba":
        pytest.importorskip("numba")
    state, _, fn = _updating(linker)
    assert state.container in hostwrites.host_updated
    if linker == "numba":  # its VM is a function too, as a JAX function's is: not taken for one
        assert type(fn.vm) is types.FunctionType and not hasattr(fn.vm, "device_thunk")


def test_a_function_that_only_reads_a_shared_variable_records_nothing() -> None:
    state, _, _ = _updating("cvm", updates=False)
    assert state.container not in hostwrites.host_updated


def test_a_jax_functions_updates_are_not_recorded_and_listeners_hear_of_the_others() -> None:
    pytest.importorskip("jax")
    heard: list[list[Any]] = []
    hostwrites.listeners.append(heard.append)
    try:
        state, _, fn = _updating("jax")
        assert hasattr(fn.vm, "device_thunk")  # (the JAX path's VM: modecfg.device.jaxlink.vm_for)
        assert state.container not in hostwrites.host_updated
        assert all(state.container not in told for told in heard)
        other, _, _ = _updating("cvm")
        assert [other.container] in heard
    finally:
        hostwrites.listeners.remove(heard.append)


def test_what_is_not_a_compiled_function_records_nothing() -> None:
    before = set(map(id, hostwrites.host_updated))
    for thing in (object(), types.SimpleNamespace(vm=None), types.SimpleNamespace(maker=None)):
        hostwrites.host_updates(thing)
    assert set(map(id, hostwrites.host_updated)) == before


# -- borrowed outputs: the variable's own array handed out -------------------------------------


def _handing_out(output: Any, *, borrow: bool = True, linker: str = "cvm") -> tuple[Any, Any, Any]:
    """Two shared variables and a function whose one output is ``output(w, other)``, borrowed."""
    w = pytensor.shared(np.ones(4), name="w")
    other = pytensor.shared(np.ones(4), name="other")
    fn = pytensor.function([], pytensor.Out(output(w, other), borrow=borrow), mode=Mode(linker=linker))
    return w, other, fn


@pytest.mark.parametrize("linker", ["cvm", "py"])
def test_a_borrowed_output_that_is_a_shared_variable_records_it_alone(linker: str) -> None:
    w, other, fn = _handing_out(lambda w, other: w, linker=linker)
    assert np.shares_memory(fn(), w.container.storage[0])  # PyTensor hands the array out itself
    assert w.container in hostwrites.host_updated
    assert other.container not in hostwrites.host_updated


def test_a_borrowed_view_records_the_variable_it_views() -> None:
    w, other, fn = _handing_out(lambda w, other: w[1:])
    assert np.shares_memory(fn(), w.container.storage[0])
    assert w.container in hostwrites.host_updated
    assert other.container not in hostwrites.host_updated


def test_a_borrowed_output_of_its_own_records_nothing_nor_does_a_copied_one() -> None:
    """An output computed anew (``w * other``) aliases neither variable; an output of the variable
    not borrowed is copied by PyTensor: neither is the variable's own array."""
    w, other, _ = _handing_out(lambda w, other: w * other)
    assert w.container not in hostwrites.host_updated and other.container not in hostwrites.host_updated
    v, _, fn = _handing_out(lambda w, other: w, borrow=False)
    assert not np.shares_memory(fn(), v.container.storage[0])
    assert v.container not in hostwrites.host_updated


def test_a_view_of_an_in_place_result_is_followed_to_its_root() -> None:
    """The alias root is followed back through ``view_map`` and ``destroy_map`` alike (an op that
    writes its input and returns it hands out that input's storage), to a variable without owner."""
    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op

    class _Returns(Op):  # (a stand-in: an op returning its input, declared as a view or as written)
        def __init__(self, how: str) -> None:
            setattr(self, how, {0: [1]})

        def make_node(self, *inputs: Any) -> Apply:
            return Apply(self, list(inputs), [inputs[1].type()])

        def perform(self, node: Any, inputs: Any, outputs: Any) -> None:  # pragma: no cover
            outputs[0][0] = inputs[1]

    a, b = pt.vector("a"), pt.vector("b")
    viewed = _Returns("view_map")(a, b)
    written = _Returns("destroy_map")(a, viewed)
    assert hostwrites._alias_root(written) is b
    assert hostwrites._alias_root(viewed) is b
    assert hostwrites._alias_root(a + b) is not b and hostwrites._alias_root(a) is a
    plain = _Returns("view_map")
    plain.view_map = {1: [0]}  # a view, of another output than this one
    assert hostwrites._alias_root(plain(a, b)) is not b


def test_where_the_graph_cannot_be_read_every_shared_variable_is_recorded() -> None:
    """A function with a borrowed output whose graph is not PyTensor's as modecfg reads it: every
    shared variable it reads is taken as handed out (sent again at each call: slower, never stale)."""
    w = pytensor.shared(np.ones(2), name="w")
    other = pytensor.shared(np.ones(2), name="other")
    fn = pytensor.function([], pytensor.Out(w * other, borrow=True), mode=Mode(linker="cvm"))
    assert w.container not in hostwrites.host_updated
    maker = types.SimpleNamespace(
        expanded_inputs=fn.maker.expanded_inputs,
        outputs=fn.maker.outputs,
        fgraph=types.SimpleNamespace(inputs=fn.maker.fgraph.inputs),  # no outputs
    )
    hostwrites.host_updates(types.SimpleNamespace(vm=None, maker=maker))
    assert w.container in hostwrites.host_updated and other.container in hostwrites.host_updated


def _heard(make: Any) -> list[list[Any]]:
    """What the record told its listeners while ``make()`` ran."""
    heard: list[list[Any]] = []
    hostwrites.listeners.append(heard.append)
    try:
        make()
    finally:
        hostwrites.listeners.remove(heard.append)
    return heard


def test_only_shared_inputs_are_recorded_for_a_borrowed_output() -> None:
    """An explicit input the output is (``Out(x, borrow=True)``) is the caller's own array: no
    shared variable's, nothing recorded; nor is an output without ``borrow``."""
    x = pt.vector("x")
    w = pytensor.shared(np.ones(2), name="w")
    heard = _heard(
        lambda: pytensor.function([x], [pytensor.Out(x, borrow=True), w * 1], mode=Mode(linker="cvm"))
    )
    assert heard == [] and w.container not in hostwrites.host_updated


def test_an_explicit_input_with_an_update_records_nothing() -> None:
    """``In(x, update=...)``: an explicit input's variable is no shared variable (it has no
    container of its own; its value is the caller's): nothing recorded, nothing raised."""
    x = pt.vector("x")
    w = pytensor.shared(np.ones(2), name="w")
    fns: list[Any] = []
    updating = pytensor.In(x, update=x + 1)
    heard = _heard(lambda: fns.append(pytensor.function([updating], x + w, mode=Mode(linker="cvm"))))
    assert heard == [] and w.container not in hostwrites.host_updated
    assert fns[0](np.zeros(2)).tolist() == [1.0, 1.0]


def test_a_function_not_as_pytensor_makes_them_records_every_shared_variable_it_reads() -> None:
    """Where what a function writes or hands out cannot be read (its inputs without ``update``,
    outputs without ``borrow``): every shared variable's container among its inputs is recorded,
    and inputs without a variable or a container are passed over."""
    w = pytensor.shared(np.ones(2), name="w")
    expanded = [
        types.SimpleNamespace(variable=w),  # no update, no shared: unreadable
        types.SimpleNamespace(variable=pt.vector("x")),  # no container: an explicit input
        types.SimpleNamespace(),  # no variable at all
    ]
    fn = types.SimpleNamespace(vm=None, maker=types.SimpleNamespace(expanded_inputs=expanded))
    assert _heard(lambda: hostwrites.host_updates(fn)) == [[w.container]]
    assert w.container in hostwrites.host_updated


def test_inputs_that_do_not_line_up_with_the_graphs_record_every_shared_variable() -> None:
    """The function's inputs and its graph's are one list in PyTensor; where they are not as long,
    which input a borrowed output is cannot be told: every shared variable is recorded."""
    w = pytensor.shared(np.ones(2), name="w")
    other = pytensor.shared(np.ones(2), name="other")
    fn = pytensor.function([], [w * 1, pytensor.Out(other, borrow=True)], mode=Mode(linker="cvm"))
    maker = fn.maker
    assert [given.variable for given in maker.expanded_inputs] == [w, other]
    cut = types.SimpleNamespace(
        expanded_inputs=maker.expanded_inputs,
        outputs=maker.outputs,
        fgraph=types.SimpleNamespace(inputs=maker.fgraph.inputs[:1], outputs=maker.fgraph.outputs),
    )
    heard = _heard(lambda: hostwrites.host_updates(types.SimpleNamespace(vm=None, maker=cut)))
    assert heard == [[w.container, other.container]]


def test_a_function_made_by_copy_records_the_variable_it_updates() -> None:
    """``Function.copy(swap=...)`` makes a function without ``pytensor.function``: recorded all
    the same ("host updates" is ``FunctionMaker.create``, which makes every function)."""
    state, _, fn = _updating("cvm")
    other = pytensor.shared(np.zeros(3), name="other")
    assert other.container not in hostwrites.host_updated
    fn.copy(swap={state: other})
    assert other.container in hostwrites.host_updated


def test_an_unpickled_function_records_the_variable_it_updates() -> None:
    import pickle

    _, _, fn = _updating("cvm")
    loaded = pickle.loads(pickle.dumps(fn))
    inputs = loaded.maker.expanded_inputs
    (updated,) = [given.variable.container for given in inputs if given.update is not None]
    assert updated in hostwrites.host_updated


def test_functions_made_while_the_record_was_off_are_found_once_it_is_on_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``catch_up`` (the JAX path calls it at each link): False while the "host updates"
    replacement is off; once it is on again, one walk of the collector's objects records the
    functions made meanwhile, and a second call walks no more."""
    from modecfg._pytensor import install, uninstall

    uninstall()
    try:
        assert not hostwrites.recording() and hostwrites.catch_up() is False
        state, _, _ = _updating("cvm")
        assert state.container not in hostwrites.host_updated
    finally:
        install()
    import gc

    walks: list[int] = []
    real = gc.get_objects

    def counted() -> list[Any]:
        walks.append(1)
        return real()

    monkeypatch.setattr(gc, "get_objects", counted)
    assert hostwrites.recording() and hostwrites.catch_up() is True
    assert state.container in hostwrites.host_updated and walks == [1]
    assert hostwrites.catch_up() is True and walks == [1]  # the same record: no second walk
    read_only, _, _ = _updating("cvm", updates=False)
    assert read_only.container not in hostwrites.host_updated


def test_a_thread_linking_during_the_walk_waits_for_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two JAX links at once after a gap: the second ``catch_up`` returns only once the first's walk
    has recorded what it found (else its copy would be reused before the record said otherwise)."""
    import threading
    import time

    from modecfg._pytensor import install, uninstall

    uninstall()
    try:
        state, _, _ = _updating("cvm")
    finally:
        install()
    import gc

    real = gc.get_objects
    started = threading.Event()

    def slow_walk() -> list[Any]:
        started.set()
        time.sleep(0.3)
        return real()

    monkeypatch.setattr(gc, "get_objects", slow_walk)
    first = threading.Thread(target=hostwrites.catch_up)
    first.start()
    assert started.wait(10)
    assert hostwrites.catch_up() is True
    assert state.container in hostwrites.host_updated  # the walk ended before the second returned
    first.join()


def test_where_modecfg_came_first_the_first_jax_link_walks_nothing() -> None:
    """PyTensor imported after modecfg (through its hook): the record went on at PyTensor's import,
    which makes no function, so no JAX link looks for older ones (the walk costs ~70 ms in a PyMC
    process); PyTensor imported first, the first link looks once."""
    pytest.importorskip("jax")
    from tests.fresh import run_json

    code = """
    import gc, json, warnings
    import {first}, {second}
    import numpy as np, pytensor
    from pytensor.compile.mode import Mode
    walks = []
    real = gc.get_objects
    gc.get_objects = lambda: walks.append(1) or real()
    warnings.simplefilter("ignore")
    w = pytensor.shared(np.zeros(3))
    for k in range(3):
        pytensor.function([], w.sum() + k, mode=Mode(linker="jax"))()
    print(json.dumps({{"walks": len(walks)}}))
    """
    assert run_json(code.format(first="modecfg", second="pytensor"))["walks"] == 0
    assert run_json(code.format(first="pytensor", second="modecfg"))["walks"] == 1


def test_the_walk_asks_no_objects_class_nor_any_types_hash() -> None:
    """Anyone's objects lie among those the walk looks at: one whose ``__class__`` raises, one of
    a class whose metaclass has no hash (a set of types would raise on it) leave the walk whole."""
    from modecfg._pytensor import install, uninstall

    class Unhashable(type):
        def __eq__(self, other: object) -> bool:
            return self is other

    class Odd(metaclass=Unhashable):
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            raise RuntimeError("asked")

    kept = [Odd() for _ in range(3)]
    uninstall()
    try:
        state, _, _ = _updating("cvm")
    finally:
        install()
    assert hostwrites.catch_up() is True and state.container in hostwrites.host_updated
    assert len(kept) == 3


# -- arrays lent ----------------------------------------------------------------------------


def test_an_array_lent_is_lent_and_no_other_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record answers for the array lent itself: not for an equal one, nor for one that holds
    its id after it is gone. Each lending is told to the listeners with its container."""
    told: list[tuple[Any, Any]] = []
    monkeypatch.setattr(
        hostwrites, "lent_listeners", [lambda container, value: told.append((container, value))]
    )
    monkeypatch.setattr(hostwrites, "lent", {})
    held, equal, container = np.zeros(3), np.zeros(3), object()
    assert not hostwrites.is_lent(held)
    hostwrites.lend(container, held)
    assert hostwrites.is_lent(held)
    assert not hostwrites.is_lent(equal)
    assert told == [(container, held)]
    key = id(held)
    told.clear()
    del held
    assert hostwrites.lent[key]() is None  # the record keeps no array alive
    stand_in = types.SimpleNamespace()
    monkeypatch.setattr(hostwrites, "lent", {id(stand_in): hostwrites.lent[key]})  # an id met again
    assert not hostwrites.is_lent(stand_in)


def _lend_all(arrays: list[Any]) -> None:
    for array in arrays:
        hostwrites.lend(None, array)


def test_the_record_drops_the_arrays_that_are_gone_as_it_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 1,024 entries the dead arrays' entries are dropped (the live ones kept, answering as
    before), and the next drop comes at twice the live count, 1,024 at least."""
    monkeypatch.setattr(hostwrites, "lent", {})
    monkeypatch.setattr(hostwrites, "_prune_at", [1024])
    monkeypatch.setattr(hostwrites, "lent_listeners", [])
    kept = [np.zeros(1) for _ in range(700)]
    gone = [np.zeros(1) for _ in range(323)]  # held while lent: each its own id
    _lend_all(kept + gone)
    assert len(hostwrites.lent) == 1023 and hostwrites._prune_at == [1024]
    last = np.zeros(1)  # (made before the others go: it cannot take the id of one of them)
    del gone
    hostwrites.lend(None, last)  # the 1,024th entry: the 323 gone are dropped
    assert len(hostwrites.lent) == 701
    assert hostwrites._prune_at == [1402]
    assert all(hostwrites.is_lent(array) for array in [*kept, last])
    more = [np.zeros(1) for _ in range(701)]  # (made while the others live: ids of their own)
    _lend_all(more[:700])
    assert len(hostwrites.lent) == 1401
    kept = kept[:10]
    del more[:690]
    hostwrites.lend(None, more[-1])  # the 1,402nd entry: 1,380 gone are dropped
    assert len(hostwrites.lent) == 10 + 1 + 11  # kept, last and the 11 of more still held
    assert hostwrites._prune_at == [1024]
    assert all(hostwrites.is_lent(array) for array in [*kept, last, *more])
