"""Modes and linkers, modecfg beside plain PyTensor, measured in one run.

    python bench/modes_bench.py [--repeat 7] [--steps 200] [--skip-debug]

1. Per-call overhead: the same small graph compiled by ``modecfg.function`` and by
   ``pytensor.function`` with the same linker, called alternately; the ratio of median
   call times (goal: within 1.02 - modecfg returns PyTensor's own function).
2. Per-step time of the demo workload (logistic regression, 400 x 784, float32) under
   each mode, as a ratio to the fastest (goal: FAST_RUN is the fastest), with PyTensor's
   own default mode (numba) beside it; the modes alternate round after round (DebugMode,
   slow, on its own).
PyTensor's side is compiled by PyTensor itself, with modecfg's integration taken out.
The machines are noisy: read the ratios, and run it twice before believing a change.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MODECFG_FLAGS", "floatX=float32")

import numpy as np  # noqa: E402

import modecfg  # noqa: E402
from bench._common import median, plain_pytensor, rounds  # noqa: E402


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
        with plain_pytensor():  # PyTensor itself: modecfg's integration taken out
            theirs = pytensor.function([x], out, mode=Mode(linker=row.name, optimizer="o4"))
        calls = {"theirs": functools.partial(theirs, data), "ours": functools.partial(ours, data)}
        times = rounds(calls, repeat, 2000)
        a, b = median(times["theirs"]), median(times["ours"])
        print(f"   {row.name:<10} {a * 1e6:10.2f}us {b * 1e6:10.2f}us {b / a:7.3f}")


def steps(repeat: int, n_steps: int, skip_debug: bool) -> None:
    from pytensor.compile import mode as ptmode

    from modecfg.demo import compile_model

    print(f"\n2. demo workload: time per training step (median of {repeat} runs of {n_steps} steps)")
    usable = [row.name for row in modecfg.modes.table() if row.available]
    candidates: list[tuple[str, Any]] = [(name, name) for name in usable]
    candidates.append(("pytensor default (NUMBA)", ptmode.NUMBA))
    steps: dict[str, Any] = {}
    linkers: dict[str, str] = {}
    for label, mode in candidates:
        if skip_debug and label == "DebugMode":
            continue
        try:
            with (
                warnings.catch_warnings(),
                plain_pytensor() if label.startswith("pytensor") else nullcontext(),
            ):
                warnings.simplefilter("ignore")
                model = compile_model(mode)
        except Exception as exc:  # e.g. the C linker without BLAS
            print(f"   {label:<26} cannot compile the demo here: {type(exc).__name__}: {str(exc)[:70]}")
            continue
        steps[label] = lambda model=model: model.train(model.x, model.y)
        linkers[label] = modecfg.modes.build.describe_linker(model.train.maker.mode.linker)
    slow = {label: steps.pop(label) for label in list(steps) if label == "DebugMode"}
    results = {label: median(t) for label, t in rounds(steps, repeat, n_steps).items()}  # alternating
    results |= {label: median(t) for label, t in rounds(slow, repeat, max(3, n_steps // 50)).items()}
    fastest = min(results.values())
    for label, per_step in sorted(results.items(), key=lambda r: r[1]):
        ratio = per_step / fastest
        print(f"   {label:<26} {linkers[label]:<16} {per_step * 1e3:9.3f} ms  {ratio:7.2f}x fastest")


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
