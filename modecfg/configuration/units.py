"""Sizes and durations written as people write them: ``2GiB``, ``500MB``, ``31d``, ``12h``.

Sizes are pydantic's ``ByteSize`` (decimal and binary units, case-insensitive, bytes when
there is no unit). Durations are a number and one unit: ``s``, ``m``/``min``, ``h``, ``d``,
``w`` (seconds when there is no unit). The flags keep the text as written, checked; the
code that uses one asks here for its number.
"""

from __future__ import annotations

import re

__all__ = ["check_duration", "check_size", "human_duration", "human_size", "seconds", "size_bytes"]

_DURATION = r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*"  # compiled at first use (start-up compiles none)
_UNITS = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def size_bytes(text: str) -> int:
    """``text`` as a number of bytes; ValueError naming what is valid."""
    from modecfg._locks import load

    load("pydantic")  # a fork waits while it is imported (modecfg._locks)
    from pydantic import ByteSize, TypeAdapter, ValidationError

    try:
        return int(TypeAdapter(ByteSize).validate_python(text))
    except ValidationError:
        raise ValueError(
            f"{text!r} is not a size: write a number and a unit, e.g. 2GiB, 500MB, 800M (bytes without one)"
        ) from None


def seconds(text: str) -> float:
    """``text`` as seconds; ValueError naming what is valid."""
    match = re.fullmatch(_DURATION, text)
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS:
        raise ValueError(
            f"{text!r} is not a duration: write a number and one unit of s, m, h, d, w, "
            "e.g. 31d, 12h, 90m (seconds without one)"
        )
    return float(match.group(1)) * _UNITS[unit]


def check_size(text: str) -> str:
    size_bytes(text)
    return text.strip()


def check_duration(text: str) -> str:
    seconds(text)
    return text.strip()


def human_size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def human_duration(span: float) -> str:
    """A span of seconds the way a person says it: 40 s, 12 min, 5.2 h, 3.0 days."""
    if span < 90:
        return f"{span:.0f} s"
    if span < 90 * 60:
        return f"{span / 60:.0f} min"
    if span < 48 * 3600:
        return f"{span / 3600:.1f} h"
    return f"{span / 86400:.1f} days"
