"""The bridge: ``pytensor.config`` reads, writes and scopes modecfg's configuration.

PyTensor keeps each flag as a ``ConfigParam`` that is both an entry of
``pytensor.config._config_var_dict`` and a descriptor on PyTensor's config class (its ``add``
puts it there). For every flag modecfg answers, :func:`attach` puts one :class:`FlagParam`
in both places, in the original's stead:

* **reads**: ``FlagParam.__get__`` answers modecfg's value in the reading thread or task
  (its override there, else the value below the overrides), in PyTensor's representation
  (PyTensor's own ``apply``), memoised: a read costs what PyTensor's own read costs;
* **writes**: ``FlagParam.__set__`` (``pytensor.config.floatX = "float32"``) is a modecfg
  assignment, validated, with the user's line as its origin;
* **scopes**: ``change_flags`` builds PyTensor's ``_ChangeFlagsDecorator`` over the
  parameters of ``_config_var_dict``; its enter and exit (patches in
  :mod:`.replacements`) make the ``FlagParam`` among them one modecfg override.

The flags PyTensor fixes per process (``compiledir``, ``base_compiledir``, ...) stay
PyTensor's parameters: PyTensor receives modecfg's values at its import (:mod:`.mirror`),
and a first read of a default PyTensor works out takes turns between threads
(:class:`_TakingTurns`, a fix of PyTensor's race). A flag PyTensor declares and modecfg does
not stays PyTensor's parameter, end to end: its settings reach it at PyTensor's import
(:mod:`.mirror`), or when the view is attached if PyTensor was imported first. Another
``PyTensorConfigParser`` (PyTensor's tests make their own) is answered by PyTensor's own
parameters, as before. :func:`detach` puts the originals back, holding the values in effect.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable
from types import CodeType
from typing import Any

from pytensor.configparser import ConfigParam, PyTensorConfigParser

from modecfg._pytensor import state as _state
from modecfg._pytensor.binding import StandIn, binding, pytensor_accepts
from modecfg._pytensor.hooks import hooks
from modecfg._pytensor.state import HAND_OFF
from modecfg.configuration import config as _config
from modecfg.configuration.flags import FLAGS, Flag
from modecfg.configuration.sections import SHOWN, UNSET, VALUE

__all__ = ["ADOPTED", "FlagParam", "attach", "detach", "view"]

_log = logging.getLogger("modecfg.bridge")

_UNREAD: Any = object()  # a FlagParam's value below the overrides, not worked out since it changed
_SLOW: Any = object()  # a FlagParam's fast read is closed: an override may hold the flag, or it changed
# Slow reads with no override in their context before a FlagParam asks whether any override still
# holds its flag anywhere, to open the fast read again (modecfg's Overridden goes then). Asked at
# once, a loop of a block and a read would put the descriptor on and take it off at every turn
# (~1.8 us, against ~30 ns a slow read costs more than a fast one); never asked, the reads
# after a process's first block of a flag would stay slow for good (1.5x PyTensor's own).
_REOPEN_AFTER = 64
_UNKNOWN = object()
ADOPTED = "pytensor.config, before modecfg was imported"  # the source of an adopted value

# PyTensor works a callable default out at the first read, and a second thread reading before
# the first has stored it fails on an immutable parameter ("Can't change the value of
# gcc_version_str ... after initialization!"): the first reads modecfg sees take turns.
FIRST_READ = threading.RLock()


def first_read(param: ConfigParam, target: Any) -> Any:
    """PyTensor's ``param.__get__``, one thread at a time until the value is stored."""
    try:
        return param.val
    except AttributeError:
        with FIRST_READ:
            return param.__get__(target, type(target))


