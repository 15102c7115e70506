"""Test values: the cost of building a graph, modecfg beside plain PyTensor, in one run.

    python bench/testvalue_bench.py [--repeat 15]

Builds the demo's graph (logistic regression with its gradient, 400 x 784) again and
again: with plain PyTensor (modecfg's integration taken out), with every integration point
in place (the test-value wrappers and the gradient tags included) and compute_test_value=off
(goal: within noise, ratio <= 1.02), and with the flag on and test values on the inputs.
Runs alternate, medians are compared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import modecfg  # noqa: E402


def build(values: tuple[np.ndarray, np.ndarray] | None) -> Any:
    import pytensor
    import pytensor.tensor as pt

    x = pt.matrix("x")
    y = pt.vector("y")
    if values is not None:
        x.tag.test_value, y.tag.test_value = values
    w = pytensor.shared(np.zeros(784), name="w")
    b = pytensor.shared(0.0, name="b")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w**2).sum()
    return pytensor.grad(cost, [w, b])


def timed(fn: Any, inner: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    import pytensor

    from modecfg._pytensor import enable, install, uninstall

    rng = np.random.default_rng(0)
    data = (rng.standard_normal((400, 784)), (rng.random(400) > 0.5).astype("float64"))
    assert modecfg.config.compute_test_value == "off", "run with compute_test_value=off"
    plain, wrapped_off = [], []
    for _ in range(args.repeat):  # alternate, so that drift hits both alike
        uninstall()  # PyTensor itself
        plain.append(timed(lambda: build(None)))
        install()  # every integration point, the test-value wrappers included, the flag off
        enable("test values")
        enable("scan test values")
        wrapped_off.append(timed(lambda: build(None)))
    with modecfg.config.override(compute_test_value="raise"):
        on = [timed(lambda: build(data), inner=5) for _ in range(max(3, args.repeat // 3))]
    a, b, c = statistics.median(plain), statistics.median(wrapped_off), statistics.median(on)
    print(f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}")
    print("\nbuilding the demo's graph with its gradient (median)")
    print(f"   plain PyTensor                     {a * 1e3:8.3f} ms")
    print(f"   modecfg, compute_test_value=off    {b * 1e3:8.3f} ms   {b / a:6.3f}x plain  (goal <= 1.02)")
    print(
        f"   modecfg, compute_test_value=raise  {c * 1e3:8.3f} ms   {c / a:6.1f}x plain  (400 x 784 values)"
    )


if __name__ == "__main__":
    main()
