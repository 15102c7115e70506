"""The patch list: every point verified and on, complete, undoable, and harmless when PyTensor differs."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from modecfg._pytensor import patches
from modecfg._pytensor import state as patch_state
from tests.conftest import COMPILEDIR
from tests.fresh import ROOT, run_json

pytensor = pytest.importorskip("pytensor")


def _run(code: str, **env: str) -> dict[str, Any]:
    """A fresh interpreter compiling into the tests' cache (modecfg and PyTensor alike)."""
    flags = f"base_compiledir={COMPILEDIR}"
    return run_json(code, {"PYTENSOR_FLAGS": flags, "MODECFG_FLAGS": flags, **env})


@pytest.fixture
def on_demand_put_back() -> Any:
    """What a test turns on of the on-demand patches goes off again after it (they are applied
    when a user first touches their flag: the next tests must find them as they were)."""
    before = {p.name for p in patches.PATCHES if p.on_demand and (p.name in patch_state.applied)}
    yield
    if {p.name for p in patches.PATCHES if p.on_demand and (p.name in patch_state.applied)} != before:
        patches.uninstall()
        patches._demanded.intersection_update(before)  # (install() puts back what was demanded)
        patches.install()


@pytest.mark.usefixtures("on_demand_put_back")
def test_every_integration_point_verifies_against_the_installed_pytensor() -> None:
    import modecfg  # noqa: F401  (wired: PyTensor is loaded, so the points are in)

    on_demand = [patch for patch in patches.every() if patch.on_demand]
    device = {"device inputs", "shared values (zero)"}
    assert {p.name for p in on_demand} == {*device, "test values", "scan test values", "profile printer"}
    for patch in on_demand:
        assert patches.enable(patch)
    rows = {row.patch.name: row for row in patches.status()}
    assert set(rows) == {p.name for p in patches.every()}
    assert {name: row.state for name, row in rows.items()} == dict.fromkeys(rows, "on")
    assert patches.version_problem() == ""


@pytest.mark.usefixtures("on_demand_put_back")
@pytest.mark.parametrize("patch", patches.every(), ids=lambda p: p.name)
def test_no_module_of_pytensor_still_holds_a_replaced_object(patch: patches.Patch) -> None:
    """The modules listed as binding a patched object are all there are: nothing calls PyTensor's
    original behind our back."""
    import importlib

    importlib.import_module("pytensor.compile.debug.debugmode")  # loaded lazily by PyTensor
    if patch.on_demand:
        patches.enable(patch)
    assert patch.name in patch_state.applied
    original = patches.original(patch.name)
    if patch.undo:  # changed in place: every holder holds the one object, as it should
        assert type(original._config_var_dict["floatX"]).__name__ == "FlagParam"
        return
    attr = patch.attr.rsplit(".", 1)[-1]
    still = [
        name
        for name, module in list(sys.modules.items())
        if (name == "pytensor" or name.startswith("pytensor."))
        and isinstance(module, types.ModuleType)
        and getattr(module, attr, None) is original
    ]
    assert still == []


