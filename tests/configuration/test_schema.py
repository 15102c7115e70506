"""``modecfg.configuration.schema``: what a bad value is told (pydantic's errors in modecfg's words),
the shortcuts at the edges of the flags' ranges, and the JSON Schema's own keys for each flag."""

from __future__ import annotations

import datetime

import pytest

from modecfg.configuration.flags import FLAGS
from modecfg.configuration.schema import _NO_SHORTCUT, json_schema, shortcut, typed_shortcut, validate


@pytest.mark.parametrize(
    ("name", "raw", "said"),
    [
        ("floatX", "float33", "not a valid choice"),  # a literal's error
        ("mode", 3, "not a valid choice"),  # a choice flag given no text: still a choice
        ("linker", 4.5, "not a valid choice"),
        (
            "cache.max_size",
            5,
            "expected a size such as 2GiB, 500MB or 800M, or None (input should be a valid string)",
        ),
        (
            "traceback.limit",
            "x",
            "expected integer (input should be a valid integer, unable to parse string as an integer)",
        ),
        ("allow_gc", 2, "expected a boolean, got int"),  # the validator's own words (its ctx)
        ("allow_gc", -1, "expected a boolean, got int"),
        ("allow_gc", 1.0, "expected a boolean, got float"),
        ("allow_gc", None, "expected a boolean, got NoneType"),
        ("allow_gc", "maybe", "expected a boolean: True/False, true/false, 1/0, yes/no or on/off"),
        (
            "optdb.max_use_ratio",
            float("nan"),
            "NaN is not a valid value here",
        ),  # (past the shortcut and pydantic)
    ],
)
def test_a_bad_value_is_told_what_was_expected_in_modecfgs_words(name: str, raw: object, said: str) -> None:
    with pytest.raises(ValueError) as refused:
        validate(FLAGS[name], raw)
    assert str(refused.value) == said


@pytest.mark.parametrize(
    ("raw", "value"), [(0, False), (1, True), (True, True), (False, False), ("on", True)]
)
def test_a_boolean_flag_takes_0_and_1_as_booleans(raw: object, value: bool) -> None:
    got = validate(FLAGS["allow_gc"], raw)
    assert got is value


@pytest.mark.parametrize(
    ("name", "raw", "said"),
    [
        ("traceback.limit", True, "expected a TOML integer, got a boolean"),
        ("traceback.limit", 1.5, "expected a TOML integer, got a float"),
        ("NanGuardMode.big", "x", "expected a TOML integer or float, got a string"),
        ("NanGuardMode.big", False, "expected a TOML integer or float, got a boolean"),
        ("floatX", 32, "expected a TOML string, got an integer"),
        ("floatX", ["a"], "expected a TOML string, got an array"),
        ("floatX", {"a": 1}, "expected a TOML string, got a table"),
        ("floatX", datetime.date(2020, 1, 1), "expected a TOML string, got a date"),
        ("allow_gc", 1, "expected a TOML boolean, got an integer"),
    ],
)
def test_a_toml_value_of_another_type_is_named_by_toml_s_types(name: str, raw: object, said: str) -> None:
    with pytest.raises(ValueError) as refused:
        validate(FLAGS[name], raw, toml=True)
    assert str(refused.value) == said


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("traceback.limit", 3, 3),
        ("NanGuardMode.big", 2, 2.0),
        ("NanGuardMode.big", 1e9, 1e9),
        ("allow_gc", True, True),
    ],
)
def test_a_toml_value_of_its_flags_type_is_taken(name: str, raw: object, value: object) -> None:
    got = validate(FLAGS[name], raw, toml=True)
    assert got == value and type(got) is type(value)


RANGED = [f for f in FLAGS.values() if f.range is not None]


