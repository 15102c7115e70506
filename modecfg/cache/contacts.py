"""The compile caches' contacts with PyTensor: seven patches, beside their replacements, and what a
process's first compile does for the caches.

- "compile lock" (``compilelock.lock_ctx``): PyTensor's lock, taken as PyTensor takes it, never
  blind (who holds it is said after ``compile.wait``; ``compile.timeout`` names the holder).
- "module cache threads" (three patches): PyTensor's C module cache, one thread of a process at
  a time (pymc#7819).
- "interned nodes threads" (two patches): the nodes and inputs PyTensor interns for inner graphs
  (a fused ``Composite``'s), made once however many threads ask at once.
- "numba compile lock" (``NumbaLinker.jit_compile``): one process compiles a cached function,
  the others load it.
- :func:`first_compile`, a ``before_rewrites`` hook slot of the compile hook: at a process's first
  compile, PyTensor's cache layout is checked (the "cache layout" contact) and the caches'
  bounds are registered for the exit.

Light at import (``import modecfg`` registers these patches): the locks' machinery, logging and
PyTensor load at their first use. The replacements are module-level functions and classes: they
pickle.
"""

from __future__ import annotations

import contextlib
import sys
from _thread import _local
from collections.abc import Iterator
from typing import Any

from modecfg._locks import RLock, fork_safe
from modecfg._pytensor.patch import Patch
from modecfg.configuration import config

__all__ = [
    "COMPILE_LOCK",
    "INTERNED_NODES_THREADS",
    "INTERNED_NODES_THREADS_INPUTS",
    "MODULE_CACHE_THREADS",
    "MODULE_CACHE_THREADS_MADE_ONCE",
    "MODULE_CACHE_THREADS_REFRESH",
    "NUMBA_COMPILE_LOCK",
    "NUMBA_LOCKS",
    "PATCHES",
    "LockedCompile",
    "first_compile",
    "get_module_cache",
    "interned",
    "lock_ctx",
    "module_cache_refresh",
    "module_from_key",
    "numba_jit_compile",
    "numba_lock_path",
]  # fmt: skip


# -- the compile lock ----------------------------------------------------------------


@contextlib.contextmanager
def lock_ctx(_original: Any, lock_dir: Any = None, *, timeout: float | None = None) -> Iterator[None]:
    """PyTensor's compile lock, taken as PyTensor takes it (a FileLock on ``lock_dir/.lock``,
    once per directory, process and thread), never blind: after ``compile.wait`` seconds of
    waiting, who holds it is said once (logged, ``modecfg.cache``); after ``compile.timeout``
    seconds a CacheLockTimeout names the holder and the fixes. Unlike PyTensor's, a timeout
    leaves the lock's bookkeeping as it was (PyTensor's marks the directory locked for good,
    and that thread then compiles without the lock)."""
    import os
    from pathlib import Path

    import pytensor
    from pytensor.compile.compilelock import local_mem

    from modecfg.cache.holders import hold, release

    if lock_dir is None:
        lock_dir = pytensor.config.compiledir
    if timeout is None:
        timeout = float(config["compile.timeout"])
    key = f"{lock_dir}-{os.getpid()}"
    if key in local_mem._locks:  # this thread holds it already
        yield
        return
    taken = hold(
        Path(lock_dir) / ".lock",
        timeout=timeout,
        say_after=float(config["compile.wait"]),
        on_wait=_say_waiting,
        on_stale=_say_stale,
    )
    local_mem._locks[key] = True
    try:
        yield
    finally:
        local_mem._locks.pop(key, None)
        release(taken)


def _say_waiting(found: list[Any]) -> None:
    import logging
    import time

    who = ", ".join(h.describe(time.time()) for h in found if not h.waiting)
    logging.getLogger("modecfg.cache").warning(
        "waiting for the compile lock, held by %s (compile.wait; gives up after compile.timeout=%ss)",
        who or "a process this host cannot name",
        config["compile.timeout"],
    )