@pytest.mark.slow
def test_uninstall_restores_every_original_object_and_install_puts_them_back() -> None:
    """Every attribute of every PyTensor module, and the patched classes, as they were."""
    out = _run(
        """
        import json, sys, types
        import pytensor, pytensor.compile.debug.debugmode
        from pytensor.compile.maker import FunctionMaker
        from pytensor.configparser import PyTensorConfigParser
        from pytensor.graph.op import Op

        def snapshot():
            seen = {}
            for name, module in list(sys.modules.items()):
                if name.split(".")[0] == "pytensor" and isinstance(module, types.ModuleType):
                    for attr, value in list(vars(module).items()):
                        seen[f"{name}.{attr}"] = id(value)
            for cls in (FunctionMaker, Op, PyTensorConfigParser):
                for attr, value in vars(cls).items():
                    seen[f"{cls.__name__}.{attr}"] = id(value)
            for attr, value in vars(pytensor.config).items():  # its table of parameters: the same dict
                seen[f"config.{attr}"] = id(value)
            for name, param in pytensor.config._config_var_dict.items():
                seen[f"config._config_var_dict[{name}]"] = id(param)
            return seen

        def modes():
            return sorted(dict.keys(pytensor.compile.mode.predefined_modes))

        before, before_modes = snapshot(), modes()
        import modecfg
        from modecfg._pytensor import patches
        for patch in patches.every():  # the on-demand ones too: the whole list
            if patch.on_demand:
                patches.enable(patch)
        installed = snapshot()
        changed = sorted(k for k in before if installed.get(k) != before[k])
        patches.uninstall()
        after = snapshot()
        restored = [k for k in before if after.get(k) != before[k]]
        patches.install()
        again = sorted(k for k in before if snapshot().get(k) != before[k])
        print(json.dumps({"changed": changed, "restored": restored, "again": again,
                          "modes": modes() == before_modes, "state": [r.state for r in patches.status()]}))
        """
    )
    # every patch target and every holder changed while installed...
    assert "pytensor.link.utils.raise_with_op" in out["changed"]
    assert "pytensor.compile.debug.debugmode.raise_with_op" in out["changed"]
    assert "pytensor.scan.scan" in out["changed"] and "pytensor.scan" in out["changed"]
    assert "FunctionMaker.prepare_fgraph" in out["changed"] and "Op.__call__" in out["changed"]
    assert "pytensor.compile.predefined_modes" in out["changed"]
    # ... and nothing else of PyTensor's; all of it is back after uninstall()
    assert out["restored"] == []
    assert out["modes"] is True
    every = patches.every()
    targets = {f"{p.module}.{p.attr.rsplit('.', 1)[-1]}" for p in every}
    bound = {f"{h}.{p.attr.rsplit('.', 1)[-1]}" for p in every for h in p.bound_in}
    classes = {p.attr for p in every if "." in p.attr}
    # what a patch says it also changes, by owner and name: PyTensorConfigParser.add,
    # PyTensorConfigParser.<flag> (each flag's entry), config._config_var_dict (with its entries)
    also = {".".join(a.split()[0].split(".")[-2:]) for p in every for a in p.also}

    def listed(key: str) -> bool:
        a_flag = key.startswith("PyTensorConfigParser.") and "PyTensorConfigParser.<flag>" in also
        return key in targets | bound | classes | also or key.split("[")[0] in also or a_flag

    assert [key for key in out["changed"] if not listed(key)] == []
    assert "PyTensorConfigParser.add" in out["changed"] and "config._config_var_dict" in out["changed"]
    # install() again: every point is back, the on-demand ones put on before (by enable()) too: the
    # need that put them on (a JAX function, a flag) outlives the uninstall
    assert out["again"] == out["changed"] and "Op.__call__" in out["again"]
    assert out["state"] == ["on"] * len(every)


def test_install_after_uninstall_puts_back_only_the_on_demand_patches_put_on_before() -> None:
    out = _run(
        """
        import json
        import modecfg, pytensor
        from modecfg._pytensor import patches
        from modecfg._pytensor.state import applied
        on_demand = [p for p in patches.every() if p.on_demand]
        first = next(p for p in on_demand if p.name == "shared values (zero)")
        rest = [p for p in on_demand if p is not first]
        assert patches.enable(first)
        patches.uninstall()
        off = [p.name in applied for p in on_demand]
        patches.install()
        print(json.dumps({"off": off, "first": first.name in applied,
                          "rest": [p.name in applied for p in rest]}))
        """
    )
    assert not any(out["off"])
    assert out["first"] is True and out["rest"] == [False] * len(out["rest"])


def test_a_missing_or_changed_target_leaves_import_pytensor_working_and_warns_once() -> None:
    out = _run(
        """
        import json, warnings
        warnings.simplefilter("always")
        import modecfg
        from modecfg._pytensor import patches
        # Simulate a PyTensor release that moved one internal and changed another's signature.
        patches.PATCHES = [
            *[p for p in patches.PATCHES if p.name != "error locations"],
            patches.Patch("moved", "pytensor.link.utils", "no_such_function", "raise_with_op", "gone"),
            *[p._replace(params=("fgraph", "node", "something_else"))
              for p in patches.PATCHES if p.name == "error locations"],
        ]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import pytensor
            import pytensor.tensor as pt
            import pytensor.link.utils as utils
            x = pt.vector("x")
            value = pytensor.function([x], x * 2)([1.0]).tolist()
            guarded = type(pytensor.function([x], x * 2, mode="NanGuardMode").maker.linker).__name__
        ours = [w for w in caught if issubclass(w.category, modecfg.PyTensorIntegrationWarning)]
        states = {r.patch.name: [r.state, r.reason] for r in patches.status()}
        print(json.dumps({"value": value, "guarded": guarded, "n": len(ours), "text": str(ours[0].message),
                          "states": states, "untouched": utils.raise_with_op is patches._originals.get(
                              "error locations", utils.raise_with_op)}))
        """
    )
    assert out["value"] == [2.0]
    assert out["guarded"] == "GuardLinker"  # the verified points are on
    assert out["n"] == 1
    assert "no_such_function does not exist" in out["text"]
    assert "raise_with_op takes (fgraph, node, thunk, exc_info, storage_map)" in out["text"]
    assert out["states"]["moved"][0] == "off" and out["states"]["error locations"][0] == "off"
    (table,) = [p for p in patches.PATCHES if p.name == "mode table"]
    assert out["states"]["mode table"] == ["on", table.why]
    assert out["untouched"] is True


