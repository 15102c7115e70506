"""DebugMode under numpy 2: a fix for a PyTensor 3.0 defect, as picklable classes.

When a function updates a 0-d shared variable in place, DebugMode's linker restores the
destroyed input with ``ndarray.itemset``, which numpy 2 removed, and the first call
fails with an AttributeError. For a 0-d array ``a.fill(v)`` does exactly what
``a.itemset(v)`` did, so :class:`DebugMode` here uses a linker whose ``make_all`` is
PyTensor's own code with that one name changed (nothing is parsed or executed from
text). PyTensor's classes are left untouched. The fix verifies that the call is where
it expects it; where it is not (numpy 1, or a PyTensor that no longer has it),
:func:`debug_mode_class` returns PyTensor's DebugMode itself.

float32 tolerances: DebugMode compares each rewritten result with the one it replaces,
and each C result with the Python one, with PyTensor's default float32 tolerances
(atol = rtol = 1e-5), tighter than float32 rounding over a real graph: the demo's
``log1p(-sigmoid(x)) -> -softplus(x)`` differs by 9e-5 and was reported as a bug. This
DebugMode compares float32 (and complex64) results with PyTensor's own "sloppy" float32
tolerances (atol 1e-4, rtol 1e-3; looser ones if ``tensor.cmp_sloppy`` set them), through
the per-variable ``tag.values_eq_approx`` that DebugMode honours; float64 is unchanged.

In-place operations that allocate: DebugMode logs ``Optimization Warning: input idx 0 marked as
destroyed was not changed for node 'Gemv{inplace}(...)'`` where an operation declared to overwrite
an input wrote its result to new memory instead (PyTensor's Python ``Gemv``, through scipy's
``gemv``, does so). Plain PyTensor's DebugMode prints the same lines; the values are checked all the
same. modecfg's DebugMode says once a process, on the ``modecfg.debugmode`` logger, what the
lines mean and how to turn them off; PyTensor's lines are kept as they are. (Where the numpy 2 fix
is not needed, PyTensor's ``make_all`` runs as it is, without the note.)

Stabilising rewrites: PyTensor rewrites ``log1p(-sigmoid(x))`` into ``-softplus(x)`` so that
the result is finite where the expression as written overflows to ``-inf``. DebugMode
compared the two and called the better value a ``BadOptimization``: the tutorial's
cross-entropy failed at its first step, and the exercise as the tutorial writes it (784
features, weights drawn at scale 1) failed on ``local_mul_canonizer`` and
``local_greedy_distributor`` too. Here a rewrite is not judged, in a call, by a result the
expression as written overflows in (see :func:`stabilized`); in every other call it is, as
PyTensor judges it. Said at INFO level on the ``modecfg.debugmode`` logger.

The classes are defined at module level so that a function compiled in this DebugMode
pickles as PyTensor's does. Imported only when a DebugMode is built.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
from pytensor.compile.debug import debugmode as _dm

__all__ = ["DebugMode", "debug_mode_class", "fix_in_place", "float32_close", "rename_attribute"]

FLOAT32_ATOL = 1e-4  # PyTensor's own float32 tolerances under tensor.cmp_sloppy=1
FLOAT32_RTOL = 1e-3
_NARROW = ("float32", "complex64")


def _close(a: Any, b: Any, remove_inf: bool, remove_nan: bool) -> bool:
    from pytensor.tensor import math as ptm
    from pytensor.tensor.type import values_eq_approx

    atol = max(FLOAT32_ATOL, ptm.float32_atol)
    rtol = max(FLOAT32_RTOL, ptm.float32_rtol)
    return bool(values_eq_approx(a, b, remove_inf, remove_nan, rtol=rtol, atol=atol))


def float32_close(a: Any, b: Any) -> bool:
    """DebugMode's comparison of two float32 results, with tolerances that fit float32."""
    return _close(a, b, False, False)


def float32_close_remove_inf(a: Any, b: Any) -> bool:
    """``values_eq_approx_remove_inf`` (set by stability rewrites) with float32 tolerances."""
    return _close(a, b, True, False)


def float32_close_remove_nan(a: Any, b: Any) -> bool:
    return _close(a, b, False, True)


