"""Profiling reports: rows, shares, counts, lines, JSON schema, trace events, HTML."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import modecfg
from modecfg.profiles import ProfileReport, report
from modecfg.profiles.render import schema, to_html, to_json, to_trace
from tests.conftest import COMPILEDIR
from tests.fresh import pythonpath

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

ROOT = Path(__file__).resolve().parents[2]
CALLS = 4
DOT_LINE = next(
    i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if t.endswith("# the product")
)


@pytest.fixture(scope="module")
def profiled() -> object:
    a = pt.matrix("a")
    b = pt.matrix("b")
    product = pt.dot(a, b)  # the product
    out = pt.sqr(product).sum()  # cheap next to the product
    f = modecfg.function([a, b], out, profile=True, name="dominated by a product")
    rng = np.random.default_rng(0)
    A, B = rng.random((300, 300)), rng.random((300, 300))
    for _ in range(CALLS):
        f(A, B)
    return f


def test_rows_are_ordered_by_time_and_the_product_names_its_line(profiled: object) -> None:
    r = report(profiled)
    times = [row.time for row in r.applies]
    assert times == sorted(times, reverse=True)  # an order of the report, not a claim about speed
    (product,) = [row for row in r.applies if "Dot" in row.op or "Gemm" in row.op]
    assert product.source is not None and product.source.startswith(f"{__file__}:{DOT_LINE}:")
    assert product.calls == CALLS


def test_shares_add_up_and_the_cumulative_reaches_one(profiled: object) -> None:
    r = report(profiled)
    assert sum(row.share for row in r.applies) == pytest.approx(1.0)
    assert r.applies[-1].cumulative == pytest.approx(1.0)
    assert sum(op.share for op in r.ops) == pytest.approx(1.0)
    assert sum(c.share for c in r.classes) == pytest.approx(1.0)
    assert [row.rank for row in r.applies] == list(range(1, len(r.applies) + 1))


def test_call_counts_match_the_calls_made(profiled: object) -> None:
    r = report(profiled)
    assert r.calls == CALLS
    assert all(row.calls == CALLS for row in r.applies)
    assert r.compile_time > 0 and r.rewrite_time > 0


def test_rows_carry_dtypes_and_time_per_call(profiled: object) -> None:
    # the product's row, found by its op: which row is slowest is the machine's to say (a loaded
    # machine once put a one-input node first)
    (product,) = [row for row in report(profiled).applies if "Dot" in row.op or "Gemm" in row.op]
    assert [d for _, d in product.inputs][:2] == ["float64", "float64"]
    assert product.per_call == pytest.approx(product.time / product.calls)


def test_the_json_validates_against_its_schema(profiled: object) -> None:
    data = to_json([report(profiled)])
    jsonschema.validate(data, schema())
    json.loads(json.dumps(data))  # plain JSON: no NaN, no objects
    assert data["functions"][0]["name"] == "dominated by a product"


def test_the_trace_is_valid_trace_event_json(profiled: object) -> None:
    data = json.loads(json.dumps(to_trace([report(profiled)])))
    events = data["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == len(report(profiled).applies)
    for event in complete:
        assert {"name", "ph", "ts", "dur", "pid", "tid"} <= event.keys()
        assert event["dur"] >= 0 and event["ts"] >= 0
    starts = [e["ts"] for e in complete]
    assert starts == sorted(starts)  # laid out one after the other
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in events)


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_html_report_parses_and_holds_every_top_row(profiled: object) -> None:
    r = report(profiled)
    page = to_html([r], n_apply=10)
    parser = _Collect()
    parser.feed(page)
    text = "".join(parser.text)
    for row in r.applies[:10]:
        assert row.op in text
    assert "svg" in parser.tags and "table" in parser.tags
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "<script" not in page


def test_n_apply_limits_the_rows_shown(profiled: object) -> None:
    r = report(profiled)
    text = r.text(n_apply=1)
    assert f"{len(r.applies) - 1} more (profiling.n_apply)" in text
    assert text.count(" at ") == (1 if r.applies[0].source else 0)  # the first row only


def test_ignore_first_call_leaves_the_first_call_out() -> None:
    x = pt.vector("x")
    with modecfg.config.override(profiling__ignore_first_call=True):
        with pytensor.config.change_flags(profiling__ignore_first_call=True):  # read by ProfileStats
            f = modecfg.function([x], pt.exp(x).sum(), profile=True)
    for _ in range(3):
        f(np.ones(5))
    r = report(f)
    assert r.calls == 2 and all(row.calls == 2 for row in r.applies)


def test_profile_memory_reports_a_peak_and_the_largest_variables() -> None:
    x = pt.matrix("x")
    modecfg.config.profile = True  # PyTensor records shapes only under both flags
    modecfg.config.profile_memory = True
    try:
        f = modecfg.function([x], (pt.exp(x) * 2 + x).sum(), name="memory")
        f(np.ones((100, 50)))
    finally:
        modecfg.config.reset("profile")
        modecfg.config.reset("profile_memory")
    r = ProfileReport.from_stats(f.profile, min_memory_size=0)
    assert r.peak_memory is not None and r.peak_memory >= 100 * 50 * 8
    assert r.largest and r.largest[0].bytes == 100 * 50 * 8


def test_a_jit_linker_is_profiled_with_one_that_times_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    if modecfg.linkers.why_unavailable("numba"):
        pytest.skip("numba is not installed")
    import warnings

    from modecfg._pytensor import profiling

    x = pt.vector("x")
    monkeypatch.setattr(profiling, "_said", False)  # as in a fresh process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = modecfg.function([x], pt.exp(x).sum(), mode="NUMBA", profile=True)
        modecfg.function([x], pt.exp(x).sum(), mode="NUMBA", profile=True)
    said = [w for w in caught if "cannot time nodes" in str(w.message)]
    assert len(said) == 1  # once
    f(np.ones(3))
    r = report(f)
    assert "profiled with" in r.note and r.applies


def test_merged_report_ranks_every_function_together(profiled: object) -> None:
    x = pt.vector("x")
    g = modecfg.function([x], pt.exp(x).sum(), profile=True, name="small")
    g(np.ones(3))
    merged = ProfileReport.merged([report(profiled), report(g)])
    assert {row.function for row in merged.applies} == {"dominated by a product", "small"}
    assert merged.calls == CALLS + 1
    assert sum(row.share for row in merged.applies) == pytest.approx(1.0)


def test_unprofiled_functions_say_so() -> None:
    x = pt.vector("x")
    with pytest.raises(modecfg.ProfileError, match="not compiled with profiling"):
        report(modecfg.function([x], x + 1))


@pytest.mark.parametrize("order", ["options first", "the README's order: options after the script"])
def test_the_profile_command_writes_every_format(tmp_path: Path, order: str) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import numpy as np
            import pytensor, pytensor.tensor as pt
            a = pt.matrix("a")
            f = pytensor.function([a], pt.dot(a, a).sum())
            for _ in range(3):
                f(np.ones((50, 50)))
            assert sys.argv[1:] == ["--epochs", "1"]
            """
        )
    )
    files = {kind: tmp_path / f"p.{kind}" for kind in ("json", "trace", "html")}
    options = ["--json", str(files["json"]), "--trace", str(files["trace"]), f"--html={files['html']}"]
    script_args = [str(script), "--epochs", "1"]
    words = options + script_args if order == "options first" else script_args + options
    cmd = [sys.executable, "-m", "modecfg", "profile", *words]
    env = {**os.environ, "PYTHONPATH": pythonpath(), "MODECFGRC": ""}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Profile of" in proc.stdout and "calls" in proc.stdout
    assert proc.stderr.count("Profile of") == 0  # not printed a second time at exit
    assert json.loads(files["trace"].read_text())["traceEvents"]
    assert "<svg" in files["html"].read_text()
    jsonschema.validate(json.loads(files["json"].read_text()), schema())  # a test dependency: no skip