class FlagParam(StandIn, ConfigParam):  # type: ignore[misc]
    """One flag of ``pytensor.config`` answered by modecfg (see the module's doc).

    ``original`` is PyTensor's parameter it stands for (None for a flag this PyTensor does not
    have: ``device``, ``compute_test_value`` on PyTensor 3, answered as modecfg holds it)."""

    def __init__(self, spec: Flag, original: ConfigParam | None, target: Any) -> None:
        # no super().__init__: what PyTensor reads of a parameter is set here
        self.spec = spec
        self.original = original
        self.target = target
        self.name = spec.pytensor_name
        self.doc = original.doc if original is not None else spec.doc
        self.in_c_key = original.in_c_key if original is not None else False
        self.is_default = True
        self.below: Any = _UNREAD  # the value below the overrides, as PyTensor shows it
        # what every read answers while no override holds the flag anywhere, else _SLOW (see
        # _keep); ``version`` counts the changes below the overrides
        self.fast: Any = _SLOW
        self.idle = 0  # slow reads with no override in their context, since the last look
        self.version = 0
        self.store = _config._cfg_store
        # this context's override, if any: the flag's context variable's get, once known
        self.overridden: Callable[[], Any] = self._first_overridden
        self.shown: dict[tuple[type, Any], Any] = {}  # modecfg value -> as PyTensor shows it
        self.last: tuple[Any, Any] = (_UNREAD, None)  # the value shown last, and as shown

    def _first_overridden(self) -> Any:
        """``overridden`` until the flag's context variable is known here: none while no override
        was ever made for the flag (its variable is made then); from then on ``overridden`` is the
        variable's own ``get``. (An attribute set in ``__init__`` and replaced, not one added
        later: an attribute added to one instance's ``__dict__`` after its class's others took
        1.4x off every read of that flag, ``bench/vs_pytensor.py``'s "read after a block".)"""
        var = self.store.vars.get(self.spec.name)
        if var is None:
            return None
        self.overridden = var.get
        return var.get()

    # -- what PyTensor asks of a parameter ----------------------------------------------

    @property
    def default(self) -> Any:
        return self.original.default if self.original is not None else self.spec.default

    @property
    def mutable(self) -> bool:
        return True  # modecfg says what may change, when (ReadOnlyFlagError)

    def apply(self, value: Any) -> Any:
        return self.original.apply(value) if self.original is not None else value

    def validate(self, value: Any) -> bool:
        return bool(self.original.validate(value)) if self.original is not None else True

    def __str__(self) -> str:
        return str(self.original) if self.original is not None else f"{self.name} ({self.spec.doc})"

    def __reduce__(self) -> Any:
        """Pickled (``pickle.dumps(pytensor.config)``) as PyTensor's own parameter holding the
        value in effect here: the copy reads back what this one answers."""
        if self.original is None:
            raise TypeError(f"pytensor.config.{self.name} is modecfg's alone: it does not pickle")
        return (_param_holding, (self.original, FlagParam.__get__(self, self.target)))

    # -- reads and writes -----------------------------------------------------------------

    def __get__(self, obj: Any, objtype: Any = None, delete_key: bool = False) -> Any:
        if obj is self.target:
            fast = self.fast
            if fast is not _SLOW:  # no override holds the flag anywhere: one attribute read
                return fast
            item = self.overridden()
            if item is not None:  # an override in this thread or task
                try:
                    return item[SHOWN]  # the value as PyTensor shows it, kept on the item at the first read
                except IndexError:
                    value = item[VALUE]
                    if value is not UNSET:
                        shown = self.show(value)
                        item.append(shown)
                        return shown
            self.idle += 1
            if self.idle >= _REOPEN_AFTER:
                self._reopen()
            version = self.version
            below = self.below
            if below is _UNREAD:  # a lazy default is worked out at each read (never kept)
                below = self.show(_config._cfg_store.base(self.spec.name))
                if not self.spec.is_lazy:
                    self._keep(below, version)
            return below
        if obj is None:
            return self
        if _shares_table(obj, self):  # a shallow copy (copy.copy(pytensor.config)): its answers are ours
            return self.__get__(self.target, objtype, delete_key)
        # another config object (PyTensor's tests make their own, an unpickled copy)
        return _own_param(obj, self.name).__get__(obj, objtype, delete_key)

    def __set__(self, obj: Any, value: Any) -> None:
        if obj is not self.target and not _shares_table(obj, self):
            _own_param(obj, self.name).__set__(obj, value)
            return
        _config._assign_flag(self.spec, value, None)  # None: the user's line

    def show(self, value: Any) -> Any:
        """``value`` as PyTensor represents it: PyTensor's own ``apply`` of its text; what
        PyTensor holds itself where it takes no such value (modecfg's ``linker=per_graph``, a
        default PyTensor works out); a Mode object as it is (``change_flags(mode=Mode(...))``)."""
        last = self.last
        if value is last[0]:  # the override read again: the same object
            return last[1]
        shown = self._show(value)
        self.last = (value, shown)
        return shown

    def _show(self, value: Any) -> Any:
        try:
            return self.shown[(type(value), value)]
        except (KeyError, TypeError):
            pass
        spec, original = self.spec, self.original
        if original is None or (spec.objects is not None and spec.objects(value)):
            shown = value
        elif not pytensor_accepts(spec, value):
            # a mode PyTensor's filter does not know (CompareMode, MonitorMode, ProfileMode) is one
            # its get_mode finds all the same (the "mode table" patch): shown by its name
            shown = (
                value if spec.name in _NAMES_PYTENSOR_FINDS and isinstance(value, str) else self.pytensors()
            )
        else:
            try:
                shown = original.apply(str(value))
            except Exception as exc:  # PyTensor's filter refuses what modecfg accepts
                shown = self.pytensors()
                _log.debug("pytensor.config.%s shows %r: %s", self.name, shown, exc)
        try:
            if len(self.shown) > 256:
                self.shown.clear()
            self.shown[(type(value), value)] = shown
        except TypeError:  # a value that cannot be a key (a Mode object) is shown as it is
            pass
        return shown

    def pytensors(self) -> Any:
        """What PyTensor's own parameter holds (working its default out, the first time).

        Working ``blas__ldflags`` out makes PyTensor warn, in four lines, when it finds no BLAS;
        modecfg says that itself (:mod:`modecfg._pytensor.blas`), so PyTensor's text is left
        out here, where the value is computed."""
        from modecfg._pytensor.blas import PYTENSOR_TEXT

        assert self.original is not None
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=PYTENSOR_TEXT, category=UserWarning)
            return first_read(self.original, self.target)

    def _keep(self, below: Any, version: int) -> None:
        """Keep ``below``, worked out or read at ``version``, for the next reads; and while no
        override holds the flag anywhere, open the fast read with it. Under the store's lock of
        overrides, which an override takes to begin holding a flag (it closes the fast read
        then, :meth:`close`), and a change to take effect (:meth:`changed`): a value that changed
        meanwhile is not kept, a flag an override began to hold is not opened."""
        store = self.store
        name = self.spec.name
        with store.counting:
            if self.version != version:
                return  # changed since it was read: worked out again at the next read
            self.below = below
            if not store.held.get(name) and name not in store.shadowed:  # (true while an override holds it)
                self.fast = below

    def _reopen(self) -> None:
        """A read, after :data:`_REOPEN_AFTER` slow ones with no override in their context: if no
        override holds the flag anywhere any more, modecfg's descriptor of it goes (the store
        tells every reader, :meth:`shadowed`), and this read works the value out and opens the
        fast read again. An override that holds it meanwhile keeps it (the store checks again)."""
        self.idle = 0
        if not self.store.held.get(self.spec.name) and self.spec.name in self.store.shadowed:
            self.store.uninstall(self.spec.name)

    def shadowed(self, held: bool) -> None:
        """Called under the store's lock of overrides. ``held``: an override begins to hold the
        flag, and every read asks for this thread's or task's override again (before the override
        is in force). Not ``held``: none holds it any more (modecfg's own reads saw its last one
        end): the next read works the value out again and may open the fast read."""
        self.fast = _SLOW
        if not held:
            self.version += 1
            self.below = _UNREAD

    def changed(self, change: Any = None) -> None:
        """The value below the overrides changed: worked out again at the next read."""
        with self.store.counting:
            self.fast = _SLOW
            self.version += 1
            self.below = _UNREAD


