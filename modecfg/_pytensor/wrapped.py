"""Modes whose linker wraps the linker that runs the code: the NaN guard, MonitorMode.

PyTensor 3.3 stamps the compile's mode on the graph while rewriting it, and rewrites the
inner graphs of scans and OpFromGraphs for that mode's linker, chosen by the linker's class.
A wrapper's class has no entry there (PyTensor logs an error and leaves the inner graphs
unrewritten), and the code runs on the linker it wraps anyway: so the rewrites of such a
mode are stamped with a mode of the wrapped linker. Earlier releases stamp nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["rewrites_for", "stamps_modes"]


def stamps_modes() -> bool:
    """Whether the installed PyTensor stamps the compile's mode on the graph it rewrites."""
    from pytensor.compile import mode

    return hasattr(mode, "_ActiveModeGraphRewriter")


def rewrites_for(rewriter: Any, mode: Any, linker: Any) -> Any:
    """``mode``'s ``rewriter`` (what ``Mode.optimizer`` gave), rewriting for ``linker``."""
    query = mode.provided_optimizer
    if getattr(rewriter, "_mode", None) is mode:  # PyTensor 3.3's stamping wrapper
        from pytensor.compile.mode import Mode

        rewriter._mode = Mode(linker=linker, optimizer=query)
    return rewriter
