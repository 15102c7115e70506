"""The config view: ``pytensor.config`` reads, writes and scopes modecfg's configuration.

PyTensor's config object is one instance that hundreds of modules hold (``from
pytensor.configdefaults import config``), so it is changed in place, not replaced: its
class becomes :class:`ConfigView`, a subclass of PyTensor's, and every flag modecfg
declares is answered by modecfg's live configuration:

* **Reads** are plain instance-attribute reads: the value below the overrides sits in
  the instance ``__dict__``, in PyTensor's representation. The subclass shadows
  PyTensor's data descriptors with a plain string (:func:`_in_dict`), so the dict wins
  and CPython specialises the read; a value PyTensor works out on first use is shadowed
  by :class:`_Base`, which asks PyTensor. While some
  override anywhere holds a flag, the store puts a data descriptor on ``ConfigView`` for
  it (:meth:`_View.scoped`, called with the store's own ``Overridden``), which answers
  with the value in the reading thread or task.
* **Writes** (``pytensor.config.X = v``, a ``ConfigParam.__set__`` of the view) are
  modecfg assignments: validated, recorded with the user's line, heard by ``subscribe``.
* **change_flags** is a modecfg override, per thread and task, as a context manager and
  a decorator. A flag modecfg keeps per process (``cxx``) may still be scoped where
  PyTensor's own declaration allows it (PyTensor sets ``cxx=""`` for a block).
* The ``ConfigParam`` objects in ``_config_var_dict`` become :class:`ViewParam` proxies:
  PyTensor's ``get_config_hash`` and code that asks a parameter directly see the view.

A flag PyTensor declares and modecfg does not is adopted first (:mod:`.adopt`). Left to
PyTensor: the flags both fix per process (``compiledir``, ``base_compiledir``, ...), which PyTensor
receives from modecfg once, at its import (``PYTENSOR_FLAGS``). :func:`detach` puts the
class and the parameters back, holding the values in effect.
"""

from __future__ import annotations

import logging
import sys
import warnings
from typing import Any

from pytensor.configparser import ConfigParam, PyTensorConfigParser

from modecfg._pytensor.adopt import FIRST_READ, adopt_declarations, first_read
from modecfg._pytensor.binding import Binding, binding
from modecfg._pytensor.blas import PYTENSOR_TEXT
from modecfg._pytensor.values import pytensor_accepts
from modecfg._source import TRAMPOLINE_FILE
from modecfg.config import config as _config
from modecfg.config.flags import FLAGS, Flag
from modecfg.config.overrides import Override
from modecfg.errors import ConfigError

__all__ = ["ConfigView", "ViewParam", "attach", "detach", "view"]

_log = logging.getLogger("modecfg.bridge")
_getframe = sys._getframe
# `make mutate`: mutmut's call switch (two frames) sits between a mutated function and its caller.
_SWITCHED = False  # set at attach: the switch is imported by then if it is used at all
_SWITCH = frozenset(["trampoline", "_trampoline_wrapper"])


class ConfigView(PyTensorConfigParser):  # type: ignore[misc]
    """PyTensor's config object with modecfg's flags answered by modecfg's configuration."""

    def __setattr__(self, name: str, value: Any) -> None:
        current = _VIEW
        spec = current.known.get(name) if current is not None else None
        if spec is None:
            if current is not None and not name.startswith("_"):
                spec = _beyond_pytensor(name, assigned=True)
                if spec is not None:  # modecfg's, PyTensor 3 has none (device, compute_test_value)
                    _config.set(spec.name, value)
                    return
            object.__setattr__(self, name, value)
            return
        _config.set(spec.name, value)

    def add(self, name: str, doc: str, configparam: ConfigParam, in_c_key: bool = True) -> None:
        """PyTensor's ``add``; the new flag is then answered by modecfg (adopted if need be)."""
        PyTensorConfigParser.add(self, name, doc, configparam, in_c_key)
        current = _VIEW
        if current is not None and current.target is self:
            current.include_new()

    def change_flags(self, **kwargs: Any) -> Any:
        """PyTensor's ``change_flags``, as a modecfg override of this thread or task."""
        current = _VIEW
        if current is None:
            return PyTensorConfigParser.change_flags(self, **kwargs)
        # The same call site with the same values gets the same override (as config.override
        # does): PyTensor enters change_flags around every compile and rewrite.
        frame = _getframe(1)
        code = frame.f_code
        while _SWITCHED and code.co_name in _SWITCH and code.co_filename.endswith(TRAMPOLINE_FILE):
            frame = frame.f_back  # type: ignore[assignment]
            code = frame.f_code
        site = id(code) ^ frame.f_lasti
        cached = current.site_cache.get(site)
        if cached is not None and cached[0] is code:
            try:
                if cached[1] == kwargs:
                    return cached[2]
            except Exception:  # values whose == is not a bool (arrays): no cache
                pass
        try:
            made = current.change_flags(kwargs, frame)
        except ConfigError as exc:  # PyTensor checks values when the block is entered: so do we
            return _Refused(exc)
        if isinstance(made, Override):  # PyTensor's own keep per-use state: never shared
            if len(current.site_cache) >= 4096:
                current.site_cache.clear()
            current.site_cache[site] = (code, kwargs, made)
        return made


