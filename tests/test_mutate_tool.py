"""tools/mutate.py (`make mutate`): what it mutates, and how it counts (mutmut itself runs outside CI)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tools import mutate

ROOT = Path(__file__).resolve().parents[1]


def test_mutmut_mutates_exactly_the_modules_the_report_scores() -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    assert settings["only_mutate"] == list(mutate.MODULES.values())
    assert all((ROOT / path).is_file() for path in mutate.MODULES.values())


def test_every_equivalent_mutant_is_named_quoted_and_explained() -> None:
    entries = mutate.read_equivalents()
    prefixes = tuple(mutate.names_of(path) for path in mutate.MODULES.values())
    assert all(name.startswith(prefixes) and "__mutmut_" in name for name in entries)
    assert all(len(entry.why.split()) >= 4 for entry in entries.values())  # a reason, not a shrug


@pytest.mark.parametrize(
    "text",
    [
        "modecfg.configuration.store.x_f__mutmut_1 | x = 1\n",  # no reason
        "modecfg.configuration.store.x_f__mutmut_1 |  | an empty line as mutated\n",
        "a | b | c\na | b | c\n",  # named twice
    ],
)
def test_a_malformed_equivalent_list_is_refused_with_its_line(tmp_path: Path, text: str) -> None:
    listing = tmp_path / "equivalent.txt"
    listing.write_text("# comment\n\n" + text)
    with pytest.raises(SystemExit, match=rf"{listing}:\d+: "):
        mutate.read_equivalents(listing)


NAME = "modecfg.linkers.auto.x_f__mutmut_"  # mutants of a function f of linkers/auto.py


def _results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codes: dict[int, int | None], line: str
) -> None:
    """A run's results for auto.py (exit code per mutant number); each mutant writes ``line``."""
    monkeypatch.setattr(mutate, "MUTANTS", tmp_path)
    monkeypatch.setattr(mutate, "mutated_line", lambda mutant: line)
    meta = tmp_path / (mutate.MODULES["auto"] + ".meta")
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {f"{NAME}{n}": code for n, code in codes.items()}}))
    monkeypatch.setattr(mutate, "SOURCES", tmp_path / "sources.json")  # run on auto.py as it is
    mutate.SOURCES.write_text(json.dumps({"auto": mutate.source_digest("auto")}))


def test_the_score_counts_timeouts_and_type_errors_as_caught_untested_code_as_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = NAME
    _results(
        tmp_path, monkeypatch, {1: 1, 2: 1, 3: 36, 4: 37, 5: 0, 6: 33, 7: 0, 8: 1, 9: 1, 10: 1}, "return None"
    )
    equivalents = {f"{name}7": mutate.Equivalent(f"{name}7", "return None", "why it cannot be told")}
    problems: list[str] = []
    result = mutate.score("auto", equivalents, problems)
    assert (result.total, result.killed, result.typed, result.timeout, result.equivalent) == (10, 6, 1, 1, 1)
    assert result.survivors == [f"{name}5"] and result.untested == [f"{name}6"] and problems == []
    assert result.score == pytest.approx(0.8)


def test_a_mutated_line_may_hold_the_separator(tmp_path: Path) -> None:
    listed = tmp_path / "equivalent.txt"
    listed.write_text("modecfg.x.x_f__mutmut_1 | ok = a | b | either operator gives the same here\n")
    (entry,) = mutate.read_equivalents(listed).values()
    assert (entry.line, entry.why) == ("ok = a | b", "either operator gives the same here")


def test_a_stale_equivalent_entry_is_a_problem_not_a_kill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = NAME
    _results(tmp_path, monkeypatch, {1: 0, 2: 1}, "x = 2")
    equivalents = {
        f"{name}1": mutate.Equivalent(f"{name}1", "x = 1", "the line it was written for"),
        f"{name}2": mutate.Equivalent(f"{name}2", "x = 2", "killed now, so not equivalent"),
        f"{name}9": mutate.Equivalent(f"{name}9", "x = 3", "a mutant that no longer exists"),
    }
    problems: list[str] = []
    result = mutate.score("auto", equivalents, problems)
    assert result.equivalent == 0 and result.survivors == [f"{name}1"]
    assert len(problems) == 3 and "now mutates 'x = 2'" in problems[0]
    assert "a test kills it" in problems[1] and "no such mutant" in problems[2]


