"""The cost of profiling on the demo workload: modecfg's beside PyTensor's own, in one run.

    python bench/profile_bench.py [--repeat 7] [--steps 200]

Per training step (logistic regression, 400 x 784, float32, cvm linker): without
profiling, with ``modecfg.function(..., profile=True)`` and with PyTensor's
``pytensor.function(..., profile=True)`` on the same linker. The overhead is the
difference to the unprofiled step; goal: modecfg's within 1.1x of PyTensor's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MODECFG_FLAGS", f"floatX=float32,profiling.destination={os.devnull}")

import modecfg  # noqa: E402


def per_step(train: Any, x: Any, y: Any, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        train(x, y)
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    import pytensor
    from pytensor.compile.mode import Mode

    from modecfg.demo import build_graph, build_problem

    linker = modecfg.linkers.best_linker()
    x, y = build_problem()

    def compile_with(kind: str) -> Any:
        g = build_graph()
        if kind == "plain":
            return pytensor.function(g["inputs"], g["outputs"], updates=g["updates"], mode=Mode(linker, "o4"))
        if kind == "modecfg":
            with modecfg.config.override(linker=linker):
                return modecfg.function(g["inputs"], g["outputs"], updates=g["updates"], profile=True)
        return pytensor.function(g["inputs"], g["outputs"], updates=g["updates"], mode=Mode(linker, "o4"),
                                 profile=True)  # fmt: skip

    functions = {kind: compile_with(kind) for kind in ("plain", "modecfg", "pytensor")}
    for f in functions.values():
        f(x, y)
    times: dict[str, list[float]] = {kind: [] for kind in functions}
    for _ in range(args.repeat):  # alternate, so that drift hits all alike
        for kind, f in functions.items():
            times[kind].append(per_step(f, x, y, args.steps))
    plain, ours, theirs = (statistics.median(times[k]) for k in ("plain", "modecfg", "pytensor"))
    print(f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}, linker {linker}")
    print(f"\ntime per training step (median of {args.repeat} runs of {args.steps} steps)")
    print(f"   not profiled                      {plain * 1e3:8.4f} ms")
    for label, t in (("modecfg.function(profile=True) ", ours), ("pytensor.function(profile=True)", theirs)):
        print(f"   {label}   {t * 1e3:8.4f} ms   overhead {(t - plain) * 1e6:7.2f} us")
    ratio = (ours - plain) / (theirs - plain) if theirs > plain else float("nan")
    print(f"\n   modecfg's overhead / PyTensor's   {ratio:6.2f}x  (goal <= 1.1x)")


if __name__ == "__main__":
    main()
