"""The store of one Config: its values below the overrides, and change notification.

Values sit in the ``__dict__`` of the Config's section objects, read as plain attributes;
the descriptors that stand in for the rest (:mod:`modecfg.configuration.sections`) are put on the
section classes here and taken away again. Each Config has its own store and classes.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from modecfg._locks import Lock, RLock, fork_safe
from modecfg._record import Record
from modecfg.configuration.flags import Flag, FlagSet, Lazy
from modecfg.configuration.origin import Layer, Origin, Setting
from modecfg.configuration.resolve import Candidate, Note, Resolution
from modecfg.configuration.sections import (
    ORIGIN,
    UNSET,
    VALUE,
    Alias,
    Held,
    Item,
    LazyDefault,
    Overridden,
    Pending,
    Section,
)
from modecfg.errors import ConfigErrors, ObsoleteFlagWarning

if TYPE_CHECKING:
    from modecfg.configuration.protocol import ConfigLike

__all__ = ["Change", "Store", "process_wide", "warn_notes"]

_MISSING = object()


class Change(Record):
    """What a subscriber of :meth:`Config.subscribe` is told.

    ``kind`` is ``"loaded"`` (the sources were read and set the flag), ``"assigned"``,
    ``"reset"`` (an assignment dropped: ``value`` is what decides now), or ``"override"``
    (an override was entered in one thread or task: ``value`` holds there only).
    """

    name: str
    value: Any
    origin: Origin
    kind: Literal["loaded", "assigned", "reset", "override"]


Listener = Callable[[Change], None]
Guard = Callable[[Flag, Any], None]


class _Helds(dict[str, Held]):
    """flag -> its :class:`Held`, made when first asked for (an override's first entry, a view's
    first look): one object a flag, whichever thread asks first (``setdefault``)."""

    def __missing__(self, name: str) -> Held:
        return self.setdefault(name, Held(name))


def _own_class(section: Section) -> type:
    """The class of ``section``, its own: the sections of a configuration share the class
    ``Section`` until a descriptor must go on theirs (a lazy default when placed, an override
    when entered, under the store's lock), when each gets a subclass of its own (a class costs
    ``import modecfg`` ~0.1 ms, and most sections are never overridden)."""
    cls = type(section)
    if cls is Section:
        cls = type("Section", (Section,), {"__module__": Section.__module__})
        object.__setattr__(section, "__class__", cls)  # (Section's __setattr__ assigns flags)
    return cls


class Store:
    """The values of one Config below its overrides, and who wants to hear of changes."""

    def __init__(
        self,
        root: Section,
        loader: Callable[[FlagSet], Resolution] | None,
        flags: FlagSet,
        *,
        process_wide: bool = False,
    ) -> None:
        self.root: ConfigLike = root  # a Config: the facade over this store
        self.flags = flags
        self.loader = loader
        self.ready = loader is None
        self.lock = fork_safe(self, "lock", RLock)  # sources, assignment
        self.counting = fork_safe(self, "counting", Lock)  # the Overridden descriptors
        # flag -> its overrides in each context (see modecfg.configuration.overrides), made at its first
        self.vars: dict[str, contextvars.ContextVar[Item | None]] = {}
        self.sections: dict[tuple[str, ...], Section] = {}
        self.candidates: dict[str, list[Candidate]] = {}
        self.notes: list[Note] = []
        self.read: list[str] = []
        # flag -> whether a live override item holds it, in any context (true while one does)
        self.held: dict[str, Held] = _Helds()  # flag -> its Held, made at the first ask
        # flag -> what its class held before an Overridden went in (None: nothing)
        self.shadowed: dict[str, object] = {}
        # called under ``counting`` with a flag's name and True when an override begins to hold it,
        # False when no override holds it any more (the pytensor.config view closes, and may open
        # again, its fast read of the flag: modecfg._pytensor.view)
        self.shadow_listeners: list[Callable[[str, bool], None]] = []
        # flag -> subscribers; ``override_listeners`` hear of overrides being entered as well (a
        # flag's list made at its first subscriber, or, of the second, at its first override)
        self.listeners: dict[str, list[Listener]] = {}
        self.override_listeners: dict[str, list[Listener]] = {}
        self.guards: list[Guard] = []  # asked before an assignment of a flag fixed per process
        # an override() call site (code id ^ instruction offset) -> the Override it made
        self.site_cache: dict[int, Any] = {}
        # settings naming flags of PyTensor's that modecfg does not declare: handed to PyTensor
        self.for_pytensor: list[Setting] = []
        self.sections[()] = root
        if process_wide:
            if _PROCESS_WIDE:
                raise RuntimeError("a process has one process-wide configuration")
            _PROCESS_WIDE.append(self)

    def var_of(self, name: str) -> contextvars.ContextVar[Item | None]:
        """The context variable holding the overrides of ``name``, made at the first ask."""
        var = self.vars.get(name)
        if var is None:  # setdefault: two threads asking at once get the same one
            var = self.vars.setdefault(name, contextvars.ContextVar(f"modecfg:{name}", default=None))
        return var

    def override_of(self, name: str) -> Item | None:
        """The override of ``name`` in the reading thread or task, if any: an item whose first two
        entries are its value and origin; the one way the facade reads the overrides."""
        var = self.vars.get(name)
        found = var.get() if var is not None else None
        if found is None or found[VALUE] is UNSET:
            return None
        return found

    def value(self, name: str) -> Any:
        """The value of ``name`` in the reading thread or task: its override, else :meth:`base`."""
        found = self.override_of(name)
        return found[VALUE] if found is not None else self.base(name)

    def overridden(self) -> dict[str, tuple[Any, Origin]]:
        """Every override in the reading thread or task, by flag: (value, origin)."""
        found = {}
        for name, var in tuple(self.vars.items()):  # the flags some Override was made for
            item = var.get()
            if item is not None and item[VALUE] is not UNSET:
                found[name] = (item[VALUE], item[ORIGIN])
        return found

    # -- flags -----------------------------------------------------------------------

    def place(self, spec: Flag) -> None:
        """Give ``spec`` its section object and class descriptors (values come with fill)."""
        root = self.root
        parent = top_ns = self.sections[()]
        for depth in range(1, len(spec.section) + 1):
            key = spec.section[:depth]
            if key not in self.sections:  # (a class of its own when a descriptor must go on it)
                ns: Section = object.__new__(Section)
                ns.__dict__["_cfg_root"] = root
                ns.__dict__["_cfg_prefix"] = ".".join(key) + "."
                self.sections[key] = ns
                parent.__dict__[key[-1]] = ns
            parent = self.sections[key]
        if spec.is_lazy:
            setattr(_own_class(parent), spec.attr, LazyDefault(spec.name, self))
        cls = type(top_ns)
        if spec.section:
            setattr(cls, spec.pytensor_name, Alias(spec.name))
        if not self.ready:
            top = spec.section[0] if spec.section else spec.attr
            if top not in cls.__dict__:  # (a section's second flag finds its Pending there)
                setattr(cls, top, Pending(top, self))

    # -- values ----------------------------------------------------------------------

    def base(self, name: str) -> Any:
        """The value below the overrides: assigned, from a source, or the default."""
        spec = self.flags[name]
        try:
            return self.sections[spec.section].__dict__[spec.attr]
        except KeyError:
            assert isinstance(spec.default, Lazy), name
            if not self.ready:  # the first read of the process: the sources may set it
                self.ready_up()
                found = self.sections[spec.section].__dict__.get(spec.attr, _MISSING)
                if found is not _MISSING:
                    return found
            return spec.default.compute(self.root)

    def ready_up(self) -> None:
        """Read the sources if that has not happened yet (the process-wide config is lazy)."""
        if self.ready:
            return
        with self.lock:
            if self.ready:
                return
            assert self.loader is not None
            res = self.loader(self.flags)
            if res.errors:  # the user's mistake: its traceback starts here, not inside the parser
                error = res.errors[0] if len(res.errors) == 1 else ConfigErrors(res.errors)
                raise error.with_traceback(None) from None
            self.fill(res)
            cls = type(self.root)
            for attr, value in list(vars(cls).items()):
                if isinstance(value, Pending):
                    delattr(cls, attr)
            self.ready = True
        warn_notes(res.notes)
        for name, found in self.candidates.items():
            if found:
                self.notify(Change(name, found[-1].value, found[-1].origin, "loaded"))

    def fill(self, res: Resolution) -> None:
        self.candidates = {k: list(v) for k, v in res.candidates.items()}
        self.notes = list(res.notes)
        self.read = list(res.read)
        self.for_pytensor = list(res.for_pytensor)
        for spec in self.flags.values():
            ns = self.sections[spec.section]
            found = self.candidates.get(spec.name)
            if found:
                ns.__dict__[spec.attr] = found[-1].value
            elif not spec.is_lazy:
                ns.__dict__[spec.attr] = spec.default

    def assign(self, spec: Flag, typed: Any, raw: Any, origin: Origin) -> None:
        """Store an assignment and tell the listeners, under the lock: two threads assigning
        at once are heard in the order they were stored. A listener that raises refuses
        the assignment: it is undone, those that heard it are told (``"reset"``), and the
        error is raised. One assignment per flag is kept (the latest): a loop that assigns
        a million times keeps one."""
        if spec.fixed:
            for guard in self.guards:
                guard(spec, typed)
        with self.lock:
            ns = self.sections[spec.section].__dict__
            before = ns.get(spec.attr, _MISSING)
            kept = self.candidates.get(spec.name, [])
            now = []
            for candidate in kept:  # one assignment per flag is kept: the latest
                if candidate.origin.layer is not Layer.ASSIGNMENT:
                    now.append(candidate)
            now.append(Candidate(typed, raw, origin))
            self.candidates[spec.name] = now
            ns[spec.attr] = typed
            try:
                self.notify(Change(spec.name, typed, origin, "assigned"))
            except BaseException as exc:
                self.candidates[spec.name] = kept
                if before is _MISSING:
                    ns.pop(spec.attr, None)
                else:
                    ns[spec.attr] = before
                was = kept[-1].origin if kept else Origin(Layer.DEFAULT)
                undone = Change(spec.name, self.base(spec.name), was, "reset")
                self.notify(undone, until=getattr(exc, "_modecfg_listener", None))
                raise

    def reset(self, spec: Flag) -> None:
        """Drop the assignment of a flag. One fixed per process is asked first, as an assignment
        is (``guards``): the value below it may not be the one PyTensor already uses."""
        if spec.fixed:
            for guard in self.guards:
                guard(spec, self._unassigned(spec))
        with self.lock:
            kept = [c for c in self.candidates.get(spec.name, ()) if c.origin.layer is not Layer.ASSIGNMENT]
            self.candidates[spec.name] = kept
            ns = self.sections[spec.section]
            if kept:
                ns.__dict__[spec.attr] = kept[-1].value
            elif spec.is_lazy:
                ns.__dict__.pop(spec.attr, None)
            else:
                ns.__dict__[spec.attr] = spec.default
            origin = kept[-1].origin if kept else Origin(Layer.DEFAULT)
            self.notify(Change(spec.name, self.base(spec.name), origin, "reset"))

    def _unassigned(self, spec: Flag) -> Any:
        """The value of ``spec`` were its assignment dropped: a source's, or the default."""
        for candidate in reversed(self.candidates.get(spec.name, ())):
            if candidate.origin.layer is not Layer.ASSIGNMENT:
                return candidate.value
        return spec.default.compute(self.root) if isinstance(spec.default, Lazy) else spec.default

    # -- change notification -----------------------------------------------------------

    def subscribe(
        self, listener: Listener, names: Iterable[str] | None, overrides: bool
    ) -> Callable[[], None]:
        """``names`` None: every flag."""
        names = self.flags if names is None else names
        lists = [self.listeners.setdefault(n, []) for n in names]
        if overrides:
            lists += [self.override_listeners.setdefault(n, []) for n in names]
        for found in lists:
            found.append(listener)

        def unsubscribe() -> None:
            for found in lists:
                if listener in found:
                    found.remove(listener)

        return unsubscribe

    def notify(self, change: Change, until: Listener | None = None) -> None:
        """Tell the listeners of ``change.name`` in the order they subscribed (only those
        before ``until``, when given). One that raises stops the telling; the error says
        which listener it was (``_modecfg_listener``) so that an undo reaches those that heard."""
        for listener in tuple(self.listeners.get(change.name, ())):
            if listener is until:
                return
            try:
                listener(change)
            except BaseException as exc:
                if until is None:
                    exc._modecfg_listener = listener  # type: ignore[attr-defined]
                    raise
                _log_listener_error(listener, change, exc)  # an undo is told to everyone who heard

    # -- the Overridden descriptors -----------------------------------------------------

    def install(self, name: str) -> None:
        """Put an Overridden for ``name`` on its section class, unless one is there."""
        with self.counting:
            if name in self.shadowed:
                return
            spec = self.flags[name]
            cls = _own_class(self.sections[spec.section])  # (under the lock: made once)
            previous = cls.__dict__.get(spec.attr)
            # Descriptor first, record second: entering reads ``shadowed`` unlocked.
            setattr(cls, spec.attr, Overridden(name, self))
            for told in self.shadow_listeners:  # other readers' fast paths of the flag close
                told(name, True)
            self.shadowed[name] = previous

    def uninstall(self, name: str) -> None:
        """Take the Overridden of ``name`` away again if no live item holds it.

        An item made meanwhile either sees the descriptor gone (and installs it) or is
        seen by the re-check at the end: ``held`` is appended to before ``shadowed`` is
        looked at, ``shadowed`` is emptied before the descriptor goes and filled after
        it comes.
        """
        with self.counting:
            if self.held[name] or name not in self.shadowed:
                return
            spec = self.flags[name]
            cls = type(self.sections[spec.section])
            previous = self.shadowed.pop(name)
            if previous is None:
                delattr(cls, spec.attr)
            else:
                setattr(cls, spec.attr, previous)
            if self.held[name]:
                setattr(cls, spec.attr, Overridden(name, self))
                self.shadowed[name] = previous
                return
            for told in self.shadow_listeners:  # no override holds it: they may open again
                told(name, False)


