"""What is patched now: shared by the patch machinery and the replacements (no imports)."""

from __future__ import annotations

from typing import Any

__all__ = ["applied", "is_on", "original", "originals"]

# patch name -> what was done (see modecfg._pytensor.patches._Applied)
applied: dict[str, Any] = {}
# patch name -> the object it replaced; kept after uninstall: captured replacements call it
originals: dict[str, Any] = {}


def is_on(name: str) -> bool:
    return name in applied


def original(name: str) -> Any:
    """The object a patch replaced (while on, and after: a captured replacement needs it)."""
    return originals[name]