def _say_stale(holder: Any) -> None:
    import logging

    logging.getLogger("modecfg.cache").warning(
        "the compile lock was last taken by %s, which ended without letting go of it cleanly; "
        "a module it was writing, if any, PyTensor sets aside as broken",
        holder,
    )


# -- the numba cache: a function compiled once, however many processes want it ----------
# numba writes its cache files whole (a temporary renamed into place) but takes no lock: N
# processes compiling one graph into an empty cache each compile it, and their index files
# overwrite one another. The compile of a cached function (where numba compiles it, or loads
# it from the cache) holds a lock chosen by the function's cache key, so one process compiles and
# the others, once it is done, load. The locks are a fixed set of files (NUMBA_LOCKS), not one
# per function: lock files cannot be removed safely while others may wait on them, and a cache of
# thousands of functions would keep thousands. Two graphs whose keys share a lock wait for each
# other's first call, once: with 256 locks, two of 8 processes compiling different graphs share
# one with probability 0.1.

NUMBA_LOCKS = 256
_held_here = _local()  # the numba locks this thread holds (a nested first call)


def numba_lock_path(cache_dir: Any, cache_key: str) -> Any:
    """The lock of the function cached under ``cache_key`` in ``cache_dir``."""
    import hashlib
    from pathlib import Path

    bucket = int(hashlib.sha256(cache_key.encode()).hexdigest()[:8], 16) % NUMBA_LOCKS
    return Path(cache_dir) / ".locks" / f"{bucket:02x}.lock"


class LockedCompile:
    """What a cached numba dispatcher's ``_compile_for_args`` becomes: numba's dispatcher calls it
    where no compiled version fits the arguments (the first call, and a call with new argument
    types), and compiles there or loads from its cache; this holds its function's lock (see
    NUMBA_LOCKS) while it does. Every other call is the dispatcher's own, in C: nothing of
    modecfg's stands between PyTensor's thunk and numba (a wrapper around the dispatcher cost every
    call a Python frame, 4-6% of a small function's, issue 62). A module-level class: it pickles."""

    __slots__ = ("compile", "lock")

    def __init__(self, compile: Any, lock: Any) -> None:
        self.compile = compile  # the dispatcher's own _compile_for_args, bound
        self.lock = lock

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from modecfg.cache.holders import hold, release

        held: set[Any] = _held_here.__dict__.setdefault("locks", set())
        if self.lock in held:  # this thread holds it already (numba compiling again inside)
            return self.compile(*args, **kwargs)
        self.lock.parent.mkdir(exist_ok=True)
        taken = hold(
            self.lock,
            timeout=float(config["compile.timeout"]),
            say_after=float(config["compile.wait"]),
            on_wait=_say_waiting,
            on_stale=_say_stale,
        )
        held.add(self.lock)
        try:
            return self.compile(*args, **kwargs)
        finally:
            held.discard(self.lock)
            release(taken)

    def __repr__(self) -> str:
        return f"LockedCompile({self.compile!r})"


def numba_jit_compile(self: Any, jit_compile: Any, fn_and_cache: Any) -> Any:
    """NumbaLinker.jit_compile: the dispatcher of a function numba caches compiles (or loads)
    behind its lock; it is returned as numba made it."""
    import pytensor

    jitted = jit_compile(self, fn_and_cache)
    cache_key = fn_and_cache[1]
    if cache_key is None or not pytensor.config.numba__cache:
        return jitted
    from pytensor.link.numba.cache import NUMBA_CACHE_PATH  # where numba's locator puts it

    compile_ = getattr(jitted, "_compile_for_args", None)
    if compile_ is not None and not isinstance(compile_, LockedCompile):
        lock = numba_lock_path(NUMBA_CACHE_PATH, str(cache_key))
        jitted._compile_for_args = LockedCompile(compile_, lock)  # looked up on the instance by numba
    return jitted


