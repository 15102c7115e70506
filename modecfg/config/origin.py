"""Where a value came from: :class:`Layer`, :class:`Origin` and the raw :class:`Setting`.

A source turns text from the outside world into ``Setting`` objects; nothing here
validates or merges. Layers compare by precedence (``Layer.ENV > Layer.RC``) and equal
their plain names (``Layer.RC == "rc"``), as click's ``ParameterSource`` does.
"""

import enum
from typing import NamedTuple

__all__ = ["Layer", "Origin", "Setting"]


class Layer(enum.StrEnum):
    """The layers of the configuration, lowest precedence first."""

    DEFAULT = "default"
    RC = "rc"
    ENV = "env"
    ASSIGNMENT = "assignment"
    OVERRIDE = "override"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def __repr__(self) -> str:
        return repr(self.value)

    def __lt__(self, other: object) -> bool:
        return self.rank < Layer(other).rank  # type: ignore[arg-type]

    def __le__(self, other: object) -> bool:
        return self.rank <= Layer(other).rank  # type: ignore[arg-type]

    def __gt__(self, other: object) -> bool:
        return self.rank > Layer(other).rank  # type: ignore[arg-type]

    def __ge__(self, other: object) -> bool:
        return self.rank >= Layer(other).rank  # type: ignore[arg-type]


_RANK = {layer: i for i, layer in enumerate(Layer)}


class Origin(NamedTuple):
    """One place a value came from.

    ``source`` is the variable name (``"THEANO_FLAGS"``), the rc file path, or for an
    assignment or override the Python file that made it; ``line`` is the line in that
    file when there is one.
    """

    layer: Layer
    source: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        if self.source is None:
            return str(self.layer)
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        if self.layer in (Layer.RC, Layer.ENV):
            return where
        return f"{self.layer} at {where}"


DEFAULT_ORIGIN = Origin(Layer.DEFAULT)


class Setting(NamedTuple):
    """A raw ``key = raw`` pair exactly as one source wrote it, with its origin.

    ``raw`` is the text, or with ``typed`` a TOML value whose type must fit the flag. ``section`` is set
    for INI files: the flag is ``section.key`` (``key`` alone under ``[global]``), the
    section matched exactly and ``key`` without regard to case, as Theano did.
    """

    key: str
    raw: object
    origin: Origin
    section: str | None = None
    typed: bool = False  # a typed value (TOML): its type must match the flag's
    quoted: bool = False  # a flag string's value written (partly) in quotes: its text is meant as it is

    @property
    def name(self) -> str:
        """The flag name as written, section and option joined with '.'."""
        if self.section is None or self.section == "global":
            return self.key
        return f"{self.section}.{self.key}"
