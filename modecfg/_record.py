"""Records: ``typing.NamedTuple`` to a type checker, made at run time for half its cost.

``class Origin(Record):`` with annotated fields (and defaults, methods, a docstring) is, to mypy,
the ``NamedTuple`` it would be written as (``Record`` is that name under ``TYPE_CHECKING``), and
at run time the very class ``typing.NamedTuple`` makes: ``collections.namedtuple``'s, with the
body's methods and docstring. What it leaves out is ``typing.NamedTuple``'s check of each field's
annotation, which under ``from __future__ import annotations`` compiles every one of them into a
``ForwardRef``: the 18 records read at ``import modecfg`` took 2.3 ms of its ~15 (issue 61). The
annotations are kept as written, strings, in ``__annotations__``.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

__all__ = ["Record"]

# What typing.NamedTuple (Python 3.11-3.13) does not copy from the body, and what it refuses there
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
_PROHIBITED = frozenset({
    "__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make",
    "_replace", "_asdict", "_source",
})  # fmt: skip


class _RecordMeta(type):
    """Makes each class written with ``Record`` as its base the namedtuple class of its fields."""

    def __new__(mcs, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not bases:  # Record itself
            return super().__new__(mcs, typename, bases, ns)
        if len(bases) != 1 or not isinstance(bases[0], _RecordMeta):
            raise TypeError(f"{typename}: a record derives from Record alone")
        return _namedtuple_of(typename, ns)


def _namedtuple_of(typename: str, ns: dict[str, Any]) -> Any:
    """The class ``typing.NamedTuple`` makes of the body ``ns``, without checking its annotations."""
    annotations = ns.get("__annotations__", {})
    defaults = []
    for field in annotations:
        if field in ns:
            defaults.append(ns[field])
        elif defaults:
            raise TypeError(f"{typename}: the field {field} without a default follows one with a default")
    made = collections.namedtuple(typename, list(annotations), defaults=defaults, module=ns["__module__"])  # type: ignore[misc]
    made.__annotations__ = dict(annotations)
    for key, value in ns.items():
        if key in _PROHIBITED:
            raise AttributeError(f"{typename}: a record cannot have its own {key}")
        if key not in _SPECIAL and key not in made._fields:
            setattr(made, key, value)
            set_name = getattr(type(value), "__set_name__", None)
            if set_name is not None:  # as Python 3.12's NamedTuple does (a cached_property's)
                set_name(value, made, key)
    return made


if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:

    class Record(metaclass=_RecordMeta):
        """The base a record is written with (see the module's text); no class derives from it."""
