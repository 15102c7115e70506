"""What building a mode needs of PyTensor: its Mode class, its named modes and rewrite sets,
the Python VM, and whether its rewrite database can apply required tags.

:mod:`modecfg.modes.build` decides *which* mode the configuration asks for; this module
makes the PyTensor objects. Importing it does not import PyTensor.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "fast_compile_optimizer",
    "make_mode",
    "predefined_linker",
    "predefined_optimizer",
    "pytensor_mode",
    "python_vm",
    "requiring_defect",
]


def make_mode(linker: Any, optimizer: Any) -> Any:
    """A PyTensor ``Mode`` of ``linker`` (a name or a linker) and ``optimizer`` (a query or a name)."""
    from pytensor.compile.mode import Mode

    return Mode(linker=linker, optimizer=optimizer)


def pytensor_mode(name: str) -> tuple[Any, Any]:
    """(linker, rewrite query) of PyTensor's own mode ``name`` (``NUMBA``, ``JAX``, ...)."""
    from pytensor.compile import mode as ptmode

    own = getattr(ptmode, name)
    return own.linker, own.provided_optimizer


def predefined_linker(name: str) -> Any:
    """A copy of PyTensor's linker of that name (``cvm``, ``vm``, ...): its own object stays as it is."""
    import copy

    from pytensor.compile.mode import predefined_linkers

    return copy.copy(predefined_linkers[name])


def predefined_optimizer(name: str) -> Any:
    """PyTensor's rewrite query of that ``optimizer`` flag value (``fast_run``, ``None``, ...)."""
    from pytensor.compile import mode as ptmode

    return ptmode.predefined_optimizers[name]


def fast_compile_optimizer() -> Any:
    """The rewrites of PyTensor's FAST_COMPILE mode."""
    from pytensor.compile import mode as ptmode

    return ptmode.FAST_COMPILE.provided_optimizer


def python_vm() -> Any:
    """The vm linker running every node's Python implementation."""
    from pytensor.link.vm import VMLinker

    return VMLinker(use_cloop=False, c_thunks=False)


def requiring_defect() -> str:
    """'' if this PyTensor applies required rewrite tags, else what goes wrong (PyTensor 3.0-3.3:
    its rewrite database calls a method its OrderedSet lacks, and every compile fails)."""
    import pytensor
    from pytensor.misc.ordered_set import OrderedSet

    if hasattr(OrderedSet, "intersection_update"):
        return ""
    version = pytensor.__version__
    return f"PyTensor {version} cannot apply required rewrite tags (its rewrite database fails on them)"
