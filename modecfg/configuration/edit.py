"""Editing rc files in place: ``modecfg set FLAG VALUE`` and ``modecfg unset FLAG``.

Every other byte of the file stays as it was: comments, order, blank lines, spacing,
sections modecfg does not know. The value is checked before anything is written, and
the file that would be written is read back with modecfg's own reader and must give the
flag that value and no problem, else nothing changes. INI files are edited line by line
(modecfg's reader gives the line of every setting); TOML files with tomlkit, which keeps
a document's formatting when it changes a value.

Writing is atomic: a temporary file in the same directory, written and fsynced, given
the old file's permissions, then renamed over it (and the directory fsynced). The old
file is kept as ``FILE.bak``, put in place the same way. A process killed at any moment
leaves the old file or the new one, never a part of either.

Edits of one file are serialised: the read-modify-replace holds an exclusive ``flock``
on the file's directory (no lock file is left behind), and an edit that has to wait says
so (a warning of the ``modecfg.config`` logger). A symbolic link is edited through: its
target changes, the link stays. A UTF-8 byte order mark is kept. A file the user could
not write is not replaced (in a directory others may write, a rename could give it away).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from modecfg._files import NotReadable, read_regular_file
from modecfg._record import Record
from modecfg.configuration.compat import canonical, lookup
from modecfg.configuration.flags import Flag
from modecfg.configuration.origin import Layer, Origin
from modecfg.configuration.rcformats import ini_text, read_ini, read_toml
from modecfg.configuration.resolve import unknown_flag, value_error
from modecfg.configuration.schema import validate
from modecfg.configuration.sources import RC_FILE_LIMIT, find_rc_files
from modecfg.errors import ConfigError, RcFileError

__all__ = [
    "Edit",
    "default_rc_file",
    "edit_lock",
    "edit_target",
    "set_flag",
    "unset_flag",
    "write_atomically",
    "write_bytes",
]


class Edit(Record):
    """What an edit did."""

    path: str
    flag: str
    value: Any  # None for unset
    changed: bool  # False: the file already said so
    backup: str | None
    line: int | None  # where the flag is now (set) or was (unset)


def _spec(name: str) -> Flag:
    info = lookup(name)
    if info.flag is None:
        if info.obsolete is not None:
            raise unknown_flag(
                info.written,
                None,
                (),
                f"it is obsolete: {info.message} (modecfg unset {info.obsolete} removes it from a file)",
            )
        raise unknown_flag(info.written, None, info.suggestions, info.message)
    return info.flag


class _Name(Record):
    """What an edit finds in a file: a flag, or a name that is none (obsolete or unknown), which
    ``unset`` removes (it is the fix for one)."""

    name: str  # the flag's name, an obsolete flag's canonical name, or the name as written
    section: tuple[str, ...]
    attr: str


def _name(spec: Flag) -> _Name:
    return _Name(spec.name, tuple(spec.section), spec.attr)


def _any_name(written: str) -> tuple[_Name, Flag | None, Any]:
    """The name ``written`` stands for, its flag if it is one, and what the lookup found."""
    info = lookup(written, suggest=False)
    if info.flag is not None:
        return _name(info.flag), info.flag, info
    name = info.obsolete or canonical(written)
    *section, attr = name.split(".")
    return _Name(name, tuple(section), attr), None, info


def default_rc_file(flag: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The file an edit goes to: the rc file that sets ``flag`` now (the last, which wins),
    else the first existing rc file, else ``~/.theanorc``."""
    env = os.environ if env is None else env
    files = [
        rc for rc in find_rc_files(env) if rc.text is None and not rc.problem and os.path.isfile(rc.path)
    ]
    if flag is not None:
        name = _any_name(flag)[0].name
        for rc in reversed(files):
            if any(_name_of(s) == name for s in _read(rc.path)):
                return rc.path
    if files:
        return files[0].path
    home = env.get("HOME") if "HOME" in env else os.path.expanduser("~")
    if not home or not os.path.isabs(home):  # HOME="" made Python's expanduser answer '/'
        raise RcFileError(
            f"no rc file to edit: there is no home directory for ~/.theanorc (HOME is "
            f"{'empty' if home == '' else repr(home) + ', relative'}); name the file with --file"
        )
    return os.path.join(home, ".theanorc")


def _read(path: str) -> list[Any]:
    with open(path, encoding="utf-8-sig") as fh:
        text = fh.read()
    return read_toml(text, path) if path.endswith(".toml") else read_ini(text, path)


