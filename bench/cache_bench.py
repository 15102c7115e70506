"""Compile caches: many processes on one cache, and a warm cache that travels to a fresh worker.

    python bench/cache_bench.py [--procs 1,2,4,8] [--rounds 3] [--only procs|travel]

N processes start at once on one empty C module cache (its support modules built before the
clock starts), each compiling a graph of its own (a different elementwise op: its own C
module) with the cvm linker, and calling it once. The figure is the wall time from the
first start to the last exit, the median of the rounds, with and without modecfg imported
(the sides alternate within each round); the ratio ``modecfg/plain`` per N, and each side
against its own N=1. PyTensor holds its compile lock while the compiler runs, so the C
compilations of all processes run one at a time: the wall time grows with N whatever the
cores (see the table of docs/caches.md). Every process must succeed; a failure stops the run.

``travel``: a fresh worker's time to its first call of bench/workloads.py's hierarchical
logp+grad (a process started on an empty cache: imports, graph, compile, one call), cold
against warm (the same, after ``modecfg cache import`` of a cache exported where the model
was compiled once; the import is inside the time), per linker (cvm, numba), medians of the
rounds, and the ratio cold/warm.
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


FIRST_CALL = r"""
import sys, time
start = time.perf_counter()
sys.path.insert(0, sys.argv[3])
import modecfg, modecfg.cache
if sys.argv[2] != "-":
    modecfg.cache.import_cache(sys.argv[2])
import numpy as np, pytensor, pytensor.tensor as pt
from pytensor.compile.mode import Mode
from bench.workloads import WORKLOADS
scope = {"np": np, "pt": pt, "pytensor": pytensor}
exec(WORKLOADS["hier"], scope)  # the workload's own text, written in bench/workloads.py
f = pytensor.function(scope["inputs"], scope["outputs"], mode=Mode(linker=sys.argv[1]))
f(*scope["args"])
print(time.perf_counter() - start)
"""

EXPORT = "import sys; sys.path.insert(0, sys.argv[2]); import modecfg.cache as c; c.export_cache(sys.argv[1])"


def first_call(linker: str, base: Path, archive: Path | None) -> float:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL, linker, str(archive) if archive else "-", str(ROOT)],
        env=_env(base), capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"the first call failed:\n{done.stderr}")
    return float(done.stdout.split()[-1])


def travel(rounds: int) -> None:
    print("a fresh worker's first call of the hierarchical logp+grad, seconds (imports, compile, call),")
    print(f"  medians of {rounds} rounds: cold (empty cache) and warm (an exported cache imported first)")
    for linker in ("cvm", "numba"):
        cold, warm = [], []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as tmp:
                cold.append(first_call(linker, Path(tmp) / "driver", None))  # also warms the driver's cache
                archive = Path(tmp) / "warm.zip"
                subprocess.run([sys.executable, "-c", EXPORT, str(archive), str(ROOT)],
                               env=_env(Path(tmp) / "driver"), check=True)  # fmt: skip
                warm.append(first_call(linker, Path(tmp) / "worker", archive))
        c, w = statistics.median(cold), statistics.median(warm)
        print(f"  {linker:<6} cold {c:7.2f}  warm {w:6.2f}  cold/warm {c / w:5.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", default="1,2,4,8")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["procs", "travel"])
    args = parser.parse_args()
    if args.only != "procs":
        travel(args.rounds)
    if args.only == "travel":
        return
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
