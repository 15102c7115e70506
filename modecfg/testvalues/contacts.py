"""Test values' contacts with PyTensor: its patches, beside their replacements.

Both are on demand: a process applies them when ``compute_test_value`` is first touched (assigned,
overridden, or set when PyTensor is imported): :func:`touched`, which modecfg's wiring subscribes
to the flag. Until then ``Op.__call__`` and ``scan`` are PyTensor's own. Once on, each reads the
flag at every call and, with it on, loads :mod:`modecfg.testvalues.values` (at its first such
call) to evaluate the new node. The replacements are module-level functions: they pickle.
"""

from __future__ import annotations

import sys
from typing import Any

from modecfg._pytensor.patch import Patch
from modecfg.configuration import config

__all__ = ["PATCHES", "SCAN_TEST_VALUES", "TEST_VALUES", "op_call", "scan", "touched"]


def op_call(self: Any, call: Any, *inputs: Any, **kwargs: Any) -> Any:
    """``Op.__call__``; the new node gets its test values while compute_test_value is on."""
    result = call(self, *inputs, **kwargs)
    if config.compute_test_value != "off":
        from modecfg.testvalues.values import after_op_call

        after_op_call(result)
    return result


def scan(scan_: Any, *args: Any, **kwargs: Any) -> Any:
    """``scan``; its outputs get their test values while compute_test_value is on."""
    result = scan_(*args, **kwargs)
    if config.compute_test_value != "off":
        from modecfg.testvalues.values import after_scan

        after_scan(result)
    return result


TEST_VALUES = Patch(
    name="test values",
    module="pytensor.graph.op",
    attr="Op.__call__",
    params=("self",),
    on_demand=True,
    replacement=op_call,
    why="compute_test_value: each node is evaluated as the graph is written (on once the "
    "flag is first touched)",
)


SCAN_TEST_VALUES = Patch(
    name="scan test values",
    module="pytensor.scan.basic",
    attr="scan",
    bound_in=(
        "pytensor.scan",
        "pytensor",
        "pytensor.scan.views",
        "pytensor.scan.checkpoints",
        "pytensor.tensor.pad",
    ),
    on_demand=True,
    replacement=scan,
    why="compute_test_value: scan's outputs get their values when scan returns (on once the "
    "flag is first touched)",
)

PATCHES = (TEST_VALUES, SCAN_TEST_VALUES)


def touched(change: object = None) -> None:
    """The flag is assigned or overridden (the override is not entered yet), or PyTensor was
    imported with it on: the patches are applied (once PyTensor is there; PyTensor's import
    calls this again)."""
    if "pytensor" in sys.modules:
        from modecfg._pytensor.patches import enable

        for patch in PATCHES:
            enable(patch)
