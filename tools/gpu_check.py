"""The GPU check of issue 46, kept apart from the tests: run it once on a machine with an NVIDIA
GPU that JAX sees (``python tools/gpu_check.py``); it prints each check and exits 1 if any fails.

1. residency: the tutorial's 20,000 x 4,096 float32 step with its data in shared variables,
   within 1.5x of the same step in plain JAX with the data on the device;
2. precision: a 4096 x 4096 float32 matmul through ``device=cuda`` within 1e-5 of float64
   (max error over the largest value) with the default ``matmul_precision``;
3. float64 is never silently truncated: ``pt.cast(x, "float64").sum()`` of 10^7 x 0.1 in a
   float32 process is float64 and matches numpy's float64 sum;
4. a profile of what ran on the GPU: ``profile=True`` gives the device section, not a cvm profile;
5. no traceback at exit: a fresh ``python -c "import pytensor, modecfg"`` writes nothing to stderr.

Then ``pytest -m gpu`` and ``python bench/device_bench.py`` give the rest (see docs/gpu.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MODECFG_FLAGS", "floatX=float32,device=cuda")
warnings.filterwarnings("ignore", category=UserWarning)

import jax  # noqa: E402
import numpy as np  # noqa: E402

import modecfg  # noqa: E402
from bench._common import median, rounds  # noqa: E402
from bench.device_bench import _data, _finished, _jax_step, _pytensor_step  # noqa: E402

failed: list[str] = []


def check(name: str, ok: bool, detail: str) -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failed.append(name)


def main() -> int:
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("no GPU that JAX sees: this check is for a GPU machine")
        return 2
    import pytensor.tensor as pt

    x, y = _data(20000, 4096)
    (inputs, cost, updates), args = _pytensor_step(x, y)
    step = modecfg.function(inputs, cost, updates=updates)
    times = rounds({"jax": _jax_step(x, y), "modecfg": _finished(step, args)}, 7, 30)
    ratio = median(times["modecfg"]) / median(times["jax"])
    ours, theirs = median(times["modecfg"]) * 1e3, median(times["jax"]) * 1e3
    where = modecfg.ran_on(step)
    check("residency", ratio <= 1.5, f"{where}: {ours:.3f} ms a step, {ratio:.2f}x JAX ({theirs:.3f} ms)")

    rng = np.random.default_rng(1)
    a, b = (rng.normal(size=(4096, 4096)).astype("float32") for _ in range(2))
    A, B = pt.matrix("a", dtype="float32"), pt.matrix("b", dtype="float32")
    product = np.asarray(modecfg.function([A, B], A @ B)(a, b))
    exact = a.astype("float64") @ b.astype("float64")
    error = float(np.abs(product - exact).max() / np.abs(exact).max())
    check(
        "precision",
        error < 1e-5,
        f"matmul_precision={modecfg.config.matmul_precision}: max error {error:.1e}",
    )

    v = pt.vector("v", dtype="float32")
    total = modecfg.function([v], pt.cast(v, "float64").sum())
    values = np.full(10**7, 0.1, dtype="float32")
    got = total(values)
    want = values.astype("float64").sum()
    check("float64", got.dtype == np.float64 and abs(float(got) - want) < 1e-6 * want,
          f"{float(got)!r} ({got.dtype}), numpy float64 {want!r}")  # fmt: skip

    profiled = modecfg.function(inputs, cost, updates=updates, profile=True, name="step")
    for _ in range(5):
        profiled(*args)
    from modecfg.profiles.rows import ProfileReport

    report = ProfileReport.from_stats(profiled.profile)
    shown = report.text()
    check("profile", report.device is not None and report.linker == "jax" and "cuda" in shown,
          shown.splitlines()[2] if len(shown.splitlines()) > 2 else shown)  # fmt: skip

    done = subprocess.run([sys.executable, "-c", "import pytensor, modecfg"], capture_output=True, text=True)
    check("exit", done.returncode == 0 and done.stderr == "", repr(done.stderr[-300:]) or "quiet")
    print("all passed" if not failed else f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
