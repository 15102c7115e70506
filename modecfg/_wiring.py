"""Where the layers are wired together: the one place that knows them all.

The PyTensor layer owns the patches; the behaviour behind some of them lives in the
layers above (float32 enforcement, modes, profiles, test values). This module plugs
that behaviour into the slots of :mod:`modecfg._pytensor.hooks` and starts the config
mirror. The plugs import their module on first use, so importing modecfg stays cheap.
"""

from __future__ import annotations

import atexit
import sys
from typing import Any

from modecfg._pytensor import PyTensorBridge, hooks
from modecfg._pytensor.patch import register, register_later
from modecfg._registry.modes import SHAPING_FLAGS
from modecfg.cache import contacts as cache
from modecfg.configuration import Change, config
from modecfg.configuration.flags import set_pytensor_names
from modecfg.device import contacts as device
from modecfg.linkers import contacts as linkers

__all__ = ["unwire", "wire"]

_bridge: PyTensorBridge | None = None
_unsubscribe: list[Any] = []  # what wire() subscribed, to be unsubscribed by unwire()


def _pytensor_names() -> frozenset[str]:
    """The flag names the installed PyTensor declares, read from its source when first asked
    (a setting names a flag modecfg does not declare: rare, so the reader loads then)."""
    from modecfg._pytensor.declared import names

    return names()


def _enforce_float32(fgraph: Any, mode: Any) -> None:
    from modecfg.checks.enforce import enforce

    enforce(fgraph, mode)


_kinds_said: list[bool] = []  # the class kinds were checked (the process's first compile)


def _say_missing_kinds(fgraph: Any, mode: Any) -> None:
    """At the process's first compile (a ``before_rewrites`` hook): the classes the float32 check
    and the linker names recognise are checked in the modules PyTensor has loaded (the "class
    kinds" contact, which the import no longer runs), and one that moved or went is said once:
    after an upgrade, the check would not recognise what it asks about."""
    if _kinds_said:
        return
    _kinds_said.append(True)
    from modecfg._pytensor.kinds import missing

    gone = missing(loaded_only=True)  # (it loads no module: numba's or DebugMode's stay unloaded)
    if gone:
        from modecfg._warn import warn
        from modecfg.errors import PyTensorIntegrationWarning

        warn(f"this PyTensor has no {', '.join(gone)}: the float32 check and the linker names no "
             "longer recognise them (modecfg doctor lists the contact)",
             PyTensorIntegrationWarning)  # fmt: skip


def _float64_checked() -> bool:
    from modecfg.checks.enforce import applies

    return applies()


def _get_mode(name: str | None) -> Any:
    from modecfg.modes.build import get_mode

    return get_mode(name)


def _modes_changed(change: Change) -> None:
    """A flag that shapes the built-in modes changed for the process: the modes built
    from the old value will not be asked for again."""
    from modecfg.modes.build import forget_modes

    forget_modes()


TEST_VALUES = "modecfg.testvalues.contacts"  # loaded when compute_test_value is first turned on


def _test_values_touched(change: object = None) -> None:
    """compute_test_value assigned or overridden, or PyTensor imported with it on: the test values'
    contacts are loaded (a process that never turns the flag on never loads them), registered
    and applied (:func:`modecfg.testvalues.contacts.touched`)."""
    from modecfg.testvalues import contacts

    register(*contacts.PATCHES)
    contacts.touched(change)


PROFILES = "modecfg.profiles.contacts"  # loaded before the process's first profile


def _profiles_used(change: Change | None = None) -> None:
    """modecfg is about to make a profile (``hooks.profile_made``), the profile flag was turned on
    (PyTensor's compiles make one then), or PyTensor was imported with it on: the profiles'
    contacts are loaded (a process that never profiles never loads them), registered, and their
    printer put on before PyTensor registers it with ``atexit`` (at its first profile)."""
    if change is not None and not change.value:
        return
    from modecfg.profiles import contacts

    register(*contacts.PATCHES)
    if "pytensor" in sys.modules:
        from modecfg._pytensor.patches import enable

        enable(contacts.PROFILE_PRINTER)