_UNKNOWN = object()
ADOPTED = "pytensor.config, before modecfg was imported"  # the source of an adopted value


class RestoreOnExit:
    """Stands for one of PyTensor's parameters in a ``change_flags`` block that was open when
    modecfg was imported: the block's end writes the old value through it, and modecfg's
    adopted assignment follows (dropped, or set back). Module-level: it pickles."""

    def __init__(self, param: Any, name: str) -> None:
        self.param, self.name = param, name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self.param.__get__(obj, objtype)

    def __set__(self, root: Any, value: Any) -> None:
        self.param.__set__(root, value)
        current = _VIEW
        spec = current.flags.get(self.name) if current is not None else None
        if spec is None or _config.origin(spec.name).source != ADOPTED:
            return
        assert current is not None
        if _same(value, current.pytensor_would_have(self.name)):
            _config.reset(spec.name)
        else:
            _config.set(spec.name, value, source=ADOPTED)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["param"], name)


def _watch_open_blocks(current: _View, names: list[str]) -> None:
    """PyTensor's change_flags blocks open now (modecfg imported inside one) end by putting
    their old values back: through :class:`RestoreOnExit`, modecfg hears of it. Found by a
    walk of the live objects, done only when a value was adopted."""
    import gc

    from pytensor.configparser import _ChangeFlagsDecorator

    wanted = set(names)
    for obj in gc.get_objects():
        if type(obj) is not _ChangeFlagsDecorator or obj._root is not current.target:
            continue
        if "old_vals" not in vars(obj):
            continue  # never entered
        for key, param in list(obj.confs.items()):
            if key in wanted and not isinstance(param, RestoreOnExit):
                obj.confs[key] = RestoreOnExit(param, key)


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


def _beyond_pytensor(name: str, *, assigned: bool) -> Flag | None:
    """The modecfg flag ``name`` (PyTensor's ``__`` spelling) names where PyTensor has none.
    An assignment to a name that no flag has is said once per name (a warning with the
    did-you-mean: libraries and PyTensor's own tests stash attributes on ``pytensor.config``,
    so it is stored as before); an obsolete Theano flag gets its ObsoleteFlagWarning."""
    from modecfg.config.compat import lookup

    found = lookup(name.replace("__", "."), suggest=assigned and name not in _said)
    if found.flag is not None:
        return found.flag
    if assigned and name not in _said:
        _said.add(name)
        from modecfg._warn import warn
        from modecfg.errors import ObsoleteFlagWarning, UnknownFlagWarning

        if found.obsolete is not None:
            warn(f"pytensor.config.{name} is obsolete: {found.message}; the assignment does nothing",
                 ObsoleteFlagWarning)  # fmt: skip
        else:
            hint = f"; did you mean {' or '.join(found.suggestions)}?" if found.suggestions else ""
            warn(f"pytensor.config.{name} is no flag of modecfg or PyTensor{hint} (kept as a plain "
                 "attribute of pytensor.config, which nothing reads)", UnknownFlagWarning)  # fmt: skip
    return None


_said: set[str] = set()  # names assigned on pytensor.config that no flag has, said once each


