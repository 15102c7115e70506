"""Which PyTensor a process has: the (major, minor) read from a version string."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from modecfg._pytensor.version import _major_minor, pytensor_version

_PATTERN = re.compile(r"(\d+)\.(\d+)")


def _as_the_pattern_reads_it(text: str) -> tuple[int, int] | None:
    found = _PATTERN.match(text)
    return (int(found[1]), int(found[2])) if found else None


def test_release_strings_give_their_major_and_minor() -> None:
    assert _major_minor("3.0.7") == (3, 0)
    assert _major_minor("3.3.8rc1") == (3, 3)
    assert _major_minor("10.22") == (10, 22)
    assert _major_minor("2.31.7+123.gabc") == (2, 31)
    for text in ("3", "3.", ".3", "v3.0", "", "3..0", "3.x"):
        assert _major_minor(text) is None, text


@given(st.text(alphabet=st.sampled_from("0123456789.٣²x+\n "), max_size=12) | st.text(max_size=8))
def test_it_reads_what_the_pattern_read(text: str) -> None:
    assert _major_minor(text) == _as_the_pattern_reads_it(text)


def test_the_loaded_pytensor_is_the_one_asked_about() -> None:
    import pytensor

    assert pytensor_version() == _as_the_pattern_reads_it(pytensor.__version__)
