"""One public surface: ``modecfg.__all__`` is exactly what the package offers."""

from __future__ import annotations

import importlib.util
import sys
import types
import warnings

import pytest

import modecfg
from modecfg import errors

# modecfg.workers needs an optional dependency (modecfg[dask]): it is no public name, and
# without distributed it cannot be imported, by design.
OPTIONAL = {"workers"} if importlib.util.find_spec("distributed") is None else set()


def test_all_matches_the_public_names() -> None:
    # Submodules (cli, demo, doctor, errors, ...) are importable, not re-exported names.
    public = {
        n
        for n in set(dir(modecfg)) - OPTIONAL
        if not n.startswith("_") and not isinstance(getattr(modecfg, n), types.ModuleType)
    } | {"checks", "linkers", "modes", "profiles"}
    assert set(modecfg.__all__) - {"__version__"} == public
    for name in modecfg.__all__:
        assert hasattr(modecfg, name), name


def test_without_distributed_modecfg_workers_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "modecfg.workers", raising=False)
    if "workers" in vars(modecfg):  # an earlier import put it there
        monkeypatch.delattr(modecfg, "workers")
    with pytest.raises(ImportError, match=r"modecfg.workers needs Dask's distributed .*modecfg\[dask\]"):
        modecfg.workers  # noqa: B018
    assert "workers" not in modecfg.__all__


def test_no_submodule_shadows_a_public_name() -> None:
    import importlib
    import pkgutil
    import types

    for info in pkgutil.walk_packages(modecfg.__path__, "modecfg."):
        if info.name == "modecfg.__main__":
            continue
        if info.name.removeprefix("modecfg.") in OPTIONAL:
            continue
        importlib.import_module(info.name)
    for package in (modecfg, modecfg.modes, modecfg.linkers, modecfg.checks):
        for name in package.__all__:
            value = getattr(package, name)
            if name not in ("checks", "linkers", "modes", "profiles"):
                assert not isinstance(value, types.ModuleType), f"{package.__name__}.{name} is a module"


def test_the_exception_tree() -> None:
    assert issubclass(modecfg.ConfigError, modecfg.ModecfgError)
    assert issubclass(modecfg.ConfigError, ValueError)
    for cls in (
        modecfg.UnknownFlagError,
        modecfg.FlagValueError,
        modecfg.FlagSyntaxError,
        modecfg.RcFileError,
        modecfg.ReadOnlyFlagError,
        modecfg.ConfigErrors,
    ):
        assert issubclass(cls, modecfg.ConfigError), cls
    assert issubclass(modecfg.UnknownFlagError, AttributeError)
    assert issubclass(modecfg.Float64Error, modecfg.ModecfgError)
    assert issubclass(modecfg.NanGuardError, modecfg.ModecfgError)
    assert issubclass(modecfg.ObsoleteFlagWarning, modecfg.ModecfgWarning)
    assert issubclass(modecfg.Float64Warning, modecfg.ModecfgWarning)
    assert issubclass(modecfg.ModecfgWarning, UserWarning)
    assert set(errors.__all__) <= set(modecfg.__all__)


def test_obsolete_flag_warnings_are_shown_by_default() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()  # the interpreter's default filters
        warnings.simplefilter("default")
        modecfg.load(env={"THEANO_FLAGS": "nvcc.fastmath=True"})
    assert [w.category for w in caught] == [modecfg.ObsoleteFlagWarning]


def test_errors_carry_flag_and_origin() -> None:
    try:
        modecfg.load(env={"THEANO_FLAGS": "floatX=float33"})
    except modecfg.FlagValueError as exc:
        assert exc.flag == "floatX"
        assert exc.value == "float33"
        assert exc.choices == ("float64", "float32", "float16")
        assert exc.origin == modecfg.Origin(modecfg.Layer.ENV, "THEANO_FLAGS")
    else:  # pragma: no cover
        raise AssertionError("no error")


def test_layers_compare_by_precedence_and_equal_their_names() -> None:
    L = modecfg.Layer
    assert L.DEFAULT < L.RC < L.ENV < L.ASSIGNMENT < L.OVERRIDE
    assert L.ENV == "env" and L.OVERRIDE > "assignment"
    assert max([L.RC, L.OVERRIDE, L.ENV]) is L.OVERRIDE


LAZY = ("modecfg", "modecfg.errors", "modecfg.modes", "modecfg.configuration", "modecfg._pytensor",
        "modecfg.cache", "modecfg.profiles")  # fmt: skip


