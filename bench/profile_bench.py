"""The cost of profiling on the demo workload: modecfg's beside PyTensor's own, in one run.

    python bench/profile_bench.py [--repeat 7] [--steps 200]

Per training step (logistic regression, 400 x 784, float32, cvm linker): without
profiling, with ``modecfg.function(..., profile=True)`` and with PyTensor's
``pytensor.function(..., profile=True)`` on the same linker. The overhead is the
difference to the unprofiled step, taken round by round (the three alternate); goal:
modecfg's within 1.1x of PyTensor's. The unprofiled and PyTensor's sides are compiled by
PyTensor itself, with modecfg's integration taken out.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MODECFG_FLAGS", f"floatX=float32,profiling.destination={os.devnull}")

import modecfg  # noqa: E402
from bench._common import median, paired_differences, plain_pytensor, rounds  # noqa: E402


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
        if kind == "modecfg":
            with modecfg.config.override(linker=linker):
                return modecfg.function(g["inputs"], g["outputs"], updates=g["updates"], profile=True)
        with plain_pytensor():  # PyTensor itself: modecfg's integration taken out
            return pytensor.function(g["inputs"], g["outputs"], updates=g["updates"], mode=Mode(linker, "o4"),
                                     profile=(kind == "pytensor"))  # fmt: skip

    functions = {kind: compile_with(kind) for kind in ("plain", "modecfg", "pytensor")}
    times = rounds({kind: (lambda f=f: f(x, y)) for kind, f in functions.items()}, args.repeat, args.steps)
    plain = median(times["plain"])
    print(f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}, linker {linker}")
    print(f"\ntime per training step (median of {args.repeat} alternating rounds of {args.steps} steps)")
    print(f"   not profiled                      {plain * 1e3:8.4f} ms")
    overheads = {}
    for label, kind in (
        ("modecfg.function(profile=True) ", "modecfg"),
        ("pytensor.function(profile=True)", "pytensor"),
    ):
        overhead, spread = paired_differences(times[kind], times["plain"])
        overheads[kind] = (overhead, spread)
        print(f"   {label}   {median(times[kind]) * 1e3:8.4f} ms   overhead {overhead * 1e6:7.2f} us "
              f"(+-{spread * 1e6:.2f} us between rounds)")  # fmt: skip
    (ours, ours_noise), (theirs, theirs_noise) = overheads["modecfg"], overheads["pytensor"]
    if theirs <= 2 * theirs_noise or ours <= 2 * ours_noise:
        print("\n   modecfg's overhead / PyTensor's   below noise: an overhead is within twice its spread")
    else:
        print(f"\n   modecfg's overhead / PyTensor's   {ours / theirs:6.2f}x  (goal <= 1.1x)")


if __name__ == "__main__":
    main()
