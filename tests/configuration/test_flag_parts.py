"""What a flag is, built in this process: its declaration's facts, its kind in words, the
PyTensor releases that have it, declaring one. (test_flags.py checks the flags modecfg
declares; those are made at import, which mutation testing does not see.)"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from modecfg.configuration import flags
from modecfg.configuration.flags import Flag, FlagSet, Lazy, OneOf, Range, declared, flag


def _flag(tp: object, **kwargs: object) -> Flag:
    return Flag("section.sub.name", tp, None, "a flag (test)", **kwargs)  # type: ignore[arg-type]


def test_a_flag_keeps_what_its_declaration_says() -> None:
    def choices() -> list[str]:
        return ["a", "b"]

    def check(value: object) -> object:
        return value

    def objects(value: object) -> bool:
        return False

    def takes(value: object) -> bool:
        return True

    spec = Flag(
        "traceback.limit", int | None, 8, "doc", pytensor=True, pytensor_since=(3, 1), pytensor_until=(3, 4),
        fixed=True, range=Range(ge=0), choices_from=choices, check=check, describe="words",
        reaches="a path", objects=objects, pytensor_takes=takes,
    )  # fmt: skip
    assert (spec.name, spec.type, spec.default, spec.doc) == ("traceback.limit", int | None, 8, "doc")
    assert (spec.pytensor, spec.pytensor_since, spec.pytensor_until, spec.fixed) == (
        True,
        (3, 1),
        (3, 4),
        True,
    )
    assert (spec.range, spec.choices_from, spec.check, spec.describe) == (
        Range(ge=0),
        choices,
        check,
        "words",
    )
    assert (spec.reaches, spec.objects, spec.pytensor_takes) == ("a path", objects, takes)
    assert (spec.base, spec.optional, spec.literals) == (int, True, frozenset())
    assert (spec.section, spec.attr, spec.pytensor_name) == (("traceback",), "limit", "traceback__limit")
    plain = Flag("floatX", Literal["float32", "float64"], "float64", "doc")
    assert (plain.pytensor, plain.fixed, plain.reaches, plain.pytensor_since, plain.pytensor_until) == (
        False, False, "", None, None)  # fmt: skip
    assert (plain.range, plain.choices_from, plain.check, plain.describe, plain.objects) == (None,) * 5
    assert plain.pytensor_takes is None
    assert (plain.base, plain.optional, plain.literals) == (Literal["float32", "float64"], False,
                                                            frozenset({"float32", "float64"}))  # fmt: skip
    assert (plain.section, plain.attr, repr(plain)) == ((), "floatX", "Flag('floatX', default='float64')")
    assert (_flag(bool).section, _flag(bool).attr) == (("section", "sub"), "name")


@pytest.mark.parametrize(
    ("tp", "kwargs", "kind"),
    [
        (bool, {}, "boolean"),
        (int, {"range": Range(ge=0)}, "integer >= 0"),
        (int | None, {"range": Range(gt=0, le=10)}, "integer > 0 and <= 10 or None"),
        (float, {"range": Range(gt=0.5, ge=1, le=2.5)}, "number > 0.5 and >= 1 and <= 2.5"),
        (str, {}, "string"),
        (Path | None, {}, "path or None"),
        (Literal["low", "high"], {}, "one of low, high"),
        (Literal["low", "high"] | None, {}, "one of low, high"),
        (OneOf("low", "high"), {}, "one of low, high"),
        (str, {"choices_from": lambda: ("cvm", "py")}, "one of cvm, py"),
        (str, {"describe": "a linker's name"}, "a linker's name"),
        (bytes, {}, "<class 'bytes'>"),
    ],
)
def test_a_flag_s_kind_in_words(tp: object, kwargs: dict[str, object], kind: str) -> None:
    assert _flag(tp, **kwargs).kind() == kind


def test_none_is_allowed_and_stripped_only_where_the_type_says_so() -> None:
    assert (_flag(int | None).base, _flag(int | None).optional) == (int, True)
    assert (_flag(int).base, _flag(int).optional) == (int, False)
    both = _flag(int | str | None)  # two types besides None: kept as written
    assert (both.base, both.optional, both.literals) == (int | str | None, True, frozenset())
    assert (_flag(int | str).optional, _flag(int | str).literals) == (False, frozenset())
    abstract = _flag(numbers.Number)  # a class whose class is not type: asked, with nothing to find
    assert (abstract.base, abstract.optional, abstract.literals) == (numbers.Number, False, frozenset())
    literal = _flag(Literal["a", None])  # None as a choice: a Literal, not an optional type
    assert (literal.base, literal.optional, literal.literals) == (
        Literal["a", None],
        False,
        frozenset({"a", None}),
    )


@pytest.mark.parametrize("choices", [("float32", "float64"), ("a", None), ("only",), (1, "1", True)])
def test_a_flag_declared_one_of_its_choices_is_the_flag_its_literal_declares(
    choices: tuple[object, ...],
) -> None:
    """``OneOf(*choices)`` declares what ``Literal[*choices]`` does: the same choices, literals,
    optionality and kind; its ``type`` is that Literal, made at the first ask and kept (until then
    no Literal is made: the 15 flags declared so cost none at the import)."""
    one_of = _flag(OneOf(*choices))
    literal = _flag(Literal[choices])
    assert one_of._type == choices and type(one_of._type) is OneOf  # nothing made yet
    assert (one_of.optional, one_of.literals, one_of.choices(), one_of.kind()) == (
        literal.optional, literal.literals, literal.choices(), literal.kind())  # fmt: skip
    assert one_of.base == choices  # (a Literal's base is itself: neither is a plain type)
    made = one_of.type
    assert made == literal.type and one_of.type is made and type(one_of._type) is not OneOf
    assert repr(OneOf("a", "b")) == "OneOf('a', 'b')" and OneOf() == ()


def test_the_declared_flags_of_choices_read_as_literals() -> None:
    """Every flag modecfg declares with choices has a Literal type, as schema's checks and the
    migration read it."""
    with_choices = [spec for spec in declared().values() if spec.literals]
    assert len(with_choices) >= 15
    for spec in with_choices:
        assert spec.type == Literal[tuple(spec.choices())], spec.name


@pytest.mark.parametrize(
    ("since", "until", "releases", "has"),
    [
        (None, None, "", {(3, 0): True, (3, 9): True}),
        ((3, 2), None, "PyTensor 3.2 and later", {(3, 1): False, (3, 2): True, (3, 9): True}),
        (None, (3, 4), "PyTensor before 3.4", {(3, 3): True, (3, 4): False}),
        ((3, 1), (3, 4), "PyTensor 3.1 to 3.3", {(3, 0): False, (3, 1): True, (3, 3): True, (3, 4): False}),
        ((2, 7), (4, 2), "PyTensor 2.7 to 4.1", {(2, 6): False, (2, 7): True, (4, 1): True, (4, 2): False}),
    ],
)
def test_the_pytensor_releases_that_have_a_flag(
    since: tuple[int, int] | None,
    until: tuple[int, int] | None,
    releases: str,
    has: dict[tuple[int, int], bool],
) -> None:
    spec = _flag(int, pytensor=True, pytensor_since=since, pytensor_until=until)
    assert spec.pytensor_releases() == releases
    assert {version: spec.in_pytensor(version) for version in has} == has
    assert spec.in_pytensor(None) is True  # the version unknown: assume so
    assert _flag(int, pytensor_since=since).in_pytensor((3, 5)) is False  # not PyTensor's at all


def test_a_lazy_default_says_what_it_computes() -> None:
    lazy = Lazy(lambda cfg: 1, "24 x compile.wait")
    assert str(lazy) == "<24 x compile.wait>"
    assert _flag(int).is_lazy is False and Flag("x", int, lazy, "doc").is_lazy is True


@pytest.fixture
def declaring() -> Iterator[str]:
    name = "modecfgtest.declared_here"
    yield name
    flags.FLAGS.pop(name, None)
    flags._declared.clear()


def test_declaring_a_flag_adds_it_to_a_new_set_and_twice_is_an_error(declaring: str) -> None:
    before = declared()
    spec = flag(declaring, int, 3, "  a doc\n   written over   lines ", fixed=True, range=Range(ge=1))
    assert flags.FLAGS[declaring] is spec
    assert (spec.name, spec.type, spec.default, spec.doc, spec.fixed, spec.range) == (
        declaring, int, 3, "a doc written over lines", True, Range(ge=1))  # fmt: skip
    after = declared()
    assert after is not before and after[declaring] is spec and declaring not in before
    assert declared() is after  # one set until the next declaration
    with pytest.raises(RuntimeError, match=r"^flag 'modecfgtest.declared_here' declared twice$"):
        flag(declaring, int, 4, "again")
    assert flags.FLAGS[declaring] is spec


def test_a_flag_set_is_a_read_only_value_of_its_moment() -> None:
    spec = _flag(int)
    fs = FlagSet({"a": spec})
    sentinel = _flag(str)
    assert fs.get("a") is spec and fs.get("b") is None and fs.get("b", sentinel) is sentinel
    assert ("a" in fs, "b" in fs, list(fs), len(fs), fs["a"]) == (True, False, ["a"], 1, spec)
    assert fs != FlagSet({"a": spec}) and fs == fs and repr(fs) == "<FlagSet of 1 flags>"


def test_the_flags_without_literal_values_share_one_empty_set() -> None:
    """Issue 61: 78 of the 93 flags have no literal values; one frozenset stands for all of them
    (one tracked object, not 78, that every collection and the exit walk), and a flag that has
    some keeps its own."""
    plain, other = Flag("a.b", int, 0, "doc"), Flag("c", str | None, None, "doc")
    choices = Flag("d", Literal["x", "y"], "x", "doc")
    assert plain.literals == other.literals == frozenset() and plain.literals is other.literals
    assert choices.literals == {"x", "y"} and choices.literals is not plain.literals


@pytest.mark.parametrize("tp", [bool, int, float, str, Path, bytes, numbers.Number, int | None,
                                Literal["a", "b"], OneOf("a", None), int | str])  # fmt: skip
def test_a_flag_s_type_facts_are_worked_out_alike_on_both_paths(tp: object) -> None:
    """A plain class (most flags' type) takes a short path at the declaration: what it sets is
    what the general one would (and the flags modecfg declares hold to both)."""
    spec = _flag(tp)
    general = (flags._strip_none(tp), flags._allows_none(tp), frozenset(flags._literal_args(tp)))
    assert (spec.base, spec.optional, spec.literals) == general
    plain = [each for each in declared().values() if type(each._type) is type]
    assert len(plain) > 40  # (bool, int, str, Path: most of them)
    for each in plain:
        assert (each.base, each.optional, each.literals) == (each._type, False, frozenset()), each.name


def test_a_flag_s_names_are_worked_out_once_and_interned() -> None:
    top, deep = Flag("floatX", str, "x", "doc"), Flag("a.b.c", int, 0, "doc")
    assert (top.section, top.attr, top.pytensor_name) == ((), "floatX", "floatX")
    assert (deep.section, deep.attr, deep.pytensor_name) == (("a", "b"), "c", "a__b__c")
    made = "".join(["flo", "atX"])  # a string equal to the name, not the same object
    assert Flag(made, str, "x", "doc").attr is sys.intern("floatX")
    assert all(part is sys.intern(part) for part in Flag("".join(["se", "c.x"]), int, 0, "doc").section)
