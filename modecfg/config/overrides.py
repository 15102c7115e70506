"""Scoped overrides: values seen only by the thread or asyncio task that entered them.

An override must be seen only where it was made, so the overrides of a context are a
*frame* kept in a :class:`contextvars.ContextVar`: a dict of flag name -> (value,
origin), and the frame it was pushed on under the key ``PARENT``. A context copied
inside an override (``asyncio.create_task``, ``contextvars.copy_context().run``)
keeps the frame, and with it the override, for as long as it lives, as Python's
context variables promise.

Each entry makes a new frame and counts it in ``Store.live``; the exit takes the count
away, unless another context still holds the frame it leaves (a reference count above
its own tells): then the frame *lingers*, counted, until that context lets it go
(``Store.sweep``). The ``Overridden`` read descriptor stays on its class while any frame
holding the flag is counted, so ``config.floatX``, ``config["floatX"]``,
``config.origin()`` and ``config.overrides()`` agree in every context.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from modecfg.config.flagstring import format_flags
from modecfg.config.origin import Origin
from modecfg.config.store import Change, Store

if TYPE_CHECKING:
    from modecfg.config.protocol import ConfigLike

__all__ = ["KEYS", "OWNER", "PARENT", "Frame", "Items", "Override", "make_override", "replace"]

F = TypeVar("F", bound=Callable[..., Any])

PARENT = object()  # key of a frame's parent frame
OWNER = object()  # key of the Override whose entry made the frame (exits find their own frame by it)
KEYS = (PARENT, OWNER)  # the keys of a frame that are not flags
_getrefcount = sys.getrefcount
Items = dict[str, tuple[Any, Origin]]  # flag -> (value, where the override was written)


Frame = dict[object, Any]


def replace(store: Store, name: str, item: tuple[Any, Origin]) -> None:
    """Put a copy of this context's frame with ``name`` set to ``item`` in its place (an
    assignment inside an override); the block's exit leaves the copy.

    If another context still holds the frame (copied before the assignment), it lingers,
    counted, until that context lets it go.
    """
    frame = store.var.get()
    assert frame is not None, "replace() is called inside an override"
    new = dict(frame)
    new[name] = item
    store.var.set(new)
    # Held now by: our local, the argument; more means a context.
    # (Only now: until the set, a copied context shares this context's variables.)
    if _getrefcount(frame) > 2:
        counts = tuple(store.live[str(k)] for k in frame if k is not PARENT and k is not OWNER)
        for entries in counts:
            entries.append(None)
        store.linger(frame, counts)


class Override:
    """Scoped flag values: a context manager and a decorator (also for generators,
    coroutines and async generators, whose bodies run inside it step by step).

    An Override holds no per-use state, so one object may be entered by many threads
    and tasks at once, and ``override()`` hands out the same object for the same call
    site and values. Each entry pushes a frame that remembers its parent and its
    owner; an exit in order restores the parent. Exits may also come out of order (an
    ``ExitStack``, a fixture holding an override while a test enters another): the exit
    then takes away exactly its own values and keeps those entered since, as PyTensor's
    ``change_flags`` restores exactly what it changed.
    """

    __slots__ = (
        "_code", "_config", "_counts", "_displaced", "_items", "_names",
        "_raw", "_scoped", "_solo", "_store", "_var",
    )  # fmt: skip

    def __init__(
        self, config: ConfigLike, store: Store, items: Items, code: Any = None, raw: Any = None
    ) -> None:
        store.ready_up()  # an override is a read: the sources come first (a worker's first use)
        self._config = config
        self._store = store
        self._var = store.var
        self._items: Items = dict(items)
        self._solo: dict[object, Any] = {}
        self._solo.update(items)
        self._solo[PARENT] = None  # the frame when none is active
        self._solo[OWNER] = self
        self._names = tuple(items)
        self._counts = tuple(store.live[name] for name in items)
        self._scoped = tuple(store.scoped[name] for name in items)
        self._displaced = store.displaced
        self._code = code  # the call site and raw values, for override()'s cache
        self._raw = dict(raw) if raw is not None else None

    @property
    def values(self) -> Mapping[str, Any]:
        """The flags this override sets, by dotted name."""
        return MappingProxyType({name: value for name, (value, _) in self._items.items()})

    def __enter__(self) -> ConfigLike:
        var = self._var
        parent = var.get()
        if parent is None:
            frame = self._solo.copy()
        else:
            frame = {**parent, **self._items}  # type: ignore[dict-item]
            frame[PARENT] = parent
            frame[OWNER] = self
        for entries in self._counts:
            entries.append(None)
        displaced = self._displaced
        for name in self._names:
            if name not in displaced:
                self._store.install(name)
        var.set(frame)
        for listeners in self._scoped:
            if listeners:
                self._tell()
                break
        return self._config

    def _tell(self) -> None:
        """Tell the override listeners of the entry; one that raises refuses it: the entry is
        undone (the ``with`` body does not run) and the error raised."""
        try:
            for name, (value, origin) in self._items.items():
                for listener in tuple(self._store.scoped[name]):
                    listener(Change(name, value, origin, "override"))
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        var = self._var
        frame = var.get()
        if frame is None or frame[OWNER] is not self:
            frame = _leave_out_of_order(var, frame, self)
        else:
            var.set(frame[PARENT])
        if _getrefcount(frame) > 2:  # another context holds it (2: our local, the argument)
            self._store.linger(frame, self._counts)
        else:
            for entries in self._counts:
                entries.pop()

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

    __slots__ = ("_count", "_name", "_one_scoped")

    def __init__(
        self, config: ConfigLike, store: Store, items: Items, code: Any = None, raw: Any = None
    ) -> None:
        super().__init__(config, store, items, code, raw)
        (self._name,) = self._names
        (self._count,) = self._counts
        (self._one_scoped,) = self._scoped

    def __enter__(self) -> ConfigLike:
        var = self._var
        parent = var.get()
        if parent is None:
            frame = self._solo.copy()
        else:
            frame = {**parent, **self._items}  # type: ignore[dict-item]
            frame[PARENT] = parent
            frame[OWNER] = self
        self._count.append(None)
        if self._name not in self._displaced:
            self._store.install(self._name)
        var.set(frame)
        if self._one_scoped:
            self._tell()
        return self._config

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        # Override.__exit__ for one flag, without the loop: measured 5-8% off enter+exit here.
        var = self._var
        frame = var.get()
        if frame is None or frame[OWNER] is not self:
            frame = _leave_out_of_order(var, frame, self)
        else:
            var.set(frame[PARENT])
        if _getrefcount(frame) > 2:  # another context holds it (2: our local, the argument)
            self._store.linger(frame, self._counts)
        else:
            self._count.pop()


def _leave_out_of_order(var: Any, top: Mapping[object, Any] | None, owner: Override) -> Any:
    """Take the newest frame ``owner`` made out of this context's chain, keeping the frames
    entered after it (rebuilt on its parent, each with its own values); return it."""
    newer = []
    frame = top
    while frame is not None and frame[OWNER] is not owner:
        newer.append(frame)
        frame = frame[PARENT]
    if frame is None:
        raise RuntimeError("override exited without being entered in this context")
    rebuilt = frame[PARENT]
    for later in reversed(newer):
        own = {name: later[name] for name in later[OWNER]._names}  # assignments inside it included
        new = {**rebuilt, **own} if rebuilt is not None else own
        new[PARENT], new[OWNER] = rebuilt, later[OWNER]
        rebuilt = new
    var.set(rebuilt)
    return frame


def make_override(config: ConfigLike, store: Store, items: Items, code: Any, raw: Any) -> Override:
    kind = _SingleOverride if len(items) == 1 else Override
    return kind(config, store, items, code, raw)
