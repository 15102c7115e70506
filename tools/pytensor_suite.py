"""PyTensor's own tests with modecfg imported and without it: the same outcome, test by test.

    python tools/pytensor_suite.py CHECKOUT [TESTS ...]     # e.g. tests/test_config.py tests/tensor

CHECKOUT is PyTensor's repository at the installed release's tag (``git -C REPO worktree add
/tmp/pt rel-3.0.7``). Each side runs in its own process, one after the other, from CHECKOUT:
*with* imports modecfg before pytest starts; *without* turns modecfg's pytest plugin off
(``-p no:modecfg``: installing modecfg installs the plugin, which would import modecfg too) and
checks that modecfg was never imported. The outcome of every test (passed, failed, skipped,
xfailed, error) is read from pytest's JUnit XML; the tool prints the counts of each side and
every test whose outcome differs, and exits 1 when one does.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

RUN = """
import sys
if sys.argv[1] == "with":
    import modecfg  # noqa: F401
import pytest
code = pytest.main(sys.argv[2:])
if sys.argv[1] == "without" and "modecfg" in sys.modules:
    print("modecfg was imported in the run without it", file=sys.stderr)
    code = 3
sys.exit(code)
"""


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def outcomes(path: Path) -> dict[str, str]:
    """Test id -> outcome, from a JUnit XML report."""
    found: dict[str, str] = {}
    seen: Counter[str] = Counter()
    for case in ET.parse(path).getroot().iter("testcase"):
        # a parameter shown by its address (``<function <lambda> at 0x7f03...>``) names the same
        # test differently in each process: the address is left out, and tests that then share a
        # name are told apart by their order, which is collection's, the same in both runs
        name = _ADDRESS.sub(" at 0x…", f"{case.get('classname')}::{case.get('name')}")
        seen[name] += 1
        if seen[name] > 1:
            name += f" #{seen[name]}"
        kinds = {child.tag for child in case}
        if "failure" in kinds:
            outcome = "failed"
        elif "error" in kinds:
            outcome = "error"
        elif "skipped" in kinds:
            skipped = case.find("skipped")
            xfail = skipped is not None and skipped.get("type") == "pytest.xfail"
            outcome = "xfailed" if xfail else "skipped"
        else:
            outcome = "passed"
        found[name] = outcome
    return found


def run(side: str, checkout: Path, tests: list[str], report: Path) -> int:
    extra = ["-p", "no:modecfg"] if side == "without" else []
    command = [sys.executable, "-c", RUN, side, "-q", "-p", "no:cacheprovider", *extra,
               f"--junitxml={report}", *tests]  # fmt: skip
    return subprocess.run(command, cwd=checkout, stdout=subprocess.DEVNULL).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="PyTensor's repository at the installed tag")
    parser.add_argument("tests", nargs="*", default=["tests/test_config.py"], help="test paths in it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        found = {}
        for side in ("with", "without"):
            report = Path(scratch) / f"{side}.xml"
            code = run(side, args.checkout, args.tests, report)
            if code == 3 or not report.exists():
                print(f"{side}: the run failed (exit {code}) before reporting", file=sys.stderr)
                return 2
            found[side] = outcomes(report)
            if not found[side]:  # pytest stopped before any test (a path not found, a usage error)
                print(f"{side}: no test ran (pytest exit {code}): nothing to compare", file=sys.stderr)
                return 2
    for side, results in found.items():
        counts = Counter(results.values())
        print(f"{side:>8}: " + ", ".join(f"{counts[k]} {k}" for k in sorted(counts)))
    differ = sorted(
        name for name in found["with"].keys() | found["without"].keys()
        if found["with"].get(name) != found["without"].get(name)
    )  # fmt: skip
    for name in differ:
        print(f"  differs: {name}: with {found['with'].get(name)}, without {found['without'].get(name)}")
    print("the same outcome for every test" if not differ else f"{len(differ)} tests differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
