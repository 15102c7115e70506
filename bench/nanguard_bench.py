"""NaN guards on the demo workload: modecfg's NanGuardMode beside FAST_RUN and PyTensor's own.

    python bench/nanguard_bench.py [--repeat 7] [--steps 200]

Per training step (logistic regression, 400 x 784, float32), median of repeated runs,
in one run: FAST_RUN, modecfg's NanGuardMode, PyTensor's NanGuardMode.
Goals: modecfg's guard within 1.3x FAST_RUN, and at least 4x faster than PyTensor's.
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

import modecfg  # noqa: E402


def per_step(model: Any, steps: int, repeat: int) -> float:
    model.train(model.x, model.y)  # warm up
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(steps):
            model.train(model.x, model.y)
        runs.append((time.perf_counter() - start) / steps)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    import pytensor
    from pytensor.compile.debug.nanguardmode import NanGuardMode as PyTensorNanGuard

    from modecfg.demo import compile_model

    versions = f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}"
    print(f"{versions}, floatX {modecfg.config.floatX}, linker=auto is {modecfg.linkers.best_linker()}\n")
    candidates = [
        ("FAST_RUN", "FAST_RUN"),
        ("modecfg NanGuardMode", "NanGuardMode"),
        ("PyTensor NanGuardMode", PyTensorNanGuard(True, True, True, optimizer="o4")),
    ]
    times = {}
    for label, mode in candidates:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = compile_model(mode)
        times[label] = per_step(model, args.steps, args.repeat)
    fast = times["FAST_RUN"]
    ours = times["modecfg NanGuardMode"]
    theirs = times["PyTensor NanGuardMode"]
    print(f"time per training step (median of {args.repeat} runs of {args.steps} steps)")
    for label, t in times.items():
        print(f"   {label:<24} {t * 1e3:8.3f} ms  {t / fast:6.2f}x FAST_RUN")
    print(f"\n   modecfg's guard / FAST_RUN        {ours / fast:6.2f}x  (goal <= 1.3x)")
    print(f"   PyTensor's guard / modecfg's      {theirs / ours:6.2f}x  (goal >= 4x)")


if __name__ == "__main__":
    main()