def test_a_pytensor_outside_the_tested_range_is_named_and_verified_points_still_go_in() -> None:
    out = _run(
        """
        import json, warnings
        import modecfg
        from modecfg._pytensor import patches
        from modecfg._pytensor import state as patch_state
        patches.TESTED = ((9, 0), (9, 1))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import pytensor
        ours = [str(w.message) for w in caught if issubclass(w.category, modecfg.PyTensorIntegrationWarning)]
        print(json.dumps({"warnings": ours, "on": ("mode table" in patch_state.applied)}))
        """
    )
    assert len(out["warnings"]) == 1
    assert f"PyTensor {pytensor.__version__} is outside the range" in out["warnings"][0]
    assert ">= 9.0, < 9.1" in out["warnings"][0]
    assert out["on"] is True


def test_a_failing_integration_never_breaks_import_pytensor() -> None:
    out = _run(
        """
        import json, warnings
        import modecfg
        from modecfg._pytensor import patches
        def broken(*args, **kwargs):
            raise RuntimeError("simulated failure")
        patches.install = broken
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import pytensor, pytensor.tensor as pt
            x = pt.vector("x")
            value = pytensor.function([x], x + 1)([1.0]).tolist()
        print(json.dumps({"value": value, "warned": [str(w.message) for w in caught
                          if issubclass(w.category, modecfg.PyTensorIntegrationWarning)]}))
        """
    )
    assert out["value"] == [2.0]
    assert len(out["warned"]) == 1 and "simulated failure" in out["warned"][0]


def test_importing_the_config_layer_alone_imports_no_pytensor_and_installs_nothing() -> None:
    out = _run(
        """
        import json, sys, types
        # modecfg's package without its __init__ (which wires the layers): the config layer alone
        package = types.ModuleType("modecfg")
        package.__path__ = [__import__("os").environ["MODECFG_PACKAGE"]]
        sys.modules["modecfg"] = package
        hooks_before = list(sys.meta_path)
        from modecfg.configuration import config
        floatX = config.floatX
        config.floatX = "float32"
        with config.override(traceback__limit=3):
            limit = config.traceback.limit
        print(json.dumps({
            "floatX": [floatX, config.floatX], "limit": limit,
            "pytensor": sorted(m for m in sys.modules if m.split(".")[0] == "pytensor"),
            "above": sorted(m for m in sys.modules if m.startswith("modecfg.")
                            and not m.startswith(("modecfg.configuration", "modecfg._registry",
                                                  "modecfg.errors", "modecfg._warn", "modecfg._source",
                                                  "modecfg._files", "modecfg._locks", "modecfg._lazy",
                                                  "modecfg._record"))),
            "meta_path": sys.meta_path == hooks_before,
        }))
        """,
        MODECFG_PACKAGE=str(ROOT / "modecfg"),
    )
    assert out["floatX"] == ["float64", "float32"] and out["limit"] == 3
    assert out["pytensor"] == []
    assert out["above"] == []
    assert out["meta_path"] is True


def test_pytensor_imported_before_modecfg_gets_the_integration_at_modecfg_import() -> None:
    out = _run(
        """
        import json
        import pytensor, pytensor.tensor as pt
        import modecfg
        from modecfg._pytensor import patches
        x = pt.vector("x")
        fn = pytensor.function([x], x * 2, mode="NanGuardMode")
        print(json.dumps({"on": [r.patch.name for r in patches.status() if r.state == "on"],
                          "type": type(fn.maker.linker).__name__}))
        """
    )
    assert out["type"] == "GuardLinker"
    assert len(out["on"]) == sum(not p.on_demand for p in patches.every())