def _in_dict(name: str) -> str:
    """What ConfigView holds for a flag whose value is in the instance dict: it hides PyTensor's
    parameter, so the dict answers. A plain ``str``, because CPython 3.11 specialises an
    attribute read only past a class attribute of a built-in type (an object of our own
    class, or any descriptor, there keeps every read on the slow path: 38 ns against 23)."""
    return f"(pytensor.config.{name}: modecfg's value, in the instance dict)"


class _Own:
    """On ConfigView for a flag modecfg declares and this PyTensor does not
    (``pytensor.config.compute_test_value``, ``device``): modecfg's value in the reading context.
    A class attribute, not a ``__getattr__`` on ConfigView: one of those takes every read of
    ``pytensor.config`` off CPython's fast path (12 ns became 31)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None or _VIEW is None:
            return self
        return _config[self.name]


class _Base:
    """On ConfigView for a flag whose value is not in the dict yet: asks PyTensor's parameter
    (PyTensor works some defaults out on first use: ``blas__ldflags`` searches for a BLAS)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None or _VIEW is None:
            return self
        return _VIEW.present(self.name)


class _Scoped(_Base):
    """On ConfigView while some override holds the flag: the value in the reading context.

    PyTensor's compiles scope ``mode`` and ``traceback__limit`` around every rewrite, so this
    read is hot: the reading context's override scope is asked directly, and the shown value cached.
    """

    __slots__ = ("flag",)

    def __init__(self, name: str, flag: str) -> None:
        super().__init__(name)
        self.flag = flag

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        current = _VIEW
        if obj is None or current is None:
            return self
        hit = current.store.override_of(self.flag)
        if hit is None:  # not overridden here: the store decides (and may take this away)
            return current.present(self.name)
        value = hit[0]
        try:
            return current.shown[(self.flag, type(value), value)]
        except (KeyError, TypeError):
            return current.show(current.flags[self.name], value)

    def __set__(self, obj: Any, value: Any) -> None:  # pragma: no cover - __setattr__ wins
        ConfigView.__setattr__(obj, self.name, value)


class _TakingTurns:
    """On ConfigView for a parameter the view leaves to PyTensor whose default PyTensor works out
    at the first read (``gcc_version_str``, ``compiledir``): that read takes turns with other
    threads' (PyTensor's own races, and fails for an immutable parameter); later reads are
    PyTensor's stored value.

    For a flag handed over to PyTensor (:class:`~modecfg._pytensor.binding.Binding`), the first
    read is also where modecfg's value reaches PyTensor: what a layer set, an assignment since
    PyTensor's import included, is handed to PyTensor's parameter (its own ``apply`` and
    ``validate``) just before PyTensor reads it, once. Nothing copies values into PyTensor
    behind its back: it reads them, through the view, when it first needs them."""

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
        if self.spec is not None:
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


class ViewParam(ConfigParam):  # type: ignore[misc]
    """A ``_config_var_dict`` entry of the view: PyTensor's parameter, asked through modecfg."""

    def __init__(self, original: ConfigParam) -> None:  # no super().__init__: all is delegated
        object.__setattr__(self, "original", original)
        # What PyTensor reads of every parameter at every compile (the C module key reads
        # in_c_key of each: thousands per compile) and fixes at declaration: kept here, so
        # the read is a plain attribute, not a failed lookup and __getattr__ (0.4 us each).
        object.__setattr__(self, "name", original.name)
        object.__setattr__(self, "in_c_key", original.in_c_key)

    def __getattr__(self, name: str) -> Any:  # doc, name, in_c_key, default, val, apply, ...
        return getattr(self.original, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.original, name, value)

    @property
    def default(self) -> Any:
        return self.original.default

    @property
    def mutable(self) -> bool:
        return bool(self.original.mutable)

    def apply(self, value: Any) -> Any:
        return self.original.apply(value)

    def validate(self, value: Any) -> bool:
        return bool(self.original.validate(value))

    def __get__(self, cls: Any, type_: Any = None, delete_key: bool = False) -> Any:
        if cls is not None and _VIEW is not None and cls is _VIEW.target:
            return getattr(cls, self.original.name)
        return self.original.__get__(cls, type_, delete_key)

    def __set__(self, cls: Any, val: Any) -> None:
        if cls is not None and _VIEW is not None and cls is _VIEW.target:
            setattr(cls, self.original.name, val)
        else:
            self.original.__set__(cls, val)

    def __str__(self) -> str:
        return str(self.original)

    def __reduce__(self) -> Any:  # pickles as PyTensor's own parameter
        return (_original_param, (self.original,))


