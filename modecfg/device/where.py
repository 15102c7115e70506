"""The ``device`` flag: where graphs run, and where a compiled function ran.

``cpu`` runs on the linker the ``linker`` flag names. ``cuda`` / ``cudaN`` runs through JAX
with CUDA on that GPU, strictly: when it cannot be had, the error says exactly what is
missing (``fallback_to_cpu=True`` makes it a warning and the CPU). Theano's spelling
``gpu`` / ``gpuN`` behaves as Theano's did: the GPU where one is usable, else the CPU with
one warning, unless ``force_device=True``.

:func:`ran_on` answers the question the Theano tutorial's exercise ends with (was the CPU or
the GPU used?) for one compiled function.
"""

from __future__ import annotations

from typing import Any

from modecfg._pytensor import marks
from modecfg._registry.linkers import installed, resolve_linker
from modecfg._warn import warn
from modecfg.configuration import config
from modecfg.device.gpus import gpu_devices, select_gpu
from modecfg.errors import DeviceFallbackWarning, DeviceUnavailableError, ModecfgWarning

__all__ = ["DeviceFallbackWarning", "device_linker", "gpu_devices", "ran_on", "resolved_linker", "why_no_gpu"]


def _index(device: str) -> int:
    digits = device.removeprefix("cuda").removeprefix("gpu")
    return int(digits or 0)


def why_no_gpu(device: str) -> str:
    """Why ``device`` (cuda / cudaN / gpu / gpuN) cannot be used here, or '' when it can."""
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
    index = _index(device)
    if index >= len(gpus):
        return f"device={device} does not exist: JAX sees {len(gpus)} GPU(s), cuda0 to cuda{len(gpus) - 1}"
    return ""


_warned: set[str] = set()


def _fall_back(device: str, why: str, because: str) -> None:
    if device not in _warned:
        _warned.add(device)
        warn(f"{why}; running on the CPU instead ({because})", DeviceFallbackWarning)


def device_linker() -> str | None:
    """'jax' when the device is a usable GPU, None for the CPU; raises if it cannot be used."""
    device = str(config.device)
    if device == "cpu":
        return None
    why = why_no_gpu(device)
    if why:
        if device.startswith("gpu") and not config.force_device:
            _fall_back(device, why, f"device={device} is Theano's spelling, which falls back; "
                       "device=cuda or force_device=True makes this an error")  # fmt: skip
            return None
        if device.startswith("cuda") and config.fallback_to_cpu:
            _fall_back(device, why, "fallback_to_cpu=True")
            return None
        fix = (
            "Set device=cpu, or device=gpu (Theano's spelling) without force_device to fall back"
            if device.startswith("gpu")
            else "Set device=cpu, or fallback_to_cpu=True to run on the CPU with a warning"
        )
        raise DeviceUnavailableError(f"{why}. {fix}", flag="device")
    select_gpu(_index(device))
    if config.floatX != "float32" and device not in _warned:
        _warned.add(device)
        warn(
            f"device={device} with floatX={config.floatX}: GPUs are fast in float32; set floatX=float32",
            ModecfgWarning,
        )
    return "jax"


def resolved_linker() -> str:
    """The linker the ``linker`` and ``device`` flags ask for, checked against this machine."""
    on_device = device_linker()
    if on_device is not None:
        return on_device
    return resolve_linker(str(config.linker), str(config.cxx))


def ran_on(fn: Any) -> str:
    """Where a compiled function's graph runs: ``cuda:0 (NVIDIA H100 80GB HBM3) through jax``,
    ``cpu:0 through jax``, ``cpu through numba``. For a JAX function, the device its shared
    variables live on and its calls run on."""
    from modecfg._pytensor.kinds import linker_name
    from modecfg.device.jaxlink import describe_device, device_of

    device = device_of(fn)
    if device is not None:
        return f"{describe_device(device)} through jax"
    maker = getattr(fn, "maker", None)
    linker = getattr(maker, "linker", None)
    if linker is None:
        raise TypeError(f"ran_on() takes a compiled PyTensor function, not {type(fn).__name__}")
    chosen = getattr(getattr(maker, "fgraph", None), marks.AUTO_CHOICE, None)  # linker=per_graph's pick
    name = str(chosen) if chosen else linker_name(linker)
    return f"cpu through {name}"
