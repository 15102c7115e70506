"""Scoped overrides: values seen only by the thread or asyncio task that entered them.

An override must be seen only where it was made, so each flag has a
:class:`contextvars.ContextVar` of its own (``Store.var_of``) holding, in each context, the
innermost override of that flag there: an *item* ``[value, origin, parent, owner, alive]``
(a list whose fields are read by name: ``item[PARENT]``, :mod:`~modecfg.configuration.sections`),
whose parent is the item it was pushed on (the enclosing override of the same flag) and whose
owner is the :class:`Override` that entered it. A context copied inside an override
(``asyncio.create_task``, ``contextvars.copy_context().run``) keeps the item, and with it the
override, for as long as it lives, as Python's context variables promise. One variable per
flag keeps an entry to one ``set`` per flag, whatever else is overridden around it.

Each item holds, as ``alive``, a weak reference of its own to the
:class:`~modecfg.configuration.sections.Held` object of its flag (``Store.held``): a flag is held
while some weak reference to its ``Held`` lives, and these live exactly as long as the items
holding them. A block's exit lets its item go; one a copied context still holds stays counted
until that context lets it go, with no sweep and no reference count read. On any Python the
project admits (free-threaded builds, 3.14's borrowed references, an interpreter that frees
late) an item is counted at least as long as some context holds it; one freed late only keeps
its flag's reads on the slower path a little longer. The ``Overridden`` read descriptor stays
on its class while any item holds the flag, so ``config.floatX``, ``config["floatX"]``,
``config.origin()`` and ``config.overrides()`` agree in every context.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from modecfg.configuration.origin import Origin
from modecfg.configuration.sections import ALIVE, ORIGIN, OWNER, PARENT, SHOWN, UNSET, VALUE, Held, Item
from modecfg.configuration.store import Change, Store

if TYPE_CHECKING:
    from modecfg.configuration.protocol import ConfigLike

__all__ = ["Items", "Override", "make_override", "replace"]

F = TypeVar("F", bound=Callable[..., Any])

_ref = weakref.ref
Items = dict[str, tuple[Any, Origin]]  # flag -> (value, where the override was written)


def _never(ref: weakref.ref[Held]) -> None:
    """The callback of an item's weak reference. It is there to make each one a new object
    (weakref.ref without a callback hands out one shared reference); a Held outlives them."""


def replace(store: Store, name: str, item: tuple[Any, Origin]) -> None:
    """Put a copy of this context's override of ``name`` with ``item`` as its value in its place
    (an assignment inside an override); the block's exit leaves the copy.

    A context that still holds the old one (copied before the assignment) keeps what it saw.
    """
    var = store.var_of(name)
    top = var.get()
    assert top is not None, "replace() is called inside an override"
    # shares the weak reference: counted while either lives
    new = [item[0], item[1], top[PARENT], top[OWNER], top[ALIVE]]
    var.set(new)
    _reopened(top, new)


class Override:
    """Scoped flag values: a context manager and a decorator (also for generators,
    coroutines and async generators, whose bodies run inside it step by step).

    An Override holds no per-use state, so one object may be entered by many threads
    and tasks at once, and ``override()`` hands out the same object for the same call
    site and values. Each entry pushes, on the variable of each of its flags, an item that
    remembers its parent and its owner; an exit in order restores the parents. Exits may also
    come out of order (an ``ExitStack``, a fixture holding an override while a test enters
    another): the exit then takes away exactly its own values and keeps those entered since,
    as PyTensor's ``change_flags`` restores exactly what it changed.
    """

    __slots__ = (
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
        "_vars",
    )  # fmt: skip

    def __init__(
        self, config: ConfigLike, store: Store, items: Items, code: Any = None, raw: Any = None
    ) -> None:
        if not store.ready:  # an override is a read: the sources come first (a worker's first use)
            store.ready_up()
        self._config = config
        self._store = store
        self._items: Items = dict(items)
        self._names = tuple(items)
        found = store.vars
        variables, held, listening = [], [], []  # loops, not generators: an override is made often
        for name in items:
            variables.append(found.get(name) or store.var_of(name))
            held.append(store.held[name])
            listening.append(store.override_listeners.setdefault(name, []))  # (later subscribers too)
        self._vars = tuple(variables)
        self._held = tuple(held)
        self._listening = tuple(listening)
        self._shadowed = store.shadowed
        self._code = code  # the call site and raw values, for override()'s cache
        self._raw = dict(raw) if raw is not None else None
        # The items of the newest entry not yet left, one per flag (an exit elsewhere ends them).
        self._last: Any = None

    @property
    def values(self) -> Mapping[str, Any]:
        """The flags this override sets, by dotted name."""
        return MappingProxyType({name: value for name, (value, _) in self._items.items()})

    def _made(self) -> list[Item] | None:
        """The items of the newest entry not yet left, one per flag, in the order of the names."""
        last: list[Item] | None = self._last
        return last

    def entered_here(self) -> bool:
        """Whether its newest entry not yet left is in force in this thread or task."""
        made = self._made()
        if not made:
            return False
        first, item = made[0], self._vars[0].get()
        while item is not None and item is not first:
            item = item[PARENT]
        return item is not None

    def __enter__(self) -> ConfigLike:
        made = [  # items: VALUE, ORIGIN, PARENT, OWNER, ALIVE (sections.py)
            [value, origin, var.get(), self, _ref(held, _never)]  # counted before shadowed is read
            for var, (value, origin), held in zip(self._vars, self._items.values(), self._held, strict=True)
        ]
        shadowed = self._shadowed
        for name in self._names:
            if name not in shadowed:
                self._store.install(name)
        self._last = made
        for var, item in zip(self._vars, made, strict=True):
            var.set(item)
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
                for listener in tuple(self._store.override_listeners.get(name, ())):
                    listener(Change(name, value, origin, "override"))
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        tops = [var.get() for var in self._vars]
        if all(top is not None and top[OWNER] is self for top in tops):
            for var, top in zip(self._vars, tops, strict=True):
                var.set(top[PARENT])  # type: ignore[index]
            first = tops[0] if tops else None  # an override of no flag sets nothing
        else:
            left = _leave_out_of_order(self)
            if left is None:  # entered in another thread or task: ended there, as PyTensor would
                return
            first = left
        last = self._last
        if last is not None and (not last or last[0] is first):
            self._last = None
        # the items stay counted while they live: a copied context may keep them

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
        from modecfg.configuration.flagstring import format_flags

        return f"<override {format_flags((k, v) for k, (v, _) in self._items.items())}>"


class SingleOverride(Override):
    """An Override of one flag, the common case, with a shorter enter and exit: ``_last`` is the
    item itself."""

    __slots__ = ("_alive", "_name", "_one_held", "_one_listening", "_origin", "_value", "_var")

    def __init__(
        self, config: ConfigLike, store: Store, items: Items, code: Any = None, raw: Any = None
    ) -> None:
        super().__init__(config, store, items, code, raw)
        (self._name,) = self._names
        (self._var,) = self._vars
        ((self._value, self._origin),) = self._items.values()
        (self._one_held,) = self._held
        (self._one_listening,) = self._listening
        # an entry's weak reference to the flag's Held, made without a Python call
        self._alive = functools.partial(_ref, self._one_held, _never)

    def _made(self) -> list[Item] | None:
        return None if self._last is None else [self._last]

    def __enter__(self) -> ConfigLike:
        var = self._var
        self._last = item = [self._value, self._origin, var.get(), self, self._alive()]  # VALUE...ALIVE
        if self._name not in self._shadowed:  # read after the item's weak reference is made
            self._store.install(self._name)
        var.set(item)
        if self._one_listening:
            self._tell()
        return self._config

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        var = self._var
        top = var.get()
        if top is None or top[OWNER] is not self:
            top = _leave_out_of_order(self)
            if top is None:  # entered in another thread or task: ended there, as PyTensor would
                return
        else:
            var.set(top[PARENT])
        if self._last is top:
            self._last = None


def _leave_out_of_order(owner: Override) -> Item | None:
    """Take the newest entry of ``owner`` out of this context's overrides, keeping those entered
    after it (each rebuilt on what was beneath it); return its first item, or None when it was
    not entered here (then it is ended where it was entered)."""
    first: Item | None = None
    for var in owner._vars:
        newer = []
        item = var.get()
        while item is not None and item[OWNER] is not owner:
            newer.append(item)
            item = item[PARENT]
        if item is None:
            if first is None:  # not entered in this context
                _end_elsewhere(owner)
                return None
            continue  # pragma: no cover - an entry sets every flag of its owner
        rebuilt = item[PARENT]
        for later in reversed(newer):
            if later[OWNER] is None:  # ended from another thread (_end_elsewhere): nothing of its own
                continue
            # counted while either lives
            new = [later[VALUE], later[ORIGIN], rebuilt, later[OWNER], later[ALIVE]]
            _reopened(later, new)
            rebuilt = new
        var.set(rebuilt)
        if first is None:
            first = item
    return first


def _reopened(old: Item, new: Item) -> None:
    """``new`` takes the place of the open item ``old`` (an assignment inside it, an item left
    out of order beneath it): its owner keeps the one in force."""
    owner: Override | None = old[OWNER]
    if owner is None:
        return
    if isinstance(owner, SingleOverride):
        if owner._last is old:
            owner._last = new
        return
    last = owner._last
    for i, item in enumerate(last or ()):
        if item is old:
            last[i] = new


def _end_elsewhere(owner: Override) -> None:
    """``owner`` is left in a context that never entered it (a block entered in one thread and
    left in another, as PyTensor's change_flags allows): the items it made where it was
    entered are ended there, as PyTensor restores its values wherever the block is left. Those
    items, still the entering context's, stop answering for their flags; reads there see what
    was in force before them (the newest entry of the override: one object entered in several
    threads at once and left across them ends its newest). An override open nowhere is an error."""
    made = owner._made()
    if made is None:
        raise RuntimeError("override exited without being entered in this context, nor open in another")
    owner._last = None
    for item in made:
        parent = item[PARENT]
        item[VALUE], item[ORIGIN] = (UNSET, None) if parent is None else (parent[VALUE], parent[ORIGIN])
        item[OWNER] = None  # ended: a block around it left later rebuilds its chain without it
        del item[SHOWN:]  # what pytensor.config showed for the value it had
    # (its flags stay held, by their weak references, until the entering context lets them go)


def make_override(config: ConfigLike, store: Store, items: Items, code: Any, raw: Any) -> Override:
    kind = SingleOverride if len(items) == 1 else Override
    return kind(config, store, items, code, raw)
