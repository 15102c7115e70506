"""modecfg beside plain PyTensor, in one table: what a PyTensor user pays for importing it.

    python bench/vs_pytensor.py [--rounds 5] [--only import,read,calls,compile,nanguard,per_graph]

Every figure comes from fresh interpreters, one that imports modecfg and one that never does,
alternated round after round (the machine drifts; a process where modecfg was uninstalled is
not plain PyTensor), all on one CPU (``--cpu``: the last this process may use unless told).
Each row prints plain PyTensor's median, modecfg's, and the median of the rounds' own ratios
(modecfg / plain) with their spread (lowest-highest): a ratio inside its spread of 1.00 is no
difference this machine can show.

Rows:

* ``import``: ``import pytensor`` against ``import pytensor, modecfg`` (the whole process, wall
  and CPU; bytecode cached). Goal 1.05x. Beside each ratio, the interval that holds the median
  of the rounds' ratios in 95% of resamplings of the rounds (a seeded bootstrap): one process's
  time here varies by several percent (``--same-sides --rounds 61``, plain PyTensor on both
  sides, gave 1.004x with the interval 0.989-1.028), so a ratio is told from 1.05x only where
  that interval says so; more rounds narrow it (201: about 0.025 wide). Below it, where the wall
  time goes, read from the same processes' monotonic clock (``time.perf_counter`` is one clock
  for the whole machine): the interpreter's start, PyTensor's import, modecfg's, and the exit
  (the interpreter's teardown, which walks and frees every object the imports made).
* ``read``, ``scope``: ``pytensor.config.floatX`` (in a process that entered no block, and in
  one whose ``change_flags`` block of floatX has ended) and ``with pytensor.config.change_flags(
  floatX="float32"): pass`` in each process. Goal: never slower beyond the spread.
* ``s.get_value()`` ... ``s.set_value(a, borrow=True)``: a shared variable's value read and set,
  copied and borrowed (3 float64 values), in each process. modecfg watches these doors from
  PyTensor's import, so that an array lent through them is never read stale by a JAX function:
  a few hundred ns a call at most.
* ``call <linker>``: a small function (``x * 2 + 1``, 10 float32 values) compiled by
  ``pytensor.function(..., mode=Mode(linker=...))`` and called: what the user wrote, in both.
  Goal: within the spread; jax 1.05x.
* ``compile <model>``: ``pytensor.function`` plus the first call of four models (logistic
  regression, MLP, scan RNN, a PyMC-like hierarchical logp with its gradient) in PyTensor's
  default mode, warm caches.
* ``nanguard <dtype>``: the Theano tutorial's exercise (400 x 784) per step under modecfg's
  NanGuardMode over modecfg's FAST_RUN (goal 1.3x), with PyTensor's own guard over PyTensor's
  default beside it.
* ``per_graph <workload>``: ``linker=per_graph``'s step over the best CPU linker's (cvm or
  numba) on each workload of ``bench/workloads.py`` (goal 1.15x); the linker it chose in brackets.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.workloads import WORKLOADS, environment  # noqa: E402

SECTIONS = ("import", "read", "calls", "compile", "nanguard", "per_graph")

# The import's child: the clock read where the script starts, after each import, and last.
IMPORT = """
import time
started = time.perf_counter()
import pytensor
imported = time.perf_counter()
{imports}
ours = time.perf_counter()
import json
print(json.dumps([started, imported, ours, time.perf_counter()]))
"""

# A child's last line of output is a JSON number (seconds) or object.
READ = """
import timeit, json
import pytensor
{imports}
c = pytensor.config
c.floatX
n = 200_000
print(json.dumps(min(timeit.repeat("c.floatX", globals=globals(), number=n, repeat=7)) / n))
"""

READ_AFTER = """
import timeit, json
import pytensor
{imports}
c = pytensor.config
with c.change_flags(floatX="float32"):
    pass
