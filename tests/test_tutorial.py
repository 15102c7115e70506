"""The Theano tutorial's exercise ("Configuration Settings and Compiling Modes"), written as the
tutorial writes it in PyTensor's spelling, under every mode and every linker this machine runs:
it trains, or ends in one clear modecfg error (issue 31's acceptance)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import modecfg
from tests.fresh import failure_of, plain_pytorch_failure

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

N, FEATS = 40, 7  # the tutorial's 400 x 784, smaller: every linker compiles it


def exercise(scale: float = 1.0, **compile_kwargs: Any) -> tuple[Any, Any, tuple[np.ndarray, np.ndarray]]:
    """The exercise's training and prediction functions and its data (inputs times ``scale``:
    at 50 the logits overflow the cross-entropy as written to -inf)."""
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((N, FEATS)) * scale, rng.integers(0, 2, N).astype(pytensor.config.floatX))
    x = pt.matrix("x")
    y = pt.vector("y")
    w = pytensor.shared(rng.standard_normal(FEATS), name="w")
    b = pytensor.shared(0.0, name="b")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w**2).sum()
    gw, gb = pytensor.grad(cost, [w, b])
    train = pytensor.function(
        [x, y], [prediction, xent], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)], **compile_kwargs
    )
    predict = pytensor.function([x], prediction, **compile_kwargs)
    return train, predict, data


def _trains(train: Any, predict: Any, data: tuple[np.ndarray, np.ndarray]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DebugMode's and PyTensor's own notes
        first = float(train(*data)[1].mean())
        for _ in range(4):
            last = float(train(*data)[1].mean())
        assert np.isfinite(last) and last < first
        assert predict(data[0]).shape == (N,)


LINKERS = [row.name for row in modecfg.linkers.table()]


@pytest.mark.parametrize("linker", LINKERS)
def test_the_exercise_on_every_linker(linker: str) -> None:
    if modecfg.linkers.why_unavailable(linker):
        with modecfg.config.override(linker=linker), pytest.raises(modecfg.LinkerUnavailableError):
            exercise()
        return
    try:
        with modecfg.config.override(linker=linker):
            train, predict, data = exercise()
    except modecfg.ModecfgError as exc:  # one clear error: linker=c without a BLAS for C
        assert linker == "c" and "cannot produce C code here" in str(exc)
        return
    if linker == "pytorch" and (failure := plain_pytorch_failure()):
        with pytest.raises(Exception) as caught:
            _trains(train, predict, data)
        assert failure_of(caught.value) == failure  # modecfg fails as plain PyTensor does
        pytest.skip(f"PyTensor's own PyTorch linker fails here without modecfg too: {failure}")
    _trains(train, predict, data)


MODES = ["Mode", "FAST_RUN", "FAST_COMPILE", "DebugMode", "MonitorMode", "NanGuardMode", "ProfileMode",
         "CVM", "NUMBA", "JAX"]  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("door", ["the mode flag", "mode="])
def test_the_exercise_in_every_mode(mode: str, door: str) -> None:
    from modecfg.modes.build import backend_missing

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ProfileMode
        if backend_missing(modecfg.get_mode(mode)):
            pytest.skip(f"{mode}'s backend is not installed here")
        if door == "mode=":
            train, predict, data = exercise(mode=mode)
        else:
            with modecfg.config.override(mode=mode):
                train, predict, data = exercise()
    _trains(train, predict, data)


def exercise_as_written(floatx: str, **compile_kwargs: Any) -> tuple[Any, tuple[np.ndarray, np.ndarray]]:
    """The exercise exactly as the Theano tutorial's solution writes it: 400 x 784 random data,
    weights drawn at scale 1 (its logits overflow float32's exp), learning rate 0.01, the cost cast
    to floatX."""
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((400, 784)).astype(floatx), rng.integers(0, 2, 400).astype(floatx))
    x, y = pt.matrix("x", dtype=floatx), pt.vector("y", dtype=floatx)
    w = pytensor.shared(rng.standard_normal(784).astype(floatx), name="w")
    b = pytensor.shared(np.asarray(0.0, dtype=floatx), name="b")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
    cost = pt.cast(xent.mean(), floatx) + 0.01 * (w**2).sum()
    gw, gb = pytensor.grad(cost, [w, b])
    train = pytensor.function(
        [x, y],
        [prediction, xent],
        updates={w: w - 0.01 * gw, b: b - 0.01 * gb},
        name="train",
        **compile_kwargs,
    )
    return train, data


@pytest.mark.parametrize("floatx", ["float32", "float64"])
@pytest.mark.parametrize("door", ["the mode flag", "mode='DebugMode'", "modecfg.DebugMode()"])
def test_debugmode_trains_the_exercise_as_the_tutorial_writes_it(floatx: str, door: str) -> None:
    """Issue 47: float32 failed at step 0 on local_mul_canonizer, float64 within 5 steps on
    local_greedy_distributor, each judged by values the written form overflows in."""
    with modecfg.config.override(floatX=floatx), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if door == "the mode flag":
            with modecfg.config.override(mode="DebugMode"):
                train, data = exercise_as_written(floatx)
        else:
            mode = "DebugMode" if door == "mode='DebugMode'" else modecfg.DebugMode()
            train, data = exercise_as_written(floatx, mode=mode)
        costs = [float(train(*data)[1].mean()) for _ in range(6)]
    assert all(np.isfinite(costs)) and costs[-1] < costs[0]