def _original_param(param: ConfigParam) -> ConfigParam:
    return param


class _View:
    """The state of the view while attached: which flags, and how each is shown to PyTensor."""

    def __init__(self, target: PyTensorConfigParser) -> None:
        self.target = target
        self.params: dict[str, Any] = target._config_var_dict
        self.originals: dict[str, ConfigParam] = {}
        self.flags: dict[str, Flag] = {}  # PyTensor name -> flag, for the flags the view answers
        self.known: dict[str, Flag] = {}  # PyTensor name -> flag, for every flag modecfg declares
        self.names: dict[str, str] = {}  # flag name -> PyTensor name
        # what PyTensor holds, shown where it takes no modecfg value; asked when first needed
        # (PyTensor computes some defaults on first use: blas__ldflags searches for a BLAS)
        self.blockable: frozenset[str] = frozenset()
        self.lazy: tuple[str, ...] = ()
        self.shown: dict[tuple[str, type, Any], Any] = {}  # (flag, type, value) -> as PyTensor has it
        self.site_cache: dict[int, tuple[Any, dict[str, Any], Override]] = {}  # change_flags call sites
        self.taking_turns: list[str] = []  # PyTensor's parameters whose first reads take turns
        self.own: list[str] = []  # PyTensor names of modecfg's flags this PyTensor lacks (_Own)
        self._unsubscribe: Any = None
        adopt_declarations(target)  # PyTensor's flags modecfg does not declare become modecfg's
        store = _config._cfg_store
        store.ready_up()
        self.store = store
        self._table()

    def _table(self) -> list[str]:
        """Take in each flag PyTensor has and the view does not know yet; their PyTensor names."""
        new = []
        for spec in FLAGS.values():
            param = self.params.get(spec.pytensor_name)
            if param is None or isinstance(param, ViewParam) or spec.pytensor_name in self.known:
                continue
            self.known[spec.pytensor_name] = spec
            if binding(spec, param) is Binding.HANDED_OVER:
                continue  # PyTensor uses one value per process, received at its import
            self.originals[spec.pytensor_name] = param
            self.flags[spec.pytensor_name] = spec
            self.names[spec.name] = spec.pytensor_name
            new.append(spec.pytensor_name)
        self.blockable = frozenset(s.name for s in self.flags.values() if s.fixed)
        self.lazy = tuple(s.name for s in self.flags.values() if s.is_lazy)
        return new

    def _turns(self) -> list[str]:
        """PyTensor's parameters the view leaves to PyTensor that work their default out when
        first read: their first reads take turns (:class:`_TakingTurns`)."""
        names = []
        for name, param in self.params.items():
            if name in self.flags or isinstance(param, ViewParam) or not callable(param.default):
                continue
            if not isinstance(ConfigView.__dict__.get(name), _TakingTurns):
                setattr(ConfigView, name, _TakingTurns(param, self.known.get(name)))
            names.append(name)
        return names

    def include_new(self) -> None:
        """PyTensor declared flags after the view was attached (``config.add`` at a later
        import): adopt those modecfg does not declare, and answer them all from modecfg."""
        adopt_declarations(self.target)
        new = self._table()
        for name in new:
            setattr(ConfigView, name, _Base(name))  # over the parameter add() put there
        self.refresh([self.flags[name].name for name in new])
        for name in new:
            self.params[name] = ViewParam(self.originals[name])
        self.taking_turns = self._turns()

    # -- values ------------------------------------------------------------------------

    def fallback(self, name: str) -> Any:
        """What PyTensor's own parameter holds (computing its default, the first time).

        Working out ``blas__ldflags`` makes PyTensor warn, in four lines, when it finds no
        BLAS; modecfg says that itself (:mod:`modecfg._pytensor.blas`, once, at the first C
        compile with a matrix product), so PyTensor's text is left out here, where the value is
        computed (a filter installed at import would not survive a ``catch_warnings()``)."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=PYTENSOR_TEXT, category=UserWarning)
            return first_read(self.originals[name], self.target)

    def _needs_pytensor(self, spec: Flag, value: Any) -> bool:
        """True where the value shown is PyTensor's own and PyTensor has not worked it out yet."""
        if spec.objects is not None and spec.objects(value):
            return False
        return not pytensor_accepts(spec, value) and not hasattr(self.originals[spec.pytensor_name], "val")

    def show(self, spec: Flag, value: Any) -> Any:
        """``value`` as PyTensor represents it (PyTensor's own ``apply``), or what PyTensor held
        where it takes no such value (``linker=per_graph``)."""
        try:
            key = (spec.name, type(value), value)
            return self.shown[key]
        except (KeyError, TypeError):
            pass
        name = spec.pytensor_name
        if spec.objects is not None and spec.objects(value):
            shown = value  # a Mode object, as PyTensor's change_flags passed it
        elif not pytensor_accepts(spec, value):
            # modecfg's own (warn_float64: PyTensor's creation-time check stays as it was) or a
            # value PyTensor has no name for (linker=per_graph)
            shown = self.fallback(name)
        else:
            try:
                shown = self.originals[name].apply(str(value))
            except Exception as exc:  # PyTensor's filter refuses what modecfg accepts
                shown = self.fallback(name)
                _log.debug("pytensor.config.%s shows %r: %s", name, shown, exc)
        try:
            if len(self.shown) > 4096:
                self.shown.clear()
            self.shown[(spec.name, type(value), value)] = shown
        except TypeError:
            pass
        return shown

    def present(self, name: str) -> Any:
        """The value of PyTensor's ``name`` in the reading thread or task."""
        spec = self.flags[name]
        return self.show(spec, self.store.value(spec.name))

    def refresh(self, names: Any) -> None:
        """Put the values below the overrides into the instance dict (the fast reads)."""
        target = self.target.__dict__
        for flag in names:
            name = self.names.get(flag)
            if name is None:
                continue
            spec = self.flags[name]
            value = self.store.base(spec.name)
            if self._needs_pytensor(spec, value):
                # asker first, value out second: a read between them still finds the dict
                self._shadow(name, _Base(name))
                target.pop(name, None)
            else:
                target[name] = self.show(spec, value)
                self._shadow(name, _in_dict(name))

    def _shadow(self, name: str, shadow: str | _Base) -> None:
        """Put ``shadow`` on ConfigView for ``name``, unless an override's _Scoped is there."""
        with self.store.views_told():  # not crossing a scoped() call
            if not isinstance(ConfigView.__dict__.get(name), _Scoped):
                setattr(ConfigView, name, shadow)

    def _changed(self, change: Any) -> None:
        self.refresh((change.name, *self.lazy))

    def scoped(self, name: str, on: bool) -> None:
        """A data descriptor while some override holds ``name``; the dict's value otherwise."""
        pt_name = self.names.get(name)
        if pt_name is None:
            return
        if on:
            setattr(ConfigView, pt_name, _Scoped(pt_name, name))
        elif pt_name in self.target.__dict__:
            setattr(ConfigView, pt_name, _in_dict(pt_name))
        else:
            setattr(ConfigView, pt_name, _Base(pt_name))

    # -- scopes ------------------------------------------------------------------------

    def change_flags(self, kwargs: dict[str, Any], frame: Any) -> Any:
        ours = {}
        theirs = {}
        for key, value in kwargs.items():
            spec = self.known.get(key) or _beyond_pytensor(key, assigned=False)
            if spec is None:
                theirs[key] = value
            else:
                ours[spec.name] = value
        if not theirs:
            return _config.override_for(ours, frame, blockable=self.blockable)
        if not ours:
            return PyTensorConfigParser.change_flags(self.target, **theirs)
        return _Both(
            _config.override_for(ours, frame, blockable=self.blockable),
            PyTensorConfigParser.change_flags(self.target, **theirs),
        )

    # -- attach and detach ---------------------------------------------------------------

    def pytensor_would_have(self, name: str) -> Any:
        """What PyTensor holds for ``name`` from its own sources (PYTENSOR_FLAGS, .pytensorrc)
        or its default, as PyTensor represents it; _UNKNOWN if that cannot be said."""
        spec, param = self.flags[name], self.originals[name]
        raw: Any = _UNKNOWN
        for candidate in reversed(_config.layers(spec.name)):
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
        assignments, with an origin that says so: the flags named."""
        adopted = []
        for name, spec in self.flags.items():
            param = self.originals[name]
            if "val" not in vars(param):
                continue  # never read or set: PyTensor holds nothing of its own
            now = param.val
            before = self.pytensor_would_have(name)
            if before is _UNKNOWN or _same(now, before) or _same(now, self.show(spec, _config[spec.name])):
                continue
            # PyTensor imported inside a modecfg override was handed the value below the overrides
            if _same(now, self.show(spec, self.store.base(spec.name))):
                continue
            try:
                _config.set(spec.name, now, source=ADOPTED)
            except Exception as exc:  # a value PyTensor took and modecfg refuses: said, not lost silently
                _log.warning("pytensor.config.%s=%r (set before modecfg was imported) is not taken: %s",
                             name, now, exc)  # fmt: skip
                continue
            adopted.append(name)
        if adopted:
            _watch_open_blocks(self, adopted)
        return adopted

    def attach(self) -> None:
        global _SWITCHED
        _SWITCHED = "mutmut.mutation.trampoline" in sys.modules
        target = self.target
        self.adopt_pytensor_state()
        for name in self.flags:
            setattr(ConfigView, name, _Base(name))  # the dict is filled next
        self.refresh(list(self.names))
        for name in self.flags:
            self.params[name] = ViewParam(self.originals[name])
        self.taking_turns = self._turns()
        for spec in FLAGS.values():  # modecfg's flags this PyTensor has none of: read through the view
            name = spec.pytensor_name
            if binding(spec, self.params.get(name)) is Binding.MODECFG and name not in ConfigView.__dict__:
                setattr(ConfigView, name, _Own(spec.name))
                self.own.append(name)
        target.__class__ = ConfigView
        self._unsubscribe = _config.subscribe(self._changed)
        self.store.add_view(self)

    def detach(self) -> None:
        """PyTensor's class and parameters back, each holding the value in effect below the overrides."""
        self.store.remove_view(self)
        if self._unsubscribe is not None:
            self._unsubscribe()
        target = self.target
        object.__setattr__(target, "__class__", PyTensorConfigParser)
        for name, param in self.originals.items():
            if name in target.__dict__:
                param.val = target.__dict__.pop(name)  # past PyTensor's once-only check: in effect
            self.params[name] = param
            if name in ConfigView.__dict__:
                delattr(ConfigView, name)
        for name in (*self.taking_turns, *self.own):
            if name in ConfigView.__dict__:
                delattr(ConfigView, name)