def test_pytensors_blas_warning_gives_way_to_one_of_modecfgs() -> None:
    out = _run(
        """
        import json, warnings
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import modecfg, numpy as np, pytensor, pytensor.tensor as pt
            from modecfg._pytensor import blas
            a = pt.matrix("a")
            for _ in range(2):
                f = modecfg.function([a], pt.dot(a, a).sum(), mode="CVM")  # C: auto may pick numba
            f(np.ones((3, 3)))
            blas_flags = pytensor.config.blas__ldflags
        texts = [(w.category.__name__, str(w.message)) for w in caught]
        print(json.dumps({"texts": texts, "flags": blas_flags}))
        """
    )
    pytensors = [t for c, t in out["texts"] if t.startswith("PyTensor could not link to a BLAS")]
    assert pytensors == [] and [t for c, t in out["texts"] if "BLAS" in t] == []  # no warning at all
    ours = [line for line in out["stderr"].splitlines() if "BLAS" in line]
    if out["flags"]:
        assert ours == []  # a BLAS is linked here: nothing to say
    else:  # one line, through logging, once in the process
        assert len(ours) == 1 and ours[0].startswith("modecfg: PyTensor's C code has no BLAS library")
        assert "apt install libopenblas-dev" in ours[0] and "blas.ldflags=-lopenblas" in ours[0]


def test_the_blas_notice_never_changes_what_a_compile_raises() -> None:
    """PyTensor's tests/tensor/test_basic.py::TestAlloc::test_alloc_constant_folding turns warnings
    into errors around a compile: the notice, a warning, failed it with modecfg only."""
    out = _run(
        """
        import json, warnings
        import modecfg, numpy as np, pytensor, pytensor.tensor as pt
        a = pt.matrix("a")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            f = modecfg.function([a], pt.dot(a, a).sum(), mode="CVM")
        print(json.dumps({"value": float(f(np.ones((3, 3))))}))
        """
    )
    assert out["value"] == 27.0


def test_pytensors_blas_warning_stays_away_after_an_import_inside_catch_warnings() -> None:
    """A filter installed at import was discarded by the enclosing catch_warnings() (pytest's
    importorskip is one): the first default-mode compile of a product printed PyTensor's text."""
    out = _run(
        """
        import json, warnings
        with warnings.catch_warnings():
            import modecfg, numpy as np, pytensor, pytensor.tensor as pt
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            a = pt.matrix("a")
            f = pytensor.function([a], pt.dot(a, a).sum())
            f(np.ones((3, 3)))
            blas_flags = pytensor.config.blas__ldflags
        texts = [(w.category.__name__, str(w.message)) for w in caught]
        print(json.dumps({"texts": texts, "flags": blas_flags}))
        """
    )
    assert [t for c, t in out["texts"] if t.startswith("PyTensor could not link to a BLAS")] == []
    # linker=auto may run the product on numba, which does its own BLAS: modecfg says nothing then
    said = [line for line in out["stderr"].splitlines() if "no BLAS library" in line]
    assert len(said) <= (0 if out["flags"] else 1)


def test_a_patch_whose_partner_is_off_is_left_off_and_pytensor_still_imports() -> None:
    """The mode table answers DEBUG_MODE; without modecfg's register_mode, PyTensor's own refuses
    the name when its DebugMode module registers it, and `import pytensor.compile.debug.debugmode`
    failed. The mode table needs register_mode: one off leaves the other off."""
    out = _run(
        """
        import json, warnings
        warnings.simplefilter("ignore")
        import modecfg
        from modecfg._pytensor import patches
        # register_mode does not verify (as if PyTensor's signature had changed)
        patches.PATCHES = [p._replace(params=("registered",)) if p.name == "register_mode" else p
                           for p in patches.PATCHES]
        import pytensor
        import pytensor.compile.debug.debugmode  # registers DEBUG_MODE
        rows = {r.patch.name: [r.state, r.reason] for r in patches.status()}
        print(json.dumps({"register": rows["register_mode"], "table": rows["mode table"]}))
        """
    )
    assert out["register"] == [
        "off",
        "pytensor.compile.mode.register_mode takes (name, mode), where modecfg expects (registered, ...)",
    ]
    assert out["table"] == ["off", "left off: it needs register_mode, which is off"]


def test_an_integration_that_cannot_load_leaves_pytensor_importable() -> None:
    """The patch machinery itself failing at PyTensor's import is a warning, never the user's error."""
    out = _run(
        """
        import json, sys, warnings
        import modecfg
        sys.modules["modecfg._pytensor.patches"] = None  # its import fails
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import pytensor
            x = pytensor.tensor.vector("x")
        said = [str(w.message) for w in caught if "could not integrate" in str(w.message)]
        print(json.dumps({"said": said, "dtype": x.dtype}))
        """
    )
    assert out["dtype"] == "float64" and len(out["said"]) == 1
    assert out["said"][0].startswith("modecfg could not integrate with PyTensor (ModuleNotFoundError(")


