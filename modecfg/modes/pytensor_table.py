"""modecfg's modes, seen by PyTensor: ``pytensor.function(..., mode="NanGuardMode")``.

PyTensor looks a mode name up, upper-cased, in ``pytensor.compile.mode.predefined_modes``
before anything else. That dict is replaced by a subclass that answers every name of
modecfg's registry (in any case) with modecfg's mode, built from modecfg's configuration,
and keeps PyTensor's own entries for everything else. PyTensor's default mode ("Mode")
becomes modecfg's ``mode`` flag, so ``pytensor.function`` and ``modecfg.function``
compile alike.
"""

from __future__ import annotations

from typing import Any

from modecfg.modes.registry import find_mode

__all__ = ["ModeTable", "install"]


class ModeTable(dict[Any, Any]):
    """PyTensor's mode table, answering modecfg's names from modecfg's registry."""

    def _ours(self, key: Any) -> bool:
        return isinstance(key, str) and find_mode(key) is not None

    def __contains__(self, key: object) -> bool:
        return self._ours(key) or dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        if self._ours(key):
            from modecfg.modes.build import get_mode

            return get_mode(None if key.upper() == "MODE" else key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default


def install() -> None:
    """Put the table in PyTensor (once; PyTensor must be importable)."""
    from pytensor.compile import mode as ptmode

    if isinstance(ptmode.predefined_modes, ModeTable):
        return
    table = ModeTable(ptmode.predefined_modes)

    def register_mode(name: str, mode: Any) -> None:
        """PyTensor's register_mode, refusing only names PyTensor itself holds.

        (PyTensor's DebugMode module registers DEBUG_MODE when it is first imported,
        a name modecfg answers too: modecfg's entry wins at lookup.)
        """
        if dict.__contains__(table, name):
            raise ValueError(f"Mode name already taken: {name}")
        dict.__setitem__(table, name, mode)

    ptmode.predefined_modes = table
    ptmode.register_mode = register_mode
