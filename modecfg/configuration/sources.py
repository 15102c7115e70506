"""Read the places configuration comes from and return raw settings with their origin.

A source reads one place: an environment flag string, an INI rc file (``.theanorc``)
or a TOML rc file. It does not know the flags, merge layers or apply defaults; that
is :mod:`modecfg.configuration.resolve`'s job. Every problem is a
:class:`~modecfg.errors.RcFileError` or :class:`~modecfg.errors.FlagSyntaxError` that
names the file and line or the variable.

Here: which variables and files are read, and their text. The two formats' readers are in
:mod:`modecfg.configuration.rcformats` (loaded at the first rc file with text to read), the
flag strings' in :mod:`modecfg.configuration.flagstring` (at the first variable set).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

from modecfg._files import NotReadable, read_regular_file
from modecfg._record import Record
from modecfg.configuration.origin import Layer, Origin, Setting, rung
from modecfg.errors import RcFileError

__all__ = [
    "DEFAULT_RC_FILES",
    "ENV_FLAG_VARS",
    "LEGACY_FLAG_VARS",
    "LEGACY_RC_FILES",
    "RC_PATH_VARS",
    "RcFile",
    "env_settings",
    "find_rc_files",
    "read_rc",
    "read_text",
]

# Lowest precedence first, as modecfg.configuration.origin.PRECEDENCE states them. The legacy ones
# (Theano's, Aesara's) are what `modecfg migrate` turns into the modern form.
ENV_FLAG_VARS = rung(Layer.ENV).reads
RC_PATH_VARS = rung(Layer.RC).named_by
DEFAULT_RC_FILES = rung(Layer.RC).reads
LEGACY_FLAG_VARS = tuple(var for var in ENV_FLAG_VARS if var.startswith(("THEANO", "AESARA")))
LEGACY_RC_FILES = tuple(path for path in DEFAULT_RC_FILES if path.startswith(("~/.theano", "~/.aesara")))


def env_settings(env: Mapping[str, str]) -> Iterator[Setting]:
    """The settings of every flag variable in ``env``, lowest precedence first."""
    for var in ENV_FLAG_VARS:
        text = env.get(var)
        if text:  # (the flag strings' parser is loaded at the first variable set)
            from modecfg.configuration.flagstring import parse as parse_flag_string

            yield from parse_flag_string(text, source=var, layer=Layer.ENV)


class RcFile(Record):
    """An rc file to read: a path, or text pasted into an rc variable instead of a path."""

    path: str
    named_by: str | None = None  # the variable that named it; None for a default file
    text: str | None = None  # inline text (then ``path`` is a display name)
    problem: str = ""  # why the path cannot be a file name (said when it is read)


def _looks_like_content(value: str) -> bool:
    return "\n" in value or value.lstrip().startswith("[")


def _expand(part: str, env: Mapping[str, str]) -> tuple[str, str]:
    """The absolute path of an rc file name, and why there is none ('' if there is)."""
    part = part.strip()
    if part.startswith("~") and (len(part) == 1 or part[1] in "/\\"):
        home = env.get("HOME") or env.get("USERPROFILE") or ""
        if not os.path.isabs(home):  # an empty or relative HOME is no home
            return part, "starts with ~ and there is no home directory (HOME is unset, empty or relative)"
        part = home + part[1:]
    if os.path.isabs(part):
        return os.path.normpath(part), ""
    try:
        return os.path.abspath(part), ""
    except OSError:  # the working directory was removed (rm -rf build && cd -)
        return part, "is relative, and the working directory no longer exists"


def find_rc_files(env: Mapping[str, str]) -> list[RcFile]:
    """The rc files to read, lowest precedence first.

    The path lists in THEANORC, AESARARC, PYTENSORRC and MODECFGRC (``os.pathsep``
    separated; a file on the right overrides one on the left) when any is set, else
    the default files that exist. A named file that does not exist is an error later,
    when it is read, and so is a default path that exists but is no file; a missing
    default file is simply not there.
    """
    named: list[RcFile] = []
    any_set = False
    for var in RC_PATH_VARS:
        value = env.get(var)
        if value is None:
            continue
        any_set = True
        if _looks_like_content(value):
            named.append(RcFile(f"${var} (inline text)", named_by=var, text=value))
            continue
        for part in value.split(os.pathsep):
            if "\0" in part:
                named.append(RcFile(part.replace("\0", "\\0"), named_by=var, problem="contains a NUL byte"))
            elif part.strip():
                path, problem = _expand(part, env)
                named.append(RcFile(path, named_by=var, problem=problem))
    if any_set:
        return named
    found = []
    for default in DEFAULT_RC_FILES:
        path, problem = _expand(default, env)
        # A default path that is there but is no file (a directory) is read, and said.
        if not problem and os.path.lexists(path):
            found.append(RcFile(path))
    return found


def read_rc(rc: RcFile, env: Mapping[str, str]) -> list[Setting]:
    """The settings of one rc file, INI or (by its ``.toml`` suffix) TOML."""
    text = rc.text if rc.text is not None else read_text(rc)
    if not text:  # nothing to parse (PYTENSORRC=/dev/null, an empty file): no reader loaded
        return []
    from modecfg.configuration import rcformats

    if rc.path.endswith(".toml"):
        return rcformats.read_toml(text, rc.path)
    return rcformats.read_ini(text, rc.path, rcformats.interpolation_defaults(env))


RC_FILE_LIMIT = 4 << 20  # bytes; the largest public .theanorc we know is a few kilobytes


def read_text(rc: RcFile) -> str:
    """The text of an rc file; RcFileError if it is missing, unreadable or not UTF-8."""
    named = f" (named by {rc.named_by})" if rc.named_by else ""
    origin = Origin(Layer.RC, rc.path)
    if rc.problem:
        raise RcFileError(f"rc file path {rc.path!r}{named} {rc.problem}: not a file name", origin=origin)
    if os.path.abspath(rc.path) == os.devnull:  # the usual way to say "no rc file" (PYTENSORRC=/dev/null)
        return ""
    try:
        data = read_regular_file(rc.path, limit=RC_FILE_LIMIT)
    except NotReadable as exc:
        reason = "is a directory, not a file" if exc.reason.startswith("is a directory") else exc.reason
        raise RcFileError(
            f"rc file {rc.path}{named} {reason}: rename it, or choose the rc files to read with MODECFGRC",
            origin=origin,
        ) from None
    except FileNotFoundError:
        if os.path.islink(rc.path):
            target = os.readlink(rc.path)
            raise RcFileError(
                f"rc file {rc.path}{named} is a link to {target}, which does not exist", origin=origin
            ) from None
        raise RcFileError(f"rc file {rc.path}{named} does not exist", origin=origin) from None
    except OSError as exc:
        raise RcFileError(f"rc file {rc.path}{named} cannot be read: {exc.strerror}", origin=origin) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RcFileError(
            f"{rc.path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
            origin=Origin(Layer.RC, rc.path, line),
        ) from None
