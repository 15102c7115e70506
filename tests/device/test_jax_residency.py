"""JAX residency is never stale: a property test over interleavings of JAX reads and updates,
updates on cvm, py and numba, ``set_value`` (a copy, ``borrow=True``, an unaligned view, from
another thread), the internal array changed in place, a host function's borrowed output changed by
its holder, ``zero``, and an array lent (``get_value`` or ``set_value`` with ``borrow``) kept by the
user and changed steps later, each read checked against the value
plain PyTensor gives (its JAX functions read the host value at every call; a model of the
values here, which the host functions' own reads confirm). Residency may only ever save
transfers: a value it reuses is one nothing else could have changed."""

from __future__ import annotations

import pickle
import threading
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

jax = pytest.importorskip("jax")
pytensor = pytest.importorskip("pytensor")
pytest.importorskip("numba")

from pytensor.compile.mode import Mode  # noqa: E402

import modecfg  # noqa: E402, F401  (modecfg's JAX path is what is tested)
from modecfg.device import jaxlink  # noqa: E402

N = 6
NAMES = ("u", "v", "p")
HOST_WRITTEN = ("u", "v")  # the variables host functions update or hand out; "p" stays private
HOST_LINKERS = ("cvm", "py", "numba")


class Program:
    """Three shared variables, a JAX function reading all and one reading each, a JAX update of
    each, and host updates (cvm, py, numba) and borrowed outputs of two: compiled once, run by every
    example. The third ("p") has no host function, so its device copy is reused between its
    changes: a change a door misses reads stale there."""

    def __init__(self) -> None:
        self.shared = {name: pytensor.shared(np.zeros(N), name=name) for name in NAMES}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            jax_mode = Mode(linker="jax")
            self.read_all = pytensor.function([], [var.sum() for var in self.shared.values()], mode=jax_mode)
            self.read = {
                name: pytensor.function([], var.sum(), mode=jax_mode) for name, var in self.shared.items()
            }
            self.jax_update = {
                name: pytensor.function([], [], updates={var: var + 1}, mode=jax_mode)
                for name, var in self.shared.items()
            }
            self.host_update = {
                (name, linker): pytensor.function(
                    [], var.sum() * 0, updates={var: var * 2}, mode=Mode(linker=linker)
                )
                for name, var in self.shared.items()
                if name in HOST_WRITTEN
                for linker in HOST_LINKERS
            }
            self.hand_out = {  # the variable's own array to the caller (a copy, where a linker makes one)
                (name, linker): pytensor.function(
                    [], pytensor.Out(var, borrow=True), mode=Mode(linker=linker)
                )
                for name, var in self.shared.items()
                if name in HOST_WRITTEN
                for linker in HOST_LINKERS
            }
        self.model = {name: np.zeros(N) for name in NAMES}
        self.held: dict[str, np.ndarray] = {}  # arrays the user keeps, lent by a step before

    def reset(self) -> None:
        self.held.clear()
        for name, var in self.shared.items():
            var.set_value(np.zeros(N))
            self.model[name] = np.zeros(N)

    def on_host(self, name: str) -> None:
        """As a user of plain PyTensor must before a host function reads a value a JAX update left
        on the device (cvm, py and numba refuse a JAX array there, with or without modecfg)."""
        var = self.shared[name]
        if not isinstance(var.container.storage[0], np.ndarray):
            var.set_value(var.get_value())

    def check(self, name: str) -> None:
        expected = float(self.model[name].sum())
        assert float(self.read[name]()) == expected, (name, "read alone")
        every = [float(x) for x in self.read_all()]
        assert every[NAMES.index(name)] == expected, (name, "read with the others")
        np.testing.assert_array_equal(np.asarray(self.shared[name].get_value()), self.model[name])


@pytest.fixture(scope="module")
def program() -> Program:
    return Program()


@pytest.fixture(autouse=True, scope="module")
def _copies_as_on_a_gpu() -> Any:
    """Every value sent is a copy, as on a GPU: JAX's CPU device may use an aligned host array of the
    same dtype where it is (x64 on, float64) instead of copying it, and a stale device copy would
    then read the host's change, hiding the very fault these tests look for (with this off, the
    property test passed on code that read a zeroed array as before its zeros)."""
    original = jaxlink._put

    def put(name: str, value: Any, device: Any, x64_on: bool) -> Any:
        return original(name, value.copy(), device, x64_on)

    jaxlink._put = put
    yield
    jaxlink._put = original