class Float64Param(FlagParam):
    """``warn_float64``: where modecfg checks every compile for float64 (floatX=float32, a GPU),
    PyTensor is shown ``ignore`` for modecfg's ``warn``, so that it does not warn at each float64
    variable made (11 warnings for one model): modecfg's one ``Float64Warning`` per finding, at
    compile, with the user's line and the fix, replaces them. ``raise`` and ``pdb`` are PyTensor's
    as before; ``modecfg.config.warn_float64`` reads the value as set."""

    def __get__(self, obj: Any, objtype: Any = None, delete_key: bool = False) -> Any:
        value = FlagParam.__get__(self, obj, objtype, delete_key)
        if (
            value == "warn"
            and obj is self.target
            and hooks.float64_checked is not None
            and hooks.float64_checked()
        ):
            return "ignore"
        return value


def _param_holding(original: ConfigParam, value: Any) -> ConfigParam:
    """A copy of PyTensor's parameter ``original`` holding ``value`` (what a FlagParam pickles as)."""
    import copy

    param = copy.copy(original)
    vars(param).pop("__set__", None)
    param.val = value
    return param


# flags whose every name PyTensor's own code reaches through a table modecfg answers (the
# "mode table" patch): shown by their names. (linker=per_graph stays "auto" to PyTensor: its
# get_mode("FAST_RUN") path and runtime-mode cache key on the linker name without the table.)
_NAMES_PYTENSOR_FINDS = frozenset(["mode"])


