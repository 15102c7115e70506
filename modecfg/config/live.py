"""The configuration object: fast typed reads, validated assignment, scoped overrides.

Reads are plain instance-attribute reads: each value sits in the ``__dict__`` of its
section object (``config.traceback`` is a section, ``config.traceback.limit`` a value),
and the classes define no ``__getattr__``, so CPython specialises the read like any
other attribute. Everything that is not a stored value is a descriptor on the class:

* ``_Pending`` until the sources are first read (the process-wide config is lazy);
* ``_LazyDefault`` for defaults computed from other flags (``compile.timeout``);
* ``_Alias`` for PyTensor's ``__`` spelling (``config.traceback__limit``);
* ``_Overridden`` for a flag with a scoped override. An override must be seen only by
  the thread or asyncio task that made it, so it lives in a
  :class:`contextvars.ContextVar`; while a flag has an override anywhere in the
  process, this descriptor consults the variable. It is installed at the first
  override and removed by the first read after the last one ends, so a loop of
  ``with config.override(...)`` does not modify the class on every pass.

Each Config has its own classes, so overrides of one Config never touch another.
An unknown attribute is a plain ``AttributeError`` (with Python's own "Did you mean");
``config["name"]`` raises :class:`~modecfg.errors.UnknownFlagError` with ours.

Precedence, highest first: override > assignment > environment > rc files > default.
An assignment to a flag that is overridden in the current context changes the
override, and is undone with it, as PyTensor's ``change_flags`` does.
"""

from __future__ import annotations

import contextvars
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from modecfg.config.compat import canonical, lookup
from modecfg.config.flags import FLAGS, Flag, Lazy
from modecfg.config.flagstring import format_flags
from modecfg.config.origin import DEFAULT_ORIGIN, Layer, Origin
from modecfg.config.resolve import Candidate, Note, Resolution, unknown_flag, value_error
from modecfg.config.schema import validate
from modecfg.errors import ConfigErrors, ObsoleteFlagWarning, ReadOnlyFlagError

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Bridge", "Config", "Explanation", "Override", "attach_bridge", "build"]

F = TypeVar("F", bound=Callable[..., Any])

# The frame of overrides active in a context: flag name -> (value, origin), and the
# frame it was pushed on under the key _PARENT.
Frame = Mapping[object, Any]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_getframe = sys._getframe


def caller_origin(layer: Layer) -> Origin:
    """The first frame outside modecfg: where an assignment or override was written."""
    frame: Any = sys._getframe(2)  # the caller of the modecfg function that asks
    filename = frame.f_code.co_filename
    while filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        if frame is None:
            return Origin(layer)
        filename = frame.f_code.co_filename
    return Origin(layer, filename, frame.f_lineno)


class Bridge(Protocol):
    """What a Config tells the outside world (PyTensor) about its flags."""

    def check_writable(self, spec: Flag, value: Any) -> None: ...
    def mirror(self, spec: Flag, value: Any) -> None: ...
    def sync(self) -> None: ...


class _Descriptor:
    """Base of the data descriptors on Config classes.

    They define ``__set__`` only to be *data* descriptors (which win over the instance
    ``__dict__``); every assignment goes through ``Section.__setattr__`` instead.
    """

    __slots__ = ()

    def __set__(self, obj: Any, value: Any) -> None:  # pragma: no cover - __setattr__ wins
        raise AssertionError("Section.__setattr__ handles assignment")


class _FlagDescriptor(_Descriptor):
    """A data descriptor standing for one flag on a section class."""

    __slots__ = ("attr", "name", "state")

    def __init__(self, name: str, attr: str, state: _State) -> None:
        self.name, self.attr, self.state = name, attr, state


class _Overridden(_FlagDescriptor):
    """Installed on a section class while a flag is overridden somewhere."""

    __slots__ = ()

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        frame = self.state.var.get()
        if frame is not None:
            hit = frame.get(self.name)
            if hit is not None:
                return hit[0]
        if not self.state.active[self.name]:
            self.state.uninstall(self.name)  # no override left anywhere: plain reads again
        return self.state.base(self.name)


