"""MonitorMode: call your functions before and after every node.

PyTensor calls them as ``f(fgraph, i, node, fn)``; Theano called them as
``f(i, node, fn)``. Both signatures are accepted, so Theano-era debugging code (the
``detect_nan`` of the classic FAQ) works unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pytensor.compile.debug.monitormode import MonitorMode as _PyTensorMonitorMode

from modecfg.config import config

__all__ = ["MonitorMode", "adapt_callback"]

Callback = Callable[..., Any]


def adapt_callback(func: Callback | None, role: str) -> Callback | None:
    """``func`` called as PyTensor calls it, whichever signature it was written with."""
    if func is None or getattr(func, "_modecfg_adapted", False):
        return func
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: trust it
        return func
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    takes_varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    if takes_varargs or len(required) <= 4 <= len(positional):
        return func  # PyTensor's (fgraph, i, node, fn)
    if len(required) <= 3 <= len(positional):

        def theano_style(fgraph: Any, i: int, node: Any, fn: Any) -> Any:
            return func(i, node, fn)

        theano_style._modecfg_adapted = True  # type: ignore[attr-defined]
        return theano_style
    raise TypeError(
        f"MonitorMode {role} must take (fgraph, i, node, fn) as in PyTensor or (i, node, fn) "
        f"as in Theano; {getattr(func, '__name__', func)!r} takes {len(required)} arguments"
    )


class MonitorMode(_PyTensorMonitorMode):  # type: ignore[misc]
    """PyTensor's MonitorMode, taking callbacks of either signature and modecfg's optimizer."""

    def __init__(
        self,
        pre_func: Callback | None = None,
        post_func: Callback | None = None,
        optimizer: Any = "default",
        linker: Any = None,
        db: Any = None,
    ) -> None:
        if optimizer == "default":
            optimizer = str(config.optimizer)
        super().__init__(
            adapt_callback(pre_func, "pre_func"),
            adapt_callback(post_func, "post_func"),
            optimizer=optimizer,
            linker=linker,
            db=db,
        )