c.floatX
n = 200_000
print(json.dumps(min(timeit.repeat("c.floatX", globals=globals(), number=n, repeat=7)) / n))
"""

SCOPE = """
import timeit, json
import pytensor
{imports}
c = pytensor.config
stmt = "with c.change_flags(floatX='float32'): pass"
n = 20_000
print(json.dumps(min(timeit.repeat(stmt, globals=globals(), number=n, repeat=7)) / n))
"""

SHARED = """
import timeit, json
import numpy as np
import pytensor
{imports}
s = pytensor.shared(np.zeros(3), name="s")
a = np.zeros(3)
n = 100_000
print(json.dumps(min(timeit.repeat({stmt!r}, globals=globals(), number=n, repeat=7)) / n))
"""

CALL = """
import json, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import pytensor, pytensor.tensor as pt
from pytensor.compile.mode import Mode
{imports}
x = pt.vector("x", dtype="float32")
f = pytensor.function([x], x * 2 + 1, mode=Mode(linker={linker!r}, optimizer="fast_run"))
d = np.arange(10, dtype="float32")
for _ in range(2000):
    f(d)
best = []
for _ in range(9):
    t = time.perf_counter()
    for _ in range(2000):
        f(d)
    best.append((time.perf_counter() - t) / 2000)
print(json.dumps(min(best)))
"""

COMPILE = """
import json, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import pytensor, pytensor.tensor as pt
{imports}
{workload}
start = time.perf_counter()
fn = pytensor.function(inputs, outputs, updates=updates)
fn(*args)
print(json.dumps(time.perf_counter() - start))
"""

# The exercise as the tutorial writes it, in floatX; both sides build it with pytensor.function.
EXERCISE = """
import json, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import pytensor, pytensor.tensor as pt
{imports}
dtype = {dtype!r}
rng = np.random.default_rng(0)
data = (rng.standard_normal((400, 784)).astype(dtype), rng.integers(0, 2, 400).astype(dtype))
def build(mode):
    x, y = pt.matrix("x", dtype=dtype), pt.vector("y", dtype=dtype)
    w = pytensor.shared(rng.standard_normal(784).astype(dtype) * 0.01, name="w")
    b = pytensor.shared(np.asarray(0.0, dtype=dtype), name="b")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = pytensor.grad(cost, [w, b])
    lr = np.asarray(0.1, dtype=dtype)
    return pytensor.function([x, y], [p_1 > 0.5, xent], updates=[(w, w - lr * gw), (b, b - lr * gb)],
                             mode=mode)
modes = {{"default": None, "guard": "NanGuardMode"}}
fns = {{k: build(m) for k, m in modes.items()}}
times = {{k: [] for k in fns}}
for f in fns.values():
    for _ in range(20):
        f(*data)
for _ in range(15):
    for k, f in fns.items():
        t = time.perf_counter()
        for _ in range(20):
            f(*data)
        times[k].append((time.perf_counter() - t) / 20)
print(json.dumps({{k: min(v) for k, v in times.items()}}))
"""

Child = Callable[[str], str]  # the imports line -> the child's code


def child(code: str, env: dict[str, str]) -> tuple[Any, float, float, float]:
    """Run ``code`` in a fresh interpreter: its last line (JSON), its wall and CPU seconds, and
    the clock (``time.perf_counter``) when it was started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"a child failed: {last}")
    lines = proc.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if lines else None), wall, cpu, start


Run = tuple[Any, float, float, float]  # what child() returns


# The line the modecfg side adds; "" with --same-sides, to measure the bench itself (an A/A run)
OURS = ["import modecfg"]


def sides(make: Child, env: dict[str, str], rounds: int) -> dict[str, list[Run]]:
    """Each side's children, alternated: plain PyTensor first in even rounds, modecfg in odd."""
    runs: dict[str, list[Run]] = {"plain": [], "modecfg": []}
    codes = {"plain": make(""), "modecfg": make(OURS[0])}
    child(codes["plain"], env)  # caches warm (compile directory, numba, bytecode)
    child(codes["modecfg"], env)
    for i in range(rounds):
        for side in ("plain", "modecfg") if i % 2 == 0 else ("modecfg", "plain"):
            runs[side].append(child(codes[side], env))
    return runs


def row(label: str, plain: list[float], ours: list[float], unit: str, note: str = "") -> None:
    """One line: both medians, the median of the rounds' ratios and their spread."""
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}[unit]
    ratios = sorted(b / a for a, b in zip(plain, ours, strict=True))
    a, b = statistics.median(plain) * scale, statistics.median(ours) * scale
    print(
        f"  {label:<30} {a:>10.2f} {b:>10.2f} {unit:<3} {statistics.median(ratios):>6.3f}x "
        f"({ratios[0]:.3f}-{ratios[-1]:.3f})  {note}"
    )


