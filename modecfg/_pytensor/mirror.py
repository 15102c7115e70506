"""The bridge at PyTensor's import: the hand-off of the flags PyTensor fixes while it is imported.

PyTensor reads its flags once, when it is imported, and fixes several of them for the
life of the process. So the bridge meets PyTensor at its import: a meta-path hook
(:mod:`modecfg._pytensor.importhook`, loaded only where PyTensor comes after modecfg)
wraps the loading of the ``pytensor`` package and hands it modecfg's resolved values
through ``PYTENSOR_FLAGS`` (with ``PYTENSORRC`` pointing at nothing, since modecfg has
read the rc files already), then restores the environment and removes itself. Reading
the configuration never imports PyTensor. (Why this door and not the view: see
:mod:`modecfg._pytensor.binding`.)

Once PyTensor is loaded, the bridge asks :func:`modecfg._pytensor.patches.install` to put
modecfg's integration points in place; one of them is the config view
(:mod:`modecfg._pytensor.view`), which answers ``pytensor.config`` from modecfg's store and
hands a flag PyTensor fixes over at PyTensor's first read of it. Nothing here copies values
into PyTensor: a flag PyTensor has already fixed refuses a change (``check_writable``, a
``ReadOnlyFlagError``), and if PyTensor was imported before modecfg, the values it fixed
already are reported with a warning (``sync``).

Nothing here may make ``import pytensor`` fail: every step of modecfg's own is guarded,
and a failure is logged and warned about.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from modecfg._pytensor.binding import binding, pytensor_accepts
from modecfg._pytensor.state import HAND_OFF
from modecfg._pytensor.version import pytensor_version
from modecfg.configuration.flags import FLAGS, Flag
from modecfg.errors import ConfigError, ModecfgWarning, PyTensorIntegrationWarning, ReadOnlyFlagError

if TYPE_CHECKING:
    import logging

    from modecfg._pytensor.importhook import ImportHook
    from modecfg.configuration.live import Change, Config

__all__ = ["PyTensorBridge", "pytensor_accepts"]


def _log() -> logging.Logger:
    import logging  # not at import: reading the config stays cheap

    return logging.getLogger("modecfg.bridge")


_said_missing: set[str] = set()


def _say_unreadable(exc: Exception) -> None:
    """The one message of a configuration mistake, whichever of PyTensor and modecfg is imported
    first: the error, its source, the did-you-mean (what follows at this import knows it was
    said, and says nothing more)."""
    _log().warning("modecfg: %s; PyTensor runs with its own configuration until that is fixed "
                   "(reading modecfg.config raises it)", exc)  # fmt: skip


class PyTensorBridge:
    """Keeps ``pytensor.config`` in step with one Config (the process-wide one).

    It uses the Config's public hooks only: ``subscribe`` to hear of values being
    loaded, assigned and reset, ``guard`` to refuse an assignment PyTensor can no
    longer take, and ``layers`` to read what the layers set.
    """

    def __init__(self, config: Config) -> None:
        self.config: Config | None = config
        self._hook: ImportHook | None = None
        self._detach: list[Callable[[], None]] = []

    # -- set-up --------------------------------------------------------------------

    def attach(self) -> None:
        """Start: now if PyTensor is loaded, else when it is imported."""
        cfg = self.config
        assert cfg is not None
        if not self._detach:
            # what _changed says of: a flag PyTensor fixes first, one only some releases have
            heard = [
                s.name
                for s in FLAGS.values()
                if s.pytensor and (s.fixed or s.pytensor_since is not None or s.pytensor_until is not None)
            ]
            self._detach = [cfg.subscribe(self._changed, heard), cfg.guard(self.check_writable)]
        if "pytensor" in sys.modules:
            loaded = cfg.loaded  # read already: say what PyTensor fixed now (else at the first read)
            try:  # read now (the view reads it next): a mistake in it is said here, as in the other order
                cfg._cfg_store.ready_up()
            except ConfigError as exc:
                _say_unreadable(exc)
            if not HAND_OFF:
                HAND_OFF[:] = ["read through the view after import (PyTensor was imported before modecfg)"]
            self.after_import()
            if loaded:
                self.sync()
            return
        if self._hook is None:  # (the hook's module loads only where PyTensor is imported later)
            from modecfg._pytensor.importhook import ImportHook

            self._hook = ImportHook(self)
            sys.meta_path.insert(0, self._hook)

    def detach(self) -> None:
        """Stop mirroring and stop waiting for PyTensor's import."""
        self._unhook()
        for undo in self._detach:
            undo()
        self._detach = []

    def _unhook(self) -> None:
        if self._hook is not None and self._hook in sys.meta_path:
            sys.meta_path.remove(self._hook)
        self._hook = None

    def pytensor_flags(self) -> str:
        """PYTENSOR_FLAGS for PyTensor's import: every mirrored value some layer set."""
        cfg = self.config
        assert cfg is not None
        found = self._set_values(cfg)
        self._say_missing([spec for spec, _ in found])
        pairs = [(spec.pytensor_name, value) for spec, value in found if pytensor_accepts(spec, value)]
        # PyTensor's own flags (modecfg does not declare them): as written, as without modecfg
        pairs += [(setting.pytensor_name, setting.raw) for setting in cfg.for_pytensor]
        from modecfg.configuration.flagstring import format_flags

        return format_flags(pairs)

    @staticmethod
    def _say_missing(specs: list[Flag]) -> None:
        """A flag set for PyTensor that this PyTensor release does not have is said, not dropped silently."""
        version = pytensor_version()
        for spec in specs:
            if spec.pytensor and not spec.in_pytensor(version) and spec.name not in _said_missing:
                _said_missing.add(spec.name)
                assert version is not None
                from modecfg._warn import warn  # (loaded where there is something to say)

                warn(
                    f"{spec.name} is a {spec.pytensor_releases()} flag and this is PyTensor "
                    f"{version[0]}.{version[1]}: the value set has no effect",
                    ModecfgWarning,
                )

    @staticmethod
    def _set_values(cfg: Config) -> list[tuple[Flag, Any]]:
        """Mirrored flags that a layer below the overrides sets, with their values."""
        found = []
        for spec in FLAGS.values():
            if spec.pytensor:
                layers = cfg.layers(spec.name)
                if layers:
                    found.append((spec, layers[-1].value))
        return found

    @contextmanager
    def pytensor_environment(self) -> Iterator[None]:
        """PYTENSOR_FLAGS and PYTENSORRC set for PyTensor's import, restored afterwards."""
        saved = {k: os.environ.get(k) for k in ("PYTENSOR_FLAGS", "PYTENSORRC")}
        try:
            flags = self.pytensor_flags()
        except Exception as exc:  # a bad rc file must not break the user's import
            _say_unreadable(exc)
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
        """PyTensor was imported before modecfg: say which values it has fixed already (a
        flag handed over that PyTensor read at its import). The others reach it through the
        view: answered by it, or handed over at PyTensor's first read."""
        cfg = self.config
        if cfg is None or "pytensor" not in sys.modules:
            return
        found = self._set_values(cfg)
        self._say_missing([spec for spec, _ in found])
        for spec, value in found:
            self._say_fixed(spec, value)

    def _say_fixed(self, spec: Flag, value: Any) -> None:
        """A value for a flag PyTensor fixed at its own import, before modecfg's: said once."""
        param = self._param(spec)
        if param is None or binding(spec, param) != "handed over" or not hasattr(param, "val"):
            return
        if pytensor_accepts(spec, value) and str(param.val) != str(value):
            from modecfg._warn import warn  # (loaded where there is something to say)

            warn(
                f"pytensor was imported before modecfg and fixed {spec.pytensor_name}="
                f"{param.val!r}; {spec.name}={value!r} applies to modecfg's own compiles "
                "only. Import modecfg before pytensor to avoid this.",
                ModecfgWarning,
            )

    def _changed(self, change: Change) -> None:
        """A value set for a flag this PyTensor release does not have is said, and one read from
        the sources that PyTensor, imported first, has fixed already (the value itself reaches
        PyTensor through the view, never by a copy)."""
        if "pytensor" not in sys.modules or change.kind not in ("loaded", "assigned"):
            return
        spec = FLAGS[change.name]
        if not spec.pytensor:
            return
        self._say_missing([spec])
        if change.kind == "loaded":
            self._say_fixed(spec, change.value)

    # -- what the Config's hooks call ----------------------------------------------

    def _param(self, spec: Flag) -> Any:
        module = sys.modules.get("pytensor")
        if module is None:
            return None
        cfg = getattr(module, "config", None)
        param = getattr(cfg, "_config_var_dict", {}).get(spec.pytensor_name)
        return getattr(param, "original", param)  # the view's proxy: PyTensor's own parameter

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
        if str(current) != str(value):
            raise ReadOnlyFlagError(
                f"{spec.name} cannot change to {value!r}: PyTensor already uses {current!r} for "
                f"this process. Set it before PyTensor is first used: in MODECFG_FLAGS, an rc "
                f"file, or by assignment before importing pytensor",
                flag=spec.name,
            )

    def after_import(self) -> None:
        """PyTensor is loaded: modecfg's integration points go in (those that verify)."""
        from modecfg._pytensor.hooks import hooks

        try:
            from modecfg._pytensor.patches import install  # (it imports the replacements too)

            install()
            for callback in hooks.after_import:
                callback()
        except ConfigError as exc:  # the user's configuration: said once already, by attach or the hook
            _log().debug("integration left off: the configuration cannot be read (%s)", exc)
            return
        except Exception as exc:  # never the user's import: say it and carry on without
            _log().exception("modecfg could not integrate with PyTensor")
            from modecfg._warn import warn  # (loaded where there is something to say)

            warn(f"modecfg could not integrate with PyTensor ({exc!r}); PyTensor runs as it is",
                 PyTensorIntegrationWarning)  # fmt: skip
            return
        _log().debug("PyTensor imported with modecfg's configuration and modes")
