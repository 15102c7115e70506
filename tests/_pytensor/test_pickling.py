"""Compiled functions pickle with modecfg imported whenever plain PyTensor's do, and beyond.

Functions are compiled here once (module scope), pickled, and unpickled and called in
fresh interpreters: one that never imports modecfg (a function compiled through
PyTensor's door carries nothing of modecfg's), one that does (modecfg's own modes).
NanGuardMode and MonitorMode functions are still guarded and monitored there.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from tests.conftest import COMPILEDIR
from tests.fresh import pythonpath

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

ROOT = Path(__file__).resolve().parents[2]
X = [0.5, -1.0, 2.0]

# MonitorMode callbacks at module level, so that they pickle by reference; the fresh
# interpreter imports this module and counts there.
CALLS: list[str] = []


def monitor_pre(fgraph: Any, i: int, node: Any, fn: Any) -> None:  # PyTensor's signature
    CALLS.append(f"pre {node.op}")


def monitor_post(i: int, node: Any, fn: Any) -> None:  # Theano's signature
    CALLS.append(f"post {node.op}")


def _graph() -> tuple[Any, Any, Any]:
    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    return x, w, pt.special.softmax(x * w) + pt.log(x * x)


def _compile(case: str) -> Any:
    from pytensor.compile.mode import Mode

    x, w, out = _graph()
    updates = [(w, w + 1)]
    if case == "default":
        return pytensor.function([x], out, updates=updates)
    if case.startswith("linker="):
        linker = case.split("=", 1)[1]
        return pytensor.function([x], out, updates=updates, mode=Mode(linker=linker, optimizer="fast_run"))
    if case == "MonitorMode":
        mode = modecfg.MonitorMode(pre_func=monitor_pre, post_func=monitor_post)
        return modecfg.function([x], out, updates=updates, mode=mode)
    if case == "scan":
        seq = pt.vector("seq")
        total = pytensor.scan(
            lambda s, acc: acc + s * w, sequences=[seq], outputs_info=[pt.zeros(3)], return_updates=False
        )
        return pytensor.function([seq], total[-1], updates=updates)
    return pytensor.function([x], out, updates=updates, mode=case)


PLAIN = [
    "default",
    "FAST_RUN",
    "FAST_COMPILE",
    "linker=cvm",
    "linker=vm",
    "linker=c|py",
    "linker=numba",
    "scan",
]
OURS = ["DebugMode", "NanGuardMode", "MonitorMode"]

UNPICKLE = """
import json, pickle, sys, warnings
warnings.simplefilter("ignore")
if {with_modecfg}:
    import modecfg
import numpy as np
from pytensor.compile.sharedvalue import SharedVariable

results = {{}}
for case, blob in pickle.load(open(sys.argv[1], "rb")).items():
    try:
        fn = pickle.loads(blob)
        shared = [i.variable for i in fn.maker.inputs if isinstance(i.variable, SharedVariable)]
        arg = np.arange(1.0, 4.0) if case == "scan" else np.array({x})
        out = fn(arg)
        entry = {{"type": type(fn).__name__, "linker": type(fn.maker.linker).__name__,
                  "out": np.asarray(out).tolist(),
                  "w": shared[0].get_value().tolist()}}
        if case == "NanGuardMode":
            try:
                fn(np.array([0.0, 1.0, 1.0]))  # log(0): -inf
                entry["guard"] = "nothing raised"
            except Exception as exc:
                entry["guard"] = type(exc).__name__
            entry["w_after_bad_call"] = shared[0].get_value().tolist()
        if case == "MonitorMode":
            from tests._pytensor.test_pickling import CALLS
            entry["calls"] = len(CALLS)
        results[case] = entry
    except Exception as exc:
        results[case] = {{"error": f"{{type(exc).__name__}}: {{exc}}"}}
results["modecfg imported"] = "modecfg" in sys.modules
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def compiled() -> dict[str, Any]:
    return {case: _compile(case) for case in PLAIN + OURS}


