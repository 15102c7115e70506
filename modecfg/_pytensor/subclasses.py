"""modecfg's subclasses of PyTensor's modes: every class that must derive from one of PyTensor's.

The modes the user meets (:class:`modecfg.modes.MonitorMode`, the deprecated ProfileMode)
derive from these; what they add (Theano's callback signature, the default linker, the
printed summary) stays in their own layer. Module-level classes: a compiled function holding
one pickles. Importing this module imports PyTensor.
"""

from __future__ import annotations

from typing import Any

from pytensor.compile.debug.monitormode import MonitorMode as _PyTensorMonitorMode
from pytensor.compile.debug.profiling import ProfileStats
from pytensor.compile.maker import FunctionMaker
from pytensor.compile.mode import Mode
from pytensor.link.basic import WrapLinker
from pytensor.link.c.basic import OpWiseCLinker

from modecfg._pytensor.profiling import new_stats, timing_mode
from modecfg._pytensor.wrapped import rewrites_for
from modecfg._registry.linkers import linker_name

__all__ = ["MonitoringMode", "ProfilingMode"]


class MonitoringMode(_PyTensorMonitorMode):  # type: ignore[misc]
    """PyTensor's MonitorMode whose linker pickles, and whose rewrites are for the linker it wraps."""

    def __init__(self, pre_func: Any, post_func: Any, optimizer: Any, linker: Any, db: Any) -> None:
        super().__init__(pre_func, post_func, optimizer=optimizer, linker=linker, db=db)
        # PyTensor wraps ``self.eval`` in a local closure (WrapLinkerMany), which cannot
        # pickle; one wrapper needs no closure: the bound method pickles with the mode.
        Mode.__setstate__(self, (WrapLinker([OpWiseCLinker()], self.eval), self.provided_optimizer))

    @property
    def optimizer(self) -> Any:
        """The rewrites, for the linker the wrapper runs (see :mod:`modecfg._pytensor.wrapped`)."""
        return rewrites_for(super().optimizer, self, self.linker.linkers[0])


class _ProfilingMaker(FunctionMaker):  # type: ignore[misc]
    def __init__(self, inputs: Any, outputs: Any, mode: Any, *args: Any, profile: Any = None,
                 name: Any = None, **kwargs: Any) -> None:  # fmt: skip
        if not isinstance(profile, ProfileStats):
            profile = new_stats(name or "ProfileMode", linker_name(mode.linker), "compiled in ProfileMode")
        super().__init__(inputs, outputs, mode, *args, profile=profile, name=name, **kwargs)
        compiled = mode.__dict__.setdefault("_modecfg_profiles", [])  # plain list of PyTensor's stats
        compiled.append(profile)


class ProfilingMode(Mode):  # type: ignore[misc]
    """A Mode that profiles every function compiled with it, on a linker that times nodes (one
    that cannot is replaced by cvm, or vm, said once, as for any profiled compile)."""

    def __init__(self, linker: Any, optimizer: Any = "default", db: Any = None) -> None:
        super().__init__(linker=linker, optimizer=optimizer, db=db)
        timed, _ = timing_mode(Mode(linker=self.linker, optimizer=self.provided_optimizer))
        if timed.linker is not self.linker:
            Mode.__setstate__(self, (timed.linker, self.provided_optimizer))

    @property
    def function_maker(self) -> type[FunctionMaker]:
        return _ProfilingMaker

    def profiles(self) -> list[Any]:
        """PyTensor's ProfileStats of each function compiled with this mode, in order."""
        return list(self.__dict__.get("_modecfg_profiles", []))
