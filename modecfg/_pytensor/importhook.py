"""The hook at PyTensor's import: the loader of the ``pytensor`` package, wrapped so that PyTensor
is imported with modecfg's values of the flags it fixes (:meth:`PyTensorBridge.pytensor_environment
<modecfg._pytensor.mirror.PyTensorBridge.pytensor_environment>`), then the integration put in
(:meth:`~modecfg._pytensor.mirror.PyTensorBridge.after_import`).

Loaded only where modecfg is imported before PyTensor: the bridge puts the hook first on
``sys.meta_path`` and it removes itself once PyTensor's import has run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from modecfg._pytensor.state import HAND_OFF, WALKED, applied

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

    from modecfg._pytensor.mirror import PyTensorBridge

__all__ = ["ImportHook", "Loader"]


class ImportHook:
    """Wraps the loader of the top-level ``pytensor`` package; removed once it has run."""

    def __init__(self, bridge: PyTensorBridge) -> None:
        self.bridge = bridge

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "pytensor":
            return None
        for finder in sys.meta_path:  # the finders after us, as importlib would ask them
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = cast(Any, Loader(spec.loader, self.bridge))
        return spec


class Loader:
    def __init__(self, inner: Any, bridge: PyTensorBridge) -> None:
        self._inner = inner
        self._bridge = bridge

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self._bridge._unhook()
        try:
            with self._bridge.pytensor_environment():
                self._inner.exec_module(module)
            HAND_OFF[:] = ["handed over at import"]
        finally:  # the module keeps PyTensor's own loader: nothing of modecfg stays on it
            module.__loader__ = self._inner
            if module.__spec__ is not None:
                module.__spec__.loader = self._inner
        self._bridge.after_import()
        WALKED[0] = applied.get("host updates")  # (no function made before: none to look for)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
