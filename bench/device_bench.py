"""device=cuda (or, without a GPU, JAX's CPU device) beside plain JAX, in one run.

    python bench/device_bench.py [--n 20000 --d 4096] [--steps 30] [--rounds 7]

1. The Theano tutorial's logistic regression with its data in shared variables (float32, n x d),
   one training step: modecfg's JAX function; the same step written in plain JAX with the data
   on the device (the goal: within 1.5x of it); PyTensor's own JAX linker without modecfg (which
   sends the shared data at every call); and device=cpu (modecfg's default CPU linker) for
   reference. Each step is finished on the device before the next.
2. The bytes crossing to the device per call, from a profiled run (the data: 0), and a check
   under ``jax.transfer_guard("disallow_explicit")`` that a steady call moves nothing.
3. The exercise as written (400 x 784, data passed as numpy inputs each call): sent every call.
4. float32 matmul error against float64 (n x n, n = 4096 on a GPU, 1024 here) for each
   ``matmul_precision``, with its time.

Without a GPU, JAX's CPU device stands in (the figures are then about overheads, not a GPU);
the GPU is used when JAX sees one. The machines are noisy: read the ratios, run it twice.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MODECFG_FLAGS", "floatX=float32")
warnings.filterwarnings("ignore", category=UserWarning)  # PyTensor's "Skipping Assert" and JAX's astype notes

import jax  # noqa: E402
import numpy as np  # noqa: E402

import modecfg  # noqa: E402
from bench._common import median, plain_pytensor, rounds  # noqa: E402

ON_GPU = any(d.platform == "gpu" for d in jax.devices())
DEVICE = {"device": "cuda"} if ON_GPU else {"linker": "jax"}


def _data(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, d)).astype("float32")
    y = (rng.random(n) > 0.5).astype("float32")
    return x, y


def _pytensor_step(x: np.ndarray, y: np.ndarray, as_inputs: bool = False) -> tuple[Any, list[Any]]:
    """The tutorial's step: (function, its call arguments)."""
    import pytensor
    import pytensor.tensor as pt

    d = x.shape[1]
    w = pytensor.shared(np.zeros(d, dtype="float32"), name="w")
    b = pytensor.shared(np.float32(0.0), name="b")
    if as_inputs:
        X, Y = pt.matrix("X", dtype="float32"), pt.vector("y", dtype="float32")
        args = [x, y]
    else:
        X, Y = pytensor.shared(x, name="X"), pytensor.shared(y, name="y")
        args = []
    p = pt.sigmoid(X @ w + b)
    cost = -(Y * pt.log(p) + (1 - Y) * pt.log(1 - p)).mean() + np.float32(0.01) * (w**2).sum()
    gw, gb = pytensor.grad(cost, [w, b])
    inputs = [X, Y] if as_inputs else []
    updates = [(w, w - np.float32(0.1) * gw), (b, b - np.float32(0.1) * gb)]
    return (inputs, cost, updates), args


def _jax_step(x: np.ndarray, y: np.ndarray) -> Callable[[], Any]:
    import jax.numpy as jnp

    X, Y = jax.device_put(x), jax.device_put(y)
    state = {"w": jnp.zeros(x.shape[1], dtype="float32"), "b": jnp.float32(0.0)}

    def cost(w: Any, b: Any) -> Any:
        p = jax.nn.sigmoid(X @ w + b)
        return -(Y * jnp.log(p) + (1 - Y) * jnp.log(1 - p)).mean() + 0.01 * (w**2).sum()

    def update(w: Any, b: Any) -> Any:
        c, (gw, gb) = jax.value_and_grad(cost, argnums=(0, 1))(w, b)
        return c, w - 0.1 * gw, b - 0.1 * gb

    step = jax.jit(update)

    def call() -> Any:
        c, state["w"], state["b"] = step(state["w"], state["b"])
        return c.block_until_ready()

    return call


def _finished(fn: Any, args: list[Any]) -> Callable[[], Any]:
    def call() -> Any:
        out = fn(*args)
        return out.block_until_ready() if hasattr(out, "block_until_ready") else out

    return call


