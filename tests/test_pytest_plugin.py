"""The pytest plugin, run as users run it: pytest in a fresh process, the plugin from its entry point."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

MARKED = """
import pytest
import modecfg

seen = []

def _line(tag):  # the line of this file that ends with tag
    return next(n for n, text in enumerate(open(__file__).read().splitlines(), 1) if text.endswith(tag))

def _where(name):
    origin = modecfg.config.origin(name)
    return origin.source.rsplit("/", 1)[-1], origin.line

@pytest.fixture
def watch():
    seen.append(("setup", modecfg.config.floatX))
    yield
    seen.append(("teardown", modecfg.config.floatX))

@pytest.mark.modecfg(floatX="float32", traceback__limit=2)  # mark-A
def test_marked(watch):
    assert (modecfg.config.floatX, modecfg.config.traceback.limit) == ("float32", 2)
    assert modecfg.config.origin("floatX").layer == "override"
    assert "@pytest.mark.modecfg of" in modecfg.config.origin("floatX").source
    assert _where("floatX") == ("test_marks.py", _line("# mark-A"))

@pytest.mark.modecfg(floatX="float16")
def test_marked_and_failing():
    assert modecfg.config.floatX == "float32", "fails on purpose"

def test_after_them_the_defaults_are_back():
    assert seen == [("setup", "float32"), ("teardown", "float32")]
    assert modecfg.config.floatX == "float64" and modecfg.config.overrides() == {}

@pytest.mark.modecfg(floatX="float32", mode="FAST_COMPILE")  # mark-class
class TestClass:
    @pytest.mark.modecfg(floatX="float16")  # mark-method
    def test_closest_mark_wins_per_flag(self):
        assert (modecfg.config.floatX, modecfg.config.mode) == ("float16", "FAST_COMPILE")
        assert _where("floatX") == ("test_marks.py", _line("# mark-method"))
        assert _where("mode") == ("test_marks.py", _line("# mark-class"))

@pytest.mark.parametrize("want", [
    "float64",
    pytest.param("float32", marks=pytest.mark.modecfg(floatX="float32")),  # mark-param32
    pytest.param("float16", marks=pytest.mark.modecfg({"floatX": "float16"})),  # mark-param16
])
def test_parametrized(want):
    assert modecfg.config.floatX == want
    if want != "float64":
        assert _where("floatX") == ("test_marks.py", _line("# mark-param" + want[-2:]))

@pytest.mark.modecfg(floatX="float33")  # mark-bad
def test_bad_value():
    pass

def test_isolated_config(modecfg_config):
    assert modecfg.config.exception_verbosity == "high"  # THEANO_FLAGS
    assert modecfg_config.exception_verbosity == "low"  # not read: the defaults only
"""


def test_marks_hold_from_setup_to_teardown_and_go_with_the_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THEANO_FLAGS", "exception_verbosity=high")
    pytester.makepyfile(test_marks=MARKED)
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=7, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*test_marked_and_failing FAILED*", "*fails on purpose*"])
    # the bad value is an error of its test, naming the value, the mark and where it is
    result.stdout.fnmatch_lines(["*test_bad_value ERROR*"])
    written = (pytester.path / "test_marks.py").read_text().splitlines()
    bad = next(n for n, text in enumerate(written, 1) if text.endswith("# mark-bad"))
    where = f"@pytest.mark.modecfg of *test_marks.py:{bad})"
    result.stdout.fnmatch_lines([f"*FlagValueError: floatX='float33' (from override at {where}*"])
    # no header: the header comes before the marks, and nothing imported modecfg by then
    assert "modecfg: " not in result.stdout.str().split("collected", 1)[0]
    # a project that imports modecfg itself (its conftest): the header, every flag not at its
    # default, with its origin
    pytester.makeconftest("import modecfg\n")
    result = pytester.runpytest_subprocess("-v")
    result.stdout.fnmatch_lines(["modecfg: *exception_verbosity='high' (THEANO_FLAGS)*"])


def test_the_run_wide_option_assigns_and_a_bad_one_stops_the_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_run="""
        import modecfg
        def test_it():
            assert modecfg.config.floatX == "float32"
            assert str(modecfg.config.origin("floatX")) == "assignment at pytest --modecfg-flags"
        """
    )
    good = pytester.runpytest_subprocess("--modecfg-flags", "floatX=float32")
    good.assert_outcomes(passed=1)
    good.stdout.fnmatch_lines(["modecfg: *floatX='float32' (assignment at pytest --modecfg-flags)*"])
    bad = pytester.runpytest_subprocess("--modecfg-flags", "floatx=float32")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--modecfg-flags: unknown flag 'floatx'*did you mean floatX?*"])


def test_the_plugin_can_be_turned_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_off="def test_it():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:modecfg")
    result.assert_outcomes(passed=1)
    assert "modecfg:" not in result.stdout.str()


def test_a_project_that_never_names_modecfg_runs_with_pytensor_as_it_is(pytester: pytest.Pytester) -> None:
    """Issue 61: the plugin was a module of the package, so any pytest session of any project in
    an environment with modecfg installed imported modecfg and patched PyTensor."""
    pytester.makepyfile(
        test_theirs="""
        import sys

        def test_it():
            import pytensor
            from pytensor.configparser import PyTensorConfigParser
            assert "modecfg" not in sys.modules
            assert type(pytensor.config._config_var_dict) is dict  # PyTensor's own table
            assert "__setattr__" not in vars(PyTensorConfigParser)
            assert not [k for k in sys.modules if k == "modecfg" or k.startswith("modecfg.")]
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "modecfg:" not in result.stdout.str()  # no header (the test's own name holds "modecfg")


def test_a_mark_invites_modecfg(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_marked="""
        import sys
        import pytest

        @pytest.mark.modecfg(floatX="float32")
        def test_it():
            import modecfg
            assert modecfg.config.floatX == "float32"
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
