"""Judging values across backends: dtype-aware tolerances, how two values differ, and which
backend is the odd one for each output (step 1 of :mod:`modecfg.compare.mode`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from modecfg._record import Record
from modecfg.configuration import config

__all__ = [
    "FLAGS",
    "PER_NODE",
    "REWRITES",
    "WRITTEN",
    "Mismatch",
    "Settings",
    "difference",
    "judge",
    "tolerance",
]

PER_NODE = frozenset({"py", "vm", "vm_nogc", "cvm", "cvm_nogc", "c|py", "c|py_nogc", "c"})
WRITTEN = "the graph as written"
REWRITES = "the rewrites"  # the odd one when every backend differs alike from the graph as written
# (rtol, atol) by dtype: PyTensor's test tolerances; float32's rtol 1e-4, not 1e-5, since
# backends sum and fuse in different orders
_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


class Settings(Record):
    """A CompareMode's own linkers and tolerances; None follows the CompareMode.* flag."""

    linkers: str | None = None
    rtol: float | None = None
    atol: float | None = None


FLAGS = Settings()  # every setting follows its flag


def tolerance(dtype: Any, settings: Settings = FLAGS) -> tuple[float, float]:
    """(rtol, atol) for values of ``dtype``: the mode's, else the CompareMode flags, else by dtype."""
    cm = config.CompareMode
    name = np.dtype(dtype).name if dtype is not None else "float64"
    if name.startswith("complex"):
        name = {"complex64": "float32"}.get(name, "float64")
    rtol, atol = _TOLERANCES.get(name, _TOLERANCES["float64"])
    rtol = settings.rtol if settings.rtol is not None else rtol if cm.rtol is None else float(cm.rtol)
    atol = settings.atol if settings.atol is not None else atol if cm.atol is None else float(cm.atol)
    return rtol, atol


def _array(value: Any) -> np.ndarray | None:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic | float | int | bool | complex):
        return np.asarray(value)
    if hasattr(value, "__array__") and hasattr(value, "dtype") and hasattr(value, "shape"):
        return np.asarray(value)
    return None  # a random generator, a list: not compared


def _at(index: tuple[int, ...]) -> str:
    return f"index {index}" if index else "the value"


def _show(x: Any) -> str:
    return np.format_float_positional(x, precision=8, trim="-") if isinstance(x, float) else repr(x)


def difference(a: Any, b: Any, first: str, second: str, dtype: Any = None, settings: Settings = FLAGS) -> str:
    """How ``a`` (from ``first``) differs from ``b`` (from ``second``); '' when they agree.

    Floats within the tolerance agree; NaN agrees with NaN, Inf with an Inf of the same sign;
    other dtypes must be equal. Values that are not arrays (random generators) are not compared.
    """
    x, y = _array(a), _array(b)
    if x is None or y is None:
        return ""
    if x.shape != y.shape:
        return f"shape {x.shape} on {first}, {y.shape} on {second}"
    if x.dtype.kind not in "fc" or y.dtype.kind not in "fc":
        unequal = np.asarray(x != y)
        if not unequal.any():
            return ""
        index = tuple(int(i) for i in np.unravel_index(int(np.argmax(unequal)), x.shape))
        return (f"{int(unequal.sum())} of {x.size} values differ; first at {_at(index)}: "
                f"{first} {_show(x[index].item())}, {second} {_show(y[index].item())}")  # fmt: skip
    rtol, atol = tolerance(dtype if dtype is not None else np.promote_types(x.dtype, y.dtype), settings)
    for kind, test in (("NaN", np.isnan), ("Inf", np.isinf)):
        xs, ys = test(x), test(y)
        # NaN agrees with NaN; an Inf only with an Inf of the same sign
        unlike = (xs != ys) if kind == "NaN" else ((xs | ys) & (x != y) & ~np.isnan(x) & ~np.isnan(y))
        if unlike.any():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmax(unlike)), x.shape))
            return (f"{kind} in {int(xs.sum())} of {x.size} values on {first}, {int(ys.sum())} on {second}; "
                    f"first at {_at(index)}: {first} {_show(x[index].item())}, "
                    f"{second} {_show(y[index].item())}")  # fmt: skip
    finite = np.isfinite(x) & np.isfinite(y)
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.where(finite, np.abs(x - y), 0.0)
        bad = finite & (gap > atol + rtol * np.abs(y))
    if not bad.any():
        return ""
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, gap, -1.0))), x.shape))
    return (f"{int(bad.sum())} of {x.size} values differ beyond rtol={rtol:g}, atol={atol:g}; most at "
            f"{_at(index)}: {first} {_show(x[index].item())}, {second} {_show(y[index].item())}")  # fmt: skip


