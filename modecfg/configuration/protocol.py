"""What the modules below the facade ask of a configuration, as an interface.

:class:`~modecfg.configuration.live.Config` is the facade over the store, the overrides and the
snapshots; they in turn hand configurations around (a lazy default computes from one, an
override returns one from ``with``, a snapshot applies itself to one). They name it by this
protocol, so that no module of the package imports the facade it sits below: the imports
of ``modecfg/config`` form no circle, counting those made only for type checking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from modecfg.configuration.origin import Origin

if TYPE_CHECKING:
    import contextvars

__all__ = ["ConfigLike", "StoreLike"]


class ConfigLike(Protocol):
    """A configuration: flag values by name, with their origins; validated changes."""

    def __getitem__(self, name: str) -> Any: ...

    def __getattr__(self, name: str) -> Any: ...  # flags and sections, read as attributes

    def origin(self, name: str) -> Origin: ...

    def changed(self) -> dict[str, tuple[Any, Origin]]: ...

    @property
    def flags(self) -> Mapping[str, Any]: ...  # a FlagSet (modecfg.configuration.flags imports this module)

    def validated(self, name: str, value: Any, origin: Origin | None = None) -> Any: ...

    def set(self, name: str, value: Any, *, source: str | None = None) -> None: ...

    def reset(self, name: str) -> None: ...

    def override_from(self, items: Mapping[str, tuple[Any, Origin]]) -> Any: ...

    def _assign(self, name: str, value: Any, origin: Origin | None) -> None: ...


class StoreLike(Protocol):
    """What the descriptors on a Config's section classes ask of its store
    (:class:`~modecfg.configuration.store.Store`)."""

    @property
    def held(self) -> Mapping[str, Any]: ...  # flag -> its Held (modecfg.configuration.sections)

    def var_of(self, name: str) -> contextvars.ContextVar[Any]: ...

    def base(self, name: str) -> Any: ...

    def ready_up(self) -> None: ...

    def uninstall(self, name: str) -> None: ...
