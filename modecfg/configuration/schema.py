"""Validation of flag values, and the typed pydantic model, built from the declarations.

``validate(flag, raw)`` turns raw text (or a typed TOML / Python value) into the
flag's typed value, or raises ``ValueError`` with a message meant for the user.
pydantic does the work; its validators are built per flag, lazily, the first time a
flag needs one. Text that needs no parsing takes a shortcut that does not import
pydantic (which costs more than reading the whole configuration): one of an
enumerated flag's choices, a boolean word, a plain decimal number within the flag's
bounds, any text for a string or path flag. Anything else, and every out-of-bounds
number, goes to pydantic. The test suite checks that every shortcut agrees with it.

``flags_model()`` is the whole configuration as one nested pydantic model (sections
are sub-models), for JSON Schema and typed snapshots.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modecfg._locks import load
from modecfg.configuration.flags import FLAGS, Flag, _allows_none, _strip_none

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter

__all__ = ["BOOL_WORDS", "flags_model", "validate"]

BOOL_WORDS: dict[str, bool] = {
    "true": True, "false": False, "1": True, "0": False,
    "yes": True, "no": False, "on": True, "off": False,
}  # fmt: skip


def _to_bool(value: object) -> object:
    if isinstance(value, str):
        word = value.strip().lower()
        if word in BOOL_WORDS:
            return BOOL_WORDS[word]
        raise ValueError("expected a boolean: True/False, true/false, 1/0, yes/no or on/off")
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise ValueError(f"expected a boolean, got {type(value).__name__}")


def _none_word(value: object) -> object:
    if isinstance(value, str) and value.strip() == "None":
        return None
    return value


@functools.cache
def _adapter(name: str) -> TypeAdapter[Any]:
    from typing import Annotated

    load("pydantic")  # a fork waits while it is imported (modecfg._locks)
    from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter

    spec = FLAGS[name]
    base = _strip_none(spec.type)
    metadata: list[Any] = []
    if base is bool:
        metadata.append(BeforeValidator(_to_bool))
    if spec.range is not None:
        r = spec.range
        metadata.append(Field(ge=r.ge, gt=r.gt, le=r.le))
    if spec.check is not None:
        metadata.append(AfterValidator(spec.check))
    tp: Any = Annotated[(base, *metadata)] if metadata else base
    if _allows_none(spec.type):
        tp = Annotated[tp | None, BeforeValidator(_none_word)]
    return TypeAdapter(tp)


_TOML_TYPES: dict[Any, tuple[type, ...]] = {
    bool: (bool,),
    int: (int,),
    float: (int, float),
    str: (str,),
    Path: (str,),
}

_TYPE_NAMES = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}


def _check_toml_type(spec: Flag, value: object) -> None:
    expected = _TOML_TYPES.get(_strip_none(spec.type), (str,))
    if isinstance(value, expected) and (bool in expected or not isinstance(value, bool)):
        return  # (a TOML boolean is an int to Python: not an integer here)
    want = " or ".join(_TYPE_NAMES[t] for t in expected)
    got = _TYPE_NAMES.get(type(value), type(value).__name__)
    raise ValueError(f"expected a TOML {want}, got {'an' if got[0] in 'aeiou' else 'a'} {got}")


_NO_SHORTCUT = object()


def shortcut(spec: Flag, raw: str) -> Any:
    """The value of ``raw`` when it needs no parsing, else ``_NO_SHORTCUT``."""
    if raw in spec.literals and spec.check is None:
        return raw
    text = raw.strip()
    if spec.optional and text == "None":
        return None
    base = spec.base
    if base is bool:
        return BOOL_WORDS.get(text.lower(), _NO_SHORTCUT)
    if base is str and spec.range is None:
        return spec.check(raw) if spec.check is not None else raw
    if base is Path and text and spec.range is None:
        path = Path(raw)
        return spec.check(path) if spec.check is not None else path
    number: int | float
    if base is int and re.fullmatch(_INT, text):
        number = int(text)
    elif base is float and re.fullmatch(_FLOAT, text):
        number = float(text)
    else:
        return _NO_SHORTCUT
    if spec.range is not None and not _within(number, spec.range):
        return _NO_SHORTCUT  # out of range: pydantic says so, in its words
    return spec.check(number) if spec.check is not None else number


def typed_shortcut(spec: Flag, raw: object) -> Any:
    """The value of ``raw`` when it is already one of the flag's type (an int for an int flag, a
    float for a float flag, a bool for a bool flag, None where None is allowed), as pydantic
    would give it, else ``_NO_SHORTCUT``: PyTensor's every compile enters
    ``change_flags(traceback__limit=<an int>)``, and pydantic's import (~60 ms) is no part of a
    compile. Out of range or NaN: pydantic says why, in its words."""
    if raw is None:
        return None if spec.optional else _NO_SHORTCUT
    kind = type(raw)
    if kind is not spec.base or kind not in _TYPED or raw != raw:  # (raw != raw: NaN)
        return _NO_SHORTCUT
    if spec.range is not None and not _within(raw, spec.range):  # type: ignore[arg-type]
        return _NO_SHORTCUT
    return spec.check(raw) if spec.check is not None else raw


_TYPED = (int, float, bool)


# Compiled on first use (re keeps them): compiling at import costs start-up.
_INT = r"-?\d+"
_FLOAT = r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"


def _within(value: float, bounds: Any) -> bool:
    return (
        (bounds.ge is None or value >= bounds.ge)
        and (bounds.gt is None or value > bounds.gt)
        and (bounds.le is None or value <= bounds.le)
    )


def validate(spec: Flag, raw: object, *, toml: bool = False) -> Any:
    """The typed value of ``raw`` for ``spec``; ValueError with a readable message."""
    if toml:
        _check_toml_type(spec, raw)
    elif spec.objects is not None and spec.objects(raw):
        return raw
    if type(raw) is str:
        _text_check(spec, raw)
        value = shortcut(spec, raw)
        if value is not _NO_SHORTCUT:
            return value
    else:
        value = typed_shortcut(spec, raw)
        if value is not _NO_SHORTCUT:
            return value
    import math  # here, as pydantic: neither is needed at start-up

    load("pydantic")  # a fork waits while it is imported (modecfg._locks)
    from pydantic import ValidationError

    try:
        value = _adapter(spec.name).validate_python(raw)
    except ValidationError as exc:
        raise ValueError(_describe(spec, exc)) from None
    if isinstance(value, float) and math.isnan(value):
        raise ValueError("NaN is not a valid value here")
    return value


def _text_check(spec: Flag, raw: str) -> None:
    """What no text value may be: a NUL byte (no path or program name holds one), or an empty path."""
    if "\0" in raw:
        raise ValueError("contains a NUL byte, which no file name, program or option holds")
    if spec.base is Path and not raw.strip():
        raise ValueError(
            "an empty path would mean the current directory; give a directory, or leave the flag out "
            "for its default"
        )


def _describe(spec: Flag, exc: Any) -> str:
    """pydantic's first error in modecfg's words: a validator's own ValueError as it says it (its
    ``ctx``), a choice flag's "not a valid choice", else the kind expected and pydantic's reason."""
    err = exc.errors()[0]
    ctx = err.get("ctx") or {}
    if "error" in ctx:  # our own ValueError from a BeforeValidator / AfterValidator
        return str(ctx["error"])
    if spec.choices():  # (a literal's error among them)
        return "not a valid choice"
    msg = str(err["msg"])
    return f"expected {spec.kind()} ({msg[0].lower() + msg[1:]})"


@functools.cache
def flags_model() -> type[BaseModel]:
    """A pydantic model of the whole configuration; sections are nested models."""
    load("pydantic")  # a fork waits while it is imported (modecfg._locks)
    from pydantic import ConfigDict, Field, create_model

    tree: dict[str, Any] = {}
    for spec in FLAGS.values():
        node = tree
        for part in spec.section:
            node = node.setdefault(part, {})
        node[spec.attr] = spec

    def build(name: str, node: dict[str, Any]) -> type[BaseModel]:
        fields: dict[str, Any] = {}
        for key, item in node.items():
            if isinstance(item, dict):
                sub = build(f"{name}_{key}", item)
                fields[key] = (sub, Field(default_factory=sub))
            else:
                default = None if item.is_lazy else item.default
                tp = item.type if not item.is_lazy else item.type | None
                extra = {"pytensor": item.pytensor, "fixed": item.fixed}
                fields[key] = (
                    tp,
                    Field(default=default, description=item.doc, json_schema_extra=extra),
                )
        return create_model(name, __config__=ConfigDict(extra="forbid", frozen=True), **fields)

    return build("Flags", tree)


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of an rc file in TOML: every flag with its type, choices,
    default and doc, sections as tables, unknown names refused. For editors: TOML language
    servers (taplo, Even Better TOML) check and complete ``~/.modecfg.toml`` with it."""
    schema = flags_model().model_json_schema()
    defs = schema.get("$defs", {})
    for spec in FLAGS.values():
        node = schema
        for part in spec.section:
            node = defs[node["properties"][part]["$ref"].rsplit("/", 1)[1]]
        prop = node["properties"][spec.attr]
        choices = spec.choices()
        if choices and "enum" not in prop:
            prop["enum"] = list(choices)
        prop["x-pytensor"] = prop.pop("pytensor", spec.pytensor)
        prop["x-fixed-once-pytensor-uses-it"] = prop.pop("fixed", spec.fixed)
        prop["title"] = spec.name
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": "modecfg rc file (~/.modecfg.toml, .pytensorrc.toml)",
        "description": "Every modecfg flag; dotted names are tables ([traceback] limit = -1). "
        "Generated by `modecfg schema` from the flag declarations.",
    }