def test_results_of_another_version_of_the_module_are_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _results(tmp_path, monkeypatch, {1: 1}, "x = 1")
    mutate.SOURCES.unlink()
    said = "auto: its results are of another modecfg/linkers/auto.py: run `make mutate MODULE=auto`"
    for recorded, problems_said in (
        (None, [said]),  # no record of the code they ran on
        ({"auto": "0" * 64}, [said]),  # the module changed since
        ({"auto": mutate.source_digest("auto")}, []),  # the code as it is (its mtime does not matter)
    ):
        if recorded is not None:
            mutate.SOURCES.write_text(json.dumps(recorded))
        problems: list[str] = []
        mutate.score("auto", {}, problems)
        assert problems == problems_said
    _results(tmp_path / "never", monkeypatch, {1: None}, "x = 1")  # generated, never run: only unchecked
    mutate.SOURCES.unlink()
    problems = []
    assert mutate.score("auto", {}, problems).unchecked == 1 and problems == []


def test_a_rerun_of_survivors_takes_those_no_test_killed_and_only_on_the_same_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _results(tmp_path, monkeypatch, {1: 1, 2: 0, 3: 36, 4: 37, 5: 33, 6: None, 7: -24, 8: 0}, "x = 1")
    listed = tmp_path / "equivalent.txt"
    listed.write_text(f"{NAME}8 | x = 1 | why\n")
    monkeypatch.setattr(mutate, "EQUIVALENT", listed)
    assert mutate.left_over("auto") == [f"{NAME}2", f"{NAME}5", f"{NAME}6"]  # not 8: listed as equivalent
    mutate.SOURCES.write_text(json.dumps({"auto": "0" * 64}))  # the module changed since: all run again
    assert mutate.left_over("auto") is None
    mutate.SOURCES.unlink()
    assert mutate.left_over("auto") is None


