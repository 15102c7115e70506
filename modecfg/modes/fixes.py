"""Fixes for PyTensor 3.0 defects that would otherwise reach modecfg's users.

DebugMode under numpy 2: when a function updates a 0-d shared variable in place,
DebugMode's linker restores the destroyed input with ``ndarray.itemset``, which numpy 2
removed, and the first call fails with an AttributeError. For a 0-d array
``a.fill(v)`` does exactly what ``a.itemset(v)`` did, so the fix gives the linkers of
modecfg's DebugMode a copy of ``make_all`` whose code calls ``fill`` there (the code is
PyTensor's own, with that one name changed: nothing is parsed or executed from text).
PyTensor's classes are left untouched; the fix checks that the call is where it
expects it, and does nothing if PyTensor no longer has it.
"""

from __future__ import annotations

import functools
import types
from typing import Any

__all__ = ["fix_debugmode", "rename_attribute"]


def rename_attribute(code: types.CodeType, old: str, new: str) -> tuple[types.CodeType, int]:
    """``code`` with attribute name ``old`` read as ``new``, in it and its nested code.

    Returns the new code and how many code objects changed.
    """
    changed = 0
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            const, n = rename_attribute(const, old, new)
            changed += n
        consts.append(const)
    names = code.co_names
    if old in names:
        names = tuple(new if n == old else n for n in names)
        changed += 1
    return code.replace(co_consts=tuple(consts), co_names=names), changed


@functools.cache
def fix_debugmode() -> type[Any]:
    """A DebugMode whose linker works under numpy 2 (see the module docstring)."""
    import numpy as np
    from pytensor.compile.debug import debugmode as dm

    if hasattr(np.ndarray, "itemset"):  # numpy 1: nothing to fix
        return dm.DebugMode  # type: ignore[no-any-return]
    original = dm._Linker.make_all
    code, changed = rename_attribute(original.__code__, "itemset", "fill")
    if changed != 1:  # not the code this fix was written for: leave it alone
        return dm.DebugMode  # type: ignore[no-any-return]

    fixed = types.FunctionType(
        code, original.__globals__, original.__name__, original.__defaults__, original.__closure__
    )
    fixed.__kwdefaults__ = original.__kwdefaults__

    class _Maker(dm._Maker):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # This maker's linker only: PyTensor's _Linker class is left untouched.
            self.linker.make_all = types.MethodType(fixed, self.linker)

    class DebugMode(dm.DebugMode):  # type: ignore[misc]
        """PyTensor's DebugMode, working under numpy 2."""

        @property
        def function_maker(self) -> type[Any]:
            return _Maker

    return DebugMode