class _Both:
    """change_flags of modecfg's flags and of flags only PyTensor has, entered together."""

    def __init__(self, ours: Any, theirs: Any) -> None:
        self.ours, self.theirs = ours, theirs

    def __enter__(self) -> None:
        self.ours.__enter__()
        try:
            self.theirs.__enter__()
        except BaseException:
            self.ours.__exit__(None, None, None)
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            self.theirs.__exit__(*exc)
        finally:
            self.ours.__exit__(*exc)

    def __call__(self, func: Any) -> Any:
        return self.ours(self.theirs(func))


class _Refused:
    """A ``change_flags`` whose values are refused: raises when its block is entered or the
    function it decorates is called, as PyTensor's does. A module that decorates a function
    never called with a value PyTensor refuses (PyTensor's own tests/tensor/test_basic.py)
    still imports."""

    def __init__(self, error: ConfigError) -> None:
        self.error = error

    def __enter__(self) -> None:
        raise self.error.with_traceback(None)

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, func: Any) -> Any:
        import functools

        error = self.error

        @functools.wraps(func)
        def refused(*args: Any, **kwargs: Any) -> Any:
            raise error.with_traceback(None)

        return refused


_VIEW: _View | None = None


def attach(target: Any) -> Any:
    """Make ``target`` (PyTensor's config object) the view of modecfg's configuration."""
    global _VIEW
    if _VIEW is not None:
        return target
    if not isinstance(target, PyTensorConfigParser) or not isinstance(
        getattr(target, "_config_var_dict", None), dict
    ):
        raise TypeError(f"not PyTensor's config object: {type(target).__name__}")
    current = _View(target)
    current.attach()
    _VIEW = current
    return target


def detach(target: Any = None) -> None:
    global _VIEW
    current, _VIEW = _VIEW, None
    if current is not None:
        current.detach()


def view() -> _View | None:
    """The attached view, if any."""
    return _VIEW
