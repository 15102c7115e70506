"""PyTensor without a BLAS library, said once in modecfg's words.

pip's PyTensor often finds no BLAS to link its C code against; PyTensor then warns, in
four lines, at the first compile that asks (and on nearly every command). modecfg
replaces that warning (the config view leaves PyTensor's text out where it works the value
out) by one :class:`~modecfg.errors.MissingBlasWarning` that says what it costs and how to
fix it, the first time a graph with matrix products is compiled for C.
"""

from __future__ import annotations

import warnings
from typing import Any

from modecfg._registry.linkers import runs_c_code
from modecfg._warn import warn
from modecfg.errors import MissingBlasWarning

__all__ = ["MESSAGE", "PYTENSOR_TEXT", "notice"]

PYTENSOR_TEXT = "PyTensor could not link to a BLAS installation"
MESSAGE = (
    "PyTensor's C code found no BLAS library to link: matrix products (dot, gemv, gemm) on the C "
    "linkers run through numpy's C-API instead, several times slower on large matrices. To fix it, "
    "install a BLAS with its headers and name it (Debian/Ubuntu: apt install libopenblas-dev, then "
    "blas.ldflags=-lopenblas; the OpenBLAS inside pip's numpy cannot be linked), or install PyTensor "
    "from conda-forge, which brings one. `modecfg doctor` shows what PyTensor links; the numba "
    "linker does its own BLAS."
)
_PRODUCTS = ("Dot", "Gemv", "Gemm", "Ger", "BatchedDot")
_said = False


def _has_products(fgraph: Any) -> bool:
    for node in fgraph.apply_nodes:
        op = getattr(node.op, "core_op", node.op)  # Blockwise(Dot) for matmul
        if type(op).__name__.startswith(_PRODUCTS):
            return True
    return False


def notice(fgraph: Any, mode: Any) -> None:
    """Before the first C compile of a graph with matrix products: say it if there is no BLAS."""
    global _said
    if _said or not runs_c_code(getattr(mode, "linker", None)) or not _has_products(fgraph):
        return
    import pytensor

    _said = True
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=PYTENSOR_TEXT)
        flags = pytensor.config.blas__ldflags  # found now: the linker is about to need it
    if not flags:
        warn(MESSAGE, MissingBlasWarning)
