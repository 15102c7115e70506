"""What a flag is: name, type, default, choices, doc; declaring one; the set of them.

A flag is one :func:`flag` call (every one is in :mod:`modecfg.configuration.declarations`). Its
``type`` is a plain annotation (``bool``, ``int``, ``float``, ``str``, ``Path``, a ``Literal``
of choices, optionally ``| None``) and, for numbers, a :class:`Range`. From these
declarations :mod:`modecfg.configuration.schema` builds the pydantic validators and the typed
pydantic model lazily, so that reading a value never pays for importing pydantic.

``pytensor=True`` marks flags PyTensor 3 also understands; ``pytensor.config`` reads them
from modecfg under the ``__`` spelling. ``pytensor_since`` / ``pytensor_until`` bound the
PyTensor releases that have the flag (within the supported 3.x range): the mirror leaves a
flag out where the installed PyTensor does not know it. ``fixed=True`` marks flags PyTensor
reads once and never again: changing one after PyTensor has used it is a
:class:`~modecfg.errors.ReadOnlyFlagError`.

Obsolete Theano / Aesara flags are not declared as flags but in :mod:`modecfg.configuration.compat`.

A flag the installed PyTensor declares and modecfg does not (``gcc_version_str``) is
PyTensor's alone: a setting naming it is handed to PyTensor as written
(``Resolution.for_pytensor``; :func:`may_be_pytensors` tells such a name from an unknown one
without importing PyTensor), and ``pytensor.config`` reads and sets it as PyTensor would.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, Sequence, ValuesView
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from modecfg._record import Record

if TYPE_CHECKING:
    from modecfg.configuration.protocol import ConfigLike

__all__ = [
    "FLAGS",
    "Flag",
    "FlagSet",
    "Lazy",
    "OneOf",
    "Range",
    "canonical",
    "declared",
    "flag",
    "may_be_pytensors",
    "set_pytensor_names",
    "written_name",
]


class Range(Record):
    """Numeric bounds of a flag (each optional, inclusive unless named ``gt``/``lt``)."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None

    def describe(self) -> str:
        parts = []
        if self.gt is not None:
            parts.append(f"> {self.gt:g}")
        if self.ge is not None:
            parts.append(f">= {self.ge:g}")
        if self.le is not None:
            parts.append(f"<= {self.le:g}")
        return " and ".join(parts)


class Lazy(Record):
    """A default computed when first read, from the rest of the configuration."""

    compute: Callable[[ConfigLike], Any]
    description: str

    def __str__(self) -> str:
        return f"<{self.description}>"


class OneOf(tuple[Any, ...]):
    """A flag's type written as its choices: ``OneOf("low", "high")`` stands for
    ``typing.Literal["low", "high"]``, which :attr:`Flag.type` makes when first asked (validation
    reads the choices, not the Literal: making one costs ~16 us, a fifth of a millisecond of every
    import for the 15 flags declared so)."""

    __slots__ = ()

    def __new__(cls, *choices: Any) -> OneOf:
        return super().__new__(cls, choices)

    def __repr__(self) -> str:
        return f"OneOf{tuple.__repr__(self)}"