def float32_close_remove_inf_nan(a: Any, b: Any) -> bool:
    return _close(a, b, True, True)


OVERFLOW_MARGIN = 1e3  # a value within this factor of its dtype's largest is at overflow's edge


def stabilized(rule: Any, old: Any, new: Any) -> bool:
    """DebugMode's comparison of a rewritten result ``new`` with the ``old`` one it replaced.

    In a call where the expression as written overflows (gives inf or nan, or a value within
    1000x of its dtype's largest, for some element of this result), its values are no reference,
    and the rewrite is not judged by them, whatever rewrite it is: it may make them finite (a
    stabilisation: PyTensor's ``log1p(-sigmoid(x)) -> -softplus(x)``), meet the overflow in
    another order (the Theano tutorial's exercise in float32: 6.1e37 as written, inf after
    ``local_greedy_distributor``; -0.0 and nan, a zero times an overflow), or be right where the
    written form is not (the same step: -0.00349 as written and -0.00250 rewritten, 1 - p
    cancelling where p rounds to 1). Said at INFO level (``modecfg.debugmode``). In every other
    call the dtype's rule applies, as in PyTensor: a rewrite that changes a finite value beyond
    tolerance, or makes it inf or nan, is a BadOptimization.
    """
    if rule is None:
        from pytensor.tensor.type import values_eq_approx

        rule = values_eq_approx
    if isinstance(old, np.ndarray | np.generic):
        before = np.asarray(old)
        if before.dtype.kind in "fc" and before.size:
            edge = np.finfo(before.dtype).max / OVERFLOW_MARGIN
            overflowing = int((~(np.isfinite(before) & (np.abs(before) <= edge))).sum())
            if overflowing:
                import logging

                logging.getLogger("modecfg.debugmode").info(
                    "a rewrite not judged: the expression as written overflows in this call (%d of "
                    "%d values inf, nan or near the largest %s)", overflowing, before.size, before.dtype,
                )  # fmt: skip
                return True
    return bool(rule(old, new))


def _float32_rule(current: Any) -> Any:
    """The float32 comparison for a variable whose comparison is ``current`` (None: none set)."""
    from pytensor.tensor import type as tt

    return {
        None: float32_close,
        tt.values_eq_approx_remove_inf: float32_close_remove_inf,
        tt.values_eq_approx_remove_nan: float32_close_remove_nan,
        tt.values_eq_approx_remove_inf_nan: float32_close_remove_inf_nan,
    }.get(current, current)  # a rule of PyTensor's or the user's own: kept


def _comparisons(fgraph: Any) -> None:
    """Compare this graph's float32 results with float32 tolerances, and let a rewrite make a
    non-finite value finite (see the module docstring)."""
    import functools

    tracker = getattr(fgraph, "equivalence_tracker", None)
    variables = set(fgraph.variables) | set(getattr(tracker, "reasons", {}))
    for var in variables:
        dtype = str(getattr(var.type, "dtype", ""))
        if not dtype.startswith(("float", "complex")):
            continue
        rule = getattr(var.tag, "values_eq_approx", None)
        if isinstance(rule, functools.partial) and rule.func is stabilized:
            continue
        if dtype in _NARROW:
            rule = _float32_rule(rule)
        var.tag.values_eq_approx = functools.partial(stabilized, rule)


def rename_attribute(code: types.CodeType, old: str, new: str) -> tuple[types.CodeType, int]:
    """``code`` with attribute name ``old`` read as ``new``, in it and its nested code.

    Returns the new code and how many code objects changed.
    """
    changed = 0
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            const, n = rename_attribute(const, old, new)
            changed += n
        consts.append(const)
    names = code.co_names
    if old in names:
        names = tuple(new if n == old else n for n in names)
        changed += 1
    return code.replace(co_consts=tuple(consts), co_names=names), changed


NOT_REUSED = (
    "the 'Optimization Warning: input idx N marked as destroyed was not changed' lines are PyTensor's "
    "DebugMode noting that an operation declared in place (%s) wrote its result to new memory in its "
    "%s implementation instead of overwriting its input. Its values are checked all the same, and "
    "plain PyTensor's DebugMode prints the same lines: it costs memory, not correctness. "
    "DebugMode__warn_input_not_reused=False turns them off. (Said once.)"
)
_EXPLAINED: list[bool] = []  # [True] once NOT_REUSED has been said in this process


