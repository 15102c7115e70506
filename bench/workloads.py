"""Workloads under every linker that runs here: compile time (cold and warm caches) and step time.

    python bench/workloads.py [--steps 30] [--only rnn,hier] [--linkers cvm,numba]

Each (workload, linker) pair runs in its own fresh interpreter, twice: first with empty
compile caches (PyTensor's compile directory and numba's cache in a new temporary
directory: "cold"), then again with the caches that run left ("warm"). Compile time is
``pytensor.function`` plus the first call (numba compiles at the first call); step time
is the median of ``--steps`` calls after that; the warm figures are the median of ``--warm``
fresh interpreters. The column ``per_graph`` is
``modecfg.function`` with ``linker=per_graph`` (modecfg's choice for each graph, opt-in), in
the same way, and names the linker it chose; ``numba`` is what the default (``linker=auto``,
PyTensor's) runs. Ratios are to the best of the row: a ratio above 1 is the regret of that
choice on that workload. The machines are noisy: compare
ratios within one run, and run it twice before believing a change.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each workload: builds (inputs, outputs, updates, args) with PyTensor; `steps` calls are timed.
WORKLOADS: dict[str, str] = {
    "logreg": """
rng = np.random.default_rng(0)
X = pt.matrix("X"); y = pt.vector("y")
w = pytensor.shared(np.zeros(784), "w"); b = pytensor.shared(0.0, "b")
p = pt.sigmoid(X @ w + b)
cost = -(y * pt.log(p) + (1 - y) * pt.log1p(-p)).mean() + 0.01 * (w ** 2).sum()
gw, gb = pytensor.grad(cost, [w, b])
inputs, outputs, updates = [X, y], cost, [(w, w - 0.1 * gw), (b, b - 0.1 * gb)]
args = (rng.normal(size=(400, 784)), (rng.random(400) > 0.5).astype(float))
""",
    "mlp": """
rng = np.random.default_rng(0)
X = pt.matrix("X"); y = pt.vector("y")
W1 = pytensor.shared(rng.normal(size=(784, 512)) * 0.01, "W1")
W2 = pytensor.shared(rng.normal(size=(512,)) * 0.01, "W2")
h = pt.tanh(X @ W1)
cost = ((h @ W2 - y) ** 2).mean()
g1, g2 = pytensor.grad(cost, [W1, W2])
inputs, outputs, updates = [X, y], cost, [(W1, W1 - 0.01 * g1), (W2, W2 - 0.01 * g2)]
args = (rng.normal(size=(256, 784)), rng.normal(size=256))
""",
    "rnn": """
rng = np.random.default_rng(0)
xs = pt.matrix("xs")
Wx = pytensor.shared(rng.normal(size=(8, 64)) * 0.1, "Wx")
Wh = pytensor.shared(rng.normal(size=(64, 64)) * 0.1, "Wh")
def step(x, h):
    return pt.tanh(x @ Wx + h @ Wh)
res = pytensor.scan(step, sequences=[xs], outputs_info=[pt.zeros(64)])
hs = res[0] if isinstance(res, tuple) else res  # (outputs, updates) up to PyTensor 3.x
cost = (hs[-1] ** 2).sum()
gx, gh = pytensor.grad(cost, [Wx, Wh])
inputs, outputs, updates = [xs], cost, [(Wx, Wx - 0.01 * gx), (Wh, Wh - 0.01 * gh)]
args = (rng.normal(size=(50, 8)),)
""",
    "hier": """
# A hierarchical model's log-density and its gradient, as PyMC compiles them: many small
# elementwise ops, gammaln / log1p / softplus, indexing by group.
rng = np.random.default_rng(0)
J, N = 40, 2000
group = rng.integers(0, J, N)
data = rng.normal(size=N)
mu = pt.scalar("mu"); log_tau = pt.scalar("log_tau"); theta = pt.vector("theta")
log_sigma = pt.scalar("log_sigma"); nu_raw = pt.scalar("nu_raw")
tau, sigma = pt.exp(log_tau), pt.exp(log_sigma)
nu = pt.softplus(nu_raw) + 1.0
idx = pytensor.shared(group, "group")
obs = pytensor.shared(data, "obs")
z = (obs - theta[idx]) / sigma
loglik = (pt.gammaln((nu + 1) / 2) - pt.gammaln(nu / 2) - 0.5 * pt.log(nu * np.pi) - log_sigma
          - (nu + 1) / 2 * pt.log1p(z ** 2 / nu)).sum()
logprior = (-0.5 * ((theta - mu) / tau) ** 2 - log_tau).sum() - 0.5 * mu ** 2 - 0.5 * log_tau ** 2 \\
    - 0.5 * log_sigma ** 2 - pt.softplus(-nu_raw)
logp = loglik + logprior
grads = pytensor.grad(logp, [mu, log_tau, theta, log_sigma, nu_raw])
inputs, outputs, updates = [mu, log_tau, theta, log_sigma, nu_raw], [logp, *grads], []
args = (0.1, -0.2, rng.normal(size=J), 0.3, 1.0)
""",
    "elemwise": """
rng = np.random.default_rng(0)
x = pt.vector("x"); y = pt.vector("y")
out = pt.exp(-x ** 2) * pt.sin(y) + pt.log1p(x ** 2) * pt.cos(x * y) - pt.sqrt(pt.abs(y) + 1)
inputs, outputs, updates = [x, y], out, []
args = (rng.normal(size=1_000_000), rng.normal(size=1_000_000))
""",
    "tiny": """