def test_after_a_double_dash_every_word_is_the_scripts(tmp_path: Path) -> None:
    from modecfg.cli import main

    script = tmp_path / "s.py"
    script.write_text("import sys\nassert sys.argv[1:] == ['--json', 'x.json'], sys.argv\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["profile", str(script), "--", "--json", "x.json"], out, err) == 1  # ran; compiled nothing
    assert "no function was profiled" in out.getvalue() and err.getvalue() == ""
    assert not (tmp_path / "x.json").exists()


def test_profile_called_from_python_leaves_the_flag_as_it_found_it(tmp_path: Path) -> None:
    from modecfg.cli import main

    script = tmp_path / "s.py"
    script.write_text("import modecfg\nassert modecfg.config.profile\n")
    for script_fails in (False, True):
        if script_fails:
            script.write_text("raise RuntimeError('boom')\n")
        assert modecfg.config.origin("profile").layer is modecfg.Layer.DEFAULT
        code = main(["profile", str(script)], io.StringIO(), io.StringIO())
        assert code == (2 if script_fails else 1)  # 1: ran, saw the flag on, compiled nothing
        assert modecfg.config.profile is False  # later compiles in this process are not profiled
        assert modecfg.config.origin("profile").layer is modecfg.Layer.DEFAULT
    modecfg.config.set("profile", False, source="the notebook's first cell")
    try:
        main(["profile", str(script)], io.StringIO(), io.StringIO())
        assert modecfg.config.profile is False
        assert modecfg.config.origin("profile").source == "the notebook's first cell"
    finally:
        modecfg.config.reset("profile")


def test_an_output_path_that_cannot_be_written_stops_before_the_script_runs(tmp_path: Path) -> None:
    from modecfg.cli import main

    marker = tmp_path / "ran"
    script = tmp_path / "s.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    out, err = io.StringIO(), io.StringIO()
    code = main(["profile", str(script), "--html", "/nonexistent-dir/p.html"], out, err)
    assert code == 2 and not marker.exists()
    assert (
        err.getvalue()
        == "error: --html /nonexistent-dir/p.html: the directory /nonexistent-dir does not exist\n"
    )


def test_a_missing_script_is_a_message_and_exit_2(tmp_path: Path) -> None:
    from modecfg.cli import main

    for command in ("profile", "check-float32"):
        out, err = io.StringIO(), io.StringIO()
        assert main([command, str(tmp_path / "nosuch.py")], out, err) == 2
        assert err.getvalue().startswith(f"error: no script '{tmp_path / 'nosuch.py'}'")
        assert out.getvalue() == ""


def test_the_summary_is_printed_at_exit_to_the_destination(tmp_path: Path) -> None:
    out = tmp_path / "profile.txt"
    code = (
        "import numpy as np, modecfg, pytensor.tensor as pt\n"
        "x = pt.vector('x')\n"
        "f = modecfg.function([x], pt.exp(x).sum(), profile=True, name='at exit')\n"
        "f(np.ones(3))\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": pythonpath(),
        "MODECFGRC": "",
        "MODECFG_FLAGS": f"profiling.destination={out},base_compiledir={COMPILEDIR}",  # the tests' cache
    }
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Profile of at exit: 1 call(s)" in out.read_text()


PROFILE_MADE_BY = {
    "pytensor.function(profile=True)": "f = pytensor.function([x], y, profile=True, name='made')",
    "pytensor.function(profile='name')": "f = pytensor.function([x], y, profile='made')",
    "modecfg.function(profile=True)": "f = modecfg.function([x], y, profile=True, name='made')",
    "the flag, assigned": "modecfg.config.profile = True\nf = pytensor.function([x], y, name='made')",
    "the flag, in THEANO_FLAGS": "f = pytensor.function([x], y, name='made')",
    "the flag, overridden": "with modecfg.config.override(profile=True):\n"
    "    f = pytensor.function([x], y, name='made')",
    "ProfileMode": "f = pytensor.function([x], y, mode=modecfg.ProfileMode(), name='made')",
    "a ProfileStats of the program's": "from pytensor.compile.debug.profiling import ProfileStats\n"
    "f = pytensor.function([x], y, profile=ProfileStats(message='made'))",
}


def _profiled_run(tmp_path: Path, body: str, theano_flags: str = "") -> tuple[str, str]:
    """(stdout, what the profile destination holds) of a fresh process running ``body``."""
    out = tmp_path / "profile.txt"
    code = (
        "import sys, warnings\nwarnings.simplefilter('ignore')\n"
        "import numpy as np, pytensor, modecfg, pytensor.tensor as pt\n"
        "before = 'modecfg.profiles.contacts' in sys.modules\n"
        "x = pt.vector('x')\ny = pt.exp(x).sum()\n" + body + "\n"
        "print('loaded at import:', before)\n"
    )
    flags = f"profiling.destination={out},base_compiledir={COMPILEDIR}"
    env = {**{k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))},
           "PYTHONPATH": pythonpath(), "MODECFGRC": "", "MODECFG_FLAGS": flags}  # fmt: skip
    if theano_flags:
        env["THEANO_FLAGS"] = theano_flags
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, out.read_text() if out.exists() else ""


