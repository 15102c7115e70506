"""tools/pytensor_suite.py: PyTensor's tests with modecfg and without, outcome by outcome."""

from __future__ import annotations

from pathlib import Path

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
