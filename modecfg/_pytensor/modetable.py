"""modecfg's modes and linkers, seen by PyTensor: ``pytensor.function(..., mode="NanGuardMode")``,
``Mode(linker="per_graph")``.

PyTensor looks a mode name up, upper-cased, in ``pytensor.compile.mode.predefined_modes``
before anything else. That dict is replaced by a subclass that answers every name of
modecfg's registry (in any case) with modecfg's mode, built from modecfg's configuration
(through :data:`modecfg._pytensor.hooks.hooks.get_mode`), and keeps PyTensor's own
entries for everything else. PyTensor's default mode ("Mode") becomes modecfg's ``mode``
flag, so ``pytensor.function`` and ``modecfg.function`` compile alike.

PyTensor's linker table (``predefined_linkers``, read by ``Mode(linker=NAME)``) answers
``per_graph`` too: PyTensor's cvm linker marked as the modes ``linker=per_graph`` builds have it
(the "auto linker" integration point hands each graph to the linker chosen for it).
"""

from __future__ import annotations

from typing import Any

from modecfg._pytensor import marks
from modecfg._pytensor.hooks import hooks
from modecfg._registry.modes import find_mode

__all__ = ["LinkerTable", "ModeTable"]


class ModeTable(dict[Any, Any]):
    """PyTensor's mode table, answering modecfg's names from modecfg's registry."""

    def _ours(self, key: Any) -> bool:
        return isinstance(key, str) and hooks.get_mode is not None and find_mode(key) is not None

    def __contains__(self, key: object) -> bool:
        return self._ours(key) or dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        if self._ours(key):
            assert hooks.get_mode is not None
            return hooks.get_mode(None if key.upper() == "MODE" else key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __reduce__(self) -> Any:  # a plain dict of PyTensor's own entries
        return (dict, (dict(self.items()),))


PER_GRAPH = "per_graph"


class LinkerTable(dict[Any, Any]):
    """PyTensor's linker table, answering ``per_graph`` as well as PyTensor's own names."""

    def __contains__(self, key: object) -> bool:
        return key == PER_GRAPH or dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        if key == PER_GRAPH:
            import copy

            linker = copy.copy(dict.__getitem__(self, "cvm"))
            setattr(linker, marks.AUTO, True)  # (modecfg.linkers.auto.auto_linker makes the same)
            return linker
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __reduce__(self) -> Any:  # a plain dict of PyTensor's own entries
        return (dict, (dict(self.items()),))
