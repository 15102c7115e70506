"""The float32 check: its cost beside compiling, and how it grows with the graph.

    python bench/float32_bench.py [--repeat 7]

1. On the demo's graph (logistic regression, float32): the time of ``check_float32``
   and of the pre-rewrite clone every compile keeps (for error locations), as a
   fraction of the compile time (goal: the check under 5%).
2. On generated graphs of 1,000 and 10,000 nodes with one float64 origin and every node
   after it a consequence: time per node (goal: linear, under 100 ms for 10,000).
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
os.environ.setdefault("MODECFG_FLAGS", "floatX=float32")

import numpy as np  # noqa: E402

import modecfg  # noqa: E402
from bench._common import plain_pytensor  # noqa: E402


def median_seconds(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def demo_graph(repeat: int) -> None:
    import pytensor

    from modecfg.checks import check_float32
    from modecfg.demo import build_graph

    g = build_graph()
    outputs = [*g["outputs"], *(u for _, u in g["updates"])]

    def compile_once() -> Any:
        return pytensor.function(g["inputs"], g["outputs"], updates=g["updates"])

    compile_once()  # the C modules are compiled once; afterwards compiles hit the cache
    with plain_pytensor():  # the baseline: PyTensor's own compile, modecfg's integration taken out
        compile_s = median_seconds(compile_once, repeat)
    ours_s = median_seconds(compile_once, repeat)
    fn = compile_once()
    graph = fn.maker.fgraph._modecfg_original
    check_s = median_seconds(lambda: check_float32(outputs), repeat * 5)
    clone_s = median_seconds(lambda: graph.clone(check_integrity=False), repeat * 5)
    print(f"1. demo graph: {len(graph.apply_nodes)} nodes, PyTensor's compile {compile_s * 1e3:.1f} ms, "
          f"with modecfg {ours_s * 1e3:.1f} ms ({ours_s / compile_s:.2f}x; warm C cache)")  # fmt: skip
    share = check_s / compile_s
    print(f"   check_float32          {check_s * 1e3:8.3f} ms  {share:7.2%} of compile  (goal < 5%)")
    print(f"   pre-rewrite clone      {clone_s * 1e3:8.3f} ms  {clone_s / compile_s:7.2%} of compile")


def chain(n_nodes: int) -> Any:
    import pytensor.tensor as pt

    x = pt.vector("x")
    out = x * np.float64(0.5)  # the one origin: a float64 constant
    for k in range(n_nodes - 2):  # ExpandDims + Mul above; each step below adds one node
        out = pt.exp(out) if k % 2 else out + x
    return out


def generated(repeat: int) -> None:
    from modecfg.checks import check_float32

    print("\n2. generated graphs (one float64 origin, every later node a consequence)")
    previous = None
    for n in (1_000, 10_000):
        out = chain(n)
        findings = check_float32(out)
        assert len(findings) == 1, findings
        t = median_seconds(lambda out=out: check_float32(out), repeat)
        per_node = t / n
        growth = f"  x{per_node / previous:.2f} per node vs 1,000" if previous else ""
        goal = "  (goal < 100 ms at 10,000)" if n == 10_000 else ""
        print(f"   {n:>6} nodes  {t * 1e3:8.2f} ms  {per_node * 1e6:6.2f} us/node{growth}{goal}")
        previous = per_node


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    import pytensor

    print(
        f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}, floatX {modecfg.config.floatX}\n"
    )
    demo_graph(args.repeat)
    generated(args.repeat)


if __name__ == "__main__":
    main()
