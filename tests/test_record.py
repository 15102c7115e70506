"""``modecfg._record.Record`` makes the class ``typing.NamedTuple`` makes (issue 61: for half its
time at import): held side by side with ``typing.NamedTuple`` on the same class bodies."""

from __future__ import annotations

import copy
import functools
import inspect
import keyword
import pickle
import types
import typing
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modecfg import _record
from modecfg._record import Record


def _made(base: Any, name: str, body: dict[str, Any]) -> Any:
    """The class ``class <name>(<base>): <body>`` (annotations and values as the body would hold)."""
    return types.new_class(name, (base,), exec_body=lambda ns: ns.update({"__module__": __name__, **body}))


def _both(name: str, body: dict[str, Any]) -> tuple[Any, Any]:
    return _made(typing.NamedTuple, name, dict(body)), _made(Record, name, dict(body))


def _facts(cls: Any) -> dict[str, Any]:
    return {
        "name": (cls.__name__, cls.__qualname__, cls.__module__),
        "fields": cls._fields,
        "defaults": cls._field_defaults,
        "match_args": cls.__match_args__,
        "doc": cls.__doc__,
        "mro": [c.__name__ for c in cls.__mro__],
        "slots": cls.__slots__,
        "annotations": list(cls.__annotations__),
        "replace": "__replace__" in vars(cls),  # (Python 3.13's namedtuple: copy.replace)
        "getters": [type(vars(cls)[f]) for f in cls._fields],
    }


NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))
VALUES = st.one_of(st.none(), st.integers(), st.text(max_size=4), st.tuples(st.integers()))


@st.composite
def bodies(draw: st.DrawFn) -> tuple[list[str], dict[str, Any], list[Any]]:
    fields = draw(st.lists(NAMES, min_size=0, max_size=6, unique=True))
    defaulted = draw(st.integers(0, len(fields)))
    body: dict[str, Any] = {"__annotations__": {f: "int | None" for f in fields}}
    for field in fields[len(fields) - defaulted :]:
        body[field] = draw(VALUES)
    if draw(st.booleans()):
        body["__doc__"] = draw(st.text(max_size=10))
    given_values = [draw(VALUES) for _ in fields]
    return fields, body, given_values


@given(bodies())
@settings(max_examples=150, deadline=None)
def test_a_record_is_the_class_namedtuple_makes_of_the_same_body(
    drawn: tuple[list[str], dict[str, Any], list[Any]],
) -> None:
    fields, body, values = drawn
    theirs, ours = _both("Rec", body)
    assert _facts(ours) == _facts(theirs)
    a, b = theirs(*values), ours(*values)
    assert tuple(a) == tuple(b) and repr(a) == repr(b) and hash(a) == hash(b)
    assert a._asdict() == b._asdict()
    assert [getattr(b, f) for f in fields] == [getattr(a, f) for f in fields] == values
    defaults = [body[f] for f in fields if f in body]
    required = len(fields) - len(defaults)
    assert tuple(theirs(*values[:required])) == tuple(ours(*values[:required]))
    if fields:
        assert tuple(a._replace(**{fields[0]: "x"})) == tuple(b._replace(**{fields[0]: "x"}))
        assert tuple(theirs._make(values)) == tuple(ours._make(values))
        with pytest.raises(TypeError):
            ours(*values, "one too many")
    _same_constructor(theirs, ours, fields, values)


def _raised(call: Any) -> str:
    try:
        call()
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return "nothing raised"


def _same_constructor(theirs: Any, ours: Any, fields: list[str], values: list[Any]) -> None:
    """The constructor and the shared methods: signature, keywords, messages, pickling, copies."""

    # (typing.NamedTuple also gives __new__ the annotations, as ForwardRefs: a record keeps them as text)
    def parameters(cls: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]

    assert parameters(ours) == parameters(theirs)
    constructors = (inspect.signature(cls.__new__).parameters for cls in (ours, theirs))
    assert list(next(constructors)) == list(next(constructors))
    # (namedtuple's __new__ is a lambda in its code, which a traceback or a profile names: a
    # record's is named as it is called)
    code = ours.__new__.__code__
    if len(fields) < len(_record._CONSTRUCTORS):  # (past them, the class is namedtuple's own)
        assert (code.co_name, code.co_qualname) == ("__new__", f"{ours.__name__}.__new__")
    else:
        assert code.co_filename == theirs.__new__.__code__.co_filename  # compiled by namedtuple
    for attribute in ("__doc__", "__qualname__", "__defaults__", "__name__"):
        assert getattr(ours.__new__, attribute) == getattr(theirs.__new__, attribute), attribute
    assert tuple(ours(**dict(zip(fields, values, strict=True)))) == tuple(values)
    for index, name in enumerate(fields):
        mine, made = ours.__dict__[name], theirs.__dict__[name]
        assert type(mine) is type(made) and mine.__doc__ == made.__doc__ == f"Alias for field number {index}"
    calls: list[Any] = [
        lambda cls: cls(*values, "one too many"),
        lambda cls: cls(nonsense=1),
        lambda cls: cls._make([*values, 1]),
        lambda cls: cls(*values)._replace(nonsense=1),
    ]
    if fields:
        calls.append(lambda cls: cls(*values, **{fields[0]: values[0]}))
    for call in calls:
        mine = _raised(functools.partial(call, ours)).replace(ours.__name__, "T")
        assert mine == _raised(functools.partial(call, theirs)).replace(theirs.__name__, "T")
    made = ours(*values)
    assert copy.copy(made) == made and copy.deepcopy(made) == made and made.__getnewargs__() == tuple(values)