def joined(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def all_finite(value: Any) -> bool:
    x = _array(value)
    return x is None or x.dtype.kind not in "fc" or bool(np.isfinite(x).all())


class Mismatch(Record):
    """One output (or update) on which one backend differs from the reference."""

    output: str  # "output 0", "update of w"
    position: int  # among the function's outputs and updates
    backend: str  # the odd one; "the rewrites" when every backend differs from the graph as written
    reference: str  # what it was compared with
    detail: str  # how it differs (difference())
    stabilised: bool = False  # finite where the graph as written is not: perhaps its rewrites' doing

    def describe(self) -> str:
        if self.backend == REWRITES:
            return f"{self.output}: every backend differs alike from {self.reference}: {self.detail}"
        return f"{self.output}: {self.backend} differs from {self.reference}: {self.detail}"


def judge(results: dict[str, list[Any]], own: str, names: Sequence[str], dtypes: Sequence[Any],
          settings: Settings = FLAGS) -> list[Mismatch]:  # fmt: skip
    """The outputs on which the backends differ (see the module docstring, step 1)."""
    mismatches = []
    backends = [k for k in results if k != WRITTEN]
    written = results.get(WRITTEN)
    for i, name in enumerate(names):
        dtype = dtypes[i] if i < len(dtypes) else None
        if written is not None and all_finite(written[i]):
            odd = {
                b: difference(results[b][i], written[i], b, WRITTEN, dtype, settings=settings)
                for b in backends
            }
            odd = {b: d for b, d in odd.items() if d}
            if not odd:
                continue
            agree = [b for b in backends if b not in odd]
            if (
                len(odd) == len(backends)
                and len(backends) > 1
                and not any(
                    difference(results[b][i], results[own][i], b, own, dtype, settings=settings)
                    for b in backends
                )
            ):
                mismatches.append(Mismatch(name, i, REWRITES, WRITTEN, odd[own]))
                continue
            reference = joined([*agree, WRITTEN])
            mismatches += [Mismatch(name, i, b, reference, d) for b, d in odd.items()]
            continue
        # The graph as written makes NaN or Inf here (or is unknown): the backends among themselves.
        groups: list[list[str]] = []
        for b in backends:
            for group in groups:
                if not difference(results[b][i], results[group[0]][i], b, group[0], dtype, settings=settings):
                    group.append(b)
                    break
            else:
                groups.append([b])
        if len(groups) < 2:
            continue
        majority = max(groups, key=lambda g: (len(g), any(b in PER_NODE for b in g), -groups.index(g)))
        for group in groups:
            if group is majority:
                continue
            for b in group:
                detail = difference(
                    results[b][i], results[majority[0]][i], b, majority[0], dtype, settings=settings
                )
                finite = written is not None and all_finite(results[b][i])
                if written is not None and not finite:
                    detail += f" ({WRITTEN} makes NaN or Inf too: the others' rewrites stabilise it)"
                # finite where the graph as written is not: its rewrites' doing (not reported), or
                # its own (a max that skips NaN): stabilised=True asks the caller to tell which
                mismatches.append(Mismatch(name, i, b, joined(majority), detail, stabilised=finite))
    return mismatches
