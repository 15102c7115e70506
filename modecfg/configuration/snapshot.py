"""Configuration that travels: a driver's effective configuration, applied in a worker.

A worker process (``multiprocessing`` with spawn, a process pool, a cluster worker)
reads its own environment and rc files, which may disagree with the driver's, and
knows nothing of the overrides active where a task was submitted. A
:class:`Snapshot` carries every value some layer set in the driver's context,
overrides included, each with where it came from; the worker applies it:

* ``with snapshot.override():`` (or ``snapshot.run(func, *args)``) as a scoped override, for a
  task in a shared worker;
* ``snapshot.install()`` by assignment, for a process that works for one driver
  (``ProcessPoolExecutor(initializer=snapshot.install)``).

Flags PyTensor uses once per process (``compiledir``, ``cxx``, ...) cannot be scoped:
both ways assign them, which works until the worker's PyTensor has used them and then
raises :class:`~modecfg.errors.ReadOnlyFlagError` if the driver's value differs.
A snapshot holds plain values (strings, numbers, booleans, None) and is checked again
when applied, so a tampered one is refused with the error a bad value gets.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from modecfg._record import Record
from modecfg.configuration.flagstring import format_flags
from modecfg.configuration.origin import Layer, Origin
from modecfg.configuration.store import process_wide
from modecfg.errors import FlagValueError

if TYPE_CHECKING:
    from modecfg.configuration.overrides import Override
    from modecfg.configuration.protocol import ConfigLike

__all__ = ["Snapshot", "take"]

T = TypeVar("T")
_PLAIN = (str, int, float, bool, type(None))


class Snapshot(Record):
    """The values some layer set in one context of one process, with their origins."""

    values: tuple[tuple[str, Any, Origin], ...]
    process: str  # "host:pid" of the process that took it

    def to_flags(self) -> str:
        """The same values as a flag string (``MODECFG_FLAGS`` for a child process)."""
        return format_flags((name, value) for name, value, _ in self.values)

    def override(self, config: ConfigLike | None = None) -> Override:
        """The values as a scoped override of ``config`` (the process-wide one by default).

        Every value is checked first, so a bad one changes nothing; flags that cannot be
        scoped are then assigned (see the module's doc).
        """
        cfg = _config(config)
        checked = self._checked(cfg)
        scoped: dict[str, tuple[Any, Origin]] = {}
        for name, value, origin in checked:
            if cfg.flags[name].fixed:
                if cfg[name] != value:
                    cfg.set(name, value, source=_where(origin, self.process))
            else:
                scoped[name] = (value, Origin(Layer.OVERRIDE, _where(origin, self.process)))
        override: Override = cfg.override_from(scoped)
        return override

    def run(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``func(*args, **kwargs)`` under this snapshot (what a submitted task calls)."""
        with self.override():
            return func(*args, **kwargs)

    def install(self, config: ConfigLike | None = None) -> None:
        """Assign every value: this process works as the one the snapshot came from.
        Every value is checked first, so a bad one changes nothing."""
        cfg = _config(config)
        for name, value, origin in self._checked(cfg):
            cfg.set(name, value, source=_where(origin, self.process))

    def _checked(self, cfg: ConfigLike) -> list[tuple[str, Any, Origin]]:
        """The values, typed; a FlagValueError for what no snapshot holds (a wrong shape, an
        unknown flag, a value that is not plain or not valid), before anything is applied."""
        process = self.process if isinstance(self.process, str) else "?"
        if not isinstance(self.values, tuple | list):
            raise FlagValueError(
                f"a snapshot from {process} holds a {type(self.values).__name__}, not values"
            )
        out = []
        for entry in self.values:
            if not (isinstance(entry, tuple | list) and len(entry) == 3 and isinstance(entry[0], str)):
                raise FlagValueError(
                    f"a snapshot from {process} holds {_short(entry)}, not a (flag, value, origin) triple"
                )
            name, value, origin = entry
            if name not in cfg.flags:
                raise FlagValueError(f"a snapshot from {process} sets unknown flag {name!r}", flag=name)
            if not isinstance(origin, Origin):
                raise FlagValueError(
                    f"a snapshot from {process} gives {name} the origin {_short(origin)}, not an Origin",
                    flag=name,
                )
            if not isinstance(value, _PLAIN):
                raise FlagValueError(
                    f"a snapshot from {process} gives {name} a {type(value).__name__}; "
                    "snapshots hold strings, numbers, booleans and None",
                    flag=name,
                )
            out.append((name, cfg.validated(name, value, origin), origin))
        return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _plain(value: Any) -> Any:
    """A value as a snapshot holds it: paths as text (checked again when applied)."""
    return value if isinstance(value, _PLAIN) else str(value)


def _config(config: ConfigLike | None) -> ConfigLike:
    return config if config is not None else process_wide()


def _where(origin: Origin, process: str) -> str:
    """``driver.py:12 (override in host:1234)``: where the value was set, and in which process."""
    where = origin.source or "?"
    if origin.line is not None:
        where += f":{origin.line}"
    return f"{where} ({origin.layer} in {process})"


def take(config: ConfigLike) -> Snapshot:
    values = tuple((name, _plain(value), origin) for name, (value, origin) in config.changed().items())
    import socket

    return Snapshot(values, f"{socket.gethostname()}:{os.getpid()}")
