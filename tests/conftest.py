"""Test isolation: no flag variables or rc files from the developer's machine.

Tests that need a configuration build one with ``modecfg.load(env=...)``; the few that
use the process-wide ``modecfg.config`` restore what they change (overrides do that
by themselves). PyTensor compiles into the repository's own cache directory, and dumps
that no test directs elsewhere go there too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from modecfg.config.sources import ENV_FLAG_VARS, RC_PATH_VARS

ROOT = Path(__file__).resolve().parent.parent
# `make mutate` runs the suite from a copy of the tree (mutants/): it shares the real tree's caches.
CACHE = Path(os.environ.get("MODECFG_TEST_CACHE", ROOT / ".cache"))
COMPILEDIR = CACHE / "pytensor"
if "MUTANT_UNDER_TEST" in os.environ:
    # mutmut forks each mutant's run from the process that ran the whole suite; the threads
    # that JAX's runtime and Dask's event loop started there do not survive a fork (a forked
    # call waits for them forever). Under `make mutate` both count as not installed, and the
    # tests that need them skip.
    for _module in ("jax", "distributed"):
        sys.modules.setdefault(_module, None)  # type: ignore[arg-type]
if os.environ.get("MUTANT_UNDER_TEST") == "stats":
    # mutmut's test-to-function mapping run: a Python started by a test would try to record its
    # calls too and fail outside the tree; it runs the code as written (mutants it does see).
    del os.environ["MUTANT_UNDER_TEST"]

for _var in (*ENV_FLAG_VARS, *RC_PATH_VARS):
    os.environ.pop(_var, None)
os.environ["MODECFGRC"] = ""  # set but empty: no rc files at all, not even ~/.theanorc
# Profiles made by tests would be printed at exit, after pytest's summary: keep it last.
# linker=per_graph: cvm for most of the suite's small graphs; numba's (the default's) JIT costs
# seconds a function. Tests of the defaults set their own environment (tests/fresh.py).
os.environ["MODECFG_FLAGS"] = (
    f"base_compiledir={COMPILEDIR},profiling.destination={os.devnull},linker=per_graph"
)
os.environ.setdefault("NUMBA_CACHE_DIR", str(CACHE / "numba"))
# NaN-guard dumps of tests that do not choose a directory: the repository's cache, not ~/.cache.
os.environ["XDG_CACHE_HOME"] = str(CACHE / "xdg")
# The dump key that signs the suite's dumps: the repository's, not the developer's ~/.config.
os.environ["XDG_CONFIG_HOME"] = str(CACHE / "xdg-config")


@pytest.fixture(autouse=True)
def _dump_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """NanGuardMode.max_dumps caps the dumps of a process: each test starts with none written."""
    from modecfg.modes import dump

    monkeypatch.setattr(dump, "_written", 0)