@pytest.mark.parametrize("how", PROFILE_MADE_BY)
def test_every_profile_is_summarised_by_modecfg_however_it_was_made(tmp_path: Path, how: str) -> None:
    """Issue 61: the profiles' contacts loaded at every import. They load before the first
    profile modecfg makes or the flag asks for; the profiles PyTensor makes without either are
    summarised at exit all the same: modecfg's summary, as when the printer went on at the import
    (PyTensor's own dump says "Function profiling"), and nothing loaded at the import."""
    stdout, text = _profiled_run(
        tmp_path, PROFILE_MADE_BY[how] + "\nf(np.ones(3))", "profile=True" if "THEANO" in how else ""
    )
    assert ("loaded at import: False" in stdout) is ("THEANO" not in how)  # (the flag on: loaded then)
    assert "Profile of made" in text and "Function profiling" not in text, text[:400]


def test_a_profile_made_before_the_printer_and_one_after_are_both_summarised(tmp_path: Path) -> None:
    """A program's own ProfileStats made first registers PyTensor's printer with atexit (modecfg's
    was not on yet); a profiled compile after it puts modecfg's on: both are summarised once."""
    body = (
        "from pytensor.compile.debug.profiling import ProfileStats\n"
        "f = pytensor.function([x], y, profile=ProfileStats(message='own'))\n"
        "g = pytensor.function([x], y, profile=True, name='ours')\n"
        "f(np.ones(3)), g(np.ones(3))"
    )
    _, text = _profiled_run(tmp_path, body)
    assert text.count("Profile of own") == 1 and text.count("Profile of ours") == 1
    assert "Function profiling" not in text


