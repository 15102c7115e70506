"""Reading the configuration imports only what it needs: each module costs start-up time
(bench/config_bench.py measures it against ``import pytensor``; no timing is asserted here)."""

from __future__ import annotations

import sys

import pytest

from tests.fresh import run_json

# What a read of the configuration must not import (a module an interpreter imports before
# modecfg, as some site set-ups do, is not held against it).
NOT_AT_START_UP = [
    "pytensor",
    "numpy",
    "pydantic",
    "logging",
    "threading",  # the locks come from _thread
    "math",
    "linecache",
    "modecfg.configuration.explain",
    "modecfg.configuration.snapshot",
    "modecfg.configuration.migrate",
    "modecfg.modes",
    "modecfg.linkers.auto",  # (the feature's contacts are registered at the import: its rule is not)
    "modecfg._pytensor.patches",
    "modecfg.configuration.units",  # the checks of three flags, imported when one is set
    "modecfg.configuration.partition",
    "modecfg._pytensor.declared",  # PyTensor's flag names, read when a setting names one modecfg lacks
    "modecfg.configuration.schema",  # the values' checks, loaded at the first value to check
    "modecfg.configuration.flagstring",  # the flag strings' parser, loaded at the first one set
    "modecfg.configuration.compat",  # what a name that is no flag's own is, at the first such
    "modecfg._source",  # the user's line, at the first assignment, compile error or gradient
    "modecfg._warn",  # warnings, at the first to say
    "modecfg.configuration.rcformats",  # the INI and TOML readers, at the first rc file with text
]
# Loaded at those first uses, and not before, where PyTensor is imported first (issue 61's row)
AT_FIRST_USE = ["modecfg.configuration.compat", "modecfg._source", "modecfg._warn"]


@pytest.fixture(scope="module")
def started() -> dict[str, object]:
    # Under `make mutate` every modecfg module imports mutmut's switch first: an import of the
    # tool's, made before modecfg's own here. pathlib is imported first too: flags of type Path
    # need it, and whether the interpreter's start imported it already depends on the environment
    # (a venv with an editable install does; a bare interpreter pays ~8 ms for it, with math and
    # urllib.parse) -- the rest of the list holds either way.
    tool = "mutmut.mutation.trampoline" if "mutmut" in sys.modules else "json"
    return run_json(
        f"""
        import json, pathlib, re, sys, {tool}
        """
        + """
        before = set(sys.modules)
        patterns = set(re._cache)  # re's own cache of compiled patterns
        import modecfg
        modecfg.config.floatX
        new = sorted(set(sys.modules) - before)
        compiled = [str(key) for key in set(re._cache) - patterns]
        print(json.dumps({"new": new, "compiled": compiled}))
        """
    )


@pytest.mark.parametrize("module", NOT_AT_START_UP)
def test_reading_the_configuration_does_not_import(started: dict[str, object], module: str) -> None:
    new = started["new"]
    assert isinstance(new, list)
    assert "modecfg.configuration.store" in new  # the check sees modecfg's own imports
    assert module not in new


def test_reading_the_configuration_compiles_no_pattern(started: dict[str, object]) -> None:
    assert started["compiled"] == []  # compiled when first used, not at import


def test_the_names_loaded_on_first_use_are_the_defining_modules_objects() -> None:
    got = run_json(
        """
        import json, sys
        import modecfg
        from modecfg.configuration.explain import Explanation
        from modecfg.configuration.migrate import Migration, migrate_file, migrate_flags
        from modecfg.configuration.snapshot import Snapshot
        from modecfg.modes import register_mode
        import modecfg.linkers, modecfg.modes
        config_pkg = sys.modules["modecfg.configuration"]
        print(json.dumps({
            "same": [
                modecfg.Explanation is Explanation, modecfg.Snapshot is Snapshot,
                modecfg.Migration is Migration, modecfg.migrate_file is migrate_file,
                modecfg.migrate_flags is migrate_flags, modecfg.register_mode is register_mode,
                modecfg.linkers is sys.modules["modecfg.linkers"],
                modecfg.modes is sys.modules["modecfg.modes"],
                config_pkg.Explanation is Explanation, config_pkg.Snapshot is Snapshot,
                type(modecfg.config.explain("floatX")) is Explanation,
                type(modecfg.config.snapshot()) is Snapshot,
            ],
            "listed": all(n in dir(modecfg) for n in ("Snapshot", "linkers", "migrate_flags")),
        }))
        """
    )
    assert got["same"] == [True] * 12
    assert got["listed"]


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import importlib

    config_pkg = importlib.import_module("modecfg.configuration")
    with pytest.raises(AttributeError, match="no attribute 'Snapshots'"):
        config_pkg.Snapshots  # noqa: B018


