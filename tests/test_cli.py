"""The command line, driven in-process through ``main(argv, out, err)``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import modecfg
from modecfg.cli import main
from tests.fresh import pythonpath

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process-wide config re-read from the environment the test sets."""
    from modecfg.configuration import _resolution
    from modecfg.configuration.live import build

    monkeypatch.setattr(modecfg, "config", build(lambda flags: _resolution(os.environ, None, None, flags)))


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_show_lists_non_default_flags_with_origins(
    monkeypatch: pytest.MonkeyPatch, fresh_config: None
) -> None:
    monkeypatch.setenv("THEANO_FLAGS", "floatX=float32,device=gpu,lib.cnmem=.8")
    code, out, err = _cli("show")
    assert code == 0
    assert "floatX" in out and "float32" in out and "THEANO_FLAGS" in out
    assert "device" in out and "gpu" in out
    assert "read from: THEANO_FLAGS, MODECFG_FLAGS" in out
    assert "ObsoleteFlagWarning: lib.cnmem" in err


def test_show_all_json(monkeypatch: pytest.MonkeyPatch, fresh_config: None) -> None:
    monkeypatch.setenv("THEANO_FLAGS", "floatX=float32")
    code, out, _ = _cli("show", "--all", "--json")
    data = json.loads(out)
    assert code == 0
    rows = {row["name"]: row for row in data["flags"]}
    assert len(rows) == len(modecfg.config)
    assert rows["floatX"]["origin"] == {"layer": "env", "source": "THEANO_FLAGS", "line": None}
    assert rows["traceback.limit"] == {
        "name": "traceback.limit", "value": 8, "origin": {"layer": "default", "source": None, "line": None},
        "default": 8,
    }  # fmt: skip
    assert rows["optdb.position_cutoff"]["value"] == "inf"  # JSON has no infinity


def test_explain_prints_every_layer(monkeypatch: pytest.MonkeyPatch, fresh_config: None) -> None:
    monkeypatch.setenv("THEANO_FLAGS", "floatX=float16")
    monkeypatch.setenv("PYTENSOR_FLAGS", "floatX=float32")
    code, out, _ = _cli("explain", "floatX")
    assert code == 0
    assert out.startswith("floatX = 'float32'   (from PYTENSOR_FLAGS)")
    assert "env THEANO_FLAGS" in out and "(overridden)" in out and "<- wins" in out


def test_explain_json(fresh_config: None) -> None:
    code, out, _ = _cli("explain", "traceback__limit", "--json")
    data = json.loads(out)
    assert code == 0 and data["name"] == "traceback.limit" and data["type"] == "integer"


def test_explain_an_unknown_flag_fails_with_a_suggestion(fresh_config: None) -> None:
    code, out, err = _cli("explain", "floatx")
    assert code == 1 and out == ""
    assert "unknown flag 'floatx'" in err and "did you mean floatX" in err


def test_validate_reports_every_problem_with_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = tmp_path / ".theanorc"
    rc.write_text("[global]\nfloatX = float33\nfloatx = float32\n[lib]\ncnmem = .8\n")
    monkeypatch.setenv("THEANORC", str(rc))
    monkeypatch.setenv("THEANO_FLAGS", "device=gpu,lib.cnmem=.8,optimizer_incuding=x")
    code, out, _ = _cli("validate")
    assert code == 1
    assert f"error: {rc}:3: 'floatx' is set twice in [global] (first at line 2)" in out
    assert "error: unknown flag 'optimizer_incuding' (from THEANO_FLAGS)" in out
    assert "warning: lib.cnmem is obsolete" in out
    assert "device" not in out  # Theano's gpu spelling is valid
    assert f"error: floatX='float33' (from {rc}:2)" in out  # the file's readable values are checked too
    assert "3 problem(s) found" in out


def test_validate_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc = tmp_path / "rc"
    rc.write_text("[global]\nfloatX = float32\n")
    monkeypatch.setenv("THEANO_FLAGS", "device=cpu,exception_verbosity=high")
    code, out, _ = _cli("validate", "--rc", str(rc))
    assert code == 0
    assert f"read {rc}" in out and "read THEANO_FLAGS" in out
    assert out.splitlines()[-1].startswith("configuration OK, and this machine can run it (linker ")


def test_validate_with_nothing_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODECFG_FLAGS")
    code, out, _ = _cli("validate")
    assert code == 0 and "everything is at its default" in out