class Flag:
    """One declared flag. ``name`` is dotted (``traceback.limit``).

    ``choices_from`` asks a registry (modes, linkers) for the valid values; ``check``
    runs after type validation and returns the (normalised) value or raises ValueError
    with a message for the user; ``describe`` says what is valid when the type
    alone does not. ``reaches`` names what the value reaches outside Python (the C++
    compiler, the linker, a path, a subprocess): data modecfg did not write (a NaN-guard
    dump) does not set such a flag unless the user says so. ``objects`` admits, as they are,
    objects that are not text (PyTensor's ``change_flags(mode=<a Mode>)`` passes a Mode).
    """

    __slots__ = (
        "_type", "attr", "base", "check", "choices_from", "default", "describe", "doc", "fixed",
        "is_lazy", "literals", "name", "objects", "optional", "pytensor", "pytensor_name",
        "pytensor_since", "pytensor_takes", "pytensor_until", "range", "reaches", "section",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        type: Any,
        default: Any,
        doc: str,
        *,
        pytensor: bool = False,
        pytensor_since: tuple[int, int] | None = None,
        pytensor_until: tuple[int, int] | None = None,
        fixed: bool = False,
        range: Range | None = None,
        choices_from: Callable[[], Sequence[str]] | None = None,
        check: Callable[[Any], Any] | None = None,
        describe: str | None = None,
        reaches: str = "",
        objects: Callable[[Any], bool] | None = None,
        pytensor_takes: Callable[[Any], bool] | None = None,
    ) -> None:
        self.name = name
        # Which of the flag's values PyTensor's own parameter takes (None: all of them). The
        # others are modecfg's alone: PyTensor keeps what it holds (linker=per_graph; a
        # compiledir of None, which PyTensor works out itself).
        self.pytensor_takes = pytensor_takes
        self._type = type
        self.default = default
        self.doc = doc
        self.pytensor = pytensor
        self.pytensor_since = pytensor_since
        self.pytensor_until = pytensor_until
        self.fixed = fixed
        self.range = range
        self.choices_from = choices_from
        self.check = check
        self.describe = describe
        self.reaches = reaches
        self.objects = objects
        # Facts worked out once: validation reads them on every call, the bridge at each flag.
        self.is_lazy = isinstance(default, Lazy)  # a default computed when first read
        self.pytensor_name = name.replace(".", "__")  # its name in pytensor.config
        kind = builtins.type(type)
        if kind is builtins.type:  # bool, int, str, Path: most flags' (nothing to work out)
            self.base, self.optional, self.literals = type, False, _NO_LITERALS
        else:
            self.base = _strip_none(type)
            self.optional = _allows_none(type)
            literals = _literal_args(type)
            self.literals = frozenset(literals) if literals else _NO_LITERALS
        # Interned, so that CPython's specialised attribute reads find them by identity.
        if "." in name:
            *section, attr = name.split(".")
            self.attr = sys.intern(attr)
            self.section = tuple([sys.intern(part) for part in section])
        else:
            self.attr, self.section = sys.intern(name), ()

    def __repr__(self) -> str:
        return f"Flag({self.name!r}, default={self.default!r})"

    @property
    def type(self) -> Any:
        """The flag's type (a :class:`OneOf` declared becomes the ``Literal`` it stands for)."""
        tp = self._type
        if type(tp) is OneOf:
            tp = self._type = Literal[tuple(tp)]
        return tp

    def in_pytensor(self, version: tuple[int, int] | None) -> bool:
        """True if PyTensor ``version`` (major, minor) has this flag (None: unknown, assume so)."""
        if not self.pytensor:
            return False
        if version is None:
            return True
        if self.pytensor_since is not None and version < self.pytensor_since:
            return False
        return self.pytensor_until is None or version < self.pytensor_until

    def pytensor_releases(self) -> str:
        """The PyTensor releases that have this flag, in words ('' for every 3.x)."""
        since, until = self.pytensor_since, self.pytensor_until
        if since and until:
            return f"PyTensor {since[0]}.{since[1]} to {until[0]}.{until[1] - 1}"
        if since:
            return f"PyTensor {since[0]}.{since[1]} and later"
        if until:
            return f"PyTensor before {until[0]}.{until[1]}"
        return ""

    def choices(self) -> tuple[str, ...]:
        """The valid values of an enumerated flag, else ``()``."""
        if self.choices_from is not None:
            return tuple(self.choices_from())
        args = _literal_args(self._type)
        return tuple(str(a) for a in args)

    def kind(self) -> str:
        """A short human description of the type: 'boolean', 'integer >= 0', ..."""
        if self.describe is not None:
            return self.describe
        choices = self.choices()
        if choices:
            return "one of " + ", ".join(choices)
        base = _strip_none(self.type)
        name = {bool: "boolean", int: "integer", float: "number", str: "string", Path: "path"}.get(
            base, str(base)
        )
        if self.range is not None:
            name += " " + self.range.describe()
        if _allows_none(self.type):
            name += " or None"
        return name


_NO_LITERALS: frozenset[Any] = frozenset()  # the literals of a flag that has none (most): one object