def _shares_table(obj: Any, param: FlagParam) -> bool:
    """Whether config object ``obj`` holds ``param`` itself in its table: a shallow copy of
    PyTensor's config shares its table, and PyTensor answers such a copy with the same values."""
    return vars(obj).get("_config_var_dict", {}).get(param.name) is param


def _own_param(obj: Any, name: str) -> Any:
    """The parameter another config object holds for ``name`` (PyTensor's tests make their own,
    an unpickled copy holds copies); PyTensor's ConfigAccessViolation where it holds none."""
    param = vars(obj).get("_config_var_dict", {}).get(name)
    if param is None or isinstance(param, FlagParam):
        from pytensor.configparser import ConfigAccessViolation

        raise ConfigAccessViolation(
            f"The config parameter '{name}' was registered on a different instance of the "
            f"PyTensorConfigParser. It is not accessible through the instance with id '{id(obj)}' "
            "because of safeguarding."
        )
    return param


class SetByPyTensor:
    """In the instance dict of a parameter modecfg took PyTensor's place for, as ``__set__``: the
    end of a ``change_flags`` block entered before modecfg was imported puts its old values back
    with ``param.__set__(root, old)``, and modecfg hears it (the value it adopted from the block
    goes back too). Set in the instance dict, it is what that explicit call finds; the
    descriptor protocol never looks there. Module-level: it pickles."""

    __slots__ = ("param",)

    def __init__(self, param: ConfigParam) -> None:
        self.param = param

    def __call__(self, root: Any, value: Any) -> None:
        param = self.param
        again = hasattr(param, "val")  # not PyTensor's first read, which sets the value it works out
        type(param).__set__(param, root, value)
        current = _VIEW
        if again and current is not None and root is current.target:
            current.set_by_pytensor(param.name, param.val)


class _TakingTurns:
    """On PyTensor's config class for a parameter left to PyTensor whose default PyTensor
    works out at the first read (``gcc_version_str``, ``compiledir``): that read takes turns
    with other threads' (PyTensor's own race fails for an immutable parameter); later reads are
    PyTensor's stored value. For a flag handed over to PyTensor, the value some layer of
    modecfg set (an assignment since PyTensor's import included) is handed to PyTensor's
    parameter just before that first read, once."""

    __slots__ = ("param", "spec")

    def __init__(self, param: ConfigParam, spec: Flag | None = None) -> None:
        self.param = param
        self.spec = spec

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self.param
        param = self.param
        try:
            return param.val
        except AttributeError:
            pass
        if self.spec is not None and obj is getattr(_VIEW, "target", None):
            _hand_over(param, self.spec, obj)
        return first_read(param, obj)

    def __set__(self, obj: Any, value: Any) -> None:
        self.param.__set__(obj, value)


def _hand_over(param: ConfigParam, spec: Flag, target: Any) -> None:
    """Give PyTensor's unread parameter the value some layer of modecfg set (none: PyTensor works
    its default out as it would), under the lock of first reads."""
    with FIRST_READ:
        if hasattr(param, "val"):
            return  # another thread read it first
        layers = _config.layers(spec.name)
        if not layers or not pytensor_accepts(spec, layers[-1].value):
            return
        try:
            param.__set__(target, str(layers[-1].value))
        except Exception as exc:  # PyTensor's check refuses what modecfg accepted: PyTensor's own stands
            _log.warning("pytensor.config.%s keeps PyTensor's own value: %s=%r is refused by PyTensor (%s)",
                         spec.pytensor_name, spec.name, layers[-1].value, exc)  # fmt: skip