@pytest.mark.parametrize("kind", ["directory", "broken link"])
def test_validate_says_a_default_rc_path_that_is_no_file_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    if kind == "directory":
        (home / ".theanorc").mkdir()
    else:
        (home / ".theanorc").symlink_to(tmp_path / "gone")
    monkeypatch.delenv("MODECFG_FLAGS")
    monkeypatch.delenv("MODECFGRC")
    monkeypatch.setenv("HOME", str(home))
    code, out, _ = _cli("validate")
    assert code == 1
    said = {"directory": "is a directory, not a file", "broken link": f"is a link to {tmp_path / 'gone'}"}
    assert f"error: rc file {home / '.theanorc'} {said[kind]}" in out
    assert "everything is at its default" not in out  # not said before an error about an rc file
    assert out.count("error:") == 1


def test_validate_runs_the_compiler_links_the_blas_flags_and_checks_the_dump_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    if shutil.which("g++") is None:
        pytest.skip("needs a C++ compiler")
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    dumps.chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the link test remembers successes here
    flags = f'blas.ldflags="-lm -Wl,--no-such-flag",NanGuardMode.dump_dir={dumps}'
    monkeypatch.setenv("THEANO_FLAGS", flags)
    code, out, _ = _cli("validate")
    assert code == 1
    assert (
        "error: blas.ldflags=-lm -Wl,--no-such-flag (from THEANO_FLAGS): an empty program does not link"
        in out
    )
    assert "--no-such-flag" in out.split("does not link", 1)[1]
    assert f"{dumps} is writable by group or others (mode 777)" in out
    assert out.count("error:") == 2
    monkeypatch.setenv("THEANO_FLAGS", f"{flags},cxx=/bin/false")
    code, out, _ = _cli("validate")
    assert "the C++ compiler /bin/false does not run" in out
    assert "does not link" not in out  # said once: the compiler is the problem
    dumps.chmod(0o700)
    monkeypatch.setenv("THEANO_FLAGS", f"blas.ldflags=-lm,NanGuardMode.dump_dir={dumps}")
    code, out, _ = _cli("validate")
    assert code == 0, out
    assert len(list((tmp_path / "cache" / "modecfg" / "linktest").iterdir())) == 1  # remembered


def test_migrate_a_legacy_theanorc(tmp_path: Path) -> None:
    rc = tmp_path / ".theanorc"
    rc.write_text(
        "[global]\nfloatx = float32\ndevice = gpu0\nmode=DEBUG_MODE\nbase_compiledir=/scratch/%(user)s\n"
        "[lib]\ncnmem=.9\n[nvcc]\nfastmath = True\n[traceback]\nlimit = -1\n"
    )
    code, out, err = _cli("migrate", str(rc))
    assert code == 0
    assert out == (
        "[global]\nfloatX = float32\nmode = DebugMode\nbase_compiledir = /scratch/%(user)s\n"
        "device = gpu0\n\n[traceback]\nlimit = -1\n"
    )
    assert f"changed: {rc}:2: floatx is now spelled floatX" in err
    assert f"changed: {rc}:4: mode=DEBUG_MODE is now written mode=DebugMode" in err
    assert "device=gpu0" not in err  # Theano's spelling, with Theano's meaning: kept as written
    assert f"dropped: {rc}:7: lib.cnmem is obsolete: GPU memory preallocation" in err
    assert f"dropped: {rc}:9: nvcc.fastmath is obsolete" in err
    migrated = tmp_path / "migrated"
    migrated.write_text(out)
    assert modecfg.load(env={"USER": "ann"}, rc_files=[migrated]).device == "gpu0"


def test_migrate_a_flag_string_to_toml_and_back(tmp_path: Path) -> None:
    code, out, err = _cli(
        "migrate",
        "--flags",
        "floatX=float32,allow_gc=0,nvcc.fastmath=True,traceback__limit=-1",
        "--to",
        "toml",
    )
    assert code == 0
    assert out == 'floatX = "float32"\nallow_gc = false\n\n[traceback]\nlimit = -1\n'
    assert "dropped: --flags: nvcc.fastmath is obsolete" in err
    toml = tmp_path / "new.toml"
    toml.write_text(out)
    cfg = modecfg.load(env={}, rc_files=[toml])
    assert (cfg.floatX, cfg.allow_gc, cfg.traceback.limit) == ("float32", False, -1)