def test_a_fast_run_compile_loads_none_of_the_features_it_does_not_use() -> None:
    """Issue 61: compiling one FAST_RUN function loaded CompareMode, dumps, cache export and the
    JAX path. A fresh process that compiles (and calls) FAST_RUN functions, one with updates,
    loads none of them."""
    from tests.fresh import run_json

    out = run_json(
        """
        import json, sys
        import numpy as np, modecfg, pytensor, pytensor.tensor as pt
        x = pt.vector("x")
        pytensor.function([x], x * 2, mode="FAST_RUN")(np.ones(2))
        u = pytensor.shared(np.zeros(2))
        pytensor.function([], [], updates={u: u + 1}, mode="FAST_RUN")()
        print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("modecfg"))}))
        """
    )
    unused = ("modecfg.compare.mode", "modecfg.compare.judging", "modecfg.compare.search",
              "modecfg.compare.repro", "modecfg.nanguard.dump", "modecfg.nanguard.dump_reading",
              "modecfg.cache.travel", "modecfg.profiles.html", "modecfg.device.jaxlink",
              "modecfg.linkers.auto")  # fmt: skip
    assert [m for m in out["loaded"] if m in unused] == []
    assert "modecfg._pytensor.hostwrites" in out["loaded"]  # (what it updates is recorded all the same)


def test_importing_modecfg_after_pytensor_loads_no_module_of_pytensor_and_no_feature() -> None:
    """Issue 61: the check at PyTensor's import loaded PyTensor's 2,287-line DebugMode (a probe
    that cannot fail), and the compile hook's helpers came with the patch list. Both now wait:
    the PyTensor modules loaded are PyTensor's own import's, and the helpers load at the first
    compile, grad or error that uses them."""
    out = run_json(
        """
        import json, sys
        import pytensor
        before = set(sys.modules)
        import modecfg
        new = sorted(set(sys.modules) - before)
        print(json.dumps({"new": new}))
        """
    )
    new = out["new"]
    assert isinstance(new, list)
    assert "modecfg._pytensor.patches" in new  # PyTensor was wired all the same
    assert [m for m in new if m.startswith("pytensor")] == []
    # (the caches: their layout is checked at the first compile)
    later = ("modecfg._pytensor.debugmode", "modecfg._pytensor.blas", "modecfg._pytensor.locate",
             "modecfg._pytensor.gradients", "modecfg._pytensor.hostwrites", "modecfg._pytensor.wrapped",
             "modecfg._pytensor.modebuild", "modecfg._pytensor.kinds",
             "modecfg._pytensor.caches", "modecfg.profiles.rows", "modecfg.profiles.session",
             "modecfg.cache.entries", "modecfg.cache.trim", "modecfg.cache.holders", "modecfg.cache.status",
             "modecfg.linkers.auto", "modecfg._pytensor.declared", "modecfg.configuration.units",
             "modecfg.configuration.partition", "modecfg.testvalues.contacts",
             "modecfg.profiles", "modecfg.profiles.contacts")  # fmt: skip
    assert [m for m in new if m in later] == []


