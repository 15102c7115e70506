"""The layers point one way and no import goes in a circle (the import graph by grimp).

Lowest first: errors, the registries and two helpers; the configuration; the PyTensor
layer; modes, linkers, checks, profiles, test values; the public API, the CLI and the
wiring. Every import counts, also those inside functions and those under ``TYPE_CHECKING``
(the lazy-export tables of ``modecfg._lazy`` are written there): a type a lower layer names
from a higher one ties the two together as surely as an import that runs.
``modecfg.configuration.origin`` (where a value came from) imports nothing of modecfg and sits at
the bottom: the errors name it.
"""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")

LAYERS: tuple[tuple[str, ...], ...] = (
    ("modecfg.errors", "modecfg._feature_errors", "modecfg._registry", "modecfg._warn", "modecfg._source",
     "modecfg.scripts", "modecfg._html", "modecfg._files", "modecfg._locks", "modecfg._lazy",
     "modecfg._record", "modecfg.terminal", "modecfg.configuration.origin", "modecfg.signing"),
    ("modecfg.configuration",),
    ("modecfg._pytensor",),
    ("modecfg.modes", "modecfg.linkers", "modecfg.checks", "modecfg.profiles", "modecfg.testvalues",
     "modecfg.cache", "modecfg.device", "modecfg.compare", "modecfg.nanguard"),
    ("modecfg", "modecfg.__main__", "modecfg.cli", "modecfg.demo", "modecfg.doctor",
     "modecfg._wiring", "modecfg.workers", "modecfg.autoload",
     "modecfg.theano_names"),
)  # fmt: skip


def _layer(module: str) -> int:
    """The layer of ``module``: a member names itself and, if it is a package, what is inside it;
    the package ``modecfg`` itself names only its ``__init__`` (else every new module would land
    on the top layer unnoticed)."""
    best = (-1, -1)  # (length of the longest matching prefix, layer)
    for index, members in enumerate(LAYERS):
        for member in members:
            if module == member or (member != "modecfg" and module.startswith(member + ".")):
                best = max(best, (len(member), index))
    assert best[1] >= 0, f"{module} belongs to no layer: add it to LAYERS"
    return best[1]


def test_a_module_nobody_placed_belongs_to_no_layer() -> None:
    with pytest.raises(AssertionError, match=r"modecfg\.newthing belongs to no layer"):
        _layer("modecfg.newthing")
    assert _layer("modecfg") == 4 and _layer("modecfg.configuration.live") == 1


@pytest.fixture(scope="module")
def graph() -> object:
    """Every import, those under ``TYPE_CHECKING`` included."""
    return grimp.build_graph("modecfg", exclude_type_checking_imports=False, cache_dir=None)


@pytest.fixture(scope="module")
def running() -> object:
    """The imports that run (a type named both ways within one layer is no circle at import)."""
    return grimp.build_graph("modecfg", exclude_type_checking_imports=True, cache_dir=None)


def _edges(graph: object) -> list[tuple[str, str]]:
    return sorted(
        (module, imported)
        for module in graph.modules  # type: ignore[attr-defined]
        for imported in graph.find_modules_directly_imported_by(module)  # type: ignore[attr-defined]
        if imported.split(".")[0] == "modecfg"
    )


def test_every_module_belongs_to_a_layer(graph: object) -> None:
    layers = {module: _layer(module) for module in graph.modules}  # type: ignore[attr-defined]
    assert layers["modecfg.configuration.live"] == 1 and layers["modecfg._pytensor.patches"] == 2
    assert set(layers.values()) == set(range(len(LAYERS)))  # every layer is populated


def test_no_layer_imports_a_layer_above_it(graph: object) -> None:
    upward = [f"{a} -> {b}" for a, b in _edges(graph) if _layer(b) > _layer(a)]
    assert upward == []


def test_no_import_goes_in_a_circle(running: object) -> None:
    """Tarjan's strongly connected components: every one must be a single module."""
    edges: dict[str, list[str]] = {}
    for a, b in _edges(running):
        edges.setdefault(a, []).append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(running.modules):  # type: ignore[attr-defined]
        if module not in index:
            visit(module)
    assert circles == []


def test_the_bottom_s_origin_imports_nothing_of_modecfg_but_the_record_base(graph: object) -> None:
    assert [b for a, b in _edges(graph) if a == "modecfg.configuration.origin"] == ["modecfg._record"]
    assert [b for a, b in _edges(graph) if a == "modecfg._record"] == []


def test_the_layer_test_sees_an_upward_import() -> None:
    """The check itself can fail: an import from config up into modes is caught."""
    fake = grimp.ImportGraph()
    fake.add_import(importer="modecfg.configuration.live", imported="modecfg.modes.build")
    assert [(a, b) for a, b in _edges(fake) if _layer(b) > _layer(a)] == [
        ("modecfg.configuration.live", "modecfg.modes.build")
    ]


# -- the PyTensor boundary ---------------------------------------------------------------------------

# Modules outside modecfg._pytensor that still import PyTensor: none (issue 34). Kept as a list so
# that a module on its way into that layer can be named while it moves, and only then.
NOT_YET_MOVED: frozenset[str] = frozenset()