def test_migrate_reports_errors_and_fails(tmp_path: Path) -> None:
    code, out, err = _cli("migrate", "--flags", "floatX=float32,floatx=float16,exception_verbosity=True")
    assert code == 1
    assert out == "floatX=float32\n"
    assert "error: unknown flag 'floatx'" in err and "error: exception_verbosity='True'" in err


def test_migrate_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THEANO_FLAGS", "device=gpu,floatX=float32")
    code, out, _ = _cli("migrate")
    assert code == 0 and out == "floatX=float32,device=gpu\n"


def test_migrate_finds_a_legacy_rc_file_or_names_every_place_it_looked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for var in ("THEANO_FLAGS", "AESARA_FLAGS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out, err = _cli("migrate")
    assert (code, out) == (0, "")
    places = "THEANO_FLAGS, AESARA_FLAGS, ~/.theanorc, ~/.theanorc.txt, ~/.aesararc"
    assert err == f"nothing to migrate: no {places}\n"
    (tmp_path / ".aesararc").write_text("[global]\ndevice = gpu\n")
    code, out, _ = _cli("migrate")
    assert code == 0 and "device = gpu" in out


def test_migrate_a_missing_file_fails_clearly(tmp_path: Path) -> None:
    code, _, err = _cli("migrate", str(tmp_path / "nope"))
    assert code == 1 and "does not exist" in err


def test_migrate_file_and_flags_together_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        _cli("migrate", "x", "--flags", "a=b")
    assert info.value.code == 2


def test_a_broken_environment_is_an_error_message_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, fresh_config: None
) -> None:
    monkeypatch.setenv("THEANO_FLAGS", "floatX=x,device=y")
    code, out, err = _cli("show")
    assert code == 1 and out == ""
    assert err.count("error: ") == 2 and "Traceback" not in err


