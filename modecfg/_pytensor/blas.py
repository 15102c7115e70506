"""PyTensor without a BLAS library, said once in modecfg's words: one line, through logging.

pip's PyTensor often finds no BLAS to link its C code against; PyTensor then warns, in
four lines, when it works out ``blas__ldflags`` (and on nearly every command). modecfg
leaves that warning out (the config view leaves PyTensor's text out where it works the value
out) and says instead, once per process, in one line on the ``modecfg.blas`` logger, what it
costs and how to fix it, the first time a graph with matrix products is compiled for C. A
log record, not a warning: a notice must not change what a compile raises (a test that turns
warnings into errors around a compile, as PyTensor's own do, must behave as without modecfg).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

from modecfg._pytensor.kinds import runs_c_code
from modecfg._record import Record

__all__ = ["MESSAGE", "PYTENSOR_TEXT", "Products", "c_has_blas", "ldflags", "no_c_code", "notice", "products"]

PYTENSOR_TEXT = "PyTensor could not link to a BLAS installation"
MESSAGE = (
    "modecfg: PyTensor's C code has no BLAS library, so matrix products on the C linkers are "
    "several times slower; fix: apt install libopenblas-dev, then blas.ldflags=-lopenblas (or "
    "PyTensor from conda-forge); numba does its own BLAS; `modecfg doctor` says more"
)
_PRODUCTS = ("Dot", "Gemv", "Gemm", "Ger", "BatchedDot")
_said = False


def ldflags() -> str:
    """What PyTensor's C code links for BLAS (its ``blas__ldflags``, as found or as set; '' for
    none): the one place that asks. Imports PyTensor; its warning on finding none is left out."""
    import pytensor

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=PYTENSOR_TEXT)
        return str(pytensor.config.blas__ldflags or "")


def c_has_blas() -> bool:
    """Whether PyTensor's C code links a BLAS."""
    return bool(ldflags())


C_WITHOUT_BLAS = (
    "no BLAS for PyTensor's C code: a graph with a matrix product (dot, gemv, gemm) cannot be "
    "compiled whole as C (c|py and cvm run it, in C where there is C code; or give C a BLAS: apt "
    "install libopenblas-dev, then blas.ldflags=-lopenblas)"
)


def no_c_code(exc: NotImplementedError, mode: Any) -> Exception | None:
    """The error for a compile on ``linker=c`` that met an op without C code here (PyTensor's
    ``NotImplementedError: <op> cannot produce C code``), or None for another error."""
    text = str(exc)
    if not text.endswith("cannot produce C code"):
        return None
    from modecfg.errors import LinkerUnavailableError

    op = text[: -len(" cannot produce C code")]
    blas = any(p in op for p in _PRODUCTS) and not c_has_blas()
    why = "PyTensor's C code has no BLAS to link" if blas else "it has no C implementation"
    fix = ", or give C a BLAS (apt install libopenblas-dev, then blas.ldflags=-lopenblas)" if blas else ""
    return LinkerUnavailableError(
        f"linker=c compiles the whole graph as one C module, and {op} cannot produce C code here "
        f"({why}). Use linker=c|py or cvm (C where there is C code, Python elsewhere){fix}",
        flag="linker",
    )


class Products(Record):
    """What matrix products a graph has: the one place that asks (the BLAS notice, linker=per_graph)."""

    any: bool  # a product BLAS does (dot, gemv, gemm, ger, batched dot), of any shapes
    matrix_matrix: bool  # a matrix @ matrix product (matmul, batched too): numba's wins without BLAS


def products(fgraph: Any) -> Products:
    """The matrix products of ``fgraph`` (an Op's ``core_op`` counts: Blockwise(Dot) is matmul)."""
    from pytensor.tensor.math import Dot

    found = matrix = False
    for node in fgraph.apply_nodes:
        op = getattr(node.op, "core_op", node.op)
        dot = isinstance(op, Dot)
        if dot or type(op).__name__.startswith(_PRODUCTS):
            found = True
        if dot and all(_is_matrix(v) for v in node.inputs):
            matrix = True
            break
    return Products(found, matrix)


def _is_matrix(var: Any) -> bool:
    """At least two dimensions, neither of the last two known to be 1 (``X @ w`` makes ``w`` a
    column: that is a matrix-vector product)."""
    return bool(var.type.ndim >= 2 and 1 not in var.type.shape[-2:])


def notice(fgraph: Any, mode: Any) -> None:
    """Before the first C compile of a graph with matrix products: say it if there is no BLAS."""
    global _said
    if _said or not runs_c_code(getattr(mode, "linker", None)) or not products(fgraph).any:
        return
    import pytensor

    _said = True
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=PYTENSOR_TEXT)
        flags = pytensor.config.blas__ldflags  # found now: the linker is about to need it
    if not flags:
        logging.getLogger("modecfg.blas").warning(MESSAGE)