_PROCESS_WIDE: list[Store] = []  # the store of the configuration read from this process's sources


def process_wide() -> ConfigLike:
    """The process-wide configuration (``modecfg.config``): what a snapshot applies itself to
    by default in the process it travelled to."""
    return _PROCESS_WIDE[0].root


def _log_listener_error(listener: Listener, change: Change, exc: BaseException) -> None:
    import logging

    logging.getLogger("modecfg.config").error(
        "listener %r failed on %s of %s (%s: %s)", listener, change.kind, change.name, type(exc).__name__, exc
    )


_NOTES_SAID = 20  # obsolete flags warned about one by one; the rest in one warning


def warn_notes(notes: Sequence[Note]) -> None:
    """One ObsoleteFlagWarning per obsolete flag, however many sources set it; past the first 20
    flags, one more for all the others (an rc file of 50,000 such names gave 10 MB of warnings)."""
    if not notes:
        return
    from modecfg._warn import warn

    seen: set[str] = set()
    rest: list[Note] = []
    for note in notes:
        if note.flag in seen:
            continue
        seen.add(note.flag)
        if len(seen) > _NOTES_SAID:
            rest.append(note)
            continue
        warn(str(note), ObsoleteFlagWarning)
    if rest:
        named = ", ".join(note.flag for note in rest[:5])
        warn(
            f"and {len(rest)} more obsolete flags ({named}{', ...' if len(rest) > 5 else ''}), each "
            "ignored as the ones above; `modecfg validate` lists them all",
            ObsoleteFlagWarning,
        )