def test_python_dash_m_and_the_console_script_entry_point() -> None:
    env = {**os.environ, "PYTHONPATH": pythonpath(), "THEANO_FLAGS": "floatX=float32"}
    proc = subprocess.run(
        [sys.executable, "-m", "modecfg", "show"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    assert proc.stdout.split("\n")[0].split() == ["floatX", "float32", "THEANO_FLAGS"]
    script = Path(sys.executable).parent / "modecfg"  # the console script pip installed beside python
    if not script.exists():
        pytest.skip("modecfg is not installed as a console script in this environment")
    proc = subprocess.run([str(script), "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == f"modecfg {modecfg.__version__}"


def test_demo_flags_are_checked_before_anything_runs(fresh_config: None) -> None:
    code, _, err = _cli("demo", "--flags", "floatx=float32")
    assert code == 1
    assert "unknown flag 'floatx' (from assignment at modecfg demo --flags); did you mean floatX?" in err


def test_linkers_lists_the_table_and_says_what_auto_means(fresh_config: None) -> None:
    code, out, _ = _cli("linkers")
    assert code == 0
    for name in ("cvm", "c|py_nogc", "py", "numba", "jax"):
        assert f"\n{name} " in out or out.startswith(name)
    from modecfg.linkers.auto import rule_here

    assert f"linker=per_graph (modecfg's, opt-in): {rule_here()}" in out and "chosen per graph" in out
    assert "linker=auto (the default, PyTensor's): numba" in out or "numba" not in out.split("usable")[0]
    code, out, _ = _cli("linkers", "--json")
    rows = json.loads(out)
    assert {r["name"] for r in rows} >= {"cvm", "numba", "py"} and all("why_not" in r for r in rows)


def test_modes_lists_every_registered_mode(fresh_config: None) -> None:
    code, out, _ = _cli("modes")
    assert code == 0
    for name in ("FAST_RUN", "FAST_COMPILE", "DebugMode", "MonitorMode", "NanGuardMode", "ProfileMode"):
        assert name in out
    assert "(deprecated)" in out and "the mode flag is Mode (from default)" in out


def test_doctor_leads_with_a_verdict_and_lists_the_contacts_when_asked(fresh_config: None) -> None:
    code, out, _ = _cli("doctor")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("modecfg doctor: ready: this configuration runs here (linker ")
    assert "  contacts               " in out and "(modecfg doctor --verbose lists each)" in out
    assert "compile hook" not in out and len(out.splitlines()) < 60
    with modecfg.config.override(linker="mlx"):
        code, out, _ = _cli("doctor")
    assert out.startswith("modecfg doctor: 1 problem to fix before this configuration runs here (linker mlx")
    assert "\n  problem: linker=mlx (from override at " in out and "mlx is not installed" in out


def test_doctor_reports_compiler_backends_linkers_and_devices(fresh_config: None) -> None:
    code, out, _ = _cli("doctor", "--verbose")
    assert code == 0
    for section in ("C++ compiler", "BLAS", "backends", "GPUs", "linkers", "devices"):
        assert f"\n{section}\n" in f"\n{out}"
    assert "per_graph              chosen per graph" in out and "cpu                    usable" in out
    assert "auto                   PyTensor's default: " in out
    # every integration point, the patches and the contacts that replace no attribute (issue 22)
    from modecfg._pytensor.patches import CONTACTS, every

    for point in (*every(), *CONTACTS):
        assert f"\n  {point.name:<22} " in out or f"\n  {point.name} " in out, point.name
    assert "import hand-off" in out and "DebugMode fix        " in out


def test_demo_refuses_an_unknown_mode_before_running(fresh_config: None) -> None:
    code, out, err = _cli("demo", "--mode", "FAST_RUNN", "--steps", "1")
    assert code == 1 and out == ""
    assert "unknown mode 'FAST_RUNN'" in err and "did you mean 'FAST_RUN'" in err
    modecfg.config.reset("floatX")


@pytest.mark.skipif(sys.platform != "linux", reason="pipe sizes are set on Linux only")
def test_output_cut_short_by_a_closed_pipe_is_no_traceback() -> None:
    """`modecfg show --all | head -1`: the reader leaves early, while the writer still has
    output the pipe cannot hold, so its write fails with EPIPE (certain, not a race: the pipe
    holds one page, the output is longer than that and what was read)."""
    import fcntl

    env = {**os.environ, "PYTHONPATH": pythonpath()}
    command = [sys.executable, "-m", "modecfg", "show", "--all"]
    whole = subprocess.run(command, env=env, capture_output=True, timeout=120, check=True).stdout
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # the smallest: one page
    capacity = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
    assert len(whole) > capacity + 20  # the writer cannot be done when the reader leaves
    proc = subprocess.Popen(command, env=env, stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    with os.fdopen(read_end, "rb", buffering=0) as reader:
        first = reader.read(20)
    err = proc.communicate(timeout=60)[1].decode()
    assert proc.returncode == 0 and first == whole[:20] and first.startswith(b"floatX")
    assert "Traceback" not in err and "BrokenPipeError" not in err and err == ""


def test_doctor_with_a_compiler_that_does_not_exist_says_so() -> None:
    env = {**os.environ, "PYTHONPATH": pythonpath(), "MODECFG_FLAGS": "cxx=/nonexistent/g++"}
    proc = subprocess.run(
        [sys.executable, "-m", "modecfg", "doctor"], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0
    assert "/nonexistent/g++ does not exist or cannot be run" in proc.stdout  # the linker table
    assert "PyTensor fails to start here (FileNotFoundError" in proc.stdout
    assert 'File "' + str(ROOT / "modecfg") not in proc.stderr  # no traceback through modecfg


def test_modes_lines_up_its_columns_and_names_the_aliases() -> None:
    code, out, _ = _cli("modes")
    assert code == 0
    lines = out.splitlines()
    header = lines[0]
    starts = [header.index(title) for title in ("optimizer", "linker", "what it is for")]
    rows = [
        line
        for line in lines[1:]
        if line and not line.startswith(" ") and " is another name for " not in line
    ]
    rows = [r for r in rows if not r.startswith("the mode flag")]
    for row in rows:  # every cell starts under its title
        assert all(row[s - 2 : s] == "  " and row[s] != " " for s in starts), row
    assert "DEBUG_MODE is another name for DebugMode" in out


def test_explain_json_shows_the_default_layer_as_the_text_does() -> None:
    code, out, _ = _cli("explain", "traceback.limit", "--json")
    data = json.loads(out)
    assert code == 0 and data["layers"][0] == {"raw": None, "value": 8, "origin": {"layer": "default"}}


def test_every_option_says_what_it_does() -> None:
    from modecfg.cli import _parser

    parser = _parser()
    subparsers = next(a for a in parser._actions if isinstance(a, __import__("argparse")._SubParsersAction))
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"modecfg {name} {action.option_strings[0]} has no help text"


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        ("blas.ldflags=-lnosuchblas", "-lnosuchblas names no library on this machine"),
        ("cxx=/nonexistent/g++", "cxx=/nonexistent/g++ does not exist or cannot be run"),
        ("linker=mlx", "linker=mlx (from MODECFG_FLAGS): mlx is not installed"),
        ("mode=MLX", "mode=MLX (from MODECFG_FLAGS): mlx is not installed"),
    ],
)
def test_validate_is_a_preflight_of_what_the_values_ask_of_this_machine(
    monkeypatch: pytest.MonkeyPatch, flags: str, says: str
) -> None:
    monkeypatch.setenv("MODECFG_FLAGS", flags)
    code, out, _ = _cli("validate")
    assert code == 1 and says in out and out.endswith("1 problem(s) found\n")


def test_validate_names_a_gpu_device_this_machine_cannot_use(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg.device import where as device

    monkeypatch.setattr(device, "installed", lambda module: False)  # as on these machines, jax or not
    monkeypatch.setenv("MODECFG_FLAGS", "device=cuda0")
    code, out, _ = _cli("validate")
    assert code == 1 and "device=cuda0 (from MODECFG_FLAGS): device=cuda0 runs graphs through JAX" in out
    monkeypatch.setenv("MODECFG_FLAGS", "device=cuda0,fallback_to_cpu=True")  # asked to fall back: fine
    assert _cli("validate")[0] == 0
    monkeypatch.setenv("MODECFG_FLAGS", "device=gpu0")  # Theano's spelling falls back, as in Theano
    assert _cli("validate")[0] == 0
    monkeypatch.setenv("MODECFG_FLAGS", "device=gpu0,force_device=True")  # unless forced
    code, out, _ = _cli("validate")
    assert code == 1 and "device=gpu0 (from MODECFG_FLAGS): device=gpu0 runs graphs through JAX" in out


def test_validate_names_a_compile_directory_that_cannot_be_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("MODECFG_FLAGS", f"base_compiledir={blocker / 'cache'}")
    code, out, _ = _cli("validate")
    assert code == 1 and f"{blocker} cannot be written" in out


# -- output streams (issue 32) ---------------------------------------------------------------------


def _modecfg(shell: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    full.update(MODECFGRC="", **env)
    return subprocess.run(["sh", "-c", f"{sys.executable} -m modecfg {shell}"], env=full,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize("command", ["show --all", "schema", "explain floatX", "linkers"])
def test_a_full_disk_is_one_line_and_exit_1(command: str) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    done = _modecfg(f"{command} > /dev/full")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == ["error: cannot write the output: No space left on device"]


def test_a_closed_standard_output_is_one_line_and_exit_1() -> None:
    done = _modecfg("show >&-")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == "error: standard output is closed: nothing can be shown"


def test_an_ascii_terminal_shows_a_non_ascii_value_escaped() -> None:
    done = _modecfg("show", PYTHONIOENCODING="ascii", THEANO_FLAGS="compiledir=/tmp/caf\u00e9")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "/tmp/caf\\xe9" in done.stdout
    done = _modecfg("explain compiledir", PYTHONIOENCODING="ascii", THEANO_FLAGS="compiledir=/tmp/caf\u00e9")
    assert done.returncode == 0 and "/tmp/caf\\xe9" in done.stdout


def test_a_compile_cache_others_can_write_is_an_error_in_validate_and_a_warning_at_import(
    tmp_path: Path,
) -> None:
    """PyTensor loads the shared objects it finds in base_compiledir: a directory other users may
    write is their code run in your process (issue 32). validate said 'configuration OK'."""
    from tests.fresh import run_json

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    cache = shared / "cache"
    done = _modecfg("validate", THEANO_FLAGS=f"base_compiledir={cache}")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{shared} may be written by group or others (mode 777)" in done.stdout + done.stderr
    doctor = _modecfg("doctor", THEANO_FLAGS=f"base_compiledir={cache}")
    assert f"others too: {shared} may be written by group or others" in doctor.stdout
    out = run_json(
        """
        import json, warnings
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            import modecfg, pytensor
        said = [str(w.message) for w in seen if type(w.message).__name__ == "CompileCacheWarning"]
        print(json.dumps({"said": said}))
        """,
        {"THEANO_FLAGS": f"base_compiledir={cache}"},
    )
    assert len(out["said"]) == 1 and "whoever can write it runs code in your process" in out["said"][0]
    shared.chmod(0o700)
    assert _modecfg("validate", THEANO_FLAGS=f"base_compiledir={cache}").returncode == 0


def test_what_a_value_holds_is_shown_never_run_by_the_terminal(
    monkeypatch: pytest.MonkeyPatch, fresh_config: None
) -> None:
    """Round five: a dump's names, a lock note, a value could clear the screen, plant a link or
    overwrite a line; every command's output shows them as escapes (newlines and tabs kept)."""
    monkeypatch.setenv(
        "MODECFG_FLAGS", "profiling.destination=/tmp/out\x1b[2J\x1b]8;;http://x\x07\r\u202egnp.x"
    )
    code, out, _ = _cli("show")
    assert code == 0
    assert not any(c in out for c in "\x1b\x07\r\u202e")
    assert "/tmp/out\\x1b[2J\\x1b]8;;http://x\\x07\\x0d\\u202egnp.x" in out
    assert "\n" in out


# -- one verdict: doctor, doctor --verbose and validate (issue 60) ------------------------------


@pytest.mark.parametrize(
    "flags",
    ["", "linker=mlx", "device=gpu", "device=cuda", "base_compiledir=/proc/nonexist/c", "floatX=float32"],
)
def test_doctor_its_verbose_form_and_validate_give_one_verdict(flags: str, tmp_path: Path) -> None:
    """doctor said ready where --verbose said 1 problem (an integration point off as not needed);
    device=gpu without a GPU was ready in both though the run falls back to the CPU; a compile
    directory root cannot make in /proc passed. One function decides for both; --verbose adds
    detail, never another verdict; doctor fits 30 lines."""
    env = {"THEANO_FLAGS": flags, "HOME": str(tmp_path)}
    doctor = _modecfg("doctor", **env)
    verbose = _modecfg("doctor --verbose", **env)
    validate = _modecfg("validate", **env)
    head = doctor.stdout.split("\n\n", 1)[0].splitlines()
    assert head == verbose.stdout.split("\n\n", 1)[0].splitlines(), verbose.stdout
    said = [line.strip() for line in head[1:]]
    problems = [line.removeprefix("problem: ") for line in said if line.startswith("problem: ")]
    notes = [line.removeprefix("note: ") for line in said if line.startswith("note: ")]
    lines = validate.stdout.splitlines()
    assert [x.removeprefix("error: ") for x in lines if x.startswith("error: ")] == problems
    assert [x.removeprefix("note: ") for x in lines if x.startswith("note: ")] == notes
    assert (validate.returncode == 0) == (not problems) == head[0].startswith("modecfg doctor: ready")
    assert len(doctor.stdout.splitlines()) <= 30, doctor.stdout
    fallback = any(n.startswith("graphs run on the CPU, not the GPU device=gpu asks for") for n in notes)
    if flags == "device=gpu" and not _a_gpu_jax_sees():
        assert fallback
        # the verdict itself says where graphs run, in both commands (not "device gpu" alone)
        assert head[0].endswith(", device gpu (the CPU: no GPU here))"), head[0]
        assert lines[-1].endswith(", device gpu (the CPU: no GPU here))"), lines
    elif flags.startswith("device="):  # where JAX sees a GPU, the run is on it
        assert not fallback and "the CPU" not in head[0], head[0]
    if flags.startswith("base_compiledir"):
        assert problems and "it cannot be created" in problems[0]
    if flags == "linker=mlx" or (flags == "device=cuda" and not _a_gpu_jax_sees()):
        assert problems
    elif flags.startswith("device="):
        assert not problems, problems


def _a_gpu_jax_sees() -> bool:
    from modecfg.device import where as device

    return bool(device.gpu_devices())


def test_validate_reports_every_problem_of_a_file_unreadable_lines_included(tmp_path: Path) -> None:
    """Issue 60: one error for the first unreadable line, the others seen only after fixing it."""
    rc = tmp_path / "rc"
    rc.write_text(
        "[global]\nfloatX = float32\nthis line has no equals\nfloatX2 = 1\ndevice = banana\n"
        "[broken\nmode = FAST_RUNN\n[NanGuardMode]\nnan_is_error = maybe\n= no name\n"
    )
    done = _modecfg(f"validate --rc {rc}", HOME=str(tmp_path))
    errors = [line for line in done.stdout.splitlines() if line.startswith("error: ")]
    assert done.returncode == 1 and done.stdout.endswith(f"{len(errors)} problem(s) found\n")
    assert [e for e in errors if e.startswith(f"error: {rc}:")] == [
        f"error: {rc}:3: cannot read 'this line has no equals'; expected 'name = value', a [section] "
        "header or a # comment",
        f"error: {rc}:6: malformed section header '[broken'",
        f"error: {rc}:10: cannot read '= no name'; expected 'name = value', a [section] header "
        "or a # comment",
    ]
    said = "\n".join(errors)
    assert (
        "unknown flag 'floatX2'" in said and "device='banana'" in said and "NanGuardMode.nan_is_error" in said
    )
    assert "FAST_RUNN" not in said  # under a header that could not be read: its section is unknown


@pytest.mark.parametrize(
    "command", ["cache show", "cache show --json", "doctor", "validate", "explain compiledir"]
)
def test_a_command_that_shows_creates_nothing(tmp_path: Path, command: str) -> None:
    """Issue 60: `cache show` on a fresh base_compiledir made the compile directory (with an
    __init__.py) and said the lock could not be read where there was none."""
    base = tmp_path / "fresh" / "cache"
    done = _modecfg(command, THEANO_FLAGS=f"base_compiledir={base}", HOME=str(tmp_path))
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "fresh").exists()
    made = sorted(p.name for p in tmp_path.iterdir())
    if command == "doctor" and _a_gpu_jax_sees():  # the CUDA driver's kernel cache, made as JAX
        made = [name for name in made if name != ".nv"]  # asks the GPU what it is: not modecfg's
    assert made == []  # nothing in HOME either
    if command == "cache show":
        assert "not created yet" in done.stdout and "cannot say" not in done.stdout


def test_cache_show_says_a_lock_no_one_has_made_is_free(tmp_path: Path) -> None:
    base = tmp_path / "cache"
    done = _modecfg("cache show", THEANO_FLAGS=f"base_compiledir={base}", HOME=str(tmp_path))
    compiledir = done.stdout.split()[2].rstrip(":")  # the directory PyTensor would make
    Path(compiledir).mkdir(parents=True)
    done = _modecfg("cache show", THEANO_FLAGS=f"base_compiledir={base}", HOME=str(tmp_path))
    assert "lock .lock: free" in done.stdout and "cannot say" not in done.stdout, done.stdout


def test_validate_summarises_a_long_list_of_problems_and_lists_all_when_asked(tmp_path: Path) -> None:
    """Issue 60: an rc file of 50,000 unknown names printed 3.7 MB of errors."""
    rc = tmp_path / "rc"
    rc.write_text("[global]\n" + "".join(f"unknown_name_{i} = 1\n" for i in range(250)))
    code, out, _ = _cli("validate", "--rc", str(rc))
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert code == 1 and len(errors) == 100
    assert "... and 150 more: modecfg validate --all lists every one\n250 problem(s) found\n" in out
    code, out, _ = _cli("validate", "--rc", str(rc), "--all")
    assert (
        len([line for line in out.splitlines() if line.startswith("error: ")]) == 250 and "more:" not in out
    )


# -- main's own paths, in this process (the subprocess tests above hold them end to end) -------


class _Stdout(io.StringIO):
    """A standard output whose encoding errors and writes a test can see."""

    def __init__(self, fail: OSError | None = None) -> None:
        super().__init__()
        self.errors_asked: list[str] = []
        self.fail = fail

    def reconfigure(self, errors: str) -> None:
        self.errors_asked.append(errors)

    def write(self, text: str) -> int:
        if self.fail is not None:
            raise self.fail
        return super().write(text)


def test_main_with_standard_output_closed_says_so_once_and_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    err = io.StringIO()
    assert main(["show"], err=err) == 1
    assert err.getvalue() == "error: standard output is closed: nothing can be shown\n"
    monkeypatch.setattr(sys, "stderr", None)  # both closed (`modecfg show >&- 2>&-`): no error of its own
    assert main(["show"]) == 1
    out = io.StringIO()
    assert main(["explain", "floatX"], out=out, err=io.StringIO()) == 0  # an output given: shown there
    assert out.getvalue().startswith("floatX")


def test_main_escapes_what_the_terminal_cannot_encode_on_its_own_stdout_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdout = _Stdout()
    monkeypatch.setattr(sys, "stdout", stdout)
    assert main(["explain", "floatX"], err=io.StringIO()) == 0
    assert stdout.errors_asked == ["backslashreplace"] and stdout.getvalue().startswith("floatX")
    given = _Stdout()
    assert main(["explain", "floatX"], out=given, err=io.StringIO()) == 0
    assert given.errors_asked == []  # the caller's stream is the caller's


def test_main_says_an_output_that_cannot_be_written_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg import cli

    quieted: list[bool] = []
    monkeypatch.setattr(cli, "_quiet_stdout", lambda: quieted.append(True))
    full = OSError(28, "No space left on device")
    monkeypatch.setattr(sys, "stdout", _Stdout(fail=full))
    err = io.StringIO()
    assert main(["explain", "floatX"], err=err) == 1
    assert err.getvalue() == "error: cannot write the output: No space left on device\n" and quieted == [True]
    named = OSError(28, "No space left on device", "/some/file")  # a file of the command's, not stdout
    monkeypatch.setattr(sys, "stdout", _Stdout(fail=named))
    err = io.StringIO()
    assert main(["explain", "floatX"], err=err) == 1  # standard output itself: said the same way
    assert err.getvalue() == "error: cannot write the output: No space left on device\n"
    with pytest.raises(OSError, match="/some/file"):
        main(["explain", "floatX"], out=_Stdout(fail=named), err=io.StringIO())  # a caller's stream: theirs
    nameless = OSError("disk gone")
    err = io.StringIO()
    assert main(["explain", "floatX"], out=_Stdout(fail=nameless), err=err) == 1
    assert err.getvalue() == "error: cannot write the output: disk gone\n"
    quieted.clear()
    monkeypatch.setattr(sys, "stdout", _Stdout(fail=BrokenPipeError(32, "Broken pipe")))
    assert main(["explain", "floatX"], err=io.StringIO()) == 0  # `| head`: all it wanted
    assert quieted == [True]


def test_main_reads_its_words_from_the_command_line_when_given_none(monkeypatch: pytest.MonkeyPatch) -> None:
    from modecfg import cli

    ran: list[tuple[list[str], bool]] = []
    monkeypatch.setattr(cli, "run_command", lambda words, keep_main, err: ran.append((words, keep_main)) or 7)
    monkeypatch.setattr(sys, "argv", ["modecfg", "run", "s.py", "-x"])
    assert main() == 7 and ran == [(["s.py", "-x"], True)]  # this process ends with the script
    assert main(["run", "s.py"]) == 7 and ran[-1] == (["s.py"], False)  # called as a library: it does not
    monkeypatch.setattr(sys, "argv", ["modecfg", "explain", "floatX"])
    out = io.StringIO()
    assert main(out=out, err=io.StringIO()) == 0 and out.getvalue().startswith("floatX")


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("0", "0 steps: give 1 or more"),
        ("-3", "-3 steps: give 1 or more"),
        ("x", "'x' is not a whole number"),
    ],
)
def test_the_demos_steps_are_a_whole_number_of_one_or_more(
    given: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["demo", "--steps", given], out=io.StringIO(), err=io.StringIO())
    assert ended.value.code == 2 and f"argument --steps: {said}\n" in capsys.readouterr().err


def test_main_tells_a_script_command_whether_this_process_ends_with_the_script(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``modecfg compare s.py`` from the shell ends with the script (its ``__main__`` stays, for
    what runs at exit); ``main([...])`` called by a program does not."""
    from modecfg import cli

    seen: list[object] = []
    monkeypatch.setattr(cli, "cmd_compare", lambda args, out, err: seen.append(args.keep_main) or 0)
    monkeypatch.setattr(sys, "argv", ["modecfg", "compare", "s.py"])
    assert main(out=io.StringIO(), err=io.StringIO()) == 0
    assert main(["compare", "s.py"], out=io.StringIO(), err=io.StringIO()) == 0
    assert seen == [True, False]


def test_a_usage_error_a_command_finds_is_said_as_argparse_says_its_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["migrate", "a.ini", "--flags", "floatX=float32"], out=io.StringIO(), err=io.StringIO())
    said = capsys.readouterr().err
    assert ended.value.code == 2
    assert said.endswith("modecfg: error: give a FILE or --flags, not both\n") and said.startswith("usage: ")
