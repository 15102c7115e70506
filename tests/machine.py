"""Facts of this machine, found without modecfg's linker table: what the table's answers are
checked against (a test that compared the table with itself could not fail)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sysconfig
from pathlib import Path

import modecfg


def has_compiler() -> bool:
    """The configured C++ compiler runs here and Python's headers are installed."""
    cxx = str(modecfg.config.cxx)
    found = (
        shutil.which(cxx) if cxx and os.sep not in cxx else (cxx if cxx and os.access(cxx, os.X_OK) else None)
    )
    return bool(found) and Path(sysconfig.get_paths()["include"], "Python.h").exists()


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def best_linker_here() -> str:
    """The linker for a graph without scan or matrix products: cvm with a compiler, else numba,
    else vm."""
    return "cvm" if has_compiler() else "numba" if installed("numba") else "vm"


def usable_here(linker: str) -> bool:
    """Whether ``linker`` can run here, from the facts above."""
    if linker in ("c", "cvm", "cvm_nogc", "c|py", "c|py_nogc"):
        return has_compiler()
    module = {"numba": "numba", "jax": "jax", "pytorch": "torch", "mlx": "mlx"}.get(linker)
    return installed(module) if module else True
