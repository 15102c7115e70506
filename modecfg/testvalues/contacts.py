"""Test values' contacts with PyTensor: its patches, beside their replacements.

Both are on demand: a process applies them when ``compute_test_value`` is first touched (assigned,
overridden, or set when PyTensor is imported): :func:`touched`, which modecfg's wiring subscribes
to the flag. Until then ``Op.__call__`` and ``scan`` are PyTensor's own. Once on, each reads the
flag at every call and, with it on, loads :mod:`modecfg.testvalues.values` (at its first such
call) to evaluate the new node. The replacements are module-level functions: they pickle.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from modecfg._pytensor.patch import Patch
from modecfg.configuration import config

__all__ = ["PATCHES", "SCAN_TEST_VALUES", "TEST_VALUES", "op_call", "scan", "touched"]


def op_call(self: Any, call: Any, *inputs: Any, **kwargs: Any) -> Any:
    """``Op.__call__``; the new node gets its test values while compute_test_value is on."""
    result = call(self, *inputs, **kwargs)
    _traced_from_the_caller(result)
    if config.compute_test_value != "off":
        from modecfg.testvalues.values import after_op_call

        after_op_call(result)
    return result


def _traced_from_the_caller(result: Any) -> None:
    """The new variables' creation traces as PyTensor records them without this patch: from the
    line that called ``Op.__call__`` outwards, ``traceback.limit`` frames. PyTensor's own record
    counts the frames of this module (:func:`op_call`, and :func:`scan` for a node made inside a
    loop), and under ``traceback.limit=1`` it named this module's line instead of the user's."""
    made = result if isinstance(result, list | tuple) else [result]
    nodes = {id(v.owner): v.owner for v in made if getattr(v, "owner", None) is not None}
    variables = [v for node in nodes.values() for v in node.outputs if getattr(v.tag, "trace", None)]
    if not variables:
        return
    from modecfg._pytensor.graphs import retrace

    retrace(variables, __file__, int(config.traceback.limit), _frames_inside)


def _frames_inside() -> int:
    """How many frames deep the outermost frame of this module is, counted from the caller's (any
    wrapper between this module's frames counted too)."""
    inside, depth = 0, 0
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and depth < 256:
        depth += 1
        if frame.f_code.co_filename == __file__:
            inside = depth
        frame = frame.f_back
    return inside + 1  # and the caller's own (retrace)


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
