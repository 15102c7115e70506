"""The config mirror, in fresh interpreters: PyTensor's import must be the first one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fresh import pythonpath, run_json

pytest.importorskip("pytensor")

ROOT = Path(__file__).resolve().parents[2]


def test_modecfg_first_hands_its_values_to_pytensor_at_import(tmp_path: Path) -> None:
    (tmp_path / "rc").write_text("[global]\non_opt_error = raise\n")
    out = run_json(
        """
        import json, os, sys, warnings
        warnings.simplefilter("always")
        import modecfg
        from modecfg import config
        read = (config.floatX, config.traceback.limit)
        imported_by_read = "pytensor" in sys.modules
        import pytensor
        pc = pytensor.config
        print(json.dumps({
            "read": read, "imported_by_read": imported_by_read,
            "floatX": pc.floatX, "optimizer": pc.optimizer, "limit": pc.traceback__limit,
            "cxxflags": pc.gcc__cxxflags, "base": str(pc.base_compiledir),
            "on_opt_error": pc.on_opt_error,
            "env_flags": os.environ.get("PYTENSOR_FLAGS"), "env_rc": os.environ.get("PYTENSORRC"),
        }))
        """,
        {
            "THEANO_FLAGS": "floatX=float32,device=cuda,optimizer=None,lib.cnmem=.5",
            "PYTENSOR_FLAGS": "traceback.limit=-1,gcc.cxxflags=-O2",
            "MODECFG_FLAGS": f"base_compiledir={tmp_path}",
            "THEANORC": str(tmp_path / "rc"),
        },
    )
    assert out["read"] == ["float32", -1]
    assert out["imported_by_read"] is False  # reading the config never imports PyTensor
    assert out["floatX"] == "float32"
    assert out["optimizer"] == "None"  # fixed by PyTensor at import: only the import can set it
    assert out["limit"] == -1
    assert out["cxxflags"] == "-O2"  # a dotted name PyTensor itself would not have understood
    assert out["base"] == str(tmp_path)
    assert out["on_opt_error"] == "raise"  # from THEANORC, which PyTensor never reads
    assert out["env_flags"] == "traceback.limit=-1,gcc.cxxflags=-O2"  # restored after the import
    assert out["env_rc"] is None
    assert "does not recognise" not in str(out["stderr"])


def test_assignments_and_overrides_are_seen_through_pytensor_config() -> None:
    out = run_json(
        """
        import json
        import modecfg
        import pytensor
        modecfg.config.floatX = "float32"
        after_assignment = pytensor.config.floatX
        with modecfg.config.override(floatX="float16"):
            during_override = pytensor.config.floatX
        modecfg.config.reset("floatX")
        after_reset = pytensor.config.floatX
        modecfg.config.device = "cuda"  # modecfg's own flag: nothing to mirror, no error
        print(json.dumps({"assigned": after_assignment, "overridden": during_override,
                          "reset": after_reset}))
        """,
        {},
    )
    assert out["assigned"] == "float32"
    assert out["overridden"] == "float16"  # pytensor.config is a view: the override shows there too
    assert out["reset"] == "float64"


def test_fixed_flags_raise_once_pytensor_uses_them(tmp_path: Path) -> None:
    out = run_json(
        f"""
        import json
        import modecfg
        from modecfg import config
        config.base_compiledir = {str(tmp_path / "before")!r}  # fine: PyTensor not loaded yet
        import pytensor
        used = str(pytensor.config.base_compiledir)
        config.base_compiledir = {str(tmp_path / "before")!r}  # same value: fine
        try:
            config.base_compiledir = {str(tmp_path / "after")!r}
            error = None
        except modecfg.ReadOnlyFlagError as exc:
            error = str(exc)
        print(json.dumps({{"used": used, "error": error, "value": str(config.base_compiledir)}}))
        """,
        {},
    )
    assert out["used"] == str(tmp_path / "before")
    assert out["value"] == str(tmp_path / "before")
    assert "base_compiledir cannot change" in str(out["error"])
    assert "PyTensor already uses" in str(out["error"])


def test_dropping_the_assignment_of_a_fixed_flag_pytensor_uses_is_refused(tmp_path: Path) -> None:
    """``del config.base_compiledir`` (or ``config.reset``) after PyTensor took the assigned value:
    modecfg showed the default while PyTensor kept compiling into the assigned directory. Refused
    as the assignment of another value is; the same value below (a source's) is no change."""
    out = run_json(
        f"""
        import json
        import modecfg
        from modecfg import config
        config.base_compiledir = {str(tmp_path / "before")!r}
        config.compile.wait = 7
        import pytensor
        said = []
        for drop in (lambda: config.reset("base_compiledir"), lambda: delattr(config.compile, "wait")):
            try:
                drop()
            except modecfg.ReadOnlyFlagError as exc:
                said.append(str(exc))
        print(json.dumps({{
            "said": said,
            "modecfg": [str(config.base_compiledir), config.compile.wait],
            "pytensor": [str(pytensor.config.base_compiledir), pytensor.config.compile__wait],
        }}))
        """,
        {},
    )
    assert out["modecfg"] == out["pytensor"] == [str(tmp_path / "before"), 7], out
    said = out["said"]
    assert isinstance(said, list) and len(said) == 2
    assert said[0].startswith("base_compiledir cannot change to ") and "PyTensor already uses" in said[0]
    assert said[1].startswith("compile.wait cannot change to 5: PyTensor already uses 7")


def test_pytensor_imported_first_gets_the_values_it_still_can_take() -> None:
    out = run_json(
        """
        import json, warnings
        import pytensor
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            import modecfg
            modecfg.config.floatX  # first read: values are copied into pytensor.config
        default = pytensor.compile.mode.get_default_mode()
        print(json.dumps({
            "floatX": pytensor.config.floatX, "optimizer": pytensor.config.optimizer,
            "default mode includes": sorted(default.provided_optimizer.include),
            "age": pytensor.config.cmodule__age_thresh_use,
            "warnings": [str(w.message) for w in caught],
        }))
        """,
        {"MODECFG_FLAGS": "floatX=float32,optimizer=fast_compile,cmodule.age_thresh_use=1000"},
    )
    assert out["floatX"] == "float32"
    # PyTensor marks optimizer immutable; modecfg builds the modes, so it is in effect and shown
    assert out["optimizer"] == "fast_compile"
    assert out["default mode includes"] == ["fast_compile"]
    assert out["age"] != 1000  # PyTensor really fixed this one at its own import
    warned = [w for w in out["warnings"] if "age_thresh_use" in w]  # type: ignore[union-attr]
    assert len(warned) == 1 and "Import modecfg before pytensor" in warned[0]
    assert not [w for w in out["warnings"] if "optimizer" in w]  # type: ignore[union-attr]


def test_optimizer_assigned_after_import_is_what_pytensor_config_reads_and_uses() -> None:
    """The README's promise: later assignments are copied into pytensor.config."""
    out = run_json(
        """
        import json
        import modecfg, pytensor
        modecfg.config.optimizer = "None"
        modecfg.config.optimizer_excluding = "fusion"
        print(json.dumps({
            "optimizer": pytensor.config.optimizer,
            "excluding": pytensor.config.optimizer_excluding,
            "includes": sorted(pytensor.compile.mode.get_default_mode().provided_optimizer.include),
            "excluded": sorted(pytensor.compile.mode.get_default_mode().provided_optimizer.exclude),
        }))
        """,
        {},
    )
    assert (out["optimizer"], out["excluding"]) == ("None", "fusion")
    assert (out["includes"], out["excluded"]) == ([], ["fusion"])


def test_a_broken_configuration_does_not_break_import_but_the_first_read() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import modecfg\nprint('imported')\nmodecfg.config.floatX"],
        env={**os.environ, "PYTHONPATH": pythonpath(), "MODECFGRC": "", "THEANO_FLAGS": "floatX=float33"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == "imported"
    assert proc.returncode == 1
    assert "FlagValueError: floatX='float33' (from THEANO_FLAGS)" in proc.stderr


def test_with_the_view_off_modecfg_writes_nothing_into_pytensor() -> None:
    """One route: values reach PyTensor through the view (or the hand-off at its import), never
    by a copy. With the view off (``uninstall``; a patch that does not verify), PyTensor's
    parameters keep their own values, immutable or not, and modecfg's modes, built from
    modecfg's values, use the assignments."""
    out = run_json(
        """
        import json
        import modecfg, pytensor
        from modecfg._pytensor import patches
        patches.uninstall()  # the view too: pytensor.config is PyTensor's own again
        params = pytensor.config._config_var_dict
        before = (params["optimizer"].mutable, params["optimizer"].val, params["floatX"].val)
        modecfg.config.optimizer = "fast_compile"
        modecfg.config.floatX = "float32"
        print(json.dumps({
            "before": before,
            "after": [params["optimizer"].val, params["floatX"].val, pytensor.config.floatX],
            "modecfg": [modecfg.config.optimizer, modecfg.config.floatX],
            "mode": list(modecfg.get_mode("Mode").provided_optimizer.include),
        }))
        """
    )
    assert out["before"] == [False, "o4", "float64"]
    assert out["after"] == ["o4", "float64", "float64"]
    assert out["modecfg"] == ["fast_compile", "float32"] and out["mode"] == ["fast_compile"], out["mode"]


def test_a_per_process_flag_assigned_after_import_reaches_pytensor_at_its_first_read(tmp_path: Path) -> None:
    """compiledir is handed over at PyTensor's first read of it, not copied when assigned: PyTensor
    reads the value in effect then, and refuses a change after."""
    first, second = tmp_path / "one", tmp_path / "two"
    out = run_json(
        f"""
        import json
        import modecfg, pytensor
        param = pytensor.config._config_var_dict["compiledir"]
        param = getattr(param, "original", param)
        unread = not hasattr(param, "val")
        modecfg.config.compiledir = {str(first)!r}
        still_unread = not hasattr(param, "val")
        modecfg.config.compiledir = {str(second)!r}
        read = str(pytensor.config.compiledir)
        try:
            modecfg.config.compiledir = {str(first)!r}
            error = ""
        except modecfg.ReadOnlyFlagError as exc:
            error = str(exc)
        print(json.dumps({{"unread": [unread, still_unread], "read": read, "param": str(param.val),
                           "error": error}}))
        """,
        {},
    )
    assert out["unread"] == [True, True]  # the assignment alone wrote nothing into PyTensor
    assert out["read"] == out["param"] == str(second)
    assert "compiledir cannot change" in out["error"]


# A value each per-process flag accepts, other than its default (an assignment that changes it).
_FIXED_VALUES = {
    "cxx": "",
    "cmodule.preload_cache": "True",
    "cmodule.age_thresh_use": "86400",
    "compile.wait": "7",
    "compile.timeout": "99",
    "blas.ldflags": "-lm",
    "compiledir_format": "other_%(platform)s",
    "base_compiledir": "{tmp}/base",
    "compiledir": "{tmp}/dir",
    "tensor.cmp_sloppy": "1",
    "warn.ignore_bug_before": "0.10",
    "scan.allow_output_prealloc": "False",
}


@pytest.mark.parametrize("when", ["right after import", "after a compile"])
def test_assigning_any_per_process_flag_through_pytensor_config_never_hangs(
    tmp_path: Path, when: str
) -> None:
    """An assignment on pytensor.config reached the mirror, which wrote it back through the
    view, which assigned again and waited for the mirror's lock: forever (issue 31, item 4)."""
    from modecfg.configuration.flags import FLAGS

    fixed = sorted(n for n, s in FLAGS.items() if s.fixed and s.pytensor)
    assert set(fixed) == set(_FIXED_VALUES), "a new per-process flag: give it a value here"
    values = {n: v.format(tmp=tmp_path) for n, v in _FIXED_VALUES.items()}
    out = run_json(
        f"""
        import json, modecfg, pytensor
        from modecfg.errors import ReadOnlyFlagError
        if {when == "after a compile"!r}:
            import pytensor.tensor as pt
            x = pt.vector("x")
            pytensor.function([x], x * 2)
        seen = {{}}
        for name, value in {values!r}.items():
            try:
                setattr(pytensor.config, name.replace(".", "__"), value)
                seen[name] = ["set", str(modecfg.config[name])]
            except ReadOnlyFlagError as exc:
                seen[name] = ["read-only", str(exc)]
        print(json.dumps(seen))
        """,
        timeout=120,  # the hang was forever: a timeout fails the test
    )
    del out["stderr"]
    assert set(out) == set(values)
    for name, (what, detail) in out.items():
        if what == "set":
            assert detail == values[name] or name == "cxx", (name, detail)
        else:
            assert name in detail and "cannot change" in detail
    if when == "right after import":
        assert out["compiledir"] == ["set", values["compiledir"]]


ORDERS = {
    "modecfg first": "import modecfg\nimport pytensor\n",
    "pytensor first": "import pytensor\nimport modecfg\n",
}


@pytest.mark.parametrize("imports", list(ORDERS.values()), ids=list(ORDERS))
def test_a_configuration_mistake_in_a_script_is_one_message(tmp_path: Path, imports: str) -> None:
    """51 lines before: two tracebacks through modecfg's internals, then "could not integrate"
    (issue 31, item 10). Now the error, its source and the did-you-mean, once; PyTensor still
    imports, and a read of modecfg's configuration raises the same error from the user's line.
    Whichever is imported first: with PyTensor first (PyMC, a notebook) nothing was said at all,
    and ``pytensor.config`` answered PyTensor's own values until a compile raised."""
    script = tmp_path / "train.py"
    script.write_text(imports + "print(pytensor.config.floatX)\nmodecfg.config.floatX\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env.update(MODECFGRC="", PYTHONPATH=pythonpath(), THEANO_FLAGS="floatx=float32")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout == "float64\n"  # PyTensor imported, with its own configuration
    lines = done.stderr.splitlines()
    said = [line for line in lines if "floatx" in line]
    assert said[0].startswith("modecfg: unknown flag 'floatx' (from THEANO_FLAGS); did you mean floatX?")
    assert said[1:] == [
        "modecfg.errors.UnknownFlagError: unknown flag 'floatx' (from THEANO_FLAGS); did you mean floatX?"
    ]
    assert "could not integrate" not in done.stderr and "left off" not in done.stderr
    trampoline = os.path.join("mutmut", "mutation", "trampoline.py")  # `make mutate`'s call switch
    frames = [line for line in lines if line.lstrip().startswith('File "') and trampoline not in line]
    assert frames[0].lstrip().startswith(f'File "{script}", line 4')
    assert len(frames) <= 3  # the user's line, then the read that raises: not the parser's insides


@pytest.mark.parametrize("imports", list(ORDERS.values()), ids=list(ORDERS))
def test_a_bad_value_in_an_rc_file_is_one_message_naming_its_line(tmp_path: Path, imports: str) -> None:
    """A value the flag refuses, in an rc file: said once at the import in either order, with the
    file and line, the valid choices and the did-you-mean; PyTensor keeps its own value."""
    rc = tmp_path / ".theanorc"
    rc.write_text("[global]\ndevice = cpu\nfloatX = float33\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env.update(MODECFGRC="", PYTHONPATH=pythonpath(), THEANORC=str(rc))
    code = imports + "print(pytensor.config.floatX)\n"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "float64\n"
    said = [line for line in done.stderr.splitlines() if "float33" in line]
    assert said == [
        f"modecfg: floatX='float33' (from {rc}:3): not a valid choice; valid choices: float64, float32, "
        "float16; did you mean 'float32'?; PyTensor runs with its own configuration until that is fixed "
        "(reading modecfg.config raises it)"
    ]


def test_import_order_does_not_matter() -> None:
    """PyTensor imported first (PyMC, a notebook), flags set and change_flags objects made, then
    modecfg imported, inside a change_flags block: nothing is lost (issue 31, item 2)."""
    out = run_json(
        """
        import json, threading
        import pytensor
        pytensor.config.floatX = "float32"
        kept = pytensor.config.change_flags(exception_verbosity="high")

        @pytensor.config.change_flags(traceback__limit=3)
        def decorated():
            return pytensor.config.traceback__limit

        with pytensor.config.change_flags(cast_policy="numpy+floatX"):
            import modecfg
            c = modecfg.config
            inside = [pytensor.config.cast_policy, c.cast_policy]
        origin = c.origin("floatX")
        pc = pytensor.config
        seen = {"floatX": [pc.floatX, c.floatX, origin.layer, origin.source], "inside": inside,
                "after": [pc.cast_policy, c.cast_policy, c.origin("cast_policy").layer]}
        with kept:
            verbosity = c.origin("exception_verbosity").layer
            seen["kept"] = [pc.exception_verbosity, c.exception_verbosity, verbosity]
            other = []
            t = threading.Thread(target=lambda: other.append(c.exception_verbosity))
            t.start(); t.join()
            seen["other thread"] = other[0]
        seen["kept after"] = c.exception_verbosity
        seen["decorated"] = [decorated(), c.traceback.limit]
        import pytensor.tensor as pt
        seen["dtype"] = pt.vector().dtype
        from modecfg._wiring import unwire, wire
        unwire()
        param = lambda: type(pytensor.config._config_var_dict["floatX"]).__name__
        seen["unwired"] = [pytensor.config.floatX, param()]
        wire()
        seen["rewired"] = [pytensor.config.floatX, c.floatX, param()]
        print(json.dumps(seen))
        """
    )
    assert out["floatX"] == [
        "float32",
        "float32",
        "assignment",
        "pytensor.config, before modecfg was imported",
    ]
    assert out["inside"] == ["numpy+floatX", "numpy+floatX"]  # the open block stays in force
    assert out["after"] == ["custom", "custom", "default"]  # and ends with its block
    assert out["kept"] == ["high", "high", "override"] and out["other thread"] == "low"
    assert out["kept after"] == "low"
    assert out["decorated"] == [3, 8]
    assert out["dtype"] == "float32"
    assert out["unwired"] == ["float32", "EnumStr"]
    assert out["rewired"] == ["float32", "float32", "FlagParam"]
    assert "Traceback" not in out["stderr"]


@pytest.mark.parametrize("with_modecfg", [False, True])
def test_importing_modecfg_keeps_pytensors_default_mode_and_linker(with_modecfg: bool) -> None:
    """PyMC picks its sampler and backend from the default mode's linker class (nutpie where the
    linker is numba): with modecfg, config.mode read FAST_RUN and linker=auto meant cvm
    (issue 31, item 12). The defaults are PyTensor's now; modecfg's choice is linker=per_graph."""
    out = run_json(
        f"""
        import json
        if {with_modecfg!r}:
            import modecfg
        import pytensor
        from pytensor.compile.mode import get_default_mode, get_mode
        print(json.dumps({{
            "mode": str(pytensor.config.mode), "linker": str(pytensor.config.linker),
            "default linker": type(get_default_mode().linker).__name__,
            "FAST_RUN linker": type(get_mode("FAST_RUN").linker).__name__,
        }}))
        """
    )
    del out["stderr"]
    assert out == {"mode": "Mode", "linker": "auto", "default linker": "NumbaLinker",
                   "FAST_RUN linker": "NumbaLinker"}  # fmt: skip


def test_linker_per_graph_is_modecfgs_choice_opted_into() -> None:
    out = run_json(
        """
        import json, modecfg, pytensor
        from pytensor.compile.mode import get_default_mode
        from modecfg._pytensor.kinds import linker_name
        modecfg.config.linker = "per_graph"
        print(json.dumps({"linker": linker_name(get_default_mode().linker),
                          "pytensor sees": str(pytensor.config.linker)}))
        """
    )
    # PyTensor's own code sees "auto" (modecfg's linker table answers Mode(linker="per_graph"),
    # but PyTensor's get_mode("FAST_RUN") and its runtime-mode cache key on the name without it)
    assert out["linker"] == "per_graph (chosen per graph)" and out["pytensor sees"] == "auto"


def test_pytensor_first_imported_inside_an_override_keeps_the_override() -> None:
    """A dask worker whose first task runs under the driver's snapshot imports PyTensor inside
    that override: PyTensor is handed the values below it, and nothing of PyTensor's is adopted
    over the override (it was: floatX from the worker's THEANO_FLAGS, 'before modecfg was
    imported')."""
    out = run_json(
        """
        import json, modecfg
        with modecfg.config.override(floatX="float32"):
            import pytensor, pytensor.tensor as pt
            inside = [modecfg.config.floatX, str(modecfg.config.origin("floatX")), pt.vector().dtype]
        after = [modecfg.config.floatX, str(modecfg.config.origin("floatX")), pytensor.config.floatX]
        print(json.dumps({"inside": inside, "after": after}))
        """,
        env={"THEANO_FLAGS": "floatX=float16"},
    )
    assert out["inside"] == ["float32", "override at <string>:3", "float32"]
    assert out["after"] == ["float16", "THEANO_FLAGS", "float16"]
