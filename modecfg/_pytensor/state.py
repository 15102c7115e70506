"""What is patched now, and the wrapper a replaced function becomes: shared by the patch
machinery and the replacements (no imports of either)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from types import MethodType
from typing import Any

__all__ = [
    "HAND_OFF", "UNINSTALLED", "WALKED", "Method", "Wrapper", "applied", "current_view", "original",
    "originals",
]  # fmt: skip

# How PyTensor met modecfg's values: "handed over at import" (through the import hook), "copied
# after import" (PyTensor was imported first), or nothing yet: the import hand-off's state.
HAND_OFF: list[str] = []
# The attached config view (modecfg._pytensor.view's, which imports PyTensor), or None:
# view.attach and view.detach set it; every change_flags block reads it first (replacements).
current_view: Any = None
# The "host updates" record (applied's entry) under which every function made so far is known to
# be recorded: the one put on at PyTensor's import through modecfg's hook (PyTensor's import makes
# no function), or the one catch_up last looked for older functions under (modecfg._pytensor.hostwrites)
WALKED: list[Any] = [None]
# called when uninstall() has taken every patch off (modecfg._pytensor.hostwrites.uninstalled)
UNINSTALLED: list[Callable[[], None]] = []
# patch name -> what was done (see modecfg._pytensor.patches._Applied)
applied: dict[str, Any] = {}
# patch name -> the object it replaced; kept after uninstall: captured replacements call it
originals: dict[str, Any] = {}


def original(name: str) -> Any:
    """The object a patch replaced (while on, and after: a captured replacement needs it)."""
    return originals[name]


class Method:
    """What a patched method becomes: read on an instance, ``replacement(instance, original,
    ...)`` as a ``functools.partial`` (C: no frame of its own on the stack while it runs, which
    PyTensor's creation traces would keep; and cheaper than ``functools.partialmethod``'s
    ``__get__``). Read on the class, a callable
    taking the instance first. Module-level: a PyTensor class holding one still pickles."""

    __slots__ = ("__wrapped__", "replacement")

    def __init__(self, replacement: Callable[..., Any], original: Callable[..., Any]) -> None:
        self.replacement = replacement
        self.__wrapped__ = original

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return _Bound(self.replacement, instance, self.__wrapped__)

    def __call__(self, instance: Any, /, *args: Any, **kwargs: Any) -> Any:
        return self.replacement(instance, self.__wrapped__, *args, **kwargs)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by name, as the method it stands for (``Class.method``): unpickled, it is what
        that name holds in the loading process (modecfg's or PyTensor's own)."""
        return getattr, (_owner(self.__wrapped__), self.__wrapped__.__name__)

    def __repr__(self) -> str:
        return f"<modecfg method in place of {self.__wrapped__!r}>"


class _Bound(functools.partial):  # type: ignore[type-arg]
    """A patched method read on an instance (:class:`Method`): a ``functools.partial`` (no frame of
    its own) that pickles as the bound method it stands for does, ``getattr(instance, name)``, and
    answers ``__self__`` as one."""

    __slots__ = ()

    @property
    def __self__(self) -> Any:
        return self.args[0]

    def __reduce__(self) -> tuple[Any, ...]:
        instance, original = self.args[:2]
        return getattr, (instance, original.__name__)


def _owner(function: Any) -> Any:
    """The class ``function`` (a method PyTensor defines) is defined in, found by its names."""
    owner: Any = sys.modules[function.__module__]
    for part in function.__qualname__.split(".")[:-1]:
        owner = getattr(owner, part)
    return owner


class Wrapper:
    """What a patched function or method becomes: ``replacement(original, *args, **kwargs)``
    while its patch is on, ``original(*args, **kwargs)`` once it is off (one captured somewhere,
    as ``atexit`` keeps the profile printer, behaves as PyTensor's after ``uninstall()``).

    The replacement receives the original as its first argument, as wrapt's
    ``wrap_function_wrapper`` hands it over, so no replacement looks its original up. It binds
    to an instance as a function does (``VMLinker.accept``, ``Op.__call__``), and ``inspect``
    sees the original's signature (``__wrapped__``). These few lines are what modecfg needs of
    wrapt; a module-level class, so a PyTensor object holding one still pickles.
    """

    __wrapped__: Callable[..., Any]

    def __init__(self, name: str, replacement: Callable[..., Any], wrapped: Callable[..., Any]) -> None:
        functools.update_wrapper(self, wrapped)  # __name__, __qualname__, __doc__, __wrapped__
        self._patch = name
        self._replacement = replacement

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._patch in applied:
            return self._replacement(self.__wrapped__, *args, **kwargs)
        return self.__wrapped__(*args, **kwargs)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self if instance is None else MethodType(self, instance)

    def __reduce__(self) -> str:
        """Pickled by name, as the function it stands for (``pytensor.function``): unpickled, it
        is what that name holds in the loading process, with or without modecfg."""
        name: str = self.__dict__["__qualname__"]  # (the original's, copied by update_wrapper)
        return name

    def __repr__(self) -> str:
        return f"<modecfg wrapper of {self.__wrapped__!r} (patch {self._patch!r})>"
