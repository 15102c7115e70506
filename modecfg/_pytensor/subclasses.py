"""modecfg's subclasses of PyTensor's modes: every class that must derive from one of PyTensor's.

The modes the user meets (:class:`modecfg.modes.MonitorMode`, the deprecated ProfileMode)
derive from these; what they add (Theano's callback signature, the default linker, the
printed summary) stays in their own layer. Module-level classes: a compiled function holding
one pickles. Importing this module imports PyTensor.
"""

from __future__ import annotations

import copy
from typing import Any

from pytensor.compile.debug.monitormode import MonitorMode as _PyTensorMonitorMode
from pytensor.compile.debug.profiling import ProfileStats
from pytensor.compile.maker import FunctionMaker
from pytensor.compile.mode import Mode
from pytensor.link.basic import Linker, WrapLinker
from pytensor.link.c.basic import OpWiseCLinker

from modecfg._pytensor.kinds import linker_name
from modecfg._pytensor.profiling import new_stats, timing_mode
from modecfg._pytensor.wrapped import register_inner_graph_rewrites, rewrites_for

__all__ = [
    "InPlaceSafeMaker",
    "MonitoringMode",
    "ProfilingMode",
    "WrappedVM",
    "WrappingLinker",
    "WrappingMode",
]


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


class WrappingLinker(Linker):  # type: ignore[misc]
    """A linker that runs another one (``inner``) and wraps the thunk it makes (:meth:`wrap`): the
    NaN guard's. A subclass keeps its own settings in :meth:`settings` (given back to its
    constructor after the inner linker) and says what a call does in :meth:`wrap`."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner
        self.fgraph: Any = None

    def settings(self) -> tuple[Any, ...]:
        """What the subclass's constructor takes after ``inner``."""
        return ()

    def wrap(self, thunk: Any, inputs: Any, outputs: Any) -> Any:
        """The callable that runs in place of the inner linker's ``thunk``."""
        return thunk

    @property
    def allow_gc(self) -> Any:
        return self.inner.allow_gc

    @property
    def required_rewrites(self) -> Any:
        return self.inner.required_rewrites

    @property
    def incompatible_rewrites(self) -> Any:
        return self.inner.incompatible_rewrites

    def clone(self, allow_gc: bool | None = None) -> Any:
        return type(self)(self.inner.clone(allow_gc=allow_gc), *self.settings())

    def accept(self, fgraph: Any, no_recycling: Any = None, profile: Any = None) -> Any:
        accepted = type(self)(
            copy.copy(self.inner).accept(fgraph, no_recycling=no_recycling, profile=profile), *self.settings()
        )
        accepted.fgraph = fgraph
        return accepted

    def accept_var_updates(self, updated_vars: Any) -> None:
        """Not passed on: PyTensor's VMs would write the updates inside the call, before the
        wrapper's check. Without them the Function writes them after the call, once it ended."""

    def make_thunk(self, **kwargs: Any) -> tuple[Any, Any, Any]:
        thunk, ins, outs = self.inner.make_thunk(**kwargs)[:3]
        return self.wrap(thunk, ins, outs), ins, outs

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


register_inner_graph_rewrites(WrappingLinker)  # a mode PyMC builds around one rewrites for the wrapped


class WrappedVM:
    """What a :class:`WrappingLinker`'s ``wrap`` returns: the callable PyTensor's Function runs in
    place of the inner linker's VM (``_vm``), with the call's input and output containers and the
    subclass's plan of the graph. Whatever else the Function asks of it or sets on it
    (``storage_map``, ``thunks``, ``time_thunks``) is the inner VM's. While the wrapper's own error
    is being raised (``_own_error``), ``position_of_error`` is hidden: that error has no failing
    node, and goes to the user as it is. Subclasses name their own state in ``__slots__`` with a
    leading underscore."""

    __slots__ = ("_ins", "_outs", "_own_error", "_plan", "_vm")
    need_update_inputs = (
        True  # the Function writes the updates, after the wrapper's call (see WrappingLinker)
    )

    def __init__(self, vm: Any, ins: list[Any], outs: list[Any], plan: Any) -> None:
        self._vm, self._ins, self._outs, self._plan = vm, ins, outs, plan
        self._own_error = False

    @property
    def allow_gc(self) -> Any:  # read by the Function after every call: not through __getattr__
        return self._vm.allow_gc

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or (name == "position_of_error" and self._own_error):
            raise AttributeError(name)
        return getattr(self._vm, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):  # the wrapper's own state (its slots)
            object.__setattr__(self, name, value)
        else:  # time_thunks and the like belong to the wrapped VM
            setattr(self._vm, name, value)


class InPlaceSafeMaker(FunctionMaker):  # type: ignore[misc]
    """FunctionMaker with updated inputs kept from being overwritten in place.

    A call a wrapper stops must leave them as they were; not destroying them costs one
    allocation per update instead of a copy of each before every call.
    """

    def __init__(self, inputs: Any, outputs: Any, mode: Any, *args: Any, **kwargs: Any) -> None:
        specs = []
        for spec in inputs:
            if getattr(spec, "update", None) is not None and getattr(spec, "mutable", False):
                spec = copy.copy(spec)
                spec.mutable = False
            specs.append(spec)
        super().__init__(specs, outputs, mode, *args, **kwargs)


def _function_class() -> type[Any]:
    from pytensor.compile.executor import Function

    return Function  # type: ignore[no-any-return]


class SerialFunction(_function_class()):  # type: ignore[misc]
    """A compiled function whose calls take turns (one thread at a time), by its VM's ``turns``
    lock. PyTensor's Function keeps its inputs, outputs and updates in storage of its own, set
    before its VM runs and read after: a checking mode runs Python between the two, long enough
    for another thread's call to overwrite or clear them. Pickled as PyTensor pickles its
    functions (a plain Function once loaded)."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.vm.turns:
            return super().__call__(*args, **kwargs)

    def __reduce__(self) -> Any:
        import copyreg

        return copyreg.dispatch_table[_function_class()](self)


class SerialMaker(FunctionMaker):  # type: ignore[misc]
    """A FunctionMaker whose functions are :class:`SerialFunction`s (its linker's VM has ``turns``)."""

    def create(self, *args: Any, **kwargs: Any) -> Any:
        fn = super().create(*args, **kwargs)
        fn.__class__ = SerialFunction
        return fn


class WrappingMode(Mode):  # type: ignore[misc]
    """A Mode whose linker is wrapped (:class:`WrappingLinker`), its updated inputs kept intact, and
    its rewrites made for the linker it wraps (see :mod:`modecfg._pytensor.wrapped`)."""

    def __init__(self, linker: Any, optimizer: Any, db: Any, wrap: Any) -> None:
        super().__init__(linker=linker, optimizer=optimizer, db=db)
        if not isinstance(self.linker, WrappingLinker):
            Mode.__setstate__(self, (wrap(self.linker), self.provided_optimizer))
            if db is not None:  # __setstate__ put PyTensor's own database back: the one given stays
                self.optdb = db

    @property
    def function_maker(self) -> type[FunctionMaker]:
        return InPlaceSafeMaker

    @property
    def optimizer(self) -> Any:
        return rewrites_for(super().optimizer, self, self.linker.inner)
