"""The demo workload: the classic logistic regression of the Theano tutorial.

400 examples of 784 features, floatX, shared weights and bias, gradient-descent
updates, compiled with ``modecfg.function`` under modecfg's configuration. ``run``
returns the measurements; the command line prints them. Tests and benchmarks build
the same graph with :func:`build_graph` and :func:`compile_model`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from modecfg._pytensor import tutorial
from modecfg._record import Record
from modecfg.configuration import config

__all__ = ["DemoResult", "Model", "build_graph", "build_problem", "compile_model", "run"]

N_EXAMPLES = 400
N_FEATURES = 784


class DemoResult(Record):
    floatX: str
    mode: str
    linker: str
    compile_seconds: float
    step_seconds: float  # median over the steps
    steps: int
    accuracy: float
    first_cost: float
    last_cost: float
    float64: tuple[Any, ...]  # modecfg.check_float32 findings of the compiled functions
    profile: Any = None  # the ProfileReport of the training step, with profile=True
    ran_on: str = ""  # where the training step ran (modecfg.ran_on): the tutorial's last question


class Model(Record):
    """The compiled tutorial model and its data."""

    train: Any  # (x, y) -> [prediction, cost], updating w and b
    predict: Any  # x -> prediction
    w: Any  # the shared weights
    b: Any  # the shared bias
    x: np.ndarray
    y: np.ndarray
    compile_seconds: float


def build_problem(
    seed: int = 0, n_examples: int = N_EXAMPLES, n_features: int = N_FEATURES
) -> tuple[np.ndarray, np.ndarray]:
    """A learnable data set of the tutorial's shape (its random labels are not learnable).

    The labels are 0/1 in floatX, like the inputs: an int32 label vector would bring
    float64 into a float32 graph (``modecfg check-float32`` shows where).
    """
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_examples, n_features)).astype(config.floatX)
    w_true = rng.standard_normal(n_features)
    y = (x @ w_true + 0.5 * rng.standard_normal(n_examples) > 0).astype(config.floatX)
    return x, y


def build_graph(n_features: int = N_FEATURES, seed: int = 0) -> dict[str, Any]:
    """The tutorial's symbolic graph: inputs, shared parameters, outputs and updates
    (:func:`modecfg._pytensor.tutorial.build_graph`: written in PyTensor)."""
    return tutorial.build_graph(n_features, seed)


def compile_model(
    mode: Any = None,
    seed: int = 0,
    n_examples: int = N_EXAMPLES,
    n_features: int = N_FEATURES,
    profile: bool | None = None,
) -> Model:
    """Build and compile the model with ``modecfg.function`` in ``mode`` (None: the mode flag)."""
    from modecfg.modes import function

    data_x, data_y = build_problem(seed, n_examples, n_features)
    g = build_graph(n_features, seed)
    start = time.perf_counter()
    train = function(
        g["inputs"], g["outputs"], updates=g["updates"], mode=mode, profile=profile, name="train"
    )
    predict = function([g["x"]], g["prediction"], mode=mode)
    return Model(train, predict, g["w"], g["b"], data_x, data_y, time.perf_counter() - start)


def _linker(fn: Any) -> str:
    """The linker that runs ``fn``, and whether ``linker=auto`` chose it."""
    from modecfg.linkers.auto import chosen
    from modecfg.modes.build import linker_of

    name = linker_of(fn)
    return f"{name} (chosen by linker=per_graph)" if chosen(fn) else name


def run(steps: int = 200, seed: int = 0, mode: Any = None, profile: bool = False) -> DemoResult:
    """Compile and train; measure compile time, time per step and final accuracy."""
    from modecfg.checks import check_float32
    from modecfg.device.where import ran_on

    model = compile_model(mode, seed, profile=profile or None)
    times = []
    costs = []
    for _ in range(steps):
        start = time.perf_counter()
        _, cost = model.train(model.x, model.y)
        costs.append(float(cost))  # inside the timing: JAX returns before its device has finished
        times.append(time.perf_counter() - start)
    accuracy = float((model.predict(model.x) == model.y).mean())
    return DemoResult(
        floatX=str(config.floatX),
        mode=str(mode or config.mode),
        linker=_linker(model.train),
        compile_seconds=model.compile_seconds,
        step_seconds=float(np.median(times)) if times else 0.0,
        steps=steps,
        accuracy=accuracy,
        first_cost=costs[0] if costs else float("nan"),
        last_cost=costs[-1] if costs else float("nan"),
        float64=tuple(check_float32(model.train) + check_float32(model.predict)),
        profile=_report(model.train) if profile else None,
        ran_on=ran_on(model.train),
    )


def _report(fn: Any) -> Any:
    from modecfg.profiles import report

    return report(fn)