def _run(program: Program, step: tuple[Any, ...]) -> None:
    kind, name = step[0], step[1]
    var = program.shared[name]
    model = program.model
    if kind == "read":
        pass
    elif kind == "jax_update":
        program.jax_update[name]()
        model[name] = model[name] + 1
    elif kind == "host_update":
        program.on_host(name)
        program.host_update[name, step[2]]()
        model[name] = model[name] * 2
    elif kind == "set_copy":
        var.set_value(np.full(N, float(step[2])))
        model[name] = np.full(N, float(step[2]))
    elif kind == "set_borrowed":  # the user keeps the array and changes it afterwards
        given_array = np.full(N, float(step[2]))
        var.set_value(given_array, borrow=True)
        aliased = var.get_value(borrow=True) is given_array  # PyTensor's filter keeps such an array
        given_array += 1
        model[name] = given_array.copy() if aliased else np.full(N, float(step[2]))
        program.held[name] = given_array
    elif kind == "set_unaligned":  # a view one element in (JAX's CPU device copies it), changed afterwards
        view = np.full(N + 1, float(step[2]))[1:]
        var.set_value(view, borrow=True)
        aliased = np.shares_memory(var.get_value(borrow=True), view)
        view += 1
        model[name] = view.copy() if aliased else np.full(N, float(step[2]))
    elif kind == "in_place":  # Theano's recipe: get_value(borrow, internal), change, set it back
        program.on_host(name)
        internal = var.get_value(borrow=True, return_internal_type=True)
        internal += 3
        if step[2]:
            var.set_value(internal, borrow=True)
        model[name] = model[name] + 3
    elif kind == "hand_out":  # a host function's borrowed output, changed by its holder
        program.on_host(name)
        held = program.hand_out[name, step[2]]()
        aliased = np.shares_memory(held, var.container.storage[0])
        held += 1
        model[name] = model[name] + 1 if aliased else model[name]
    elif kind == "zero":  # PyTensor's own zero(), in place with borrow
        program.on_host(name)
        var.zero(borrow=step[2])
        model[name] = np.zeros(N)
    elif kind == "hold":  # the user keeps the variable's own array, handed out by get_value(borrow)
        if isinstance(var.container.storage[0], np.ndarray):
            program.held[name] = var.get_value(borrow=True)
    elif kind == "change_held":  # ...and changes it in place steps later, whatever came between
        held = program.held.get(name)
        if held is not None:
            aliased = held is var.container.storage[0]
            held += step[2]
            if aliased:
                model[name] = held.copy()
    elif kind == "thread_set":
        worker = threading.Thread(target=var.set_value, args=(np.full(N, float(step[2])),))
        worker.start()
        worker.join()
        model[name] = np.full(N, float(step[2]))
    else:  # pragma: no cover - the strategy makes only the kinds above
        raise AssertionError(kind)
    program.check(name)


names = st.sampled_from(NAMES)
values = st.integers(-3, 3)
steps = st.one_of(
    st.tuples(st.just("read"), names),
    st.tuples(st.just("jax_update"), names),
    st.tuples(st.just("host_update"), st.sampled_from(HOST_WRITTEN), st.sampled_from(HOST_LINKERS)),
    st.tuples(st.just("set_copy"), names, values),
    st.tuples(st.just("set_borrowed"), names, values),
    st.tuples(st.just("set_unaligned"), names, values),
    st.tuples(st.just("in_place"), names, st.booleans()),
    st.tuples(st.just("thread_set"), names, values),
    st.tuples(st.just("hand_out"), st.sampled_from(HOST_WRITTEN), st.sampled_from(HOST_LINKERS)),
    st.tuples(st.just("zero"), names, st.booleans()),
    st.tuples(st.just("hold"), names),
    st.tuples(st.just("change_held"), names, values),
)

EXAMPLES = 300


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(steps, min_size=1, max_size=25))
def test_every_jax_read_is_the_value_plain_pytensor_reads(
    program: Program, script: list[tuple[Any, ...]]
) -> None:
    program.reset()
    for name in NAMES:
        program.check(name)
    for step in script:
        _run(program, step)


