"""Mutation testing of modecfg's core modules: how much of what could go wrong the suite catches.

    make mutate                  # every core module (about an hour on 2 cores)
    make mutate MODULE=store     # one module (names: the keys of MODULES below)
    python tools/mutate.py store view   # several, in one mutmut run
    python tools/mutate.py --report   # the table of the last run, without running anything
    python tools/mutate.py --survivors store   # after adding tests: rerun what survived only

mutmut (https://github.com/boxed/mutmut) makes the mutants: small semantic changes (an operator,
a comparison, a constant, a string, an argument dropped, a call's result replaced by None). It
runs the whole suite once to learn which tests call which function, then, for each mutant, only
those tests, in a process forked from its fork server, which has imported the tests but run
none of them (JAX's runtime threads start in the mutant's own process: its tests count). A
mutant some test fails on is *killed*; one that passes them all *survived*.

A survivor that no input can tell from the original is *equivalent*. It counts as killed only
when ``tests/mutation-equivalent.txt`` names it, quotes the line as mutated (so an entry that no
longer describes its mutant is refused, not silently reused) and says why. Mutants that mypy
rejects (``--strict``, as CI runs it) count as killed: such a change cannot land.

Each module must reach ``THRESHOLD``; the exit status is 1 when one does not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
EQUIVALENT = ROOT / "tests" / "mutation-equivalent.txt"
TIMES = MUTANTS / "modecfg-times.json"
SOURCES = MUTANTS / "modecfg-sources.json"  # module -> SHA-256 of the source its results are of
THRESHOLD = 0.90

MODULES = {
    "flagstring": "modecfg/configuration/flagstring.py",
    "resolve": "modecfg/configuration/resolve.py",
    "sources": "modecfg/configuration/sources.py",
    "rcformats": "modecfg/configuration/rcformats.py",
    "store": "modecfg/configuration/store.py",
    "sections": "modecfg/configuration/sections.py",
    "overrides": "modecfg/configuration/overrides.py",
    "flags": "modecfg/configuration/flags.py",
    "edit": "modecfg/configuration/edit.py",
    "snapshot": "modecfg/configuration/snapshot.py",
    "nanguard": "modecfg/nanguard/mode.py",
    "dump": "modecfg/nanguard/dump.py",
    "dump_reading": "modecfg/nanguard/dump_reading.py",
    "replaying": "modecfg/nanguard/replaying.py",
    "signing": "modecfg/signing.py",
    "float32": "modecfg/checks/float32.py",
    "view": "modecfg/_pytensor/view.py",
    "binding": "modecfg/_pytensor/binding.py",
    "auto": "modecfg/linkers/auto.py",
    "device": "modecfg/device/where.py",
    "jaxlink": "modecfg/device/jaxlink.py",
    "hostwrites": "modecfg/_pytensor/hostwrites.py",
    "trim": "modecfg/cache/trim.py",
    "entries": "modecfg/cache/entries.py",
    "holders": "modecfg/cache/holders.py",
    "travel": "modecfg/cache/travel.py",
    "repro": "modecfg/compare/repro.py",
    "graphsource": "modecfg/compare/graphsource.py",
    "compare": "modecfg/compare/mode.py",
    "judging": "modecfg/compare/judging.py",
    "search": "modecfg/compare/search.py",
    "theano_names": "modecfg/theano_names.py",
    "migrate": "modecfg/configuration/migrate.py",
    "cli": "modecfg/cli/__init__.py",
    "cli_cache": "modecfg/cli/cache.py",
    "cli_common": "modecfg/cli/common.py",
    "cli_config": "modecfg/cli/config.py",
    "cli_machine": "modecfg/cli/machine.py",
    "running": "modecfg/cli/running.py",
    "scripts": "modecfg/scripts.py",
    "autoload": "modecfg/autoload.py",
    "autoload_pth": "modecfg_autoload.py",
    "html": "modecfg/profiles/html.py",
    "rows": "modecfg/profiles/rows.py",
    "enforce": "modecfg/checks/enforce.py",
    "patch": "modecfg/_pytensor/patch.py",
    "wrapped": "modecfg/_pytensor/wrapped.py",
    "testvalue_contacts": "modecfg/testvalues/contacts.py",
    "device_contacts": "modecfg/device/contacts.py",
    "linkers_contacts": "modecfg/linkers/contacts.py",
    "profiles_contacts": "modecfg/profiles/contacts.py",
    "cache_contacts": "modecfg/cache/contacts.py",
    "record": "modecfg/_record.py",
    "lazy": "modecfg/_lazy.py",
    "schema": "modecfg/configuration/schema.py",
}

# mutmut's exit codes (mutmut.stats.status_by_exit_code) as this report counts them.
KILLED = {1, 3, -11, -9, 37}  # a test failed, pytest errored, the process crashed, mypy rejected it
TIMEOUT = {36, -24, 24, 152, 255}  # a test ran past 15x its normal time: the mutant hangs it
TYPE_CHECKED = 37


def dotted(path: str) -> str:
    """The module's name as mutmut's mutant names start (a package's ``__init__`` is the package)."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def names_of(path: str) -> str:
    """The beginning of every mutant name of the module at ``path``, and of no other module's: a
    package's submodules share its name, but its own functions are ``x_...`` or ``xǁ...``."""
    return dotted(path) + ".x"


@dataclass(frozen=True)
class Equivalent:
    name: str
    line: str
    why: str


def read_equivalents(path: Path = EQUIVALENT) -> dict[str, Equivalent]:
    """``NAME | the line as mutated | why`` per line; ``#`` starts a comment line."""
    found: dict[str, Equivalent] = {}
    if not path.exists():
        return found
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        # the line as mutated may hold " | " itself (a | b): the name is before the first, the why
        # after the last
        name, _, rest = text.partition(" | ")
        line, _, why = rest.rpartition(" | ")
        parts = [part.strip() for part in (name, line, why)]
        if not all(parts):
            raise SystemExit(f"{path}:{number}: expected 'NAME | the line as mutated | why', got {text!r}")
        name, line, why = parts
        if name in found:
            raise SystemExit(f"{path}:{number}: {name} is named twice")
        found[name] = Equivalent(name, line, why)
    return found


def mutated_line(name: str) -> str:
    """The line the mutant adds, as ``mutmut show`` prints it (first '+' line of the diff)."""
    shown = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", name], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    for text in shown.splitlines():
        if text.startswith("+") and not text.startswith("+++"):
            return text[1:].strip()
    return ""


@dataclass
class Score:
    module: str
    total: int = 0
    killed: int = 0
    typed: int = 0
    timeout: int = 0
    equivalent: int = 0
    survivors: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    unchecked: int = 0
    seconds: float | None = None

    @property
    def score(self) -> float:
        caught = self.killed + self.timeout + self.equivalent
        return caught / self.total if self.total else 1.0


def score(module: str, equivalents: dict[str, Equivalent], problems: list[str]) -> Score:
    meta = MUTANTS / (MODULES[module] + ".meta")
    result = Score(module)
    if not meta.exists():
        problems.append(f"{module}: no results ({meta} missing): run `make mutate MODULE={module}`")
        return result
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    if not ran_on_this_source(module) and any(code is not None for code in codes.values()):
        problems.append(
            f"{module}: its results are of another {MODULES[module]}: run `make mutate MODULE={module}`"
        )
    for name, code in sorted(codes.items()):
        result.total += 1
        if code is None:
            result.unchecked += 1
        elif code in KILLED:
            result.killed += 1
            result.typed += code == TYPE_CHECKED
            if name in equivalents:
                problems.append(f"{name} is listed as equivalent, yet a test kills it: remove the line")
        elif code in TIMEOUT:
            result.timeout += 1
        elif name in equivalents:
            entry = equivalents[name]
            now = mutated_line(name)
            if now != entry.line:
                problems.append(f"{name}: listed as equivalent for {entry.line!r}, but now mutates {now!r}")
                result.survivors.append(name)
            else:
                result.equivalent += 1
        elif code in (5, 33):
            result.untested.append(name)
        else:
            result.survivors.append(name)
    prefix = names_of(MODULES[module])
    problems += [f"{name}: listed as equivalent, no such mutant" for name in equivalents
                 if name.startswith(prefix) and name not in codes]  # fmt: skip
    return result


def source_digest(module: str) -> str:
    return hashlib.sha256((ROOT / MODULES[module]).read_bytes()).hexdigest()


def ran_on_this_source(module: str) -> bool:
    """Whether the last run of ``module`` was made from its source as it is now."""
    recorded = json.loads(SOURCES.read_text()).get(module) if SOURCES.exists() else None
    return recorded == source_digest(module)


def left_over(module: str) -> list[str] | None:
    """The mutants of ``module`` no test has killed yet (survived, untested, not run), when its
    results are of its source as it is now; None when they are not (then all must run)."""
    meta = MUTANTS / (MODULES[module] + ".meta")
    if not meta.exists() or not ran_on_this_source(module):
        return None
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    listed = read_equivalents(EQUIVALENT)  # survivors known to be equivalent: nothing to learn from a rerun
    caught = KILLED | TIMEOUT
    left = [name for name, code in codes.items() if code not in caught]
    return sorted(name for name in left if codes[name] is None or name not in listed)


def keep_results() -> list[str]:
    """mutmut makes a module's mutants again, and forgets their results, when its source is newer
    than its mutated copy. A source whose digest is the one the results are of only had its time
    changed (a checkout, an editor saving it unchanged): its copy is dated now, so that mutmut
    keeps them. The modules so kept."""
    kept = []
    for module, path in MODULES.items():
        copy = MUTANTS / path
        if (
            copy.exists()
            and ran_on_this_source(module)
            and (ROOT / path).stat().st_mtime > copy.stat().st_mtime
        ):
            os.utime(copy)
            kept.append(module)
    return kept


def drop_stale_stats(modules: list[str]) -> bool:
    """mutmut records once which tests reach which function, and afterwards only adds new tests:
    a function that is new in a changed module would have no test. When a module to run has
    changed since its last run, the record is dropped, and mutmut makes it again (the suite, once).
    Whether it was dropped."""
    stats = MUTANTS / "mutmut-stats.json"
    if stats.exists() and any(not ran_on_this_source(module) for module in modules):
        stats.unlink()
        return True
    return False


def drop_truncated() -> list[str]:
    """Copies mutmut would not mutate: left empty by an interrupted run (imported by every test,
    the module's mutants would be measured on nothing) or copied before the module was a core one;
    removed, so that mutmut makes them again."""
    dropped = []
    for path in MODULES.values():
        copy = MUTANTS / path
        meta = MUTANTS / (path + ".meta")
        # empty, or copied unmutated (a module added to MODULES after mutmut copied the tree): a
        # copy newer than its source is never mutated again, and the module would have no mutants
        if copy.exists() and (copy.stat().st_size == 0 or not meta.exists()):
            copy.unlink()
            dropped.append(path)
    return dropped


def drop_removed(source: Path | None = None) -> list[str]:
    """Copies of modules and tests the source no longer has (renamed or deleted since mutmut
    copied them): mutmut never removes a copy; a stale module is imported by the tests run in the
    copy (the layer test refuses a module no layer names), and a stale test runs, and fails, in
    the copy. Removed; the paths, relative to the copy."""
    source = ROOT if source is None else source
    dropped = []
    for top, pattern in (("modecfg", "*.py"), ("tests", "*")):
        copied = MUTANTS / top
        if not copied.is_dir():
            continue
        for path in sorted(copied.rglob(pattern)):
            relative = path.relative_to(MUTANTS)
            if path.is_dir() or "__pycache__" in relative.parts or path.suffix in (".meta", ".spans"):
                continue
            if not (source / relative).exists():
                path.unlink()
                for extra in (".meta", ".spans"):
                    Path(f"{path}{extra}").unlink(missing_ok=True)
                dropped.append(relative.as_posix())
        # A folder the source no longer has, left with only its __pycache__ (a package renamed),
        # is still importable, as a namespace package: `import modecfg.config.x` in the copy
        # would find it and rebind modecfg.config, the Config object, to it.
        for folder in sorted((p for p in copied.rglob("*") if p.is_dir()), reverse=True):
            relative = folder.relative_to(MUTANTS)
            if "__pycache__" not in relative.parts and not (source / relative).exists():
                shutil.rmtree(folder)
                dropped.append(relative.as_posix() + "/")
    return dropped


def mutant_count(module: str) -> int:
    """How many mutants of ``module`` its last run made (0 before any)."""
    meta = MUTANTS / (MODULES[module] + ".meta")
    return len(json.loads(meta.read_text())["exit_code_by_key"]) if meta.exists() else 0


def run(modules: list[str], jobs: int, names: dict[str, list[str] | None]) -> float:
    """Run mutmut once on every mutant of each module whose names are None, and on the names
    given of the others; the seconds it took."""
    # mutmut runs mypy (type_check_command) by name: this interpreter's, from its environment.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "MODECFG_TEST_CACHE": str(ROOT / ".cache"), "PATH": path}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs),
         *(name for module in modules
           for name in (names[module] or [names_of(MODULES[module]) + "*"]))],
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(STOPPED.format(status=done.returncode))
    return time.perf_counter() - start


