"""Load modecfg when PyTensor is first imported, in every script of this environment.

``modecfg autoload on`` writes one line into a ``.pth`` file of this environment's
site-packages (``import modecfg_autoload; modecfg_autoload.arm()``, as coverage's process
start-up does); Python runs it at start-up, and it adds :class:`Finder` to ``sys.meta_path``.
Nothing else happens until a script imports PyTensor: then modecfg is imported first, so that
``THEANO_FLAGS``, ``PYTENSOR_FLAGS``, ``MODECFG_FLAGS`` and the rc files reach PyTensor's
import, as they do for a script that imports modecfg itself. A script that never imports
PyTensor pays for this module only (about a millisecond; it imports nothing new).
``modecfg autoload off`` removes the file; ``MODECFG_AUTOLOAD=0`` turns it off for one run.

This is a top-level module, not part of the ``modecfg`` package, because importing the package
runs its ``__init__`` (about 50 ms): every Python start would pay that.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (typing.TYPE_CHECKING: importing typing would double this module's cost)
if TYPE_CHECKING:  # only names: Python's start-up imports nothing more for this module
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

__all__ = ["Finder", "arm"]

LINE = "import modecfg_autoload; modecfg_autoload.arm()\n"  # the .pth file's line (before issue 58)


def line(module_file: str) -> str:
    """The ``.pth`` file's line: silent where this module is gone (``pip uninstall modecfg``
    leaves a ``.pth`` file it did not install; Python would print an error at every start)."""
    return f"import os; os.path.isfile({module_file!r}) and __import__('modecfg_autoload').arm()\n"


class Finder:
    """Imports modecfg just before ``pytensor`` is first imported, then asks the finders after it
    (modecfg's own import hook among them) for PyTensor's module, as importlib would have."""

    done = False

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "pytensor" or cls.done:
            return None
        cls.done = True  # once: it stays in sys.meta_path (importlib is iterating it), inert
        try:
            missing = _missing(NEEDS)  # modecfg imports them when first used: a compile would fail
            if missing:
                raise ImportError(f"{', '.join(missing)} cannot be found")
            import modecfg  # noqa: F401  (its import hook hands the configuration to PyTensor's)
        except Exception as exc:  # never the user's import: PyTensor runs without modecfg
            import logging

            logging.getLogger("modecfg").warning(
                "modecfg autoload: modecfg could not be imported (%s); PyTensor runs without it", exc
            )
            return None
        for finder in list(sys.meta_path):
            if finder is cls or not hasattr(finder, "find_spec"):
                continue
            spec: ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None


# what modecfg needs beside PyTensor and numpy, imported lazily (pyproject.toml's dependencies)
NEEDS = ("pydantic", "pydantic_core", "tomlkit")


def _missing(names: Sequence[str]) -> list[str]:
    """Those of ``names`` that cannot be imported here (found without importing them)."""
    from importlib.util import find_spec

    gone = []
    for name in names:
        try:
            if find_spec(name) is None:
                gone.append(name)
        except (ImportError, ValueError):  # None in sys.modules, a module without a spec
            gone.append(name)
    return gone


def _off(value: str) -> bool:
    """``MODECFG_AUTOLOAD``'s value says off: modecfg's false words (0, false, no, off), any case."""
    return value.strip().lower() in ("0", "false", "no", "off")


def arm() -> None:
    """Put :class:`Finder` first in ``sys.meta_path`` (once), unless ``MODECFG_AUTOLOAD=0`` or
    PyTensor is imported already."""
    if _off(os.environ.get("MODECFG_AUTOLOAD", "")):
        return
    if Finder in sys.meta_path or "pytensor" in sys.modules:
        return
    sys.meta_path.insert(0, Finder)
