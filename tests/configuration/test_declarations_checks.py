"""The three checks the declarations import on first use (``modecfg.configuration.units`` and
``partition`` are not imported at start-up) are the checks of those modules, answer for answer."""

from __future__ import annotations

import pytest

from modecfg.configuration import declarations, partition, units


def _answer(check: object, text: str) -> str:
    try:
        return f"ok {check(text)!r}"  # type: ignore[operator]
    except ValueError as exc:
        return f"ValueError {exc}"


@pytest.mark.parametrize(
    ("name", "real", "texts"),
    [
        ("check_size", units.check_size, [" 2GiB ", "500MB", "800M", "12", "2 parsecs", ""]),
        ("check_duration", units.check_duration, [" 31d", "12h", "90m", "3 years", ""]),
        (
            "check_compiledir_format",
            partition.check_compiledir_format,
            ["c_%(short_platform)s-%(job)s", "c_%(nonsense)s", "plain"],
        ),
    ],
)
def test_a_declared_check_answers_as_its_modules_check(name: str, real: object, texts: list[str]) -> None:
    lazy = getattr(declarations, name)
    assert lazy is not real
    answers = [_answer(lazy, text) for text in texts]
    assert answers == [_answer(real, text) for text in texts]
    assert any(a.startswith("ok") for a in answers) and any(a.startswith("ValueError") for a in answers)
