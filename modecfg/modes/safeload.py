"""Unpickling a NaN-guard dump: data, never code.

A dump is as untrusted as any download. Its body is read by a restricted unpickler
that decides on *objects*, never on the names a pickle supplies:

* **Globals.** A ``(module, name)`` the pickle asks for is looked up only in modules
  that are already imported (a dump names no module into being: importing one can run
  it), by a static walk of their namespaces (no ``getattr``, so no module
  ``__getattr__``, property or descriptor runs), and the object found is admitted only
  if it *is* one of the admitted objects (:func:`admitted`): numpy's arrays, dtypes,
  scalars and random generators and the reconstructors they pickle through; the graph,
  op and type classes of PyTensor, less the ops that call out (``Print``,
  ``PdbBreakpoint``, ``FromFunctionOp``, ops that read C files); the type rules scalar
  ops keep; a few builtins. Whatever route a pickle takes to ``subprocess.Popen``, the
  object it reaches is not admitted.
* **State.** The state a pickle gives an object (pickle's ``BUILD``) is checked before
  the object's ``__setstate__`` sees it (:func:`_check_state`): keys PyTensor's own
  ``__getstate__`` never writes (cached C code, cached Python code) are refused; the C
  source an op carries (``ExternalCOp``: ``DimShuffle``) is replaced by the one its
  class ships; a name of a numpy function an op would import (``nfunc_spec``) must be
  the one its class declares or a numpy ufunc.

Ops keep strings that PyTensor pastes into generated C code without full escaping (an
``Assert`` message); :mod:`modecfg.modes.replaying` therefore runs an untrusted dump's
graph on Python implementations only (see there).
"""

from __future__ import annotations

import functools
import inspect
import io
import pickle
import sys
from types import ModuleType
from typing import Any, ClassVar

from modecfg.errors import DumpError

__all__ = ["admitted", "loads"]

# Modules whose objects a dump may hold; imported by modecfg (never by a dump) before a load.
_MODULES = (
    "numpy", "numpy.random", "pytensor", "pytensor.tensor", "pytensor.scan", "pytensor.sparse",
    "pytensor.typed_list", "pytensor.compile.builders", "pytensor.compile.sharedvalue",
    "pytensor.ifelse", "pytensor.raise_op", "pytensor.tensor.random", "pytensor.xtensor",
    "modecfg._pytensor.gradients", "modecfg._source",
)  # fmt: skip
# Where PyTensor's admitted classes are defined.
_PYTENSOR = (
    "pytensor.graph.", "pytensor.tensor.", "pytensor.scalar.", "pytensor.scan.", "pytensor.sparse.",
    "pytensor.typed_list.", "pytensor.xtensor.", "pytensor.compile.ops", "pytensor.compile.sharedvalue",
    "pytensor.compile.builders", "pytensor.link.c.type", "pytensor.link.c.params_type", "pytensor.ifelse",
    "pytensor.raise_op", "pytensor.gradient", "pytensor.misc.frozendict", "pytensor.assumptions.",
    "pytensor.compile.aliasing",
)  # fmt: skip
# Reconstructors numpy, the standard library and PyTensor pickle through, and a few
# containers: (module, name).
_FUNCTIONS = (
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
    ("numpy.random._pickle", "__generator_ctor"), ("numpy.random._pickle", "__bit_generator_ctor"),
    ("numpy.random._pickle", "__randomstate_ctor"),
    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
    ("copyreg", "_reconstructor"), ("pytensor.graph.basic", "_get_frozen_output"),
    ("pytensor.graph.basic", "FrozenApply"),  # not an Apply subclass in some 3.x releases
    # what the features of a compiled inner graph (a scan's) keep
    ("pytensor.graph.features", "HistoryEntry"), ("pytensor.graph.utils", "AssocList"),
    ("pytensor.misc.ordered_set", "OrderedSet"), ("pytensor.assumptions.core", "FactState"),
    ("pytensor.assumptions.core", "AssumptionKey"),
)  # fmt: skip
_BUILTINS = (set, frozenset, slice, complex, range, tuple, list, dict, object, AssertionError, ValueError)
_SPACES = (ModuleType, type)


def _import_modules() -> None:
    import importlib

    for name in _MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional part of PyTensor missing here: its objects are not admitted
            pass