@pytest.fixture(scope="module")
def with_pytensor() -> object:
    return grimp.build_graph(
        "modecfg", include_external_packages=True, exclude_type_checking_imports=True, cache_dir=None
    )


def _pytensor_importers(graph: object) -> set[str]:
    return {
        module
        for module in graph.find_modules_that_directly_import("pytensor")  # type: ignore[attr-defined]
        if module.startswith("modecfg.")
    }


def test_only_the_pytensor_layer_and_the_features_import_pytensor(with_pytensor: object) -> None:
    """Every import counts, also those inside functions (grimp sees them): the layers above
    talk to the small interface modecfg._pytensor exports, except a feature that owns its
    contacts with PyTensor (FEATURES, below: the device path builds on PyTensor's JAX linker)."""
    outside = {
        m
        for m in _pytensor_importers(with_pytensor)
        if not m.startswith(("modecfg._pytensor.", *(f + "." for f in FEATURES)))
    }
    assert outside == NOT_YET_MOVED
    assert "modecfg.device.jaxlink" in _pytensor_importers(with_pytensor)  # the rule is not idle


def test_the_boundary_test_sees_an_import_inside_a_function() -> None:
    fake = grimp.ImportGraph()
    fake.add_module("pytensor", is_squashed=True)
    fake.add_import(importer="modecfg.modes.build", imported="pytensor", line_number=120,
                    line_contents="    from pytensor.compile.mode import Mode")  # fmt: skip
    assert _pytensor_importers(fake) == {"modecfg.modes.build"}


def test_the_cli_uses_the_public_api_only() -> None:
    """Issue 49: cli.py imported 17 internal modules and called Config._assign. The command (the
    package modecfg.cli) imports no
    module or name of modecfg's that starts with an underscore, and reaches no private attribute
    (a named tuple's _asdict/_replace are its public API)."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "modecfg" / "cli"
    private = []
    for node in (n for p in sorted(package.glob("*.py")) for n in ast.walk(ast.parse(p.read_text("utf-8")))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("modecfg"):
            if (node.module or "").startswith("modecfg.cli"):
                continue  # the command's own modules
            parts = (node.module or "").split(".") + [alias.name for alias in node.names]
            private += [f"line {node.lineno}: {node.module}" for part in parts if part.startswith("_")]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "modecfg" and any(part.startswith("_") for part in parts):
                    private.append(f"line {node.lineno}: {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if node.attr not in ("_asdict", "_replace", "_fields"):
                private.append(f"line {node.lineno}: .{node.attr}")
    assert private == []


# The features laid out as issue 61 asks (ARCHITECTURE.md, "Where the code is going"): each owns
# its code and its contacts with PyTensor, imports the core (layers 0-2) and no other feature but
# by the edges named here, each with why.
FEATURES = (
    "modecfg.testvalues", "modecfg.device", "modecfg.compare", "modecfg.nanguard", "modecfg.linkers",
    "modecfg.profiles", "modecfg.cache", "modecfg.checks",
)  # fmt: skip
EDGES = {
    ("modecfg.compare", "modecfg.nanguard.mode"): "CompareMode plans what it checks as the NaN guard "
    "does (which outputs and updates, Plan) and says where a bad value is the backends' alone",
    ("modecfg.compare", "modecfg.device.where"): "a CompareMode built by name runs on the linker "
    "the linker and device flags resolve to",
    ("modecfg.compare", "modecfg.device.jaxlink"): "a difference on JAX names the precision JAX "
    "computed it in (precision_note)",
    ("modecfg.nanguard", "modecfg.modes.compiling"): "a dump is replayed by compiling its graph as "
    "modecfg.function does, in the mode asked for",
    ("modecfg.nanguard", "modecfg.device.where"): "a NanGuardMode built by name guards the linker "
    "the linker and device flags resolve to",
    ("modecfg.profiles", "modecfg.modes.build"): "a profiled compile runs in the mode asked for (or "
    "the mode flag's), built as every mode is, and a profile's header names its linker so",
}


@pytest.mark.parametrize("feature", FEATURES)
def test_a_feature_imports_the_core_and_no_other_feature(graph: object, feature: str) -> None:
    reached = sorted(
        {
            imported
            for module, imported in _edges(graph)
            if module.startswith(feature + ".") or module == feature
        }
    )
    beyond = [m for m in reached if not m.startswith(feature) and _layer(m) > 2 and (feature, m) not in EDGES]
    assert beyond == []
    if any(module == f"{feature}.contacts" for module, _ in _edges(graph)):
        assert "modecfg._pytensor.patch" in reached  # (its patches are its own)


def test_every_named_edge_is_taken(graph: object) -> None:
    """An edge no longer taken is taken out of EDGES: the list says what is, not what was."""
    taken = {(f, b) for a, b in _edges(graph) for f in FEATURES if a == f or a.startswith(f + ".")}
    assert [edge for edge in EDGES if edge not in taken] == []


def test_the_core_names_no_feature(graph: object) -> None:
    """The patch list holds the features' patches without its module importing them."""
    into = [f"{a} -> {b}" for a, b in _edges(graph) if _layer(a) <= 2 and b.startswith(FEATURES)]
    assert into == []
