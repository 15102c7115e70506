"""Re-run the call of a NaN-guard dump (:mod:`modecfg.nanguard.dump`) and reproduce its error.

Replaying compiles and runs the dump's graph, which is a pickle: whoever made the file
chose what unpickling it runs. So a replay runs only a dump signed with this user's own
key (one this user's NaN guard wrote), or one the caller trusts (``trust=True``, ``modecfg
replay --trust``: "run this file's code"). Every flag of the compile is then applied, and
the graph compiled as the original call was. For a dump from somebody else, read its data
(:func:`modecfg.load_dump`, or ``modecfg replay DUMP``, which shows it) and run your own
function on its captured values (``load_dump(path).call(f)``).
"""

from __future__ import annotations

import os
from typing import Any

from modecfg.configuration import config
from modecfg.configuration.flags import FLAGS
from modecfg.errors import DumpError, DumpWarning, ModecfgError
from modecfg.modes.compiling import function
from modecfg.nanguard.dump import no_dumps
from modecfg.nanguard.dump_reading import code_part

__all__ = ["replay"]


def replay(path: str | os.PathLike[str], *, dump: bool = False, trust: bool = False) -> Any:
    """Re-run the call of a dump under NanGuardMode (action=raise): its NanGuardError again.

    Returns the outputs if the call no longer fails. Runs only a dump signed with your own
    key, unless ``trust`` (an :class:`~modecfg.errors.UntrustedDumpError` otherwise: see the
    module's doc). Writes no new dump unless ``dump`` is true.
    """
    where = os.fspath(path)
    code = code_part(where, trust=trust)
    _say_versions(where, code.versions)
    flags: dict[str, Any] = {k: v for k, v in code.flags.items() if k in FLAGS and not FLAGS[k].fixed}
    flags["NanGuardMode.action"] = "raise"
    if code.linker and code.linker in FLAGS["linker"].choices():
        # the linker the call ran on (NanGuardMode(linker="cvm") under linker=numba): not the flag's
        flags["linker"] = code.linker
    inputs, values = code.inputs, code.values
    try:
        explicit = [
            (var, val) for var, val in zip(inputs, values, strict=True) if not hasattr(var, "get_value")
        ]
        for var, val in zip(inputs, values, strict=True):
            if hasattr(var, "get_value"):
                var.set_value(val, borrow=False)
        updates = [
            (inputs[i], out)
            for i, out in zip(code.target_indices, code.outputs[code.n_outputs :], strict=True)
        ]
        with config.override(flags):
            fn = function(
                [var for var, _ in explicit], code.outputs[: code.n_outputs], updates=updates,
                on_unused_input="ignore", mode="NanGuardMode",
            )  # fmt: skip
    except ModecfgError:
        raise
    except Exception as exc:
        raise DumpError(f"{where}: the dump cannot be replayed ({type(exc).__name__}: {exc})") from None
    guard = {k: v for k, v in flags.items() if k.startswith("NanGuardMode.")}
    try:
        if dump:
            with config.override(guard):
                return fn(*[val for _, val in explicit])
        with (
            config.override(guard),
            no_dumps("a replay writes no dump (replay with dump=True, or --dump, to write one)"),
        ):
            return fn(*[val for _, val in explicit])
    except ModecfgError:
        raise
    except Exception as exc:
        raise DumpError(f"{where}: the dump's call fails otherwise ({type(exc).__name__}: {exc})") from exc


def _say_versions(where: str, written: dict[str, str]) -> None:
    """A DumpWarning when the dump was written under other versions than these."""
    from modecfg.nanguard.dump import _versions

    if not written:  # a trusted dump of the older format: it records none
        return
    here = _versions()
    differ = [f"{k} {written[k]} (here {here[k]})" for k in ("pytensor", "numpy", "python")
              if k in written and written[k] != here[k]]  # fmt: skip
    if differ:
        from modecfg._warn import warn

        warn(f"{where} was written with {', '.join(differ)}: the replay may differ", DumpWarning)
