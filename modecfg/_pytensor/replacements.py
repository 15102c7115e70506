"""What modecfg puts in PyTensor's place: the replacements of :data:`~modecfg._pytensor.patches.PATCHES`.

Each patch names a factory here that takes the original object and returns its
replacement. Replacements are module-level functions and classes (they pickle), and
each calls the original whenever its patch is off, so that one captured somewhere
(``atexit`` keeps the profile printer) behaves as PyTensor's after ``uninstall()``.
Imported only once PyTensor is loaded.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from pytensor.graph.features import Feature

from modecfg._pytensor import blas, gradients, locate, marks
from modecfg._pytensor.hooks import hooks
from modecfg._pytensor.modetable import ModeTable
from modecfg._pytensor.state import is_on, original
from modecfg._source import calling_line, user_frame
from modecfg.config import config

__all__ = ["CarryTraces"]

_log = logging.getLogger("modecfg.pytensor")


# -- the config view -----------------------------------------------------------------


def config_view(target: Any) -> Any:
    """PyTensor's config object, made the view of modecfg's configuration (in place)."""
    from modecfg._pytensor import view

    return view.attach(target)


def config_view_off(target: Any) -> None:
    from modecfg._pytensor import view

    view.detach(target)


# -- the mode table ------------------------------------------------------------------


def mode_table(table: dict[Any, Any]) -> ModeTable:
    return ModeTable(table)


def register_mode(_original: Any) -> Any:
    return _register_mode


def _register_mode(name: str, mode: Any) -> None:
    """Add a ``Mode`` that ``function`` finds by ``name``; a name PyTensor holds already is refused.

    (PyTensor's own version refuses every name modecfg's mode table answers, and
    PyTensor's DebugMode registers DEBUG_MODE, one of them, when it is imported.)
    """
    if not is_on("register_mode"):
        return original("register_mode")(name, mode)  # type: ignore[no-any-return]
    from pytensor.compile import mode as ptmode

    table = ptmode.predefined_modes
    if dict.__contains__(table, name):
        raise ValueError(f"Mode name already taken: {name}")
    dict.__setitem__(table, name, mode)


# -- the compile hook ----------------------------------------------------------------


class CarryTraces(Feature):  # type: ignore[misc]
    """Gives a rewrite's new variable the user line of the one it replaces.

    Many rewrites (fusion, BLAS) make nodes with no trace. The line goes to
    ``tag.modecfg_trace`` (``marks.TRACE``), not ``tag.trace``: it is the line of the expression the node
    computes, good for profiles, but errors re-run the call to find the exact one.
    Attached for the rewrites only: a compiled function's graph does not keep it.
    """

    def on_change_input(self, fgraph: Any, node: Any, i: int, r: Any, new_r: Any,
                        reason: Any = None) -> None:  # fmt: skip
        tag = new_r.tag
        if getattr(tag, "trace", None) or getattr(tag, marks.TRACE, None):
            return
        frame, _ = user_frame(r)
        frame = frame or getattr(r.tag, marks.TRACE, None)
        if frame is not None:
            setattr(tag, marks.TRACE, frame)


def prepare_fgraph(_original: Any) -> Any:
    return _prepare_fgraph


def _prepare_fgraph(inputs: Any, outputs: Any, additional_outputs: Any, fgraph: Any,
                    *args: Any, **kwargs: Any) -> Any:  # fmt: skip
    """What every compile does with the user's graph before PyTensor rewrites it."""
    prepare = original("compile hook")
    if not is_on("compile hook"):
        return prepare(inputs, outputs, additional_outputs, fgraph, *args, **kwargs)
    # the configuration of this compile, kept with the function: plain values, picklable anywhere
    setattr(fgraph, marks.COMPILED_WITH, config.in_effect())
    locate.remember(fgraph)
    for hook in hooks.before_rewrites:
        hook(fgraph)
    mode = args[0] if args else kwargs.get("mode")
    if hooks.rewrite_mode is not None and mode is not None:
        profile = args[1] if len(args) > 1 else kwargs.get("profile")
        chosen = hooks.rewrite_mode(fgraph, mode, profile)
        if chosen is not mode:
            mode = chosen
            args, kwargs = ((mode, *args[1:]), kwargs) if args else (args, {**kwargs, "mode": mode})
    blas.notice(fgraph, mode)
    carry = CarryTraces()
    fgraph.attach_feature(carry)
    try:
        if config.compute_test_value == "off":
            return prepare(inputs, outputs, additional_outputs, fgraph, *args, **kwargs)
        # Rewrites build nodes whose inputs have no test values: not the user's graph.
        with config.override(compute_test_value="off"):
            return prepare(inputs, outputs, additional_outputs, fgraph, *args, **kwargs)
    finally:
        fgraph.remove_feature(carry)


# -- error locations -------------------------------------------------------------------


def raise_with_op(_original: Any) -> Any:
    return _raise_with_op


def _raise_with_op(fgraph: Any, node: Any, thunk: Any = None, exc_info: Any = None,
                   storage_map: Any = None) -> Any:  # fmt: skip
    """PyTensor's ``raise_with_op``, and the user's line added to the error it raises."""
    if not is_on("error locations"):
        return original("error locations")(fgraph, node, thunk, exc_info, storage_map)
    return locate.raise_with_location(original("error locations"), fgraph, node, thunk, exc_info, storage_map)


# -- the profile printer ---------------------------------------------------------------


def atexit_print(_original: Any) -> Any:
    return _atexit_print


def _atexit_print() -> None:
    """modecfg's profile summary at exit (PyTensor's own dump while the patch is off)."""
    if is_on("profile printer") and hooks.print_profiles is not None:
        hooks.print_profiles()
    else:
        original("profile printer")()


# -- gradients -------------------------------------------------------------------------


def grad(_original: Any) -> Any:
    _grad.__doc__ = _original.__doc__
    _grad.__wrapped__ = _original  # type: ignore[attr-defined]
    return _grad


def _grad(cost: Any, wrt: Any, *args: Any, **kwargs: Any) -> Any:
    result = original("gradients")(cost, wrt, *args, **kwargs)
    if is_on("gradients"):
        try:
            gradients.tag_gradient(cost, wrt, result, calling_line())
        except Exception:  # naming lines must never break a gradient
            _log.debug("could not tag the gradient's nodes", exc_info=True)
    return result


# -- linker=auto ---------------------------------------------------------------------------


def vm_accept(_original: Any) -> Any:
    _vm_accept.__doc__ = _original.__doc__
    return _vm_accept


def _vm_accept(self: Any, fgraph: Any, no_recycling: Any = None, profile: Any = None) -> Any:
    """``VMLinker.accept``; the marked linker of ``linker=auto`` hands the graph on instead
    when the compile hook chose another linker for it (kept on the graph as a string)."""
    chosen = getattr(fgraph, marks.AUTO_CHOICE, "") if getattr(self, marks.AUTO, False) else ""
    if chosen and chosen != "cvm" and is_on("auto linker"):
        import copy

        from pytensor.compile.mode import predefined_linkers

        linker = copy.copy(predefined_linkers[chosen]).accept(
            fgraph, no_recycling=no_recycling, profile=profile
        )
        if not hasattr(linker, "accept_var_updates"):
            # FunctionMaker saw a VMLinker and will tell the linker the updates; numba's does the
            # updates through the Function instead and has no such method. A builtin that
            # ignores its argument: it pickles, and unpickles where modecfg is not installed.
            linker.accept_var_updates = id
        return linker
    return original("auto linker")(self, fgraph, no_recycling, profile)


# -- test values -----------------------------------------------------------------------


def op_call(_original: Any) -> Any:
    _op_call.__doc__ = _original.__doc__
    return _op_call


def _op_call(self: Any, *inputs: Any, **kwargs: Any) -> Any:
    result = original("test values")(self, *inputs, **kwargs)
    hook = hooks.test_values
    if hook is not None and config.compute_test_value != "off" and is_on("test values"):
        hook(result)
    return result


def scan(_original: Any) -> Any:
    _scan.__doc__ = _original.__doc__
    _scan.__wrapped__ = _original  # type: ignore[attr-defined]
    try:
        _scan.__signature__ = inspect.signature(_original)  # type: ignore[attr-defined]
    except (TypeError, ValueError):  # pragma: no cover
        pass
    return _scan


def _scan(*args: Any, **kwargs: Any) -> Any:
    result = original("scan test values")(*args, **kwargs)
    hook = hooks.scan_test_values
    if hook is not None and config.compute_test_value != "off" and is_on("scan test values"):
        hook(result)
    return result
