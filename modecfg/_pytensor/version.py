"""Which PyTensor this process has: (major, minor), from the loaded module, else from its metadata."""

from __future__ import annotations

import functools
import sys

__all__ = ["pytensor_version"]


def _major_minor(text: str) -> tuple[int, int] | None:
    r"""(major, minor) of a version string starting ``<digits>.<digits>``, else None: what the
    pattern ``(\d+)\.(\d+)`` matched (compiling it cost 0.1 ms of ``import modecfg``)."""
    major, _, rest = text.partition(".")
    end = 0
    while end < len(rest) and rest[end].isdecimal():
        end += 1
    if not (major.isdecimal() and end and len(major) < len(text)):
        return None
    return int(major), int(rest[:end])


@functools.cache
def _installed() -> tuple[int, int] | None:
    from importlib import metadata

    try:
        return _major_minor(metadata.version("pytensor"))
    except metadata.PackageNotFoundError:
        return None


def pytensor_version() -> tuple[int, int] | None:
    """(major, minor) of the PyTensor this process uses: the loaded one, else the installed one."""
    module = sys.modules.get("pytensor")
    loaded = getattr(module, "__version__", None) if module is not None else None
    if loaded:
        return _major_minor(str(loaded))
    # not imported, or being imported (modecfg hands PyTensor its flags before PyTensor's
    # __init__ has set __version__): the installed distribution says it
    return _installed()
