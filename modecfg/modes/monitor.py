"""MonitorMode: call your functions before and after every node.

PyTensor calls them as ``f(fgraph, i, node, fn)``; Theano called them as
``f(i, node, fn)``. Both signatures are accepted, so Theano-era debugging code (the
``detect_nan`` of the classic FAQ) works unchanged. A MonitorMode pickles with the
function compiled in it when its callbacks do (module-level functions do): the adapter
for Theano's signature is a module-level class for that reason.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from modecfg._pytensor.subclasses import MonitoringMode
from modecfg.configuration import config

__all__ = ["MonitorMode", "TheanoCallback", "adapt_callback"]

Callback = Callable[..., Any]


class TheanoCallback:
    """A callback written as ``f(i, node, fn)``, called as PyTensor calls them."""

    __slots__ = ("func",)

    def __init__(self, func: Callback) -> None:
        self.func = func

    def __call__(self, fgraph: Any, i: int, node: Any, fn: Any) -> Any:
        return self.func(i, node, fn)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TheanoCallback) and other.func == self.func

    def __hash__(self) -> int:
        return hash(self.func)

    def __repr__(self) -> str:
        return f"TheanoCallback({self.func!r})"


def adapt_callback(func: Callback | None, role: str) -> Callback | None:
    """``func`` called as PyTensor calls it, whichever signature it was written with."""
    if func is None or isinstance(func, TheanoCallback):
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
        return TheanoCallback(func)
    raise TypeError(
        f"MonitorMode {role} must take (fgraph, i, node, fn) as in PyTensor or (i, node, fn) "
        f"as in Theano; {getattr(func, '__name__', func)!r} takes {len(required)} arguments"
    )


class MonitorMode(MonitoringMode):
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
        pre, post = adapt_callback(pre_func, "pre_func"), adapt_callback(post_func, "post_func")
        super().__init__(pre, post, optimizer, linker, db)