def test_every_contact_that_replaces_nothing_is_verified_and_on_here() -> None:
    from modecfg._pytensor.patches import contacts

    rows = {row.patch.name: row for row in contacts()}
    for name in ("subclassed modes", "profile list", "dump graph", "requiring check", "DebugMode fix"):
        assert rows[name].state in ("on", "off") and rows[name].state != "failed", (name, rows[name])
    assert rows["subclassed modes"].state == rows["profile list"].state == rows["dump graph"].state == "on"


def test_a_contact_pytensor_no_longer_offers_fails_and_is_said_at_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytensor.compile.debug import profiling

    from modecfg._pytensor import patches

    monkeypatch.delattr(profiling, "_atexit_print_list")
    rows = {row.patch.name: row for row in patches.contacts()}
    assert (rows["profile list"].state, rows["profile list"].reason) == (
        "failed", "PyTensor keeps no list of its profiles: modecfg's summary would find none"
    )  # fmt: skip
    from modecfg.errors import PyTensorIntegrationWarning

    monkeypatch.setattr(patches, "_warned", False)
    patches.uninstall()
    try:
        with pytest.warns(
            PyTensorIntegrationWarning, match="profile list .*: PyTensor keeps no list of its profiles"
        ):
            patches.install()
    finally:
        patches.install()  # (a no-op if the one above put everything in)
    assert all(
        row.state == "on" for row in patches.status() if not row.patch.on_demand
    )  # the patches all went in

    def broken() -> tuple[str, str]:
        raise RuntimeError("the probe itself broke")

    monkeypatch.setattr(patches, "CONTACTS", (patches.CONTACTS[0]._replace(probe=broken),))
    (row,) = patches.contacts()
    assert (row.state, row.reason) == (
        "failed",
        "could not be checked (RuntimeError: the probe itself broke)",
    )


def test_modecfg_debugmode_read_first_imports_pytensor_without_a_warning() -> None:
    """`import modecfg; modecfg.DebugMode()` as a tutorial's first line: the DebugMode module
    imports PyTensor, whose import checked the DebugMode fix in the module still being imported
    and warned 'could not be checked'. The check waits for it now; doctor then sees it on."""
    out = _run(
        """
        import json, warnings
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            import modecfg
            mode = modecfg.DebugMode()
        from modecfg._pytensor import patches
        ours = [str(w.message) for w in seen if issubclass(w.category, modecfg.PyTensorIntegrationWarning)]
        (row,) = [r for r in patches.contacts() if r.patch.name == "DebugMode fix"]
        print(json.dumps({"said": ours, "state": row.state}))
        """
    )
    assert (out["said"], out["state"]) == ([], "on")


# -- the parameters verification reads (without inspect.signature for a plain function) --------


def _shapes() -> list[Any]:
    import functools

    def plain(a, b=1):  # type: ignore[no-untyped-def]
        return a

    def star(a, *args, key, other=2, **kwargs):  # type: ignore[no-untyped-def]
        return a

    def bare_star(a, *, key):  # type: ignore[no-untyped-def]
        return a

    def only_kwargs(**kwargs):  # type: ignore[no-untyped-def]
        return kwargs

    def positional_only(a, b, /, c, *rest):  # type: ignore[no-untyped-def]
        return a

    def with_locals(x):  # type: ignore[no-untyped-def]
        y = x + 1  # locals follow the parameters in co_varnames
        return y

    @functools.wraps(star)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        return star(*args, **kwargs)

    def signed(a, b):  # type: ignore[no-untyped-def]
        return a

    signed.__signature__ = __import__("inspect").signature(plain)  # type: ignore[attr-defined]

    class Called:
        def __call__(self, x, *, y=0):  # type: ignore[no-untyped-def]
            return x

    return [plain, star, bare_star, only_kwargs, positional_only, with_locals, wrapper, signed,
            Called(), Called.__call__, functools.partial(star, 1), len, dict.get, lambda: None]  # fmt: skip


def test_the_parameters_read_are_inspects_for_every_shape_and_every_patch_target() -> None:
    import inspect

    originals = patch_state.originals
    targets = [originals[p.name] for p in patches.PATCHES if p.params is not None and p.name in originals]
    assert len(targets) >= 15
    for obj in [*_shapes(), *targets]:
        assert patches.parameter_names(obj) == tuple(inspect.signature(obj).parameters), obj
    with pytest.raises(TypeError):
        patches.parameter_names(42)
