"""Re-run the call of a NaN-guard dump (:mod:`modecfg.modes.dump`) and reproduce its error.

A dump is data from elsewhere. Unless the replay is *trusted* (the user wrote the dump,
or read it and says so), what it holds reaches nothing outside Python:

* flags that reach the C++ compiler, the linker, a path or a subprocess (``gcc.cxxflags``,
  ``blas.ldflags``, ``profiling.destination``, ...; each flag's ``reaches``), and values
  that stop at the debugger (``pdb``), are not applied: a :class:`DumpWarning` names them;
* the graph runs on Python implementations (linker ``py``; scan and OpFromGraph inner
  functions in FAST_COMPILE): ops carry strings PyTensor pastes into generated C code.

A NaN that C code makes and Python code does not (a fast-math difference) needs
``trust=True``.
"""

from __future__ import annotations

import os
from typing import Any

from modecfg.config import config
from modecfg.config.flags import FLAGS
from modecfg.errors import DumpError, DumpWarning, ModecfgError
from modecfg.modes.compiling import function
from modecfg.modes.dump import load_dump

__all__ = ["replay", "untrusted_flags"]

# How an untrusted dump's graph runs: Python implementations only.
_PYTHON_ONLY = {"linker": "py", "mode": "FAST_COMPILE"}


def untrusted_flags(flags: dict[str, str]) -> dict[str, str]:
    """The dump's flags an untrusted replay leaves out, each with why."""
    left = {}
    for name, value in flags.items():
        spec = FLAGS.get(name)
        if spec is not None and spec.reaches:
            left[name] = f"reaches {spec.reaches}"
        elif value == "pdb":
            left[name] = "stops at the debugger"
    return left


def replay(path: str | os.PathLike[str], *, dump: bool = False, trust: bool = False) -> Any:
    """Re-run the call of a dump under NanGuardMode (action=raise): its NanGuardError again.

    Returns the outputs if the call no longer fails. The dump is checked before anything
    in it is used (see :mod:`modecfg.modes.dump`); replaying writes no new dump unless
    ``dump`` is true. ``trust=True`` applies every flag of the dump and compiles its
    graph as the original call did (see the module's doc).
    """
    payload = load_dump(path, trusted=trust)
    inputs, outputs, values = payload["inputs"], payload["outputs"], payload["values"]
    n = payload["n_outputs"]
    targets = payload["target_indices"]
    given = {k: v for k, v in payload["flags"].items() if k in FLAGS and not FLAGS[k].fixed}
    flags: dict[str, Any] = dict(given)
    if not trust:
        left = untrusted_flags(given)
        if left:
            from modecfg._warn import warn

            listed = "; ".join(f"{k}={given[k]!r} ({why})" for k, why in left.items())
            warn(
                f"{os.fspath(path)}: not applied from the dump: {listed}. Replay with trust=True "
                "(modecfg replay --trust) to apply them, if you trust the dump",
                DumpWarning,
            )
        flags = {k: v for k, v in flags.items() if k not in left}
        flags.update(_PYTHON_ONLY)
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
