"""Turn a legacy .theanorc or THEANO_FLAGS string into its modern equivalent.

Each setting is read as the resolver reads it: known flags keep their (normalised)
value under their modern name, obsolete flags are dropped with the reason, and
unknown flags or bad values are reported as errors, never guessed at.

A value keeps its meaning in the format written, or the flag is refused with the reason: a path
keeps its ``~`` (every format expands it when read, for whoever reads it); a value with INI
interpolation that differs by user or process (``%(user)s``, ``%(tmpdir)s``, ...) is written to
INI only, since a TOML file or a flag string would hold one literal value for everyone; a ``%``
meant literally is written ``%%`` in INI. The keys of ``compiledir_format`` (``%(platform)s``,
``%(hostname)s``, modecfg's ``%(cpu_features)s`` and ``%(job)s``) are kept as written in every
format: PyTensor and modecfg fill them when the flag is read, on the reader's host and job
(never the values of the machine that migrated the file).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from modecfg.configuration.flags import FLAGS
from modecfg.configuration.flagstring import format_flags
from modecfg.configuration.flagstring import parse as parse_flag_string
from modecfg.configuration.origin import Layer, Setting
from modecfg.configuration.partition import filled_when_read
from modecfg.configuration.rcformats import ini_text, interpolation_defaults, read_ini, read_toml
from modecfg.configuration.resolve import Note, candidate
from modecfg.configuration.sources import RcFile, read_text
from modecfg.errors import ConfigError, RcFileError

__all__ = ["Migration", "migrate_file", "migrate_flags"]


class Migration:
    """The modern flags of a legacy configuration, with what changed and what failed."""

    def __init__(self) -> None:
        self.flags: dict[str, Any] = {}  # dotted name -> typed value
        self.dropped: list[Note] = []  # obsolete flags, with what replaced them
        self.changed: list[Note] = []  # renamed flags and rewritten values
        self.errors: list[ConfigError] = []
        # flags whose value holds INI interpolation that differs by user or process: INI only
        self.ini_only: dict[str, RcFileError] = {}
        # flags whose value an INI file cannot hold (a line break, a comment's " #"): TOML and flags only
        self.not_ini: dict[str, RcFileError] = {}

    def refused(self, fmt: str) -> list[ConfigError]:
        """The flags left out of ``fmt`` (``ini``, ``toml``, ``flags``), each with why."""
        return list((self.not_ini if fmt == "ini" else self.ini_only).values())

    def render(self, fmt: str) -> str:
        """The text in ``fmt``: ``ini``, ``toml`` or ``flags`` (a line)."""
        if fmt == "flags":
            return self.to_flags() + "\n"
        return self.to_toml() if fmt == "toml" else self.to_ini()

    def to_flags(self) -> str:
        flags = self._portable()
        return format_flags((name, flags[name]) for name in FLAGS if name in flags)

    def to_ini(self) -> str:
        lines = []
        held = {name: value for name, value in self.flags.items() if name not in self.not_ini}
        for section, items in _grouped(held).items():
            lines.append(f"[{section}]")
            for key, value in items:
                name = key if section == "global" else f"{section}.{key}"
                text = str(value) if name in self.ini_only else _ini_literal(value)
                lines.append(f"{key} = {text}")
            lines.append("")
        return "\n".join(lines)

    def _portable(self) -> dict[str, Any]:
        return {name: value for name, value in self.flags.items() if name not in self.ini_only}

    def to_toml(self) -> str:
        lines = []
        for section, items in _grouped(self._portable()).items():
            if section != "global":
                lines.append(f"\n[{section}]")
            lines += [f"{key} = {_toml(value)}" for key, value in items]
        return "\n".join(lines).lstrip("\n") + "\n"


def _grouped(flags: dict[str, Any]) -> dict[str, list[tuple[str, Any]]]:
    groups: dict[str, list[tuple[str, Any]]] = {"global": []}
    for name in FLAGS:  # declaration order, stable output
        if name in flags:
            section, _, key = name.rpartition(".")
            groups.setdefault(section or "global", []).append((key, flags[name]))
    return {k: v for k, v in groups.items() if v}


def _ini_literal(value: Any) -> str:
    """``value`` as an INI file holds it (:func:`~modecfg.configuration.rcformats.ini_text`: a ``%``
    written ``%%``, a value wrapped whole in quotes quoted once more)."""
    text = str(value)
    return text if isinstance(value, bool) else ini_text(text) or text.replace("%", "%%")


# INI's own names, filled when the file is read: another user or process reads another value
_PER_READER = tuple(f"%({name})s" for name in interpolation_defaults({}))


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    import json

    return json.dumps(str(value))


def _migrate(settings: Iterable[Setting], migration: Migration) -> Migration:
    for setting in settings:
        notes: list[Note] = []
        try:
            found = candidate(setting, notes)
        except ConfigError as exc:
            migration.errors.append(exc)
            continue
        if found is None:
            migration.dropped += notes
            continue
        spec, cand = found
        migration.changed += notes
        if spec.name != setting.name:
            migration.changed.append(
                Note(spec.name, f"{setting.name} is now spelled {spec.name}", setting.origin)
            )
        raw = setting.raw
        value = cand.value
        if isinstance(raw, str) and isinstance(value, str) and filled_when_read(raw):
            value = raw.strip()  # %(cpu_features)s, %(job)s: filled for whoever reads it, on their host
        if not notes and isinstance(raw, str) and isinstance(value, str) and value != raw.strip():
            migration.changed.append(
                Note(spec.name, f"{spec.name}={raw} is now written {spec.name}={value}", setting.origin)
            )
        if isinstance(value, Path) and isinstance(raw, str):
            value = raw.strip()  # as written: '~' is expanded when read, for whoever reads it
        migration.flags[spec.name] = value  # a later duplicate wins
        migration.ini_only.pop(spec.name, None)
        migration.not_ini.pop(spec.name, None)
        if not isinstance(value, bool) and ini_text(str(value)) is None:
            migration.not_ini[spec.name] = RcFileError(
                f"{setting.origin}: {spec.name} = {value!r}: an INI value cannot hold a line break or a "
                "' #' (a comment starts there), nor start with '#' or start or end with blanks: left out "
                "of INI. Keep it in a TOML rc file (modecfg migrate FILE --to toml), which holds any text",
                origin=setting.origin,
            )
        if isinstance(value, str) and setting.section is not None and any(p in value for p in _PER_READER):
            placeholder = next(p for p in _PER_READER if p in value)
            migration.ini_only[spec.name] = RcFileError(
                f"{setting.origin}: {spec.name} = {value}: {placeholder} is INI interpolation, filled when "
                "the file is read (each user's or process's own value); a TOML file or a flag string "
                "has none, so it would be one literal value for everyone: left out. Keep it in an INI "
                "rc file (modecfg migrate FILE --to ini), or write the value it should be",
                origin=setting.origin,
            )
    return migration


def migrate_flags(text: str, source: str = "THEANO_FLAGS") -> Migration:
    """Migrate a flag string."""
    migration = Migration()
    try:
        settings = parse_flag_string(text, source=source, layer=Layer.ENV)
    except ConfigError as exc:
        migration.errors.append(exc)
        return migration
    return _migrate(settings, migration)


def migrate_file(path: str | Path) -> Migration:
    """Migrate an rc file (INI, or TOML by its suffix)."""
    migration = Migration()
    name = os.fspath(path)
    try:
        text = read_text(RcFile(name, named_by="the command line"))
        if name.endswith(".toml"):
            settings = read_toml(text, name)
        else:
            # %(user)s and friends are kept as written: the new file interpolates them itself.
            settings = read_ini(text, name, None)
    except ConfigError as exc:
        migration.errors.append(exc)
        return migration
    return _migrate(settings, migration)
