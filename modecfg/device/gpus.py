"""The JAX backend, as the ``device`` flag uses it: which GPUs JAX sees, and selecting one.

JAX is imported only when a GPU device is asked for (or ``modecfg doctor`` asks).
"""

from __future__ import annotations

import functools
from typing import Any

from modecfg._registry.linkers import installed

__all__ = ["gpu_devices", "select_gpu"]


@functools.cache
def gpu_devices() -> tuple[Any, ...]:
    """The GPUs JAX can see (empty if JAX is missing or has no CUDA)."""
    if not installed("jax"):
        return ()
    import jax

    try:
        return tuple(jax.devices("gpu"))
    except RuntimeError:  # "Unknown backend: 'gpu' requested", a CPU-only jaxlib
        return ()


def select_gpu(index: int) -> None:  # pragma: no cover - needs a GPU
    """Make GPU ``index`` JAX's default device, where PyTensor's JAX linker runs."""
    import jax

    jax.config.update("jax_default_device", gpu_devices()[index])
