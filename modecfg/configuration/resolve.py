"""Merge the layers: raw settings in, typed values with their provenance out.

``gather(env, rc_files)`` asks every source for its settings in the order of
:data:`~modecfg.configuration.origin.PRECEDENCE` (rc files, then the flag variables, each row's in its
order). ``resolve(settings)`` turns each into a typed :class:`Candidate` for its flag, kept in
that order (:func:`ranked`); the last candidate of a flag wins. Problems are collected, not
raised, so that one pass reports them all; obsolete flags become notes for
:class:`~modecfg.errors.ObsoleteFlagWarning`. A name that none of the flags resolved against
has, but that the installed PyTensor declares (read from its source, never imported), is
PyTensor's (``for_pytensor``), handed to it as written, not refused. The same sources give
the same result before and after that import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from modecfg._record import Record
from modecfg.configuration import sources
from modecfg.configuration.flags import Flag, FlagSet, canonical, declared, may_be_pytensors, written_name
from modecfg.configuration.origin import PRECEDENCE, Layer, Origin, Setting
from modecfg.errors import ConfigError, FlagValueError, UnknownFlagError, shown

__all__ = ["Candidate", "Note", "Resolution", "gather", "ranked", "resolve", "value_error"]


class Candidate(Record):
    """A typed value one layer gave a flag, with the text it came from."""

    value: Any
    raw: object
    origin: Origin


class Note(Record):
    """An obsolete flag or value: accepted, and warned about once."""

    flag: str
    message: str
    origin: Origin

    def __str__(self) -> str:
        return f"{self.message} (from {self.origin})"


class Resolution:
    """What resolving a set of sources found: candidates per flag (lowest first), notes,
    errors, and the variables and files read."""

    __slots__ = ("candidates", "errors", "for_pytensor", "notes", "read")

    def __init__(self, errors: list[ConfigError] | None = None, read: list[str] | None = None) -> None:
        self.candidates: dict[str, list[Candidate]] = {}
        # settings naming flags of PyTensor's that modecfg does not declare: PyTensor's own
        self.for_pytensor: list[Setting] = []
        self.notes: list[Note] = []
        self.errors: list[ConfigError] = errors if errors is not None else []
        self.read: list[str] = read if read is not None else []


def gather(
    env: Mapping[str, str], rc_files: Sequence[str] | None = None
) -> tuple[list[Setting], list[ConfigError], list[str]]:
    """Every setting from rc files and environment variables, read in :data:`PRECEDENCE`'s order."""
    settings: list[Setting] = []
    errors: list[ConfigError] = []
    read: list[str] = []

    def take(name: str, found: Callable[[], Iterable[Setting]]) -> None:
        try:
            settings.extend(found())
            read.append(name)
        except ConfigError as exc:  # an rc file's every problem, and its readable values to check too
            errors.extend(getattr(exc, "errors", None) or [exc])
            settings.extend(getattr(exc, "settings", ()))

    for row in PRECEDENCE:  # defaults, assignments and overrides read no outside place
        if row.layer is Layer.RC:
            if rc_files is None:
                rcs = sources.find_rc_files(env)
            else:
                rcs = [sources.RcFile(str(p), named_by="rc_files") for p in rc_files]
            for rc in rcs:
                take(rc.path, partial(sources.read_rc, rc, env))
        elif row.layer is Layer.ENV:
            for var in row.reads:
                if env.get(var):
                    take(var, partial(sources.env_settings, {var: env[var]}))
    return settings, errors, read


def ranked(candidates: list[Candidate]) -> list[Candidate]:
    """``candidates`` in :data:`PRECEDENCE`'s order, the winner last; those of one layer keep
    their order (a later file, a later variable, wins)."""
    return sorted(candidates, key=lambda c: c.origin.layer.rank)


