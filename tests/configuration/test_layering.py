"""The imports inside ``modecfg/config`` form no circle, counting function-level imports and
those made only for type checking; the live state has one owner."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

_SPEC = importlib.util.find_spec("modecfg.configuration")  # modecfg.config the attribute is the Config
assert _SPEC is not None and _SPEC.origin is not None
PACKAGE = Path(_SPEC.origin).parent
MODULES = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}


def _imports(path: Path) -> set[str]:
    """The modules of the package that ``path`` imports anywhere (top level, function, TYPE_CHECKING)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "modecfg.configuration":
                found |= {alias.name for alias in node.names if alias.name in MODULES} or {"__init__"}
            elif node.module.startswith("modecfg.config."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("modecfg.config."):
                    found.add(alias.name.split(".")[2])
    return found - {path.stem}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_config_package_imports_in_no_circle() -> None:
    graph = {p.stem: _imports(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_only_the_store_reads_the_override_frames() -> None:
    """One way to read the current override: the store's; the facade and the snapshots ask it."""
    for name in ("live", "snapshot", "explain"):
        text = (PACKAGE / f"{name}.py").read_text()
        assert "var.get(" not in text, name
    assert "process_wide.append" not in (PACKAGE / "__init__.py").read_text()
