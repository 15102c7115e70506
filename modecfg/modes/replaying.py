"""Re-run the call of a NaN-guard dump (:mod:`modecfg.modes.dump`) and reproduce its error."""

from __future__ import annotations

import os
from typing import Any

from modecfg.config import config
from modecfg.config.flags import FLAGS
from modecfg.modes.compiling import function
from modecfg.modes.dump import load_dump

__all__ = ["replay"]


def replay(path: str | os.PathLike[str]) -> Any:
    """Re-run the call of a dump under NanGuardMode (action=raise): its NanGuardError again.

    Returns the outputs if the call no longer fails. A dump is a pickle: replay only
    dumps you trust.
    """

    payload = load_dump(path)
    inputs, outputs, values = payload["inputs"], payload["outputs"], payload["values"]
    n = payload["n_outputs"]
    targets = payload["target_indices"]
    explicit = [(var, val) for var, val in zip(inputs, values, strict=True) if not hasattr(var, "get_value")]
    for var, val in zip(inputs, values, strict=True):
        if hasattr(var, "get_value"):
            var.set_value(val, borrow=False)
    updates = [(inputs[i], out) for i, out in zip(targets, outputs[n:], strict=True)]
    flags = {k: v for k, v in payload["flags"].items() if k in FLAGS and not FLAGS[k].fixed}
    flags["NanGuardMode.action"] = "raise"
    flags["mode"] = "NanGuardMode"
    with config.override(flags):
        fn = function([var for var, _ in explicit], outputs[:n], updates=updates, on_unused_input="ignore")
        return fn(*[val for _, val in explicit])