def test_a_process_that_never_profiles_loads_nothing_of_the_feature_at_exit(tmp_path: Path) -> None:
    """The core's exit handler (it runs last: registered at the import) loads the feature only
    where PyTensor holds a profile."""
    body = (
        "f = pytensor.function([x], y)\nf(np.ones(3))\n"
        "from modecfg import _wiring\n_wiring._profiles_at_exit()\n"
        "print('after the handler:', 'modecfg.profiles' in sys.modules)"
    )
    stdout, text = _profiled_run(tmp_path, body)
    assert "after the handler: False" in stdout and "loaded at import: False" in stdout and text == ""


def test_the_demo_shows_its_top_rows() -> None:
    from modecfg.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        assert main(["demo", "--steps", "5", "--profile"], out, err) == 0, err.getvalue()
    finally:
        modecfg.config.reset("floatX")
    assert "Profile of train: " in out.getvalue()


def test_the_profile_command_reports_a_crashing_script(tmp_path: Path) -> None:
    from modecfg.cli import main

    script = tmp_path / "broken.py"
    script.write_text("raise RuntimeError('boom')\n")
    out, err = io.StringIO(), io.StringIO()
    try:
        assert main(["profile", str(script)], out, err) == 2
    finally:
        modecfg.config.reset("profile")  # the command turns the flag on for the script
    assert "RuntimeError: boom" in err.getvalue()
    assert "no function was profiled" in out.getvalue()


def test_a_function_without_a_name_is_titled_by_the_line_that_compiled_it() -> None:
    x = pt.vector("x")
    f = modecfg.function([x], pt.exp(x).sum(), profile=True)  # compiled here
    line = next(
        i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if t.endswith("# compiled here")
    )
    f(np.ones(3))
    assert report(f).text().startswith(f"Profile of function compiled at {__file__}:{line}")


