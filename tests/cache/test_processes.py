"""Many processes, one cache: the same graph compiled at once by several fresh processes into an
empty cache is built once, in the C cache (PyTensor's compile lock) and in numba's (modecfg's)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from modecfg.cache.entries import scan
from tests.fresh import pythonpath

pytest.importorskip("pytensor")

WORKER = """
import json, os, sys, time
import numpy as np
import modecfg, pytensor, pytensor.tensor as pt
from pytensor.compile.mode import Mode
x = pt.vector("x")
f = pytensor.function([x], (pt.exp(x) * 3 + pt.tanh(x)).sum(), mode=Mode(linker=sys.argv[1]))
print("ready", flush=True)
while not os.path.exists(sys.argv[2]):  # every process starts its first call at once
    time.sleep(0.01)
value = float(f(np.ones(3)))
jit = getattr(f.vm, "jit_fn", None)
misses = sum(jit.stats.cache_misses.values()) if jit is not None else None
print(json.dumps({"value": value, "misses": misses}))
"""


def _at_once(linker: str, base: Path, n: int) -> list[dict[str, float]]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env.update(MODECFGRC="", PYTHONPATH=pythonpath(), PYTENSOR_FLAGS=f"base_compiledir={base}")
    go = base / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, linker, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(n)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line == "ready", proc.communicate(timeout=60)[1]
        go.touch()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
        return results
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=30)


EXPECTED = 3 * (3 * math.e + math.tanh(1.0))


def test_processes_compiling_one_numba_graph_at_once_compile_it_once(tmp_path: Path) -> None:
    """Plain PyTensor: each of the 4 compiles it (numba takes no lock), 4 misses in 5 of 5 runs here."""
    results = _at_once("numba", tmp_path, 4)
    assert [r["value"] for r in results] == pytest.approx([EXPECTED] * 4)
    assert sorted(r["misses"] for r in results) == [0, 0, 0, 1]
    assert list((tmp_path / "numba" / ".locks").iterdir()) != []


def test_processes_compiling_one_c_graph_at_once_build_each_module_once(tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    (one,) = _at_once("cvm", alone, 1)
    together = tmp_path / "together"
    results = _at_once("cvm", together, 4)
    assert [r["value"] for r in results] == pytest.approx([one["value"]] * 4)

    def modules(base: Path) -> list[str]:
        (compiledir,) = [p for p in base.iterdir() if p.name.startswith("compiledir_")]
        entries = scan("C", compiledir, support=("cutils_ext", "lazylinker_ext")).entries
        return sorted(e.name for e in entries)

    assert len(modules(together)) == len(modules(alone)) > 0


def test_a_compile_holds_its_lock_and_every_call_is_numbas_own(tmp_path: Path) -> None:
    """Numba calls ``_compile_for_args`` where no compiled version fits the arguments: the first
    call, and a call with new types. That compile (or load from the cache) holds the function's
    lock; every other call is the dispatcher's own, nothing of modecfg's in its way (issue 62)."""
    import pickle

    import filelock

    numba = pytest.importorskip("numba")
    from modecfg.cache.contacts import LockedCompile, numba_lock_path

    lock = numba_lock_path(tmp_path, "some key")
    assert lock == numba_lock_path(tmp_path, "some key") and lock.parent == tmp_path / ".locks"
    seen: list[bool] = []

    def held() -> bool:
        probe = filelock.FileLock(lock)
        try:
            probe.acquire(timeout=0)
        except filelock.Timeout:
            return True
        probe.release()
        return False

    @numba.njit
    def add(a: Any) -> Any:
        return a + 1

    numbas = add._compile_for_args

    def compiling(*args: Any) -> Any:
        seen.append(held())
        return numbas(*args)

    add._compile_for_args = LockedCompile(compiling, lock)
    assert (add(1), add(2), add(3)) == (2, 3, 4)
    assert seen == [True]  # compiled once, inside the lock
    assert add(1.5) == 2.5 and seen == [True, True]  # new types: compiled again, inside it
    assert not held()  # let go after
    assert pickle.loads(pickle.dumps(LockedCompile(len, lock)))("ab") == 2


def test_a_cached_numba_function_pytensor_compiles_is_numbas_dispatcher_locked_where_it_compiles() -> None:
    pytest.importorskip("numba")
    import numpy as np
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.mode import Mode

    from modecfg.cache.contacts import LockedCompile

    x = pt.vector("x")
    fn = pytensor.function([x], pt.exp(x) * 3, mode=Mode(linker="numba"))
    jitted = fn.vm.jit_fn
    assert type(jitted).__module__.startswith("numba")  # no wrapper between the thunk and numba
    assert isinstance(jitted._compile_for_args, LockedCompile)
    assert fn(np.zeros(2)).tolist() == [3.0, 3.0]


def test_the_numba_lock_patch_is_on_and_says_why() -> None:
    from modecfg._pytensor import patches

    pytest.importorskip("numba")
    import pytensor.link.numba.linker  # noqa: F401  (the patch waits for its module)

    (row,) = [r for r in patches.status() if r.patch.name == "numba compile lock"]
    assert row.state == "on", row.reason


def test_a_first_call_waiting_too_long_names_the_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.cache import contacts
    from modecfg.cache.contacts import LockedCompile, numba_lock_path
    from modecfg.errors import CacheLockTimeout

    lock = numba_lock_path(tmp_path, "k")
    lock.parent.mkdir()
    code = (
        "import filelock, time; l = filelock.FileLock(%r); l.acquire(); print('held', flush=True); "
        "time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code % str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        calls: list[int] = []
        locked = LockedCompile(lambda: calls.append(1), lock)
        start = time.monotonic()
        # compile.timeout is fixed once PyTensor is in use: the values the lock reads, for this test
        monkeypatch.setattr(contacts, "config", {"compile.timeout": 0.3, "compile.wait": 0.1})
        with pytest.raises(CacheLockTimeout, match=rf"stayed held for 0\.3 s, by pid {proc.pid}"):
            locked()
        assert calls == [] and time.monotonic() - start < 30
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert locked() is None and calls == [1]
