"""``modecfg linkers``, ``modes``, ``doctor`` and ``autoload``, word for word, on tables made by hand:
what each prints does not depend on the machine that runs the test."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import modecfg
from modecfg._registry.linkers import LinkerInfo
from modecfg.cli import machine
from modecfg.modes.build import ModeInfo

LINKERS = (
    LinkerInfo("cvm", True, True, "lowest", "C virtual machine", "c++"),
    LinkerInfo("numba", False, False, "low", "numba-compiled graph", "numba"),
    LinkerInfo(
        "jax", True, False, "high", "JAX's jit", "jax", available=False, why_not="JAX is not installed"
    ),
)


def _args(**given: Any) -> argparse.Namespace:
    return argparse.Namespace(**given)


@pytest.fixture
def linkers(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg.linkers import auto

    monkeypatch.setattr(modecfg.linkers, "table", lambda: LINKERS)
    monkeypatch.setattr(modecfg.linkers, "limit", {"cvm": "", "numba": "no Scan here"}.__getitem__)
    monkeypatch.setattr(modecfg.linkers, "resolve_linker", lambda name: f"numba (for {name})")
    monkeypatch.setattr(auto, "rule_here", lambda: "cvm for small graphs")


def test_linkers_prints_the_table_with_what_limits_each(linkers: None) -> None:
    out = io.StringIO()
    assert machine.cmd_linkers(_args(json=False), out, io.StringIO()) == 0
    assert out.getvalue() == (
        "linker     usable  gc   by op  overhead  what it is\n"
        "cvm        yes     yes  yes    lowest    C virtual machine\n"
        "numba      partly  no   no     low       numba-compiled graph\n"
        "           no Scan here\n"
        "jax        no      yes  no     high      JAX's jit\n"
        "           JAX is not installed\n"
        "\n"
        "linker=auto (the default, PyTensor's): numba (for auto)\n"
        "linker=per_graph (modecfg's, opt-in): cvm for small graphs\n"
    )


def test_linkers_as_json_holds_every_field_and_the_limit(linkers: None) -> None:
    out = io.StringIO()
    assert machine.cmd_linkers(_args(json=True), out, io.StringIO()) == 0
    text = out.getvalue()
    assert text.endswith("}\n]\n") and text.startswith('[\n  {\n    "name": "cvm",\n')  # indented by 2
    rows = json.loads(text)
    assert [r["limit"] for r in rows] == ["", "no Scan here", ""]  # an unusable one has none
    assert rows[2] == {**LINKERS[2]._asdict(), "limit": ""}
    assert rows[1] == {**LINKERS[1]._asdict(), "limit": "no Scan here"}


MODES = [
    ModeInfo("FAST_RUN", "o4", "cvm", "speed", False, True, ""),
    ModeInfo("DebugMode", "fast_run", "debug", "checks every rewrite and C against Python", False, True, ""),
    ModeInfo("ProfileMode", "o4", "profiling", "old name", True, True, ""),
    ModeInfo("JAXMode", "fast_run", "jax", "JAX", False, False, "JAX is not installed"),
]


def test_modes_prints_the_table_its_aliases_and_where_the_mode_flag_comes_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(modecfg.modes, "table", lambda: MODES)
    monkeypatch.setattr(modecfg.modes, "mode_names", lambda: [*(m.name for m in MODES), "FAST", "Mode"])
    monkeypatch.setattr(modecfg.modes, "canonical_mode", {"FAST": "FAST_RUN", "Mode": "FAST_RUN"}.__getitem__)
    out = io.StringIO()
    with modecfg.config.override(mode="DebugMode"):
        assert machine.cmd_modes(_args(), out, io.StringIO()) == 0
        origin = modecfg.config.origin("mode")
    assert out.getvalue() == (
        "mode         optimizer  linker         what it is for\n"
        "FAST_RUN     o4         cvm            speed\n"
        "DebugMode    fast_run   debug          checks every rewrite and C against Python\n"
        "ProfileMode  o4         profiling      old name (deprecated)\n"
        "JAXMode      fast_run   unusable here  JAX\n"
        "             JAX is not installed\n"
        "\n"
        "FAST is another name for FAST_RUN\n"
        "Mode is another name for FAST_RUN\n"
        f"\nthe mode flag is DebugMode (from {origin})\n"
    )


def test_modes_without_aliases_and_with_short_names_keeps_the_titles_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [ModeInfo("A", "o", "c", "p", False, True, "")]
    monkeypatch.setattr(modecfg.modes, "table", lambda: rows)
    monkeypatch.setattr(modecfg.modes, "mode_names", lambda: ["A"])
    out = io.StringIO()
    machine.cmd_modes(_args(), out, io.StringIO())
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["mode  optimizer  linker  what it is for", "A     o          c       p"]
    assert lines[2] == "" and lines[3].startswith("the mode flag is ") and len(lines) == 4


def test_doctor_prints_the_verdict_then_each_section(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg import doctor

    seen: list[Any] = []
    report = {"machine": [("cores", "2"), ("gpu", "none")], "pytensor": [("version", "3.0.7")]}

    def verdict(config: Any, given: Any) -> list[str]:
        seen.append(given)
        return ["ready", "  (details with --verbose)"]

    monkeypatch.setattr(
        doctor, "diagnose_machine", lambda verbose: dict(report, asked=[("verbose", str(verbose))])
    )
    monkeypatch.setattr(doctor, "verdict", verdict)
    out = io.StringIO()
    assert machine.cmd_doctor(_args(verbose=True), out, io.StringIO()) == 0
    assert out.getvalue() == (
        "ready\n  (details with --verbose)\n\n"
        "machine\n  cores                  2\n  gpu                    none\n"
        "pytensor\n  version                3.0.7\n"
        "asked\n  verbose                True\n"
    )
    assert seen == [dict(report, asked=[("verbose", "True")])]  # the verdict is of that report


def test_autoload_on_off_and_status_say_what_they_did_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg import autoload

    pth = tmp_path / "modecfg-autoload.pth"
    monkeypatch.setattr(autoload, "pth_path", lambda: pth)

    def said(action: str) -> str:
        out = io.StringIO()
        assert machine.cmd_autoload(_args(action=action), out, io.StringIO()) == 0
        return out.getvalue()

    assert said("status") == f"autoload off for {sys.executable} ({pth})\n"
    assert said("on") == (
        "autoload on: every Python of this environment loads modecfg before PyTensor\n"
        f"  ({pth}; undo: modecfg autoload off; one run without it: MODECFG_AUTOLOAD=0)\n"
    )
    assert pth.is_file()
    assert said("status") == f"autoload on for {sys.executable} ({pth})\n"
    off = (
        "scripts that do not import modecfg run PyTensor without it "
        "(modecfg run SCRIPT loads it for one run)\n"
    )
    assert said("off") == f"autoload off: {off}"
    assert not pth.exists()
    assert said("off") == f"autoload off (it was not on): {off}"


# -- modecfg cache, on caches made by hand ----------------------------------------------------


def _entry(kind: str, name: str, size: int, last_used: float) -> Any:
    import types

    return types.SimpleNamespace(kind=kind, name=name, size=size, last_used=last_used)


def _cache_args(**given: Any) -> argparse.Namespace:
    base = {"action": "clean", "older_than": None, "max_size": None, "dry_run": False, "verbose": False}
    return _args(**{**base, **given})


@pytest.fixture
def cleaning(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """cache.clean replaced: it records its arguments, calls on_wait once, and reports a plan."""
    import types

    from modecfg import cache

    a = _entry("pytensor", "a", 2048, 1.0)
    b = _entry("pytensor", "b", 1024, 3.0)
    c = _entry("numba", "c", 512, 2.0)
    kept = _entry("pytensor", "k", 4096, 9.0)
    asked: dict[str, Any] = {}

    def clean(older_than: Any, max_size: Any, *, dry_run: bool, on_wait: Any) -> Any:
        asked.update(older_than=older_than, max_size=max_size, dry_run=dry_run)
        on_wait([_Holder("a waiter", True), _Holder("pid 7 on host", False)])
        on_wait([_Holder("pid 8", True)])
        plan = types.SimpleNamespace(
            remove=[(a, "unused for 6.1 h"), (b, "unused for 39 min"), (c, "too big")],
            keep=[(kept, "used 1 min ago")],
            freed=3584,
        )
        return types.SimpleNamespace(
            dry_run=dry_run, plan=plan, removed=[a, c], failed=[(b, "busy")], freed=2560,
            caches=[types.SimpleNamespace(size=10_000), types.SimpleNamespace(size=240)],
        )  # fmt: skip

    monkeypatch.setattr(cache, "clean", clean)
    return asked


class _Holder:
    def __init__(self, name: str, waiting: bool) -> None:
        self.name, self.waiting = name, waiting

    def __str__(self) -> str:
        return self.name


def test_cache_clean_says_what_it_removed_kept_and_could_not(cleaning: dict[str, Any]) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert machine_cache(_cache_args(older_than=3600.0, max_size=10**6), out, err) == 1  # one failed
    assert cleaning == {"older_than": 3600.0, "max_size": 10**6, "dry_run": False}
    assert out.getvalue() == (
        "removed 1 pytensor entry (2.0 KiB): unused for 6.1 h\n"
        "removed 1 numba entry (512 B): too big\n"
        "kept 1 pytensor entry (4.0 KiB): used 1 min ago\n"
        "removed 2 entries, 2.5 KiB of 10.0 KiB\n"
    )
    assert err.getvalue() == (
        "waiting for the compile lock, held by pid 7 on host\n"
        "waiting for the compile lock, held by a process this host cannot name\n"
        "error: could not remove pytensor b: busy\n"
    )


def test_cache_clean_dry_run_and_verbose_list_each_entry(cleaning: dict[str, Any]) -> None:
    out = io.StringIO()
    machine_cache(_cache_args(dry_run=True), out, io.StringIO())
    assert cleaning["dry_run"] is True
    assert out.getvalue() == (
        "would remove 2 pytensor entries (3.0 KiB): unused for 39 min to 6.1 h\n"
        "would remove 1 numba entry (512 B): too big\n"
        "kept 1 pytensor entry (4.0 KiB): used 1 min ago\n"
        "would remove 3 entries, 3.5 KiB of 10.0 KiB\n"
    )
    out = io.StringIO()
    machine_cache(_cache_args(dry_run=True, verbose=True), out, io.StringIO())
    assert out.getvalue() == (
        "would remove pytensor a (2.0 KiB): unused for 6.1 h\n"
        "would remove pytensor b (1.0 KiB): unused for 39 min\n"
        "would remove numba c (512 B): too big\n"
        "kept pytensor k (4.0 KiB): used 1 min ago\n"
        "would remove 3 entries, 3.5 KiB of 10.0 KiB\n"
    )


def test_cache_export_import_and_show_say_what_they_did(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from modecfg import cache

    asked: list[tuple[Any, ...]] = []

    def export(path: str) -> Any:
        asked.append(("export", path))
        return types.SimpleNamespace(entries=3, size=3072, path=f"/abs/{path}", signed=path == "signed.tar")

    def import_(path: str, *, trust: bool) -> Any:
        asked.append(("import", path, trust))
        return types.SimpleNamespace(added=[1, 2], present=[3])

    class Status:
        def to_json(self) -> dict[str, Any]:
            return {"caches": [{"path": "/c", "entries": 1}]}

        def __str__(self) -> str:
            return "the caches, in words"

    monkeypatch.setattr(cache, "export_cache", export)
    monkeypatch.setattr(cache, "import_cache", import_)
    monkeypatch.setattr(cache, "show", Status)

    def said(**given: Any) -> str:
        out = io.StringIO()
        assert machine_cache(_args(**given), out, io.StringIO()) == 0
        return out.getvalue()

    assert said(action="export", file="signed.tar") == "exported 3 entries (3.0 KiB) to /abs/signed.tar\n"
    assert said(action="export", file="plain.tar") == (
        "exported 3 entries (3.0 KiB) to /abs/plain.tar, "
        "unsigned (no key of yours: importing it will need --trust)\n"
    )
    assert (
        said(action="import", file="x.tar", trust=True)
        == "imported 2 entries from x.tar; 1 were here already\n"
    )
    assert said(action="import", file="y.tar", trust=False).startswith("imported 2 entries from y.tar")
    assert asked[2:] == [("import", "x.tar", True), ("import", "y.tar", False)]
    assert said(action="show", json=False) == "the caches, in words\n"
    assert said(action="show", json=True) == (
        '{\n  "caches": [\n    {\n      "path": "/c",\n      "entries": 1\n    }\n  ]\n}\n'
    )


def machine_cache(args: argparse.Namespace, out: io.StringIO, err: io.StringIO) -> int:
    from modecfg.cli.cache import cmd_cache

    return cmd_cache(args, out, err)


@pytest.mark.parametrize(
    ("words", "parsed"),
    [
        (["set", "blas.ldflags", "-lopenblas"], ["set", "--", "blas.ldflags", "-lopenblas"]),
        (["set", "--file", "rc", "a", "-b"], ["set", "--file", "rc", "--", "a", "-b"]),
        (["set", "a", "-b", "--file", "rc"], ["set", "--file", "rc", "--", "a", "-b"]),
        (["set", "a", "--file=rc", "b"], ["set", "--file=rc", "--", "a", "b"]),
        (["set", "a", "--", "--file", "x"], ["set", "--", "a", "--file", "x"]),
        (["set", "a", "b", "--file"], ["set", "--", "a", "b", "--file"]),  # no file after it: a word
        (["set", "-h"], ["set", "-h", "--"]),
        (["set", "--help", "a"], ["set", "--help", "--", "a"]),
        (["set", "-H"], ["set", "--", "-H"]),
        # two options: both kept, in order
        (["set", "--file=a", "x", "--file", "b", "y"], ["set", "--file=a", "--file", "b", "--", "x", "y"]),
    ],
)
def test_set_takes_a_value_that_starts_with_a_dash_as_the_value(words: list[str], parsed: list[str]) -> None:
    from modecfg.cli import _set_words

    assert _set_words(words) == parsed


def test_quiet_stdout_points_the_standard_output_descriptor_at_devnull(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the CLI does when its reader went away (a closed pipe): Python's own flush at exit
    writes to /dev/null, not to the pipe again."""
    import types

    from modecfg.cli import _quiet_stdout

    target = tmp_path / "stdout"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT)
    try:
        monkeypatch.setattr(sys, "stdout", types.SimpleNamespace(fileno=lambda: fd))
        _quiet_stdout()
        os.write(fd, b"after")
    finally:
        os.close(fd)
    assert target.read_bytes() == b""
    monkeypatch.setattr(sys, "stdout", None)  # no standard output at all: nothing to do, no error
    _quiet_stdout()


