"""Reading files modecfg did not write (rc files, NaN-guard dumps): only regular files, bounded.

A FIFO would block a read forever and ``/dev/zero`` never ends, so the file is opened
without blocking and looked at (``fstat`` of the open file, so no other file can be
swapped in between) before a byte is read.
"""

from __future__ import annotations

import os
import stat

__all__ = [
    "NotReadable", "configured_directory", "directory_problem", "others_can_write", "private_directory",
    "read_regular_file", "shared_filesystem", "unsafe_cache", "user_cache_dir",
]  # fmt: skip

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (a named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotReadable(Exception):
    """The file is no regular file, or larger than allowed: ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_regular_file(path: str, *, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (``OSError`` if it cannot be opened);
    :class:`NotReadable` if it is no regular file or has more than ``limit`` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "no regular file")
            raise NotReadable(f"is {kind}, not a regular file")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                raise NotReadable(f"is larger than {limit:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def unsafe_cache(base: str, origin: object) -> str:
    """Why the compile cache at ``base`` (set by ``origin``) runs code others wrote, and what to
    do; '' when only the user (and root) can write it. Said by ``modecfg doctor`` and ``validate``
    as a problem, and once as a warning when PyTensor is imported."""
    unsafe = others_can_write(base)
    if not unsafe:
        return ""
    return (
        f"base_compiledir={base} (from {origin}): {unsafe}, and PyTensor loads the compiled modules it "
        "finds there: whoever can write it runs code in your process. Use a directory only you can "
        "write (the default ~/.pytensor), or chmod go-w it"
    )


def others_can_write(path: str) -> str:
    """Why another user could change what is at ``path`` (a directory whose contents are
    loaded as code: the compile cache), or '' if none can. ``path`` need not exist yet: its
    existing ancestors decide then. Root's directories and sticky world-writable ones (/tmp)
    are safe for what the user owns inside them."""
    import os
    import stat

    if not hasattr(os, "getuid"):
        return ""
    me = os.getuid()
    current = os.path.abspath(path)
    chain = []
    while True:
        chain.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for place in reversed(chain):  # from / down to path
        try:
            info = os.stat(place)
        except OSError:
            break  # not there yet: made by this user, inside the last existing directory
        owner_ok = info.st_uid in (me, 0)
        if not owner_ok:
            return f"{place} belongs to another user (uid {info.st_uid})"
        open_to_others = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if open_to_others and not (info.st_mode & stat.S_ISVTX):
            return f"{place} may be written by group or others (mode {stat.S_IMODE(info.st_mode):o})"
        if open_to_others and place == os.path.abspath(path):
            return f"{place} may be written by group or others (mode {stat.S_IMODE(info.st_mode):o})"
    return ""


# Filesystems whose files other hosts see too (network and cluster filesystems).
_SHARED_KINDS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "glusterfs", "fuse.glusterfs",
    "fuse.sshfs", "fuse.cephfs", "panfs", "wekafs", "afs", "9p", "fuse.juicefs", "orangefs", "pvfs2",
})  # fmt: skip


def shared_filesystem(path: str, *, mounts: str | None = None) -> str:
    """The kind of filesystem ``path`` is on when other hosts may see it too (``nfs4``, ``lustre``,
    ...), else ''. From ``/proc/mounts`` (``mounts``: its text); '' where there is none."""
    if mounts is None:
        try:
            with open("/proc/mounts", encoding="utf-8", errors="replace") as f:
                mounts = f.read()
        except OSError:
            return ""
    target = os.path.abspath(os.path.expanduser(path))
    best, kind = "", ""
    for line in mounts.splitlines():
        words = line.split()
        if len(words) < 3:
            continue
        point = words[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, words[2]
    return kind if kind in _SHARED_KINDS else ""


def configured_directory(configured: str, name: str) -> str:
    """The directory a flag names (``~`` expanded, made absolute), else ``name`` in the user's
    cache directory: where NaN-guard dumps and CompareMode's reproductions go (not created)."""
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    return user_cache_dir(name)


def creatable(directory: str) -> str:
    """Why ``directory``, which does not exist, could not be made ('' if it could), leaving
    nothing behind: its nearest existing parent must be a directory one can write in, and a
    directory made there (then removed at once) must be possible. The try is what tells: root
    may write everywhere by the permission bits, and still cannot make one in ``/proc``."""
    parent = directory
    while not os.path.exists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        return f"it cannot be created ({parent} cannot be written)"
    import tempfile

    try:
        probe = tempfile.mkdtemp(prefix=".modecfg-probe-", dir=parent)
    except OSError as exc:
        return f"it cannot be created (making a directory in {parent}: {exc.strerror or exc})"
    os.rmdir(probe)
    return ""


def directory_problem(directory: str) -> str:
    """Why dumps could not be written privately to ``directory`` ('' if they could), creating nothing."""
    if not os.path.lexists(directory):
        return creatable(directory)
    return _ownership_problem(directory) or (
        "" if os.access(directory, os.W_OK | os.X_OK) else f"{directory} cannot be written"
    )


def private_directory(directory: str) -> str:
    """Create ``directory`` 0700 if missing; refuse one others could tamper with (its problem, or '')."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        return f"cannot create {directory} ({exc.strerror})"
    return _ownership_problem(directory)


def _ownership_problem(directory: str) -> str:
    """Why an existing ``directory`` is no private place for dumps ('' if it is)."""
    try:
        info = os.lstat(directory)
    except OSError as exc:
        return f"cannot look at {directory} ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{directory} is not a plain directory (a symbolic link or a file): refused"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"{directory} belongs to another user (uid {info.st_uid}): refused, as ssh would"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (
            f"{directory} is writable by group or others (mode {stat.S_IMODE(info.st_mode):o}): "
            f"refused, as ssh would; chmod 700 {directory}"
        )
    return ""


def user_cache_dir(*parts: str) -> str:
    """``parts`` under modecfg's directory of the user's cache: ``$XDG_CACHE_HOME/modecfg``, else
    ``~/.cache/modecfg`` (not created)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "modecfg", *parts)
