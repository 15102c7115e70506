"""ProfileMode, Theano's profiling mode, kept as a deprecated alias of FAST_RUN + profiling."""

from __future__ import annotations

from typing import Any

from pytensor.compile.debug.profiling import ProfileStats
from pytensor.compile.maker import FunctionMaker
from pytensor.compile.mode import Mode

__all__ = ["ProfileMode"]


class _ProfilingMaker(FunctionMaker):  # type: ignore[misc]
    def __init__(self, *args: Any, profile: Any = None, name: Any = None, **kwargs: Any) -> None:
        if not isinstance(profile, ProfileStats):
            from modecfg.profiles.session import new_stats

            profile = new_stats(name or "ProfileMode", "cvm or the linker flag", "compiled in ProfileMode")
        super().__init__(*args, profile=profile, name=name, **kwargs)


class ProfileMode(Mode):  # type: ignore[misc]
    """FAST_RUN with every compiled function profiled (``fn.profile.summary()``)."""

    @property
    def function_maker(self) -> type[FunctionMaker]:
        return _ProfilingMaker
