"""CompareMode on the demo workload, beside FAST_RUN and DebugMode.

    python bench/compare_bench.py [--repeat 5] [--steps 10]

The demo (logistic regression, 400 x 784, float32) compiled in FAST_RUN (plain PyTensor, numba),
in PyTensor's DebugMode (Python against C, node by node) and in modecfg's CompareMode (numba,
compared with every other backend this machine has: cvm, py, jax, and the graph as written).
Printed: the time to a first compared call (compile, the references' compiles, one call: the
goal is under 30 s), then the time per training step, median of alternating rounds, and each
mode's ratio to FAST_RUN: what a debugging session pays per call.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MODECFG_FLAGS", "floatX=float32")

import modecfg  # noqa: E402
from bench._common import median, plain_pytensor, rounds  # noqa: E402


def _step(model: Any) -> Any:
    return lambda: model.train(model.x, model.y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    import pytensor
    from pytensor.compile.mode import Mode

    from modecfg.compare.mode import CompareMode, counted, reference_linkers
    from modecfg.demo import compile_model

    print(f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}, floatX {modecfg.config.floatX}")
    references = ", ".join(reference_linkers("numba"))
    print(f"CompareMode on numba compares with: {references}, the graph as written\n")

    start = time.perf_counter()
    compared = compile_model(CompareMode(linker="numba"))
    compared.train(compared.x, compared.y)
    first = time.perf_counter() - start
    print(f"compile + first compared call on every backend: {first:.1f} s (goal < 30 s); "
          f"{counted.calls} call(s) compared, none differed")  # fmt: skip

    with warnings.catch_warnings(), plain_pytensor():
        warnings.simplefilter("ignore")
        fast = compile_model(Mode(linker="numba", optimizer="o4"))
    debug = compile_model("DebugMode")
    steps = {"FAST_RUN (numba)": _step(fast), "DebugMode": _step(debug), "CompareMode": _step(compared)}
    times = {label: median(t) for label, t in rounds(steps, args.repeat, args.steps).items()}
    base = times["FAST_RUN (numba)"]
    print(f"\ntime per training step (median of {args.repeat} alternating rounds of {args.steps} steps)")
    for label, t in times.items():
        print(f"   {label:<18} {t * 1e3:10.2f} ms  {t / base:8.1f}x FAST_RUN")
    print(f"   CompareMode / DebugMode  {times['CompareMode'] / times['DebugMode']:6.2f}x")


if __name__ == "__main__":
    main()
