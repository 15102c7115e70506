"""This tree's configuration beside another revision's, measured in one run.

    python bench/heads.py [REV] [--rounds 7]     (REV: default HEAD~1; any git revision)

The revision is extracted (``git archive``) into a temporary directory; each figure is then
taken in fresh interpreters, one per tree per round, the trees alternating within each round
so that the machine's drift hits both alike. A figure is the median of its rounds, and the
ratio this/then the median of the rounds' own ratios (below 1: this tree is faster). The
figures are those issue 34 states its goal in:

* ``read``: ``modecfg.config.floatX`` and ``pytensor.config.floatX`` (the view), ns per read;
* ``override``: the whole ``with config.override(floatX="float32"): pass`` statement, a
  prepared override's enter+exit, and the floor: a call making an object whose enter sets and
  exit resets one ContextVar (the issue's measure: override statement / floor statement);
* ``change_flags``: ``with pytensor.config.change_flags(floatX="float32"): pass`` (the view);
* ``startup``: ``python -c "import modecfg; modecfg.config.floatX"``, ms of wall time;
* ``import after pytensor``: ``import modecfg`` in a process that imported PyTensor first, ms
  (timed inside the process: what issue 61's import row is made of, without the interpreter's
  start and exit, which swamp it there);
* ``compile``: building and compiling bench/workloads.py's MLP with cvm, warm C cache, ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each probe prints one JSON object of figures; it runs with the tree first on sys.path.
PROBE = r"""
import contextvars, json, sys, timeit
sys.path.insert(0, sys.argv[1])
import modecfg, pytensor
cfg, pt = modecfg.config, pytensor.config
cfg.floatX
VAR = contextvars.ContextVar("floor", default=None)
class Floor:
    __slots__ = ("flags", "token")
    def __init__(self, **flags): self.flags = flags
    def __enter__(self): self.token = VAR.set(self.flags)
    def __exit__(self, *exc): VAR.reset(self.token)
ns = {"cfg": cfg, "pt": pt, "Floor": Floor, "ov": cfg.override(floatX="float32")}
def ns_per(stmt, number):
    return min(timeit.repeat(stmt, globals=ns, number=number, repeat=5)) / number * 1e9
out = {
    "read: modecfg.config.floatX": ns_per("cfg.floatX", 1_000_000),
    "read: pytensor.config.floatX (view)": ns_per("pt.floatX", 1_000_000),
    "override: the statement": ns_per("with cfg.override(floatX='float32'): pass", 100_000),
    "override: prepared, enter+exit": ns_per("with ov: pass", 100_000),
    "floor: the statement": ns_per("with Floor(floatX='float32'): pass", 100_000),
    "change_flags (view): the statement": ns_per("with pt.change_flags(floatX='float32'): pass", 100_000),
}
print(json.dumps(out))
"""

COMPILE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numpy as np, pytensor, pytensor.tensor as pt
import modecfg
from pytensor.compile.mode import Mode
from bench.workloads import WORKLOADS
def build():
    scope = {"np": np, "pt": pt, "pytensor": pytensor}
    exec(WORKLOADS["mlp"], scope)  # the workload's own text, written in bench/workloads.py
    return pytensor.function(scope["inputs"], scope["outputs"], updates=scope["updates"],
                             mode=Mode(linker="cvm"))
build()  # warm: the C cache holds the modules after this
times = []
for _ in range(5):
    start = time.perf_counter()
    build()
    times.append(time.perf_counter() - start)
print(json.dumps({"compile: MLP, cvm, warm cache (ms)": sorted(times)[2] * 1e3}))
"""

STARTUP = "import sys; sys.path.insert(0, sys.argv[1]); import modecfg; modecfg.config.floatX"

AFTER_PYTENSOR = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import pytensor
start = time.perf_counter()
import modecfg
print((time.perf_counter() - start) * 1e3)
"""


def extract(rev: str, into: Path) -> str:
    """``rev``'s tree in ``into``; its full commit id."""
    found = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, check=True, capture_output=True, text=True)
    commit = found.stdout.strip()
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True)
    archive_path = into / "tree.tar"
    archive_path.write_bytes(archive.stdout)
    with tarfile.open(archive_path) as tar:
        tar.extractall(into / "tree", filter="data")
    return commit


def probe(tree: Path, env: dict[str, str]) -> dict[str, float]:
    figures = {}
    for code, args in ((PROBE, [str(tree)]), (COMPILE, [str(tree), str(ROOT)])):
        done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"the probe failed in {tree}:\n{done.stderr}")
        figures.update(json.loads(done.stdout.splitlines()[-1]))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", STARTUP, str(tree)], env=env, check=True)
    figures["startup: import modecfg; config.floatX (ms)"] = (time.perf_counter() - start) * 1e3
    done = subprocess.run([sys.executable, "-c", AFTER_PYTENSOR, str(tree)], env=env, check=True,
                          capture_output=True, text=True)  # fmt: skip
    figures["import modecfg after pytensor (ms)"] = float(done.stdout.split()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", nargs="?", default="HEAD~1", help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC")) and k != "PYTHONPATH"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached in both trees, as users have it
    with tempfile.TemporaryDirectory() as tmp:
        commit = extract(args.rev, Path(tmp))
        then_tree = Path(tmp) / "tree"
        now: dict[str, list[float]] = {}
        then: dict[str, list[float]] = {}
        for tree in (ROOT, then_tree):  # an untimed round: each tree's bytecode written
            probe(tree, env)
        for _ in range(args.rounds):
            for tree, into in ((ROOT, now), (then_tree, then)):
                for name, value in probe(tree, env).items():
                    into.setdefault(name, []).append(value)
    here = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
    )
    print(f"this tree ({here.stdout.strip()}) against {args.rev} ({commit[:10]}): medians of "
          f"{args.rounds} alternating rounds; ns unless marked")  # fmt: skip
    print(f"  {'figure':<46} {'this':>9} {'then':>9}  this/then (rounds' own ratios)")
    for name in now:
        ratios = [a / b for a, b in zip(now[name], then[name], strict=True)]
        print(f"  {name:<46} {statistics.median(now[name]):9.1f} {statistics.median(then[name]):9.1f}"
              f"  {statistics.median(ratios):5.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")  # fmt: skip
    for label, figures in (("this", now), ("then", then)):
        goal = [a / b for a, b in zip(figures["override: the statement"], figures["floor: the statement"],
                                      strict=True)]  # fmt: skip
        print(
            f"  override statement / floor statement, {label}: {statistics.median(goal):.2f}x "
            "(issue 34's goal: <= 1.3x)"
        )


if __name__ == "__main__":
    main()