def _name_of(setting: Any) -> str:
    """The name a setting sets: its flag's, an obsolete flag's canonical one, or as written."""
    info = lookup(setting.key, section=setting.section, suggest=False)
    if info.flag is not None:
        return info.flag.name
    return info.obsolete or canonical(setting.name)


# -- INI ----------------------------------------------------------------------------------

_VALUE = re.compile(r"^(?P<head>\s*[^=:#;\s][^=:]*?\s*[=:][ \t]*)(?P<value>.*?)(?P<tail>[ \t]+[#;].*)?$")


def _ini_text(value: str) -> str:
    """``value`` as an INI rc file holds it; one INI cannot hold is written as it is, and the
    read-back (:func:`_check`) refuses the edit, saying why."""
    return ini_text(value) or value.replace("%", "%%")


def _ini_lines(text: str, path: str, name: str) -> list[int]:
    """The lines (1-based) of the settings of ``name`` in an INI text: a flag's, or those of a name
    that is no flag, matched as INI reads option names, without regard to case."""
    settings = read_ini(text, path)
    found = [s.origin.line or 0 for s in settings if _name_of(s) == name]
    if found or lookup(name, suggest=False).flag is not None:
        return found
    folded = name.lower()
    return [s.origin.line or 0 for s in settings if _name_of(s).lower() == folded and _flag_of(s) is None]


def _flag_of(setting: Any) -> Flag | None:
    return lookup(setting.key, section=setting.section, suggest=False).flag


