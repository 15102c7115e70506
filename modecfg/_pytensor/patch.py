"""What one change to PyTensor is (:class:`Patch`), and the features' own patches.

A feature that owns its contacts with PyTensor (``modecfg/testvalues/contacts.py``) declares its
patches beside their replacements and registers them here when modecfg is wired (or, where
they are all on demand, when the feature is first used: :func:`register_later`). This module
is light (it imports neither PyTensor nor numpy): declaring and registering a patch costs
``import modecfg`` nothing more; the engine (:mod:`modecfg._pytensor.patches`, loaded with
PyTensor) adds them to its one list, verifies, applies and undoes them with the core's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from modecfg._record import Record

__all__ = ["LATER", "REGISTERED", "Patch", "register", "register_all", "register_later"]


class Patch(Record):
    """One integration point: ``module.attr`` (``attr`` may be ``Class.method``) replaced."""

    name: str
    module: str
    attr: str
    # for a function or method, the replacement itself, called as replacement(original, *args)
    # (see state.Wrapper); for an object (kind), a factory original -> what takes its place
    replacement: Callable[..., Any]
    why: str
    bound_in: tuple[str, ...] = ()  # other modules binding the same object under the same name
    params: tuple[str, ...] | None = None  # leading parameters the replacement relies on
    kind: type | None = None  # the original's type when it is not a function
    on_demand: bool = False  # applied by enable(), when first needed, not by install()
    undo: Callable[[Any], None] | None = None  # for a change made in place: what takes it back
    needs: tuple[Patch, ...] = ()  # patches that must be on first: without them this one breaks PyTensor
    # a method read at every statement (change_flags' enter and exit): the replacement is put in
    # place as it is, a function of the method's own parameters that asks state.original(name)
    # for PyTensor's; it binds as fast as PyTensor's own method does
    plain: bool = False
    # what else the replacement changes in place, each undone with it (``undo``): listed, so that
    # doctor and ARCHITECTURE.md name every object of PyTensor's that modecfg touches
    also: tuple[str, ...] = ()

    @property
    def target(self) -> str:
        return f"{self.module}.{self.attr}"


REGISTERED: list[Patch] = []  # the features' patches, in the order registered
LATER: list[str] = []  # the modules of features whose contacts load at their first use


def register(*feature_patches: Patch) -> None:
    """A feature's patches, added to the one patch list that install(), status(), doctor and
    ARCHITECTURE.md's test read (now, or when the engine is loaded). Registered when modecfg is
    wired, before anything is installed; a name already registered is not listed twice."""
    for patch in feature_patches:
        if all(listed.name != patch.name for listed in REGISTERED):
            REGISTERED.append(patch)
    engine = sys.modules.get("modecfg._pytensor.patches")
    if engine is not None:
        engine.take_registered()


def register_later(module: str) -> None:
    """A feature whose contacts load at its first use: ``module`` (its contacts, a name written in
    modecfg's wiring, never one read from a setting) registers its patches when the feature loads
    it; whoever lists every patch loads it first (:func:`register_all`)."""
    if module not in LATER:
        LATER.append(module)


def register_all() -> None:
    """The features registered for later, loaded and registered now: for whoever lists the whole
    patch list (``status()``, doctor, the architecture test). Nothing is applied by loading."""
    import importlib

    for module in tuple(LATER):
        register(*importlib.import_module(module).PATCHES)