@pytest.mark.parametrize("spec", RANGED, ids=lambda f: f.name)
def test_a_value_at_an_inclusive_bound_is_answered_by_the_shortcuts_and_one_past_it_by_pydantic(
    spec: object,
) -> None:
    """A bound the range includes (ge, le) is within it; one it excludes (gt) is pydantic's to word."""
    bounds = spec.range  # type: ignore[attr-defined]
    kind = spec.base  # type: ignore[attr-defined]
    for bound, inclusive, past in ((bounds.ge, True, -1), (bounds.le, True, 1), (bounds.gt, False, 0)):
        if bound is None:
            continue
        value = kind(bound)
        expected = value if inclusive else _NO_SHORTCUT
        assert shortcut(spec, str(value)) == expected  # type: ignore[arg-type]
        assert typed_shortcut(spec, value) == expected  # type: ignore[arg-type]
        if past:
            assert typed_shortcut(spec, kind(bound + past)) is _NO_SHORTCUT  # type: ignore[arg-type]
            with pytest.raises(ValueError, match=r"^expected .*(greater|less) than"):
                validate(spec, kind(bound + past))  # type: ignore[arg-type]


def _property(schema: dict[str, object], name: str) -> dict[str, object]:
    spec = FLAGS[name]
    node: dict[str, object] = schema
    defs: dict[str, dict[str, object]] = schema.get("$defs", {})  # type: ignore[assignment]
    for part in spec.section:
        ref = node["properties"][part]["$ref"]  # type: ignore[index]
        node = defs[ref.rsplit("/", 1)[1]]
    return node["properties"][spec.attr]  # type: ignore[index,no-any-return]


def test_each_flags_property_says_what_pytensor_takes_of_it_and_its_choices() -> None:
    schema = json_schema()  # (made here, not by a fixture: make mutate runs the tests that call it)
    for name, spec in FLAGS.items():
        prop = _property(schema, name)
        assert prop["x-pytensor"] is spec.pytensor, name
        assert prop["x-fixed-once-pytensor-uses-it"] is spec.fixed, name
        assert "pytensor" not in prop and "fixed" not in prop, name  # moved to the x- keys
        assert prop["title"] == name
        choices = spec.choices()
        if choices:
            assert prop["enum"] == list(choices), name
        else:
            assert "enum" not in prop, name
    assert sum(spec.pytensor for spec in FLAGS.values()) > 50 and any(spec.fixed for spec in FLAGS.values())


def test_the_schema_says_its_draft_and_what_it_checks() -> None:
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "modecfg rc file (~/.modecfg.toml, .pytensorrc.toml)"
    assert schema["description"] == (
        "Every modecfg flag; dotted names are tables ([traceback] limit = -1). Generated by `modecfg schema` "
        "from the flag declarations."
    )


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("floatX", "float32", "float32"),  # a literal, as written
        ("allow_gc", "True", True),  # a boolean word in any case
        ("allow_gc", " OFF ", False),
        ("gcc.cxxflags", "-O3 -g", "-O3 -g"),  # text
        ("traceback.limit", "-1", -1),
        ("cache.max_size", "None", None),
    ],
)
def test_the_text_shortcut_answers_what_needs_no_parsing_itself(name: str, raw: str, value: object) -> None:
    got = shortcut(FLAGS[name], raw)
    assert got == value and type(got) is type(value)


def test_a_path_flags_text_is_a_path_without_pydantic() -> None:
    from pathlib import Path

    assert shortcut(FLAGS["base_compiledir"], "/tmp/x") == Path("/tmp/x")
    assert shortcut(FLAGS["base_compiledir"], " ") is _NO_SHORTCUT  # validate refuses it before


@pytest.mark.parametrize(
    ("name", "raw", "said"),
    [
        ("gcc.cxxflags", "-O3\x00-g", "contains a NUL byte, which no file name, program or option holds"),
        (
            "base_compiledir",
            "  ",
            "an empty path would mean the current directory; give a directory, or leave the flag out "
            "for its default",
        ),
    ],
)
def test_text_no_value_may_hold_is_refused_before_any_parsing(name: str, raw: str, said: str) -> None:
    with pytest.raises(ValueError) as refused:
        validate(FLAGS[name], raw)
    assert str(refused.value) == said
