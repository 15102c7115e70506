"""Where a value came from: :data:`PRECEDENCE`, :class:`Layer`, :class:`Origin`, :class:`Setting`.

:data:`PRECEDENCE` is the one statement of which value wins: the layers, lowest first, each with
the places it reads in their order. Resolution reads the sources in its order, the store keeps a
flag's candidates in it, explain and ``modecfg show`` print it, and the flag variable a worker is
given (``to_flags``) is its highest. Layers compare by their row (``Layer.ENV > Layer.RC``) and
equal their plain names (``Layer.RC == "rc"``), as click's ``ParameterSource`` does.

A source turns text from the outside world into ``Setting`` objects; nothing here validates or
merges.
"""

from __future__ import annotations

import enum

from modecfg._record import Record

__all__ = ["PRECEDENCE", "Layer", "Origin", "Rung", "Setting", "precedence_line", "rung"]


class Layer(enum.StrEnum):
    """The layers of the configuration; their order is :data:`PRECEDENCE`'s."""

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


class Rung(Record):
    """One layer of :data:`PRECEDENCE`: what it reads, lowest precedence first."""

    layer: Layer
    said: str  # the layer in the one-line order a user reads
    reads: tuple[str, ...] = ()  # flag variables, or the rc files read when no variable names any
    named_by: tuple[str, ...] = ()  # variables naming its files instead (each a path list, left to right)


PRECEDENCE: tuple[Rung, ...] = (
    Rung(Layer.DEFAULT, "defaults"),
    Rung(
        Layer.RC,
        "rc files",
        ("~/.theanorc", "~/.theanorc.txt", "~/.aesararc", "~/.pytensorrc", "~/.modecfg.toml"),
        ("THEANORC", "AESARARC", "PYTENSORRC", "MODECFGRC"),
    ),
    Rung(Layer.ENV, "flag variables", ("THEANO_FLAGS", "AESARA_FLAGS", "PYTENSOR_FLAGS", "MODECFG_FLAGS")),
    Rung(Layer.ASSIGNMENT, "assignments"),  # config.X = value, in modecfg.config or pytensor.config
    Rung(Layer.OVERRIDE, "overrides"),  # config.override / change_flags: this thread or task only
)
"""Which value wins, lowest precedence first: the only place the order is written."""

_RANK = {row.layer: i for i, row in enumerate(PRECEDENCE)}


def rung(layer: Layer) -> Rung:
    """The row of :data:`PRECEDENCE` for ``layer``."""
    return PRECEDENCE[_RANK[layer]]


def precedence_line() -> str:
    """The order in one line: ``defaults < rc files < THEANO_FLAGS < ... < overrides``."""
    parts = (row.reads if row.layer is Layer.ENV else (row.said,) for row in PRECEDENCE)
    return " < ".join(part for each in parts for part in each)


class Origin(Record):
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


class Setting(Record):
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

    @property
    def pytensor_name(self) -> str:
        """The name in PyTensor's spelling (``[cmodule] warn_no_version``: ``cmodule__warn_no_version``)."""
        return self.name.strip().replace(".", "__")
