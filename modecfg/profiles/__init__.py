"""Profiling reports, the successor of Theano's ProfileMode.

The report classes load on first use: ``import modecfg`` registers this feature's contacts
(:mod:`modecfg.profiles.contacts`), which must not cost a program that never profiles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from modecfg._lazy import attach as _attach

if _TYPE_CHECKING:  # the names handed out on first use, each written here once (modecfg._lazy)
    from modecfg.profiles.rows import ApplyRow as ApplyRow
    from modecfg.profiles.rows import ClassRow as ClassRow
    from modecfg.profiles.rows import MemoryRow as MemoryRow
    from modecfg.profiles.rows import OpRow as OpRow
    from modecfg.profiles.rows import ProfileReport as ProfileReport

__all__ = [
    "ApplyRow",
    "ClassRow",
    "MemoryRow",
    "OpRow",
    "ProfileReport",
    "report",
    "reports",
]


def report(fn: object) -> ProfileReport:
    """The report of one profiled compiled function (compiled with profile=True)."""
    stats = getattr(fn, "profile", None)
    if not stats:
        from modecfg.errors import ProfileError

        raise ProfileError(
            f"{type(fn).__name__} {getattr(fn, 'name', None) or ''} was not compiled with profiling: "
            "compile it with profile=True, or set the profile flag (profile=True in THEANO_FLAGS)"
        )
    from modecfg.profiles.rows import ProfileReport

    return ProfileReport.from_stats(stats)


def reports() -> list[ProfileReport]:
    """A report per profiled function of the process."""
    from modecfg.profiles.session import reports as _reports

    return _reports()


__getattr__ = _attach(__name__, __file__)  # the TYPE_CHECKING block's names, on first use
__dir__ = __getattr__.dir
