"""Names a package hands out on first use (PEP 562): every module imported costs start-up,
and a name some programs never use should not cost the others.

Each such name is written in the package's ``if TYPE_CHECKING:`` block, as type checkers
need it anyway (``from modecfg.nanguard.dump import Dump as Dump``: the ``as`` says it is
re-exported), and listed in its ``__all__`` like every name it exports. :func:`attach` makes
the package's ``__getattr__``, which reads the block from the package's source at its first
call (a name first asked for, or ``dir``): reading the blocks at import cost ``import modecfg``
~2 M instructions, 4% of its cost. A test holds ``__all__`` and the blocks to each other.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["LazyNames", "attach", "table"]


class LazyNames:
    """A package's ``__getattr__``: ``name`` is the attribute ``name`` of the module the table
    gives for it, or that module itself when it is the package's own submodule ``name``. The
    value is then kept in the package, so that later reads are plain. ``dir`` is the
    package's ``__dir__``. The table is read from ``path``, the package's source, when first
    needed (two threads asking at once read it twice, and keep the same)."""

    __slots__ = ("_table", "hidden", "package", "path")

    def __init__(self, package: str, path: str, hidden: Collection[str] = ()) -> None:
        self.package = package
        self.path = path
        self.hidden = frozenset(hidden)
        self._table: Mapping[str, str] | None = None

    @property
    def table(self) -> Mapping[str, str]:
        """name -> the module that defines it (:func:`table` of the package's source)."""
        if self._table is None:
            with open(self.path, encoding="utf-8") as file:
                self._table = table(self.package, file.read())
        return self._table

    def __call__(self, name: str) -> Any:
        # A lazy name is in the package's __all__ (or hidden); any other is missing without the
        # block being read: importlib asks for a submodule before ``from package import it``
        # imports it, and copy, pickle and pydoc ask for dunders
        if name not in self.hidden and name not in getattr(sys.modules[self.package], "__all__", ()):
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        path = self.table.get(name)
        if path is None:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        import importlib

        module = importlib.import_module(path)
        value = module if path == f"{self.package}.{name}" else getattr(module, name)
        setattr(sys.modules[self.package], name, value)
        return value

    def dir(self) -> list[str]:
        return sorted({*vars(sys.modules[self.package]), *self.table})


_GUARDS = ("if TYPE_CHECKING:", "if _TYPE_CHECKING:")


def table(package: str, source: str) -> dict[str, str]:
    """name -> the module that defines it, for each line ``from x import y as y`` of ``source``'s
    ``if TYPE_CHECKING:`` block (``from <package> import x``: the submodule ``<package>.x``).

    The block is read line by line, one import a line, as written (not with :mod:`ast`, whose
    import costs more than the rest); any other line in it is refused, so that a name is never
    silently left out."""
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if line.split("#")[0].rstrip() in _GUARDS), None)
    if start is None:
        raise ValueError(f"{package}: no 'if TYPE_CHECKING:' block to read the lazy names from")
    found: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        text = line.split("#")[0].strip()
        if not text:
            continue
        words = text.split()
        if len(words) == 4 and words[0] == "from" and words[2] == "import":
            raise ValueError(f"{package}: write 'from {words[1]} import {words[3]} as {words[3]}' "
                             "(the 'as' re-exports it to type checkers)")  # fmt: skip
        if len(words) != 6 or words[0] != "from" or words[2] != "import" or words[4] != "as":
            raise ValueError(f"{package}: its TYPE_CHECKING block holds more than 'from x import y as y' "
                             f"lines: {text!r}")  # fmt: skip
        module, name, alias = words[1], words[3], words[5]
        if module.startswith(".") or not name.isidentifier():
            raise ValueError(f"{package}: its TYPE_CHECKING block holds more than 'from x import y as y' "
                             f"lines: {text!r}")  # fmt: skip
        if alias != name:
            raise ValueError(f"{package}: write 'from {module} import {name} as {name}' "
                             "(the 'as' re-exports it to type checkers)")  # fmt: skip
        found[name] = f"{package}.{name}" if module == package else module
    return found


def attach(package: str, path: str, *, hidden: Collection[str] = ()) -> LazyNames:
    """The ``__getattr__`` of ``package``, its ``__init__`` at ``path`` (nothing is read yet):
    the names of its block that its ``__all__`` lists, and ``hidden``, handed out but not offered
    (such as an extra's)."""
    return LazyNames(package, path, hidden)
