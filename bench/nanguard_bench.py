"""NaN guards on the demo workload: modecfg's NanGuardMode beside FAST_RUN and PyTensor's own.

    python bench/nanguard_bench.py [--repeat 7] [--steps 200]

Per training step, median of repeated runs, in one run: FAST_RUN, modecfg's NanGuardMode,
PyTensor's NanGuardMode, on three workloads: the demo (logistic regression, 400 x 784,
float32), the Theano tutorial's exercise as it is written (the same regression in float64,
returning its predictions and cross-entropy), and an RNN (scan over 50 steps, 64 units, with
its gradient and updates).

``--memory`` measures instead what a bad call costs beside a clean one (tracemalloc peaks)
with a 105 MB parameter, and the dump's size: a NaN in the input, and one made by the last
node of a gradient step.
The three alternate, round after round; FAST_RUN and PyTensor's guard are compiled by
PyTensor itself, with modecfg's integration taken out.
Goals: modecfg's guard within 1.1x FAST_RUN, and at least 4x faster than PyTensor's.

Where the guard's time goes (the demo, about 4 us per call of a ~100 us step): a clean
float32/float64 array costs one BLAS dot product (its sum of squares bounds every value);
a 0-d output one Python float; the NanGuardMode flags are read once per call and the
limits built from them only when they change. Two reductions per array (max and min)
and reading the flags into a new tuple every call cost about three times as much.
The rest of the difference from FAST_RUN is structural: updated shared variables are
not overwritten in place (a bad call must leave them as they were), so the update of
``w`` allocates, and the Function, not the VM, writes the updates after the check.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MODECFG_FLAGS", "floatX=float32")

import modecfg  # noqa: E402
from bench._common import median, plain_pytensor, rounds  # noqa: E402


class _Tutorial:
    """Theano's "Configuration Settings and Compiling Modes" exercise, float64 as it is written."""

    def __init__(self, mode: Any) -> None:
        import numpy as np
        import pytensor
        import pytensor.tensor as pt

        rng = np.random.default_rng(0)
        n, feats = 400, 784
        self.data = (rng.standard_normal((n, feats)), rng.integers(0, 2, n).astype("float64"))
        x, y = pt.matrix("x", dtype="float64"), pt.vector("y", dtype="float64")
        w = pytensor.shared(rng.standard_normal(feats), name="w")
        b = pytensor.shared(0.0, name="b")
        p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
        prediction = p_1 > 0.5
        xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w**2).sum()
        gw, gb = pytensor.grad(cost, [w, b])
        self.train = modecfg.function(
            [x, y], [prediction, xent], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)], mode=mode
        )

    def step(self) -> None:
        self.train(*self.data)