def test_a_copy_left_empty_by_an_interrupted_run_or_never_mutated_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutate, "MUTANTS", tmp_path)
    empty, whole = tmp_path / mutate.MODULES["auto"], tmp_path / mutate.MODULES["store"]
    plain = tmp_path / mutate.MODULES["trim"]  # copied by mutmut before trim was a core module
    for path, text in ((empty, ""), (whole, "x = 1\n"), (plain, "x = 1\n")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for path in (empty, whole):
        Path(f"{path}.meta").write_text("{}")
    assert mutate.drop_truncated() == [mutate.MODULES["auto"], mutate.MODULES["trim"]]
    assert not empty.exists() and not plain.exists() and whole.read_text() == "x = 1\n"


def test_results_of_a_source_whose_time_alone_changed_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mutmut would make the mutants again (and forget their results) for a source newer than its
    copy: a checkout restores a file unchanged but dated now. The same digest keeps them; another
    does not."""
    import os

    _results(tmp_path, monkeypatch, {1: 1}, "x = 1")
    copy = tmp_path / mutate.MODULES["auto"]
    copy.write_text("the mutated copy\n")
    os.utime(copy, (0, 0))  # older than the source
    assert mutate.keep_results() == ["auto"]
    assert copy.stat().st_mtime > (mutate.ROOT / mutate.MODULES["auto"]).stat().st_mtime - 1
    assert mutate.keep_results() == []  # dated now: nothing to do
    os.utime(copy, (0, 0))
    mutate.SOURCES.write_text(json.dumps({"auto": "0" * 64}))  # results of another source: mutmut's to redo
    assert mutate.keep_results() == [] and copy.stat().st_mtime == 0


def test_the_record_of_which_tests_reach_what_is_made_again_for_a_changed_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A function new in a changed module has no test in mutmut's old record (it only adds new
    tests to it): its mutants would count as untested."""
    _results(tmp_path, monkeypatch, {1: 1}, "x = 1")
    stats = tmp_path / "mutmut-stats.json"
    stats.write_text("{}")
    assert mutate.drop_stale_stats(["auto"]) is False and stats.exists()  # auto as it was run
    mutate.SOURCES.write_text(json.dumps({"auto": "0" * 64}))  # auto changed since
    assert mutate.drop_stale_stats(["auto"]) is True and not stats.exists()
    assert mutate.drop_stale_stats(["auto"]) is False  # nothing left to drop


def test_a_copy_of_a_module_the_source_no_longer_has_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mutmut never removes a copy: after a rename (_terminal.py to terminal.py) the old copy stayed,
    and the layer test, run in the copy, refused a module no layer names."""
    source, copy = tmp_path / "src", tmp_path / "mutants"
    monkeypatch.setattr(mutate, "MUTANTS", copy)
    for root in (source, copy):
        (root / "modecfg" / "cli").mkdir(parents=True)
        (root / "modecfg" / "terminal.py").write_text("x = 1\n")
    (copy / "modecfg" / "_terminal.py").write_text("x = 1\n")
    (copy / "modecfg" / "_terminal.py.meta").write_text("{}")
    (copy / "modecfg" / "cli.py").write_text("x = 1\n")  # now a package in the source
    for root in (source, copy):  # a test deleted from the source (adoption's, issue 49) ran in the copy
        (root / "tests" / "_pytensor").mkdir(parents=True)
        (root / "tests" / "_pytensor" / "test_view.py").write_text("x = 1\n")
    (copy / "tests" / "_pytensor" / "test_adopt.py").write_text("x = 1\n")
    (copy / "tests" / "mutation-equivalent.txt").write_text("")  # a data file gone too
    (copy / "tests" / "_pytensor" / "__pycache__").mkdir()
    (copy / "tests" / "_pytensor" / "__pycache__" / "test_view.cpython-311.pyc").write_bytes(b"")
    # a package renamed (config to configuration): its folder kept only a __pycache__, which
    # Python imports as a namespace package
    (copy / "modecfg" / "config" / "__pycache__").mkdir(parents=True)
    (copy / "modecfg" / "config" / "__pycache__" / "store.cpython-311.pyc").write_bytes(b"")
    assert mutate.drop_removed(source) == [
        "modecfg/_terminal.py", "modecfg/cli.py", "modecfg/config/",
        "tests/_pytensor/test_adopt.py", "tests/mutation-equivalent.txt",
    ]  # fmt: skip
    assert sorted(p.name for p in (copy / "modecfg").iterdir()) == ["cli", "terminal.py"]
    assert sorted(p.name for p in (copy / "tests" / "_pytensor").iterdir()) == ["__pycache__", "test_view.py"]
    assert mutate.drop_removed(source) == []


def test_the_modules_asked_run_in_one_mutmut_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """One run for all: mutmut's type check and its record of what tests reach are paid once."""
    calls: list[list[str]] = []

    def run(args: list[str], **kwargs: object) -> object:
        calls.append(list(args))
        return mutate.subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(mutate.subprocess, "run", run)
    mutate.run(["auto", "store"], 2, {"auto": None, "store": ["modecfg.configuration.store.x_a__mutmut_1"]})
    (args,) = calls
    assert args[args.index("run") + 1 :] == [
        "--max-children", "2", "modecfg.linkers.auto.x*", "modecfg.configuration.store.x_a__mutmut_1",
    ]  # fmt: skip


def test_a_package_s_own_mutants_are_told_from_its_submodules() -> None:
    own, sub = "modecfg.cli.x_main__mutmut_1", "modecfg.cli.cache.x_show__mutmut_1"
    assert mutate.dotted("modecfg/cli/__init__.py") == "modecfg.cli"
    assert own.startswith(mutate.names_of("modecfg/cli/__init__.py"))
    assert not sub.startswith(mutate.names_of("modecfg/cli/__init__.py"))
    assert sub.startswith(mutate.names_of("modecfg/cli/cache.py"))
    assert "modecfg_autoload.xǁA·ǁb__mutmut_2".startswith(mutate.names_of("modecfg_autoload.py"))


def test_importing_the_suite_starts_no_jax_runtime(tmp_path: Path) -> None:
    """mutmut forks each mutant's tests from a process that has imported every test module: JAX's
    runtime started there (a module-level ``jax.devices()``) makes every forked JAX call wait, and
    the run stops at its clean test ("Failed to run clean test", as this stop's first runs did)."""
    import os
    import subprocess
    import sys

    from tests.fresh import pythonpath

    (tmp_path / "jax_probe.py").write_text(
        "def pytest_collection_finish(session):\n"
        "    import sys\n"
        "    bridge = sys.modules.get('jax._src.xla_bridge')\n"
        "    print('JAX RUNTIME STARTED:', bool(bridge and bridge.backends_are_initialized()))\n"
    )
    env = {**os.environ, "PYTHONPATH": pythonpath(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "jax_probe", "-p", "no:cacheprovider",
         "tests"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "JAX RUNTIME STARTED: False" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]


def test_a_mutmut_run_that_stops_says_where_to_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """mutmut's "Failed to run clean test" names no test: the tool says how to find it."""
    import subprocess

    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: subprocess.CompletedProcess(args, 1))
    with pytest.raises(SystemExit) as stopped:
        mutate.run(["store"], 2, {"store": None})
    assert str(stopped.value).startswith("mutmut stopped (status 1).")
    assert "debug = true under [tool.mutmut]" in str(stopped.value)
