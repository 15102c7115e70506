"""modecfg's modes, seen by PyTensor: ``pytensor.function(..., mode="NanGuardMode")``.

PyTensor looks a mode name up, upper-cased, in ``pytensor.compile.mode.predefined_modes``
before anything else. That dict is replaced by a subclass that answers every name of
modecfg's registry (in any case) with modecfg's mode, built from modecfg's configuration
(through :data:`modecfg._pytensor.hooks.hooks.get_mode`), and keeps PyTensor's own
entries for everything else. PyTensor's default mode ("Mode") becomes modecfg's ``mode``
flag, so ``pytensor.function`` and ``modecfg.function`` compile alike.

(PyTensor's linker table answers ``per_graph`` through :mod:`modecfg.linkers.contacts`.)
"""

from __future__ import annotations

from typing import Any

from modecfg._pytensor.hooks import hooks
from modecfg._registry.modes import find_mode

__all__ = ["ModeTable"]


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