def _setattr(self: Any, name: str, value: Any) -> None:
    """``PyTensorConfigParser.__setattr__`` while the view is attached: a name no flag has
    (``pytensor.config.floatx = ...``) is stored as PyTensor stores it, said once with the
    did-you-mean; an obsolete Theano flag gets its ObsoleteFlagWarning. A flag modecfg answers
    takes the assignment itself (its parameter on the class); one PyTensor fixes per process is
    a modecfg assignment too, handed to PyTensor before it reads it (a ReadOnlyFlagError after)."""
    current = _VIEW
    if current is not None and self is current.target and not name.startswith("_"):
        spec = current.known.get(name)
        if spec is not None and name not in current.answered:
            _config._assign(spec.name, value, None)
            return
        if spec is None and not isinstance(type(self).__dict__.get(name), ConfigParam | _TakingTurns):
            _unknown(name)
    object.__setattr__(self, name, value)


_said: set[str] = set()  # names assigned on pytensor.config that no flag has, said once each


def _unknown(name: str) -> None:
    if name in _said:
        return
    _said.add(name)
    from modecfg._warn import warn
    from modecfg.configuration.compat import lookup
    from modecfg.errors import ObsoleteFlagWarning, UnknownFlagWarning

    found = lookup(name)  # PyTensor's spelling reads as modecfg's
    if found.obsolete is not None:
        warn(f"pytensor.config.{name} is obsolete: {found.message}; the assignment does nothing",
             ObsoleteFlagWarning)  # fmt: skip
    else:
        hint = f"; did you mean {' or '.join(found.suggestions)}?" if found.suggestions else ""
        warn(f"pytensor.config.{name} is no flag of modecfg or PyTensor{hint} (kept as a plain "
             "attribute of pytensor.config, which nothing reads)", UnknownFlagWarning)  # fmt: skip


def _add(self: Any, name: str, doc: str, configparam: ConfigParam, in_c_key: bool = True) -> None:
    """``PyTensorConfigParser.add`` while the view is attached: PyTensor's, then the new flag is
    answered by modecfg (adopted first where modecfg does not declare it). PyTensor's ``add``
    puts the parameter on the class, shared by every config object: another object's (PyTensor's
    tests make their own) leaves the bridge's parameter there, which hands it its own."""
    current = _VIEW
    ours = current.answered.get(name) if current is not None and self is not current.target else None
    _ORIGINAL_ADD(self, name, doc, configparam, in_c_key)
    if ours is not None:
        setattr(PyTensorConfigParser, name, ours)
    elif current is not None and self is current.target:
        current.include_new()


class Table(dict[str, Any]):
    """PyTensor's table of its parameters (``_config_var_dict``) while the bridge is attached: the
    same entries, and a flag modecfg declares that this PyTensor has no parameter for
    (``compute_test_value``) is found by ``change_flags``, which looks each name up here, though
    it is not listed (PyTensor's hash, print and pickle of its config see its own parameters)."""

    __slots__ = ("own",)

    def __init__(self, entries: dict[str, Any], own: dict[str, Any]) -> None:
        super().__init__(entries)
        self.own = own

    def __missing__(self, name: str) -> Any:
        return self.own[name]

    def __reduce__(self) -> Any:  # pickles as PyTensor's own plain dict
        return (dict, (dict(self),))


_ORIGINAL_ADD = PyTensorConfigParser.add


def _wrapper_code(call: Any) -> Any:
    """The code of the function ``_ChangeFlagsDecorator.__call__`` returns (``res``, which
    enters the block around the decorated function); None if this PyTensor makes none."""
    for const in getattr(getattr(call, "__code__", None), "co_consts", ()):
        if isinstance(const, CodeType):
            return const
    return None


def _decorator_class(module: Any, target: Any) -> type | None:
    """PyTensor's ``_ChangeFlagsDecorator`` where one made by its class holds exactly what
    ``replacements.change_flags_make`` sets (``confs``, ``new_vals`` and ``_root``, nothing
    else); None for a PyTensor that makes them otherwise (its own change_flags then makes them)."""
    made = getattr(module, "_ChangeFlagsDecorator", None)
    try:
        held = vars(made(_root=target)) if isinstance(made, type) else None
    except Exception:
        return None
    if held != {"confs": {}, "new_vals": {}, "_root": target} or list(held) != ["confs", "new_vals", "_root"]:
        return None
    return made


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) or str(a) == str(b)
    except Exception:
        return a is b


