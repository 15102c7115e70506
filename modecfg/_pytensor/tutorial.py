"""The Theano tutorial's logistic regression, written in PyTensor as its users write it: the
model that ``modecfg demo`` trains (:mod:`modecfg.demo`) and the benchmarks profile."""

from __future__ import annotations

from typing import Any

import numpy as np

from modecfg.configuration import config

__all__ = ["build_graph"]


def build_graph(n_features: int, seed: int = 0) -> dict[str, Any]:
    """The tutorial's symbolic graph: inputs, shared parameters, outputs and updates."""
    import pytensor
    import pytensor.tensor as pt

    floatx = str(config.floatX)
    rng = np.random.default_rng(seed + 1)
    x = pt.matrix("x", dtype=floatx)
    y = pt.vector("y", dtype=floatx)
    w = pytensor.shared((0.01 * rng.standard_normal(n_features)).astype(floatx), name="w")
    b = pytensor.shared(np.asarray(0.0, dtype=floatx), name="b")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w**2).sum()
    gw, gb = pytensor.grad(cost, [w, b])
    lr = np.asarray(0.1, dtype=floatx)
    return {
        "inputs": [x, y],
        "outputs": [prediction, cost],
        "updates": [(w, w - lr * gw), (b, b - lr * gb)],
        "x": x,
        "prediction": prediction,
        "w": w,
        "b": b,
    }
