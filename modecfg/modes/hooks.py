"""Where modecfg meets PyTensor, installed once PyTensor is loaded.

* PyTensor's mode table answers modecfg's mode names (:mod:`modecfg.modes.pytensor_table`);
* every compile, whichever door it comes through, first keeps an untouched copy of the
  user's graph (for locating errors, :mod:`modecfg.modes.locate`) and checks it for
  float64 under floatX=float32 (:mod:`modecfg.checks.enforce`), before rewriting;
* errors of compiled functions get the user's line (:mod:`modecfg.modes.locate`).
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["install"]

_lock = threading.Lock()
_installed = False


def before_rewrites(fgraph: Any) -> None:
    """What every compile does with the user's graph before PyTensor rewrites it."""
    from modecfg.checks.enforce import enforce
    from modecfg.modes.locate import remember

    remember(fgraph)
    enforce(fgraph)


def install() -> None:
    global _installed
    with _lock:
        if _installed:
            return
        from pytensor.compile.maker import FunctionMaker

        from modecfg.debug import testvalues
        from modecfg.modes import locate, pytensor_table

        pytensor_table.install()
        locate.install()
        testvalues.watch()
        prepare = FunctionMaker.prepare_fgraph

        from modecfg.config import config

        def prepare_fgraph(inputs: Any, outputs: Any, additional_outputs: Any, fgraph: Any,
                           *args: Any, **kwargs: Any) -> Any:  # fmt: skip
            before_rewrites(fgraph)
            if config.compute_test_value == "off":
                return prepare(inputs, outputs, additional_outputs, fgraph, *args, **kwargs)
            # Rewrites build nodes whose inputs have no test values: not the user's graph.
            with config.override(compute_test_value="off"):
                return prepare(inputs, outputs, additional_outputs, fgraph, *args, **kwargs)

        FunctionMaker.prepare_fgraph = staticmethod(prepare_fgraph)
        _installed = True
