"""A JAX function's profile: what it did on its device, in words (the report's text and HTML)."""

from __future__ import annotations

from typing import Any

__all__ = ["device_lines"]


def _size(n: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def device_lines(figures: dict[str, Any]) -> list[str]:
    """What a JAX function did on its device, in words: where, how it was compiled and run,
    the bytes it moved per call, and a shared variable that crosses every call."""
    lines = [
        f"ran on {figures['device']} through jax (x64 {'on' if figures.get('x64') else 'off'}, "
        f"matmul precision {figures.get('precision')}): one XLA program, timed whole and finished on "
        "the device; per-node times are JAX's profiler's (jax.profiler.trace)"
    ]
    first = figures.get("first_call")
    if first is not None:
        lines.append(f"first call (trace, XLA compile, run): {first * 1e3:.1f} ms")
    calls = int(figures.get("calls") or 0)
    if not calls:
        lines.append("no call timed after the first")
        return lines
    run, sent = float(figures["run"]), float(figures["sent"])
    sent_bytes, returned = int(figures["sent_bytes"]), int(figures["returned_bytes"])
    lines.append(
        f"per call ({calls} timed): {run / calls * 1e3:.3f} ms on the device; sent to it "
        f"{_size(sent_bytes / calls)} in {sent / calls * 1e3:.3f} ms; outputs {_size(returned / calls)}, "
        "left on the device (moved when read)"
    )
    for name, (times, total) in sorted(dict(figures.get("shared_sent") or {}).items()):
        every = (
            " on every call: the data is not resident, set_value gives it a new value each call"
            if times >= calls
            else ""
        )
        lines.append(f"shared variable {name!r}: {_size(total)} sent in {times} of {calls} calls{every}")
    return lines
