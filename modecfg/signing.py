"""The user's own dump key: what tells a dump this user wrote from one somebody handed them.

Jupyter decides whether to run a notebook's output by a signature made with a secret only
the user's machine holds; modecfg does the same for NaN-guard dumps. The key is 32 random
bytes in ``$XDG_CONFIG_HOME/modecfg/dump.key`` (``~/.config/modecfg/dump.key``), created on
first use, owner-only (0600 in a 0700 directory). A dump carries an HMAC-SHA256 of its
manifest (which holds the SHA-256 of every other part) made with it. Anyone can compute a
digest; only this user's key makes this signature.

A key that cannot be had (no home, an unwritable directory, a key file others may read or
that another user owns) is a :class:`KeyProblem` saying why: dumps are then written
unsigned, and a dump can only be run with ``trust=True``. Never a crash.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat

from modecfg._record import Record

__all__ = ["KeyProblem", "key_id", "key_path", "key_problem", "sign", "signing_key", "verify"]

_KEY_SIZE = 32


class KeyProblem(Record):
    """Why the key cannot be used (``path`` may be '' when there is no place for one)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


def key_path() -> str | KeyProblem:
    """Where the key lives: the user's config directory (an absolute path), or why there is none."""
    base = os.environ.get("XDG_CONFIG_HOME")
    if base is None or not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        home = os.environ.get("HOME") if os.name == "posix" else os.path.expanduser("~")
        if home is None or not os.path.isabs(home):
            return KeyProblem("", "no home directory (HOME is unset, empty or relative): no dump key")
        base = os.path.join(home, ".config")
    return os.path.join(base, "modecfg", "dump.key")


def _read_key(path: str) -> bytes | KeyProblem:
    """The key at ``path`` if it is fit to use; FileNotFoundError if there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # not inherited by children (PEP 446)
    except FileNotFoundError:
        raise
    except OSError as exc:  # a symbolic link (ELOOP), a directory, no permission
        return KeyProblem(path, f"cannot be read ({exc.strerror})")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return KeyProblem(path, "is not a regular file")
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return KeyProblem(path, f"belongs to another user (uid {info.st_uid})")
        if info.st_mode & 0o077:
            return KeyProblem(
                path,
                f"may be read or written by others (mode {stat.S_IMODE(info.st_mode):o}): chmod 600 {path}",
            )
        key = os.read(fd, _KEY_SIZE + 1)
    finally:
        os.close(fd)
    if len(key) != _KEY_SIZE:
        size = max(info.st_size, len(key))  # the read stops one byte past a key's size
        return KeyProblem(
            path, f"is not a dump key ({size} bytes, not {_KEY_SIZE}): remove it to make a new one"
        )
    return key


def signing_key(*, create: bool) -> bytes | KeyProblem:
    """The user's key; with ``create``, made (atomically, 0600) if there is none yet."""
    path = key_path()
    if isinstance(path, KeyProblem):
        return path
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            return KeyProblem(path, "no dump key yet (one is made when this user's first dump is written)")
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        # Written whole under a temporary name, then linked into place: a second process
        # making one at the same moment finds the first one's key, never half a key.
        tmp = os.path.join(directory, f".dump.key-{os.getpid()}-{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, secrets.token_bytes(_KEY_SIZE))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    except OSError as exc:
        return KeyProblem(path, f"cannot be created ({exc.strerror})")
    try:
        return _read_key(path)
    except FileNotFoundError:
        return KeyProblem(path, "vanished while it was made")


def key_problem() -> str:
    """Why dumps would be written unsigned ('' if the key is usable, or can be made at first use)."""
    path = key_path()
    if isinstance(path, KeyProblem):
        return str(path)
    try:
        found = _read_key(path)
    except FileNotFoundError:
        parent = os.path.dirname(path)
        while not os.path.lexists(parent) and os.path.dirname(parent) != parent:
            parent = os.path.dirname(parent)
        ok = os.path.isdir(parent) and os.access(parent, os.W_OK | os.X_OK)
        return "" if ok else f"{path}: cannot be created ({parent} cannot be written)"
    return str(found) if isinstance(found, KeyProblem) else ""


def key_id(key: bytes) -> str:
    """A short public name of a key (tells 'another key' from 'no signature')."""
    return hashlib.sha256(b"modecfg dump key id\0" + key).hexdigest()[:16]


def sign(key: bytes, manifest: bytes) -> str:
    """The signature of a dump's manifest."""
    return hmac.new(key, manifest, hashlib.sha256).hexdigest()


def verify(key: bytes, manifest: bytes, signature: str) -> bool:
    """Whether ``signature`` was made from ``manifest`` with ``key`` (constant time). A signature
    that is not ASCII text (a damaged or forged file) is no signature: compare_digest would raise."""
    return signature.isascii() and hmac.compare_digest(sign(key, manifest), signature)
