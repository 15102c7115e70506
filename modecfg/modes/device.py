"""The ``device`` flag: where graphs run.

``cpu`` runs on the linker the ``linker`` flag names. ``cuda`` / ``cudaN`` runs through a
GPU-capable backend, JAX with CUDA, in float32. When that cannot be had, the error says
exactly what is missing; with ``fallback_to_cpu=True`` it is a warning and the graph
runs on the CPU instead.
"""

from __future__ import annotations

from modecfg._pytensor.backends import gpu_devices, select_gpu
from modecfg._registry.linkers import installed
from modecfg._warn import warn
from modecfg.config import config
from modecfg.errors import DeviceFallbackWarning, DeviceUnavailableError, ModecfgWarning

__all__ = ["DeviceFallbackWarning", "device_linker", "gpu_devices", "resolved_linker", "why_no_gpu"]


def why_no_gpu(device: str) -> str:
    """Why ``device`` (cuda / cudaN) cannot be used here, or '' when it can."""
    if not installed("jax"):
        return (
            f"device={device} runs graphs through JAX with CUDA, and jax is not installed "
            "(pip install 'jax[cuda12]')"
        )
    gpus = gpu_devices()
    if not gpus:
        return (
            f"device={device} needs a GPU that JAX can see, and it sees none: install "
            "'jax[cuda12]' (not the CPU-only jax) on a machine with an NVIDIA GPU and driver"
        )
    index = int(device[4:] or 0)
    if index >= len(gpus):
        return f"device={device} does not exist: JAX sees {len(gpus)} GPU(s), cuda0 to cuda{len(gpus) - 1}"
    return ""


_warned: set[str] = set()


def device_linker() -> str | None:
    """'jax' when the device is a usable GPU, None for the CPU; raises if it cannot be used."""
    device = str(config.device)
    if not device.startswith("cuda"):
        return None
    why = why_no_gpu(device)
    if why:
        if config.fallback_to_cpu:
            if device not in _warned:
                _warned.add(device)
                warn(f"{why}; running on the CPU instead (fallback_to_cpu=True)", DeviceFallbackWarning)
            return None
        raise DeviceUnavailableError(
            f"{why}. Set device=cpu, or fallback_to_cpu=True to run on the CPU with a warning",
            flag="device",
        )
    select_gpu(int(device[4:] or 0))
    if config.floatX != "float32" and device not in _warned:
        _warned.add(device)
        warn(
            f"device={device} with floatX={config.floatX}: GPUs are fast in float32; set floatX=float32",
            ModecfgWarning,
        )
    return "jax"


def resolved_linker() -> str:
    """The linker the ``linker`` and ``device`` flags ask for, checked against this machine."""
    from modecfg.linkers import resolve_linker

    on_device = device_linker()
    if on_device is not None:
        return on_device
    return resolve_linker(str(config.linker), str(config.cxx))