# A plain class (bool, int, str, Path: most flags' types) has no arguments; asked for them, the
# interpreter would write an AttributeError's message and drop it (339 of them at the import)
def _literal_args(tp: Any) -> tuple[Any, ...]:
    if type(tp) is OneOf:
        return tuple(tp)
    base = _strip_none(tp)
    if type(base) is not type and getattr(base, "__origin__", None) is Literal:
        return tuple(base.__args__)
    return ()


def _allows_none(tp: Any) -> bool:
    # (Literal["a", None] holds None, not its type; so does OneOf("a", None))
    return type(tp) not in (type, OneOf) and type(None) in getattr(tp, "__args__", ())


def _strip_none(tp: Any) -> Any:
    if type(tp) in (type, OneOf):
        return tp
    args = getattr(tp, "__args__", None)
    if args and _allows_none(tp):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp


FLAGS: dict[str, Flag] = {}  # the flags declared in this process


class FlagSet(Mapping[str, Flag]):
    """The flags declared at one moment, as a value: read-only (a later :func:`flag` call
    makes a new FlagSet). Each Config reads, resolves and looks names up against its own, and
    keeps derived tables in its ``memo``. Two FlagSets are equal only if they are the same
    object (one moment's)."""

    __slots__ = ("_flags", "memo")

    def __init__(self, flags: Mapping[str, Flag]) -> None:
        self._flags = dict(flags)
        self.memo: dict[str, Any] = {}  # tables derived from these names (modecfg.configuration.compat)

    def __getitem__(self, name: str) -> Flag:
        return self._flags[name]

    def get(self, name: str, default: Flag | None = None) -> Flag | None:  # type: ignore[override]
        return self._flags.get(name, default)  # a plain dict's get: a hot path

    def __contains__(self, name: object) -> bool:
        return name in self._flags

    def __iter__(self) -> Iterator[str]:
        return iter(self._flags)

    def __len__(self) -> int:
        return len(self._flags)

    # the dict's own views (Mapping's would look each name up again, through __getitem__)
    def keys(self) -> KeysView[str]:
        return self._flags.keys()

    def values(self) -> ValuesView[Flag]:
        return self._flags.values()

    def items(self) -> ItemsView[str, Flag]:
        return self._flags.items()

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<FlagSet of {len(self)} flags>"


_declared: list[FlagSet] = []  # the FlagSet of FLAGS as it is now, once asked for


def canonical(name: str) -> str:
    """``name`` with ``__`` turned into ``.`` and surrounding blanks removed (the spelling rule
    every reader of a written name applies first; :mod:`~modecfg.configuration.compat` says
    what a name that is not a flag's is)."""
    return name.strip().replace("__", ".")


def written_name(name: str, section: str | None = None) -> str:
    """``name`` as its user wrote it: in an INI file's ``section`` (other than ``global``), the
    section's name, a dot and the option's."""
    return name if section in (None, "global") else f"{section}.{name}"


def declared() -> FlagSet:
    """The flags declared now, as a value (see :class:`FlagSet`)."""
    if not _declared:
        _declared.append(FlagSet(FLAGS))
    return _declared[0]


def flag(name: str, type: Any, default: Any, doc: str, **kwargs: Any) -> Flag:
    """Declare a flag. Declaring a name twice is a programming error."""
    if name in FLAGS:
        raise RuntimeError(f"flag {name!r} declared twice")
    spec = Flag(name, type, default, " ".join(doc.split()), **kwargs)
    FLAGS[name] = spec
    _declared.clear()
    return spec


_pytensor_names: list[Callable[[], frozenset[str]]] = []


def set_pytensor_names(names: Callable[[], frozenset[str]]) -> None:
    """Tell this layer how to learn the names the installed PyTensor declares without importing
    it (:mod:`modecfg._pytensor.declared`; wired at ``import modecfg``)."""
    _pytensor_names[:] = [names]


def may_be_pytensors(name: str) -> bool:
    """Whether the installed PyTensor declares a flag ``name`` (dotted): a setting naming it
    that modecfg does not declare is PyTensor's, handed to it as written, not refused. The same
    answer before and after that import: it reads PyTensor's source, not what was imported."""
    return bool(_pytensor_names) and name in _pytensor_names[0]()