@pytest.mark.parametrize("count", range(22))
def test_every_number_of_fields_makes_the_class_namedtuple_makes(count: int) -> None:
    """Past the constructors written in _record (17 fields), a record is namedtuple's own class."""
    fields = [f"f{i}" for i in range(count)]
    body: dict[str, Any] = {"__annotations__": dict.fromkeys(fields, "int")}
    body.update({f: -1 for f in fields[count // 2 :]})
    theirs, ours = _both("Wide", body)
    assert _facts(ours) == _facts(theirs)
    values = list(range(count))
    assert repr(ours(*values)) == repr(theirs(*values)) and ours(*values) == theirs(*values)
    assert ours(*values[: count // 2]) == theirs(*values[: count // 2])
    _same_constructor(theirs, ours, fields, values)


@pytest.mark.parametrize("name", ["_hidden", "class", "no-identifier"])
def test_a_field_namedtuple_refuses_a_record_refuses_with_its_words(name: str) -> None:
    body = {"__annotations__": {name: "int"}}
    assert _raised(lambda: _made(Record, "Refused", dict(body))) == _raised(
        lambda: _made(typing.NamedTuple, "Refused", dict(body))
    )
    assert _raised(lambda: _made(Record, "Refused", dict(body))).startswith("ValueError: ")


@pytest.mark.parametrize("typename", ["no-identifier", "def"])
def test_a_type_name_namedtuple_refuses_a_record_refuses_with_its_words(typename: str) -> None:
    body = {"__annotations__": {"a": "int"}}
    ours = _raised(lambda: _made(Record, typename, dict(body)))
    assert ours == _raised(lambda: _made(typing.NamedTuple, typename, dict(body)))
    assert ours.startswith("ValueError")


def test_methods_properties_and_class_attributes_of_the_body_are_the_classs() -> None:
    def doubled(self: Any) -> int:
        return int(self.n) * 2

    def named(cls: Any, n: int) -> Any:
        return cls(n, f"#{n}")

    body = {
        "__annotations__": {"n": "int", "label": "str"},
        "label": "",
        "__doc__": "A record with behaviour.",
        "doubled": doubled,
        "twice": property(doubled),
        "named": classmethod(named),
        "KIND": "row",
        "__str__": lambda self: f"n={self.n}",
    }
    theirs, ours = _both("WithMethods", body)
    assert _facts(ours) == _facts(theirs)
    for cls in (theirs, ours):
        made = cls.named(4)
        assert (made.doubled(), made.twice, made.label, cls.KIND, str(made)) == (8, 8, "#4", "row", "n=4")
        assert cls.__doc__ == "A record with behaviour."


def test_a_descriptor_is_told_its_name_as_pythons_own_namedtuple_tells_it() -> None:
    class Cached(Record):
        n: int

        @functools.cached_property
        def square(self) -> int:
            return self.n**2

    assert Cached.__dict__["square"].attrname == "square"

    class Told:
        def __set_name__(self, owner: type, name: str) -> None:
            self.told = (owner, name)

    told = Told()
    made = _made(Record, "WithDescriptor", {"__annotations__": {"n": "int"}, "held": told})
    assert told.told == (made, "held")

    class Heir(Told):  # a __set_name__ inherited is found as the interpreter finds it
        pass

    heir = Heir()
    made = _made(Record, "WithHeir", {"__annotations__": {"n": "int"}, "held": heir})
    assert heir.told == (made, "held")


def test_a_set_name_that_is_no_function_is_called_as_a_plain_class_calls_it() -> None:
    """A ``__set_name__`` that is a callable object (no ``__get__``: not bound to the value) or a
    staticmethod is called as ``type()`` calls it; a value whose class has none is left alone."""
    calls: list[tuple[str, object, str]] = []

    class Hook:
        def __call__(self, owner: type, name: str) -> None:
            calls.append(("object", owner, name))

    class ByObject:
        __set_name__ = Hook()

    class ByStatic:
        @staticmethod
        def __set_name__(owner: type, name: str) -> None:
            calls.append(("static", owner, name))

    class Binder:  # a descriptor: bound to the value and its class, as the interpreter binds it
        def __get__(self, value: object, owner: type | None = None) -> Callable[[type, str], None]:
            return lambda made, name: calls.append(
                (f"bound by {owner.__name__ if owner else None}", made, name)
            )

    class ByDescriptor:
        __set_name__ = Binder()

    body = {"a": ByObject(), "b": ByStatic(), "c": 3, "d": len, "e": ByDescriptor()}
    plain = type("Plain", (), dict(body))
    expected = [(kind, "Plain", name) for kind, _, name in calls]
    calls.clear()
    made = _made(Record, "Rec", {"__annotations__": {"n": "int"}, **body})
    assert [(kind, owner.__name__, name) for kind, owner, name in calls] == [
        (kind, "Rec", name) for kind, _, name in expected
    ]
    assert expected == [
        ("object", "Plain", "a"),
        ("static", "Plain", "b"),
        ("bound by ByDescriptor", "Plain", "e"),
    ]
    assert all(owner is made for _, owner, _ in calls) and plain.c == made.c == 3


def test_a_field_without_a_default_after_one_with_a_default_is_refused_as_namedtuple_refuses_it() -> None:
    body = {"__annotations__": {"a": "int", "b": "int", "c": "int"}, "a": 1}
    with pytest.raises(TypeError):
        _made(typing.NamedTuple, "Refused", dict(body))
    with pytest.raises(
        TypeError, match=r"^Refused: the field b without a default follows one with a default$"
    ):
        _made(Record, "Refused", dict(body))


PROHIBITED = ["__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make",
              "_replace", "_asdict", "_source"]  # fmt: skip


@pytest.mark.parametrize("name", PROHIBITED)
def test_what_namedtuple_refuses_to_have_overwritten_a_record_refuses(name: str) -> None:
    body = {"__annotations__": {"a": "int"}, name: (lambda *args: None)}
    with pytest.raises(AttributeError):
        _made(typing.NamedTuple, "Refused", dict(body))
    with pytest.raises(AttributeError, match=f"^Refused: a record cannot have its own {name}$"):
        _made(Record, "Refused", dict(body))


def test_a_body_without_fields_or_annotations_is_an_empty_record() -> None:
    theirs, ours = _both("Empty", {})
    assert _facts(ours) == _facts(theirs) and ours() == () == theirs()
    theirs, ours = _both("Empty", {"__doc__": "Nothing."})
    assert ours.__doc__ == theirs.__doc__ == "Nothing."


def test_a_record_derives_from_record_alone_and_a_subclass_of_one_is_a_plain_class() -> None:
    with pytest.raises(TypeError, match="derives from Record alone"):
        types.new_class("Two", (Record, int))
    theirs, ours = _both("Rec", {"__annotations__": {"a": "int"}})
    sub_theirs, sub_ours = types.new_class("Sub", (theirs,)), types.new_class("Sub", (ours,))
    assert type(sub_ours) is type(sub_theirs) is type and sub_ours(1) == (1,) == sub_theirs(1)


class Pickled(Record):
    """A module-level record: pickled by reference, as a NamedTuple is."""

    where: str
    line: int | None = None


def test_a_record_pickles_and_its_annotations_are_kept_as_written() -> None:
    made = Pickled("f.py", 3)
    assert pickle.loads(pickle.dumps(made)) == made and type(pickle.loads(pickle.dumps(made))) is Pickled
    assert Pickled.__annotations__ == {"where": "str", "line": "int | None"}
    assert Pickled.__qualname__ == "Pickled" and isinstance(made, tuple)


def test_modecfgs_records_are_written_with_record() -> None:
    """One way to write a record in the package (typing.NamedTuple's would cost the import again)."""
    import re
    from pathlib import Path

    import modecfg

    package = Path(modecfg.__file__).parent
    written = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if re.search(r"\(\s*(typing\.)?NamedTuple\s*\)", path.read_text(encoding="utf-8"))
        and path.name != "_record.py"
    ]
    assert written == []