# -- the C module cache, one thread at a time ---------------------------------------------
# PyTensor's ModuleCache keeps its entries in dicts that module_from_key reads and fills
# outside the compile lock (which serialises the C compilation itself, across processes and
# threads alike): threads compiling at once corrupt them ("Found two keys that are equal but
# have a different hash"). One lock per process around module_from_key keeps them whole; the
# compiler ran one module at a time already, under the compile lock.
_module_cache_lock = fork_safe(sys.modules[__name__], "_module_cache_lock", RLock)


def module_from_key(self: Any, from_key: Any, key: Any, lnk: Any) -> Any:
    """``ModuleCache.module_from_key``, one thread of this process at a time."""
    with _module_cache_lock:
        return from_key(self, key, lnk)


def module_cache_refresh(self: Any, refresh: Any, *args: Any, **kwargs: Any) -> Any:
    """``ModuleCache.refresh`` (it reads every key file and fills the same tables), likewise."""
    with _module_cache_lock:
        return refresh(self, *args, **kwargs)


def get_module_cache(get: Any, init_args: Any = None) -> Any:
    """``pytensor.link.c.basic.get_module_cache``: the process's one cache, made once (threads
    asking at once would each make one, each reading the whole cache)."""
    with _module_cache_lock:
        return get(init_args)


# -- interned nodes, made once ----------------------------------------------------------------
# A fused graph's Composite holds a FrozenFunctionGraph, whose nodes (FrozenApply) and inputs
# (NominalVariable) PyTensor interns in process-wide tables so that equality is identity: each
# looks its key up, makes what is missing and stores it, outside any lock. Two threads making
# the same node at once each keep their own, and two equal Composites then compare unequal; the
# C module cache reads a key back from its file, cannot find it and fails the compile ("Key not
# found in unpickled KeyData file", 1 run in 30 of test_compile_lock's sixteen threads on
# PyTensor 3.3.8). A lock of its own, not the module cache's (held through a C compilation).
_interning_lock = fork_safe(sys.modules[__name__], "_interning_lock", RLock)


def interned(new: Any, cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``FrozenApply.__new__`` and ``NominalVariable.__new__``: look up or make, one thread of
    the process at a time (a few microseconds, at compile time only)."""
    with _interning_lock:
        return new(cls, *args, **kwargs)


# -- a process's first compile ----------------------------------------------------------------

_first: list[bool] = []


def first_compile(fgraph: Any, mode: Any) -> None:
    """At the process's first compile (a ``before_rewrites`` hook): PyTensor's cache layout is
    checked, and where a cache's bound falls due (``trim.prepare_exit``: one not bounded at an
    exit within the hour), it is registered for the exit with everything it runs imported now: at
    exit nothing may be imported (filelock's import starts a thread pool, and Python 3.12 refuses
    that during shutdown, printing a traceback). A process that compiles nothing fills no cache
    and leaves them as they are."""
    if _first:
        return
    _first.append(True)
    import atexit

    from modecfg.cache.trim import prepare_exit

    say_cache_layout()
    if prepare_exit():  # a bound is due at this exit
        atexit.register(bound_at_exit)


def bound_at_exit() -> None:
    """The caches' bounds, applied at exit (:func:`modecfg.cache.trim.bound_at_exit`)."""
    from modecfg.cache.trim import bound_at_exit as bound

    bound()


def say_cache_layout() -> None:
    """PyTensor's cache layout, checked at the first compile (the "cache layout" contact, which
    the import no longer runs: it reads PyTensor's source): where it is not as modecfg knows it,
    modecfg's lock and cache bounds may miss PyTensor's, and that is said once."""
    from modecfg._pytensor.caches import layout_problem

    gone = layout_problem()
    if gone:
        from modecfg._warn import warn
        from modecfg.errors import PyTensorIntegrationWarning

        warn(f"PyTensor's cache layout is not as modecfg knows it: {gone}. modecfg's compile lock, "
             "`modecfg cache` and the cache bounds may miss PyTensor's own (modecfg doctor lists "
             "the contact)", PyTensorIntegrationWarning)  # fmt: skip