def resolve(
    settings: Iterable[Setting], into: Resolution | None = None, flags: FlagSet | None = None
) -> Resolution:
    """Typed candidates for every setting among ``flags`` (None: those declared now); problems
    and notes collected in the result."""
    res = into if into is not None else Resolution()
    flags = declared() if flags is None else flags
    for setting in settings:
        try:
            # did-you-mean costs a millisecond a name: a file of 50,000 unknown names took a minute
            found = candidate(setting, res.notes, len(res.errors) < _SUGGESTED, flags)
        except UnknownFlagError as exc:
            if may_be_pytensors(canonical(exc.flag or "")):
                res.for_pytensor.append(setting)
            else:
                res.errors.append(exc)
            continue
        except ConfigError as exc:
            res.errors.append(exc)
            continue
        if found is not None:
            spec, cand = found
            res.candidates.setdefault(spec.name, []).append(cand)
    for name, each in res.candidates.items():
        res.candidates[name] = ranked(each)
    return res


_SUGGESTED = 50  # unknown names that get a did-you-mean in one pass; the rest are named only


def candidate(
    setting: Setting, notes: list[Note], suggest: bool = True, flags: FlagSet | None = None
) -> tuple[Flag, Candidate] | None:
    """The flag and typed value of one setting; None for an obsolete flag (noted)."""
    flags = declared() if flags is None else flags
    origin = setting.origin
    spec = flags.get(canonical(written_name(setting.key, setting.section)))
    if spec is None:  # not a flag's own name: compat says what it is (loaded at the first such)
        from modecfg.configuration.compat import lookup

        info = lookup(setting.key, section=setting.section, suggest=suggest, flags=flags)
        if info.flag is None:
            if info.obsolete is not None:
                notes.append(Note(info.obsolete, f"{info.written} is obsolete: {info.message}", origin))
                return None
            raise unknown_flag(info.written, origin, info.suggestions, info.message)
        spec = info.flag
    raw = setting.raw
    if origin.layer is Layer.ENV and isinstance(raw, str) and not setting.quoted:
        _check_swallowed(spec, raw, origin, flags)
    from modecfg.configuration.schema import validate  # (loaded at the first setting read)

    try:
        value = validate(spec, raw, toml=setting.typed)
    except ValueError as exc:
        raise value_error(spec, setting.raw, origin, str(exc)) from None
    return spec, Candidate(value, setting.raw, origin)


def unknown_flag(
    written: str, origin: Origin | None, suggestions: Sequence[str] = (), hint: str = ""
) -> UnknownFlagError:
    where = f" (from {origin})" if origin is not None and origin.source is not None else ""
    parts = [f"unknown flag {shown(written)}{where}"]
    if hint:
        parts.append(hint)
    if suggestions:
        parts.append("did you mean " + " or ".join(suggestions) + "?")
    return UnknownFlagError("; ".join(parts), flag=written, origin=origin, suggestions=suggestions)


def value_error(spec: Flag, raw: object, origin: Origin | None, reason: str) -> FlagValueError:
    """A FlagValueError naming the flag, the value, its origin, the reason and what is valid."""
    choices = spec.choices()
    where = f" (from {origin})" if origin is not None else ""
    msg = f"{spec.name}={shown(raw)}{where}: {reason}"
    if choices:
        msg += "; valid choices: " + ", ".join(choices)
        if isinstance(raw, str):
            import difflib

            close = difflib.get_close_matches(raw.strip(), choices, n=1, cutoff=0.6)
            if not close:
                close = [c for c in choices if c.lower() == raw.strip().lower()]
            if close:
                msg += f"; did you mean {close[0]!r}?"
    if isinstance(raw, str) and re.search(_FLAG_LIKE, raw):
        msg += "; flags are separated by commas, not spaces"
    return FlagValueError(msg, flag=spec.name, origin=origin, value=raw, choices=choices)


_FLAG_LIKE = r"\s([A-Za-z_][\w.]*)="  # compiled on first use (start-up)


def _check_swallowed(spec: Flag, raw: str, origin: Origin, flags: FlagSet) -> None:
    """A flag string value that holds another flag: a space was used instead of a comma."""
    if "=" not in raw:  # (most values: the pattern is not compiled, ~0.2 ms of the import)
        return
    for m in re.finditer(_FLAG_LIKE, raw):
        name = m.group(1).replace("__", ".")
        if name in flags and spec.choices() == ():
            raise FlagValueError(
                f"{spec.name}={raw!r} (from {origin}) contains {name}=..., which looks like a "
                "second flag; flags are separated by commas, not spaces",
                flag=spec.name,
                origin=origin,
                value=raw,
            )
