"""The rc files' two formats read into settings: INI (Theano's ``.theanorc``) and TOML.

Loaded by :func:`modecfg.configuration.sources.read_rc` at the first rc file with text to read
(a process without one never loads it), and by ``modecfg migrate`` and ``modecfg edit``.

We read INI files ourselves rather than with :mod:`configparser`, which keeps no line
numbers and quietly accepts several mistakes real rc files make (a header written as
``[mode]=FAST_RUN``, inline ``# comments`` kept in the value). Its interpolation, which
Theano users rely on (``%(user)s``), is still configparser's own. TOML is :mod:`tomllib`'s,
with each key's line found by a light scan.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from modecfg.configuration.origin import Layer, Origin, Setting
from modecfg.errors import ConfigError, RcFileError, RcFileErrors

__all__ = ["ini_text", "interpolation_defaults", "read_ini", "read_toml"]


def interpolation_defaults(env: Mapping[str, str]) -> dict[str, str]:
    """The ``%(name)s`` values Theano offered in rc files."""
    home = env.get("HOME", "")
    return {
        "user": env.get("USER", os.path.basename(home.rstrip("/\\")) if home else ""),
        "lscratch": env.get("LSCRATCH", ""),
        "tmpdir": env.get("TMPDIR", ""),
        "temp": env.get("TEMP", ""),
        "tmp": env.get("TMP", ""),
        "pid": str(os.getpid()),
    }


# Patterns are compiled on first use (re keeps them): compiling at import costs start-up.
_HEADER = r"\[\s*(?P<name>[^\[\]]*?)\s*\]"
_OPTION = r"(?P<key>.*?)\s*(?P<sep>[=:])(?P<value>.*)"  # value keeps its blanks


def _strip_comment(value: str) -> str:
    """``value`` without an inline `` # comment`` outside quotes."""
    if "#" not in value:
        return value
    quote = ""
    for i, c in enumerate(value):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "#" and i > 0 and value[i - 1].isspace():
            return value[:i].rstrip()
    return value


def read_ini(text: str, path: str, defaults: Mapping[str, str] | None = None) -> list[Setting]:
    """The settings of an INI rc file: ``[global]`` for plain flags, ``[section]`` for dotted ones.

    Comments (``#`` / ``;`` lines and inline `` # ...``), quoted values, continuation
    lines and ``%(user)s``-style interpolation are handled as Theano users expect. A
    line that is none of comment, header, ``name = value`` or continuation, an option
    before any header, and a repeated option or section are errors. Every one of the file's
    problems is found in one pass: one is raised as an RcFileError, several as RcFileErrors;
    either holds the file's readable settings as ``settings`` (their values are checked too).
    """
    from modecfg.configuration.flagstring import unwrap_quotes  # (loaded when an rc file is read)

    entries: list[tuple[str, str, list[str], int]] = []  # section, key, value parts, line
    problems: list[ConfigError] = []
    seen_sections: dict[str, int] = {}
    seen_keys: dict[tuple[str, str], int] = {}
    section: str | None = None
    broken = False  # under a header that could not be read: its options belong nowhere known
    open_indent = -1  # indentation of the option that may still continue
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            open_indent = -1
            continue
        if stripped[0] in "#;":
            continue
        indent = len(line) - len(line.lstrip())
        if entries and open_indent >= 0 and indent > open_indent:
            part = _strip_comment(stripped)
            if part:
                entries[-1][2].append(part)
            continue
        where = f"{path}:{lineno}"
        origin = Origin(Layer.RC, path, lineno)
        open_indent = -1
        if stripped.startswith("["):
            header = _strip_comment(stripped)
            m = re.fullmatch(_HEADER, header)
            if m is None or not m.group("name"):
                hint = ""
                bad = re.fullmatch(r"\[\s*([^\]]+?)\s*\]\s*[=:]\s*(.*)", header)
                if bad:
                    hint = f"; did you mean '{bad.group(1)} = {bad.group(2)}' under [global]?"
                problems.append(
                    RcFileError(f"{where}: malformed section header {stripped!r}{hint}", origin=origin)
                )
                broken = True
                continue
            section, broken = m.group("name"), False
            if section in seen_sections:
                problems.append(RcFileError(
                    f"{where}: section [{section}] appears again (first at line "
                    f"{seen_sections[section]}); merge the two",
                    origin=origin,
                ))  # fmt: skip
                continue
            seen_sections[section] = lineno
            continue
        if broken:
            continue
        m = re.fullmatch(_OPTION, stripped)
        if m is None or not m.group("key"):
            problems.append(RcFileError(
                f"{where}: cannot read {stripped!r}; expected 'name = value', a [section] "
                "header or a # comment",
                origin=origin,
            ))  # fmt: skip
            continue
        key = m.group("key")
        if section is None:
            problems.append(RcFileError(
                f"{where}: {key!r} comes before any [section] header; put it under [global]",
                origin=origin,
            ))  # fmt: skip
            continue
        folded = (section, key.lower())
        if folded in seen_keys:
            problems.append(RcFileError(
                f"{where}: {key!r} is set twice in [{section}] (first at line {seen_keys[folded]}); keep one",
                origin=origin,
            ))  # fmt: skip
            continue
        seen_keys[folded] = lineno
        entries.append((section, key, [_strip_comment(m.group("value")).strip()], lineno))
        open_indent = indent
    raw: dict[str, dict[str, str]] = {}  # section -> key -> value as written
    for section, key, parts, _ in entries:
        raw.setdefault(section, {})[key.lower()] = " ".join(p for p in parts if p)
    settings = []
    for section, key, parts, lineno in entries:
        value = " ".join(p for p in parts if p)
        if "%" in value:
            names = {**(defaults or {}), **raw[section]}
            try:
                value = _Expansion(names).expand(value, 0)
            except _Unfilled:
                pass  # kept as written, as Theano did (compiledir_format's %(platform)s is PyTensor's)
            except _TooLarge as exc:
                problems.append(RcFileError(
                    f"{path}:{lineno}: {key} {exc}; interpolation (%(name)s) stops at "
                    f"{INTERPOLATION_DEPTH} levels and {INTERPOLATED_SIZE:,} characters",
                    origin=Origin(Layer.RC, path, lineno),
                ))  # fmt: skip
                continue
        settings.append(Setting(key, unwrap_quotes(value), Origin(Layer.RC, path, lineno), section=section))
    if problems:
        error: ConfigError = problems[0] if len(problems) == 1 else RcFileErrors(problems)
        error.settings = settings  # type: ignore[attr-defined]
        raise error
    return settings


