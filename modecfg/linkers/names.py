"""The rows of the linker table: what each linker is, without importing PyTensor.

The ``linker`` flag is checked against this table; nothing else keeps a list of linkers.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["LinkerInfo", "canonical_linker", "linker_names", "table"]


class LinkerInfo(NamedTuple):
    """One row of the linker table."""

    name: str
    gc: bool  # frees intermediate results during a call
    raises_by_op: bool  # an error names the op that raised it
    overhead: str  # per-call overhead relative to the others
    description: str


_TABLE: tuple[LinkerInfo, ...] = (
    LinkerInfo("cvm", True, True, "lowest", "C virtual machine running C thunks, Python where no C"),
    LinkerInfo("cvm_nogc", False, True, "lowest", "cvm keeping intermediate results between calls"),
    LinkerInfo("c|py", True, True, "low", "C thunks where available, else Python; Python loop"),
    LinkerInfo("c|py_nogc", False, True, "low", "c|py keeping intermediate results"),
    LinkerInfo("c", False, False, "lowest", "the whole graph as one C module; every op needs C code"),
    LinkerInfo("py", True, True, "high", "Python implementations only; no compiler needed"),
    LinkerInfo("vm", True, True, "medium", "Python virtual machine over C/Python thunks"),
    LinkerInfo("vm_nogc", False, True, "medium", "vm keeping intermediate results"),
    LinkerInfo("numba", False, False, "low", "the graph JIT-compiled by numba (PyTensor's default)"),
    LinkerInfo("jax", False, False, "medium", "the graph traced and compiled by JAX/XLA; GPU capable"),
    LinkerInfo("pytorch", False, False, "medium", "the graph run by PyTorch"),
    LinkerInfo("mlx", False, False, "medium", "the graph run by Apple's MLX"),
)

_NAMES = ("auto", *(row.name for row in _TABLE))


def table() -> tuple[LinkerInfo, ...]:
    """The rows of the linker table."""
    return _TABLE


def linker_names() -> tuple[str, ...]:
    """Every valid value of the ``linker`` flag ('auto': the fastest usable one)."""
    return _NAMES


def canonical_linker(name: str) -> str:
    name = name.strip()
    if name in _NAMES:
        return name
    raise ValueError(f"{name!r} is not a linker")
