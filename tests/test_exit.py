"""A process that imports PyTensor and modecfg exits quietly: nothing is imported during interpreter
shutdown (Python 3.12 refuses the thread pool filelock's import starts there, printing a traceback),
whether it compiled nothing or compiled and bounds the compile caches at exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fresh import pythonpath

_PROBE = textwrap.dedent(
    """
    import atexit, sys
    seen = {}
    def last():  # registered first, so it runs after every other exit hook
        new = sorted(set(sys.modules) - seen["modules"])
        if new:
            sys.stderr.write("imported at exit: " + ", ".join(new) + "\\n")
    atexit.register(last)
    import pytensor, modecfg
    if sys.argv[1] == "compile":
        import os, pytensor.tensor as pt
        from modecfg import config
        x = pt.vector("x")
        f = pytensor.function([x], x * 2, mode=pytensor.compile.mode.Mode(linker="cvm"))
        assert float(f([1.0])[0]) == 2.0
        from modecfg.cache.trim import STAMP
        from modecfg.cache.entries import caches
        for cache in caches(scanned=False):  # every cache due for its bound at this exit
            (cache.path / STAMP).unlink(missing_ok=True)
    seen["modules"] = set(sys.modules)
    """
)


@pytest.mark.parametrize("what", ["nothing", "compile"])
def test_a_process_exits_without_importing_anything_or_a_traceback(what: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, what],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": pythonpath(),
            "HOME": str(tmp_path),
            "PYTENSOR_FLAGS": f"base_compiledir={tmp_path / 'cache'}",
            "MODECFG_FLAGS": "cache.max_age=1s",
        },
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