def _lookup(module: str, name: str) -> Any:
    """The object ``module``.``name`` names, found without importing or running anything;
    raises LookupError if there is none."""
    found: Any = sys.modules.get(module)
    if found is None:
        raise LookupError(f"module {module} is not loaded")
    for part in name.split("."):
        if not isinstance(found, _SPACES):
            raise LookupError(f"{part} of a {type(found).__name__}")
        try:
            found = inspect.getattr_static(found, part)  # no __getattr__, no descriptor runs
        except AttributeError:
            raise LookupError(f"no {part}") from None
        if isinstance(found, staticmethod):  # what getattr would give: the function itself
            found = found.__func__
    return found


def _subclasses(base: type) -> set[type]:
    seen: set[type] = set()
    todo = [base]
    while todo:
        cls = todo.pop()
        sub: type
        for sub in type.__subclasses__(cls):
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return seen


def _denied() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """Ops that call out when run (user callbacks, the debugger, C files read by path), and
    the one ExternalCOp admitted all the same (its C source is checked, see _check_state)."""
    from pytensor.breakpoint import PdbBreakpoint
    from pytensor.compile.ops import FromFunctionOp
    from pytensor.link.c.op import ExternalCOp
    from pytensor.printing import Print
    from pytensor.tensor.elemwise import DimShuffle

    return (Print, PdbBreakpoint, FromFunctionOp, ExternalCOp), (DimShuffle,)


def admitted() -> dict[int, Any]:
    """Every object a dump may name, by ``id`` (the object is kept, so the id stays its own).

    Built anew for each load (cheap: a walk of a few thousand classes) so that classes
    PyTensor defines later are seen; the modules are imported by modecfg first.
    """
    _import_modules()
    import numpy as np
    from pytensor.graph.basic import Apply, Variable
    from pytensor.graph.features import Feature
    from pytensor.graph.fg import AbstractFunctionGraph
    from pytensor.graph.op import Op
    from pytensor.graph.type import Type

    objects: list[Any] = [*_BUILTINS, np.ndarray, np.dtype, *_subclasses(np.dtype), *_subclasses(np.generic)]
    objects += [np.random.Generator, np.random.RandomState, np.random.SeedSequence]
    objects += _subclasses(np.random.BitGenerator)
    objects += [f for f in vars(np).values() if isinstance(f, np.ufunc)]  # Elemwise keeps numpy's ufuncs
    for module, name in _FUNCTIONS:
        try:
            objects.append(_lookup(module, name))
        except LookupError:  # the other numpy major version's spelling
            pass
    (denied, excepted) = _denied()
    for base in (Op, Type, Variable, Apply, AbstractFunctionGraph, Feature):  # Feature: inner graphs'
        for cls in (base, *_subclasses(base)):
            if not (cls.__module__ + ".").startswith(_PYTENSOR):
                continue  # a class of a user's module, or of a PyTensor module no dump needs
            if issubclass(cls, denied) and cls not in excepted:
                continue
            objects.append(cls)
    objects += _pytensor_extras()
    return {id(obj): obj for obj in objects}


def _pytensor_extras() -> list[Any]:
    """Objects ops and variables hold that are none of the graph's own classes."""
    import pytensor.scalar.basic as ps
    import pytensor.tensor.type as tt
    from pytensor.graph.utils import Scratchpad
    from pytensor.link.basic import Container
    from pytensor.misc.frozendict import frozendict
    from pytensor.scan.op import ScanInfo

    from modecfg._pytensor.gradients import GradOrigin
    from modecfg._source import SourceLine

    extras: list[Any] = [
        Container,
        frozendict,
        ScanInfo,
        *_subclasses(Scratchpad),
        Scratchpad,
        GradOrigin,
        SourceLine,
    ]
    # the type rules scalar ops keep as output_types_preference: functions (upcast_out, ...)
    # and instances of PyTensor's rule classes (specific_out(...))
    for module in (ps, sys.modules.get("pytensor.scalar.math")):
        for value in vars(module).values() if module else ():
            rule = getattr(value, "output_types_preference", None) if isinstance(value, ps.ScalarOp) else None
            if inspect.isfunction(rule):
                extras.append(rule)
            elif rule is not None and type(rule).__module__.startswith("pytensor.scalar."):
                extras.append(type(rule))
    extras += [f for n, f in vars(tt).items() if n.startswith("values_eq_approx") and inspect.isfunction(f)]
    import pathlib

    extras += [pathlib.PosixPath, pathlib.WindowsPath]  # where SourceLine says the code is
    return extras


# -- state -------------------------------------------------------------------------------------


