"""Values as PyTensor takes them: which modecfg values it accepts (PyTensor parses ``str()`` of
each: the text of a float is its shortest repr, which reads back the same)."""

from __future__ import annotations

from typing import Any

from modecfg._pytensor.version import pytensor_version
from modecfg._registry.linkers import pytensor_linker_names
from modecfg._registry.modes import pytensor_mode_names
from modecfg.config.flags import Flag

__all__ = ["pytensor_accepts"]


def pytensor_accepts(spec: Flag, value: Any) -> bool:
    """Whether PyTensor's ``spec`` takes ``value`` (modecfg's own flags, and values such as
    ``linker=per_graph`` that PyTensor has no name for, stay modecfg's)."""
    if not spec.pytensor or (value is None and spec.name in ("blas.ldflags", "compiledir")):
        return False
    if not spec.in_pytensor(pytensor_version()):
        return False
    if spec.name == "mode":
        return value in pytensor_mode_names()
    if spec.name == "linker":
        return value in pytensor_linker_names()
    return True
