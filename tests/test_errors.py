"""One exception hierarchy: every error and warning modecfg defines lives in errors.py, is drawn
in its docstring's tree, and is exported; errors carry declared fields."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytensor  # noqa: F401  (first, as a user's program does: modecfg meets it at its import)

import modecfg
from modecfg import errors


def _modules() -> list[str]:
    names = ["modecfg"]
    for info in pkgutil.walk_packages(modecfg.__path__, "modecfg."):
        if info.name.endswith(("workers", "pytest_plugin", "__main__")):  # optional deps; a program
            continue
        names.append(info.name)
    return names


# Exceptions of public modules that never leave modecfg, each with where it is caught.
CONTROL_FLOW = {
    "modecfg.compare.graphsource.CannotWrite": "caught by modecfg.compare.repro, which says "
    "'no reproduction written: <its message>' in CompareMode's report",
}


# Exceptions of public modules that are an exported error too, with another library's base a
# caller of PyTensor's catches: raised as that error (users catch the exported one).
ALSO_ANOTHERS = {
    "modecfg.cache.holders.LockTimeout": "a CacheLockTimeout that is also filelock's Timeout, which "
    "PyTensor's own compile lock raised and its callers (PyTensor's tests among them) catch",
}


def _internal(module: str, attr: str) -> bool:
    """Control flow that never leaves modecfg: a private name, a class of a private module, or
    one CONTROL_FLOW names; or an exported error with another library's base (ALSO_ANOTHERS)."""
    return (
        attr.startswith("_")
        or any(part.startswith("_") for part in module.split(".")[1:])
        or f"{module}.{attr}" in CONTROL_FLOW
        or f"{module}.{attr}" in ALSO_ANOTHERS
    )


def test_an_error_with_another_librarys_base_is_an_exported_error_too() -> None:
    for dotted in ALSO_ANOTHERS:
        module, _, attr = dotted.rpartition(".")
        found = getattr(importlib.import_module(module), attr)
        exported = [base for base in found.__mro__[1:] if base.__module__ == "modecfg.errors"]
        assert exported and exported[0].__name__ in errors.__all__, dotted


def test_every_error_and_warning_is_defined_in_errors_and_exported() -> None:
    defined_elsewhere = []
    for name in _modules():
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == name
                and name != "modecfg.errors"
                and not _internal(name, attr)
            ):
                defined_elsewhere.append(f"{name}.{attr}")
    assert defined_elsewhere == []
    from modecfg import _feature_errors

    defined = {**vars(errors), **vars(_feature_errors)}  # (the features' part: made when first named)
    ours = {n for n, o in defined.items() if inspect.isclass(o) and issubclass(o, BaseException)}
    ours = {n for n in ours if defined[n].__module__ == "modecfg.errors"}
    assert ours == set(errors.__all__)
    assert all(getattr(errors, n) is defined[n] for n in ours)
    assert ours <= set(modecfg.__all__)
    tree = errors.__doc__ or ""
    assert [n for n in sorted(ours) if f" {n}" not in tree] == []


def test_nanguard_error_fields_are_declared() -> None:
    error = modecfg.NanGuardError("bad", dump_path="/x", bad_outputs=("output 0",))
    assert (error.bad, error.dump_path, error.bad_outputs) == (None, "/x", ["output 0"])
    assert str(error) == "bad"


def test_the_features_errors_are_made_when_first_named_and_are_modecfg_errors_own() -> None:
    """Issue 61: the 18 classes only a feature raises cost every import; they are made at their
    first use, by any of the names a user or a feature writes, and are the errors module's to
    tracebacks and pickles."""
    from tests.fresh import run_json

    out = run_json(
        """
        import json, pickle, sys
        import pytensor, modecfg
        at_import = "modecfg._feature_errors" in sys.modules
        dumped = pickle.dumps(modecfg.NanGuardError("bad", dump_path="d.pkl"))
        from modecfg.errors import CacheLockTimeout, NanGuardError
        back = pickle.loads(dumped)
        try:
            raise modecfg.errors.UntrustedDumpError("unsigned")
        except modecfg.DumpError as exc:
            caught = [type(exc).__module__, type(exc).__qualname__]
        print(json.dumps({
            "at_import": at_import, "caught": caught, "back": [type(back) is NanGuardError, back.dump_path],
            "same": modecfg.CacheLockTimeout is CacheLockTimeout is modecfg._feature_errors.CacheLockTimeout,
            "listed": sorted(n for n in modecfg.errors.__all__ if n in modecfg._feature_errors.__all__),
            "dir": "ProfileError" in dir(modecfg.errors) and "ProfileError" in dir(modecfg),
        }))
        """
    )
    assert out["at_import"] is False
    assert out["caught"] == ["modecfg.errors", "UntrustedDumpError"]
    assert out["back"] == [True, "d.pkl"] and out["same"] is True and out["dir"] is True
    assert len(out["listed"]) == 18 and "NanGuardError" in out["listed"]
