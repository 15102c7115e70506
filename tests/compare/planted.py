"""Planted defects for CompareMode's tests: ops whose numba implementation is wrong where their
Python one is right, and rewrites (registered at import, for these ops only) that are wrong or
that stabilise a graph.

This module imports PyTensor and numba only (never modecfg): the reproduction scripts CompareMode
writes import the ops from here, and must run with plain PyTensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.graph.rewriting.basic import node_rewriter
from pytensor.link.numba.dispatch import basic as numba_basic
from pytensor.link.numba.dispatch.basic import numba_funcify
from pytensor.scalar.basic import UnaryScalarOp, upgrade_to_float
from pytensor.tensor.elemwise import Elemwise


class _Elementwise(Op):  # type: ignore[misc]
    """An op of one array, the same type out, computed in Python by ``python``."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Any, inputs: Any, outputs: Any) -> None:
        outputs[0][0] = self.python(inputs[0])

    def python(self, x: Any) -> Any:
        raise NotImplementedError


class WrongOnNumba(_Elementwise):
    """exp(x) in Python; numba's implementation is 1.5 * exp(x) wherever x > 2."""

    def python(self, x: Any) -> Any:
        return np.exp(x)


class NanOnNumba(_Elementwise):
    """sqrt(|x|) in Python; numba's implementation forgets the |.|: NaN for x < 0."""

    def python(self, x: Any) -> Any:
        return np.sqrt(np.abs(x))


class Unstable(_Elementwise):
    """exp(x) / exp(x): NaN where exp(x) overflows; a numba-only rewrite stabilises it to 1."""

    def python(self, x: Any) -> Any:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.exp(x) / np.exp(x)


@numba_funcify.register(WrongOnNumba)
def _wrong(op: Any, node: Any = None, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def wrong(x: Any) -> Any:
        out = np.exp(x)
        return np.where(x > 2.0, out * 1.5, out)

    return wrong


@numba_funcify.register(NanOnNumba)
def _nan(op: Any, node: Any = None, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def nan(x: Any) -> Any:
        return np.sqrt(x)

    return nan


@numba_funcify.register(Unstable)
def _unstable(op: Any, node: Any = None, **kwargs: Any) -> Any:
    @numba_basic.numba_njit(fastmath=False)  # PyTensor's fastmath flags fold e / e to 1 on their own
    def unstable(x: Any) -> Any:
        return np.exp(x) / np.exp(x)

    return unstable


class Halve(_Elementwise):
    """x / 2. A wrong rewrite, registered for every backend, drops it."""

    def python(self, x: Any) -> Any:
        return x / 2


class Third(Halve):
    """x / 3. A wrong rewrite of numba's own (tagged "numba") drops it."""

    def python(self, x: Any) -> Any:
        return x / 3


@numba_funcify.register(Halve)
def _halve(op: Any, node: Any = None, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def halve(x: Any) -> Any:
        return x / 2

    return halve


@numba_funcify.register(Third)
def _third(op: Any, node: Any = None, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def third(x: Any) -> Any:
        return x / 3

    return third


class Grow(_Elementwise):
    """exp(x), in Python on every backend. A rewrite of every backend (right as mathematics)
    puts ``wrong_in_c`` in its place, so cvm is wrong only after its rewrites."""

    def python(self, x: Any) -> Any:
        return np.exp(x)


class NumbaOnly(_Elementwise):
    """2 * x on numba; no Python implementation: the py and cvm backends cannot run it (as a
    backend without an op, or without a dtype, cannot)."""

    def python(self, x: Any) -> Any:
        raise NotImplementedError("NumbaOnly has no Python implementation")


@numba_funcify.register(NumbaOnly)
def _numba_only(op: Any, node: Any = None, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def twice(x: Any) -> Any:
        return x * 2.0

    return twice


class WrongInC(UnaryScalarOp):  # type: ignore[misc]
    """exp(x) in Python; its C code is 1.5 * exp(x) wherever x > 2. As an Elemwise, cvm runs the
    C code (compiled once, then from the cache: fast tests) and py the Python."""

    nfunc_spec = None

    def impl(self, x: Any) -> Any:
        return np.exp(x)

    def c_code(self, node: Any, name: str, inputs: Any, outputs: Any, sub: Any) -> str:
        (x,), (z,) = inputs, outputs
        return f"{z} = {x} > 2 ? 1.5 * exp({x}) : exp({x});"

    def c_code_cache_version(self) -> tuple[int, ...]:
        return (1,)

    def grad(self, inputs: Any, output_gradients: Any) -> Any:
        """exp's: the gradient graph holds the C-wrong op too (a node ``grad`` makes)."""
        ((x,), (gz,)) = inputs, output_gradients
        return [gz * self(x)]


class COnly(UnaryScalarOp):  # type: ignore[misc]
    """2 * x in C; no Python implementation: py cannot run it (compiles, then fails at the call)."""

    nfunc_spec = None

    def impl(self, x: Any) -> Any:
        raise NotImplementedError("COnly has no Python implementation")

    def c_code(self, node: Any, name: str, inputs: Any, outputs: Any, sub: Any) -> str:
        (x,), (z,) = inputs, outputs
        return f"{z} = 2 * {x};"

    def c_code_cache_version(self) -> tuple[int, ...]:
        return (1,)


c_only = Elemwise(COnly(upgrade_to_float, name="c_only"))
wrong_in_c_scalar = WrongInC(upgrade_to_float, name="wrong_in_c")  # module-level: a script names it
wrong_in_c = Elemwise(wrong_in_c_scalar)
numba_only = NumbaOnly()
wrong_on_numba = WrongOnNumba()
nan_on_numba = NanOnNumba()
unstable = Unstable()
halve = Halve()
third = Third()
grow = Grow()


@node_rewriter([Halve])
def local_planted_drop_halve(fgraph: Any, node: Any) -> Any:
    """Halve(x) -> x: wrong (a planted rewrite, for every backend)."""
    if type(node.op) is Halve:
        return [node.inputs[0]]
    return None


@node_rewriter([Third])
def local_planted_drop_third(fgraph: Any, node: Any) -> Any:
    """Third(x) -> x: wrong (a planted rewrite of numba's own)."""
    return [node.inputs[0]]


@node_rewriter([Unstable])
def local_planted_stabilise(fgraph: Any, node: Any) -> Any:
    """Unstable(x) -> ones_like(x): exp(x) / exp(x) stabilised (a right rewrite, numba's own)."""
    return [pt.ones_like(node.inputs[0])]


@node_rewriter([Grow])
def local_planted_grow_in_c(fgraph: Any, node: Any) -> Any:
    """Grow(x) -> wrong_in_c(x): the same function, but an op whose C code is wrong (planted)."""
    return [wrong_in_c(node.inputs[0])]


def _register(rewriter: Any, *tags: str) -> None:
    """In PyTensor's specialize database under ``tags`` only: "fast_run" reaches every backend,
    "numba" the numba backend alone. They touch only graphs with the planted ops above."""
    from pytensor.compile.mode import optdb

    optdb["specialize"].register(
        rewriter.__name__, rewriter, *tags, use_db_name_as_tag=False, overwrite_existing=True
    )


_register(local_planted_drop_halve, "fast_run")
_register(local_planted_grow_in_c, "fast_run")
_register(local_planted_drop_third, "numba")
_register(local_planted_stabilise, "numba")