# mutmut's own words for a test that fails before any mutant ran ("Failed to run clean test",
# "failed to collect stats") name no test unless its debug setting is on.
STOPPED = (
    "mutmut stopped (status {status}). If it said 'Failed to run clean test' or 'failed to collect "
    "stats', a test fails in its copy of the tree (mutants/): every modecfg function there goes "
    "through a trampoline (more frames, mutmut imported) and the tests were imported before they "
    "run (a runtime such as JAX's started at import makes forked runs wait). To see which test: "
    "debug = true under [tool.mutmut] in pyproject.toml, for one run."
)


def report(modules: list[str]) -> int:
    equivalents = read_equivalents()
    problems: list[str] = []
    times = json.loads(TIMES.read_text()) if TIMES.exists() else {}
    rows = []
    for module in modules:
        result = score(module, equivalents, problems)
        result.seconds = times.get(module)
        rows.append(result)
    print(f"\n{'module':<11} {'mutants':>7} {'killed':>7} {'(mypy)':>6} {'timeout':>7} {'equiv.':>6} "
          f"{'survived':>8} {'no test':>7} {'score':>6} {'time':>7}")  # fmt: skip
    for r in rows:
        took = f"{r.seconds / 60:.1f} min" if r.seconds is not None else "-"
        print(f"{r.module:<11} {r.total:>7} {r.killed:>7} {r.typed:>6} {r.timeout:>7} {r.equivalent:>6} "
              f"{len(r.survivors):>8} {len(r.untested):>7} {r.score:>6.1%} {took:>7}")  # fmt: skip
    left = [name for r in rows for name in (*r.survivors, *r.untested)]
    if left:
        listing = MUTANTS / "survivors.txt"
        listing.write_text("".join(f"{name}\n" for name in left))
        print(f"\n{len(left)} mutants survived: {listing} (see one: .venv/bin/mutmut show NAME)")
    for problem in problems:
        print(f"problem: {problem}")
    failing = [r.module for r in rows if r.score < THRESHOLD or r.unchecked]
    if failing:
        print(f"\nbelow {THRESHOLD:.0%} (or not all checked): {', '.join(failing)}")
    return 1 if failing or problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("modules", nargs="*", metavar="MODULE",
                        help=f"modules to mutate (default: all): {', '.join(MODULES)}")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants run at once")
    parser.add_argument("--report", action="store_true", help="print the last run's table, run nothing")
    parser.add_argument("--survivors", action="store_true",
                        help="rerun only the mutants no test killed last time (after adding tests; a module "
                             "whose source changed since runs in full)")  # fmt: skip
    args = parser.parse_args(argv)
    modules = args.modules or list(MODULES)
    unknown = [name for name in modules if name not in MODULES]
    if unknown:
        parser.error(f"no core module {', '.join(unknown)}; the modules: {', '.join(MODULES)}")
    if not args.report:
        MUTANTS.mkdir(exist_ok=True)
        for path in drop_truncated():
            print(f"{MUTANTS / path} was empty or never mutated: mutmut makes it again")
        for path in drop_removed():
            print(f"{MUTANTS / path} is of a module the source no longer has: removed")
        keep_results()
        if drop_stale_stats(modules):
            print("a module changed since its last run: mutmut records again which tests reach what")
        # One mutmut run for every module asked: its type check and its record of which tests
        # reach what (minutes each) are paid once, not once a module.
        wanted = {module: left_over(module) if args.survivors else None for module in modules}
        wanted = {module: names for module, names in wanted.items() if names != []}
        if wanted:
            digests = {module: source_digest(module) for module in wanted}  # what the mutants are of
            try:
                seconds = run(list(wanted), args.jobs, wanted)
            finally:  # a run stopped (Ctrl-C, a failing test) keeps what it checked, of these sources
                sources = json.loads(SOURCES.read_text()) if SOURCES.exists() else {}
                sources.update(digests)
                SOURCES.write_text(json.dumps(sources, indent=1))
            whole = [module for module, names in wanted.items() if names is None]
            if whole:  # the time of whole runs is what the table shows: shared by their mutants
                counts = {module: max(1, mutant_count(module)) for module in whole}
                times = json.loads(TIMES.read_text()) if TIMES.exists() else {}
                for module in whole:
                    times[module] = seconds * counts[module] / sum(counts.values())
                TIMES.write_text(json.dumps(times, indent=1))
    return report(modules)


if __name__ == "__main__":
    sys.exit(main())
