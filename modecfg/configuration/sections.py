"""The fast reads of a Config: its sections and the descriptors on their classes.

Reads are plain instance-attribute reads: each value sits in the ``__dict__`` of its section
object (``config.traceback`` is a section, ``config.traceback.limit`` a value), and the classes
define no ``__getattr__``, so CPython specialises the read like any other attribute. Everything
that is not a stored value is a descriptor on the class:

* ``Pending`` until the sources are first read (the process-wide config is lazy);
* ``LazyDefault`` for defaults computed from other flags (``compile.timeout``);
* ``Alias`` for PyTensor's ``__`` spelling (``config.traceback__limit``);
* ``Overridden`` for a flag with a scoped override somewhere in the process. It consults the
  flag's overrides in the reading context (:mod:`modecfg.configuration.overrides`) and is removed by
  the first read after the last item holding that flag is gone: an item lives as long as some
  context (a thread, a task, a copied context) still holds it, so a task created inside an
  override that outlives the block still reads the override through every path.

Each Config has its own classes, so overrides of one Config never touch another. The store
(:mod:`modecfg.configuration.store`) puts the descriptors there and takes them away.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modecfg.configuration.protocol import ConfigLike, StoreLike

__all__ = [
    "ALIVE",
    "ORIGIN",
    "OWNER",
    "PARENT",
    "SHOWN",
    "UNSET",
    "VALUE",
    "Alias",
    "Held",
    "Item",
    "LazyDefault",
    "Overridden",
    "Pending",
    "Section",
]

# One override of one flag in one context (see modecfg.configuration.overrides): a list whose
# fields are read by these names: the value and its origin, the item beneath it (the enclosing
# override of the flag here, or None), the Override that made it (None once ended from another
# thread), the weak reference that counts it (alive), and, once pytensor.config has read it, the
# value as PyTensor shows it (SHOWN, modecfg._pytensor.view). A list, not an object with
# attributes: one is made at every entry of an override, and a list literal costs a quarter of a
# slotted object's construction (26 ns against 102 ns on 3.11; the difference is 5% of a
# change_flags statement). A block left from another thread ends its items in place (drops SHOWN).
Item = list[Any]
VALUE, ORIGIN, PARENT, OWNER, ALIVE, SHOWN = range(6)
UNSET: Any = object()  # the value of an item ended elsewhere with nothing beneath it: no override


class Held:
    """Whether some override item, in any context, holds one flag: each such item holds a weak
    reference of its own to the flag's Held (:mod:`modecfg.configuration.overrides`), so the flag is
    held while one lives. Nothing is counted by hand and no reference count is read."""

    __slots__ = ("__weakref__", "name")

    def __init__(self, name: str) -> None:
        self.name = name

    def __bool__(self) -> bool:
        # The head of the object's list of weak references: O(1), where getweakrefcount walks it.
        return self.__weakref__ is not None  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"<Held {self.name}: {weakref.getweakrefcount(self)} items>"


class _Descriptor:
    """Base of the data descriptors on Config classes.

    They define ``__set__`` only to be *data* descriptors (which win over the instance
    ``__dict__``); every assignment goes through ``Section.__setattr__`` instead.
    """

    __slots__ = ()

    def __set__(self, obj: Any, value: Any) -> None:  # pragma: no cover - __setattr__ wins
        raise AssertionError("Section.__setattr__ handles assignment")


class _FlagDescriptor(_Descriptor):
    """A descriptor for one name (a flag, or a top-level attribute) of one Config's store."""

    __slots__ = ("name", "store")

    def __init__(self, name: str, store: StoreLike) -> None:
        self.name, self.store = name, store


class Overridden(_FlagDescriptor):
    """On a section class while some live override item holds the flag, in any context."""

    __slots__ = ("var",)

    def __init__(self, name: str, store: StoreLike) -> None:
        super().__init__(name, store)
        self.var = store.var_of(name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        hit = self.var.get()
        if hit is not None:
            value = hit[VALUE]
            if value is not UNSET:
                return value
        store = self.store
        if not store.held[self.name]:
            store.uninstall(self.name)  # no item holds it any more: plain reads again
        return store.base(self.name)


class LazyDefault(_FlagDescriptor):
    """A flag whose default is computed at each read until some layer sets it."""

    __slots__ = ()

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return self.store.base(self.name)


class Alias(_Descriptor):
    """``config.traceback__limit``: PyTensor's spelling of ``config.traceback.limit``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else obj[self.name]


class Pending(_FlagDescriptor):
    """Stands for a top-level attribute until the sources have been read."""

    __slots__ = ()

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        self.store.ready_up()
        return getattr(obj, self.name)


class Section:
    """A group of flags: ``config.traceback`` holds ``limit`` and ``compile_limit``."""

    _cfg_root: ConfigLike
    _cfg_prefix: str

    if TYPE_CHECKING:
        # Flags are read as attributes. At run time there is no __getattr__ (it would slow
        # every read); this only tells type checkers that any flag name may be read.
        def __getattr__(self, attr: str) -> Any: ...

    def __setattr__(self, attr: str, value: Any) -> None:
        self._cfg_root._assign(self._cfg_prefix + attr, value, None)  # None: this line

    def __delattr__(self, attr: str) -> None:
        self._cfg_root.reset(self._cfg_prefix + attr)

    def __dir__(self) -> list[str]:
        prefix = self._cfg_prefix
        flags = self._cfg_root.flags
        names = {n[len(prefix) :].split(".")[0] for n in flags if n.startswith(prefix)}
        return sorted(names)

    def __repr__(self) -> str:
        prefix = self._cfg_prefix
        items = ", ".join(
            f"{n[len(prefix) :]}={self._cfg_root[n]!r}"
            for n in self._cfg_root.flags
            if n.startswith(prefix) and "." not in n[len(prefix) :]
        )
        return f"<config section {prefix[:-1]}: {items}>"
