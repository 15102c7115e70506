"""Records: ``typing.NamedTuple`` to a type checker, made at run time for a quarter of its cost.

``class Origin(Record):`` with annotated fields (and defaults, methods, a docstring) is, to mypy,
the ``NamedTuple`` it would be written as (``Record`` is that name under ``TYPE_CHECKING``), and
at run time a class that behaves as the one ``typing.NamedTuple`` makes, held to it side by side
by ``tests/test_record.py``: a ``tuple`` subclass with the same fields, defaults, constructor
signature, ``_make``, ``_replace``, ``_asdict``, ``repr``, pickling and ``__match_args__``.

What it leaves out is the cost. ``typing.NamedTuple`` checks each field's annotation (under
``from __future__ import annotations`` it compiles every one into a ``ForwardRef``), and
``collections.namedtuple`` compiles a ``__new__`` from source for every class (``eval``): 38 us
a class here, 18 classes at ``import modecfg``. A record's ``__new__`` is instead one of the
constructors written below, one for each number of fields, with its parameters renamed to the
fields (``CodeType.replace``: nothing is compiled); the other methods are shared by all records.
The annotations are kept as written, strings, in ``__annotations__``.
"""

from __future__ import annotations

import collections
import keyword
import sys
import types
from typing import TYPE_CHECKING, Any

__all__ = ["Record"]

# What typing.NamedTuple (Python 3.11-3.13) does not copy from the body, and what it refuses there
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
_PROHIBITED = frozenset({
    "__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make",
    "_replace", "_asdict", "_source",
})  # fmt: skip

_tuple_new = tuple.__new__
_UNEXPECTED = TypeError if sys.version_info >= (3, 13) else ValueError  # what _replace raises, as namedtuple
_getter: Any = collections._tuplegetter  # type: ignore[attr-defined]  # namedtuple's field descriptor


class _RecordMeta(type):
    """Makes each class written with ``Record`` as its base the record class of its fields."""

    def __new__(mcs, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not bases:  # Record itself
            return super().__new__(mcs, typename, bases, ns)
        if len(bases) != 1 or not isinstance(bases[0], _RecordMeta):
            raise TypeError(f"{typename}: a record derives from Record alone")
        return _record_of(typename, ns)


def _record_of(typename: str, ns: dict[str, Any]) -> Any:
    """The class ``typing.NamedTuple`` makes of the body ``ns``, without checking its annotations."""
    annotations = ns.get("__annotations__", {})
    fields = tuple(annotations)
    defaults = []
    for field in fields:
        if field in ns:
            defaults.append(ns[field])
        elif defaults:
            raise TypeError(f"{typename}: the field {field} without a default follows one with a default")
    made = _made(typename, fields, defaults, ns["__module__"])
    made.__annotations__ = dict(annotations)
    for key, value in ns.items():
        if key in _PROHIBITED:
            raise AttributeError(f"{typename}: a record cannot have its own {key}")
        if key not in _SPECIAL and key not in fields:
            setattr(made, key, value)
            set_name = _set_name(value)
            if set_name is not None:  # as Python 3.12's NamedTuple does (a cached_property's)
                set_name(made, key)
    return made


def _set_name(value: Any) -> Any:
    """``value``'s ``__set_name__`` bound to it, or None: looked up in its class's dictionaries, as
    the interpreter looks up a special method (``getattr`` on a class that has none, a function's,
    would write an AttributeError's message to drop it)."""
    kind = type(value)
    for klass in kind.__mro__:
        if "__set_name__" in klass.__dict__:
            raw = klass.__dict__["__set_name__"]
            bind = getattr(type(raw), "__get__", None)
            return raw if bind is None else bind(raw, value, kind)
    return None


def _made(typename: str, fields: tuple[str, ...], defaults: list[Any], module: str) -> Any:
    """``collections.namedtuple(typename, fields, defaults=defaults, module=module)``, but for
    ``__new__``, which is not compiled (see the module's text)."""
    if len(fields) >= len(_CONSTRUCTORS):  # more fields than constructors written: namedtuple's
        return collections.namedtuple(typename, fields, defaults=defaults, module=module)
    for name in (typename, *fields):  # namedtuple's checks, in its words
        if not name.isidentifier():
            raise ValueError(f"Type names and field names must be valid identifiers: {name!r}")
        if keyword.iskeyword(name):
            raise ValueError(f"Type names and field names cannot be a keyword: {name!r}")
    for name in fields:
        if name.startswith("_"):
            raise ValueError(f"Field names cannot start with an underscore: {name!r}")
    template = _CONSTRUCTORS[len(fields)]
    qualname = f"{typename}.__new__"
    code = template.replace(co_varnames=("_cls", *fields), co_name="__new__", co_qualname=qualname)
    new = types.FunctionType(code, globals(), argdefs=tuple(defaults))  # (): none, as NamedTuple has it
    arguments = ", ".join(fields) + ("," if len(fields) == 1 else "")  # as namedtuple writes it
    new.__doc__ = f"Create new instance of {typename}({arguments})"
    body: dict[str, Any] = {
        "__doc__": f"{typename}({arguments})",
        "__slots__": (),
        "_fields": fields,
        "_field_defaults": dict(zip(fields[len(fields) - len(defaults) :], defaults, strict=True)),
        "__new__": new,
        "_make": _MAKE,
        "_replace": _replace,
        **_REPLACE,
        "__repr__": _repr,
        "_asdict": _asdict,
        "__getnewargs__": _getnewargs,
        "__match_args__": fields,
        "__module__": module,
    }
    for index, name in enumerate(fields):
        body[name] = _getter(index, _ALIAS[index])
    return type(typename, (tuple,), body)


# The methods every record shares (namedtuple's, reading the class's fields rather than a closure)


def _make(cls: Any, iterable: Any) -> Any:
    """Make a new record from a sequence or iterable."""
    result = _tuple_new(cls, iterable)
    if len(result) != len(cls._fields):
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
    return result


_MAKE = classmethod(_make)  # one for every record (a classmethod each would be two objects more each)


def _replace(self: Any, /, **kwds: Any) -> Any:
    """Return a new record replacing specified fields with new values."""
    result = self._make(map(kwds.pop, self._fields, self))
    if kwds:
        raise _UNEXPECTED(f"Got unexpected field names: {list(kwds)!r}")
    return result


# copy.replace() of a record, as Python 3.13's namedtuple has it
_REPLACE: dict[str, Any] = {"__replace__": _replace} if sys.version_info >= (3, 13) else {}


def _repr(self: Any) -> str:
    """Return a nicely formatted representation string."""
    fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=False))
    return f"{self.__class__.__name__}({fields})"


