"""The Config object: reads, assignment, provenance, scoped overrides, threads, asyncio."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

import modecfg
from modecfg.configuration.live import build
from modecfg.configuration.origin import Layer
from modecfg.configuration.resolve import Resolution
from modecfg.errors import FlagValueError, ReadOnlyFlagError, UnknownFlagError
from tests.fresh import pythonpath

HERE = str(Path(__file__).resolve())
ROOT = Path(__file__).resolve().parents[2]
STRESS_ROUNDS = int(os.environ.get("MODECFG_STRESS_ROUNDS", "300"))


@pytest.fixture
def cfg() -> modecfg.Config:
    return modecfg.load(env={"THEANO_FLAGS": "floatX=float32,traceback.limit=3"})


def _line_of(marker: str) -> int:
    return next(i for i, line in enumerate(Path(HERE).read_text().splitlines(), 1) if marker in line)


# -- reads ---------------------------------------------------------------------------


def test_typed_reads_in_every_spelling(cfg: modecfg.Config) -> None:
    assert cfg.floatX == "float32"
    assert cfg.traceback.limit == 3
    assert cfg["traceback.limit"] == 3
    assert cfg["traceback__limit"] == 3
    assert cfg.traceback__limit == 3  # PyTensor's spelling as an attribute
    assert isinstance(cfg.allow_gc, bool) and isinstance(cfg.NanGuardMode.big, float)


def test_unknown_names(cfg: modecfg.Config) -> None:
    # Attribute reads stay plain (no __getattr__: that would slow every read); Python
    # itself suggests the right name, from the Config's __dir__.
    for expr, hint in [("cfg.floatx", "'floatX'"), ("cfg.traceback.limt", "'limit'")]:
        proc = subprocess.run(
            [sys.executable, "-c", f"import modecfg; cfg = modecfg.load(env={{}}); {expr}"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": pythonpath()},
        )
        assert f"has no attribute {expr.rsplit('.', 1)[1]!r}. Did you mean: {hint}?" in proc.stderr
    assert not hasattr(cfg, "floatx")
    assert hasattr(cfg, "floatX")
    # Item access goes through the flag table and says more.
    with pytest.raises(UnknownFlagError, match=r"did you mean traceback\.limit"):
        cfg["traceback.limt"]
    with pytest.raises(UnknownFlagError, match="obsolete"):
        cfg["lib.cnmem"]


def test_dir_lists_flags_and_sections(cfg: modecfg.Config) -> None:
    assert {"floatX", "traceback", "DebugMode", "origin", "override"} <= set(dir(cfg))
    assert dir(cfg.traceback) == ["compile_limit", "limit"]
    assert repr(cfg.traceback) == "<config section traceback: limit=3, compile_limit=0>"


def test_mapping_protocol(cfg: modecfg.Config) -> None:
    assert "floatX" in cfg and "traceback__limit" in cfg and "nope" not in cfg
    assert len(cfg) == len(list(cfg)) and "DebugMode.check_c" in list(cfg)
    assert {name: cfg[name] for name in cfg}["floatX"] == "float32"


def test_lazy_defaults_follow_other_flags() -> None:
    cfg = modecfg.load(env={})
    assert cfg.compile.timeout == 24 * cfg.compile.wait
    cfg.cxx = ""
    assert cfg.DebugMode.check_c is False
    cfg.cxx = "/usr/bin/g++"
    assert cfg.DebugMode.check_c is True


# -- assignment ------------------------------------------------------------------------


def test_assignment_is_validated_and_records_where_it_was_written(cfg: modecfg.Config) -> None:
    cfg.floatX = "float16"  # assignment-origin-marker
    assert cfg.floatX == "float16"
    origin = cfg.origin("floatX")
    assert origin == modecfg.Origin(Layer.ASSIGNMENT, HERE, _line_of("assignment-origin-marker"))
    cfg.traceback.limit = "5"
    assert cfg.traceback.limit == 5
    cfg["DebugMode.check_strides"] = 2
    assert cfg.DebugMode.check_strides == 2


def test_bad_assignments_say_what_is_valid(cfg: modecfg.Config) -> None:
    with pytest.raises(FlagValueError) as info:
        cfg.floatX = "float33"  # bad-assignment-marker
    msg = str(info.value)
    assert "floatX='float33'" in msg and "valid choices: float64, float32, float16" in msg
    assert f"test_live.py:{_line_of('bad-assignment-marker')}" in msg
    assert cfg.floatX == "float32"  # unchanged
    with pytest.raises(FlagValueError, match="expected integer"):
        cfg.traceback.limit = 2.5
    with pytest.raises(UnknownFlagError, match="did you mean floatX"):
        cfg.floatx = "float32"


def test_assigning_an_obsolete_flag_warns_and_does_nothing(cfg: modecfg.Config) -> None:
    with pytest.warns(modecfg.ObsoleteFlagWarning, match="lib.cnmem is obsolete.*does nothing"):
        cfg["lib.cnmem"] = 0.8


def test_reset_drops_assignments(cfg: modecfg.Config) -> None:
    cfg.floatX = "float16"
    del cfg.floatX
    assert cfg.floatX == "float32" and cfg.origin("floatX").source == "THEANO_FLAGS"
    cfg.allow_gc = False
    cfg.reset("allow_gc")
    assert cfg.allow_gc is True and cfg.is_default("allow_gc")


# -- overrides ---------------------------------------------------------------------------


def test_override_as_context_manager_restores_on_exit_and_on_error(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float64", traceback__limit=-1) as inner:
        assert inner is cfg
        assert (cfg.floatX, cfg.traceback.limit) == ("float64", -1)
        assert cfg.origin("floatX").layer is Layer.OVERRIDE
    assert (cfg.floatX, cfg.traceback.limit) == ("float32", 3)
    with pytest.raises(RuntimeError), cfg.override({"traceback.limit": 0}):
        raise RuntimeError
    assert cfg.traceback.limit == 3


def test_override_records_the_line_that_made_it(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float16"):  # override-origin-marker
        assert cfg.origin("floatX") == modecfg.Origin(
            Layer.OVERRIDE, HERE, _line_of("override-origin-marker")
        )
        assert [str(c.origin.layer) for c in cfg.explain("floatX").layers] == ["env", "override"]


def test_nested_overrides(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float64"):
        with cfg.override(floatX="float16", allow_gc=False):
            assert (cfg.floatX, cfg.allow_gc) == ("float16", False)
        assert (cfg.floatX, cfg.allow_gc) == ("float64", True)
    assert cfg.floatX == "float32"


def test_the_same_override_object_can_be_reused_and_nested(cfg: modecfg.Config) -> None:
    ov = cfg.override(floatX="float16")
    with ov, ov:
        assert cfg.floatX == "float16"
    with ov:
        assert cfg.floatX == "float16"
    assert cfg.floatX == "float32"


def test_override_as_decorator(cfg: modecfg.Config) -> None:
    @cfg.override(floatX="float16")
    def inside() -> str:
        return str(cfg.floatX)

    assert inside() == "float16" and cfg.floatX == "float32"
    assert inside.__name__ == "inside"


def test_change_flags_is_the_same_thing() -> None:
    before = modecfg.config.floatX
    with modecfg.change_flags(floatX="float16"):
        assert modecfg.config.floatX == "float16"
    assert modecfg.config.floatX == before


def test_one_call_site_with_changing_values_gets_each_value(cfg: modecfg.Config) -> None:
    seen = []
    for value in ["float16", "float64", "float16", "float32"]:
        with cfg.override(floatX=value):
            seen.append(cfg.floatX)
    assert seen == ["float16", "float64", "float16", "float32"]
    first = [cfg.override(floatX="float16") for _ in range(2)]
    assert first[0] is first[1]  # validated once per call site and values


def test_values_whose_equality_raises_still_work(cfg: modecfg.Config) -> None:
    class Weird(int):
        def __eq__(self, other: object) -> bool:
            raise ValueError("no truth value")

        __hash__ = int.__hash__

    for _ in range(2):
        with cfg.override(traceback__limit=Weird(5)):
            assert cfg.traceback.limit == 5


def test_one_override_object_entered_by_many_threads(cfg: modecfg.Config) -> None:
    shared = cfg.override(floatX="float16", allow_gc=False)
    barrier = threading.Barrier(4)
    results: list[tuple[object, object]] = []

    def worker() -> None:
        with shared:
            barrier.wait()
            results.append((cfg.floatX, cfg.allow_gc))
            barrier.wait()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == [("float16", False)] * 4
    assert (cfg.floatX, cfg.allow_gc) == ("float32", True)


def test_exiting_an_override_that_was_not_entered_is_an_error(cfg: modecfg.Config) -> None:
    with pytest.raises(RuntimeError, match="without being entered"):
        cfg.override(floatX="float16").__exit__(None, None, None)
    with pytest.raises(RuntimeError, match="without being entered"):
        cfg.override(floatX="float16", allow_gc=False).__exit__(None, None, None)


def test_override_values_are_validated_at_once(cfg: modecfg.Config) -> None:
    with pytest.raises(FlagValueError, match="valid choices"):
        cfg.override(floatX="float33")
    with pytest.raises(UnknownFlagError):
        cfg.override(floatx="float32")


def test_fixed_flags_cannot_be_overridden_for_a_block(cfg: modecfg.Config) -> None:
    with pytest.raises(ReadOnlyFlagError, match="compiledir cannot be overridden"):
        cfg.override(compiledir="/tmp/x")


def test_assignment_inside_an_override_is_undone_with_it(cfg: modecfg.Config) -> None:
    with cfg.override(floatX="float64"):
        cfg.floatX = "float16"
        assert cfg.floatX == "float16"
        cfg.allow_gc = False  # not overridden: a real assignment
    assert cfg.floatX == "float32"
    assert cfg.allow_gc is False


def test_descriptors_are_gone_after_the_last_override(cfg: modecfg.Config) -> None:
    cls = type(cfg)
    with cfg.override(floatX="float64"):
        assert "floatX" in cls.__dict__
        with cfg.override(floatX="float16"):
            pass
        assert "floatX" in cls.__dict__
    assert cfg.floatX == "float32"  # the first read outside any override removes it
    assert "floatX" not in cls.__dict__  # reads are plain attribute reads again
    assert "limit" not in type(cfg.traceback).__dict__


def test_a_lazy_default_comes_back_after_an_override() -> None:
    cfg = modecfg.load(env={})
    expected = bool(cfg.cxx)
    with cfg.override(DebugMode__check_c=not expected):
        assert cfg.DebugMode.check_c is (not expected)
    assert cfg.DebugMode.check_c is expected
    assert type(type(cfg.DebugMode).__dict__["check_c"]).__name__ == "LazyDefault"  # put back
    cfg.cxx = ""
    assert cfg.DebugMode.check_c is False  # still computed from cxx


def test_overrides_of_one_config_do_not_touch_another() -> None:
    a = modecfg.load(env={})
    b = modecfg.load(env={})
    with a.override(floatX="float32"):
        assert a.floatX == "float32" and b.floatX == "float64"
        assert modecfg.config.floatX == "float64"


def test_threads_see_only_their_own_overrides(cfg: modecfg.Config) -> None:
    barrier = threading.Barrier(3)
    seen: dict[str, list[object]] = {}

    def worker(name: str, value: str | None) -> None:
        rows: list[object] = []
        if value is None:
            barrier.wait()
            rows.append(cfg.floatX)
            barrier.wait()
        else:
            with cfg.override(floatX=value):
                barrier.wait()  # every thread is inside its block (or reading) now
                rows.append(cfg.floatX)
                rows.append(cfg.origin("floatX").layer)
                barrier.wait()
        rows.append(cfg.floatX)
        seen[name] = rows

    threads = [
        threading.Thread(target=worker, args=("a", "float16")),
        threading.Thread(target=worker, args=("b", "float64")),
        threading.Thread(target=worker, args=("plain", None)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen["a"] == ["float16", Layer.OVERRIDE, "float32"]
    assert seen["b"] == ["float64", Layer.OVERRIDE, "float32"]
    assert seen["plain"] == ["float32", "float32"]
    assert "floatX" not in type(cfg).__dict__


def test_many_threads_entering_and_leaving_overrides_never_see_each_other(cfg: modecfg.Config) -> None:
    errors: list[str] = []
    values = ["float16", "float64", None]

    def worker(i: int) -> None:
        mine = values[i % 3]
        for _ in range(STRESS_ROUNDS):
            if mine is None:
                if cfg.floatX != "float32":
                    errors.append(f"plain thread saw {cfg.floatX}")
            else:
                with cfg.override(floatX=mine):
                    if cfg.floatX != mine:
                        errors.append(f"{mine} thread saw {cfg.floatX}")
                if cfg.floatX != "float32":
                    errors.append(f"after exit saw {cfg.floatX}")

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert "floatX" not in type(cfg).__dict__


def test_asyncio_tasks_see_only_their_own_overrides(cfg: modecfg.Config) -> None:
    async def task(value: str) -> list[str]:
        out = []
        with cfg.override(floatX=value):
            for _ in range(3):
                await asyncio.sleep(0)  # let the other task run inside its own block
                out.append(str(cfg.floatX))
        out.append(str(cfg.floatX))
        return out

    async def main() -> tuple[list[str], list[str]]:
        a, b = await asyncio.gather(task("float16"), task("float64"))
        return a, b

    a, b = asyncio.run(main())
    assert a == ["float16"] * 3 + ["float32"]
    assert b == ["float64"] * 3 + ["float32"]


def test_decorated_coroutines_keep_the_override_across_awaits(cfg: modecfg.Config) -> None:
    @cfg.override(floatX="float16")
    async def inside() -> str:
        await asyncio.sleep(0)
        return str(cfg.floatX)

    async def main() -> tuple[str, str]:
        return await inside(), str(cfg.floatX)

    assert asyncio.run(main()) == ("float16", "float32")


# -- provenance and export ---------------------------------------------------------------


def test_explain_lists_doc_choices_and_layers(tmp_path: Path) -> None:
    rc = tmp_path / "rc"
    rc.write_text("[global]\nfloatX = float16\n")
    cfg = modecfg.load(env={"THEANO_FLAGS": "floatX=float32"}, rc_files=[rc])
    exp = cfg.explain("floatX")
    assert exp.value == "float32" and exp.default == "float64"
    assert exp.choices == ("float64", "float32", "float16")
    assert [(c.origin.layer, c.raw) for c in exp.layers] == [(Layer.RC, "float16"), (Layer.ENV, "float32")]
    text = str(exp)
    assert (
        f"rc {rc}:2" in text and "(overridden)" in text and "env THEANO_FLAGS" in text and "<- wins" in text
    )
    assert "one of float64, float32, float16" in text


def test_explain_of_a_default_says_so() -> None:
    text = str(modecfg.load(env={}).explain("traceback__limit"))
    assert text.startswith("traceback.limit = 8   (from default)")
    assert "no layer sets it" in text


def test_to_flags_lists_non_default_values_and_reads_back() -> None:
    cfg = modecfg.load(
        env={"THEANO_FLAGS": "floatX=float32,blas.ldflags='-Wl,-rpath=/x -lblas',allow_gc=off,floatX=float32"}
    )
    cfg.traceback.limit = -1
    text = cfg.to_flags()
    assert text == 'floatX=float32,allow_gc=False,blas.ldflags="-Wl,-rpath=/x -lblas",traceback.limit=-1'
    again = modecfg.load(env={"MODECFG_FLAGS": text})
    assert {n: again[n] for n in again} == {n: cfg[n] for n in cfg}


def test_to_flags_all_reads_back_to_the_same_values() -> None:
    cfg = modecfg.load(env={})
    again = modecfg.load(env={"MODECFG_FLAGS": cfg.to_flags(all=True)})
    assert {n: again[n] for n in again} == {n: cfg[n] for n in cfg}


def test_repr_is_the_flag_string() -> None:
    assert repr(modecfg.load(env={"THEANO_FLAGS": "floatX=float32"})) == "<modecfg Config: floatX=float32>"


# -- the process-wide config is read lazily ------------------------------------------------


def test_a_broken_source_raises_at_first_read_and_at_every_read_after() -> None:
    calls = []

    def loader(flags: object) -> Resolution:
        calls.append(1)
        res = Resolution()
        res.errors.append(modecfg.FlagValueError("floatX='x' (from THEANO_FLAGS): not a valid choice"))
        return res

    cfg = build(loader)
    assert calls == []  # nothing read yet
    for _ in range(2):
        with pytest.raises(modecfg.FlagValueError, match="THEANO_FLAGS"):
            cfg.floatX  # noqa: B018
    assert len(calls) == 2


def test_several_problems_are_raised_together() -> None:
    with pytest.raises(modecfg.ConfigErrors) as info:
        modecfg.load(env={"THEANO_FLAGS": "floatX=x,bogus=1", "PYTENSOR_FLAGS": "float32"})
    # syntax errors come from reading the sources, the others from resolving them
    assert [type(e).__name__ for e in info.value.errors] == [
        "FlagSyntaxError",
        "FlagValueError",
        "UnknownFlagError",
    ]
    first = "3 configuration problems:\n  - PYTENSOR_FLAGS: item 'float32' has no '='"
    assert str(info.value).startswith(first)


def test_obsolete_notes_warn_once_at_load() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = modecfg.load(env={"THEANO_FLAGS": "lib.cnmem=1,lib.cnmem=2"})
    assert len([w for w in caught if w.category is modecfg.ObsoleteFlagWarning]) == 1
    assert len(cfg.notes) == 2


@pytest.mark.parametrize(
    ("flag", "value"),
    [("cxx", "/opt/my/g++"), ("base_compiledir", "/tmp/elsewhere"), ("compile.timeout", "7")],
)
def test_the_first_read_of_a_computed_default_sees_the_sources(flag: str, value: str) -> None:
    """A flag with a computed default, read first thing in a fresh process, has the value the
    environment gives it (the read that loads the sources used to return the default)."""
    from tests.fresh import run_json

    out = run_json(
        f"import json, modecfg\nprint(json.dumps({{'value': str(modecfg.config[{flag!r}])}}))",
        {"MODECFG_FLAGS": f"{flag}={value}"},
    )
    assert out["value"] == value


def test_to_flags_carries_overrides_and_values_equal_to_the_default_to_a_worker() -> None:
    """The driver overrides back to the defaults; a spawned worker whose environment says
    otherwise must still run with the driver's values."""
    from tests.fresh import run_json

    cfg = modecfg.load(env={"THEANO_FLAGS": "floatX=float32,traceback.limit=1"})
    with cfg.override(floatX="float64", traceback__limit=8):
        text = cfg.to_flags()
    assert text == "floatX=float64,traceback.limit=8"
    worker = run_json(
        "import json, modecfg\nc = modecfg.config\n"
        "print(json.dumps({'values': [c.floatX, c.traceback.limit]}))",
        {"THEANO_FLAGS": "floatX=float32,traceback.limit=1", "MODECFG_FLAGS": text},
    )
    assert worker["values"] == ["float64", 8]