def _ini_set(text: str, path: str, spec: Flag, value: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    found = _ini_lines(text, path, spec.name)
    if found:
        for number in found:
            line = lines[number - 1]
            body = line.rstrip()  # blanks after the value stay where they are, as the line ending does
            ending = line[len(body) :]
            m = _VALUE.match(body)
            assert m is not None, (path, number)  # the reader read this line as name = value
            lines[number - 1] = f"{m['head']}{_ini_text(value)}{m['tail'] or ''}{ending}"
        return "".join(lines), found[-1]
    section = ".".join(spec.section) or "global"
    key = spec.attr
    header = re.compile(rf"^\s*\[\s*{re.escape(section)}\s*\]\s*([#;].*)?$")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += newline
    if start is None:  # a new section at the end
        gap = [newline] if lines and lines[-1].strip() else []
        lines += [*gap, f"[{section}]{newline}", f"{key} = {_ini_text(value)}{newline}"]
        return "".join(lines), len(lines)
    end = start + 1  # after the section's last setting (a comment before the next header is its)
    for i in range(start + 1, len(lines)):
        if re.match(r"^\s*\[", lines[i]):
            break
        if lines[i].strip() and not lines[i].lstrip().startswith(("#", ";")):
            end = i + 1
    lines.insert(end, f"{key} = {_ini_text(value)}{newline}")
    return "".join(lines), end + 1


def _ini_unset(text: str, path: str, spec: _Name) -> tuple[str, int | None]:
    lines = text.splitlines(keepends=True)
    found = _ini_lines(text, path, spec.name)
    for number in reversed(found):
        indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
        stop = number  # continuation lines: indented deeper, not blank
        while (
            stop < len(lines)
            and lines[stop].strip()
            and len(lines[stop]) - len(lines[stop].lstrip()) > indent
        ):
            stop += 1
        del lines[number - 1 : stop]
    return "".join(lines), (found[0] if found else None)


# -- TOML ---------------------------------------------------------------------------------


def _toml_set(text: str, spec: Flag, typed: Any) -> tuple[str, None]:
    import tomlkit

    doc = tomlkit.parse(text)
    value = typed if isinstance(typed, bool | int | float | str) else str(typed)
    node: Any = doc
    for part in spec.section:
        if part not in node:
            node[part] = tomlkit.table()
        node = node[part]
    if spec.attr in node:  # in place: its comment and spacing stay
        old = node.item(spec.attr)  # documents, tables and inline tables alike
        new = tomlkit.item(value)
        new.trivia.indent, new.trivia.comment_ws = old.trivia.indent, old.trivia.comment_ws
        new.trivia.comment, new.trivia.trail = old.trivia.comment, old.trivia.trail
        node[spec.attr] = new
        _toml_unset_in(doc, _name(spec), keep=node)
    else:
        _toml_unset_in(doc, _name(spec))  # written elsewhere ([global], a quoted dotted key): moved here
        node[spec.attr] = value
    return tomlkit.dumps(doc), None


def _toml_unset_in(doc: Any, spec: _Name, keep: Any = None) -> bool:
    removed = False
    for holder_path in (spec.section, ("global", *spec.section)):
        node: Any = doc
        for part in holder_path:  # a name holding a value where a table would be holds no flag
            node = node.get(part) if isinstance(node, MutableMapping) else None
        if isinstance(node, MutableMapping) and node is not keep and spec.attr in node:
            del node[spec.attr]
            removed = True
    if spec.section and spec.name in doc:  # "traceback.limit" = ... as a quoted top-level key
        del doc[spec.name]
        removed = True
    return removed


def _toml_unset(text: str, spec: _Name) -> tuple[str, int | None]:
    import tomlkit

    doc = tomlkit.parse(text)
    return (tomlkit.dumps(doc), 0) if _toml_unset_in(doc, spec) else (text, None)


# -- the edits ------------------------------------------------------------------------------


_BOM = b"\xef\xbb\xbf"


def _current(path: str) -> tuple[str, bytes]:
    """The file's text and the byte order mark it starts with (b'' if none, or no file)."""
    origin = Origin(Layer.RC, path)
    try:
        data = read_regular_file(path, limit=RC_FILE_LIMIT)
    except FileNotFoundError:
        return "", b""
    except NotReadable as exc:
        reason = "is a directory, not an rc file" if exc.reason.startswith("is a directory") else exc.reason
        raise RcFileError(f"{path} {reason}", origin=origin) from None
    except OSError as exc:
        raise RcFileError(
            f"{path} cannot be read ({exc.strerror}); nothing was changed", origin=origin
        ) from None
    bom = _BOM if data.startswith(_BOM) else b""
    try:
        return data[len(bom) :].decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        line = data[: len(bom) + exc.start].count(b"\n") + 1
        raise RcFileError(
            f"{path}:{line}: not UTF-8 text (byte 0x{data[len(bom) + exc.start]:02x}); save the file as "
            "UTF-8; nothing was changed",
            origin=Origin(Layer.RC, path, line),
        ) from None


def edit_target(path: str) -> str:
    """The file an edit of ``path`` changes: a symbolic link's target (the link stays)."""
    return os.path.realpath(path) if os.path.islink(path) else path


@contextlib.contextmanager
def edit_lock(path: str) -> Iterator[None]:
    """Hold the edit lock of ``path``'s directory (``flock``; none where there is no fcntl)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError as exc:
        raise RcFileError(f"cannot open {directory} ({exc.strerror}); nothing was changed") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logging.getLogger("modecfg.config").warning("waiting for another edit of %s to finish", path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


INI_LIMITS = (
    "an INI value cannot hold a line break (of any kind) or a ' #' (a comment starts there), "
    "nor start or end with blanks: a TOML rc file (name ending .toml) holds any text"
)


def _check(text: str, path: str, spec: Flag | _Name, expected: Any) -> None:
    """The edited text, read back as modecfg reads it: no problem, and the flag as expected
    (``None``: not set; a name that is no flag is only ever removed)."""
    why = "" if path.endswith(".toml") else f" ({INI_LIMITS})"
    try:
        settings = read_toml(text, path) if path.endswith(".toml") else read_ini(text, path)
    except ConfigError as exc:
        raise RcFileError(
            f"the edit would leave {path} unreadable ({exc}){why}; nothing was changed"
        ) from None
    values = [s for s in settings if _name_of(s) == spec.name]
    got = None if not values else validate(spec, values[-1].raw) if isinstance(spec, Flag) else values[-1].raw
    if got != expected:
        raise RcFileError(
            f"the edit would not give {spec.name}={expected!r} in {path}{why}; nothing was changed"
        )


def set_flag(name: str, value: str, path: str | None = None) -> Edit:
    """Set ``name = value`` in the rc file ``path`` (default: :func:`default_rc_file`)."""
    spec = _spec(name)
    where = path or default_rc_file(spec.name)
    origin = Origin(Layer.RC, f"the command line, for {where}")  # the value is the user's, not the file's
    try:
        typed = validate(spec, value)
    except ValueError as exc:
        raise value_error(spec, value, origin, str(exc)) from None
    target = edit_target(where)
    with edit_lock(target):
        old, bom = _current(target)
        try:
            if target.endswith(".toml"):
                new, line = _toml_set(old, spec, typed)
            else:
                new, line = _ini_set(old, target, spec, str(value))
        except Exception as exc:  # tomlkit's parse errors: the file is not TOML
            raise _unreadable(target, exc) from None
        _check(new, target, spec, typed)
        if new == old:
            return Edit(where, spec.name, typed, False, None, line)
        backup = write_atomically(target, new, bom=bom)
    return Edit(where, spec.name, typed, True, backup, line)


def unset_flag(name: str, path: str | None = None) -> Edit:
    """Remove every setting of ``name`` from the rc file ``path`` (default: the one that sets it).
    An obsolete or unknown name is removed too (that is the fix for it); one the file does not
    have is an UnknownFlagError, with what may have been meant."""
    target_name, spec, info = _any_name(name)
    where = path or default_rc_file(name)
    target = edit_target(where)
    with edit_lock(target):
        old, bom = _current(target)
        line: int | None = None
        if old:
            try:
                if target.endswith(".toml"):
                    new, line = _toml_unset(old, target_name)
                else:
                    new, line = _ini_unset(old, target, target_name)
            except Exception as exc:
                raise _unreadable(target, exc) from None
        if line is None:
            if spec is None and info.obsolete is None:
                said = lookup(name)
                why = "; ".join(part for part in (said.message, f"{where} does not set it either") if part)
                raise unknown_flag(info.written, None, said.suggestions, why)
            return Edit(where, target_name.name, None, False, None, None)
        _check(new, target, spec or target_name, None)
        backup = write_atomically(target, new, bom=bom)
    return Edit(where, target_name.name, None, True, backup, line or None)


def _unreadable(path: str, exc: Exception) -> RcFileError:
    if isinstance(exc, RcFileError):
        return exc
    return RcFileError(f"{path} cannot be edited: it does not parse ({exc}); nothing was changed")


def write_atomically(path: str, text: str, *, bom: bytes = b"") -> str | None:
    """Replace ``path`` by ``text`` (UTF-8, after ``bom``) atomically; see :func:`write_bytes`."""
    return write_bytes(path, bom + text.encode("utf-8"))


def write_bytes(path: str, data: bytes) -> str | None:
    """Replace ``path`` by ``data`` atomically; the old file is kept as ``path.bak`` (returned),
    or ``path.bak.1``, ``.2``, ... where that name is taken: a backup never replaces a file.

    A file the user could not write is refused (RcFileError), as is a directory they
    cannot write in; nothing is changed then.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None
    if info is not None and not os.access(path, os.W_OK):
        raise RcFileError(
            f"{path} is not writable by you (owner uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}): "
            "nothing was changed",
            origin=Origin(Layer.RC, path),
        )
    backup = None
    try:
        if info is not None:
            with open(path, "rb") as fh:
                backup = _keep_aside(path, fh.read(), directory, info)
        _replace(path, data, directory, info)
    except OSError as exc:
        raise RcFileError(
            f"cannot write {path} ({exc.strerror}); nothing was changed", origin=Origin(Layer.RC, path)
        ) from None
    return backup


def _keep_aside(path: str, data: bytes, directory: str, info: os.stat_result) -> str:
    """``data`` as a new file ``path.bak`` (or ``.bak.N``, the first name free), never over one."""
    for n in range(10_000):
        backup = f"{path}.bak" + (f".{n}" if n else "")
        if os.path.lexists(backup):
            continue
        tmp = _temporary(path, data, directory, info)
        try:
            try:
                os.link(tmp, backup)  # fails where the name was taken meanwhile: never replaces
            except FileExistsError:
                continue
            except OSError:  # a file system without hard links: made new, never over a file
                try:
                    _write(
                        os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IMODE(info.st_mode)),
                        data,
                    )
                except FileExistsError:
                    continue
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        _fsync_directory(directory)
        return backup
    raise OSError(errno.EEXIST, f"{path}.bak and 9,999 more backup names are taken")


def _replace(path: str, data: bytes, directory: str, info: os.stat_result | None) -> None:
    tmp = _temporary(path, data, directory, info)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _temporary(path: str, data: bytes, directory: str, info: os.stat_result | None) -> str:
    """``data`` in a new temporary file beside ``path``, with ``info``'s mode and owner: its name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        _write(fd, data)
        if info is not None:
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            with contextlib.suppress(OSError):  # only root may give a file away
                os.chown(tmp, info.st_uid, info.st_gid)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _write(fd: int, data: bytes) -> None:
    """``data`` into the open file ``fd``, on the disk before it is closed."""
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # not on every platform
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