# -- the cases of the report, each on its own ------------------------------------------------


def _jax(outputs: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return pytensor.function([], outputs, mode=Mode(linker="jax"), **kwargs)


def test_a_cvm_update_is_read_by_a_jax_function_linked_before_it() -> None:
    u = pytensor.shared(np.zeros(10**4))
    read = _jax(u.sum())
    step = pytensor.function([], [], updates={u: u + 1}, mode=Mode(linker="cvm"))
    assert read() == 0.0
    step()
    assert read() == 10**4
    step()
    assert read() == 2 * 10**4


def test_a_cvm_update_compiled_first_is_read_too() -> None:
    u = pytensor.shared(np.zeros(100))
    step = pytensor.function([], [], updates={u: u + 1}, mode=Mode(linker="cvm"))
    read = _jax(u.sum())
    read()
    step()
    assert read() == 100


def test_a_cvm_update_compiled_after_the_jax_function_ran_is_read() -> None:
    """The device copy was made, and reused, before any host function updated the variable: the
    compile of one stops the reuse (hostwrites tells the JAX path, jaxlink.not_private)."""
    u = pytensor.shared(np.zeros(100))
    read = _jax(u.sum())
    assert read() == 0.0 and read() == 0.0  # the copy made, then reused: only PyTensor holds u
    step = pytensor.function([], [], updates={u: u + 1}, mode=Mode(linker="cvm"))
    step()  # cvm writes the update into u's array in place
    assert read() == 100.0
    step()
    assert read() == 200.0


def test_theanos_in_place_recipe_is_read() -> None:
    s = pytensor.shared(np.zeros(1000))
    read = _jax(s.sum())
    read()
    for expected in (1000.0, 2000.0):
        v = s.get_value(borrow=True, return_internal_type=True)
        v += 1
        s.set_value(v, borrow=True)
        assert read() == expected


def test_an_unaligned_view_changed_in_place_and_set_again_is_read() -> None:
    t = pytensor.shared(np.zeros(1000))
    read = _jax(t.sum())
    a = np.zeros(1001)[1:]
    t.set_value(a, borrow=True)
    read()
    a += 1
    t.set_value(a, borrow=True)
    assert read() == 1000.0


def test_an_array_given_with_borrow_and_changed_afterwards_is_read() -> None:
    s = pytensor.shared(np.zeros(50))
    read = _jax(s.sum())
    read()
    a = np.zeros(50)
    s.set_value(a, borrow=True)
    assert read() == 0.0
    a += 2
    assert read() == 100.0
    a += 1
    assert read() == 150.0


def test_a_private_value_is_sent_once_and_reused() -> None:
    """What residency keeps: a value only PyTensor holds crosses once, whatever the calls."""
    s = pytensor.shared(np.ones(64), name="kept")
    read = _jax(s.sum())
    for _ in range(5):
        assert read() == 64.0
    s.set_value(np.full(64, 2.0))  # a copy PyTensor makes: private again once sent
    assert read() == 128.0
    sent = jaxlink.sent_to_device(s)
    with jax.transfer_guard("disallow_explicit"):
        results = [read() for _ in range(5)]
    assert [float(r) for r in results] == [128.0] * 5
    assert jaxlink.sent_to_device(s) == sent


def test_a_lent_value_is_sent_at_each_call_until_the_variable_holds_another() -> None:
    s = pytensor.shared(np.ones(8), name="lent")
    read = _jax(s.sum())
    read()
    held = s.get_value(borrow=True)
    before = jaxlink.sent_to_device(s)[0]
    read()
    read()
    assert jaxlink.sent_to_device(s)[0] == before + 2  # as plain PyTensor: sent at each call
    held += 1
    assert read() == 16.0
    s.set_value(np.full(8, 3.0))  # a copy PyTensor makes: private again
    read()
    after = jaxlink.sent_to_device(s)[0]
    assert read() == 24.0
    assert jaxlink.sent_to_device(s)[0] == after


def test_a_copy_handed_out_leaves_the_value_private() -> None:
    """get_value() without borrow hands out a copy: nobody else holds the variable's array, so it
    still crosses once (only a borrowed array is sent again at each call)."""
    s = pytensor.shared(np.ones(8), name="copied")
    read = _jax(s.sum())
    read()
    copy = s.get_value()
    copy += 1  # the caller's own array
    sent = jaxlink.sent_to_device(s)
    assert [float(read()) for _ in range(3)] == [8.0] * 3
    assert jaxlink.sent_to_device(s) == sent


def test_a_cvm_update_made_by_function_copy_is_read() -> None:
    """``Function.copy(swap=...)`` makes a function without ``pytensor.function``: its in-place
    update of the swapped-in variable is recorded too (FunctionMaker.create, patch "host
    updates"). Before the fix the JAX read stayed 0.0: a silently wrong number."""
    u = pytensor.shared(np.zeros(3), name="u")
    read = _jax(u.sum())
    assert read() == 0.0 and read() == 0.0  # copied, then reused: only PyTensor holds u's array
    w = pytensor.shared(np.zeros(3), name="w")
    step_w = pytensor.function([], [], updates={w: w + 1}, mode=Mode(linker="cvm"))
    step_u = step_w.copy(swap={w: u})
    step_u()
    assert read() == 3.0
    step_u()
    assert read() == 6.0
    assert float(w.get_value().sum()) == 0.0  # the copy updates u only


def test_an_unpickled_cvm_update_is_read() -> None:
    """An unpickled function is made by ``FunctionMaker.create`` alone: a cvm update unpickled
    with the JAX function reading its variable is recorded, and the read follows it."""
    u = pytensor.shared(np.zeros(3), name="u")
    read, step = pickle.loads(pickle.dumps(
        (_jax(u.sum()), pytensor.function([], [], updates={u: u + 1}, mode=Mode(linker="cvm")))
    ))  # fmt: skip
    shared = read.maker.fgraph.inputs[0]  # the unpickled functions' own variable, one for both
    shared.set_value(np.zeros(3))  # a fresh array only PyTensor holds
    assert read() == 0.0 and read() == 0.0
    step()
    assert read() == 3.0
    step()
    assert read() == 6.0


_BEFORE_MODECFG = """
import json, sys
import numpy as np, pytensor
from pytensor.compile.mode import Mode
w = pytensor.shared(np.zeros(3), name="w")
step = pytensor.function([], [], updates={w: w + 1.0}, mode=Mode(linker="cvm"))  # in place
if sys.argv[1:] == ["modecfg"]:
    import modecfg
read = pytensor.function([], w.sum(), mode=Mode(linker="jax"))
reads = [float(read()), float(read())]
array = w.container.storage[0]
step()
reads.append(float(read()))
step()
reads.append(float(read()))
recorded = None
if "modecfg" in sys.modules:  # the step's update recorded at the JAX link: its array is no private one
    from modecfg._pytensor import hostwrites
    recorded = w.container in hostwrites.host_updated
print(json.dumps({"reads": reads, "in_place": w.container.storage[0] is array, "recorded": recorded}))
"""


def test_a_cvm_update_compiled_before_modecfg_was_imported_is_read_as_without_it(tmp_path: Any) -> None:
    """A step compiled before ``import modecfg`` (PyTensor imported first, as in a notebook) was
    never seen by the "host updates" replacement: the JAX function linked after the import read
    its stale device copy (0.0 where plain PyTensor reads 6.0). The JAX path now looks for such
    functions at its link (hostwrites.catch_up). Side by side with a process without modecfg."""
    import json
    import subprocess
    import sys

    from tests.fresh import pythonpath

    script = tmp_path / "before.py"
    script.write_text(_BEFORE_MODECFG)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": pythonpath(), "HOME": str(tmp_path), "MODECFGRC": ""}
    got = {}
    for side in ("plain", "plain", "modecfg"):  # (the first compiles the step's C code: cached after)
        proc = subprocess.run([sys.executable, str(script), side], env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        got[side] = json.loads(proc.stdout.splitlines()[-1])
    assert got["plain"] == {
        "reads": [0.0, 0.0, 3.0, 6.0],
        "in_place": True,
        "recorded": None,
    }  # cvm writes w's own array
    assert got["modecfg"] == {**got["plain"], "recorded": True}, got


_LENT_BEFORE_THE_FIRST_LINK = """
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np, pytensor
from pytensor.compile.mode import Mode
if sys.argv[1:] == ["modecfg"]:
    import modecfg
    from modecfg.device import jaxlink
    put = jaxlink._put  # every value sent a copy, as on a GPU (JAX's CPU device may alias one)
    jaxlink._put = lambda name, value, device, x64_on: put(name, value.copy(), device, x64_on)
handed = pytensor.shared(np.zeros(6), name="handed")
held = handed.get_value(borrow=True)  # handed out, before any JAX function exists
taken = pytensor.shared(np.zeros(6), name="taken")
given = np.zeros(6)
taken.set_value(given, borrow=True)  # taken in as it is
made_of = np.zeros(6)
made = pytensor.shared(made_of, borrow=True, name="made")  # made of the caller's array as it is
aliased = [held is handed.container.storage[0], given is taken.container.storage[0],
           made_of is made.container.storage[0]]
read = pytensor.function([], [v.sum() for v in (handed, taken, made)], mode=Mode(linker="jax"))
reads = [[float(x) for x in read()]]
held += 1
given += 2
made_of += 3
reads += [[float(x) for x in read()] for _ in range(2)]
print(json.dumps({"aliased": aliased, "reads": reads}))
"""


def test_arrays_lent_before_the_first_jax_link_are_read_as_plain_pytensor_reads_them(tmp_path: Any) -> None:
    """An array handed out by ``get_value(borrow=True)``, taken in by ``set_value(a, borrow=True)``
    or made a variable of by ``shared(a, borrow=True)`` before the process's first JAX function,
    then changed by its holder: plain PyTensor's JAX function reads the change at every call
    ([6, 12, 18]); modecfg's read its device copy ([0, 0, 0] for the last two: the doors were put on
    at the first JAX link, after the lending, and a made variable's door did not exist). The doors
    are watched from PyTensor's import now. Side by side with a process without modecfg."""
    import json
    import subprocess
    import sys

    from tests.fresh import pythonpath

    script = tmp_path / "lent.py"
    script.write_text(_LENT_BEFORE_THE_FIRST_LINK)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": pythonpath(), "HOME": str(tmp_path), "MODECFGRC": ""}
    got = {}
    for side in ("plain", "modecfg"):
        proc = subprocess.run([sys.executable, str(script), side], env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        got[side] = json.loads(proc.stdout.splitlines()[-1])
    assert got["plain"] == {"aliased": [True] * 3, "reads": [[0.0] * 3, [6.0, 12.0, 18.0], [6.0, 12.0, 18.0]]}
    assert got["modecfg"] == got["plain"]


def test_an_array_a_variable_is_made_of_with_borrow_and_changed_is_read() -> None:
    """``shared(a, borrow=True)`` holds the caller's array as it is: plain PyTensor's JAX function
    reads the caller's change in place; modecfg's read the device copy of its first call (0.0 where
    plain PyTensor reads 6.0) until the "shared values (made)" door. Once the variable holds an
    array of its own (``set_value`` copies), the copy is reused again."""
    given = np.zeros(6)
    made = pytensor.shared(given, borrow=True, name="made_of_given")
    assert made.container.storage[0] is given
    read = _jax(made.sum())
    assert float(read()) == 0.0
    given += 1
    assert [float(read()) for _ in range(2)] == [6.0, 6.0]
    made.set_value(np.full(6, 2.0))
    assert float(read()) == 12.0
    sent = jaxlink.sent_to_device(made)
    given += 1  # no longer the variable's array
    assert [float(read()) for _ in range(2)] == [12.0, 12.0]
    assert jaxlink.sent_to_device(made) == sent  # private: reused


def test_a_variable_made_of_a_copy_stays_private() -> None:
    """Without ``borrow`` PyTensor copies the caller's array: the variable's is its own, and its
    device copy is reused (the caller's change is not the variable's, in plain PyTensor too)."""
    given = np.zeros(6)
    made = pytensor.shared(given, name="made_of_a_copy")
    read = _jax(made.sum())
    assert float(read()) == 0.0
    sent = jaxlink.sent_to_device(made)
    given += 1
    assert [float(read()) for _ in range(2)] == [0.0, 0.0]
    assert jaxlink.sent_to_device(made) == sent


def test_a_cvm_update_compiled_while_modecfg_was_uninstalled_is_read() -> None:
    """A function made while the "host updates" replacement was off (``uninstall()``) is found at
    the next JAX link, and by a JAX function linked before at its next call; while the replacement
    is off, no device copy is reused at all."""
    from modecfg._pytensor import hostwrites, install, uninstall

    u = pytensor.shared(np.zeros(3), name="u")
    before = _jax(u.sum())
    assert before() == 0.0 and before() == 0.0
    sent = jaxlink.sent_to_device(u)[0]  # (once: the copy reused since)
    uninstall()
    try:
        step = pytensor.function([], [], updates={u: u + 1}, mode=Mode(linker="cvm"))
        assert u.container not in hostwrites.host_updated and not hostwrites.recording()
        step()
        assert before() == 3.0  # off: sent again
        assert jaxlink.sent_to_device(u)[0] == sent + 1
    finally:
        install()
    step()
    assert before() == 6.0  # on anew: the functions made meanwhile looked for at this call
    assert u.container in hostwrites.host_updated
    after = _jax(u.sum() * 2)
    step()
    assert (before(), after()) == (9.0, 18.0)
    step()
    assert (before(), after()) == (12.0, 24.0)


def test_with_the_record_off_no_device_copy_is_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the "host updates" replacement is off (it did not verify against this PyTensor),
    nothing says which arrays a host function writes: every call sends the host value."""
    from modecfg._pytensor import hostwrites

    u = pytensor.shared(np.ones(4), name="unrecorded")
    monkeypatch.setattr(hostwrites, "recording", lambda: False)
    read = _jax(u.sum())
    sent = jaxlink.sent_to_device(u)
    assert [float(read()) for _ in range(3)] == [4.0] * 3
    assert jaxlink.sent_to_device(u)[0] == sent[0] + 3


# -- PyTensor's own doors that write a shared variable's array in place, or hand it out ----------


def test_zero_with_borrow_is_read() -> None:
    """``TensorSharedVariable.zero(borrow=True)`` writes zeros into the variable's own array (no new
    array: the device copy was reused, 3.0 where plain PyTensor reads 0.0, before patch "shared
    values (zero)"); the array is still PyTensor's alone, so the zeros cross once and are reused."""
    w = pytensor.shared(np.ones(3), name="zeroed")
    read = _jax(w.sum())
    assert [float(read()) for _ in range(3)] == [3.0] * 3  # the copy made, then reused
    array = w.container.storage[0]
    w.zero(borrow=True)
    assert w.container.storage[0] is array  # in place, as PyTensor does it
    assert float(read()) == 0.0
    sent = jaxlink.sent_to_device(w)
    assert [float(read()) for _ in range(3)] == [0.0] * 3
    assert jaxlink.sent_to_device(w) == sent  # private still: reused
    w.set_value(np.full(3, 2.0))
    assert float(read()) == 6.0
    w.zero()  # without borrow: a new array, sent as any new value
    assert float(read()) == 0.0


def test_zero_of_a_value_left_on_the_device_is_read() -> None:
    """A JAX update leaves a device array in the variable: ``zero`` makes a new value of it, as
    PyTensor's does, and the read follows."""
    w = pytensor.shared(np.ones(3), name="updated")
    read = _jax(w.sum())
    _jax([], updates={w: w + 1})()
    assert float(read()) == 6.0
    w.zero()
    assert float(read()) == 0.0


@pytest.mark.parametrize("linker", HOST_LINKERS)
def test_an_array_a_host_function_hands_out_borrowed_and_changed_is_read(linker: str) -> None:
    """``Out(w, borrow=True)`` from a function on a host linker hands out the variable's own array
    (PyTensor allows an output to alias a shared input when both borrow): whoever holds it may
    change it in place, and a JAX function then sends it at each call, as plain PyTensor does
    (the read stayed 3.0 on each linker where plain PyTensor reads 15.0)."""
    w = pytensor.shared(np.ones(3), name="handed")
    read = _jax(w.sum())
    assert [float(read()) for _ in range(3)] == [3.0] * 3
    hand_out = pytensor.function([], pytensor.Out(w, borrow=True), mode=Mode(linker=linker))
    held = hand_out()
    if not np.shares_memory(held, w.container.storage[0]):  # pragma: no cover - PyTensor copied
        pytest.skip(f"{linker} returned a copy here")
    held[:] = 5.0
    assert float(read()) == 15.0
    held[:] = 7.0
    assert float(read()) == 21.0


@pytest.mark.parametrize("linker", HOST_LINKERS)
def test_a_borrowed_view_handed_out_and_changed_is_read(linker: str) -> None:
    """A borrowed output that is a view of the variable (``w[1:]``) aliases its array as well."""
    w = pytensor.shared(np.ones(4), name="viewed")
    read = _jax(w.sum())
    assert [float(read()) for _ in range(2)] == [4.0] * 2
    hand_out = pytensor.function([], pytensor.Out(w[1:], borrow=True), mode=Mode(linker=linker))
    held = hand_out()
    if not np.shares_memory(held, w.container.storage[0]):  # numba's subtensor may copy
        assert float(read()) == 4.0
        return
    held[:] = 2.0
    assert float(read()) == 7.0


def test_a_borrowed_output_computed_from_the_variable_keeps_it_private() -> None:
    """A borrowed output that is a new array (``w * 2``) shares nothing with the variable: the
    variable's copy is still reused (the rule looks at what the output may alias)."""
    w = pytensor.shared(np.ones(3), name="computed")
    read = _jax(w.sum())
    read()
    doubled = pytensor.function([], pytensor.Out(w * 2, borrow=True), mode=Mode(linker="cvm"))
    held = doubled()
    held[:] = 9.0
    sent = jaxlink.sent_to_device(w)
    assert [float(read()) for _ in range(3)] == [3.0] * 3
    assert jaxlink.sent_to_device(w) == sent


def test_the_doors_are_the_shared_value_patches() -> None:
    from modecfg.device import contacts

    doors = (
        contacts.SHARED_VALUES,
        contacts.SHARED_VALUES_SET,
        contacts.SHARED_VALUES_MADE,
        contacts.SHARED_VALUES_ZERO,
    )
    assert jaxlink.DOORS == tuple(patch.name for patch in doors)


@pytest.mark.parametrize("door", jaxlink.DOORS)
def test_with_a_door_unwatched_no_device_copy_is_reused(door: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where one of the shared-value patches is off (it did not verify against this PyTensor), what
    its door lets in or out goes unseen: every call sends the host value, as plain PyTensor does."""
    from modecfg._pytensor import state

    u = pytensor.shared(np.ones(4), name="unwatched")
    read = _jax(u.sum())
    assert door in state.applied  # (the first JAX link put them on)
    monkeypatch.delitem(state.applied, door)
    sent = jaxlink.sent_to_device(u)
    u.set_value(np.full(4, 2.0))
    assert [float(read()) for _ in range(3)] == [8.0] * 3
    assert jaxlink.sent_to_device(u)[0] == sent[0] + 3
    monkeypatch.undo()
    u.set_value(np.full(4, 3.0))
    assert [float(read()) for _ in range(3)] == [12.0] * 3
    assert jaxlink.sent_to_device(u)[0] == sent[0] + 4  # all watched again: sent once, then reused


def test_after_uninstall_and_install_a_borrowed_value_changed_is_read() -> None:
    """``uninstall()`` then ``install()``: the shared-value patches, on demand, stayed off until the
    next JAX link, while the copies were reused: a value handed out by ``get_value(borrow=True)``
    and changed read stale (3.0 where plain PyTensor reads 6.0). install() now puts back the on-demand
    patches that were on, and a copy is reused only while every door is watched."""
    from modecfg._pytensor import install, state, uninstall

    w = pytensor.shared(np.ones(3), name="reinstalled")
    read = _jax(w.sum())
    assert [float(read()) for _ in range(2)] == [3.0] * 2
    uninstall()
    install()
    assert all(door in state.applied for door in jaxlink.DOORS)
    w.set_value(np.ones(3))
    assert [float(read()) for _ in range(2)] == [3.0] * 2
    sent = jaxlink.sent_to_device(w)
    assert float(read()) == 3.0
    assert jaxlink.sent_to_device(w) == sent  # reused again: private
    held = w.get_value(borrow=True)
    held += 1
    assert float(read()) == 6.0
