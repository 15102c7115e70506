"""The PyTensor bridge: modecfg's config is the truth, ``pytensor.config`` its mirror.

PyTensor reads its flags once, when it is imported, and fixes several of them for the
life of the process. So the bridge meets PyTensor at its import: a meta-path hook
wraps the loading of the ``pytensor`` package and hands it modecfg's resolved values
through ``PYTENSOR_FLAGS`` (with ``PYTENSORRC`` pointing at nothing, since modecfg has
read the rc files already), then restores the environment. Reading the configuration
never imports PyTensor.

After that, every assignment of a mirrored flag is copied into ``pytensor.config``;
scoped overrides are not (``pytensor.config`` is process-wide) and are applied by
modecfg around the compiles it performs. If PyTensor was imported before modecfg,
the values are copied over when the configuration is first read, and those PyTensor
has already fixed are reported with a warning.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from modecfg._warn import warn
from modecfg.config.flags import FLAGS, Flag
from modecfg.config.flagstring import format_flags
from modecfg.errors import ConfigError, ModecfgWarning, ReadOnlyFlagError

if TYPE_CHECKING:
    import logging
    from importlib.machinery import ModuleSpec

    from modecfg.config.live import Config

__all__ = ["PyTensorBridge"]


def _log() -> logging.Logger:
    import logging  # not at import: reading the config stays cheap

    return logging.getLogger("modecfg.bridge")


# Values PyTensor 3 itself accepts for the two flags whose choices modecfg extends.
_PYTENSOR_MODES = frozenset(
    ["Mode", "DebugMode", "FAST_RUN", "NanGuardMode", "FAST_COMPILE", "DEBUG_MODE", "CVM", "C",
     "JAX", "NUMBA", "PYTORCH", "MLX"]
)  # fmt: skip
_PYTENSOR_LINKERS = frozenset(
    ["auto", "cvm", "c|py", "py", "c", "c|py_nogc", "vm", "vm_nogc", "cvm_nogc", "numba", "jax"]
)


def pytensor_text(value: Any) -> str:
    """A value as PyTensor's own parser reads it."""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def pytensor_accepts(spec: Flag, value: Any) -> bool:
    if not spec.pytensor or (value is None and spec.name in ("blas.ldflags", "compiledir")):
        return False
    if spec.name == "mode":
        return value in _PYTENSOR_MODES
    if spec.name == "linker":
        return value in _PYTENSOR_LINKERS
    return True


class PyTensorBridge:
    """Keeps ``pytensor.config`` in step with one Config (the process-wide one)."""

    def __init__(self) -> None:
        self.config: Config | None = None
        self._lock = threading.Lock()
        self._hook: _ImportHook | None = None

    # -- set-up --------------------------------------------------------------------

    def attach(self, config: Config) -> None:
        """Mirror ``config``: now if PyTensor is loaded, else when it is imported."""
        self.config = config
        if "pytensor" in sys.modules:
            self.after_import()  # values are synced at the first read of the config
            return
        if self._hook is None:
            self._hook = _ImportHook(self)
            sys.meta_path.insert(0, self._hook)

    def detach(self) -> None:
        if self._hook is not None and self._hook in sys.meta_path:
            sys.meta_path.remove(self._hook)
        self._hook = None

    def pytensor_flags(self) -> str:
        """PYTENSOR_FLAGS for PyTensor's import: every mirrored value some layer set."""
        cfg = self.config
        assert cfg is not None
        pairs = [
            (spec.pytensor_name, pytensor_text(value))
            for spec, value in self._set_values(cfg)
            if pytensor_accepts(spec, value)
        ]
        return format_flags(pairs)

    @staticmethod
    def _set_values(cfg: Config) -> list[tuple[Flag, Any]]:
        """Mirrored flags that a layer below the overrides sets, with their values."""
        cfg._ready()
        found = cfg._cfg_state.candidates
        return [(FLAGS[name], c[-1].value) for name, c in found.items() if c and FLAGS[name].pytensor]

    @contextmanager
    def pytensor_environment(self) -> Iterator[None]:
        """PYTENSOR_FLAGS and PYTENSORRC set for PyTensor's import, restored afterwards."""
        saved = {k: os.environ.get(k) for k in ("PYTENSOR_FLAGS", "PYTENSORRC")}
        try:
            flags = self.pytensor_flags()
        except ConfigError as exc:
            _log().warning("PyTensor is imported with its own configuration: %s", exc)
            yield
            return
        os.environ["PYTENSOR_FLAGS"] = flags
        os.environ["PYTENSORRC"] = os.devnull
        _log().debug("importing PyTensor with PYTENSOR_FLAGS=%s", flags)
        try:
            yield
        finally:
            for key, old in saved.items():
                if old is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = old

    def sync(self) -> None:
        """Copy every mirrored value some layer set into an already imported PyTensor."""
        cfg = self.config
        if cfg is None or "pytensor" not in sys.modules:
            return
        for spec, value in self._set_values(cfg):
            self.mirror(spec, value, early=True)

    # -- the Bridge protocol used by Config ----------------------------------------

    def _param(self, spec: Flag) -> Any:
        module = sys.modules.get("pytensor")
        if module is None:
            return None
        cfg = getattr(module, "config", None)
        return getattr(cfg, "_config_var_dict", {}).get(spec.pytensor_name)

    def is_fixed(self, spec: Flag) -> bool:
        """True once PyTensor has read a flag it never reads again."""
        param = self._param(spec)
        if param is None:
            return False
        return (spec.fixed or not param.mutable) and hasattr(param, "val")

    def check_writable(self, spec: Flag, value: Any) -> None:
        if not spec.fixed or not self.is_fixed(spec):
            return
        current = self._param(spec).val
        if pytensor_text(current) != pytensor_text(value):
            raise ReadOnlyFlagError(
                f"{spec.name} cannot change to {value!r}: PyTensor already uses {current!r} for "
                f"this process. Set it before PyTensor is first used: in MODECFG_FLAGS, an rc "
                f"file, or by assignment before importing pytensor",
                flag=spec.name,
            )

    def mirror(self, spec: Flag, value: Any, *, early: bool = False) -> None:
        """Copy one value into ``pytensor.config`` if PyTensor is loaded and takes it."""
        param = self._param(spec)
        if param is None or not pytensor_accepts(spec, value):
            return
        if not param.mutable and hasattr(param, "val"):
            if early and pytensor_text(param.val) != pytensor_text(value):
                warn(
                    f"pytensor was imported before modecfg and fixed {spec.pytensor_name}="
                    f"{param.val!r}; {spec.name}={value!r} applies to modecfg's own compiles "
                    "only. Import modecfg before pytensor to avoid this.",
                    ModecfgWarning,
                )
            return
        module = sys.modules["pytensor"]
        with self._lock:
            try:
                setattr(module.config, spec.pytensor_name, pytensor_text(value))
            except Exception as exc:  # PyTensor raises bare Exception / ValueError
                _log().warning("could not mirror %s=%r into pytensor.config: %s", spec.name, value, exc)

    def after_import(self) -> None:
        """PyTensor is loaded: it now finds modecfg's modes by name."""
        from modecfg.modes import hooks

        hooks.install()
        _log().debug("PyTensor imported with modecfg's configuration and modes")


class _ImportHook:
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
            spec.loader = cast(Any, _Loader(spec.loader, self.bridge))
        return spec


class _Loader:
    def __init__(self, inner: Any, bridge: PyTensorBridge) -> None:
        self._inner = inner
        self._bridge = bridge

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self._bridge.detach()
        with self._bridge.pytensor_environment():
            self._inner.exec_module(module)
        self._bridge.after_import()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