def _is_pytensors_source(source: str | None) -> bool:
    """Whether a source is one PyTensor reads itself (so its value is PyTensor's starting one)."""
    import os

    if not source:
        return False
    if source == "PYTENSOR_FLAGS":
        return True
    listed = os.environ.get("PYTENSORRC")
    if listed is not None:
        return source in listed.split(os.pathsep)
    return os.path.basename(source) in (".pytensorrc", ".pytensorrc.txt")


class _View:
    """The bridge while attached: PyTensor's config object and the parameters put on it."""

    def __init__(self, target: PyTensorConfigParser) -> None:
        self.target = target
        self.params: dict[str, Any] = target._config_var_dict
        self.pytensors_table = self.params  # PyTensor's own dict, given back by detach()
        self.originals: dict[str, ConfigParam] = {}  # PyTensor name -> PyTensor's parameter replaced
        self.answered: dict[str, FlagParam] = {}  # PyTensor name -> the parameter answering it
        self.taking_turns: list[str] = []  # PyTensor's parameters whose first reads take turns
        self.known: dict[str, Flag] = {}  # PyTensor name -> flag, for every flag modecfg declares
        self.own: dict[str, FlagParam] = {}  # those of them this PyTensor has no parameter for
        # for change_flags' enter (modecfg._pytensor.replacements): the call-site cache of
        # Config.override_for, and the file of PyTensor's decorator wrapper
        self.sites: dict[int, Any] = _config._cfg_store.site_cache
        import pytensor.configparser

        # the code of the function PyTensor's decorator wraps a function in (it enters the block)
        self.wrapper = _wrapper_code(pytensor.configparser._ChangeFlagsDecorator.__call__)
        # the class change_flags' replacement makes its decorators of, once it is known to be made
        # as that replacement makes it (else None: PyTensor's change_flags makes them)
        self.decorator = _decorator_class(pytensor.configparser, target)
        self.blockable: frozenset[str] = frozenset()
        self.unsubscribe: list[Any] = []  # the view hears of its flags' changes (changed)
        self.by_flag: dict[str, FlagParam] = {}  # modecfg's flag name -> the parameter answering it
        _config._cfg_store.ready_up()

    @property
    def flags(self) -> dict[str, Flag]:
        """PyTensor name -> flag, for the flags modecfg answers that PyTensor has."""
        return {name: p.spec for name, p in self.answered.items() if p.original is not None}

    def _answer(self) -> list[FlagParam]:
        """A FlagParam for each flag modecfg answers that has none yet."""
        made = []
        for spec in FLAGS.values():
            name = spec.pytensor_name
            param = self.params.get(name)
            if name in self.answered or binding(spec, param) == "handed over":
                continue  # PyTensor uses one value per process, received at its import
            kind = Float64Param if spec.name == "warn_float64" else FlagParam
            made.append(kind(spec, param, self.target))
        for flag in made:
            self.by_flag[flag.spec.name] = flag
            if flag.original is not None:
                self.originals[flag.name] = flag.original
                # (set, not written into vars(): that would make its dict an object of its own)
                setattr(flag.original, "__set__", SetByPyTensor(flag.original))  # noqa: B010
                self.params[flag.name] = flag
            else:  # modecfg's alone: on the class, not in PyTensor's table of its parameters
                self.own[flag.name] = flag
            self.answered[flag.name] = flag
            setattr(PyTensorConfigParser, flag.name, flag)
        if made:  # one listener for them all, not one (and its unsubscribe closure) each
            # (the store's own subscribe: these are flags' own names, nothing to look up)
            names = [f.spec.name for f in made]
            self.unsubscribe.append(_config._cfg_store.subscribe(self.changed, names, False))
        self.known = {spec.pytensor_name: spec for spec in FLAGS.values()}
        # flags modecfg keeps per process that PyTensor's declaration lets a block scope (its
        # own compiles enter change_flags(cxx=""))
        self.blockable = frozenset(p.spec.name for p in self.answered.values() if p.spec.fixed)
        return made

    def _turns(self) -> list[str]:
        names = []
        for name, param in self.params.items():
            if isinstance(param, FlagParam) or not callable(param.default):
                continue
            if not isinstance(PyTensorConfigParser.__dict__.get(name), _TakingTurns):
                setattr(PyTensorConfigParser, name, _TakingTurns(param, self.known.get(name)))
            names.append(name)
        return names

    def include_new(self) -> None:
        """PyTensor declared flags after the view was attached (``config.add`` at a later import)."""
        self._answer()
        self.taking_turns = self._turns()

    # -- values PyTensor was given before modecfg ----------------------------------------

    def set_by_pytensor(self, name: str, value: Any) -> None:
        """PyTensor's own parameter of ``name`` was set (a block open when modecfg came ended):
        a value modecfg adopted from PyTensor follows it, dropped where it is what PyTensor had
        from its own sources. A value set through modecfg since is the user's: left alone."""
        spec = self.flags.get(name)
        if spec is None or _config.origin(spec.name).source != ADOPTED:
            return
        if _same(value, self.pytensor_would_have(name)):
            _config.reset(spec.name)
        else:
            _config.set(spec.name, value, source=ADOPTED)

    def pytensor_would_have(self, name: str) -> Any:
        """What PyTensor holds for ``name`` from its own sources (PYTENSOR_FLAGS, .pytensorrc)
        or its default, as PyTensor represents it; _UNKNOWN if that cannot be said."""
        param = self.originals[name]  # (a flag PyTensor has: in self.flags, read without making it)
        spec = self.answered[name].spec
        raw: Any = _UNKNOWN
        # (the layers below the overrides: the view readied the store, spec.name is canonical)
        for candidate in reversed(_config._cfg_store.candidates.get(spec.name, ())):
            if _is_pytensors_source(candidate.origin.source):
                raw = candidate.raw
                break
        if raw is _UNKNOWN:
            raw = param.default
            if callable(raw):
                return _UNKNOWN
        try:
            return param.apply(raw)
        except Exception:
            return _UNKNOWN

    def adopt_pytensor_state(self) -> list[str]:
        """Values set on PyTensor's side before the view (an assignment to ``pytensor.config``,
        a ``change_flags`` block still open when modecfg is imported) become modecfg
        assignments, with an origin that says so: the flags named. (Such a block's exit puts
        back what it changed: :class:`SetByPyTensor`.)"""
        adopted = []
        store = _config._cfg_store
        for name, original in self.originals.items():
            spec = self.answered[name].spec
            if not hasattr(original, "val"):
                continue  # never read or set: PyTensor holds nothing of its own
            now = original.val
            before = self.pytensor_would_have(name)
            shown = self.answered[name].show
            if before is _UNKNOWN or _same(now, before) or _same(now, shown(_config[spec.name])):
                continue
            # PyTensor imported inside a modecfg override was handed the value below the overrides
            if _same(now, shown(store.base(spec.name))):
                continue
            try:
                _config.set(spec.name, now, source=ADOPTED)
            except Exception as exc:  # a value PyTensor took and modecfg refuses: said, not lost silently
                _log.warning("pytensor.config.%s=%r (set before modecfg was imported) is not taken: %s",
                             name, now, exc)  # fmt: skip
                continue
            adopted.append(name)
        return adopted

    # -- attach and detach ---------------------------------------------------------------

    def changed(self, change: Any) -> None:
        """A flag the view answers changed: its parameter hears of it."""
        self.by_flag[change.name].changed(change)

    def shadowed(self, name: str, held: bool) -> None:
        """The store's shadow listener: an override begins, or ceases, to hold flag ``name``."""
        param = self.by_flag.get(name)
        if param is not None:
            param.shadowed(held)

    def attach(self) -> None:
        _config._cfg_store.shadow_listeners.append(self.shadowed)
        self._answer()
        PyTensorConfigParser.__setattr__ = _setattr
        PyTensorConfigParser.add = _add
        self.params = self.target._config_var_dict = Table(self.params, self.own)
        self.taking_turns = self._turns()
        self.adopt_pytensor_state()
        self.hand_late()
        self.read_through()

    def read_through(self) -> None:
        """Every flag PyTensor declares and modecfg does not (``gcc_version_str``) is read and
        set through ``modecfg.config`` too, as PyTensor's own parameter (issue 60: one
        configuration, every flag readable from both)."""
        from modecfg.configuration.flags import FLAGS, canonical
        from modecfg.configuration.live import Config

        self.through: list[str] = []
        for name in list(self.params):
            if name.startswith("_") or name in self.answered or hasattr(Config, name):
                continue
            if canonical(name) in FLAGS:  # modecfg's, under PyTensor's spelling (no lookup: its
                continue  # did-you-mean for an unknown name reads PyTensor's source, 60 ms)
            setattr(Config, name, PyTensorsFlag(name))
            self.through.append(name)

    def hand_late(self) -> None:
        """The settings of PyTensor's own flags (modecfg declares none of them) reach PyTensor at
        its import; imported before modecfg, it gets those of modecfg's sources now. A name
        PyTensor has no parameter for, or a value it refuses, is said (HeldFlagWarning)."""
        settings = _config.for_pytensor
        if not settings:
            return
        from modecfg._warn import warn
        from modecfg.errors import HeldFlagWarning

        late = HAND_OFF != ["handed over at import"]
        for setting in settings:
            name = setting.pytensor_name
            param = self.params.get(name)
            if param is None:
                warn(f"{name}={setting.raw!r} (from {setting.origin}): PyTensor declares no such flag, "
                     "though its source seemed to; the setting does nothing", HeldFlagWarning)  # fmt: skip
            elif late and not _is_pytensors_source(setting.origin.source):  # read by PyTensor itself
                try:
                    param.__set__(self.target, setting.raw)
                except Exception as exc:
                    warn(f"{name}={setting.raw!r} (from {setting.origin}): PyTensor refuses it ({exc})",
                         HeldFlagWarning)  # fmt: skip

    def detach(self) -> None:
        """PyTensor's parameters back, each holding the value in effect below the overrides."""
        from modecfg.configuration.live import Config

        for name in getattr(self, "through", ()):
            if isinstance(Config.__dict__.get(name), PyTensorsFlag):
                delattr(Config, name)
        for unsubscribe in self.unsubscribe:
            unsubscribe()
        listeners = _config._cfg_store.shadow_listeners
        if self.shadowed in listeners:
            listeners.remove(self.shadowed)
        for param in self.by_flag.values():
            param.shadowed(True)
        if PyTensorConfigParser.__dict__.get("__setattr__") is _setattr:
            del PyTensorConfigParser.__setattr__
        PyTensorConfigParser.add = _ORIGINAL_ADD
        table, entries = self.pytensors_table, dict(self.params)  # the same dict object PyTensor made
        table.clear()
        table.update(entries)
        self.params = self.target._config_var_dict = table
        store = _config._cfg_store
        for name, param in self.answered.items():
            original = param.original
            if original is not None:
                vars(original).pop("__set__", None)
                value = param.show(store.base(param.spec.name))
                if pytensor_accepts(param.spec, store.base(param.spec.name)):
                    original.val = value  # past PyTensor's once-only check: the value in effect
                self.params[name] = original
                setattr(PyTensorConfigParser, name, original)
            elif PyTensorConfigParser.__dict__.get(name) is param:
                delattr(PyTensorConfigParser, name)
        for name in self.taking_turns:
            turns = PyTensorConfigParser.__dict__.get(name)
            if isinstance(turns, _TakingTurns):
                setattr(PyTensorConfigParser, name, turns.param)