def test_chart_labels_fit_their_column_and_carry_the_line(profiled: object) -> None:
    from modecfg.profiles.html import _LABEL_CHARS, _label

    r = report(profiled)
    for row in r.applies:
        full, short = _label(row)
        assert len(short) <= _LABEL_CHARS + 1  # the ellipsis
        if row.source:
            assert short.endswith(f"test_profiles.py:{row.source.split(':')[1]}") and row.source in full
    page = to_html([r], n_apply=10)
    assert f"<title>{r.applies[0].op}" in page


def test_a_node_the_rewrites_made_names_the_line_of_what_it_replaced() -> None:
    """Fusion makes a Composite with no creation trace of its own: a profiled compile carries
    the replaced expression's line over to it. An unprofiled compile carries nothing (only a
    profile reads it, and carrying costs every graph event of the rewrites)."""
    from modecfg._pytensor import marks

    x = pt.vector("x")
    out = pt.exp(x) * 2 + pt.sin(x)  # fused
    line = next(i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if t.endswith("# fused"))
    f = modecfg.function([x], out, profile=True, mode="FAST_RUN")
    f(np.ones(4))
    (fused,) = [row for row in report(f).applies if "Composite" in row.op]
    assert fused.source is not None and fused.source.startswith(f"{__file__}:{line}:")
    assert fused.source.endswith("(rewritten)")
    plain = modecfg.function([x], out, mode="FAST_RUN")
    assert not any(getattr(v.tag, marks.TRACE, None) for v in plain.maker.fgraph.variables)


# -- every door, every linker (issue 31, item 7) ---------------------------------------------------


@pytest.mark.parametrize("linker", ["numba", "c|py", "py", "c", "cvm"])
@pytest.mark.parametrize("door", ["the profile flag", "profile=True"])
def test_pytensor_function_profiles_on_every_linker(linker: str, door: str) -> None:
    """The profile flag with linker=numba, c|py or py gave '0.000 ms in the graph's nodes' and
    empty tables, with no notice; now a linker that times nodes does it, and the report says so."""
    if modecfg.linkers.why_unavailable(linker):
        pytest.skip(f"{linker} cannot run here")
    x = pt.vector("x")
    out = (pt.exp(x) * 2).sum()
    flags = {"linker": linker, **({"profile": True} if door == "the profile flag" else {})}
    with modecfg.config.override(flags):
        kwargs = {"profile": True} if door == "profile=True" else {}
        f = pytensor.function([x], out, name=f"door {door} on {linker}", **kwargs)
    for _ in range(3):
        f(np.ones(5))
    r = report(f)
    assert r.applies and all(row.calls == 3 for row in r.applies)
    assert r.profiled_time > 0 and "0.000 ms in the graph's nodes" not in r.text()
    if linker != "cvm":
        assert f"the {linker} linker cannot time nodes: profiled with" in r.note


def test_profile_mode_prints_theanos_summary_and_times_nodes_on_any_linker() -> None:
    import warnings

    from modecfg.modes.profile import ProfileMode

    x = pt.vector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the once-said notice that numba cannot time nodes
        mode = ProfileMode(linker="numba" if not modecfg.linkers.why_unavailable("numba") else "py")
    assert type(mode.linker).__name__ == "VMLinker"
    f = pytensor.function([x], pt.exp(x).sum(), mode=mode, name="first")
    g = pytensor.function([x], (x * 2).sum(), mode=mode, name="second")
    f(np.ones(3))
    g(np.ones(3))
    out = io.StringIO()
    mode.print_summary(file=out)
    text = out.getvalue()
    assert "Profile of first: 1 call(s)" in text and "Profile of second: 1 call(s)" in text
    assert "Profile of all profiled functions" in text and "cvm or the linker flag" not in text
    assert "Exp" in text or "exp" in text
    empty = io.StringIO()
    ProfileMode().print_summary(file=empty)
    assert "no function compiled with this mode yet" in empty.getvalue()
    # issue 50: the header names the mode used, not the mode and linker flags it did not read;
    # the merged section says which function each row is of
    assert "compiled with mode=ProfileMode (passed to the compile)" in text
    assert "mode='Mode'" not in text and "linker='auto'" not in text
    merged = text.split("Profile of all profiled functions", 1)[1]
    assert "in first" in merged and "in second" in merged
    assert "in first" not in text.split("Profile of second", 1)[0]  # one function's rows: no need


