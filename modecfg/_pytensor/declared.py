"""The names of the flags the installed PyTensor declares, read from its source, not imported.

A configuration is read without importing PyTensor (it costs seconds), yet a setting may name
one of PyTensor's flags that modecfg does not declare (``cmodule__warn_no_version``): such a
setting is PyTensor's, handed to it as written, and any other unknown name is an
error at once. Which is which is decided here, by the same rule before that import and after
it: the ``config.add("name", ...)`` calls in PyTensor's modules, found by parsing them
(:mod:`ast`; nothing of them runs). Where PyTensor declares a flag some other way, its setting
is refused as unknown: ``modecfg doctor`` lists the names this reading misses.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from modecfg.configuration.flags import canonical

__all__ = ["names"]

_CALL = "config.add("  # the files worth parsing hold this text


@functools.cache
def names() -> frozenset[str]:
    """Every flag name (dotted) the installed PyTensor's modules declare; empty without PyTensor."""
    spec = importlib.util.find_spec("pytensor")  # finds the package; imports nothing of it
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    found: set[str] = set()
    for root in spec.submodule_search_locations:
        for path in sorted(Path(root).rglob("*.py")):
            found.update(declared_in(path))
    return frozenset(found)


def declared_in(path: Path) -> set[str]:
    """The names ``config.add("name", ...)`` declares in one source file."""
    import ast  # here: importing it compiles a pattern on 3.12, and this module loads at start-up

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    if _CALL not in text:
        return set()
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "config"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.add(canonical(node.args[0].value))
    return out