# Many tiny calls: the per-call overhead of each linker (one "step" is 100 calls).
a = pt.scalar("a"); b = pt.scalar("b")
inputs, outputs, updates = [a, b], a * b + 1.0, []
args = (2.0, 3.0)
REPEAT = 100
""",
}

RUNNER = """
import json, statistics, sys, time
import numpy as np
{imports}
import pytensor, pytensor.tensor as pt
REPEAT = 1
def done(out):  # JAX dispatches asynchronously: a step is timed until its results exist
    for o in (out if isinstance(out, (list, tuple)) else [out]):
        getattr(o, "block_until_ready", lambda: None)()
    for s in getattr(fn, "get_shared", lambda: [])():
        getattr(s.container.storage[0], "block_until_ready", lambda: None)()
{workload}
start = time.perf_counter()
{compile}
done(fn(*args))
compiled = time.perf_counter() - start
times = []
for _ in range({steps}):
    t = time.perf_counter()
    for _ in range(REPEAT):
        done(fn(*args))
    times.append(time.perf_counter() - t)
print(json.dumps({{"compile": compiled, "step": statistics.median(times), "linker": {linker_name}}}))
"""

PLAIN = (
    "fn = pytensor.function(inputs, outputs, updates=updates, "
    "mode=pytensor.compile.mode.Mode(linker={linker!r}))"
)
AUTO = "fn = modecfg.function(inputs, outputs, updates=updates)"


def available_linkers() -> list[str]:
    from modecfg.linkers import table

    # c|py_nogc, vm_nogc, cvm_nogc: the same engines as their rows' others; c: needs C code for
    # every op; py: 80 to 3000 times slower per step here, and minutes on a 1M-element fused graph
    left_out = ("c", "c|py_nogc", "vm_nogc", "cvm_nogc", "py")
    return [row.name for row in table() if row.available and row.name not in left_out]


def environment(cache: Path, modecfg_flags: str = "") -> dict[str, str]:
    """A fresh interpreter's environment: this tree first on the path, no flag variables or rc
    files of the caller's, compile caches (PyTensor's and numba's) in ``cache``, bytecode written."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    # bytecode cached, as users have it: a caller's PYTHONDONTWRITEBYTECODE would make every
    # child compile whatever source changed since its .pyc was written (modecfg's: ~15 ms)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        PYTHONPATH=str(ROOT),
        MODECFGRC="",
        PYTENSORRC=os.devnull,
        PYTENSOR_FLAGS=f"base_compiledir={cache / 'pytensor'}",
        MODECFG_FLAGS=f"base_compiledir={cache / 'pytensor'}{modecfg_flags}",
        NUMBA_CACHE_DIR=str(cache / "numba"),
    )
    return env


def run(workload: str, linker: str, steps: int, cache: Path) -> dict[str, object]:
    chosen = linker == "per_graph"
    if chosen:
        imports, compile_, name = "import modecfg", AUTO, "type(fn.maker.linker).__name__"
    else:
        imports, compile_, name = "", PLAIN.format(linker=linker), repr(linker)
    code = RUNNER.format(
        imports=imports, workload=WORKLOADS[workload], compile=compile_, steps=steps, linker_name=name
    )
    env = environment(cache, ",linker=per_graph" if chosen else "")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last[:100]}
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--linkers", default="")
    parser.add_argument("--warm", type=int, default=3, help="warm runs, each a fresh interpreter (median)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    linkers = (
        [n for n in args.linkers.split(",") if n != "per_graph"] if args.linkers else available_linkers()
    )
    columns = [*linkers, "per_graph"]
    import pytensor

    print(f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}; linkers: {', '.join(columns)}")
    for workload in args.only.split(","):
        results = {}
        for linker in columns:
            cache = Path(tempfile.mkdtemp(prefix="modecfg-bench-"))
            try:
                cold = run(workload, linker, args.steps, cache)
                warm = _median_of([run(workload, linker, args.steps, cache) for _ in range(args.warm)])
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            results[linker] = (cold, warm)
        _print(workload, results)


def _median_of(runs: list[dict[str, object]]) -> dict[str, object]:
    """The median step and compile times of several runs (a process's placement on the machine
    moves its times by tens of percent: one run is not enough)."""
    import statistics

    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    return {
        "step": statistics.median(float(r["step"]) for r in ok),  # type: ignore[arg-type]
        "compile": statistics.median(float(r["compile"]) for r in ok),  # type: ignore[arg-type]
        "linker": ok[0]["linker"],
    }


def _print(workload: str, results: dict[str, tuple[dict[str, object], dict[str, object]]]) -> None:
    ok = {k: v for k, v in results.items() if "error" not in v[1]}
    best_step = min(float(w["step"]) for _, w in ok.values()) if ok else 1.0  # type: ignore[arg-type]
    best_warm = min(float(w["compile"]) for _, w in ok.values()) if ok else 1.0  # type: ignore[arg-type]
    print(f"\n{workload}")
    head = f"{'step ms':>9} {'x best':>7} {'cold compile s':>15} {'warm compile s':>15} {'x best':>7}"
    print(f"  {'linker':<22} {head}")
    for linker, (cold, warm) in results.items():
        label = linker if linker != "per_graph" else f"per_graph ({warm.get('linker', '?')})"
        if "error" in warm:
            print(f"  {label:<22} failed: {warm['error']}")
            continue
        step, wc = float(warm["step"]) * 1e3, float(warm["compile"])  # type: ignore[arg-type]
        cc = float(cold.get("compile", float("nan")))  # type: ignore[arg-type]
        ratio = step / 1e3 / best_step
        print(f"  {label:<22} {step:9.3f} {ratio:7.2f} {cc:15.2f} {wc:15.2f} {wc / best_warm:7.2f}")


if __name__ == "__main__":
    main()