def test_print_summary_is_not_printed_again_at_exit_unless_it_ran_since(tmp_path: Path) -> None:
    """Issue 50: print_summary() and then the whole report again at exit (146 duplicate lines)."""
    code = textwrap.dedent(
        """
        import sys
        import numpy as np
        import modecfg, pytensor, pytensor.tensor as pt
        mode = modecfg.ProfileMode(linker="py")
        x = pt.vector("x")
        f = pytensor.function([x], pt.exp(x).sum(), mode=mode, name="once")
        f(np.ones(3))
        mode.print_summary(file=sys.stdout)
        if sys.argv[1] == "again":
            f(np.ones(3))
        """
    )
    script = tmp_path / "p.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": pythonpath(), "MODECFG_FLAGS": "profiling.destination=stdout"}
    once = subprocess.run([sys.executable, str(script), "once"], env=env, capture_output=True, text=True)
    assert once.returncode == 0, once.stderr
    assert once.stdout.count("Profile of once: 1 call(s)") == 1 and "Profile of once: 2" not in once.stdout
    again = subprocess.run([sys.executable, str(script), "again"], env=env, capture_output=True, text=True)
    assert again.stdout.count("Profile of once: 1 call(s)") == 1  # printed by print_summary
    assert again.stdout.count("Profile of once: 2 call(s)") == 1  # ran since: printed at exit


def test_profile_memory_without_the_profile_flag_says_why_there_is_no_memory_section() -> None:
    """Issue 50: ProfileMode with profile_memory=True was only warned about. PyTensor records
    sizes only while both flags are on during the calls: the report says so."""
    x = pt.matrix("x")
    with modecfg.config.override(profile_memory=True):
        f = modecfg.function([x], (pt.exp(x) * 2).sum(), profile=True, name="no memory")
    f(np.ones((10, 5)))
    text = ProfileReport.from_stats(f.profile).text()
    assert "no memory section: PyTensor records the sizes of values only while the profile and" in text
    assert "THEANO_FLAGS=profile=True,profile_memory=True" in text
    assert ProfileReport.from_stats(f.profile).profiled_time > 0  # and the nodes are still timed


@pytest.mark.parametrize(
    "legacy, modern",
    [("ProfileMode.n_apply_to_print", "profiling.n_apply"), ("ProfileMode.n_ops_to_print", "profiling.n_ops"),
     ("ProfileMode.min_memory_size", "profiling.min_memory_size"),
     ("ProfileMode.profile_memory", "profile_memory")],
)  # fmt: skip
def test_theanos_profile_mode_flags_are_obsolete_flags_naming_the_modern_one(
    legacy: str, modern: str
) -> None:
    with pytest.warns(modecfg.ObsoleteFlagWarning, match=rf"{legacy} is obsolete: use {modern}"):
        modecfg.load(env={"THEANO_FLAGS": f"{legacy}=5"})


