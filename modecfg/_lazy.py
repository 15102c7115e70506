"""Names a package hands out on first use (PEP 562): every module imported costs start-up,
and a name some programs never use should not cost the others."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["LazyNames"]


class LazyNames:
    """A package's ``__getattr__``: ``name`` is the attribute ``name`` of the module the table
    gives for it, or that module itself when it is the package's own submodule ``name``. The
    value is then kept in the package, so that later reads are plain. ``dir`` is the
    package's ``__dir__``."""

    __slots__ = ("package", "table")

    def __init__(self, package: str, table: Mapping[str, str]) -> None:
        self.package = package
        self.table = table

    def __call__(self, name: str) -> Any:
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
