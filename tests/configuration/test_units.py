"""modecfg.configuration.units: sizes and durations as people write them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modecfg.configuration.units import (
    check_duration,
    check_size,
    human_duration,
    human_size,
    seconds,
    size_bytes,
)

UNITS = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


@given(st.integers(0, 10**6), st.sampled_from(sorted(UNITS)), st.sampled_from(["", " "]), st.booleans())
def test_a_number_and_a_unit_is_that_many_seconds(number: int, unit: str, gap: str, upper: bool) -> None:
    text = f" {number}{gap}{unit.upper() if upper else unit} "
    assert seconds(text) == number * UNITS[unit]
    assert check_duration(text) == text.strip()


@given(st.text(max_size=12))
def test_any_other_text_is_refused_with_what_is_valid(text: str) -> None:
    try:
        value = seconds(text)
    except ValueError as exc:
        assert str(exc) == (
            f"{text!r} is not a duration: write a number and one unit of s, m, h, d, w, "
            "e.g. 31d, 12h, 90m (seconds without one)"
        )
    else:
        assert value >= 0  # it was a number and a unit after all


@pytest.mark.parametrize("text", ["-1d", "1y", "d", "1.5.2h", "1 2h", "", "1e3"])
def test_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        seconds(text)


def test_fractions_of_units() -> None:
    assert seconds("1.5h") == 5400 and seconds(".5d") == 43200


@pytest.mark.parametrize(
    ("text", "count"),
    [("2GiB", 2 * 1024**3), ("500MB", 500 * 10**6), ("800M", 800 * 10**6), ("1024", 1024), (" 3 kib ", 3072)],
)
def test_sizes_are_pydantics_byte_sizes(text: str, count: int) -> None:
    assert size_bytes(text) == count and check_size(text) == text.strip()


@pytest.mark.parametrize("text", ["lots", "-1", "1e3", "2 parsecs", ""])
def test_what_is_not_a_size(text: str) -> None:
    with pytest.raises(ValueError, match=rf"^{text!r} is not a size: write a number and a unit"):
        size_bytes(text)


def test_what_people_read() -> None:
    assert [human_size(n) for n in (0, 1023, 1024, 5 * 1024**2, 3 * 1024**4)] == [
        "0 B", "1023 B", "1.0 KiB", "5.0 MiB", "3072.0 GiB"
    ]  # fmt: skip
    assert [human_duration(s) for s in (5, 89, 600, 5400, 7200, 3 * 86400)] == [
        "5 s", "89 s", "10 min", "1.5 h", "2.0 h", "3.0 days"
    ]  # fmt: skip
