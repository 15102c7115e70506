"""Re-run the call of a NaN-guard dump (:mod:`modecfg.modes.dump`) and reproduce its error."""

from __future__ import annotations

import os
from typing import Any

from modecfg.config import config
from modecfg.config.flags import FLAGS
from modecfg.errors import DumpError, ModecfgError
from modecfg.modes.compiling import function
from modecfg.modes.dump import load_dump

__all__ = ["replay"]


def replay(path: str | os.PathLike[str], *, dump: bool = False) -> Any:
    """Re-run the call of a dump under NanGuardMode (action=raise): its NanGuardError again.

    Returns the outputs if the call no longer fails. The dump is checked before anything
    in it is used (see :mod:`modecfg.modes.dump`); replaying writes no new dump unless
    ``dump`` is true.
    """
    payload = load_dump(path)
    inputs, outputs, values = payload["inputs"], payload["outputs"], payload["values"]
    n = payload["n_outputs"]
    targets = payload["target_indices"]
    flags: dict[str, Any] = {k: v for k, v in payload["flags"].items() if k in FLAGS and not FLAGS[k].fixed}
    flags["NanGuardMode.action"] = "raise"
    if not dump:
        flags["NanGuardMode.max_dumps"] = 0
    try:
        explicit = [
            (var, val) for var, val in zip(inputs, values, strict=True) if not hasattr(var, "get_value")
        ]
        for var, val in zip(inputs, values, strict=True):
            if hasattr(var, "get_value"):
                var.set_value(val, borrow=False)
        updates = [(inputs[i], out) for i, out in zip(targets, outputs[n:], strict=True)]
        with config.override(flags):
            fn = function(
                [var for var, _ in explicit], outputs[:n], updates=updates, on_unused_input="ignore",
                mode="NanGuardMode",
            )  # fmt: skip
    except ModecfgError:
        raise
    except Exception as exc:
        raise DumpError(
            f"{os.fspath(path)}: the dump cannot be replayed ({type(exc).__name__}: {exc})"
        ) from None
    try:
        with config.override({k: v for k, v in flags.items() if k.startswith("NanGuardMode.")}):
            return fn(*[val for _, val in explicit])
    except ModecfgError:
        raise
    except Exception as exc:
        raise DumpError(
            f"{os.fspath(path)}: the dump's call fails otherwise ({type(exc).__name__}: {exc})"
        ) from exc