def interval(plain: list[float], ours: list[float], resamples: int = 2000) -> tuple[float, float]:
    """The 95% interval of the median of the rounds' ratios, from ``resamples`` resamplings of the
    rounds (a percentile bootstrap; seeded, so that a table printed twice says the same)."""
    ratios = [b / a for a, b in zip(plain, ours, strict=True)]
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def available(linker: str) -> bool:
    from modecfg.linkers import table

    return any(r.name == linker and r.available for r in table())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each pair (default 5)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"sections: {','.join(SECTIONS)}")
    parser.add_argument("--same-sides", action="store_true",
                        help="both sides plain PyTensor (an A/A run): the ratios this machine "
                        "shows where there is no difference")  # fmt: skip
    parser.add_argument("--cpu", default="last",
                        help="the CPU every child runs on: a number, 'last' (the default: the last "
                        "this process may use) or 'any' (wherever the system puts each)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.same_sides:
        OURS[0] = ""
    only = args.only.split(",")
    unknown = [name for name in only if name not in SECTIONS]
    if unknown:
        parser.error(f"no section {', '.join(unknown)}; the sections: {', '.join(SECTIONS)}")
    sections = {"import": imports, "read": reads, "calls": calls, "compile": compiles,
                "nanguard": nanguard, "per_graph": per_graph}  # fmt: skip
    where = pin(args.cpu)
    if where is None and args.cpu != "any":
        parser.error(f"--cpu {args.cpu}: not a CPU this process may use, nor 'last' or 'any'")
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(Path(tmp))
        python = sys.version.split()[0]
        when = f"{time.strftime('%Y-%m-%d')}, Python {python}, {os.cpu_count()} cores, {where}"
        print(f"modecfg over plain PyTensor, fresh interpreters alternated, {args.rounds} rounds ({when})")
        print(f"  {'':<30} {'pytensor':>10} {'modecfg':>10} {'':<3} {'ratio':>7} (spread)")
        for name in SECTIONS:
            if name in only:
                sections[name](env, args.rounds)


def pin(cpu: str) -> str | None:
    """Run this process, and so every child, on one CPU: both sides of a row then run where the
    other did (on a shared machine one CPU may also serve the system's interrupts, and a child
    placed there runs up to 1.7x slower, which swamps a few percent). What it did, in words;
    None for a CPU this process may not use."""
    if cpu == "any" or not hasattr(os, "sched_setaffinity"):
        return "children on any CPU"
    allowed = sorted(os.sched_getaffinity(0))
    chosen = allowed[-1] if cpu == "last" else int(cpu) if cpu.isdigit() else None
    if chosen not in allowed:
        return None
    os.sched_setaffinity(0, {chosen})
    return f"children on CPU {chosen}"


def imports(env: dict[str, str], n: int) -> None:
    runs = sides(lambda imports: IMPORT.format(imports=imports), env, max(n, 9))
    for label, i in (("import: wall", 1), ("import: CPU", 2)):
        timed = [float(r[i]) for r in runs["plain"]], [float(r[i]) for r in runs["modecfg"]]
        low, high = interval(*timed)
        row(label, *timed, "ms", f"goal 1.05x; 95% interval {low:.3f}-{high:.3f}")
    # where the wall time goes: each side's medians (no ratio: one phase is modecfg's alone)
    print(f"  {'':<30} {'pytensor':>10} {'modecfg':>10} ms  {'':>6} the difference")
    for label, phase in (("start-up", _start_up), ("import pytensor", _pytensors),
                         ("import modecfg", _ours), ("exit", _exit)):  # fmt: skip
        plain = statistics.median(phase(r) for r in runs["plain"]) * 1e3
        ours = statistics.median(phase(r) for r in runs["modecfg"]) * 1e3
        print(f"  {'  ' + label:<30} {plain:>10.2f} {ours:>10.2f} ms  {'':>6} {ours - plain:+.2f} ms")


def _start_up(run: Run) -> float:
    return float(run[0][0] - run[3])


def _pytensors(run: Run) -> float:
    return float(run[0][1] - run[0][0])


def _ours(run: Run) -> float:
    return float(run[0][2] - run[0][1])


def _exit(run: Run) -> float:
    return float(run[3] + run[1] - run[0][3])


def reads(env: dict[str, str], n: int) -> None:
    for label, template in (("read pytensor.config.floatX", READ), ("read after a block", READ_AFTER),
                            ("change_flags scope", SCOPE)):  # fmt: skip
        runs = sides(functools.partial(_filled, template), env, n)
        row(label, _values(runs["plain"]), _values(runs["modecfg"]), "ns", "goal <= 1 within the spread")
    for stmt in (
        "s.get_value()",
        "s.get_value(borrow=True)",
        "s.set_value(a)",
        "s.set_value(a, borrow=True)",
    ):
        runs = sides(functools.partial(_filled, SHARED, stmt=stmt), env, n)
        row(stmt, _values(runs["plain"]), _values(runs["modecfg"]), "ns", "a door watched: +a few 100 ns")


def calls(env: dict[str, str], n: int) -> None:
    for linker in ("cvm", "c", "py", "numba", "jax"):
        if not available(linker):
            print(f"  call {linker:<21} (not usable here)")
            continue
        runs = sides(functools.partial(_filled, CALL, linker=linker), env, n)
        goal = "goal 1.05x" if linker == "jax" else "goal within the spread"
        row(f"call {linker}", _values(runs["plain"]), _values(runs["modecfg"]), "us", goal)


def compiles(env: dict[str, str], n: int) -> None:
    for model in ("logreg", "mlp", "rnn", "hier"):
        runs = sides(functools.partial(_filled, COMPILE, workload=WORKLOADS[model]), env, n)
        row(f"compile {model}", _values(runs["plain"]), _values(runs["modecfg"]), "s", "default mode, warm")


def nanguard(env: dict[str, str], n: int) -> None:
    for dtype in ("float32", "float64"):
        runs = sides(functools.partial(_filled, EXERCISE, dtype=dtype), env, n)
        plain = [r[0] for r in runs["plain"]]
        ours = [r[0] for r in runs["modecfg"]]
        row(f"nanguard {dtype}: guard", _field(plain, "guard"), _field(ours, "guard"), "ms",
            "modecfg's guard over PyTensor's")  # fmt: skip
        row(f"nanguard {dtype}: vs default", _field(ours, "default"), _field(ours, "guard"), "ms",
            "modecfg's guard over its own default mode: goal 1.3x")  # fmt: skip
        row("  (PyTensor's guard)", _field(plain, "default"), _field(plain, "guard"), "ms",
            "PyTensor's guard over its own default mode")  # fmt: skip


def _filled(template: str, imports: str, **fields: str) -> str:
    return template.format(imports=imports, **fields)


def _values(runs: list[Run]) -> list[float]:
    return [float(r[0]) for r in runs]


def _field(results: list[Any], key: str) -> list[float]:
    return [float(r[key]) for r in results]


PER_GRAPH = """
import json, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import pytensor, pytensor.tensor as pt
from pytensor.compile.mode import Mode
import modecfg
REPEAT = 1
{workload}
fns = {{name: pytensor.function(inputs, outputs, updates=updates, mode=Mode(linker=name))
        for name in ("cvm", "numba")}}
with modecfg.config.override(linker="per_graph"):
    fns["per_graph"] = modecfg.function(inputs, outputs, updates=updates)
chosen = type(fns["per_graph"].maker.linker).__name__
times = {{name: [] for name in fns}}
for f in fns.values():
    for _ in range(3):
        f(*args)
for _ in range(7):
    for name, f in fns.items():
        t = time.perf_counter()
        for _ in range(REPEAT * 5):
            f(*args)
        times[name].append(time.perf_counter() - t)
print(json.dumps({{"chosen": chosen, **{{k: min(v) for k, v in times.items()}}}}))
"""


def per_graph(env: dict[str, str], n: int) -> None:
    """per_graph against the best of cvm and numba: all three in one process per round."""
    for workload in ("logreg", "mlp", "rnn", "hier", "tiny"):
        code = PER_GRAPH.format(workload=WORKLOADS[workload])
        child(code, env)  # caches warm
        results = [child(code, env)[0] for _ in range(n)]
        best = [min(float(r["cvm"]), float(r["numba"])) for r in results]
        ours = [float(r["per_graph"]) for r in results]
        chosen = str(results[-1]["chosen"])
        row(
            f"per_graph {workload}",
            best,
            ours,
            "ms",
            f"over the best of cvm and numba ({chosen}); goal 1.15x",
        )


if __name__ == "__main__":
    main()