def _unpickle_elsewhere(blobs: dict[str, bytes], tmp: Path, with_modecfg: bool) -> dict[str, Any]:
    path = tmp / "functions.pkl"
    path.write_bytes(pickle.dumps(blobs))
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath()
    env["PYTENSOR_FLAGS"] = f"base_compiledir={COMPILEDIR}"  # the tests' compile cache
    code = UNPICKLE.format(with_modecfg=with_modecfg, x=X)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(path)],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def without_modecfg(compiled: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    blobs = {case: pickle.dumps(compiled[case]) for case in PLAIN}
    return _unpickle_elsewhere(blobs, tmp_path_factory.mktemp("plain"), with_modecfg=False)


@pytest.fixture(scope="module")
def with_modecfg(compiled: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    blobs = {case: pickle.dumps(compiled[case]) for case in PLAIN + OURS}
    return _unpickle_elsewhere(blobs, tmp_path_factory.mktemp("ours"), with_modecfg=True)


def _expected(compiled: dict[str, Any], case: str) -> list[float]:
    fn = compiled[case]
    copy = pickle.loads(pickle.dumps(fn))  # the same call, without touching the fixture's state
    arg = np.arange(1.0, 4.0) if case == "scan" else np.array(X)
    return np.asarray(copy(arg)).tolist()  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", PLAIN)
def test_a_function_compiled_with_modecfg_imported_unpickles_without_it(
    case: str, compiled: dict[str, Any], without_modecfg: dict[str, Any]
) -> None:
    entry = without_modecfg[case]
    assert "error" not in entry, entry
    assert entry["type"] == "Function"
    np.testing.assert_allclose(entry["out"], _expected(compiled, case))
    assert entry["w"] == [2.0, 2.0, 2.0]  # the update ran there
    assert without_modecfg["modecfg imported"] is False


@pytest.mark.parametrize("case", PLAIN + OURS)
def test_every_mode_and_linker_round_trips_in_a_fresh_process(
    case: str, compiled: dict[str, Any], with_modecfg: dict[str, Any]
) -> None:
    entry = with_modecfg[case]
    assert "error" not in entry, entry
    np.testing.assert_allclose(entry["out"], _expected(compiled, case))
    assert entry["w"] == [2.0, 2.0, 2.0]


def test_a_nanguard_function_is_still_guarded_after_unpickling(with_modecfg: dict[str, Any]) -> None:
    entry = with_modecfg["NanGuardMode"]
    assert entry["linker"] == "GuardLinker"
    assert entry["guard"] == "NanGuardError"
    assert entry["w_after_bad_call"] == entry["w"]  # nothing written on the bad call


def test_a_monitormode_function_still_calls_its_callbacks_after_unpickling(
    compiled: dict[str, Any], with_modecfg: dict[str, Any]
) -> None:
    n_nodes = len(compiled["MonitorMode"].maker.fgraph.apply_nodes)
    assert with_modecfg["MonitorMode"]["calls"] == 2 * n_nodes  # pre and post, every node


def test_copy_and_deepcopy_of_a_guarded_function_keep_the_guard(compiled: dict[str, Any]) -> None:
    import copy

    fn = compiled["NanGuardMode"]
    for clone in (copy.copy(fn), copy.deepcopy(fn)):
        assert type(clone.maker.linker).__name__ == "GuardLinker"
        with pytest.raises(modecfg.NanGuardError):
            clone(np.array([0.0, 1.0, 1.0]))


def test_nanguard_reports_nan_in_graphs_with_inner_functions(tmp_path: Path) -> None:
    x = pt.vector("x")
    seq = pt.vector("seq")
    total = pytensor.scan(
        lambda s, acc: acc + pt.log(s), sequences=[seq], outputs_info=[pt.zeros(())], return_updates=False
    )
    with modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}):
        soft = modecfg.function([x], pt.special.softmax(pt.log(x)), mode="NanGuardMode")
        scanned = modecfg.function([seq], total[-1], mode="NanGuardMode")
        with pytest.raises(modecfg.NanGuardError, match="NaN"):
            soft(np.array([-1.0, 1.0]))
        with pytest.raises(modecfg.NanGuardError):
            scanned(np.array([1.0, -1.0]))
    assert list(tmp_path.iterdir())  # the dumps were written: the graphs pickled


def test_a_function_pickled_without_modecfg_loads_and_runs_with_it(tmp_path: Path) -> None:
    """The README's other direction: a function pickled by plain PyTensor (modecfg not importable)
    unpickles in a process with modecfg imported, and computes the same."""
    path = tmp_path / "plain.pkl"
    make = f"""
import pickle, sys
sys.modules["modecfg"] = None  # plain PyTensor
import numpy as np, pytensor, pytensor.tensor as pt
x = pt.vector("x")
fn = pytensor.function([x], pt.exp(x).sum() * 2)
open({str(path)!r}, "wb").write(pickle.dumps(fn))
print(float(fn(np.array([0.0, 1.0]))))
"""
    load = f"""
import pickle
import numpy as np, modecfg, pytensor
fn = pickle.loads(open({str(path)!r}, "rb").read())
print(float(fn(np.array([0.0, 1.0]))), type(pytensor.config._config_var_dict["floatX"]).__name__)
"""
    made = subprocess.run([sys.executable, "-c", make], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    loaded = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    value, view = loaded.stdout.split()
    assert float(value) == float(made.stdout.strip()) and view == "FlagParam"


def test_every_replaced_function_and_method_pickles_by_name_as_pytensors_own() -> None:
    """A function or method modecfg stands in for (``pytensor.function``, ``shared_constructor``,
    ``Op.__call__``), read as a user reads it, pickles by name as PyTensor's own does
    and loads as what that name holds: modecfg's stand-ins failed with "not the same object as
    pytensor.compile.maker.function". A function's pickle names PyTensor's, not modecfg's."""
    import importlib

    from modecfg._pytensor import patches
    from modecfg._pytensor.state import applied

    checked = []
    for patch in patches.every():
        if patch.name not in applied or patch.kind is not None:
            continue
        owner: Any = importlib.import_module(patch.module)
        *path, attr = patch.attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        read = getattr(owner, attr)
        assert pickle.loads(pickle.dumps(read)) is read, patch.name
        checked.append(patch.name)
    assert {"compile hook", "shared values (set)", "shared values (made)"} <= set(checked), checked
    for function in (pytensor.function, pytensor.compile.sharedvalue.shared_constructor):
        assert b"modecfg" not in pickle.dumps(function)


def test_a_shared_variables_methods_pickle_as_its_bound_methods() -> None:
    """``pickle.dumps(w.get_value)`` works as without modecfg: a bound method pickles as its
    instance and name (modecfg's stand-ins, on from the import now, are plain functions: a
    method's stand-in read on an instance, a partial, would pickle PyTensor's original by name)."""
    w = pytensor.shared(np.arange(3.0), name="w")
    get_value = pickle.loads(pickle.dumps(w.get_value))
    np.testing.assert_array_equal(get_value(), [0.0, 1.0, 2.0])
    set_value = pickle.loads(pickle.dumps(w.set_value))
    set_value(np.ones(3))  # (the unpickled variable's)
    np.testing.assert_array_equal(set_value.__self__.get_value(), np.ones(3))
    np.testing.assert_array_equal(w.get_value(), [0.0, 1.0, 2.0])