class PyTensorsFlag:
    """On modecfg's ``Config`` class, for a flag PyTensor declares and modecfg does not: reads
    PyTensor's own parameter (``modecfg.config.gcc_version_str``). An assignment is refused by
    ``Section.__setattr__`` before any descriptor, with what to write instead
    (``pytensor.config.gcc_version_str = ...``); ``__set__`` is here only to make this a data
    descriptor, as the Config's own are (``configuration/sections.py``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        import pytensor

        return getattr(pytensor.config, self.name)

    def __set__(self, obj: Any, value: Any) -> None:  # pragma: no cover - __setattr__ wins
        raise AssertionError("Section.__setattr__ handles assignment")


_VIEW: _View | None = None


def attach(target: Any) -> Any:
    """Make ``target`` (PyTensor's config object) answer modecfg's configuration."""
    global _VIEW
    if _VIEW is not None:
        return target
    if type(target) is not PyTensorConfigParser or not isinstance(
        getattr(target, "_config_var_dict", None), dict
    ):
        raise TypeError(f"not PyTensor's config object: {type(target).__name__}")
    current = _View(target)
    _VIEW = _state.current_view = current
    try:
        current.attach()
    except BaseException:
        _VIEW = _state.current_view = None
        current.detach()
        raise
    return target


def detach(target: Any = None) -> None:
    global _VIEW
    current, _VIEW = _VIEW, None
    _state.current_view = None
    if current is not None:
        current.detach()


def view() -> _View | None:
    """The attached view, if any."""
    return _VIEW
