"""The linker table, judged by this configuration's C++ compiler. Nothing here imports PyTensor.

The table itself lives in the bottom layer (:mod:`modecfg._registry.linkers`), where the
``linker`` flag is checked against it; these functions read the ``cxx`` flag when no
compiler is given.
"""

from __future__ import annotations

from typing import Any

from modecfg._registry import linkers as _registry
from modecfg._registry.linkers import LinkerInfo, canonical_linker, linker_names
from modecfg.configuration import config

__all__ = [
    "LinkerInfo",
    "best_linker",
    "canonical_linker",
    "limit",
    "linker_name",
    "linker_names",
    "resolve_linker",
    "table",
    "why_unavailable",
]


def linker_name(linker: Any) -> str:
    """A PyTensor linker object by its name in the table (cvm, numba, ...)."""
    from modecfg._pytensor.kinds import linker_name as name

    return name(linker)


def _cxx(cxx: str | None) -> str:
    return str(config.cxx) if cxx is None else cxx


def why_unavailable(name: str, cxx: str | None = None) -> str:
    """Why linker ``name`` cannot run here ('' when it can). ``cxx`` defaults to the flag."""
    return _registry.why_unavailable(name, _cxx(cxx))


def table(cxx: str | None = None) -> tuple[LinkerInfo, ...]:
    """The rows of the linker table, with whether each linker is usable on this machine."""
    return _registry.table(_cxx(cxx))


def best_linker(cxx: str | None = None) -> str:
    """The first usable of cvm, numba, vm, py (see :func:`modecfg._registry.linkers.best_linker`)."""
    return _registry.best_linker(_cxx(cxx))


def resolve_linker(name: str, cxx: str | None = None) -> str:
    """``name`` itself if usable ('auto' resolved), else a LinkerUnavailableError."""
    return _registry.resolve_linker(name, _cxx(cxx))


def limit(name: str) -> str:
    """What a usable linker cannot run here ('' if nothing): linker=c without a BLAS for
    PyTensor's C code cannot compile a matrix product. Asks PyTensor (imports it)."""
    if name != "c" or why_unavailable("c"):
        return ""
    from modecfg._pytensor.blas import C_WITHOUT_BLAS, c_has_blas

    return "" if c_has_blas() else C_WITHOUT_BLAS