class _Rnn:
    """A scan RNN step: 50 steps, 64 units, its gradient, and updates of its weights."""

    def __init__(self, mode: Any) -> None:
        import numpy as np
        import pytensor
        import pytensor.tensor as pt

        rng = np.random.default_rng(0)
        floatx = modecfg.config.floatX
        xs = pt.matrix("xs", dtype=floatx)
        w = pytensor.shared((rng.standard_normal((64, 64)) * 0.1).astype(floatx), name="w")
        u = pytensor.shared((rng.standard_normal((16, 64)) * 0.1).astype(floatx), name="u")
        hs = pytensor.scan(
            lambda x, h: pt.tanh(pt.dot(h, w) + pt.dot(x, u)),
            sequences=[xs],
            outputs_info=[pt.zeros(64, dtype=floatx)],
            return_updates=False,
        )
        cost = (hs[-1] ** 2).sum()
        gw, gu = pytensor.grad(cost, [w, u])
        lr = np.asarray(0.01, dtype=floatx)
        self.train = modecfg.function([xs], cost, updates=[(w, w - lr * gw), (u, u - lr * gu)], mode=mode)
        self.xs = rng.standard_normal((50, 16)).astype(floatx)

    def step(self) -> None:
        self.train(self.xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--memory", action="store_true", help="what a bad call and its dump cost instead")
    args = parser.parse_args()
    if args.memory:
        _memory()
        return
    import pytensor
    from pytensor.compile.debug.nanguardmode import NanGuardMode as PyTensorNanGuard

    from modecfg.demo import compile_model

    versions = f"python {sys.version.split()[0]}, pytensor {pytensor.__version__}"
    print(f"{versions}, floatX {modecfg.config.floatX}, linker=auto is {modecfg.linkers.best_linker()}\n")
    candidates = [  # (label, mode, compiled by PyTensor itself)
        ("FAST_RUN", lambda: "FAST_RUN", True),
        ("modecfg NanGuardMode", lambda: "NanGuardMode", False),
        ("PyTensor NanGuardMode", lambda: PyTensorNanGuard(True, True, True, optimizer="o4"), True),
    ]
    workloads = {
        "demo (logistic regression)": lambda mode: _demo_step(compile_model(mode)),
        "tutorial exercise (float64)": lambda mode: _Tutorial(mode).step,
        "RNN (scan, 50 steps)": lambda mode: _Rnn(mode).step,
    }
    for workload, build in workloads.items():
        steps = {}
        for label, mode, plain in candidates:
            with warnings.catch_warnings(), plain_pytensor() if plain else contextlib.nullcontext():
                warnings.simplefilter("ignore")
                steps[label] = build(mode() if not plain else _plain(mode()))
        times = {label: median(t) for label, t in rounds(steps, args.repeat, args.steps).items()}
        fast = times["FAST_RUN"]
        ours = times["modecfg NanGuardMode"]
        theirs = times["PyTensor NanGuardMode"]
        print(
            f"{workload}: time per training step (median of {args.repeat} alternating rounds of {args.steps})"
        )
        for label, t in times.items():
            print(f"   {label:<24} {t * 1e3:8.3f} ms  {t / fast:6.2f}x FAST_RUN")
        print(f"   modecfg's guard / FAST_RUN        {ours / fast:6.2f}x  (goal <= 1.1x)")
        print(f"   PyTensor's guard / modecfg's      {theirs / ours:6.2f}x  (goal >= 4x on the demo)\n")


def _memory() -> None:
    """Peak memory of a clean and a bad guarded call with a 105 MB parameter, and the dump's size."""
    import tempfile
    import tracemalloc

    import numpy as np
    import pytensor
    import pytensor.tensor as pt

    n = 3620  # 3620 x 3620 float64: 104.8 MB
    rng = np.random.default_rng(0)
    print(f"a {n} x {n} float64 parameter ({n * n * 8 / 1e6:.0f} MB), one gradient step per call\n")
    for case in ("NaN in the input", "NaN made by the update's last node"):
        w = pytensor.shared(rng.standard_normal((n, n)) * 0.01, name="W")
        s = pytensor.shared(np.asarray(1.0), name="s")
        x = pt.vector("x", dtype="float64")
        cost = (pt.tanh(pt.dot(w, x)) ** 2).sum()
        step = w - 0.1 * pytensor.grad(cost, w)
        late = case.endswith("last node")
        train = modecfg.function([x], cost, updates=[(w, pt.log(step + 1e3 * s) if late else step)],
                                 mode="NanGuardMode")  # fmt: skip
        good = rng.standard_normal(n)
        train(good)
        with tempfile.TemporaryDirectory() as tmp, modecfg.config.override({"NanGuardMode.dump_dir": tmp}):
            tracemalloc.start()
            peaks = []
            for bad in (False, True):
                arg = good
                if bad and late:
                    s.set_value(np.asarray(-1.0))
                elif bad:
                    arg = good.copy()
                    arg[3] = np.nan
                tracemalloc.reset_peak()
                base = tracemalloc.get_traced_memory()[0]
                try:
                    train(arg)
                    path = None
                except modecfg.NanGuardError as exc:
                    path = exc.dump_path
                peaks.append((tracemalloc.get_traced_memory()[1] - base) / 1e6)
            tracemalloc.stop()
            size = os.path.getsize(path) / 1e6 if path else float("nan")
        print(f"{case}:\n   clean call peak +{peaks[0]:.0f} MB, bad call peak +{peaks[1]:.0f} MB "
              f"(the error path: +{peaks[1] - peaks[0]:.0f} MB), dump {size:.0f} MB")  # fmt: skip


def _plain(mode: Any) -> Any:
    """A mode PyTensor builds itself: FAST_RUN as modecfg picks its linker, or PyTensor's mode."""
    if mode == "FAST_RUN":
        from pytensor.compile.mode import Mode

        return Mode(linker=modecfg.linkers.best_linker(), optimizer="o4")
    return mode


def _demo_step(model: Any) -> Any:
    return lambda: model.train(model.x, model.y)


if __name__ == "__main__":
    main()
