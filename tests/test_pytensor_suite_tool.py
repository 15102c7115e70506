"""tools/pytensor_suite.py: PyTensor's tests with modecfg and without, outcome by outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import pytensor_suite
from tools.pytensor_suite import outcomes

XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_bad" time="0.1"><failure message="x">x</failure></testcase>
<testcase classname="tests.test_a" name="test_broken" time="0.1"><error message="e">e</error></testcase>
<testcase classname="tests.test_b" name="test_skip"><skipped type="pytest.skip" message="s"/></testcase>
<testcase classname="tests.test_b" name="test_xf"><skipped type="pytest.xfail" message="x"/></testcase>
</testsuite></testsuites>
"""


def test_each_outcome_is_read_from_the_junit_report(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text(XML)
    assert outcomes(report) == {
        "tests.test_a::test_ok": "passed",
        "tests.test_a::test_bad": "failed",
        "tests.test_a::test_broken": "error",
        "tests.test_b::test_skip": "skipped",
        "tests.test_b::test_xf": "xfailed",
    }


def test_a_parameter_shown_by_its_address_names_the_same_test_in_both_runs(tmp_path: Path) -> None:
    """PyTensor's numba tests are parametrized with lambdas, whose ids hold their addresses: a
    different id in each process for the same test (18 false differences before)."""
    passed = '<testcase classname="tests.t" name="test_rv[&lt;function &lt;lambda&gt; at {}&gt;-{}]"/>'
    xfailed = passed.replace("/>", '><skipped type="pytest.xfail" message="x"/></testcase>')
    found = []
    for first, second in [("0x7f0322b93d80", "0x7f0322b93e20"), ("0x7fe621d78900", "0x7fe621d789a0")]:
        cases = passed.format(first, "a") + xfailed.format(second, "a") + passed.format(second, "b")
        report = tmp_path / f"{first}.xml"
        report.write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
        found.append(outcomes(report))
    assert (
        found[0]
        == found[1]
        == {
            "tests.t::test_rv[<function <lambda> at 0x…>-a]": "passed",
            "tests.t::test_rv[<function <lambda> at 0x…>-a] #2": "xfailed",  # the same name: told by order
            "tests.t::test_rv[<function <lambda> at 0x…>-b]": "passed",
        }
    )


def test_a_run_where_no_test_ran_is_no_agreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A path that is not there: pytest reports nothing, and nothing agreeing is not 'the same
    outcome for every test' (it said so, with exit 0)."""
    assert pytensor_suite.main([str(tmp_path), "tests/not_there.py"]) == 2
    err = capsys.readouterr().err
    assert "with: no test ran (pytest exit 4): nothing to compare" in err
