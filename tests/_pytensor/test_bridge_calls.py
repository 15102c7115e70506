"""How far one statement travels inside modecfg (issue 49): each of these is at most 12 calls of
modecfg's functions in at most 4 of its files, counted by ``tools/calls.py`` (a profile hook,
after a warm-up). Before the one bridge: the assignment 70 calls in 10 files, the change_flags
statement at a new call site 24 in 6, a read of ``pytensor.config.floatX`` 8 in 3."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("pytensor")

from tools import calls

# mutmut's call switch adds frames of its own to every mutated function (its runs import the
# package from its mutants/ copy, and its first run hides MUTANT_UNDER_TEST: tests/conftest.py)
pytestmark = pytest.mark.skipif(
    "MUTANT_UNDER_TEST" in os.environ or "mutants" in Path(calls.ROOT).parts, reason="counted without mutants"
)


@pytest.mark.parametrize(
    "statement, most",
    [
        (calls._assign, 12),
        (calls._scope, 12),
        (calls._scope_new_site, 12),
        (calls._read_pytensor, 1),
        (calls._read_modecfg, 0),
    ],
    ids=["assignment", "change_flags", "change_flags at a new site", "pytensor read", "modecfg read"],
)
def test_a_statement_travels_a_short_way(statement: Callable[[], None], most: int) -> None:
    import modecfg

    floatx = modecfg.config.floatX
    try:
        counted = calls.count(statement)
    finally:
        modecfg.config.floatX = floatx
        modecfg.config.reset("floatX")
    files = {path for path, _ in counted}
    assert sum(counted.values()) <= most and len(files) <= 4, counted
    assert counted or most == 0  # the hook sees modecfg's calls: a count of none is not a blind one


def test_the_counter_sees_a_long_way_when_there_is_one() -> None:
    import modecfg

    counted = calls.count(lambda: modecfg.config.explain("floatX"))
    assert sum(counted.values()) > 12
