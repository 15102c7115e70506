"""PyMC, the real client: the same draws with modecfg as without, and CompareMode on a model.

PyMC is not a dependency (CI does not install it); where it is installed these run in fresh
processes on one compile cache. Learned with PyMC 6.4.0 / PyTensor 3.3.8 (2026-11-26): a run on
an empty cache and one on a warm cache differ in the last bits, with or without modecfg (numba's
freshly compiled and cached code round differently); runs in the same cache state are
identical, with modecfg and without. So each side here runs once to warm the cache first.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("pymc") is None:  # looked up, not imported: PyMC's import assigns flags
    pytest.skip("could not import 'pymc': not installed", allow_module_level=True)

from tests.fresh import pythonpath

# A hierarchical model, PyMC's eight-schools shape: the same in both scripts below
HIERARCHICAL = """
import json, sys
if sys.argv[1] != "plain":
    import modecfg
import numpy as np
import pymc as pm

rng = np.random.default_rng(0)
groups = np.repeat(np.arange(8), 10)
y = rng.normal(groups * 0.3, 1.0)
with pm.Model() as model:
    mu = pm.Normal("mu", 0, 5)
    tau = pm.HalfNormal("tau", 2)
    theta = pm.Normal("theta", mu, tau, shape=8)
    sigma = pm.HalfNormal("sigma", 2)
    pm.Normal("y", theta[groups], sigma, observed=y)
"""

MODEL = (
    HIERARCHICAL
    + """
    idata = pm.sample(draws=100, tune=100, chains=2, cores=1, random_seed=1, progressbar=False,
                      compute_convergence_checks=False)
    prior = pm.sample_prior_predictive(draws=50, random_seed=2)
    start = pm.find_MAP(progressbar=False, seed=3)
out = {
    "mu": idata.posterior["mu"].values.ravel().tolist(),
    "prior_y": prior.prior_predictive["y"].values.ravel()[:50].tolist(),
    "map": {k: np.asarray(v).tolist() for k, v in start.items()},
}
if sys.argv[1] == "compare":
    from modecfg.compare.mode import CompareMode, counted
    logp, dlogp = model.compile_logp(mode=CompareMode()), model.compile_dlogp(mode=CompareMode())
    point = model.initial_point()
    for k in range(3):
        point = {name: v + 0.1 * k for name, v in point.items()}
        logp(point), dlogp(point)
    out["compared"] = [counted.calls, counted.functions]
print(json.dumps(out))
"""
)


def _run(side: str, cache: Path, script: str = MODEL) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env.update(PYTHONPATH=pythonpath(), PYTENSOR_FLAGS=f"base_compiledir={cache}", MODECFGRC="")
    run = subprocess.run(
        [sys.executable, "-c", script, side], capture_output=True, text=True, env=env, timeout=900
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_pymc_samples_alike_with_modecfg_and_compare_mode_finds_its_backends_agree(tmp_path: Path) -> None:
    _run("plain", tmp_path)  # warms the cache
    plain, with_modecfg = _run("plain", tmp_path), _run("modecfg", tmp_path)
    assert with_modecfg == plain
    compared = _run("compare", tmp_path)
    assert compared.pop("compared") == [6, 2]  # three calls each of logp and dlogp, none differed
    assert compared == plain


JAX_MODEL = (
    HIERARCHICAL
    + """
logp = model.compile_logp(mode="JAX")
dlogp = model.compile_dlogp(mode="JAX")
point = model.initial_point()
out = []
for k in range(4):  # the first call traces and compiles; the others are steady calls
    point = {name: v + 0.1 * k for name, v in point.items()}
    out.append([float(logp(point)).hex(), [float(g).hex() for g in np.asarray(dlogp(point))]])
print(json.dumps(out))
"""
)


@pytest.mark.slow
def test_a_pymc_models_logp_and_gradient_on_jax_are_plain_pytensors_bit_for_bit(tmp_path: Path) -> None:
    """PyMC's logp and its gradient compiled for JAX (``mode="JAX"``, as PyMC's JAX samplers
    compile them): modecfg's JAX VM (its written-out steady call, its x64 and precision
    pinning) gives every value plain PyTensor gives, to the last bit, first call and steady."""
    if importlib.util.find_spec("jax") is None:
        pytest.skip("could not import 'jax': not installed")
    plain, with_modecfg = _run("plain", tmp_path, JAX_MODEL), _run("modecfg", tmp_path, JAX_MODEL)
    assert len(plain) == 4 and all(len(grad) == 11 for _, grad in plain)  # 11: mu, tau, theta, sigma
    assert with_modecfg == plain