class _LazyDefault(_FlagDescriptor):
    """A flag whose default is computed at each read until some layer sets it."""

    __slots__ = ()

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return self.state.base(self.name)


class _Alias(_Descriptor):
    """``config.traceback__limit``: PyTensor's spelling of ``config.traceback.limit``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else obj[self.name]


class _Pending(_Descriptor):
    """Stands for a top-level attribute until the sources have been read."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        obj._ready()
        return getattr(obj, self.name)


class Section:
    """A group of flags: ``config.traceback`` holds ``limit`` and ``compile_limit``."""

    _cfg_root: Config
    _cfg_prefix: str

    if TYPE_CHECKING:
        # Flags are read as attributes. At run time there is no __getattr__ (it would slow
        # every read); this only tells type checkers that any flag name may be read.
        def __getattr__(self, attr: str) -> Any: ...

    def __setattr__(self, attr: str, value: Any) -> None:
        self._cfg_root._assign(self._cfg_prefix + attr, value, caller_origin(Layer.ASSIGNMENT))

    def __delattr__(self, attr: str) -> None:
        self._cfg_root.reset(self._cfg_prefix + attr)

    def __dir__(self) -> list[str]:
        prefix = self._cfg_prefix
        names = {n[len(prefix) :].split(".")[0] for n in FLAGS if n.startswith(prefix)}
        return sorted(names)

    def __repr__(self) -> str:
        prefix = self._cfg_prefix
        items = ", ".join(
            f"{n[len(prefix) :]}={self._cfg_root[n]!r}"
            for n in FLAGS
            if n.startswith(prefix) and "." not in n[len(prefix) :]
        )
        return f"<config section {prefix[:-1]}: {items}>"


class Explanation(NamedTuple):
    """Everything about one flag: its value, where that came from, and every layer's say."""

    name: str
    value: Any
    origin: Origin
    default: Any
    doc: str
    kind: str
    choices: tuple[str, ...]
    layers: tuple[Candidate, ...]  # lowest precedence first; the winner is the last
    pytensor: bool
    fixed: bool

    def __str__(self) -> str:
        lines = [f"{self.name} = {self.value!r}   (from {self.origin})", f"  {self.doc}"]
        lines.append(f"  type: {self.kind}")
        lines.append(f"  default: {self.default}")
        notes = []
        if self.pytensor:
            notes.append("mirrored into pytensor.config")
        if self.fixed:
            notes.append("fixed once PyTensor has used it")
        if notes:
            lines.append("  " + "; ".join(notes))
        lines.append("  layers, lowest precedence first:")
        lines.append(f"    {'default':<40} {self.default}")
        for i, cand in enumerate(self.layers):
            mark = "  <- wins" if i == len(self.layers) - 1 else "  (overridden)"
            where = f"{cand.origin.layer} {_where(cand.origin)}"
            lines.append(f"    {where:<40} {cand.raw!r}{mark}")
        if not self.layers:
            lines.append("    (no layer sets it: the default is used)")
        return "\n".join(lines)


def _where(origin: Origin) -> str:
    if origin.source is None:
        return ""
    return origin.source if origin.line is None else f"{origin.source}:{origin.line}"


