"""The configuration object: typed reads, validated assignment, scoped overrides, provenance.

The work is split by job: :mod:`~modecfg.configuration.store` keeps the values, the fast reads
and the change notification; :mod:`~modecfg.configuration.overrides` the scoped overrides;
:mod:`~modecfg.configuration.explain` the presentation; :mod:`~modecfg.configuration.snapshot` the
configuration that travels to worker processes. This module is the facade over them.

Precedence, highest first: override > assignment > environment > rc files > default.
An assignment to a flag that is overridden in the current context changes the
override, and is undone with it, as PyTensor's ``change_flags`` does.
An unknown attribute is a plain ``AttributeError`` (with Python's own "Did you mean");
``config["name"]`` raises :class:`~modecfg.errors.UnknownFlagError` with ours.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from modecfg.configuration.flags import Flag, FlagSet, canonical, declared
from modecfg.configuration.origin import DEFAULT_ORIGIN, Layer, Origin, Setting
from modecfg.configuration.overrides import Override, make_override, replace
from modecfg.configuration.resolve import Candidate, Note, Resolution, unknown_flag, value_error
from modecfg.configuration.sections import ORIGIN, VALUE, Section
from modecfg.configuration.store import (
    _PROCESS_WIDE,
    Change,
    Guard,
    Listener,
    Store,
    process_wide,
    warn_notes,
)
from modecfg.errors import ConfigErrors, ObsoleteFlagWarning, ReadOnlyFlagError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from modecfg.configuration.explain import Explanation
    from modecfg.configuration.snapshot import Snapshot

__all__ = ["Change", "Config", "Override", "build"]

_getframe = sys._getframe
_OVERRIDE = Layer.OVERRIDE
# The schema's validate, loaded at the first value checked (no value is checked at import), and
# kept: an import statement in the assignment's path cost it 0.65 us a call
_validate: Callable[[Flag, Any], Any] | None = None


def _load_validate() -> Callable[[Flag, Any], Any]:
    global _validate
    from modecfg.configuration.schema import validate

    _validate = validate
    return validate


# _source's rule for the user's frame, loaded at the first assignment (none is made at import)
_first_user_frame: Callable[[int], tuple[Any, int]] | None = None


_FROM_OUTSIDE = (Layer.ENV, Layer.RC)  # layers a package's assignment at its import may overrule unseen


def caller_origin(layer: Layer) -> Origin:
    """Where an assignment or override was written: the first frame of user code on the stack
    (past modecfg, PyTensor, numpy and the standard library: :mod:`modecfg._source`'s rule,
    the one warnings and error locations use)."""
    global _first_user_frame
    if _first_user_frame is None:
        from modecfg._source import first_user_frame

        _first_user_frame = first_user_frame
    frame, _ = _first_user_frame(2)  # from the caller of the modecfg function that asks
    if frame is None:
        return Origin(layer)
    return Origin(layer, frame.f_code.co_filename, frame.f_lineno)


class Config(Section):
    """The configuration: typed reads, validated assignment, provenance, scoped overrides.

    Read ``config.floatX``, ``config.traceback.limit`` or ``config["traceback.limit"]``
    (``traceback__limit`` works too); assign the same way. ``override`` scopes changes
    to a ``with`` block, a decorated function, a thread or an asyncio task.
    """

    _cfg_store: Store

    # -- reads ---------------------------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        spec = self._spec(name)
        store = self._cfg_store
        store.ready_up()
        found = store.override_of(spec.name)
        return found[VALUE] if found is not None else store.base(spec.name)

    def __dir__(self) -> list[str]:
        return sorted({*Section.__dir__(self), *_RESERVED})

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        """The process's configuration (``modecfg.config``) pickles as itself, by reference: a
        task function that reads it, sent to a Dask worker or another process, reads that
        process's own (the values a ConfigPlugin or ``snapshot().run`` gave it there). Any other
        Config does not pickle: send its ``snapshot()``."""
        if self._cfg_store not in _PROCESS_WIDE:
            raise TypeError(
                "a Config made by modecfg.load() does not pickle; pickle its snapshot() instead "
                "(snapshot.run(f) applies it where it is loaded)"
            )
        return process_wide, ()

    def __setitem__(self, name: str, value: Any) -> None:
        self._assign(name, value, caller_origin(Layer.ASSIGNMENT))

    def __delitem__(self, name: str) -> None:
        self.reset(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and canonical(name) in self._cfg_store.flags

    def __iter__(self) -> Iterator[str]:
        return iter(self._cfg_store.flags)

    def __len__(self) -> int:
        return len(self._cfg_store.flags)

    def __repr__(self) -> str:
        return f"<modecfg Config: {self.to_flags() or 'all defaults'}>"

    def _repr_html_(self) -> str:
        """In a notebook: the flags some layer set in this context, with where each came from."""
        from modecfg._html import html_table

        rows = [(name, repr(value), str(origin)) for name, (value, origin) in self.changed().items()]
        if not rows:
            return "<p><b>modecfg configuration</b>: every flag at its default</p>"
        return html_table(["flag", "value", "from"], rows, caption=f"modecfg configuration: {len(rows)} set")

    # -- provenance ----------------------------------------------------------------

    def origin(self, name: str) -> Origin:
        """Where the value of ``name`` in this context comes from."""
        spec = self._spec(name)
        store = self._cfg_store
        store.ready_up()
        scoped = store.override_of(spec.name)
        if scoped is not None:
            origin: Origin = scoped[ORIGIN]
            return origin
        found = store.candidates.get(spec.name)
        return found[-1].origin if found else DEFAULT_ORIGIN

    def explain(self, name: str) -> Explanation:
        """The value of ``name``, its origin, every layer's value, the doc and the choices."""
        from modecfg.configuration.explain import Explanation  # not at import: reading stays cheap

        spec = self._spec(name)
        layers = list(self.layers(spec.name))
        scoped = self._cfg_store.override_of(spec.name)
        if scoped is not None:
            value, origin = scoped[VALUE], scoped[ORIGIN]
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
        store = self._cfg_store
        store.ready_up()
        return {name: value for name, (value, _) in store.overridden().items()}

    def layers(self, name: str) -> tuple[Candidate, ...]:
        """What each layer below the overrides gave ``name``, lowest precedence first."""
        spec = self._spec(name)
        store = self._cfg_store
        store.ready_up()
        return tuple(store.candidates.get(spec.name, ()))

    @property
    def loaded(self) -> bool:
        """Whether the sources have been read (the process-wide config reads them at first use)."""
        return self._cfg_store.ready

    @property
    def sources(self) -> tuple[str, ...]:
        """The rc files and environment variables this configuration was read from."""
        self._cfg_store.ready_up()
        return tuple(self._cfg_store.read)

    @property
    def for_pytensor(self) -> tuple[Setting, ...]:
        """Settings of the sources naming flags of PyTensor's that modecfg does not declare
        (``gcc_version_str``): PyTensor's own, handed to it as written at its import."""
        self._cfg_store.ready_up()
        return tuple(self._cfg_store.for_pytensor)

    @property
    def notes(self) -> tuple[Note, ...]:
        """Obsolete flags and values met while reading the sources."""
        self._cfg_store.ready_up()
        return tuple(self._cfg_store.notes)

    @property
    def flags(self) -> FlagSet:
        """The flags this configuration knows (a value: those declared when it was made)."""
        return self._cfg_store.flags

    def is_default(self, name: str) -> bool:
        return self.origin(name).layer is Layer.DEFAULT

    def changed(self) -> dict[str, tuple[Any, Origin]]:
        """The flags some layer set in this context (overrides included, even to the default's
        value), in declaration order: name -> (value, where it came from). What ``show``,
        ``to_flags``, snapshots and compile records start from."""
        store = self._cfg_store
        store.ready_up()
        overridden = store.overridden()  # every compile asks: one pass, not origin() per flag
        found = {}
        for name in store.flags:
            if name in overridden:
                value, origin = overridden[name]
            elif candidates := store.candidates.get(name):
                value, origin = store.base(name), candidates[-1].origin
            else:
                continue
            if origin.layer is not Layer.DEFAULT:
                found[name] = (value, origin)
        return found

    # -- change notification ---------------------------------------------------------

    def subscribe(
        self, listener: Listener, names: Iterable[str] | None = None, *, overrides: bool = False
    ) -> Callable[[], None]:
        """Call ``listener(change)`` when a flag of ``names`` (None: any) changes.

        It hears of the sources being read (``"loaded"``), assignments and resets; with
        ``overrides`` also of each override being entered, in the context entering it.
        Returns the function that unsubscribes it.
        """
        if names is None:  # every flag, those adopted from PyTensor later included
            return self._cfg_store.subscribe(listener, None, overrides)
        return self._cfg_store.subscribe(listener, [self._spec(n).name for n in names], overrides)

    def guard(self, check: Guard) -> Callable[[], None]:
        """Call ``check(flag, value)`` before each assignment of a flag fixed per process
        (``Flag.fixed``: PyTensor uses one value per process); what it raises refuses it.
        Returns the function that removes it."""
        guards = self._cfg_store.guards
        guards.append(check)

        def remove() -> None:
            if check in guards:
                guards.remove(check)

        return remove

    # -- writes ----------------------------------------------------------------------

    def override(self, flags: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Override:
        """Change flags for a ``with`` block or a decorated function, in this context only.

        Names may be dotted in the mapping (``{"traceback.limit": -1}``) or use ``__``
        as keywords (``traceback__limit=-1``). Values are validated here, at once.
        """
        # The same call site with the same values validates once: overrides sit in loops.
        # (This is override_for's cache inlined: it is the hot path.)
        pairs = kwargs if flags is None else {**flags, **kwargs}
        frame = _getframe(1)
        code = frame.f_code
        cached = self._cfg_store.site_cache.get(id(code) ^ frame.f_lasti)
        if cached is not None and cached._code is code:
            try:
                if cached._raw == pairs:
                    return cached  # type: ignore[no-any-return]
            except Exception:  # values whose == is not a bool (arrays): no cache
                pass
        return self.override_for(pairs, frame)

    def override_from(self, items: Mapping[str, tuple[Any, Origin]]) -> Override:
        """``override`` of values that each carry their own origin (a snapshot's, a mark's)."""
        return make_override(self, self._cfg_store, self._items(items, None), None, None)

    def validated(self, name: str, value: Any, origin: Origin | None = None) -> Any:
        """``value`` as ``name`` would hold it (typed, normalised); FlagValueError if it is not valid."""
        return self._validated(self._spec(name), value, origin)

    def override_for(
        self, pairs: dict[str, Any], frame: Any, blockable: frozenset[str] = frozenset()
    ) -> Override:
        """``override(pairs)`` as if written where ``frame`` is (its line is the origin), for a
        tool that scopes flags on its caller's behalf (PyTensor's ``change_flags``). Flags in
        ``blockable`` may be scoped although PyTensor fixes them per process. The same call
        site with the same values gets the same override (it validates once)."""
        store = self._cfg_store
        if not store.ready:
            store.ready_up()
        code = frame.f_code
        # id ^ instruction offset: unique within one code object, which is checked on use
        site = id(code) ^ frame.f_lasti
        cached = store.site_cache.get(site)
        if cached is not None and cached._code is code:
            try:
                if cached._raw == pairs:
                    return cached  # type: ignore[no-any-return]
            except Exception:  # values whose == is not a bool (arrays): no cache
                pass
        origin = Origin(_OVERRIDE, code.co_filename, frame.f_lineno)
        override = make_override(self, store, self._items(pairs, origin, blockable), code, pairs)
        if len(store.site_cache) >= 4096:
            store.site_cache.clear()
        store.site_cache[site] = override
        return override

    def _items(
        self, pairs: Mapping[str, Any], origin: Origin | None, blockable: frozenset[str] = frozenset()
    ) -> dict[str, tuple[Any, Origin]]:
        """Validated override values, each with its origin (``None``: given in ``pairs``)."""
        items: dict[str, tuple[Any, Origin]] = {}
        declared = self._cfg_store.flags._flags
        for name, given in pairs.items():
            raw, where = (given, origin) if origin is not None else given
            spec = declared.get(name) or self._spec(name)
            if spec.fixed and spec.name not in blockable:
                raise ReadOnlyFlagError(
                    f"{spec.name} cannot be overridden for a block: PyTensor uses one value per "
                    f"process. Set it before PyTensor is first used (config.{spec.name} = ..., "
                    "or MODECFG_FLAGS)",
                    flag=spec.name,
                    origin=where,
                )
            if type(raw) is str and raw in spec.literals and spec.check is None:
                items[spec.name] = (raw, where)  # one of its choices, as written: nothing to parse
            else:
                items[spec.name] = (self._validated(spec, raw, where), where)
        return items

    def set(self, name: str, value: Any, *, source: str | None = None) -> None:
        """Assign ``name``, naming the ``source`` of the value (a tool, a command-line option)
        instead of the calling line. ``config.set("floatX", "float32")`` is
        ``config.floatX = "float32"``."""
        origin = caller_origin(Layer.ASSIGNMENT) if source is None else Origin(Layer.ASSIGNMENT, source)
        self._assign(name, value, origin)

    @contextlib.contextmanager
    def assigned(self, values: Mapping[str, Any], *, source: str) -> Iterator[None]:
        """Assign ``values`` (naming ``source``) for a ``with`` block, then put back the
        assignments there were, value and origin, or none. Assignments, not an override: every
        thread, the ones the block starts included, reads them (``modecfg profile SCRIPT``)."""
        saved: dict[str, Candidate | None] = {}
        for name in values:
            spec = self._spec(name)
            self._cfg_store.ready_up()
            found = [
                c for c in self._cfg_store.candidates.get(spec.name, ()) if c.origin.layer is Layer.ASSIGNMENT
            ]
            saved[spec.name] = found[-1] if found else None
        try:
            for name, value in values.items():
                self.set(name, value, source=source)
            yield
        finally:
            for name, was in saved.items():
                if was is None:
                    self.reset(name)
                else:
                    self._assign(name, was.value, was.origin)

    def reset(self, name: str) -> None:
        """Drop assignments to ``name``: the environment, rc files or default decide again."""
        spec = self._spec(name)
        self._cfg_store.ready_up()
        self._cfg_store.reset(spec)

    def _assign(self, name: str, value: Any, origin: Origin | None) -> None:
        """Assign ``name``; ``origin`` None: the first line of user code on the stack."""
        if origin is None:
            origin = caller_origin(Layer.ASSIGNMENT)
        store = self._cfg_store
        if not store.ready:
            store.ready_up()
        spec = store.flags.get(canonical(name)) if isinstance(name, str) else None
        if spec is not None:
            self._assign_flag(spec, value, origin)
            return
        from modecfg.configuration.compat import lookup  # (a name that is not a flag's own)

        info = lookup(name, flags=store.flags)
        if info.flag is None:
            if info.obsolete is not None:
                from modecfg._warn import warn

                warn(
                    f"{info.written} is obsolete: {info.message}; the assignment does nothing",
                    ObsoleteFlagWarning,
                )
                return
            raise unknown_flag(info.written, origin, info.suggestions, info.message)
        self._assign_flag(info.flag, value, origin)

    def _assign_flag(self, spec: Flag, value: Any, origin: Origin | None) -> None:
        """Assign ``spec`` (a flag of this configuration, by its declaration); ``origin`` None:
        the first line of user code on the stack."""
        if origin is None:
            origin = caller_origin(Layer.ASSIGNMENT)
        store = self._cfg_store
        if not store.ready:
            store.ready_up()
        if type(value) is str and value in spec.literals and spec.check is None:
            typed: Any = value  # one of its choices, as written: nothing to parse
        else:
            typed = self._validated(spec, value, origin)
        if store.override_of(spec.name) is not None:  # changes the override, undone with it
            where = Origin(Layer.OVERRIDE, origin.source, origin.line)
            replace(store, spec.name, (typed, where))
            for listener in tuple(store.override_listeners.get(spec.name, ())):
                listener(Change(spec.name, typed, where, "override"))
            return
        below = store.candidates.get(spec.name)
        if below and origin.line is not None and below[-1].origin.layer in _FROM_OUTSIDE:
            _say_import_assignment(below, spec.name, typed, origin)
        store.assign(spec, typed, value, origin)

    def _validated(self, spec: Flag, raw: Any, origin: Origin | None) -> Any:
        validate = _validate or _load_validate()
        try:
            return validate(spec, raw)
        except ValueError as exc:
            raise value_error(spec, raw, origin, str(exc)) from None

    # -- export ----------------------------------------------------------------------

    def to_flags(self, *, all: bool = False) -> str:
        """A flag string of every value some layer set in this context, overrides included,
        even where it equals the default (``all``: every value).

        It is what a worker process needs to run as this one does: given as ``MODECFG_FLAGS``
        it wins over the worker's own environment and rc files, which may disagree.
        """
        from modecfg.configuration.flagstring import format_flags

        if all:
            return format_flags((name, self[name]) for name in self._cfg_store.flags)
        return format_flags((name, value) for name, (value, _) in self.changed().items())

    def snapshot(self) -> Snapshot:
        """This context's effective configuration as a picklable object for a worker:
        every value some layer set, overrides included, with where each came from."""
        from modecfg.configuration.snapshot import take

        return take(self)

    def in_effect(self) -> dict[str, tuple[Any, str]]:
        """What a compile in this context runs with: every flag some layer set (overrides
        included) and always the four that shape every compile, as name -> (value, where it
        came from). Plain Python values (an object's text where the value is one, its first
        line and at most 80 characters: a Mode's text runs to kilobytes), so the record pickles
        and unpickles where modecfg is not installed."""
        changed = self.changed()
        record = {}
        for name in self._cfg_store.flags:
            if name in changed:
                value, origin = changed[name]
            elif name in _ALWAYS_RECORDED:
                value, origin = self[name], DEFAULT_ORIGIN
            else:
                continue
            if not (value is None or isinstance(value, bool | int | float | str)):
                text = str(value).split("\n", 1)[0]
                value = text if len(text) <= 80 else text[:79] + "…"
            record[name] = (value, str(origin))
        return record

    def model(self) -> BaseModel:
        """A typed pydantic snapshot of every value in this context."""
        from modecfg.configuration.schema import flags_model

        nested: dict[str, Any] = {}
        for spec in self._cfg_store.flags.values():
            node = nested
            for part in spec.section:
                node = node.setdefault(part, {})
            node[spec.attr] = self[spec.name]
        return flags_model().model_validate(nested)

    # -- internals -------------------------------------------------------------------

    def _spec(self, name: str) -> Flag:
        flags = self._cfg_store.flags
        if type(name) is str:  # a flag's own name, as most callers give it: one lookup
            spec = flags.get(name)
            if spec is not None:
                return spec
        elif not isinstance(name, str):
            raise TypeError(f"flag names are strings, not {type(name).__name__}")
        spec = flags.get(canonical(name))
        if spec is not None:
            return spec
        from modecfg.configuration.compat import lookup  # (a name that is not a flag's own)

        info = lookup(name, flags=flags)
        if info.flag is not None:
            return info.flag
        if info.obsolete is not None:
            raise unknown_flag(info.written, None, (), f"it is obsolete: {info.message}")
        raise unknown_flag(info.written, None, info.suggestions, info.message)


_RESERVED = {n for n in dir(Config) if not n.startswith("_")}
_ALWAYS_RECORDED = frozenset({"floatX", "mode", "linker", "optimizer"})


def build(
    loader: Callable[[FlagSet], Resolution] | Resolution,
    *,
    flags: FlagSet | None = None,
    process_wide: bool = False,
) -> Config:
    """A Config with its own classes. ``loader`` is a Resolution (made against ``flags``), or a
    callable run at first use with the flags to resolve against; ``flags`` (None: those
    declared now) are the Config's for good, unless it is ``process_wide``: the configuration
    of this process's own sources (one per process), which adopts PyTensor's at its import."""
    flags = declared() if flags is None else flags
    root_cls = type("Config", (Config,), {"__module__": Config.__module__})
    root: Config = object.__new__(root_cls)
    root.__dict__["_cfg_root"] = root
    root.__dict__["_cfg_prefix"] = ""
    store = Store(root, None if isinstance(loader, Resolution) else loader, flags, process_wide=process_wide)
    root.__dict__["_cfg_store"] = store
    for spec in flags.values():
        if not spec.section and spec.attr in _RESERVED:
            raise RuntimeError(f"flag {spec.name!r} clashes with a Config method")
        store.place(spec)
    if isinstance(loader, Resolution):
        if loader.errors:
            raise loader.errors[0] if len(loader.errors) == 1 else ConfigErrors(loader.errors)
        store.fill(loader)
        warn_notes(loader.notes)
    return root


_said_imports: set[tuple[str, str, int | None]] = set()


def _say_import_assignment(below: Any, name: str, value: Any, origin: Origin) -> None:
    """A package that, while it is imported, assigns a flag over the value the user set in the
    environment or an rc file is said once (its line, the user's source): importing a library
    should not silently change the user's configuration (pymc-marketing#1515, pymc#7520)."""
    if not below or below[-1].origin.layer not in (Layer.ENV, Layer.RC) or below[-1].value == value:
        return
    key = (name, str(origin.source), origin.line)
    if key in _said_imports:
        return
    module, importing = None, False
    frame: Any = sys._getframe(1)
    while frame is not None:
        if module is None and frame.f_code.co_filename == origin.source and frame.f_lineno == origin.line:
            module = frame.f_globals.get("__name__")
        if module is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            importing = True
            break
        frame = frame.f_back
    if not importing or module in (None, "__main__"):
        return
    _said_imports.add(key)
    from modecfg._warn import warn
    from modecfg.errors import ImportAssignmentWarning

    user = below[-1]
    warn(
        f"importing {module} set {name}={value!r} ({origin.source}:{origin.line}) over "
        f"{name}={user.value!r} that you set ({user.origin}): the package's value applies now. "
        f"To keep yours, set it again after the import (or in an override)",
        ImportAssignmentWarning,
    )
