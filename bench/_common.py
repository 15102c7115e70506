"""What every bench script shares: alternating rounds, and plain PyTensor as the baseline.

* ``rounds(functions, ...)`` times each function in turn, round after round, so that the
  machine's drift hits every side alike; it returns per-round seconds per call.
* ``plain_pytensor()`` takes modecfg's integration out of PyTensor for the block
  (``modecfg._pytensor.uninstall``), so that what is compiled there is PyTensor itself;
  modecfg's side is compiled outside it. Compiled functions keep what they were
  compiled with.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["median", "paired_differences", "plain_pytensor", "rounds"]


def rounds(functions: dict[str, Callable[[], Any]], n_rounds: int, calls: int) -> dict[str, list[float]]:
    """Seconds per call of each function, one entry per round; the functions alternate."""
    for fn in functions.values():
        fn()  # warm up (numba compiles at the first call)
    times: dict[str, list[float]] = {label: [] for label in functions}
    for _ in range(n_rounds):
        for label, fn in functions.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            times[label].append((time.perf_counter() - start) / calls)
    return times


def median(values: list[float]) -> float:
    return statistics.median(values)


def paired_differences(with_: list[float], without: list[float]) -> tuple[float, float]:
    """Median of the per-round differences, and their spread (median absolute deviation)."""
    diffs = [a - b for a, b in zip(with_, without, strict=True)]
    mid = statistics.median(diffs)
    return mid, statistics.median(abs(d - mid) for d in diffs)


@contextmanager
def plain_pytensor() -> Iterator[None]:
    """PyTensor without modecfg's integration points, for the block."""
    from modecfg._pytensor import install, uninstall

    uninstall()
    try:
        yield
    finally:
        install()
