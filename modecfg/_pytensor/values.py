"""Values as PyTensor takes them: which modecfg values it accepts (PyTensor parses ``str()`` of
each: the text of a float is its shortest repr, which reads back the same)."""

from __future__ import annotations

from typing import Any

from modecfg._pytensor.version import pytensor_version
from modecfg.configuration.flags import Flag

__all__ = ["pytensor_accepts"]


def pytensor_accepts(spec: Flag, value: Any) -> bool:
    """Whether PyTensor's ``spec`` takes ``value``: the flag is this PyTensor's, and the value
    one its declaration says PyTensor takes (``Flag.pytensor_takes``: modecfg's own values, such
    as ``linker=per_graph``, stay modecfg's)."""
    if not spec.in_pytensor(pytensor_version()):
        return False
    return spec.pytensor_takes is None or spec.pytensor_takes(value)