# -- the options of commands that run a script ------------------------------------------------


def test_a_commands_options_after_the_script_are_its_own_and_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.cli.common import script_arguments

    script = tmp_path / "train.py"
    script.write_text("pass\n")
    monkeypatch.chdir(tmp_path)
    args = _args(
        script=str(script),
        args=["3", "--html", "p.html", "--json=out/p.json", "-x"],
        passthrough=["--html", "q"],
    )
    (tmp_path / "out").mkdir()
    script_arguments(args, ("--html", "--json"))
    assert args.html == str(tmp_path / "p.html") and args.json == str(tmp_path / "out" / "p.json")
    assert args.args == ["3", "-x", "--html", "q"]  # the script's words, then those after --
    args = _args(script=str(script), args=["--html=a=b.html"])  # only the first = splits
    script_arguments(args, ("--html",))
    assert args.html == str(tmp_path / "a=b.html") and args.args == []
    args = _args(script=str(script), args=["--trace"])  # not an option of this command: the script's
    script_arguments(args, ("--html",))
    assert args.args == ["--trace"] and not hasattr(args, "html")


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--html"], "--html needs a file name"),
        (["--html", "missing/p.html"], "--html missing/p.html: the directory {tmp}/missing does not exist"),
    ],
)
def test_a_commands_option_without_a_usable_file_is_refused_before_the_script_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, words: list[str], said: str
) -> None:
    from modecfg.cli.common import _Failed, script_arguments

    script = tmp_path / "train.py"
    script.write_text("pass\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(_Failed) as failed:
        script_arguments(_args(script=str(script), args=words), ("--html",))
    assert str(failed.value) == said.format(tmp=tmp_path)


def test_a_commands_option_in_a_directory_it_cannot_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.cli.common import _Failed, script_arguments

    script = tmp_path / "train.py"
    script.write_text("pass\n")
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(_Failed) as failed:
        script_arguments(_args(script=str(script), args=["--html", str(tmp_path / "p.html")]), ("--html",))
    assert str(failed.value) == f"--html {tmp_path / 'p.html'}: cannot write in {tmp_path}"


def test_jsonable_keeps_json_values_and_writes_the_rest_as_text() -> None:
    from modecfg.cli.common import jsonable

    assert [jsonable(v) for v in (None, True, 3, 1.5, "s")] == [None, True, 3, 1.5, "s"]
    assert [jsonable(v) for v in (float("inf"), float("nan"), Path("/p"), (1, 2))] == [
        "inf",
        "nan",
        "/p",
        "(1, 2)",
    ]


class _Profile:
    def text(self, n_apply: int = 20, n_ops: int = 20) -> str:
        return f"the profile, {n_apply} rows and {n_ops} ops"


@pytest.fixture
def demo_run(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``modecfg demo`` with the training replaced by a result made by hand; what it was asked
    is in ``.asked``; the flags it set are reset afterwards."""
    from modecfg import demo

    cfg = modecfg.config
    shown: dict[str, Any] = {}

    def changed(self: Any) -> dict[str, Any]:  # the suite's own environment flags left out
        return {name: None for name in ("floatX", "optimizer") if not cfg.is_default(name)}

    def run(**asked: Any) -> Any:
        shown["asked"] = asked
        return shown["result"]

    monkeypatch.setattr(type(cfg), "changed", changed)
    monkeypatch.setattr(demo, "run", run)
    yield shown
    for name in ("floatX", "optimizer", "mode"):
        cfg.reset(name)


def _demo(**given: Any) -> str:
    out = io.StringIO()
    args = {"flags": None, "mode": None, "steps": 7, "profile": False, **given}
    assert machine.cmd_demo(_args(**args), out, io.StringIO()) == 0
    return out.getvalue()


def test_demo_says_its_configuration_and_what_the_run_measured(demo_run: dict[str, Any]) -> None:
    from modecfg.demo import DemoResult

    demo_run["result"] = DemoResult(
        "float32", "FAST_RUN", "cvm", 6.5, 0.0012345, 7, 0.975, 0.69314, 0.1234,
        ("f64 at x.py:3", "f64 at x.py:4"), _Profile(), "cpu",
    )  # fmt: skip
    with modecfg.config.override(linker="auto"):
        said = _demo(flags="optimizer=fast_compile", profile=True)
        auto = f"auto ({modecfg.linkers.linker_name(modecfg.get_mode(None).linker)})"  # what auto chose here
        overridden = modecfg.config.origin("linker")
    assert said == (
        "modecfg demo: logistic regression, 400 examples x 784 features\n\n"
        "configuration (what shapes this run, and where each value came from):\n"
        "  floatX                   float32        assignment at modecfg demo\n"
        "  optimizer                fast_compile   assignment at modecfg demo --flags\n"
        "  mode                     Mode           default\n"
        f"  linker                   {auto:<14} {overridden}\n"
        "\nmode FAST_RUN, linker cvm, floatX float32\n"
        "compile time        6.500 s  (C code compiled once, cached in "
        f"{modecfg.config.base_compiledir}: later runs are faster)\n"
        "time per step       1.234 ms (median of 7)\n"
        "cost             0.6931 -> 0.1234\n"
        "accuracy            97.5%\n"
        "ran on             cpu\n"
        "float32 check    2 place(s) where float64 enters:\n"
        "  f64 at x.py:3\n"
        "  f64 at x.py:4\n"
        "\nthe profile, 5 rows and 5 ops\n"
    )
    assert demo_run["asked"] == {"steps": 7, "profile": True}


def test_demo_keeps_the_users_floatx_and_mode_and_says_a_cached_compile_plainly(
    demo_run: dict[str, Any],
) -> None:
    from modecfg.demo import DemoResult

    demo_run["result"] = DemoResult(
        "float64", "FAST_COMPILE", "py", 5.0, 0.5, 3, 1.0, 1.0, 0.5, (), None, "cpu"
    )
    with modecfg.config.override(linker="py"):
        modecfg.config.floatX = "float64"
        said = _demo(mode="FAST_COMPILE", steps=3)
        origins = [str(modecfg.config.origin(name)) for name in ("floatX", "linker")]
    assert said.splitlines()[3:6] == [
        f"  floatX                   float64        {origins[0]}",  # the user's, kept
        "  mode                     FAST_COMPILE   assignment at modecfg demo --mode",
        f"  linker                   py             {origins[1]}",
    ]
    assert "\ncompile time        5.000 s\n" in said  # 5 s or less: nothing compiled from scratch
    assert said.endswith("ran on             cpu\nfloat32 check    not applicable: floatX=float64\n")
    assert demo_run["asked"] == {"steps": 3, "profile": False}


def test_demo_without_float64_says_so(demo_run: dict[str, Any]) -> None:
    from modecfg.demo import DemoResult

    demo_run["result"] = DemoResult("float32", "FAST_RUN", "cvm", 1.0, 0.5, 3, 1.0, 1.0, 0.5, (), None, "cpu")
    assert _demo().endswith("float32 check    no float64 in the compiled graphs\n")


def test_demo_flags_that_do_not_parse_are_refused_naming_the_option(demo_run: dict[str, Any]) -> None:
    from modecfg.errors import ModecfgError

    with pytest.raises(ModecfgError, match=r"^--flags: item 'floatX' has no '='"):
        _demo(flags="floatX")
    assert "asked" not in demo_run  # nothing ran
