"""modecfg._lazy: a package's names handed out on first use, its TYPE_CHECKING block read then."""

from __future__ import annotations

import json
import json.decoder
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from modecfg._lazy import LazyNames, attach

BLOCK = '''"""A package whose names load on first use."""
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from json import dumps as dumps  # a comment
    from lazy_pkg import sub as sub

    from json.decoder import JSONDecoder as JSONDecoder
    from json import loads as loads
x = 1
'''


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[types.ModuleType, str]]:
    """The package ``lazy_pkg`` (its ``__init__`` holds BLOCK; a submodule ``sub``), as imported:
    in sys.modules, with an ``__all__`` that lists three of the block's names and one it lacks."""
    root = tmp_path / "lazy_pkg"
    root.mkdir()
    (root / "__init__.py").write_text(BLOCK, encoding="utf-8")
    (root / "sub.py").write_text("VALUE = 3\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = types.ModuleType("lazy_pkg")
    module.__path__ = [str(root)]
    module.__all__ = ["JSONDecoder", "dumps", "sub", "not_in_the_block"]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lazy_pkg", module)
    yield module, str(root / "__init__.py")
    sys.modules.pop("lazy_pkg.sub", None)


def test_a_name_is_the_defining_modules_object_and_a_submodule_the_module(
    package: tuple[types.ModuleType, str],
) -> None:
    module, path = package
    lazy = attach("lazy_pkg", path)
    assert lazy("dumps") is json.dumps and lazy("JSONDecoder") is json.decoder.JSONDecoder
    assert vars(module)["dumps"] is json.dumps  # kept in the package: later reads are plain
    sub = lazy("sub")
    assert isinstance(sub, types.ModuleType) and sub.__name__ == "lazy_pkg.sub" and sub.VALUE == 3
    assert lazy.dir() == sorted({*vars(module), "dumps", "sub", "JSONDecoder", "loads"})


def test_a_name_all_lists_that_the_block_lacks_is_missing(package: tuple[types.ModuleType, str]) -> None:
    _, path = package
    with pytest.raises(AttributeError, match=r"^module 'lazy_pkg' has no attribute 'not_in_the_block'$"):
        attach("lazy_pkg", path)("not_in_the_block")


def test_a_name_outside_all_is_missing_unless_hidden(package: tuple[types.ModuleType, str]) -> None:
    module, path = package
    with pytest.raises(AttributeError, match=r"^module 'lazy_pkg' has no attribute 'loads'$"):
        attach("lazy_pkg", path)("loads")
    hidden = attach("lazy_pkg", path, hidden=["loads"])
    assert hidden.hidden == frozenset({"loads"}) and hidden("loads") is json.loads
    del module.__all__  # a package without __all__ hands out only what it hides
    with pytest.raises(AttributeError, match=r"^module 'lazy_pkg' has no attribute 'dumps'$"):
        attach("lazy_pkg", path)("dumps")


def test_the_block_is_read_at_the_first_ask_and_once(package: tuple[types.ModuleType, str]) -> None:
    _, path = package
    lazy = LazyNames("lazy_pkg", path)
    assert lazy._table is None  # nothing read yet
    lazy("dumps")
    Path(path).unlink()  # read already: the table is kept
    assert lazy("JSONDecoder") is json.decoder.JSONDecoder
    with pytest.raises(FileNotFoundError):  # a new one reads it
        LazyNames("lazy_pkg", path)("dumps")
