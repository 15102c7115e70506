"""What modecfg puts in PyTensor's place: the replacements of :data:`~modecfg._pytensor.patches.PATCHES`.

A patched function gets its replacement here, called as ``replacement(original, *args,
**kwargs)`` by :class:`~modecfg._pytensor.state.Wrapper` while the patch is on (the original
alone once it is off); a patched method ``replacement(self, original, *args, **kwargs)``
(bound by :class:`~modecfg._pytensor.state.Method`); a patched object (the config, the mode
table) gets a factory here that makes what takes its place. All are module-level functions and classes: they
pickle. Imported only once PyTensor is loaded.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import numpy as np

from modecfg._pytensor import marks
from modecfg._pytensor import state as _state
from modecfg._pytensor.hooks import hooks
from modecfg._pytensor.state import originals as _originals
from modecfg._registry.modes import find_mode
from modecfg.configuration import config
from modecfg.configuration.overrides import SingleOverride
from modecfg.configuration.sections import OWNER, PARENT
from modecfg.errors import ConfigError

__all__: list[str] = []  # the patch list (patches.PATCHES) names what it uses

_log = logging.getLogger("modecfg.pytensor")
_ndarray = np.ndarray


# -- the config view -----------------------------------------------------------------


def config_view(target: Any) -> Any:
    """PyTensor's config object, made the view of modecfg's configuration (in place)."""
    from modecfg._pytensor import view

    return view.attach(target)


def config_view_off(target: Any) -> None:
    from modecfg._pytensor import view

    view.detach(target)


_getframe = sys._getframe
_get_ident = threading.get_ident
_make = object.__new__


# -- PyTensor's PyTensorConfigParser.change_flags (patch "change_flags (make)") -------------------
def change_flags_make(self: Any, **kwargs: Any) -> Any:
    """``PyTensorConfigParser.change_flags``: the very object PyTensor's makes (its class, and
    ``confs``, ``new_vals`` and ``_root`` as its ``__init__`` sets them), made without the class
    call that passes the keywords on twice: that call was a third of a ``with`` statement's time.
    A name PyTensor's table lacks (or ``_root``), another config object than the one the view is
    attached to, or a PyTensor whose decorator the view did not recognise: PyTensor's own
    change_flags, which makes the decorator or raises as it does."""
    current = _state.current_view
    if current is None or self is not current.target or current.decorator is None:
        return _originals["change_flags (make)"](self, **kwargs)
    table = self._config_var_dict
    try:
        if len(kwargs) == 1:  # the common case, without the comprehension's function call
            for name in kwargs:
                confs = {name: table[name]}
        else:
            confs = {name: table[name] for name in kwargs}
    except KeyError:  # PyTensor's raises it, outside this handler: inside, Python would give
        pass  # the KeyError of a repeated `_root` as it is, not as the TypeError PyTensor's raises
    else:
        made = _make(current.decorator)
        made.confs = confs
        made.new_vals = kwargs
        made._root = self
        return made
    return _originals["change_flags (make)"](self, **kwargs)


# -- scopes: PyTensor's _ChangeFlagsDecorator.__enter__ and __exit__ (patches "change_flags") ----
# A change_flags object (made before modecfg was imported or since) holds parameters of
# _config_var_dict: entered, the flags modecfg declares become one modecfg override of this
# thread or task (a bad value fails here, as in PyTensor; a flag PyTensor fixes gets modecfg's
# ReadOnlyFlagError), the others are PyTensor's, entered its way. What each entry began is kept
# on the object: its override alone (the common case), else (thread, override, PyTensor's part
# or None), or a list of those while it is entered more than once (one decorator may be entered
# by several threads at once).
_ENTERED = "_modecfg_entered"


def change_flags_enter(self: Any) -> Any:
    """``_ChangeFlagsDecorator.__enter__`` (PyTensor's: ``original("change_flags")``)."""
    current = _state.current_view  # (a module's global: read first, by every block)
    if current is None or self._root is not current.target:
        return _originals["change_flags"](self)
    given = self.new_vals
    frame = _getframe(1)  # where the block is written: the origin of the override
    code = frame.f_code
    if code is current.wrapper and frame.f_back is not None:
        frame = frame.f_back  # a decorated function (PyTensor's wrapper enters it): where it is called
        code = frame.f_code
    # override_for's call-site cache, read here first: this is the hot path of every block. A hit
    # holds these very values, all of them modecfg's flags (one with some of PyTensor's is never one)
    scope = current.sites.get(id(code) ^ frame.f_lasti)
    try:
        miss = scope is None or scope._code is not code or scope._raw != given
    except Exception:  # values whose == is not a bool (arrays): override_for decides
        miss = True
    if miss:
        return _enter_new(self, current, frame)
    if type(scope) is SingleOverride and not scope._one_listening:
        # SingleOverride.__enter__ written out (its call was a tenth of the statement's time;
        # tests/_pytensor/test_view.py holds the two to the same items)
        var = scope._var
        # an item (VALUE, ORIGIN, PARENT, OWNER, ALIVE)
        scope._last = item = [scope._value, scope._origin, var.get(), scope, scope._alive()]
        if scope._name not in scope._shadowed:  # read after the item's weak reference is made
            scope._store.install(scope._name)
        var.set(item)
    else:
        scope.__enter__()
    # kept as an attribute, not through self.__dict__: reading a fresh object's __dict__ makes it
    # a dict of its own, a tenth of the statement's time (the decorator is new at every `with`)
    if getattr(self, _ENTERED, None) is None:  # the common case: one entry at a time, kept as it is
        self._modecfg_entered = scope  # (_ENTERED)
    else:
        _enter_again(self.__dict__, (_get_ident(), scope, None))


def _enter_new(self: Any, current: Any, frame: Any) -> None:
    """:func:`change_flags_enter` at a call site or with values not seen before: the flags
    modecfg declares become an override (made and cached by ``override_for``), the others are
    entered the way PyTensor does it."""
    known = current.known
    given = ours = self.new_vals  # PyTensor's names are modecfg's where no flag is PyTensor's (a __ is a .)
    for key in given:
        if key not in known:
            ours = {known[k].name: v for k, v in given.items() if k in known}
            if not ours:
                return _originals["change_flags"](self)  # type: ignore[no-any-return]
            break
    scope = config.override_for(ours, frame, current.blockable)
    scope.__enter__()
    theirs = _enter_theirs(self, known, scope) if ours is not given else None
    if theirs is None and getattr(self, _ENTERED, None) is None:
        self._modecfg_entered = scope  # (_ENTERED)
    else:
        _enter_again(self.__dict__, (_get_ident(), scope, theirs))
    return None


def _enter_again(held: dict[str, Any], entry: tuple[Any, Any, Any]) -> None:
    """Keep ``entry`` (thread, override, PyTensor's part or None) beside the entries not yet left."""
    entered = held.get(_ENTERED)
    if entered is None:
        held[_ENTERED] = entry
    elif type(entered) is list:
        entered.append(entry)
    else:  # entered again before it was left (a decorator, recursion or threads)
        held[_ENTERED] = [_entry(entered), entry]


def _entry(entered: Any) -> tuple[Any, Any, Any]:
    """An entry kept as its override alone (the common case) as a full (thread, override,
    PyTensor's part) one, once a second entry joins it: its thread is this one if the override's
    newest entry is in force here, else another (None)."""
    if type(entered) is tuple:
        return entered
    return (_get_ident() if entered.entered_here() else None, entered, None)


def _enter_theirs(self: Any, known: dict[str, Any], scope: Any) -> Any:
    """The flags modecfg leaves to PyTensor entered the way PyTensor does it: a copy of the
    decorator holding only them, to be left at the block's exit."""
    import copy

    theirs = copy.copy(self)
    theirs.confs = {k: v for k, v in self.confs.items() if k not in known}
    vars(theirs).pop(_ENTERED, None)
    try:
        _originals["change_flags"](theirs)
    except BaseException:
        scope.__exit__(None, None, None)
        raise
    return theirs


def change_flags_exit(self: Any, exc_type: Any = None, exc: Any = None, tb: Any = None) -> Any:
    """``_ChangeFlagsDecorator.__exit__``: ends what :func:`change_flags_enter` began (a block
    entered before modecfg was imported ends PyTensor's way: :class:`~.view.SetByPyTensor`)."""
    try:  # an attribute, as change_flags_enter keeps it; absent: entered before modecfg was imported
        entered = self._modecfg_entered  # (_ENTERED)
    except AttributeError:
        entered = None
    if entered is None:
        return _originals["change_flags (exit)"](self, exc_type, exc, tb)
    kind = type(entered)
    if kind is SingleOverride:  # the common case: one flag's override alone
        self._modecfg_entered = None  # (_ENTERED; cheaper than deleting the attribute again)
        var = entered._var  # SingleOverride.__exit__ written out, as in change_flags_enter
        top = var.get()
        if top is not None and top[OWNER] is entered:  # left in order: its parent back
            var.set(top[PARENT])
            if entered._last is top:
                entered._last = None
        else:
            entered.__exit__(None, None, None)
        return None
    held = self.__dict__
    if kind is not list and kind is not tuple:  # an override of several flags alone
        held[_ENTERED] = None
        entered.__exit__(None, None, None)
        return None
    if kind is tuple:
        held[_ENTERED] = None
        _, scope, theirs = entered
    else:
        me = _get_ident()
        newest_first = range(len(entered) - 1, -1, -1)
        index = next((i for i in newest_first if entered[i][0] == me), None)
        if index is None:  # entered in another thread and left in this one, as PyTensor allows:
            # the entry of a thread not known (the first, kept alone), else the newest
            index = next((i for i in newest_first if entered[i][0] is None), len(entered) - 1)
        _, scope, theirs = entered.pop(index)
    if theirs is None:
        scope.__exit__(None, None, None)
        return None
    try:
        _originals["change_flags (exit)"](theirs, exc_type, exc, tb)
    finally:
        scope.__exit__(None, None, None)
    return None


def function(
    original: Any, inputs: Any, outputs: Any = None, mode: Any = None, *args: Any, **kwargs: Any
) -> Any:
    """``pytensor.function``: a profiled compile (``profile=True`` or the flag) on a linker that
    cannot time nodes is compiled with one that can, and says so once (never empty tables); on
    ``linker=c``, an op without C code here is a LinkerUnavailableError saying why and what runs."""
    profile = kwargs.get("profile")
    if not args and hooks.profiled_mode is not None and profile is not False and (
        profile is True or (profile is None and config.profile)
    ):  # fmt: skip
        mode, kwargs["profile"] = hooks.profiled_mode(mode, kwargs.get("name"))
    try:
        if config.compute_test_value == "off":
            fn = original(inputs, outputs, mode, *args, **kwargs)
        else:  # the nodes rewrites make get none (Theano's compute_test_value_opt=off): each
            # failing node of the graph as written was said once, at the user's line, already
            with config.override(compute_test_value="off"):
                fn = original(inputs, outputs, mode, *args, **kwargs)
    except ConfigError as exc:  # found while the mode was built: said at the user's compile
        from modecfg._source import at_users_compile

        raise at_users_compile(exc)  # noqa: B904 (the same exception: its own cause and context stay)
    except NotImplementedError as exc:  # linker=c and an op without C code here: say why, and what runs
        from modecfg._pytensor import blas

        error = blas.no_c_code(exc, mode)
        if error is None:
            raise
        raise error from None
    return fn


def create(maker: Any, create_: Any, *args: Any, **kwargs: Any) -> Any:
    """``FunctionMaker.create``, which makes every function (``pytensor.function``'s,
    ``Function.copy``'s, an unpickled one's): the shared variables it updates on a host linker
    (in place) are recorded, and a JAX function reads them from the host from then on."""
    fn = create_(maker, *args, **kwargs)
    from modecfg._pytensor import hostwrites  # (this module's features load at their first use)

    hostwrites.host_updates(fn)
    return fn


# -- the mode table ------------------------------------------------------------------
# modecfg's modes, seen by PyTensor: ``pytensor.function(..., mode="NanGuardMode")``.
#
# PyTensor looks a mode name up, upper-cased, in ``pytensor.compile.mode.predefined_modes``
# before anything else. That dict is replaced by a subclass that answers every name of
# modecfg's registry (in any case) with modecfg's mode, built from modecfg's configuration
# (through :data:`modecfg._pytensor.hooks.hooks.get_mode`), and keeps PyTensor's own
# entries for everything else. PyTensor's default mode ("Mode") becomes modecfg's ``mode``
# flag, so ``pytensor.function`` and ``modecfg.function`` compile alike.
#
# (PyTensor's linker table answers ``per_graph`` through :mod:`modecfg.linkers.contacts`.)


class ModeTable(dict[Any, Any]):
    """PyTensor's mode table, answering modecfg's names from modecfg's registry."""

    def _ours(self, key: Any) -> bool:
        return isinstance(key, str) and hooks.get_mode is not None and find_mode(key) is not None

    def __contains__(self, key: object) -> bool:
        return self._ours(key) or dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        if self._ours(key):
            assert hooks.get_mode is not None
            return hooks.get_mode(None if key.upper() == "MODE" else key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __reduce__(self) -> Any:  # a plain dict of PyTensor's own entries
        return (dict, (dict(self.items()),))


def mode_table(table: dict[Any, Any]) -> ModeTable:
    return ModeTable(table)


def register_mode_unless_taken(_original: Any, name: str, mode: Any) -> None:
    """Add a ``Mode`` that ``function`` finds by ``name``; a name PyTensor holds already is refused.

    (PyTensor's own version refuses every name modecfg's mode table answers, and
    PyTensor's DebugMode registers DEBUG_MODE, one of them, when it is imported.)
    """
    from pytensor.compile import mode as ptmode

    table = ptmode.predefined_modes
    if dict.__contains__(table, name):
        raise ValueError(f"Mode name already taken: {name}")
    dict.__setitem__(table, name, mode)


# -- the compile hook ----------------------------------------------------------------


def prepare_fgraph(prepare: Any, inputs: Any, outputs: Any, additional_outputs: Any, fgraph: Any,
                   *args: Any, **kwargs: Any) -> Any:  # fmt: skip
    """What every compile does with the user's graph before PyTensor rewrites it."""
    from modecfg._pytensor import blas, locate

    # the configuration of this compile, kept with the function: plain values, picklable anywhere
    setattr(fgraph, marks.COMPILED_WITH, config.in_effect())
    locate.remember(fgraph)
    mode = args[0] if args else kwargs.get("mode")
    for hook in hooks.before_rewrites:
        hook(fgraph, mode)
    profile = args[1] if len(args) > 1 else kwargs.get("profile")
    if hooks.rewrite_mode is not None and mode is not None:
        chosen = hooks.rewrite_mode(fgraph, mode, profile)
        if chosen is not mode:
            mode = chosen
            args, kwargs = ((mode, *args[1:]), kwargs) if args else (args, {**kwargs, "mode": mode})
    blas.notice(fgraph, mode)
    # Only a profile reads the lines carried (errors re-run the call instead), and a feature
    # costs every graph event of the rewrites: 1-2% of a warm compile. So only when profiled.
    from modecfg._pytensor.features import CarryTraces

    carry = CarryTraces() if profile else None
    if carry is not None:
        fgraph.attach_feature(carry)
    try:
        if config.compute_test_value == "off":
            return prepare(inputs, outputs, additional_outputs, fgraph, *args, **kwargs)
        # Rewrites build nodes whose inputs have no test values: not the user's graph.
        with config.override(compute_test_value="off"):
            return prepare(inputs, outputs, additional_outputs, fgraph, *args, **kwargs)
    finally:
        if carry is not None:
            fgraph.remove_feature(carry)


# -- error locations -------------------------------------------------------------------


def raise_with_op(raise_: Any, fgraph: Any, node: Any, thunk: Any = None, exc_info: Any = None,
                  storage_map: Any = None) -> Any:  # fmt: skip
    """PyTensor's ``raise_with_op``, and the user's line added to the error it raises."""
    from modecfg._pytensor import locate

    return locate.raise_with_location(raise_, fgraph, node, thunk, exc_info, storage_map)


# -- gradients -------------------------------------------------------------------------


def grad(grad_: Any, cost: Any, wrt: Any, *args: Any, **kwargs: Any) -> Any:
    """PyTensor's ``grad``; the nodes it adds name the grad call and the expression they differentiate."""
    from modecfg._pytensor import gradients
    from modecfg._source import calling_line

    result = grad_(cost, wrt, *args, **kwargs)
    try:
        gradients.tag_gradient(cost, wrt, result, calling_line())
    except Exception:  # naming lines must never break a gradient
        _log.debug("could not tag the gradient's nodes", exc_info=True)
    return result