def _new_memory(node: Any, storage_map: Any) -> bool:
    """Whether PyTensor's ``_check_inputs`` will say of ``node`` that an input marked as destroyed
    was not changed (the output it declares in place is not that input's storage)."""
    if isinstance(node.op, _dm.OutputGuard):
        return False
    return any(
        storage_map[node.outputs[out]][0] is not storage_map[node.inputs[ins[0]]][0]
        for out, ins in node.op.destroy_map.items()
    )


def check_inputs(node: Any, storage_map: Any, *args: Any, **kwargs: Any) -> Any:
    """PyTensor's ``_check_inputs`` as DebugMode's linker calls it, followed, the first time it
    says an in-place input was not changed, by what that means (:data:`NOT_REUSED`)."""
    explain = not _EXPLAINED and kwargs.get("warn_input_not_reused", True) and _new_memory(node, storage_map)
    result = _dm._check_inputs(node, storage_map, *args, **kwargs)
    if explain:
        import logging

        _EXPLAINED.append(True)
        where = "Python" if kwargs.get("perform") == "py" else "compiled"
        logging.getLogger("modecfg.debugmode").warning(NOT_REUSED, node.op, where)
    return result


def _fixed_make_all() -> Any:
    """PyTensor's ``_Linker.make_all`` reading ``fill`` for ``itemset`` and calling
    :func:`check_inputs`, or None if not needed."""
    if hasattr(np.ndarray, "itemset"):  # numpy 1: nothing to fix
        return None
    make_all = _dm._Linker.make_all
    code, changed = rename_attribute(make_all.__code__, "itemset", "fill")
    if changed != 1:  # not the code this fix was written for: leave it alone
        return None
    # its module's names as they are now, ``_check_inputs`` the one that explains (PyTensor's module
    # itself untouched)
    names = {**make_all.__globals__, "_check_inputs": check_inputs}
    fixed = types.FunctionType(code, names, make_all.__name__, make_all.__defaults__, make_all.__closure__)
    fixed.__kwdefaults__ = make_all.__kwdefaults__
    fixed.__qualname__ = make_all.__qualname__
    return fixed


_MAKE_ALL: list[Any] = []  # [the fixed make_all, or None]: worked out at the first use, not at import


def fixed_make_all() -> Any:
    """The fixed ``make_all`` (made once, when first asked), or None where PyTensor's is used as it is."""
    if not _MAKE_ALL:
        _MAKE_ALL.append(_fixed_make_all())
    return _MAKE_ALL[0]


def fix_in_place() -> bool:
    """Whether modecfg's DebugMode runs the fixed ``make_all`` here (``modecfg doctor``)."""
    return fixed_make_all() is not None


class _Linker(_dm._Linker):  # type: ignore[misc]
    """DebugMode's linker, restoring 0-d inputs with ``fill`` (where numpy 2 needs it)."""

    def make_all(self, *args: Any, **kwargs: Any) -> Any:
        return (fixed_make_all() or _dm._Linker.make_all)(self, *args, **kwargs)

    def accept(self, fgraph: Any, no_recycling: Any = None, profile: Any = None) -> Any:
        if self.fgraph is not None and self.fgraph is not fgraph:  # PyTensor asserts its own class
            return type(self)(maker=self.maker).accept(fgraph, no_recycling, profile)
        return super().accept(fgraph, no_recycling, profile)


class _Maker(_dm._Maker):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # PyTensor's maker made its own _Linker; this one's differs by make_all only.
        self.linker.__class__ = _Linker
        _comparisons(self.fgraph)


class DebugMode(_dm.DebugMode):  # type: ignore[misc]
    """PyTensor's DebugMode, working under numpy 2."""

    @property
    def function_maker(self) -> type[Any]:
        return _Maker


def debug_mode_class() -> type[Any]:
    """The DebugMode modecfg builds: PyTensor's, with the numpy 2 fix where it applies and
    float32 tolerances that fit float32."""
    return DebugMode
