"""Many processes, one compile cache: modecfg beside plain PyTensor, measured in one run.

    python bench/cache_bench.py [--procs 1,2,4,8] [--rounds 3]

N processes start at once on one empty C module cache (its support modules built before the
clock starts), each compiling a graph of its own (a different elementwise op: its own C
module) with the cvm linker, and calling it once. The figure is the wall time from the
first start to the last exit, the median of the rounds, with and without modecfg imported
(the sides alternate within each round); the ratio ``modecfg/plain`` per N, and each side
against its own N=1. PyTensor holds its compile lock while the compiler runs, so the C
compilations of all processes run one at a time: the wall time grows with N whatever the
cores (see the README's table). Every process must succeed; a failure stops the run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = ("exp", "tanh", "log1p", "sqrt", "sin", "cos", "arctan", "sinh")

CHILD = r"""
import sys
if sys.argv[2] == "modecfg":
    sys.path.insert(0, sys.argv[3])
    import modecfg  # noqa: F401
import numpy as np, pytensor, pytensor.tensor as pt
from pytensor.compile.mode import Mode
x = pt.vector("x")
y = getattr(pt, sys.argv[1])(x * 0.5 + 1.5).sum()
f = pytensor.function([x], y, mode=Mode(linker="cvm"))
f(np.ones(3, dtype=x.dtype))
"""

WARM = "import pytensor, pytensor.link.c.cutils, pytensor.link.c.lazylinker_c as l; l.try_reload"


def _env(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC")) and k != "PYTHONPATH"}
    env["PYTENSOR_FLAGS"] = f"base_compiledir={base}"
    env["MODECFGRC"] = ""
    return env


def batch(n: int, side: str, template: Path) -> float:
    """Wall seconds for ``n`` processes compiling one graph each into a copy of ``template``."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        shutil.copytree(template, base)
        env = _env(base)
        start = time.perf_counter()
        procs = [
            subprocess.Popen([sys.executable, "-c", CHILD, OPS[i % len(OPS)], side, str(ROOT)], env=env,
                             stderr=subprocess.PIPE, text=True)
            for i in range(n)
        ]  # fmt: skip
        for proc in procs:
            _, err = proc.communicate(timeout=1800)
            if proc.returncode:
                raise SystemExit(f"a {side} process failed:\n{err}")
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", default="1,2,4,8")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    counts = [int(n) for n in args.procs.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template"
        subprocess.run([sys.executable, "-c", WARM], env=_env(template), check=True)  # support modules
        times: dict[tuple[int, str], list[float]] = {}
        for _ in range(args.rounds):
            for n in counts:
                for side in ("plain", "modecfg"):
                    times.setdefault((n, side), []).append(batch(n, side, template))
    med = {key: statistics.median(values) for key, values in times.items()}
    print(f"{os.cpu_count()} cores; N processes, one graph each, one empty C cache; wall seconds, "
          f"medians of {args.rounds} rounds")  # fmt: skip
    head = ("N", "plain", "modecfg", "modecfg/plain", "plain/N=1", "modecfg/N=1")
    print("  {:>3} {:>8} {:>8} {:>14} {:>10} {:>12}".format(*head))
    for n in counts:
        plain, ours = med[(n, "plain")], med[(n, "modecfg")]
        one_plain, one_ours = med[(counts[0], "plain")], med[(counts[0], "modecfg")]
        ratios = f"{ours / plain:14.2f} {plain / one_plain:10.2f} {ours / one_ours:12.2f}"
        print(f"  {n:>3} {plain:8.2f} {ours:8.2f} {ratios}")


if __name__ == "__main__":
    main()
