"""Test isolation: no flag variables or rc files from the developer's machine.

Tests that need a configuration build one with ``modecfg.load(env=...)``; the few that
use the process-wide ``modecfg.config`` restore what they change (overrides do that
by themselves). PyTensor compiles into the repository's own cache directory, and dumps
that no test directs elsewhere go there too.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from modecfg.configuration.sources import ENV_FLAG_VARS, RC_PATH_VARS
from tests.fresh import pythonpath

ROOT = Path(__file__).resolve().parent.parent
# `make mutate` runs the suite from a copy of the tree (mutants/): it shares the real tree's caches.
CACHE = Path(os.environ.get("MODECFG_TEST_CACHE", ROOT / ".cache"))
COMPILEDIR = CACHE / "pytensor"
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
# A Python that a test starts imports the modecfg beside these tests, as this process does: under
# `make mutate` mutmut's copy (mutants/), so that what a child process runs counts (an editable
# install names the real tree); elsewhere the checkout, which an editable install names too.
os.environ["PYTHONPATH"] = pythonpath()


def pytest_configure(config: pytest.Config) -> None:
    """mutmut's test-to-function mapping run: a Python started by a test would try to record its
    calls too and fail outside the tree; it runs the code as written (the mutants it does see).
    The mapping itself reads mutmut's own copy of the name. A hook, not import-time code: under
    mutmut's fork server this module was imported before the run began."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        del os.environ["MUTANT_UNDER_TEST"]


@pytest.fixture(autouse=True)
def _dump_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """NanGuardMode.max_dumps caps the dumps of a process: each test starts with none written."""
    from modecfg.nanguard import dump

    monkeypatch.setattr(dump, "_written", 0)


@pytest.fixture(scope="session")
def _site_packages(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("site-packages"))


@pytest.fixture(autouse=True)
def _no_real_site_packages(monkeypatch: pytest.MonkeyPatch, _site_packages: str) -> None:
    """This environment's site-packages, as the tests see it, is a directory of their own: no test
    (and no mutant of ``make mutate``: one wrote ``modecfg-autoload.pth`` into the developer's
    virtual environment, making every Python there load the mutated copy) can write a ``.pth``
    file into the Python that runs the suite."""
    import sysconfig

    real = sysconfig.get_paths

    def get_paths(*args: object, **kwargs: object) -> dict[str, str]:
        return {**real(*args, **kwargs), "purelib": _site_packages}  # type: ignore[arg-type]

    monkeypatch.setattr(sysconfig, "get_paths", get_paths)


@pytest.fixture
def unwritable(tmp_path: Path) -> Path:
    """A directory this process cannot write in (for root: a read-only one of the system's)."""
    place = tmp_path / "read-only"
    place.mkdir(mode=0o500)
    if not os.access(place, os.W_OK):
        return place
    system = Path("/proc/sys")
    if system.is_dir() and not os.access(system, os.W_OK):
        return system
    pytest.skip("no directory this process cannot write in")