class Config(Section):
    """The configuration: typed reads, validated assignment, provenance, scoped overrides.

    Read ``config.floatX``, ``config.traceback.limit`` or ``config["traceback.limit"]``
    (``traceback__limit`` works too); assign the same way. ``override`` scopes changes
    to a ``with`` block, a decorated function, a thread or an asyncio task.
    """

    _cfg_state: _State

    # -- reads ---------------------------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        spec = self._spec(name)
        self._ready()
        frame = self._cfg_state.var.get()
        if frame is not None and spec.name in frame:
            return frame[spec.name][0]
        return self._cfg_state.base(spec.name)

    def __dir__(self) -> list[str]:
        return sorted({*Section.__dir__(self), *_RESERVED})

    def __setitem__(self, name: str, value: Any) -> None:
        self._assign(name, value, caller_origin(Layer.ASSIGNMENT))

    def __delitem__(self, name: str) -> None:
        self.reset(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and canonical(name) in FLAGS

    def __iter__(self) -> Iterator[str]:
        return iter(FLAGS)

    def __len__(self) -> int:
        return len(FLAGS)

    def __repr__(self) -> str:
        return f"<modecfg Config: {self.to_flags() or 'all defaults'}>"

    # -- provenance ----------------------------------------------------------------

    def origin(self, name: str) -> Origin:
        """Where the value of ``name`` in this context comes from."""
        spec = self._spec(name)
        self._ready()
        frame = self._cfg_state.var.get()
        if frame is not None and spec.name in frame:
            origin: Origin = frame[spec.name][1]
            return origin
        found = self._cfg_state.candidates.get(spec.name)
        return found[-1].origin if found else DEFAULT_ORIGIN

    def explain(self, name: str) -> Explanation:
        """The value of ``name``, its origin, every layer's value, the doc and the choices."""
        spec = self._spec(name)
        self._ready()
        layers = list(self._cfg_state.candidates.get(spec.name, ()))
        frame = self._cfg_state.var.get()
        if frame is not None and spec.name in frame:
            value, origin = frame[spec.name]
            layers.append(Candidate(value, value, origin))
        return Explanation(
            name=spec.name,
            value=self[spec.name],
            origin=self.origin(spec.name),
            default=spec.default,
            doc=spec.doc,
            kind=spec.kind(),
            choices=spec.choices(),
            layers=tuple(layers),
            pytensor=spec.pytensor,
            fixed=spec.fixed,
        )

    def overrides(self) -> dict[str, Any]:
        """The flags overridden in this context (thread, task), with their values."""
        self._ready()
        frame = self._cfg_state.var.get()
        if frame is None:
            return {}
        return {str(k): v[0] for k, v in frame.items() if k is not _PARENT}

    def layers(self, name: str) -> tuple[Candidate, ...]:
        """What each layer below the overrides gave ``name``, lowest precedence first."""
        spec = self._spec(name)
        self._ready()
        return tuple(self._cfg_state.candidates.get(spec.name, ()))

    @property
    def sources(self) -> tuple[str, ...]:
        """The rc files and environment variables this configuration was read from."""
        self._ready()
        return tuple(self._cfg_state.read)

    @property
    def notes(self) -> tuple[Note, ...]:
        """Obsolete flags and values met while reading the sources."""
        self._ready()
        return tuple(self._cfg_state.notes)

    def is_default(self, name: str) -> bool:
        return self.origin(name).layer is Layer.DEFAULT

    # -- writes ----------------------------------------------------------------------

    def override(self, flags: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Override:
        """Change flags for a ``with`` block or a decorated function, in this context only.

        Names may be dotted in the mapping (``{"traceback.limit": -1}``) or use ``__``
        as keywords (``traceback__limit=-1``). Values are validated here, at once.
        """
        # The same call site with the same values validates once: overrides sit in loops.
        # (This is _override inlined: it is the hot path.)
        pairs = kwargs if flags is None else {**flags, **kwargs}
        frame = _getframe(1)
        code = frame.f_code
        cached = self._cfg_state.sites.get(id(code) ^ frame.f_lasti)
        if cached is not None and cached._code is code:
            try:
                if cached._raw == pairs:
                    return cached
            except Exception:  # values whose == is not a bool (arrays): no cache
                pass
        return self._override(pairs, frame)

    def _override(self, pairs: dict[str, Any], frame: Any) -> Override:
        """``override`` for the call written in ``frame``."""
        state = self._cfg_state
        if not state.ready:
            state.materialize(self)
        code = frame.f_code
        # id ^ instruction offset: unique within one code object, which is checked on use
        site = id(code) ^ frame.f_lasti
        cached = state.sites.get(site)
        if cached is not None and cached._code is code:
            try:
                if cached._raw == pairs:
                    return cached
            except Exception:  # values whose == is not a bool (arrays): no cache
                pass
        origin = Origin(_OVERRIDE, code.co_filename, frame.f_lineno)
        items: dict[str, tuple[Any, Origin]] = {}
        for name, raw in pairs.items():
            spec = FLAGS.get(name) or self._spec(name)
            if spec.fixed:
                raise ReadOnlyFlagError(
                    f"{spec.name} cannot be overridden for a block: PyTensor uses one value per "
                    f"process. Set it before PyTensor is first used (config.{spec.name} = ..., "
                    "or MODECFG_FLAGS)",
                    flag=spec.name,
                    origin=origin,
                )
            items[spec.name] = (self._validated(spec, raw, origin), origin)
        kind = _SingleOverride if len(items) == 1 else Override
        override = kind(self, items, code, pairs)
        if state.watchers:
            state.notify(items)
        if len(state.sites) >= 4096:
            state.sites.clear()
        state.sites[site] = override
        return override

    def set(self, name: str, value: Any, *, source: str | None = None) -> None:
        """Assign ``name``, naming the ``source`` of the value (a tool, a command-line option)
        instead of the calling line. ``config.set("floatX", "float32")`` is
        ``config.floatX = "float32"``."""
        origin = caller_origin(Layer.ASSIGNMENT) if source is None else Origin(Layer.ASSIGNMENT, source)
        self._assign(name, value, origin)

    def reset(self, name: str) -> None:
        """Drop assignments to ``name``: the environment, rc files or default decide again."""
        spec = self._spec(name)
        self._ready()
        state = self._cfg_state
        with state.lock:
            kept = [c for c in state.candidates.get(spec.name, ()) if c.origin.layer is not Layer.ASSIGNMENT]
            state.candidates[spec.name] = kept
            ns = state.sections[spec.section]
            if kept:
                ns.__dict__[spec.attr] = kept[-1].value
            elif spec.is_lazy:
                ns.__dict__.pop(spec.attr, None)
            else:
                ns.__dict__[spec.attr] = spec.default
        if state.bridge is not None:
            state.bridge.mirror(spec, self[spec.name])

    def _assign(self, name: str, value: Any, origin: Origin) -> None:
        self._ready()
        info = lookup(name)
        if info.flag is None:
            if info.obsolete is not None:
                from modecfg._warn import warn

                warn(
                    f"{info.written} is obsolete: {info.message}; the assignment does nothing",
                    ObsoleteFlagWarning,
                )
                return
            raise unknown_flag(info.written, origin, info.suggestions, info.message)
        spec = info.flag
        typed = self._validated(spec, value, origin)
        state = self._cfg_state
        frame = state.var.get()
        if frame is not None and spec.name in frame:
            new = dict(frame)
            new[spec.name] = (typed, Origin(Layer.OVERRIDE, origin.source, origin.line))
            state.var.set(new)
            state.notify([spec.name])
            return
        if state.bridge is not None:
            state.bridge.check_writable(spec, typed)
        with state.lock:
            state.sections[spec.section].__dict__[spec.attr] = typed
            state.candidates.setdefault(spec.name, []).append(Candidate(typed, value, origin))
        if state.bridge is not None:
            state.bridge.mirror(spec, typed)
        state.notify([spec.name])

    def _validated(self, spec: Flag, raw: Any, origin: Origin) -> Any:
        value = raw
        if isinstance(raw, str) and spec.legacy_value is not None:
            legacy = spec.legacy_value(raw)  # device=gpu0: read as cuda0 here as in the sources
            if legacy is not None:
                value, message = legacy
                _warn_notes([Note(spec.name, message, origin)])
        try:
            return validate(spec, value)
        except ValueError as exc:
            raise value_error(spec, raw, origin, str(exc)) from None

    # -- export ----------------------------------------------------------------------

    def to_flags(self, *, all: bool = False) -> str:
        """A flag string of every value some layer set in this context, overrides included,
        even where it equals the default (``all``: every value).

        It is what a worker process needs to run as this one does: given as ``MODECFG_FLAGS``
        it wins over the worker's own environment and rc files, which may disagree.
        """
        pairs = []
        for spec in FLAGS.values():
            if all or self.origin(spec.name).layer is not Layer.DEFAULT:
                pairs.append((spec.name, _text(self[spec.name])))
        return format_flags(pairs)

    def as_dict(self) -> dict[str, Any]:
        """Every flag's value in this context, by dotted name."""
        return {name: self[name] for name in FLAGS}

    def model(self) -> BaseModel:
        """A typed pydantic snapshot of every value in this context."""
        from modecfg.config.schema import flags_model

        nested: dict[str, Any] = {}
        for spec in FLAGS.values():
            node = nested
            for part in spec.section:
                node = node.setdefault(part, {})
            node[spec.attr] = self[spec.name]
        return flags_model().model_validate(nested)

    # -- internals -------------------------------------------------------------------

    def _ready(self) -> None:
        state = self._cfg_state
        if not state.ready:
            state.materialize(self)

    def _spec(self, name: str) -> Flag:
        if not isinstance(name, str):
            raise TypeError(f"flag names are strings, not {type(name).__name__}")
        spec = FLAGS.get(canonical(name))
        if spec is not None:
            return spec
        info = lookup(name)
        if info.flag is not None:
            return info.flag
        if info.obsolete is not None:
            raise unknown_flag(info.written, None, (), f"it is obsolete: {info.message}")
        raise unknown_flag(info.written, None, info.suggestions, info.message)


def _text(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


class Override:
    """Scoped flag values: a context manager and a decorator (also for async functions).

    An Override holds no per-use state, so one object may be entered by many threads
    and tasks at once, and ``override()`` hands out the same object for the same call
    site and values. Each entry pushes a frame that remembers its parent; exit
    restores the parent, so blocks must end in the order they began, as ``with``
    blocks do.
    """

    __slots__ = (
        "_code",
        "_config",
        "_displaced",
        "_items",
        "_lists",
        "_names",
        "_raw",
        "_solo",
        "_state",
        "_var",
    )

    def __init__(
        self, config: Config, items: dict[Any, tuple[Any, Origin]], code: Any = None, raw: Any = None
    ) -> None:
        state = config._cfg_state
        self._config = config
        self._state = state
        self._var = state.var
        self._items = items
        self._solo: dict[object, Any] = {**items, _PARENT: None}  # the frame when none is active
        self._names = tuple(items)
        self._lists = tuple(state.active[name] for name in items)
        self._displaced = state.displaced
        self._code = code  # the call site and raw values, for override()'s cache
        self._raw = dict(raw) if raw is not None else None

    @property
    def values(self) -> Mapping[str, Any]:
        """The flags this override sets, by dotted name."""
        return MappingProxyType({name: value for name, (value, _) in self._items.items()})

    def __enter__(self) -> Config:
        var = self._var
        parent = var.get()
        if parent is None:
            var.set(self._solo)
        else:
            frame: dict[object, Any] = {**parent, **self._items}
            frame[_PARENT] = parent
            var.set(frame)
        for entries in self._lists:
            entries.append(None)
        displaced = self._displaced
        for name in self._names:
            if name not in displaced:
                self._state.install(name)
        return self._config

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        var = self._var
        frame = var.get()
        if frame is None:
            raise RuntimeError("override exited without being entered in this context")
        var.set(frame[_PARENT])
        for entries in self._lists:
            entries.pop()

    def __call__(self, func: F) -> F:
        import inspect

        if inspect.isasyncgenfunction(func):

            @functools.wraps(func)
            async def async_gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                agen = func(*args, **kwargs)
                sent: Any = None
                while True:  # the body runs, step by step, inside the override
                    with self:
                        try:
                            item = await agen.asend(sent)
                        except StopAsyncIteration:
                            return
                    sent = yield item

            return async_gen_wrapper  # type: ignore[return-value]

        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                step: Any = gen.send
                arg: Any = None
                while True:  # the body runs, step by step, inside the override
                    with self:
                        try:
                            item = step(arg)
                        except StopIteration as stop:
                            return stop.value
                    try:
                        arg = yield item
                        step = gen.send
                    except GeneratorExit:
                        with self:
                            gen.close()
                        raise
                    except BaseException as exc:  # thrown in by the caller: into the body
                        step, arg = gen.throw, exc

            return gen_wrapper  # type: ignore[return-value]

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return await func(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"<override {format_flags((k, _text(v)) for k, (v, _) in self._items.items())}>"


class _SingleOverride(Override):
    """An Override of one flag, the common case, with a shorter enter and exit."""

    __slots__ = ("_entries", "_name")

    def __init__(
        self, config: Config, items: dict[Any, tuple[Any, Origin]], code: Any = None, raw: Any = None
    ) -> None:
        super().__init__(config, items, code, raw)
        (self._name,) = self._names
        (self._entries,) = self._lists

    def __enter__(self) -> Config:
        var = self._var
        parent = var.get()
        if parent is None:
            var.set(self._solo)
        else:
            frame: dict[object, Any] = {**parent, **self._items}
            frame[_PARENT] = parent
            var.set(frame)
        self._entries.append(None)
        if self._name not in self._displaced:
            self._state.install(self._name)
        return self._config

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        var = self._var
        frame = var.get()
        if frame is None:
            raise RuntimeError("override exited without being entered in this context")
        var.set(frame[_PARENT])
        self._entries.pop()


class _State:
    """The mutable insides of one Config, kept off its attribute namespace."""

    def __init__(self, root: Config, loader: Callable[[], Resolution] | None, bridge: Bridge | None) -> None:
        self.root = root
        self.loader = loader
        self.ready = loader is None
        self.bridge = bridge
        self.lock = threading.RLock()  # sources, assignment
        self.counting = threading.Lock()  # override reference counts and descriptors
        self.var: contextvars.ContextVar[Frame | None] = contextvars.ContextVar(
            "modecfg_overrides", default=None
        )
        self.sections: dict[tuple[str, ...], Section] = {}
        self.candidates: dict[str, list[Candidate]] = {}
        self.notes: list[Note] = []
        self.read: list[str] = []
        # flag -> one entry per active override of it, in any thread or task. Entries are
        # added and removed with list.append / list.pop, which the GIL makes atomic.
        self.active: dict[str, list[None]] = {name: [] for name in FLAGS}
        # flag -> what its class held before an _Overridden went in (None: nothing)
        self.displaced: dict[str, object] = {}
        # flag -> functions called when its value may have changed (assignment, override)
        self.watchers: dict[str, list[Callable[[], None]]] = {}
        # an override() call site -> the Override it made (see Config._override)
        self.sites: dict[int, Override] = {}

    def base(self, name: str) -> Any:
        """The value below the overrides: assigned, from a source, or the default."""
        spec = FLAGS[name]
        try:
            return self.sections[spec.section].__dict__[spec.attr]
        except KeyError:
            assert isinstance(spec.default, Lazy), name
            if not self.ready:  # the first read of the process: the sources may set it
                self.root._ready()
                found = self.sections[spec.section].__dict__.get(spec.attr, _MISSING)
                if found is not _MISSING:
                    return found
            return spec.default.compute(self.root)

    def materialize(self, root: Config) -> None:
        with self.lock:
            if self.ready:
                return
            assert self.loader is not None
            res = self.loader()
            if res.errors:
                raise res.errors[0] if len(res.errors) == 1 else ConfigErrors(res.errors)
            self.fill(res)
            cls = type(root)
            for attr, value in list(vars(cls).items()):
                if isinstance(value, _Pending):
                    delattr(cls, attr)
            self.ready = True
        _warn_notes(res.notes)
        if self.bridge is not None:
            self.bridge.sync()

    def fill(self, res: Resolution) -> None:
        self.candidates = {k: list(v) for k, v in res.candidates.items()}
        self.notes = list(res.notes)
        self.read = list(res.read)
        for spec in FLAGS.values():
            ns = self.sections[spec.section]
            found = self.candidates.get(spec.name)
            if found:
                ns.__dict__[spec.attr] = found[-1].value
            elif not spec.is_lazy:
                ns.__dict__[spec.attr] = spec.default

    def watch(self, name: str, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever ``name`` is assigned or overridden."""
        self.watchers.setdefault(name, []).append(callback)

    def notify(self, names: Iterable[str]) -> None:
        for name in names:
            for callback in self.watchers.get(name, ()):
                callback()

    def install(self, name: str) -> None:
        """Put an _Overridden for ``name`` on its section class, unless one is there."""
        with self.counting:
            if name in self.displaced:
                return
            spec = FLAGS[name]
            cls = type(self.sections[spec.section])
            previous = cls.__dict__.get(spec.attr)
            # Descriptor first, record second: __enter__ reads ``displaced`` unlocked.
            setattr(cls, spec.attr, _Overridden(name, spec.attr, self))
            self.displaced[name] = previous

    def uninstall(self, name: str) -> None:
        """Take the _Overridden of ``name`` away again if no override of it is active.

        An override entered meanwhile either sees the descriptor gone (and installs it)
        or is seen by the re-check at the end: ``active`` is appended to before
        ``displaced`` is looked at, ``displaced`` is emptied before the descriptor goes
        and filled after it comes.
        """
        with self.counting:
            if self.active[name] or name not in self.displaced:
                return
            spec = FLAGS[name]
            cls = type(self.sections[spec.section])
            previous = self.displaced.pop(name)
            if previous is None:
                delattr(cls, spec.attr)
            else:
                setattr(cls, spec.attr, previous)
            if self.active[name]:
                setattr(cls, spec.attr, _Overridden(name, spec.attr, self))
                self.displaced[name] = previous


_RESERVED = {n for n in dir(Config) if not n.startswith("_")}
_OVERRIDE = Layer.OVERRIDE
_PARENT = object()  # key of a frame's parent frame
_MISSING = object()


def _warn_notes(notes: Iterable[Note]) -> None:
    """One ObsoleteFlagWarning per obsolete flag, however many sources set it."""
    from modecfg._warn import warn

    seen: set[str] = set()
    for note in notes:
        if note.flag in seen:
            continue
        seen.add(note.flag)
        warn(str(note), ObsoleteFlagWarning)


def attach_bridge(config: Config, bridge: Bridge | None) -> None:
    """Tell ``bridge`` about every change of ``config`` from now on (None: detach).

    Values already read are handed over at once with ``bridge.sync()``; a config not
    read yet syncs when it is first read.
    """
    state = config._cfg_state
    state.bridge = bridge
    if bridge is not None and state.ready:
        bridge.sync()


def build(loader: Callable[[], Resolution] | Resolution, bridge: Bridge | None = None) -> Config:
    """A Config with its own classes. ``loader`` is a Resolution, or a callable run at first use."""
    root_cls = type("Config", (Config,), {"__module__": Config.__module__})
    root: Config = object.__new__(root_cls)
    state = _State(root, None if isinstance(loader, Resolution) else loader, bridge)
    root.__dict__["_cfg_state"] = state
    root.__dict__["_cfg_root"] = root
    root.__dict__["_cfg_prefix"] = ""
    state.sections[()] = root
    for spec in FLAGS.values():
        if not spec.section and spec.attr in _RESERVED:
            raise RuntimeError(f"flag {spec.name!r} clashes with a Config method")
        parent: Section = root
        for depth in range(1, len(spec.section) + 1):
            key = spec.section[:depth]
            if key not in state.sections:
                cls = type("Section", (Section,), {"__module__": Section.__module__})
                ns: Section = object.__new__(cls)
                ns.__dict__["_cfg_root"] = root
                ns.__dict__["_cfg_prefix"] = ".".join(key) + "."
                state.sections[key] = ns
                parent.__dict__[key[-1]] = ns
            parent = state.sections[key]
        if spec.is_lazy:
            setattr(type(parent), spec.attr, _LazyDefault(spec.name, spec.attr, state))
        if spec.section:
            setattr(root_cls, spec.pytensor_name, _Alias(spec.name))
    if isinstance(loader, Resolution):
        if loader.errors:
            raise loader.errors[0] if len(loader.errors) == 1 else ConfigErrors(loader.errors)
        state.fill(loader)
        _warn_notes(loader.notes)
    else:
        for attr in {spec.section[0] if spec.section else spec.attr for spec in FLAGS.values()}:
            if attr not in root_cls.__dict__:
                setattr(root_cls, attr, _Pending(attr))
    return root
