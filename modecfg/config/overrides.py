"""Scoped overrides: values seen only by the thread or asyncio task that entered them.

An override must be seen only where it was made, so the overrides of a context are a
*scope* kept in a :class:`contextvars.ContextVar`: a dict of flag name -> (value,
origin), and the scope it was pushed on under the key ``PARENT``. A context copied
inside an override (``asyncio.create_task``, ``contextvars.copy_context().run``)
keeps the scope, and with it the override, for as long as it lives, as Python's
context variables promise.

Each scope holds, under the key ``ALIVE``, a weak reference of its own to the
:class:`~modecfg.config.store.Held` object of each flag it sets (``Store.holders``): a flag
is held while some weak reference to its ``Held`` lives, and these live exactly as long as
the scopes holding them. A block's exit lets its scope go; one a copied context still holds
stays counted until that context lets it go, with no sweep and no reference count read. On
any Python the project admits (free-threaded builds, 3.14's borrowed references, an
interpreter that frees late) a scope is counted at least as long as some context holds it;
one freed late only keeps its flag's reads on the slower path a little longer. The
``Overridden`` read descriptor stays on its class while any scope holds the flag, so
``config.floatX``, ``config["floatX"]``, ``config.origin()`` and ``config.overrides()``
agree in every context.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from modecfg.config.flagstring import format_flags
from modecfg.config.origin import Origin
from modecfg.config.store import Change, Held, Store

if TYPE_CHECKING:
    from modecfg.config.protocol import ConfigLike

__all__ = ["ALIVE", "KEYS", "OWNER", "PARENT", "Items", "Override", "Scope", "make_override", "replace"]

F = TypeVar("F", bound=Callable[..., Any])

PARENT = object()  # key of a scope's parent scope
OWNER = object()  # key of the Override whose entry made the scope (exits find their own scope by it)
ALIVE = object()  # key of the scope's weak references to the Held of its flags
KEYS = (PARENT, OWNER, ALIVE)  # the keys of a scope that are not flags
_ref = weakref.ref
Items = dict[str, tuple[Any, Origin]]  # flag -> (value, where the override was written)


Scope = dict[object, Any]


def _never(ref: weakref.ref[Held]) -> None:
    """The callback of a scope's weak references. It is there to make each one a new object
    (weakref.ref without a callback hands out one shared reference); a Held outlives them."""


def replace(store: Store, name: str, item: tuple[Any, Origin]) -> None:
    """Put a copy of this context's scope with ``name`` set to ``item`` in its place (an
    assignment inside an override); the block's exit leaves the copy.

    A context that still holds the scope (copied before the assignment) keeps what it saw.
    """
    scope = store.scope_var.get()
    assert scope is not None, "replace() is called inside an override"
    new = dict(scope)  # shares the scope's weak references: counted while either lives
    new[name] = item
    store.scope_var.set(new)
    _reopened(scope, new)


class Override:
    """Scoped flag values: a context manager and a decorator (also for generators,
    coroutines and async generators, whose bodies run inside it step by step).

    An Override holds no per-use state, so one object may be entered by many threads
    and tasks at once, and ``override()`` hands out the same object for the same call
    site and values. Each entry pushes a scope that remembers its parent and its
    owner; an exit in order restores the parent. Exits may also come out of order (an
    ``ExitStack``, a fixture holding an override while a test enters another): the exit
    then takes away exactly its own values and keeps those entered since, as PyTensor's
    ``change_flags`` restores exactly what it changed.
    """

    __slots__ = (
        "_alone",
        "_code",
        "_config",
        "_held",
        "_items",
        "_last",
        "_listening",
        "_names",
        "_raw",
        "_shadowed",
        "_store",
        "_var",
    )  # fmt: skip

    def __init__(
        self, config: ConfigLike, store: Store, items: Items, code: Any = None, raw: Any = None
    ) -> None:
        store.ready_up()  # an override is a read: the sources come first (a worker's first use)
        self._config = config
        self._store = store
        self._var = store.scope_var
        self._items: Items = dict(items)
        self._alone: dict[object, Any] = {}
        self._alone.update(items)
        self._alone[PARENT] = None  # the scope when none is active
        self._alone[OWNER] = self
        self._names = tuple(items)
        self._held = tuple(store.holders[name] for name in items)
        self._listening = tuple(store.override_listeners[name] for name in items)
        self._shadowed = store.shadowed
        self._code = code  # the call site and raw values, for override()'s cache
        self._raw = dict(raw) if raw is not None else None
        self._last: Any = None  # the newest scope entered and not yet left (one left elsewhere ends it)

    @property
    def values(self) -> Mapping[str, Any]:
        """The flags this override sets, by dotted name."""
        return MappingProxyType({name: value for name, (value, _) in self._items.items()})

    def __enter__(self) -> ConfigLike:
        var = self._var
        parent = var.get()
        if parent is None:
            scope = self._alone.copy()
        else:
            scope = {**parent, **self._items}  # type: ignore[dict-item]
            scope[PARENT] = parent
            scope[OWNER] = self
        scope[ALIVE] = tuple([_ref(held, _never) for held in self._held])  # before shadowed is read
        shadowed = self._shadowed
        for name in self._names:
            if name not in shadowed:
                self._store.install(name)
        self._last = scope
        var.set(scope)
        for listeners in self._listening:
            if listeners:
                self._tell()
                break
        return self._config

    def _tell(self) -> None:
        """Tell the override listeners of the entry; one that raises refuses it: the entry is
        undone (the ``with`` body does not run) and the error raised."""
        try:
            for name, (value, origin) in self._items.items():
                for listener in tuple(self._store.override_listeners[name]):
                    listener(Change(name, value, origin, "override"))
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        var = self._var
        scope = var.get()
        if scope is None or scope[OWNER] is not self:
            scope = _leave_out_of_order(var, scope, self)
            if scope is None:  # entered in another thread or task: ended there, as PyTensor would
                return
        else:
            var.set(scope[PARENT])
        if self._last is scope:
            self._last = None
        # the scope's flags stay held while it lives: a copied context may keep it

    def __call__(self, func: F) -> F:
        import inspect

        if inspect.isasyncgenfunction(func):

            @functools.wraps(func)
            async def async_gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                agen = func(*args, **kwargs)
                step: Any = agen.asend
                arg: Any = None
                while True:  # the body runs, step by step, inside the override
                    with self:
                        try:
                            item = await step(arg)
                        except StopAsyncIteration:
                            return
                    try:
                        arg = yield item
                        step = agen.asend
                    except GeneratorExit:  # aclose(): the body's finally runs inside the override
                        with self:
                            await agen.aclose()
                        raise
                    except BaseException as exc:  # athrow(): into the body
                        step, arg = agen.athrow, exc

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
        return f"<override {format_flags((k, v) for k, (v, _) in self._items.items())}>"


class _SingleOverride(Override):
    """An Override of one flag, the common case, with a shorter enter and exit."""

    __slots__ = ("_name", "_one_held", "_one_listening")

    def __init__(
        self, config: ConfigLike, store: Store, items: Items, code: Any = None, raw: Any = None
    ) -> None:
        super().__init__(config, store, items, code, raw)
        (self._name,) = self._names
        (self._one_held,) = self._held
        (self._one_listening,) = self._listening

    def __enter__(self) -> ConfigLike:
        var = self._var
        parent = var.get()
        if parent is None:
            scope = self._alone.copy()
        else:
            scope = {**parent, **self._items}  # type: ignore[dict-item]
            scope[PARENT] = parent
            scope[OWNER] = self
        scope[ALIVE] = _ref(self._one_held, _never)  # before shadowed is read
        if self._name not in self._shadowed:
            self._store.install(self._name)
        self._last = scope
        var.set(scope)
        if self._one_listening:
            self._tell()
        return self._config

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        # Override.__exit__ for one flag, without the loop: measured 5-8% off enter+exit here.
        var = self._var
        scope = var.get()
        if scope is None or scope[OWNER] is not self:
            scope = _leave_out_of_order(var, scope, self)
            if scope is None:  # entered in another thread or task: ended there, as PyTensor would
                return
        else:
            var.set(scope[PARENT])
        if self._last is scope:
            self._last = None


def _leave_out_of_order(var: Any, top: Mapping[object, Any] | None, owner: Override) -> Any:
    """Take the newest scope ``owner`` made out of this context's chain, keeping the scopes
    entered after it (rebuilt on its parent, each with its own values); return it."""
    newer = []
    scope = top
    while scope is not None and scope[OWNER] is not owner:
        newer.append(scope)
        scope = scope[PARENT]
    if scope is None:
        return _end_elsewhere(owner)
    rebuilt = scope[PARENT]
    for later in reversed(newer):
        if later[OWNER] is None:  # ended from another thread (_end_elsewhere): nothing of its own
            continue
        own = {name: later[name] for name in later[OWNER]._names}  # assignments inside it included
        new = {**rebuilt, **own} if rebuilt is not None else own
        new[PARENT], new[OWNER], new[ALIVE] = rebuilt, later[OWNER], later[ALIVE]  # held while either lives
        _reopened(later, new)
        rebuilt = new
    var.set(rebuilt)
    return scope


def _reopened(old: Mapping[object, Any], new: Mapping[object, Any]) -> None:
    """``new`` takes the place of the open scope ``old`` (an assignment inside it, a scope left
    out of order beneath it): its owner keeps the one in force."""
    owner = old[OWNER]
    if owner is not None and owner._last is old:
        owner._last = new


def _end_elsewhere(owner: Override) -> None:
    """``owner`` is left in a context that never entered it (a block entered in one thread and
    left in another, as PyTensor's change_flags allows): the scope it made where it was
    entered is ended there, as PyTensor restores its values wherever the block is left. That
    scope, still the entering context's, stops answering for the flags it set; reads there
    see what was in force before it (the newest entry of the override: one object entered
    in several threads at once and left across them ends its newest). An override open
    nowhere is an error."""
    scope = owner._last
    if scope is None:
        raise RuntimeError("override exited without being entered in this context, nor open in another")
    owner._last = None
    parent = scope[PARENT]
    for name in owner._names:
        hit = parent.get(name) if parent is not None else None
        if hit is None:
            scope.pop(name, None)
        else:
            scope[name] = hit
    scope[OWNER] = None  # ended: a block around it left later rebuilds its chain without it
    # (its flags stay held, by its weak references, until the entering context lets it go)


def make_override(config: ConfigLike, store: Store, items: Items, code: Any, raw: Any) -> Override:
    kind = _SingleOverride if len(items) == 1 else Override
    return kind(config, store, items, code, raw)
