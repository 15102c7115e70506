"""``linker=per_graph``'s contacts with PyTensor: its two patches, beside their replacements, and
its way into the compile hook.

- "linker table" (``predefined_linkers``): ``Mode(linker="per_graph")`` is PyTensor's cvm linker,
  marked (:func:`marked`), as the modes ``linker=per_graph`` builds have it.
- "auto linker" (``VMLinker.accept``): a marked linker hands the graph to the linker chosen for
  it, kept on the graph as a string; without the patch the graph simply runs on cvm.
- :func:`rewrite_mode`, the compile hook's ``rewrite_mode`` slot (the choice is made on the
  user's graph before PyTensor rewrites it, inside the core's compile hook): a mode whose linker
  is not marked is returned as it is, and the rule (:mod:`modecfg.linkers.auto`) is loaded at
  the first compile of a marked one, so a process that never asks for ``per_graph`` never
  loads it.

Nothing here imports PyTensor or numpy at import; the replacements are module-level functions
and the table a module-level class: they pickle (the table as a plain dict).
"""

from __future__ import annotations

from typing import Any

from modecfg._pytensor import marks
from modecfg._pytensor.patch import Patch

__all__ = ["AUTO_LINKER", "LINKER_TABLE", "PATCHES", "LinkerTable", "marked", "rewrite_mode", "vm_accept"]

PER_GRAPH = "per_graph"


def marked(linker: Any) -> Any:
    """``linker`` (PyTensor's cvm ``VMLinker``) marked as ``linker=per_graph``'s: it stays
    PyTensor's own class (PyTensor's tests count linker classes, and a pickled mode must load
    without modecfg)."""
    setattr(linker, marks.AUTO, True)
    return linker


class LinkerTable(dict[Any, Any]):
    """PyTensor's linker table, answering ``per_graph`` as well as PyTensor's own names."""

    def __contains__(self, key: object) -> bool:
        return key == PER_GRAPH or dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        if key == PER_GRAPH:
            import copy

            return marked(copy.copy(dict.__getitem__(self, "cvm")))
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __reduce__(self) -> Any:  # a plain dict of PyTensor's own entries
        return (dict, (dict(self.items()),))


def vm_accept(self: Any, accept: Any, fgraph: Any, no_recycling: Any = None, profile: Any = None) -> Any:
    """``VMLinker.accept``; the marked linker of ``linker=per_graph`` hands the graph on instead
    when the compile hook chose another linker for it (kept on the graph as a string)."""
    chosen = getattr(fgraph, marks.AUTO_CHOICE, "") if getattr(self, marks.AUTO, False) else ""
    if chosen and chosen != "cvm":
        import copy

        from pytensor.compile.mode import predefined_linkers

        linker = copy.copy(predefined_linkers[chosen]).accept(
            fgraph, no_recycling=no_recycling, profile=profile
        )
        if not hasattr(linker, "accept_var_updates"):
            # FunctionMaker saw a VMLinker and will tell the linker the updates; numba's does the
            # updates through the Function instead and has no such method. A builtin that
            # ignores its argument: it pickles, and unpickles where modecfg is not installed.
            linker.accept_var_updates = id
        return linker
    return accept(self, fgraph, no_recycling, profile)


def rewrite_mode(fgraph: Any, mode: Any, profile: Any) -> Any:
    """The mode the compile hook rewrites ``fgraph`` with: ``mode`` itself unless its linker is
    ``linker=per_graph``'s (then :func:`modecfg.linkers.auto.mode_for` chooses, loaded now)."""
    if not getattr(mode.linker, marks.AUTO, False):
        return mode
    from modecfg.linkers.auto import mode_for

    return mode_for(fgraph, mode, profile)


LINKER_TABLE = Patch(
    name="linker table",
    module="pytensor.compile.mode",
    attr="predefined_linkers",
    bound_in=("pytensor.compile",),
    kind=dict,
    replacement=LinkerTable,
    why="Mode(linker='per_graph') is the linker the per_graph flag gives (a linker chosen for each "
    "graph); PyTensor's entries stay",
)


AUTO_LINKER = Patch(
    name="auto linker",
    module="pytensor.link.vm",
    attr="VMLinker.accept",
    params=("self", "fgraph", "no_recycling", "profile"),
    replacement=vm_accept,
    why="linker=per_graph: the cvm linker of modecfg's default mode hands each graph to the linker "
    "chosen for it (numba for a scan, ...)",
)


PATCHES = (LINKER_TABLE, AUTO_LINKER)
