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

__all__ = ["Lock", "RLock", "fork_safe"]

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


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew)