def residency(n: int, d: int, n_rounds: int, steps: int) -> None:
    print(f"1. one training step, {n} x {d} float32 data in shared variables ({n * d * 4 / 2**20:.0f} MiB)")
    x, y = _data(n, d)
    (inputs, cost, updates), args = _pytensor_step(x, y)
    with modecfg.config.override(**DEVICE):
        ours = modecfg.function(inputs, cost, updates=updates)
    print(f"   modecfg's function runs on: {modecfg.ran_on(ours)}")
    (p_inputs, p_cost, p_updates), _ = _pytensor_step(x, y)
    import pytensor
    from pytensor.compile.mode import Mode

    with plain_pytensor():
        plain = pytensor.function(p_inputs, p_cost, updates=p_updates, mode=Mode(linker="jax"))
    (c_inputs, c_cost, c_updates), _ = _pytensor_step(x, y)
    with modecfg.config.override(device="cpu", linker="auto"):
        cpu = modecfg.function(c_inputs, c_cost, updates=c_updates)
    sides = {
        "plain JAX, data on the device": _jax_step(x, y),
        "modecfg (resident data)": _finished(ours, args),
        "PyTensor's JAX linker, no modecfg": _finished(plain, args),
        f"device=cpu ({modecfg.ran_on(cpu).split()[-1]})": _finished(cpu, args),
    }
    times = rounds(sides, n_rounds, steps)
    base = median(times["plain JAX, data on the device"])
    for label, t in times.items():
        print(f"   {label:<38} {median(t) * 1e3:9.3f} ms  {median(t) / base:6.2f}x plain JAX")
    print(
        f"   goal: modecfg within 1.5x of plain JAX: {median(times['modecfg (resident data)']) / base:.2f}x"
    )

    print("2. bytes sent to the device per call (a profiled copy of the step)")
    (inputs, cost, updates), args = _pytensor_step(x, y)
    with modecfg.config.override(**DEVICE):
        profiled = modecfg.function(inputs, cost, updates=updates, profile=True, name="step")
    for _ in range(steps):
        profiled(*args)
    from modecfg._pytensor.marks import PROFILE_DEVICE

    figures = getattr(profiled.profile, PROFILE_DEVICE)
    calls = max(int(figures["calls"]), 1)
    print(f"   modecfg: {figures['sent_bytes'] / calls:.0f} B a call over {figures['calls']} timed calls "
          f"(the data: {x.nbytes + y.nbytes} B, sent once when linked)")  # fmt: skip
    with jax.transfer_guard("disallow_explicit"):
        ours(*args)
    print("   a steady call under jax.transfer_guard('disallow_explicit'): nothing moved")
    try:
        with jax.transfer_guard("disallow"):
            plain(*args)
        print("   PyTensor's JAX linker alone: nothing moved either")
    except Exception:
        print(f"   PyTensor's JAX linker alone: sends the shared data every call ({x.nbytes + y.nbytes} B)")


def exercise(n_rounds: int, steps: int) -> None:
    print("3. the exercise as written: 400 x 784, the data passed as numpy inputs each call")
    x, y = _data(400, 784)
    (inputs, cost, updates), args = _pytensor_step(x, y, as_inputs=True)
    with modecfg.config.override(**DEVICE):
        ours = modecfg.function(inputs, cost, updates=updates, profile=True, name="exercise")
    (c_inputs, c_cost, c_updates), _ = _pytensor_step(x, y, as_inputs=True)
    with modecfg.config.override(device="cpu", linker="auto"):
        cpu = modecfg.function(c_inputs, c_cost, updates=c_updates)
    times = rounds({"jax": _finished(ours, args), "cpu": _finished(cpu, args)}, n_rounds, steps)
    from modecfg._pytensor.marks import PROFILE_DEVICE

    figures = getattr(ours.profile, PROFILE_DEVICE)
    sent = figures["sent_bytes"] / max(int(figures["calls"]), 1)
    print(f"   {modecfg.ran_on(ours)}: {median(times['jax']) * 1e6:8.1f} us a step, {sent:.0f} B sent a call")
    print(f"   {modecfg.ran_on(cpu)}: {median(times['cpu']) * 1e6:8.1f} us a step")


def precision() -> None:
    import pytensor.tensor as pt

    n = 4096 if ON_GPU else 1024
    print(f"4. float32 matmul of two {n} x {n} matrices against float64")
    rng = np.random.default_rng(1)
    a, b = (rng.normal(size=(n, n)).astype("float32") for _ in range(2))
    exact = a.astype("float64") @ b.astype("float64")
    scale = np.abs(exact).max()
    A, B = pt.matrix("a", dtype="float32"), pt.matrix("b", dtype="float32")
    for flag in ("highest", "high", "default"):
        with modecfg.config.override(matmul_precision=flag, **DEVICE):
            f = modecfg.function([A, B], A @ B)
        da, db = jax.device_put(a), jax.device_put(b)
        got = np.asarray(f(da, db))
        t = rounds({"f": _finished(f, [da, db])}, 5, 5)["f"]
        error = np.abs(got - exact).max() / scale
        print(f"   matmul_precision={flag:<14} max error {error:.1e} (of largest)  {median(t) * 1e3:8.3f} ms")
    cpu = np.abs(a @ b - exact).max() / scale
    print(f"   numpy float32 on the CPU        max error {cpu:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=20000 if ON_GPU else 4000)
    parser.add_argument("--d", type=int, default=4096 if ON_GPU else 512)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"JAX {jax.__version__} on {jax.devices()[0].device_kind} ({'GPU' if ON_GPU else 'CPU stand-in'})")
    residency(args.n, args.d, args.rounds, args.steps)
    exercise(args.rounds, args.steps)
    precision()


if __name__ == "__main__":
    main()
