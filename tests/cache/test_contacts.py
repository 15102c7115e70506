"""The compile caches' contacts, one replacement at a time: what each passes on, what it holds
while it does, and what it says (the process-level behaviour is in test_processes and
test_compile_lock)."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import pickle
import threading
from pathlib import Path
from typing import Any

import pytest

from modecfg.cache import contacts
from modecfg.cache.contacts import LockedCompile, numba_lock_path
from modecfg.cache.holders import Holder
from modecfg.configuration import config

pytest.importorskip("pytensor")

import pytensor.scalar as ps

from modecfg._pytensor import state

# -- what a wait and a stale lock say ------------------------------------------------------------


def test_a_wait_names_the_holders_not_the_queue(caplog: pytest.LogCaptureFixture) -> None:
    holding = Holder(41, "python fit.py", None, "node7")
    queued = Holder(42, "python other.py", None, "node7", waiting=True)
    also = Holder(43, "", None, "node8")
    with caplog.at_level(logging.WARNING, logger="modecfg.cache"):
        contacts._say_waiting([holding, queued, also])
    (record,) = caplog.records
    assert record.name == "modecfg.cache" and record.levelno == logging.WARNING
    timeout = config["compile.timeout"]
    assert record.getMessage() == (
        "waiting for the compile lock, held by pid 41 (python fit.py) on node7, pid 43 on node8 "
        f"(compile.wait; gives up after compile.timeout={timeout}s)"
    )


def test_a_wait_on_a_holder_this_host_cannot_see_says_so(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="modecfg.cache"):
        contacts._say_waiting([Holder(42, "python other.py", None, "node7", waiting=True)])
        contacts._say_waiting([])
    assert [r.getMessage().split(" (compile.wait")[0] for r in caplog.records] == [
        "waiting for the compile lock, held by a process this host cannot name"
    ] * 2


def test_a_stale_lock_names_who_left_it(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="modecfg.cache"):
        contacts._say_stale(Holder(41, "python fit.py", None, "node7"))
    (record,) = caplog.records
    assert record.name == "modecfg.cache" and record.levelno == logging.WARNING
    assert record.getMessage() == (
        "the compile lock was last taken by pid 41 (python fit.py) on node7, which ended without "
        "letting go of it cleanly; a module it was writing, if any, PyTensor sets aside as broken"
    )


# -- the numba locks ---------------------------------------------------------------------------


def test_a_functions_lock_is_one_of_256_chosen_by_its_keys_hash(tmp_path: Path) -> None:
    # sha256("a") starts ca978112: its first 8 hex digits, modulo 256, are 0x12
    assert numba_lock_path(tmp_path, "a") == tmp_path / ".locks" / "12.lock"
    assert numba_lock_path(str(tmp_path), "k") == tmp_path / ".locks" / "29.lock"
    names = {numba_lock_path(tmp_path, f"key {i}").name for i in range(2000)}
    assert len(names) == contacts.NUMBA_LOCKS == 256  # every lock used, none outside the set
    assert names == {f"{b:02x}.lock" for b in range(256)}


class _Holds:
    """``holders.hold`` and ``release``, recording what they were asked."""

    def __init__(self) -> None:
        self.taken: list[tuple[Path, dict[str, Any]]] = []
        self.released: list[object] = []

    def hold(self, lock: Path, **kwargs: Any) -> object:
        self.taken.append((lock, kwargs))
        return ("taken", lock)

    def release(self, taken: object) -> None:
        self.released.append(taken)


@pytest.fixture
def holds(monkeypatch: pytest.MonkeyPatch) -> _Holds:
    from modecfg.cache import holders

    fake = _Holds()
    monkeypatch.setattr(holders, "hold", fake.hold)
    monkeypatch.setattr(holders, "release", fake.release)
    monkeypatch.setattr(contacts, "config", {"compile.timeout": 12.5, "compile.wait": 2.5})
    return fake


def test_a_locked_compile_passes_everything_on_holding_its_lock_once(tmp_path: Path, holds: _Holds) -> None:
    lock = tmp_path / "locks" / "12.lock"
    seen: list[Any] = []

    def compile(*args: Any, **kwargs: Any) -> Any:
        seen.append((args, kwargs, set(contacts._held_here.locks), len(holds.taken)))
        if kwargs.get("again"):  # numba compiling again inside the compile: no second hold
            return locked(*args, inner=True)
        return ("compiled", args, kwargs)

    locked = LockedCompile(compile, lock)
    assert locked(1, 2, types="f8") == ("compiled", (1, 2), {"types": "f8"})
    assert lock.parent.is_dir()  # made where it was missing
    said = {"on_wait": contacts._say_waiting, "on_stale": contacts._say_stale}
    assert holds.taken == [(lock, {"timeout": 12.5, "say_after": 2.5, **said})]
    assert holds.released == [("taken", lock)]
    assert seen == [((1, 2), {"types": "f8"}, {lock}, 1)]

    seen.clear()
    assert locked(3, again=True) == ("compiled", (3,), {"inner": True})
    assert [s[:3] for s in seen] == [((3,), {"again": True}, {lock}), ((3,), {"inner": True}, {lock})]
    assert len(holds.taken) == 2 and len(holds.released) == 2  # held once for the nested compile
    assert contacts._held_here.locks == set()  # let go after


def test_a_locked_compile_that_fails_lets_go(tmp_path: Path, holds: _Holds) -> None:
    def compile(*args: Any) -> Any:
        raise TypeError("no matching definition")

    locked = LockedCompile(compile, tmp_path / "12.lock")
    with pytest.raises(TypeError, match="no matching definition"):
        locked(1)
    assert len(holds.released) == 1 and contacts._held_here.locks == set()
    assert repr(LockedCompile(len, tmp_path)) == "LockedCompile(<built-in function len>)"


class _Dispatcher:
    def __init__(self) -> None:
        self._compile_for_args = self.compile

    def compile(self, *args: Any) -> Any:
        return args


def test_numbas_jit_compile_gets_a_locked_compile_only_where_numba_caches() -> None:
    import pytensor
    from pytensor.link.numba.cache import NUMBA_CACHE_PATH

    linker = object()
    made: list[Any] = []

    def jit_compile(self: Any, fn_and_cache: Any) -> Any:
        made.append((self, fn_and_cache))
        return fn_and_cache[0]

    cached = _Dispatcher()
    assert contacts.numba_jit_compile(linker, jit_compile, (cached, 12345)) is cached
    assert made == [(linker, (cached, 12345))]
    locked = cached._compile_for_args
    assert isinstance(locked, LockedCompile)
    assert locked.lock == numba_lock_path(NUMBA_CACHE_PATH, "12345")
    assert contacts.numba_jit_compile(linker, jit_compile, (cached, 12345)) is cached
    assert cached._compile_for_args is locked  # not locked twice

    uncached = _Dispatcher()
    contacts.numba_jit_compile(linker, jit_compile, (uncached, None))
    assert not isinstance(uncached._compile_for_args, LockedCompile)
    plain = object()  # something numba made that compiles nothing: returned as it is
    assert contacts.numba_jit_compile(linker, jit_compile, (plain, 7)) is plain

    off = _Dispatcher()
    with pytensor.config.change_flags(numba__cache=False):  # scoped: nothing assigned after
        assert contacts.numba_jit_compile(linker, jit_compile, (off, 7)) is off
    assert not isinstance(off._compile_for_args, LockedCompile)


# -- the C module cache, one thread at a time ---------------------------------------------------


def test_the_module_cache_replacements_pass_everything_on_holding_the_process_lock() -> None:
    lock: Any = contacts._module_cache_lock
    seen: list[Any] = []

    def original(*args: Any, **kwargs: Any) -> Any:
        seen.append((args, kwargs, lock._is_owned()))
        return "result"

    cache = object()
    assert contacts.module_from_key(cache, original, "key", "lnk") == "result"
    assert contacts.module_cache_refresh(cache, original, 1, age_thresh_use=5) == "result"
    assert contacts.get_module_cache(original, {"dirname": "d"}) == "result"
    assert contacts.get_module_cache(original) == "result"
    assert seen == [
        ((cache, "key", "lnk"), {}, True),
        ((cache, 1), {"age_thresh_use": 5}, True),
        (({"dirname": "d"},), {}, True),
        ((None,), {}, True),
    ]
    assert not lock._is_owned()


# -- a process's first compile -------------------------------------------------------------------


def test_the_first_compile_registers_the_exit_bound_once_and_forgetting_it_unregisters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from modecfg.cache import trim

    registered: list[Any] = []
    said: list[bool] = []
    due = [True]
    monkeypatch.setattr(contacts, "_first", [])
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(contacts, "say_cache_layout", lambda: said.append(True))
    monkeypatch.setattr(trim, "prepare_exit", lambda: due[0])

    contacts.first_compile(None, None)
    contacts.first_compile(None, None)  # the second compile: nothing again
    assert registered == [contacts.bound_at_exit] and said == [True]

    monkeypatch.undo()
    monkeypatch.setattr(contacts, "_first", [True])
    unregistered: list[Any] = []
    monkeypatch.setattr(atexit, "unregister", unregistered.append)
    contacts.forget_first_compile()
    assert contacts._first == [] and unregistered == [contacts.bound_at_exit]

    due[0] = False  # no bound due: nothing registered, the layout still checked
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(contacts, "say_cache_layout", lambda: said.append(True))
    monkeypatch.setattr(trim, "prepare_exit", lambda: due[0])
    contacts.first_compile(None, None)
    assert registered == [contacts.bound_at_exit] and said == [True, True]


def test_the_exit_bound_is_trims(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg.cache import trim

    ran: list[bool] = []
    monkeypatch.setattr(trim, "bound_at_exit", lambda: ran.append(True))
    contacts.bound_at_exit()
    assert ran == [True]


# -- interned nodes, made once ------------------------------------------------------------------

_both_there = threading.Barrier(2)


class _MeetingType(ps.ScalarType):  # type: ignore[misc]
    """A scalar type whose ``variable_type`` waits for a second thread to read it as well: both
    interning functions read it between their look-up and their store, so two threads making
    the same node both find the table without it, as threads compiling at once sometimes do."""

    @property
    def variable_type(self) -> type:
        with contextlib.suppress(threading.BrokenBarrierError):
            _both_there.wait(timeout=_both_there_within)
        return ps.ScalarVariable  # type: ignore[no-any-return]


_both_there_within = 5.0


def _made_in_two_threads(make: Any, within: float) -> list[Any]:
    global _both_there_within
    _both_there.reset()
    _both_there_within = within
    made: list[Any] = [None, None]

    def one(i: int) -> None:
        made[i] = make()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return made


_fresh = itertools.count(10_000)


def _maker(patch: str) -> Any:
    """Makes one node or input, each time the same, never made before."""
    from pytensor.graph.basic import FrozenApply, NominalVariable

    n = next(_fresh)
    if patch == "interned nodes threads":
        x = NominalVariable(n, ps.float64)
        return lambda: FrozenApply(ps.exp, (x,), (_MeetingType("float64"),))
    return lambda: NominalVariable(n, _MeetingType("float32"))


@pytest.mark.parametrize("patch", ["interned nodes threads", "interned nodes threads (inputs)"])
def test_two_threads_making_one_interned_node_at_once_get_one(
    patch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyTensor's interning keeps two (the patch off: what plain PyTensor does); equal inner graphs
    then compare unequal and the C module cache fails the compile. With the patch, one."""
    make = _maker(patch)
    first, second = _made_in_two_threads(make, within=0.3)
    assert first is second and first is make()
    make = _maker(patch)
    with monkeypatch.context() as off:
        off.delitem(state.applied, patch)
        first, second = _made_in_two_threads(make, within=5.0)
    assert first is not second and first is not None and second is not None


def test_an_interned_node_pickled_in_a_thread_comes_back_as_itself() -> None:
    """The check PyTensor's C module cache makes of each key it stores (read back from its file,
    it must equal the key), on a node made by two threads at once."""
    make = _maker("interned nodes threads")
    first, second = _made_in_two_threads(make, within=0.3)
    assert pickle.loads(pickle.dumps(first)) is first is second


def test_interned_nodes_made_by_keyword_are_the_same_objects() -> None:
    """PyTensor's own ``NominalVariable.clone`` names its arguments (``id=``, ``typ=``)."""
    from pytensor.graph.basic import FrozenApply, NominalVariable

    n = next(_fresh)
    x = NominalVariable(n, ps.float64)
    assert NominalVariable(id=n, typ=ps.float64) is x and x.clone() is x
    node = FrozenApply(ps.exp, (x,), (ps.float64,))
    assert FrozenApply(op=ps.exp, inputs=(x,), output_types=(ps.float64,)) is node
