"""Loading PyTensor and compiling with it: what the layers above ask of PyTensor itself.

``import pytensor`` is what puts modecfg's integration in (the import hook hands PyTensor
its flags and installs the patches), so a layer that needs PyTensor loaded asks here
rather than importing it.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["compile_function", "is_loaded", "load_pytensor"]


def is_loaded() -> bool:
    """Whether PyTensor is imported in this process (asking never imports it)."""
    return "pytensor" in sys.modules


def load_pytensor() -> None:
    """Import PyTensor (a no-op once it is); errors of its start-up are the caller's to say."""
    import pytensor  # noqa: F401


def compile_function(inputs: Any, outputs: Any, mode: Any, **kwargs: Any) -> Any:
    """``pytensor.function(inputs, outputs, mode=mode, **kwargs)``. (Its profile records the
    shapes of values, for a memory section, only where the ``profile`` and ``profile_memory``
    flags are both on while it is called: PyTensor's Stack VM reads them at each call, and
    turning them on for the compile alone linked a VM that timed nothing.)"""
    import pytensor

    return pytensor.function(inputs, outputs, mode=mode, **kwargs)