INTERPOLATION_DEPTH = 10  # configparser's own limit
INTERPOLATED_SIZE = 64 << 10  # characters a value may grow to; the longest real value is a path list


class _Unfilled(Exception):
    """A placeholder no name fills: the value is kept as written."""


class _TooLarge(Exception):
    """The expansion goes deeper or grows larger than the bounds."""


class _Expansion:
    """``%(name)s`` filled in from the defaults and the section, as configparser does, with each
    name expanded once (a file whose values refer to each other ten-fold, nine deep, would
    otherwise expand to 10**9 copies) and bounded in depth and size."""

    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names
        self.done: dict[str, str] = {}

    def expand(self, value: str, depth: int) -> str:
        if depth > INTERPOLATION_DEPTH:
            raise _TooLarge(f"refers to values more than {INTERPOLATION_DEPTH} levels deep")
        out: list[str] = []
        size = 0
        end = 0
        for found in re.finditer(r"%\((\w+)\)s|%%|%", value):  # left to right, as configparser
            literal = value[end : found.start()]
            end = found.end()
            out.append(literal)
            size += len(literal)
            name = found.group(1)
            if found.group() == "%%":
                out.append("%")
                size += 1
            elif not name:
                raise _Unfilled("%")  # a % configparser refuses ('50%', '%(x)'): kept as written
            else:
                key = name.lower()
                if key not in self.names:
                    raise _Unfilled(name)
                if key not in self.done:
                    self.done[key] = self.expand(self.names[key], depth + 1)
                out.append(self.done[key])
                size += len(self.done[key])
            if size > INTERPOLATED_SIZE:
                raise _TooLarge(f"grows past {INTERPOLATED_SIZE:,} characters when expanded")
        out.append(value[end:])
        if size + len(value) - end > INTERPOLATED_SIZE:  # the text after the last reference counts too
            raise _TooLarge(f"grows past {INTERPOLATED_SIZE:,} characters when expanded")
        return "".join(out)


_TOML_LINE = r"\s*(?P<header>\[\s*(?P<table>[^\[\]]+?)\s*\])|\s*(?P<key>[^=#\[]+?)\s*="


def _toml_lines(text: str) -> dict[str, int]:
    """Dotted key -> line, found by a light scan (tomllib gives no positions)."""
    lines: dict[str, int] = {}
    table = ""
    for lineno, line in enumerate(text.splitlines(), 1):
        m = re.match(_TOML_LINE, line)
        if m is None:
            continue
        if m.group("header"):
            table = _toml_key(m.group("table"))
        else:
            key = _toml_key(m.group("key"))
            lines.setdefault(f"{table}.{key}" if table else key, lineno)
    return lines


def _toml_key(raw: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in raw.split("."))


def ini_text(value: str) -> str | None:
    """``value`` written as an INI rc file holds it: :func:`read_ini` reads the text back as
    exactly ``value``. A ``%`` is doubled (the reader interpolates ``%(name)s``) and a value wrapped
    whole in quotes is quoted once more (the reader takes one pair off, as Theano's did). None
    where INI cannot hold the value (a line break, a `` #`` comment, a leading ``#``, blanks at
    either end): a TOML rc file holds any text."""
    from modecfg.configuration.flagstring import unwrap_quotes

    text = value
    if unwrap_quotes(value) != value:
        text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    text = text.replace("%", "%%")
    try:
        settings = read_ini(f"[global]\nvalue = {text}\n", "<a value>")
    except ConfigError:
        return None
    return text if [s.raw for s in settings] == [value] else None


def read_toml(text: str, path: str) -> list[Setting]:
    """The settings of a TOML rc file: top-level keys and tables (``[traceback] limit = -1``).

    A top-level ``[global]`` table holds plain flags, as in INI files. Values keep their
    TOML types, so that a wrong type is reported as such.
    """
    import tomllib

    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise RcFileError(f"{path}: invalid TOML: nested too deeply", origin=Origin(Layer.RC, path)) from None
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        line = int(m.group(1)) if m else None
        where = f"{path}:{line}" if line else path
        raise RcFileError(f"{where}: invalid TOML: {exc}", origin=Origin(Layer.RC, path, line)) from None
    lines = _toml_lines(text)
    settings: list[Setting] = []

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for key, value in node.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(value, "" if name == "global" else name)
            else:
                line = lines.get(name) or lines.get(f"global.{name}")
                settings.append(Setting(name, value, Origin(Layer.RC, path, line), typed=True))

    try:
        walk(data, "")
    except RecursionError:
        raise RcFileError(
            f"{path}: tables nested too deeply to be configuration", origin=Origin(Layer.RC, path)
        ) from None
    return settings
