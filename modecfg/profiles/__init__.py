"""Profiling reports, the successor of Theano's ProfileMode."""

from modecfg.profiles.report import ApplyRow, ClassRow, MemoryRow, OpRow, ProfileReport

__all__ = ["ApplyRow", "ClassRow", "MemoryRow", "OpRow", "ProfileReport", "report", "reports"]


def report(fn: object) -> ProfileReport:
    """The report of one profiled compiled function (compiled with profile=True)."""
    stats = getattr(fn, "profile", None)
    if not stats:
        from modecfg.errors import ProfileError

        raise ProfileError(
            f"{type(fn).__name__} {getattr(fn, 'name', None) or ''} was not compiled with profiling: "
            "compile it with profile=True, or set the profile flag (profile=True in THEANO_FLAGS)"
        )
    return ProfileReport.from_stats(stats)


def reports() -> list[ProfileReport]:
    """A report per profiled function of the process."""
    from modecfg.profiles.session import reports as _reports

    return _reports()
