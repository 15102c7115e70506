"""Locks a forked child gets anew.

``os.fork()`` copies a lock in whatever state it is: held by a thread of the parent that
does not exist in the child, it is held for good (Linux with Python 3.11 forks in
``multiprocessing`` by default). Every lock modecfg keeps is made by :func:`fork_safe`,
which replaces it with a fresh one in the child.
"""

from __future__ import annotations

import os
import weakref

# threading's Lock and RLock are these: importing threading costs start-up (~1 ms here)
from _thread import RLock
from _thread import allocate_lock as Lock
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Lock", "RLock", "fork_safe", "load"]

L = TypeVar("L")
_renewed: list[tuple[weakref.ref[Any], str, Callable[[], Any]]] = []


def fork_safe(owner: Any, attr: str, factory: Callable[[], L]) -> L:
    """Set ``owner.attr`` to ``factory()``, and to a new ``factory()`` in every forked child."""
    lock = factory()
    setattr(owner, attr, lock)
    _renewed.append((weakref.ref(owner), attr, factory))
    return lock


def _renew() -> None:
    alive = []
    for ref, attr, factory in _renewed:
        owner = ref()
        if owner is not None:
            setattr(owner, attr, factory())
            alive.append((ref, attr, factory))
    _renewed[:] = alive


# A module modecfg imports on first use (pydantic, at the first validation) is imported under this
# lock, and a fork waits for it: a child forked while another thread imports it would inherit
# the module's import lock held for good, and block at its own first validation.
_importing = RLock()


# Modules whose first use imports more (pydantic's names and internals are imported lazily, at
# their first access): that use is made under the lock too, once, as the import is.
_warmed: set[str] = set()


def _warm_pydantic(pydantic: Any) -> None:
    """Every name modecfg takes from pydantic, and the internals a first model, adapter and
    validation error import (``from pydantic import AfterValidator`` alone imports a submodule)."""
    for name in ("AfterValidator", "BaseModel", "BeforeValidator", "ByteSize", "ConfigDict", "Field",
                 "TypeAdapter", "ValidationError", "create_model"):  # fmt: skip
        getattr(pydantic, name)
    adapter = pydantic.TypeAdapter(pydantic.ByteSize)
    try:
        adapter.validate_python("not a size")
    except pydantic.ValidationError as exc:
        exc.errors(include_url=False)
    pydantic.create_model("_Warm", x=(int, pydantic.Field(default=0, ge=0)))


_WARM: dict[str, Callable[[Any], None]] = {"pydantic": _warm_pydantic}


def load(name: str) -> Any:
    """The module ``name``, imported now if it is not yet (and, for pydantic, what its first use
    imports): a fork waits while it is, so a child never inherits an import lock held for good."""
    import sys

    module = sys.modules.get(name)
    if (
        module is not None
        and getattr(getattr(module, "__spec__", None), "_initializing", False) is False
        and (name in _warmed or name not in _WARM)
    ):
        return module
    import importlib

    with _importing:
        module = importlib.import_module(name)
        if name in _WARM and name not in _warmed:
            _WARM[name](module)
            _warmed.add(name)
        return module


def _before_fork() -> None:
    _importing.acquire()


def _after_fork_in_parent() -> None:
    _importing.release()


def _after_fork_in_child() -> None:
    global _importing
    _importing = RLock()
    _renew()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child
    )
