"""Where modecfg meets PyTensor, installed once PyTensor is loaded.

* PyTensor's mode table answers modecfg's mode names (:mod:`modecfg.modes.pytensor_table`);
* every compile, whichever door it comes through, first keeps an untouched copy of the
  user's graph (for locating errors, :mod:`modecfg.modes.locate`) and checks it for
  float64 under floatX=float32 (:mod:`modecfg.checks.enforce`), before rewriting;
* errors of compiled functions get the user's line (:mod:`modecfg.modes.locate`);
* profiles are summarized at exit by modecfg (:mod:`modecfg.profiles.session`);
* test values are computed once the flag is on (:mod:`modecfg.debug.testvalues`).
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
    fgraph.attach_feature(_carry_traces())


_CarryTraces: Any = None


def _carry_traces() -> Any:
    """A feature that gives a rewrite's new variable the user line of the one it replaces.

    Many rewrites (fusion, BLAS) make nodes with no trace. The line goes to
    ``tag.modecfg_trace``, not ``tag.trace``: it is the line of the expression the node
    computes, good for profiles, but errors re-run the call to find the exact one.
    """
    global _CarryTraces
    if _CarryTraces is None:
        from pytensor.graph.features import Feature

        from modecfg._source import user_frame

        class CarryTraces(Feature):  # type: ignore[misc]
            def on_change_input(self, fgraph: Any, node: Any, i: int, r: Any, new_r: Any,
                                reason: Any = None) -> None:  # fmt: skip
                tag = new_r.tag
                if getattr(tag, "trace", None) or getattr(tag, "modecfg_trace", None):
                    return
                frame, _ = user_frame(r)
                frame = frame or getattr(r.tag, "modecfg_trace", None)
                if frame is not None:
                    tag.modecfg_trace = frame

        _CarryTraces = CarryTraces
    return _CarryTraces()


def install() -> None:
    global _installed
    with _lock:
        if _installed:
            return
        from pytensor.compile.maker import FunctionMaker

        from modecfg.config import config
        from modecfg.debug import testvalues
        from modecfg.modes import locate, pytensor_table
        from modecfg.profiles import session

        pytensor_table.install()
        locate.install()
        session.install()
        testvalues.watch()
        prepare = FunctionMaker.prepare_fgraph

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
