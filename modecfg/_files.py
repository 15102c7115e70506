"""Reading files modecfg did not write (rc files, NaN-guard dumps): only regular files, bounded.

A FIFO would block a read forever and ``/dev/zero`` never ends, so the file is opened
without blocking and looked at (``fstat`` of the open file, so no other file can be
swapped in between) before a byte is read.
"""

from __future__ import annotations

import os
import stat

__all__ = ["NotReadable", "read_regular_file"]

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