def _asdict(self: Any) -> dict[str, Any]:
    """Return a new dict which maps field names to their values."""
    return dict(zip(self._fields, self, strict=False))


def _getnewargs(self: Any) -> tuple[Any, ...]:
    """Return self as a plain tuple.  Used by copy and pickle."""
    return tuple(self)


# The constructors' code, one for each number of fields: a record's ``__new__`` is the one of its
# count, its parameters renamed to its fields. (More fields than written here: namedtuple's class.)
# They are lambdas, not functions, so that a tool that wraps every function (mutmut) leaves them as
# written; only their code is kept (a function object is one more for every collection to walk).
# fmt: off
_CONSTRUCTORS: tuple[types.CodeType, ...] = tuple(constructor.__code__ for constructor in (
    lambda _cls: _tuple_new(_cls, ()),
    lambda _cls, a: _tuple_new(_cls, (a,)),
    lambda _cls, a, b: _tuple_new(_cls, (a, b)),
    lambda _cls, a, b, c: _tuple_new(_cls, (a, b, c)),
    lambda _cls, a, b, c, d: _tuple_new(_cls, (a, b, c, d)),
    lambda _cls, a, b, c, d, e: _tuple_new(_cls, (a, b, c, d, e)),
    lambda _cls, a, b, c, d, e, f: _tuple_new(_cls, (a, b, c, d, e, f)),
    lambda _cls, a, b, c, d, e, f, g: _tuple_new(_cls, (a, b, c, d, e, f, g)),
    lambda _cls, a, b, c, d, e, f, g, h: _tuple_new(_cls, (a, b, c, d, e, f, g, h)),
    lambda _cls, a, b, c, d, e, f, g, h, i: _tuple_new(_cls, (a, b, c, d, e, f, g, h, i)),
    lambda _cls, a, b, c, d, e, f, g, h, i, j: _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j)),
    lambda _cls, a, b, c, d, e, f, g, h, i, j, k: _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k)),
    lambda _cls, a, b, c, d, e, f, g, h, i, j, k, m:
        _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k, m)),
    lambda _cls, a, b, c, d, e, f, g, h, i, j, k, m, n:
        _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k, m, n)),
    lambda _cls, a, b, c, d, e, f, g, h, i, j, k, m, n, p:
        _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k, m, n, p)),
    lambda _cls, a, b, c, d, e, f, g, h, i, j, k, m, n, p, q:
        _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k, m, n, p, q)),
    lambda _cls, a, b, c, d, e, f, g, h, i, j, k, m, n, p, q, r:
        _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k, m, n, p, q, r)),
    lambda _cls, a, b, c, d, e, f, g, h, i, j, k, m, n, p, q, r, s:
        _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k, m, n, p, q, r, s)),
))
# fmt: on
_ALIAS = tuple(sys.intern(f"Alias for field number {i}") for i in range(len(_CONSTRUCTORS)))  # getters' docs


if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:

    class Record(metaclass=_RecordMeta):
        """The base a record is written with (see the module's text); no class derives from it."""
