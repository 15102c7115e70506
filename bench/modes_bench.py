"""Modes and linkers, modecfg beside plain PyTensor, measured in one run.

    python bench/modes_bench.py [--repeat 7] [--steps 200] [--skip-debug]

1. Per-call overhead: the same small graph compiled by ``modecfg.function`` and by
   ``pytensor.function`` with the same linker, called alternately; the ratio of median
   call times (goal: within 1.02 - modecfg returns PyTensor's own function).
2. Per-step time of the demo workload (logistic regression, 400 x 784, float32) under
   each mode, as a ratio to the fastest (goal: FAST_RUN is the fastest), with PyTensor's
   own default mode (numba) beside it.
The machines are noisy: read the ratios, and run it twice before believing a change.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MODECFG_FLAGS", "floatX=float32")

import numpy as np  # noqa: E402

import modecfg  # noqa: E402


def median_call_seconds(f: Any, args: tuple[Any, ...], calls: int, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            f(*args)
        runs.append((time.perf_counter() - start) / calls)
    return statistics.median(runs)


def overhead(repeat: int) -> None:
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.mode import Mode

    print("1. per-call overhead, modecfg.function / pytensor.function (same linker)")
    print(f"   {'linker':<10} {'pytensor':>12} {'modecfg':>12} {'ratio':>7}")
    x = pt.vector("x")
    out = x * 2 + 1
    data = np.arange(10, dtype=x.dtype)
    for row in modecfg.linkers.table():
        if not row.available:
            print(f"   {row.name:<10} {'-':>12} {'-':>12}   (not usable: {row.why_not})")
            continue
        with modecfg.config.override(linker=row.name):
            ours = modecfg.function([x], out, mode="FAST_RUN")
        theirs = pytensor.function([x], out, mode=Mode(linker=row.name, optimizer="o4"))
        ours(data), theirs(data)  # warm up (numba compiles at the first call)
        t_theirs, t_ours = [], []
        for _ in range(repeat):  # alternate, so that drift hits both alike
            t_theirs.append(median_call_seconds(theirs, (data,), 2000, 1))
            t_ours.append(median_call_seconds(ours, (data,), 2000, 1))
        a, b = statistics.median(t_theirs), statistics.median(t_ours)
        print(f"   {row.name:<10} {a * 1e6:10.2f}us {b * 1e6:10.2f}us {b / a:7.3f}")


def steps(repeat: int, n_steps: int, skip_debug: bool) -> None:
    from pytensor.compile import mode as ptmode

    from modecfg.demo import compile_model

    print(f"\n2. demo workload: time per training step (median of {repeat} runs of {n_steps} steps)")
    usable = [row.name for row in modecfg.modes.table() if row.available]
    candidates: list[tuple[str, Any]] = [(name, name) for name in usable]
    candidates.append(("pytensor default (NUMBA)", ptmode.NUMBA))
    results: list[tuple[str, float, str]] = []
    for label, mode in candidates:
        if skip_debug and label == "DebugMode":
            continue
        n = max(3, n_steps // 50) if label == "DebugMode" else n_steps
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = compile_model(mode)
        except Exception as exc:  # e.g. the C linker without BLAS
            print(f"   {label:<26} cannot compile the demo here: {type(exc).__name__}: {str(exc)[:70]}")
            continue
        model.train(model.x, model.y)  # warm up
        per_step = median_call_seconds(model.train, (model.x, model.y), n, repeat)
        results.append((label, per_step, modecfg.modes.build.describe_linker(model.train.maker.mode.linker)))
    fastest = min(t for _, t, _ in results)
    for label, per_step, linker in sorted(results, key=lambda r: r[1]):
        print(f"   {label:<26} {linker:<16} {per_step * 1e3:9.3f} ms  {per_step / fastest:7.2f}x fastest")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--skip-debug", action="store_true", help="leave DebugMode out (slow)")
    args = parser.parse_args()
    import pytensor

    print(f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}, modecfg {modecfg.__version__}, "
          f"floatX {modecfg.config.floatX}, linker=auto is {modecfg.linkers.best_linker()}\n")  # fmt: skip
    overhead(args.repeat)
    steps(args.repeat, args.steps, args.skip_debug)


if __name__ == "__main__":
    main()
