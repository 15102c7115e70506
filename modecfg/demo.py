"""The demo workload: the classic logistic regression of the Theano tutorial.

400 examples of 784 features, floatX, shared weights and bias, gradient-descent
updates, compiled by PyTensor under modecfg's configuration. ``run`` returns the
measurements; the command line prints them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from modecfg.config import config

__all__ = ["DemoResult", "build_problem", "run"]

N_EXAMPLES = 400
N_FEATURES = 784


@dataclass(frozen=True, slots=True)
class DemoResult:
    floatX: str
    mode: str
    linker: str
    compile_seconds: float
    step_seconds: float  # median over the steps
    steps: int
    accuracy: float
    first_cost: float
    last_cost: float


def build_problem(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A linearly separable-ish data set (the tutorial's random one is not learnable)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N_EXAMPLES, N_FEATURES)).astype(config.floatX)
    w_true = rng.standard_normal(N_FEATURES)
    y = (x @ w_true + 0.5 * rng.standard_normal(N_EXAMPLES) > 0).astype("int32")
    return x, y


def compile_training(seed: int = 0) -> tuple[Any, Any, np.ndarray, np.ndarray, float]:
    """The train and predict functions, the data, and the compile time in seconds."""
    import pytensor
    import pytensor.tensor as pt

    floatx = config.floatX
    data_x, data_y = build_problem(seed)
    rng = np.random.default_rng(seed + 1)
    x = pt.matrix("x", dtype=floatx)
    y = pt.vector("y", dtype="int32")
    w = pytensor.shared((0.01 * rng.standard_normal(N_FEATURES)).astype(floatx), name="w")
    b = pytensor.shared(np.asarray(0.0, dtype=floatx), name="b")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w**2).sum()
    gw, gb = pytensor.grad(cost, [w, b])
    lr = np.asarray(0.1, dtype=floatx)
    start = time.perf_counter()
    train = pytensor.function([x, y], [prediction, cost], updates=[(w, w - lr * gw), (b, b - lr * gb)])
    predict = pytensor.function([x], prediction)
    return train, predict, data_x, data_y, time.perf_counter() - start


def run(steps: int = 200, seed: int = 0) -> DemoResult:
    """Compile and train; measure compile time, time per step and final accuracy."""
    train, predict, data_x, data_y, compile_seconds = compile_training(seed)
    times = []
    costs = []
    for _ in range(steps):
        start = time.perf_counter()
        _, cost = train(data_x, data_y)
        times.append(time.perf_counter() - start)
        costs.append(float(cost))
    accuracy = float((predict(data_x) == data_y).mean())
    linker = getattr(getattr(train.maker, "linker", None), "__class__", type(None)).__name__
    return DemoResult(
        floatX=config.floatX,
        mode=str(config.mode),
        linker=f"{config.linker} ({linker})",
        compile_seconds=compile_seconds,
        step_seconds=float(np.median(times)) if times else 0.0,
        steps=steps,
        accuracy=accuracy,
        first_cost=costs[0] if costs else float("nan"),
        last_cost=costs[-1] if costs else float("nan"),
    )