def _profiled_mode(mode: Any, name: Any) -> tuple[Any, Any]:
    """The ``profiled_mode`` slot: the feature's own, loaded at the first profiled compile (its
    profile is made by ``new_stats``, which puts the printer on first)."""
    from modecfg.profiles.contacts import profiled_mode

    return profiled_mode(mode, name)


def _profiles_at_exit() -> None:
    """At exit (registered at the import, so it runs after PyTensor's printer): the profiles no
    printer summarised yet. Where the profile printer went on before PyTensor's first profile,
    none is left; the profiles PyTensor made before it or without it (``profile="name"``,
    a program's own ``ProfileStats``), which PyTensor's printer leaves unprinted
    with the profile flag off, are summarised here, as modecfg's printer would have."""
    profiling = sys.modules.get("pytensor.compile.debug.profiling")
    if profiling is None or not getattr(profiling, "_atexit_print_list", None):
        return  # no profile: nothing of the feature is loaded
    from modecfg.profiles.session import print_at_exit

    print_at_exit()


def _pytensor_loaded() -> None:
    if config.compute_test_value != "off":
        _test_values_touched()
    if config.profile:
        _profiles_used()
    _say_unsafe_cache()


def _say_unsafe_cache() -> None:
    """A compile cache others may write is code others can run in this process: said once, when
    PyTensor is imported (``modecfg validate`` reports it as an error)."""
    from modecfg._files import unsafe_cache

    said = unsafe_cache(str(config.base_compiledir), config.origin("base_compiledir"))
    if said:
        from modecfg._warn import warn
        from modecfg.errors import CompileCacheWarning

        warn(said, CompileCacheWarning)


def wire() -> None:
    """Plug modecfg's behaviour into the PyTensor layer and start mirroring (once)."""
    global _bridge
    if _bridge is not None:
        return
    set_pytensor_names(_pytensor_names)
    hooks.before_rewrites.append(_say_missing_kinds)  # before the check that asks them
    hooks.before_rewrites.append(_enforce_float32)
    hooks.before_rewrites.append(cache.first_compile)  # the caches' layout checked, bounds at exit
    hooks.get_mode = _get_mode
    hooks.float64_checked = _float64_checked
    hooks.profiled_mode = _profiled_mode  # a profiled compile's mode, the feature's own
    hooks.profile_made = _profiles_used  # (the core's new_stats: the printer on before a profile)
    hooks.rewrite_mode = linkers.rewrite_mode  # linker=per_graph's choice, loaded at its first use
    hooks.after_import.append(_pytensor_loaded)
    register(*cache.PATCHES)  # the features that own their contacts (modecfg/cache/, ...)
    register(*device.PATCHES)
    register(*linkers.PATCHES)
    register_later(PROFILES)
    atexit.register(_profiles_at_exit)
    register_later(TEST_VALUES)
    _unsubscribe.append(config.subscribe(_test_values_touched, ["compute_test_value"], overrides=True))
    _unsubscribe.append(config.subscribe(_profiles_used, ["profile"], overrides=True))
    _unsubscribe.append(config.subscribe(_modes_changed, SHAPING_FLAGS))
    _bridge = PyTensorBridge(config)
    _bridge.attach()


def unwire() -> None:
    """The inverse of :func:`wire`: every integration point taken out of PyTensor (the config
    view included: ``pytensor.config`` is PyTensor's again, holding the values in effect), the
    import hook removed, the hooks emptied, the listeners unsubscribed. ``wire()`` plugs it
    all in again."""
    global _bridge
    from modecfg._pytensor import uninstall

    uninstall()
    if _bridge is not None:
        _bridge.detach()
        _bridge = None
    while _unsubscribe:
        _unsubscribe.pop()()
    for hook in (_say_missing_kinds, _enforce_float32, cache.first_compile):
        if hook in hooks.before_rewrites:
            hooks.before_rewrites.remove(hook)
    cache.forget_first_compile()
    if _pytensor_loaded in hooks.after_import:
        hooks.after_import.remove(_pytensor_loaded)
    hooks.get_mode = hooks.rewrite_mode = hooks.profiled_mode = hooks.profile_made = None
    atexit.unregister(_profiles_at_exit)
    hooks.float64_checked = None