def test_a_package_that_sets_a_flag_while_imported_over_yours_is_said_once(tmp_path: Path) -> None:
    """pymc-marketing#1515, pymc#7520: importing a library silently changed the optimizer the
    user had set (issue 31, item 11). The package's line and the user's source are named."""
    import json

    package = tmp_path / "eager_lib"
    package.mkdir()
    (package / "__init__.py").write_text("import modecfg\nmodecfg.config.floatX = 'float64'\n")
    (tmp_path / "train.py").write_text(
        "import importlib, json, warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    import modecfg, eager_lib\n"
        "    importlib.reload(eager_lib)\n"
        "    modecfg.config.floatX = 'float16'\n"
        "print(json.dumps([(w.category.__name__, str(w.message), w.filename) for w in seen]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env.update(MODECFGRC="", THEANO_FLAGS="floatX=float32", PYTHONPATH=pythonpath(tmp_path))
    done = subprocess.run([sys.executable, str(tmp_path / "train.py")], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = [w for w in json.loads(done.stdout) if w[0] == "ImportAssignmentWarning"]
    assert len(said) == 1  # once for that line, not again at the reload; the script's own: nothing
    _, message, filename = said[0]
    assert filename == str(package / "__init__.py")
    assert f"importing eager_lib set floatX='float64' ({package / '__init__.py'}:2)" in message
    assert "over floatX='float32' that you set (THEANO_FLAGS)" in message


def test_assigned_for_a_block_puts_back_the_assignments_there_were() -> None:
    """``modecfg profile``/``compare`` run a script with flags every thread reads: assignments for
    the block, then what was assigned before (value and origin), or nothing, again."""
    cfg = modecfg.load(env={"THEANO_FLAGS": "floatX=float32"}, rc_files=[])
    cfg.profile = True
    line = sys._getframe().f_lineno - 1
    seen: list[object] = []
    with cfg.assigned({"profile": False, "floatX": "float16", "traceback.limit": 3}, source="a tool"):
        thread = threading.Thread(target=lambda: seen.append((cfg.profile, cfg.floatX)))
        thread.start()
        thread.join()
        assert str(cfg.origin("floatX")) == "assignment at a tool" and cfg.traceback.limit == 3
    assert seen == [(False, "float16")]
    assert cfg.profile is True and (cfg.origin("profile").layer, cfg.origin("profile").line) == (
        "assignment",
        line,
    )
    assert (cfg.floatX, cfg.origin("floatX").source) == ("float32", "THEANO_FLAGS")
    assert cfg.is_default("traceback.limit")
    with pytest.raises(FlagValueError), cfg.assigned({"floatX": "float16", "profile": "maybe"}, source="t"):
        pass  # refused before the block: the one that was taken is put back too
    assert (cfg.floatX, cfg.profile) == ("float32", True)
    with pytest.raises(UnknownFlagError), cfg.assigned({"flaotX": "float16"}, source="t"):
        pass
    with pytest.raises(KeyError), cfg.assigned({"floatX": "float16"}, source="t"):
        raise KeyError("the block failed")
    assert cfg.floatX == "float32"


def test_changed_is_what_some_layer_set_here_overrides_included(cfg: modecfg.Config) -> None:
    """One answer for show, to_flags, snapshots, compile records and the notebook table."""
    assert list(cfg.changed()) == ["floatX", "traceback.limit"]
    assert cfg.changed()["floatX"] == ("float32", cfg.origin("floatX"))
    with cfg.override(floatX="float64", profile=False):  # the defaults' values, set by a layer
        inside = cfg.changed()
        assert inside["floatX"][0] == "float64" and inside["floatX"][1].layer is Layer.OVERRIDE
        assert "profile" in inside and cfg.to_flags() == "floatX=float64,traceback.limit=3,profile=False"
        assert [name for name, _, _ in cfg.snapshot().values] == list(inside)
    assert cfg.to_flags() == "floatX=float32,traceback.limit=3"
    record = cfg.in_effect()
    assert record["floatX"] == ("float32", "THEANO_FLAGS") and record["mode"][1] == "default"
    assert "profile" not in record
    assert "2 set" in cfg._repr_html_() and "traceback.limit" in cfg._repr_html_()


def test_a_compile_record_holds_an_objects_short_text() -> None:
    """A Mode given as the mode flag's value: its text is kilobytes of rewrite databases (seen in
    a profile header of PyTensor's own tests); the record keeps its first line, 80 characters."""
    from pytensor.compile.mode import Mode

    mode = Mode(linker="py")
    assert len(str(mode)) > 1000 and "\n" in str(mode)
    cfg = modecfg.load(env={})
    with cfg.override(mode=mode):
        value, origin = cfg.in_effect()["mode"]
    assert value == str(mode)[:79] + "…" and len(value) == 80 and "\n" not in value
    assert origin.startswith("override at ")
