"""The linker table: what each linker is, and whether this machine can use it.

The ``linker`` flag is checked against this table; nothing else keeps a list of
linkers. Availability is found without importing PyTensor or any backend: a C++
compiler on disk with Python's headers, or an importable numba / jax / torch / mlx.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys

from modecfg._record import Record

__all__ = [
    "BACKENDS",
    "PREFERENCE",
    "LinkerInfo",
    "best_linker",
    "canonical_linker",
    "detect_cxx",
    "installed",
    "linker_names",
    "pytensor_linker_names",
    "resolve_linker",
    "table",
    "why_unavailable",
]


class LinkerInfo(Record):
    """One row of the linker table."""

    name: str
    gc: bool  # frees intermediate results during a call
    raises_by_op: bool  # an error names the op (node) that raised it
    overhead: str  # per-call overhead, relative to the other linkers
    description: str
    needs: str  # "c++", "numba", "jax", "torch", "mlx" or "" (nothing)
    pytensor_flag: bool = True  # PyTensor's own ``linker`` flag takes the name too
    available: bool = True
    why_not: str = ""


_ROWS: tuple[LinkerInfo, ...] = (
    LinkerInfo("cvm", True, True, "lowest", "C virtual machine running C thunks, Python where no C", "c++"),
    LinkerInfo("cvm_nogc", False, True, "lowest", "cvm keeping intermediate results between calls", "c++"),
    LinkerInfo("c|py", True, True, "low", "C thunks where available, else Python; Python loop", "c++"),
    LinkerInfo("c|py_nogc", False, True, "low", "c|py keeping intermediate results", "c++"),
    LinkerInfo("c", False, False, "lowest", "the whole graph as one C module; every op needs C code", "c++"),
    LinkerInfo("py", True, True, "high", "Python implementations only; needs no compiler", ""),
    LinkerInfo("vm", True, True, "medium", "Python virtual machine over C (if any) and Python thunks", ""),
    LinkerInfo("vm_nogc", False, True, "medium", "vm keeping intermediate results", ""),
    LinkerInfo("numba", False, False, "low", "the graph JIT-compiled by numba (PyTensor's default)", "numba"),
    LinkerInfo("jax", False, False, "medium", "the graph traced and compiled by JAX/XLA; GPU capable", "jax"),
    LinkerInfo("pytorch", False, False, "medium", "the graph run by PyTorch", "torch", pytensor_flag=False),
    LinkerInfo("mlx", False, False, "medium", "the graph run by Apple's MLX", "mlx", pytensor_flag=False),
)
_BY_NAME = {row.name: row for row in _ROWS}
PER_GRAPH = "per_graph"  # modecfg's choice of a linker for each graph (opt-in; modecfg/linkers/auto.py)
_NAMES = ("auto", PER_GRAPH, *_BY_NAME)

# The linkers a library runs (numba, jax, pytorch, mlx): those that need more than a C++ compiler.
BACKENDS = tuple(row.name for row in _ROWS if row.needs not in ("", "c++"))

# The order 'auto' tries, fastest per step first (see bench/modes_bench.py).
PREFERENCE = ("cvm", "numba", "vm", "py")  # fastest first: the one fallback order

_INSTALL = {
    "numba": "pip install numba",
    "jax": "pip install jax (with CUDA: pip install 'jax[cuda12]')",
    "torch": "pip install torch",
    "mlx": "pip install mlx (Apple silicon only)",
}


@functools.cache
def detect_cxx() -> str:
    """The C++ compiler PyTensor would pick: g++ (clang++ on macOS/FreeBSD), else ''."""
    names = ["clang++", "g++"] if sys.platform == "darwin" or sys.platform.startswith("freebsd") else ["g++"]
    import shutil

    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return ""


def linker_names() -> tuple[str, ...]:
    """Every valid value of the ``linker`` flag ('auto': PyTensor's, numba; 'per_graph':
    modecfg's choice for each graph)."""
    return _NAMES


def pytensor_linker_names() -> frozenset[str]:
    """The values of ``linker`` that PyTensor's own flag takes."""
    return frozenset(["auto", *(row.name for row in _ROWS if row.pytensor_flag)])


def canonical_linker(name: str) -> str:
    name = name.strip()
    if name in _NAMES:
        return name
    raise ValueError(f"{name!r} is not a linker")


@functools.cache
def installed(module: str) -> bool:
    """Whether the backend ``module`` (numba, jax, torch, mlx) can be imported here, without
    importing it: the one place that asks."""
    return importlib.util.find_spec(module) is not None


def _module_missing(module: str) -> str:
    if not installed(module):
        return f"{module} is not installed ({_INSTALL[module]})"
    return ""


def _compiler_missing(cxx: str) -> str:
    if not cxx:
        return "no C++ compiler: the cxx flag is empty (install g++ and clear the flag)"
    if os.sep in cxx and not os.access(cxx, os.X_OK):
        return f"the C++ compiler cxx={cxx} does not exist or cannot be run"
    import sysconfig  # here, not at start-up

    include = sysconfig.get_paths().get("include", "")
    if not os.path.exists(os.path.join(include, "Python.h")):
        return f"Python's C headers are missing ({include}/Python.h): install python3-dev"
    return ""


def why_unavailable(name: str, cxx: str | None = None) -> str:
    """Why linker ``name`` cannot run here ('' when it can).

    ``cxx`` is the C++ compiler to judge the C linkers by (None: the one found on PATH;
    :mod:`modecfg.linkers` passes the ``cxx`` flag).
    """
    row = _BY_NAME[name]
    if row.needs == "c++":
        return _compiler_missing(detect_cxx() if cxx is None else cxx)
    if row.needs:
        return _module_missing(row.needs)
    return ""


def table(cxx: str | None = None) -> tuple[LinkerInfo, ...]:
    """The rows of the linker table, with whether each linker is usable on this machine."""
    rows = []
    for row in _ROWS:
        why = why_unavailable(row.name, cxx)
        rows.append(row._replace(available=not why, why_not=why))
    return tuple(rows)


def best_linker(cxx: str | None = None) -> str:
    """The first usable of cvm, numba, vm, py: what a mode needing one VM-capable linker uses for
    'auto' (NanGuardMode, ProfileMode), and the fallback of the per-graph rule."""
    for name in PREFERENCE:
        if not why_unavailable(name, cxx):
            return name
    return "py"  # pragma: no cover - py needs nothing


def resolve_linker(name: str, cxx: str | None = None) -> str:
    """``name`` itself if usable, else a LinkerUnavailableError. 'auto' is what PyTensor means by
    it, numba (where numba cannot run, the first usable of cvm, vm, py); 'per_graph' resolves to
    the linker its marked VM starts from (cvm, or the first usable)."""
    if name == "auto":
        return "numba" if not why_unavailable("numba", cxx) else best_linker(cxx)
    if name == PER_GRAPH:
        return best_linker(cxx)
    why = why_unavailable(canonical_linker(name), cxx)
    if why:
        from modecfg.errors import LinkerUnavailableError

        usable = [row.name for row in table(cxx) if row.available]
        raise LinkerUnavailableError(
            f"linker {name!r} cannot run on this machine: {why}. Usable here: "
            f"{', '.join(usable)} (linker=auto picks {resolve_linker('auto', cxx)})",
            flag="linker",
        )
    return name