def forget_first_compile() -> None:
    """The next compile is a first one again (modecfg unwired; the exit bound unregistered)."""
    import atexit

    _first.clear()
    atexit.unregister(bound_at_exit)


# -- the patches -------------------------------------------------------------------------------


COMPILE_LOCK = Patch(
    name="compile lock",
    module="pytensor.compile.compilelock",
    attr="lock_ctx",
    bound_in=(
        "pytensor.link.c.basic",
        "pytensor.link.c.cmodule",
        "pytensor.link.c.cutils",
        "pytensor.link.c.lazylinker_c",
    ),
    params=("lock_dir",),
    replacement=lock_ctx,
    why="a compile waiting for the lock says once, after compile.wait seconds, who holds it (pid, "
    "command, host, since when); after compile.timeout a CacheLockTimeout names the holder and "
    "the fixes; a timeout no longer leaves the thread compiling without the lock",
)


MODULE_CACHE_THREADS = Patch(
    name="module cache threads",
    module="pytensor.link.c.cmodule",
    attr="ModuleCache.module_from_key",
    params=("self", "key", "lnk"),
    replacement=module_from_key,
    why="threads compiling at once: PyTensor's C module cache reads and fills its tables outside "
    "the compile lock, and corrupts them (pymc#7819); one thread of a process at a time keeps "
    "them whole",
)


MODULE_CACHE_THREADS_REFRESH = Patch(
    name="module cache threads (refresh)",
    module="pytensor.link.c.cmodule",
    attr="ModuleCache.refresh",
    params=("self",),
    replacement=module_cache_refresh,
    why="the C module cache's refresh fills the same tables: one thread of a process at a time",
)


MODULE_CACHE_THREADS_MADE_ONCE = Patch(
    name="module cache threads (made once)",
    module="pytensor.link.c.basic",
    attr="get_module_cache",
    params=("init_args",),
    replacement=get_module_cache,
    why="threads asking for the C module cache at once would each make one: it is made once",
)


INTERNED_NODES_THREADS = Patch(
    name="interned nodes threads",
    module="pytensor.graph.basic",
    attr="FrozenApply.__new__",
    params=("cls", "op", "inputs", "output_types"),
    replacement=interned,
    why="threads compiling at once: PyTensor interns the nodes of inner graphs (a fused "
    "Composite's) without a lock, two threads making one node keep two, equal graphs compare "
    "unequal and the C module cache fails the compile ('Key not found in unpickled KeyData "
    "file'); each node is made once",
)


INTERNED_NODES_THREADS_INPUTS = Patch(
    name="interned nodes threads (inputs)",
    module="pytensor.graph.basic",
    attr="NominalVariable.__new__",
    params=("cls", "id", "typ"),
    replacement=interned,
    why="the interned nodes' inputs, likewise: each made once",
)


NUMBA_COMPILE_LOCK = Patch(
    name="numba compile lock",
    module="pytensor.link.numba.linker",
    attr="NumbaLinker.jit_compile",
    params=("self", "fn_and_cache"),
    replacement=numba_jit_compile,
    why="numba takes no lock on its cache: processes compiling one graph into it each compiled "
    "it; where a cached function's dispatcher compiles or loads (its _compile_for_args, at its "
    "first call) it now holds a lock, so one compiles and the others load, never waiting blind "
    "(compile.wait, compile.timeout); its calls are numba's own",
)


PATCHES = (
    COMPILE_LOCK, MODULE_CACHE_THREADS, MODULE_CACHE_THREADS_REFRESH, MODULE_CACHE_THREADS_MADE_ONCE,
    INTERNED_NODES_THREADS, INTERNED_NODES_THREADS_INPUTS, NUMBA_COMPILE_LOCK,
)  # fmt: skip