def test_each_lazy_name_is_read_from_its_package_s_type_checking_block() -> None:
    from modecfg import _lazy

    for package in (importlib.import_module(n) for n in LAZY):
        with open(package.__file__ or "", encoding="utf-8") as file:
            names = _lazy.table(package.__name__, file.read())
        assert names and set(names) <= set(dir(package)), package.__name__
        assert package.__getattr__.table == names  # (what the package reads at its first ask)
        for name, module in names.items():
            if name == "workers":  # needs distributed (modecfg[dask]): handed out, not offered
                assert name not in package.__all__
                continue
            assert getattr(package, name) is not None and name in package.__all__
            assert sys.modules[module] is not None  # the module the block names was imported
        # and __all__ names nothing else that the package cannot hand out
        assert [n for n in package.__all__ if not hasattr(package, n)] == [], package.__name__
    block = "if _TYPE_CHECKING:\n    from modecfg import checks as checks\nx = 1\n"
    assert _lazy.table("modecfg", block) == {"checks": "modecfg.checks"}
    tabbed = "if TYPE_CHECKING:\n\tfrom json import dumps as dumps\n\n\tfrom a import b as b\nc = 1\n"
    assert _lazy.table("pkg", tabbed) == {"dumps": "json", "b": "a"}  # a tab indents as a space does


def test_a_package_reads_its_lazy_names_at_the_first_ask_not_at_import() -> None:
    """Reading every package's block at ``import modecfg`` cost 1.7 M instructions (issue 61)."""
    from tests.fresh import run_json

    out = run_json(
        """
        import builtins, json
        import pytensor
        opened = []
        real = builtins.open
        builtins.open = lambda path, *a, **k: opened.append(str(path)) or real(path, *a, **k)
        import modecfg
        at_import = [p for p in opened if p.endswith(".py")]
        modecfg.CompareMode  # the first lazy name asked for reads the block
        first = [p for p in opened if p.endswith(".py")]
        modecfg.NanGuardMode, modecfg.errors.NanGuardError  # (and no other read of that block)
        print(json.dumps({"at_import": at_import, "first": first,
                          "later": [p for p in opened if p.endswith(".py")]}))
        """
    )
    assert out["at_import"] == []
    read = [p.replace("\\", "/").rsplit("/modecfg/", 1)[1] for p in out["later"]]
    assert read[0] == "__init__.py" and len(out["first"]) >= 1  # the package asked, first
    assert sorted(read) == sorted(set(read)) and "errors.py" in read  # each block read once


def test_a_name_outside_all_is_missing_without_reading_the_block() -> None:
    from modecfg._lazy import LazyNames

    sys.modules["pkg_of_lazy_test"] = types.ModuleType("pkg_of_lazy_test")
    sys.modules["pkg_of_lazy_test"].__all__ = ["listed"]  # type: ignore[attr-defined]
    try:
        lazy = LazyNames("pkg_of_lazy_test", "/no/such/file.py", hidden=["extra"])
        for name in ("__wrapped__", "submodule"):  # (importlib asks before importing a submodule)
            with pytest.raises(AttributeError, match=f"no attribute '{name}'"):
                lazy(name)
        for name in ("listed", "extra"):  # a name __all__ lists, or a hidden one, reads the block
            with pytest.raises(FileNotFoundError):
                lazy(name)
    finally:
        del sys.modules["pkg_of_lazy_test"]


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("x = 1\n", "no 'if TYPE_CHECKING:' block"),
        ("if TYPE_CHECKING:\n    from a import b\n", "write 'from a import b as b'"),
        ("if TYPE_CHECKING:\n    import a\n", "more than 'from x import y as y'"),
        ("if TYPE_CHECKING:\n    from . import a as a\n", "more than 'from x import y as y'"),
        (
            "if TYPE_CHECKING:\n    from a import b as b c\n",
            "more than 'from x import y as y' lines: 'from a",
        ),
        (
            "if TYPE_CHECKING:\n    from a import b as c\n",
            r"^pkg: write 'from a import b as b' \(the 'as' re-exports it",
        ),
        (
            "if TYPE_CHECKING:\n    from a import b\n",
            r"^pkg: write 'from a import b as b' \(the 'as' re-exports it",
        ),
    ],
)
def test_a_type_checking_block_the_lazy_names_cannot_be_read_from_is_refused(source: str, error: str) -> None:
    from modecfg import _lazy

    with pytest.raises(ValueError, match=error):
        _lazy.table("pkg", source)


def test_the_package_and_the_object_no_longer_share_a_name() -> None:
    """Issue 61: ``modecfg.config`` was both the package of the configuration's modules and the
    process's Config, so ``import modecfg.config.explain as e`` bound the method ``Config.explain``
    and ``import modecfg.config.resolve`` failed. The package is ``modecfg.configuration``; the
    object keeps its name (``from modecfg import config``)."""
    import types

    import modecfg
    import modecfg.configuration.explain as explain_module
    from modecfg import config
    from modecfg.configuration.live import Config

    assert isinstance(explain_module, types.ModuleType)
    assert explain_module.__name__ == "modecfg.configuration.explain"
    assert isinstance(config, Config) and modecfg.config is config
    assert isinstance(modecfg.configuration, types.ModuleType)
    from tests.fresh import run_json

    out = run_json(  # (in a process of its own: an import that fails still binds what it found)
        """
        import importlib, json
        import modecfg
        try:
            importlib.import_module("modecfg.config.explain")
            outcome = "imported"
        except ModuleNotFoundError as error:
            outcome = str(error)
        print(json.dumps({"outcome": outcome, "config": type(modecfg.config).__name__}))
        """
    )
    assert out["outcome"].startswith("No module named 'modecfg.config") and out["config"] == "Config"