@pytest.mark.parametrize("how", ["assigned", "overridden", "THEANO_FLAGS", "before PyTensor"])
def test_the_test_values_contacts_load_when_the_flag_is_first_turned_on(how: str) -> None:
    """The test values' patches are loaded and registered when compute_test_value is first turned
    on, however it is, and then work as they did when they were registered at the import."""
    turn_on = {
        "assigned": "modecfg.config.compute_test_value = 'raise'",
        "overridden": "stack.enter_context(modecfg.config.override(compute_test_value='raise'))",
        "THEANO_FLAGS": "",
        "before PyTensor": "",
    }[how]
    first, second = ("modecfg", "pytensor") if how == "before PyTensor" else ("pytensor", "modecfg")
    out = run_json(
        f"""
        import contextlib, json, sys
        import numpy as np
        import {first}, {second}
        import pytensor.tensor as pt
        from modecfg._pytensor import patches
        stack = contextlib.ExitStack()
        loaded = "modecfg.testvalues.contacts" in sys.modules
        listed = [p.name for p in patches.PATCHES]
        {turn_on}
        x = pt.vector("x")
        x.tag.test_value = np.ones(3)
        y = (x * 2).sum()
        rows = {{r.patch.name: r.state for r in patches.status()}}
        print(json.dumps({{"loaded": loaded, "listed": listed, "value": float(y.tag.test_value),
                           "on": [rows["test values"], rows["scan test values"]]}}))
        """,
        {"THEANO_FLAGS": "compute_test_value=raise"} if how in ("THEANO_FLAGS", "before PyTensor") else {},
    )
    if how in ("assigned", "overridden"):  # not loaded, not listed, until the flag was turned on
        assert out["loaded"] is False and "test values" not in out["listed"]
    assert out["value"] == 6.0 and out["on"] == ["on", "on"]


def test_the_whole_patch_list_lists_the_features_that_load_later() -> None:
    out = run_json(
        """
        import json, sys
        import pytensor, modecfg
        from modecfg._pytensor import patches
        before = [p.name for p in patches.PATCHES]
        rows = [r.patch.name for r in patches.status()]
        print(json.dumps({"before": before, "rows": rows, "every": [p.name for p in patches.every()],
                          "loaded": "modecfg.testvalues.contacts" in sys.modules}))
        """
    )
    assert "test values" not in out["before"] and out["loaded"] is True
    later = ["profile printer", "test values", "scan test values"]
    assert out["rows"] == out["every"] == [*out["before"], *later]


def test_the_gc_pause_of_the_import_is_lifted_and_a_disabled_collector_stays_disabled() -> None:
    """modecfg's import pauses the cyclic collector (the full collection PyTensor's import left
    due is then run where plain PyTensor runs it): enabled after, unless the program had it off."""
    out = run_json(
        """
        import gc, json
        gc.disable()
        import modecfg
        off = gc.isenabled()
        print(json.dumps({"off_after": off}))
        """
    )
    assert out["off_after"] is False
    out = run_json(
        """
        import gc, json, sys
        seen = []
        class Spy:  # notes whether the collector runs while one of modecfg's modules is found
            def find_spec(self, name, path=None, target=None):
                if name == "modecfg.configuration.store":
                    seen.append(gc.isenabled())
        sys.meta_path.insert(0, Spy())
        import pytensor, modecfg
        print(json.dumps({"during": seen, "on_after": gc.isenabled()}))
        """
    )
    assert (out["during"], out["on_after"]) == ([False], True)


def test_after_pytensor_the_helpers_load_at_their_first_use() -> None:
    """``import pytensor, modecfg`` with a flag set in the environment under its own name loads
    none of the name lookup, the user's-line rule or the warnings; an assignment loads the
    user's-line rule (its origin), an obsolete flag's name the lookup and the warnings."""
    out = run_json(
        """
        import json, sys, warnings
        import pytensor, modecfg
        wanted = ("modecfg.configuration.compat", "modecfg._source", "modecfg._warn")
        at_import = [m for m in wanted if m in sys.modules]
        modecfg.config["traceback__limit"] = 5  # a flag's own name (either spelling): no lookup
        after_own = [m for m in wanted if m in sys.modules]
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            modecfg.config["nvcc.fastmath"] = True  # obsolete: looked up, said, and ignored
        after_old = [m for m in wanted if m in sys.modules]
        print(json.dumps({"at_import": at_import, "after_own": after_own, "after_old": after_old,
                          "said": [type(w.message).__name__ for w in said],
                          "limit": pytensor.config.traceback__limit,
                          "where": modecfg.config.origin("traceback.limit").source,
                          "verbosity": pytensor.config.exception_verbosity}))
        """,
        env={"MODECFG_FLAGS": "exception_verbosity=high"},
    )
    assert out["at_import"] == []
    assert out["after_own"] == ["modecfg._source"]
    assert out["after_old"] == list(AT_FIRST_USE)
    assert out["said"] == ["ObsoleteFlagWarning"]
    assert out["limit"] == 5 and out["where"] == "<string>" and out["verbosity"] == "high"