@functools.cache
def _reference_c_code(cls: Any) -> dict[str, Any]:
    """The C source an ExternalCOp class ships (read from PyTensor's own files)."""
    from pathlib import Path

    from pytensor.link.c.op import ExternalCOp

    probe = cls.__new__(cls)
    ExternalCOp.__init__(probe, [Path(cls.c_func_file)], cls.c_func_name)
    return {k: probe.__dict__[k] for k in _C_SOURCE}


_C_SOURCE = ("func_files", "func_codes", "func_name", "code_sections")


def _check_state(obj: Any, state: Any, untrusted: bool) -> Any:
    """The state to give ``obj``: checked, with derived C source replaced; or a DumpError."""
    if not isinstance(state, dict):
        return state  # slot states and non-dict states: plain values, checked by their classes
    cls: Any = type(obj)
    getstate = getattr(cls, "__getstate__", None)
    if getstate is not None and getstate is not object.__getstate__:
        try:
            probe = cls.__new__(cls)
            probe.__dict__.update(state)
            written = getstate(probe)
        except Exception:  # a state PyTensor's __getstate__ cannot have written: its __setstate__ decides
            written = None
        if isinstance(written, dict):
            extra = sorted(set(state) - set(written))
            if extra:
                listed = ", ".join(extra)
                raise DumpError(
                    f"the dump gives a {cls.__name__} state PyTensor never writes ({listed}): refused"
                )
    from pytensor.link.c.op import ExternalCOp

    if isinstance(obj, ExternalCOp):
        shadow = [k for k in ("c_func_file", "c_func_name") if k in state]
        if shadow:
            raise DumpError(f"the dump names C files for a {cls.__name__} ({', '.join(shadow)}): refused")
        state = {**state, **_reference_c_code(cls)}
    if "nfunc_spec" in state:
        _check_nfunc(obj, state)
    if untrusted:
        state = _python_only(obj, state)
    return state


def _check_nfunc(obj: Any, state: dict[str, Any]) -> None:
    """An op may name the numpy function it runs (PyTensor imports it by that name) only as
    its class declares it, or as a numpy ufunc."""
    import numpy as np

    spec = state["nfunc_spec"]
    if spec is None:
        return
    declared = {
        getattr(type(obj), "nfunc_spec", None),
        getattr(type(state.get("scalar_op")), "nfunc_spec", None),
    }
    if spec in declared - {None}:
        return
    name = spec[0] if isinstance(spec, tuple) and spec and isinstance(spec[0], str) else None
    if name is not None and isinstance(vars(np).get(name), np.ufunc):
        return
    raise DumpError(f"the dump makes a {type(obj).__name__} run {spec!r}, which its class does not: refused")


def _python_only(obj: Any, state: dict[str, Any]) -> dict[str, Any]:
    """Inner functions compile with modecfg's FAST_COMPILE (Python implementations)."""
    from pytensor.compile.builders import OpFromGraph
    from pytensor.scan.op import Scan

    if isinstance(obj, Scan) and "mode" in state:
        return {**state, "mode": "FAST_COMPILE"}
    if isinstance(obj, OpFromGraph) and isinstance(state.get("kwargs"), dict):
        return {**state, "kwargs": {**state["kwargs"], "mode": "FAST_COMPILE"}}
    return state


# -- the unpickler -----------------------------------------------------------------------------


_PythonUnpickler: Any = getattr(pickle, "_Unpickler")  # noqa: B009  (typeshed does not declare it)


class _Unpickler(_PythonUnpickler):  # type: ignore[misc]
    """Pickle's Python unpickler, whose ``BUILD`` step can be checked (the C one's cannot)."""

    def __init__(self, data: bytes, objects: dict[int, Any], untrusted: bool) -> None:
        super().__init__(io.BytesIO(data))
        self._objects = objects
        self._untrusted = untrusted

    def find_class(self, module: str, name: str) -> Any:
        try:
            found = _lookup(module, name)
        except LookupError:
            found = None
        if found is not None and self._objects.get(id(found)) is found:
            return found
        raise DumpError(f"the dump asks for {module}.{name}, which no NaN-guard dump holds: refused")

    def load_build(self) -> None:
        stack = self.stack
        state = stack.pop()
        stack.append(_check_state(stack[-1], state, self._untrusted))
        super().load_build()

    dispatch: ClassVar[dict[int, Any]] = {**_PythonUnpickler.dispatch, pickle.BUILD[0]: load_build}


def loads(data: bytes, *, untrusted: bool = True) -> Any:
    """Unpickle a dump's body with the restrictions above (DumpError for anything refused)."""
    return _Unpickler(data, admitted(), untrusted).load()
