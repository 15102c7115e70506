"""Which of PyTensor's classes an object is: the questions the layers above ask of graphs and linkers.

The float32 check asks whether an operation reads a shape, is elementwise or a cast, and
whether a variable is a constant; the linker table names a linker object (cvm, numba, ...).
Each answer is a walk of the object's class hierarchy against PyTensor's classes, named here
once by module and name (:data:`CLASSES`). Nothing is imported to answer: an object of a class
whose module was never imported cannot exist, so a name is compared with each class the object
derives from (a subclass of PyTensor's counts as it, as ``isinstance`` would say). After a
PyTensor upgrade :func:`missing` says which names the installed PyTensor no longer has (a
contact of the patch list, listed by ``modecfg doctor``).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__all__ = [
    "CLASSES",
    "LINKERS",
    "is_cast",
    "is_constant",
    "is_elemwise",
    "is_loop",
    "is_shape_op",
    "is_uninitialised",
    "linker_name",
    "missing",
    "runs_c_code",
]

# Each kind: PyTensor's classes by (module, name) as the installed PyTensor 3.0-3.3 defines them.
CLASSES: dict[str, tuple[tuple[str, str], ...]] = {
    "shape": (
        ("pytensor.tensor.shape", "Shape"),
        ("pytensor.tensor.shape", "Shape_i"),
        ("pytensor.tensor.shape", "SpecifyShape"),
    ),
    "elemwise": (("pytensor.tensor.elemwise", "Elemwise"),),
    "cast": (("pytensor.scalar.basic", "Cast"),),
    "constant": (("pytensor.graph.basic", "Constant"),),
    "uninitialised": (("pytensor.tensor.basic", "AllocEmpty"),),
    "writes_into": (
        ("pytensor.tensor.subtensor", "IncSubtensor"),
        ("pytensor.tensor.subtensor", "AdvancedIncSubtensor"),  # 3.0's AdvancedIncSubtensor1 is gone in 3.3
    ),
    "loop": (("pytensor.scan.op", "Scan"),),
}

# A linker object's class -> its name in the linker table. VMLinker is named by its settings and
# a wrapping linker (the NaN guard's) by the linker it wraps: see linker_name.
LINKERS: dict[tuple[str, str], str] = {
    ("pytensor.link.vm", "VMLinker"): "vm",
    ("pytensor.link.c.basic", "CLinker"): "c",
    ("pytensor.link.c.basic", "OpWiseCLinker"): "c|py",
    ("pytensor.link.numba.linker", "NumbaLinker"): "numba",
    ("pytensor.link.jax.linker", "JAXLinker"): "jax",
    ("pytensor.link.pytorch.linker", "PytorchLinker"): "pytorch",
    ("pytensor.link.mlx.linker", "MLXLinker"): "mlx",
    ("pytensor.link.basic", "WrapLinker"): "wrap (monitor)",  # WrapLinkerMany's too
    ("pytensor.compile.debug.debugmode", "_DummyLinker"): "debug (own)",
    ("pytensor.compile.debug.debugmode", "_Linker"): "debug (own)",  # once a function is compiled
    ("pytensor.link.basic", "PerformLinker"): "py",  # JITLinker's backends derive from it
}

_WRAPPING = ("modecfg._pytensor.subclasses", "WrappingLinker")
_KINDS = {kind: frozenset(names) for kind, names in CLASSES.items()}


def _is(obj: Any, kind: str) -> bool:
    names = _KINDS[kind]
    return any((cls.__module__, cls.__qualname__) in names for cls in type(obj).__mro__)


def is_shape_op(op: Any) -> bool:
    """An operation that reads a shape (``x.shape``, ``x.shape[i]``, ``specify_shape``)."""
    return _is(op, "shape")


def is_elemwise(op: Any) -> bool:
    return _is(op, "elemwise")


def is_cast(op: Any) -> bool:
    """A scalar cast (as an Elemwise's ``scalar_op``, or itself)."""
    return _is(op, "cast")


def is_constant(var: Any) -> bool:
    return _is(var, "constant")


def is_uninitialised(var: Any) -> bool:
    """A variable whose value is memory no one wrote yet, wholly or in part: an ``AllocEmpty``, or
    part of one written into (a loop's output buffer with its first rows set): any value is right."""
    while var.owner is not None:
        if _is(var.owner.op, "uninitialised"):
            return True
        if not _is(var.owner.op, "writes_into"):
            return False
        var = var.owner.inputs[0]
    return False


def is_loop(op: Any) -> bool:
    """A ``Scan``."""
    return _is(op, "loop")


def linker_name(linker: Any) -> str:
    """A PyTensor linker object by its table name (cvm, vm, numba, ...): the one function that
    says it. NanGuardMode's guard is named by the linker it guards; the marked linker of
    ``linker=per_graph`` is "per_graph (chosen per graph)"; a class of no known kind by its name."""
    hierarchy = [(cls.__module__, cls.__qualname__) for cls in type(linker).__mro__]
    if _WRAPPING in hierarchy:
        return linker_name(linker.inner)
    if getattr(linker, "modecfg_auto", False):  # modecfg._pytensor.marks.AUTO
        return "per_graph (chosen per graph)"
    for key in hierarchy:  # the most specific class first
        name = LINKERS.get(key)
        if name is not None:
            if name == "vm":
                if not getattr(linker, "c_thunks", True):
                    return "vm (Python thunks)"
                return "cvm" if linker.use_cloop else "vm"
            return name
    return type(linker).__name__


def runs_c_code(linker: Any) -> bool:
    """Whether ``linker`` runs PyTensor's C implementations (the BLAS question matters)."""
    name = linker_name(linker)
    return name in ("cvm", "vm", "c", "c|py", "debug (own)", "wrap (monitor)", "per_graph (chosen per graph)")


def missing(*, loaded_only: bool = False) -> list[str]:
    """The classes named here that the installed PyTensor does not define where named (imports
    their modules: for ``modecfg doctor`` and the contact check, never on a hot path).
    ``loaded_only``: only in the modules already imported (the check at PyTensor's import,
    which must not load DebugMode's or numba's modules for a process that never uses them)."""
    gone = []
    for module_name, name in sorted({*LINKERS, *(pair for pairs in CLASSES.values() for pair in pairs)}):
        if loaded_only and module_name not in sys.modules:
            continue
        try:
            cls = getattr(importlib.import_module(module_name), name)
        except Exception:
            gone.append(f"{module_name}.{name}")
            continue
        if not isinstance(cls, type):
            gone.append(f"{module_name}.{name} (not a class)")
        elif (cls.__module__, cls.__qualname__) != (module_name, name):
            gone.append(f"{module_name}.{name} (now {cls.__module__}.{cls.__qualname__})")
    return gone