def test_the_html_report_is_readable_as_a_person_reads_it(tmp_path: Path) -> None:
    """Issue 50, from a Chromium screenshot: times wrapped ("0.270 / ms"), "us" for µs, a statement
    continued with a backslash cut at it, nothing said of the flags or linker, and a tiny scalar op
    at 15% with no caveat. Now: one unit a time, never wrapped; the whole statement; the linker
    and flags; rows too short or too few to trust marked, and why; sizes not recorded, and why."""
    from modecfg.profiles.html import CSS, duration

    assert "white-space:nowrap" in CSS.replace(" ", "")
    assert [duration(t) for t in (2.5, 0.27e-3, 5.41e-6, 3e-9, 0.0, 1234e-3)] == [
        "2.5 s", "270 µs", "5.41 µs", "3 ns", "0", "1.23 s",
    ]  # fmt: skip
    script = tmp_path / "train.py"
    script.write_text(
        "import numpy as np\nimport pytensor, pytensor.tensor as pt\nx = pt.matrix()\n"
        "y = pt.dot(x, x) \\\n    + 1\n"
        "f = pytensor.function([x], y.sum())\nfor _ in range(3):\n    f(np.ones((4, 4)))\n"
    )
    page = tmp_path / "p.html"
    done = subprocess.run(
        [sys.executable, "-m", "modecfg", "profile", str(script), "--html", str(page)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": pythonpath(), "MODECFG_FLAGS": f"base_compiledir={COMPILEDIR}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "y = pt.dot(x, x) + 1" in text  # the statement whole, across its backslash
    assert " us<" not in text and "µs<" in text  # the per-call times are µs here
    assert '<p class="flags">linker ' in text and "compiled with floatX=" in text
    assert 'class="doubt"' in text and "≈ and grey: timed over fewer than 10 calls" in text  # 3 calls
    assert "?: a size not recorded" in text


def test_a_statement_is_read_whole_and_innermost(tmp_path: Path) -> None:
    from modecfg._source import statement

    source = tmp_path / "s.py"
    long = "c = '" + "x" * 400 + "'\n"
    source.write_text("a = (1 +\n     2)\nfor i in range(3):\n    b = i \\\n        * 2\n" + long)
    assert statement(str(source), 2) == "a = (1 + 2)"
    assert statement(str(source), 5) == "b = i * 2" and statement(str(source), 4) == "b = i * 2"
    assert statement(str(source), 3) == "for i in range(3):"  # the loop's own line: that line
    assert len(statement(str(source), 6)) == 300 and statement(str(source), 6).endswith("…")
    assert statement(str(tmp_path / "missing.py"), 1) == ""
    broken = tmp_path / "b.py"
    broken.write_text("x = (\n")
    assert statement(str(broken), 1) == "x = ("  # not Python: the line alone


def test_the_html_report_never_writes_a_bidirectional_override_or_a_control_raw() -> None:
    """A function or variable name is the user's text: in the page, what would reorder or hide
    text is written as its escape, as the terminal shows it (round five: U+202E written raw)."""
    x = pt.vector("x\u202eevil\x1b")
    f = modecfg.function([x], pt.exp(x), profile=True, mode="FAST_RUN", name="step\u202e<b>")
    f(np.ones(3))
    page = to_html([report(f)], n_apply=10)
    assert "\u202e" not in page and "\x1b" not in page and "<b>" not in page
    assert "step\\u202e&lt;b&gt;" in page


def test_a_row_of_few_calls_is_marked_however_long_its_calls_and_a_short_one_however_many() -> None:
    """'≈ and grey': fewer than FEW_CALLS calls *or* under SHORT_CALL a call (issue 59)."""
    from types import SimpleNamespace

    from modecfg.profiles.html import FEW_CALLS, SHORT_CALL, _doubtful

    assert _doubtful(SimpleNamespace(calls=FEW_CALLS - 1, per_call=1.0))  # few calls of a second each
    assert _doubtful(SimpleNamespace(calls=10 * FEW_CALLS, per_call=SHORT_CALL / 2))
    assert not _doubtful(SimpleNamespace(calls=FEW_CALLS, per_call=SHORT_CALL))
    assert not _doubtful(SimpleNamespace(calls=10 * FEW_CALLS, per_call=1.0))


def test_a_merged_row_without_a_source_still_names_its_function() -> None:
    from types import SimpleNamespace

    from modecfg.profiles.html import _where

    rows = (SimpleNamespace(function="step", source=None), SimpleNamespace(function="loss", source="t.py:3"))
    merged = SimpleNamespace(applies=rows)
    assert _where(rows[0], merged) == "step: " and _where(rows[1], merged) == "loss: t.py:3"
    alone = SimpleNamespace(applies=rows[1:])
    assert _where(rows[1], alone) == "t.py:3"


def test_report_is_the_function_whatever_module_of_the_package_loads_first() -> None:
    """The package's names load on first use (``import modecfg`` registers this feature's contacts
    and must not load the reports): no submodule's import may take a public name's place, as a
    module named ``report`` once would have taken the function's."""
    import importlib
    import pkgutil

    import modecfg.profiles as profiles

    for found in pkgutil.iter_modules(profiles.__path__):
        importlib.import_module(f"modecfg.profiles.{found.name}")
    assert profiles.report.__module__ == "modecfg.profiles" and callable(profiles.report)
    assert profiles.reports.__module__ == "modecfg.profiles" and callable(profiles.reports)
    assert profiles.ProfileReport.__name__ == "ProfileReport"
