"""Test values, as Theano had them: every new node is evaluated as the graph is written.

With ``compute_test_value`` not ``off``, each node built through an Op (``x + y``,
``pt.exp(x)``, ``x.max()``) computes its outputs' ``tag.test_value`` at once from its
inputs' values: ``var.tag.test_value`` set by the user on inputs, the value of a shared
variable, the data of a constant. A shape or dtype mistake then fails on the line that
makes it. The flag says what a failure does: ``raise`` a
:class:`~modecfg.errors.TestValueError` at that line, ``warn`` with a
:class:`TestValueWarning` and carry on, ``ignore`` carry on silently, ``pdb`` stop there.

The operation's Python implementation computes the values (its C code where it has no
Python one). An operation that has neither, and the inner graphs of scan, get no test
value: that is said once per operation type, and the nodes after them are skipped
without more messages. Nothing of this costs anything until the flag is first turned
on in the process: only then are ``Op.__call__`` and ``scan`` wrapped (the patches
"test values" of :mod:`modecfg.testvalues.contacts`, which call :func:`after_op_call`
and :func:`after_scan`).
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import numpy as np

from modecfg._locks import fork_safe
from modecfg._pytensor import marks
from modecfg._pytensor.graphs import CannotRun, is_scalar_op, run_node, scan_function
from modecfg._source import source_line
from modecfg._warn import act, warn
from modecfg.configuration import config
from modecfg.errors import TestValueError, TestValueWarning

__all__ = ["TestValueWarning", "after_op_call", "after_scan", "compute_test_values"]

_log = logging.getLogger("modecfg.testvalues")
_UNAVAILABLE = marks.NO_TEST_VALUE  # tag attribute: no value, and no more messages
_said: set[str] = set()  # op types already reported as unable to compute
_lock = fork_safe(sys.modules[__name__], "_lock", threading.Lock)


def _describe(values: list[Any]) -> str:
    return ", ".join(f"{getattr(v, 'dtype', type(v).__name__)}{tuple(np.shape(v))}" for v in values)


def _inside_scan() -> bool:
    """True while scan builds its inner graph (its placeholders have no values)."""
    scan_code = scan_function().__code__
    frame: Any = sys._getframe(2)
    while frame is not None:
        if frame.f_code is scan_code:
            return True
        frame = frame.f_back
    return False


def _value_of(var: Any) -> tuple[bool, Any]:
    """(True, value) if ``var`` has a test value; computes it from its owner if needed."""
    if getattr(var.tag, _UNAVAILABLE, False):
        return False, None
    if hasattr(var.tag, "test_value"):
        return True, var.tag.test_value
    if hasattr(var, "data") and var.owner is None:  # a constant
        return True, var.data
    if hasattr(var, "get_value"):  # a shared variable
        return True, var.get_value(borrow=True)
    if var.owner is not None:  # made without Op.__call__ (a helper building Apply nodes)
        compute_test_values(var.owner)
        if hasattr(var.tag, "test_value"):
            return True, var.tag.test_value
    return False, None


def _mark_unavailable(node: Any) -> None:
    for out in node.outputs:
        setattr(out.tag, _UNAVAILABLE, True)


def _report(message: str, mode: str, cause: BaseException | None = None) -> None:
    def error() -> TestValueError:
        made = TestValueError(message)
        made.__cause__ = cause
        return made

    act(mode, message, warning=TestValueWarning, error=error, log=_log)


def compute_test_values(node: Any, mode: str | None = None) -> None:
    """Give the outputs of ``node`` their test values, or report why not (see the module)."""
    mode = mode or str(config.compute_test_value)
    if mode == "off" or hasattr(node.outputs[0].tag, "test_value"):
        return
    if is_scalar_op(node.op):
        # The scalar graphs inside Elemwise and Composite (built by gradients and
        # rewrites) are inner graphs: nothing to start from.
        _mark_unavailable(node)
        return
    if _inside_scan():
        return  # scan's inner graph; its outer outputs are computed when scan returns
    values = []
    for var in node.inputs:
        ok, value = _value_of(var)
        if not ok:
            _mark_unavailable(node)
            if getattr(var.tag, _UNAVAILABLE, False):
                return  # already said upstream
            where = source_line(node)
            at = f" at {where}: {where.code}" if where else ""
            _report(
                f"{node.op}{at}: its input {var.name or var} has no test value; set "
                f"{var.name or 'it'}.tag.test_value = <an array of the right shape and dtype>",
                mode,
            )
            return
        try:
            values.append(var.type.filter(value, allow_downcast=True))
        except Exception as exc:
            _mark_unavailable(node)
            _report(f"the test value of {var.name or var} does not fit its type {var.type}: {exc}", mode, exc)
            return
    try:
        outputs = run_node(node, values)
    except CannotRun as exc:
        _mark_unavailable(node)
        kind = type(node.op).__name__
        with _lock:
            first = kind not in _said
            _said.add(kind)
        if first:
            warn(
                f"operations of type {kind} have no implementation that can compute test values "
                f"({exc}); their outputs, and what follows from them, get none",
                TestValueWarning,
            )
        return
    except Exception as exc:
        _mark_unavailable(node)
        where = source_line(node)
        at = f"\n  at {where}: {where.code}" if where else ""
        _report(
            f"{node.op} fails on the test values of its inputs ({_describe(values)}): "
            f"{type(exc).__name__}: {exc}{at}",
            mode,
            exc,
        )
        return
    for out, value in zip(node.outputs, outputs, strict=True):
        out.tag.test_value = value


def after_op_call(result: Any) -> None:
    """``Op.__call__`` returned ``result``: its node gets its test values."""
    first = result[0] if isinstance(result, list) else result
    node = getattr(first, "owner", None)
    if node is not None:
        compute_test_values(node)


def after_scan(result: Any) -> None:
    """``scan`` returned ``result``: its outputs get their test values (via Scan.perform)."""
    pending = [result]
    while pending:
        item = pending.pop()
        if isinstance(item, list | tuple):
            pending.extend(item)
        elif getattr(item, "owner", None) is not None:
            _value_of(item)
