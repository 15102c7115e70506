"""The PyTensor layer: every place where modecfg meets PyTensor, and nothing else does.

* :mod:`~modecfg._pytensor.mirror`: the config mirror (``pytensor.config`` follows
  modecfg's config; PyTensor's import is handed modecfg's values);
* :mod:`~modecfg._pytensor.patches`: the declarative list of patches, verified against
  the installed PyTensor before any is applied, and undoable;
* :mod:`~modecfg._pytensor.replacements`: what the patches put in place (the mode
  table, the compile hook, error locations, the profile printer, test values);
* :mod:`~modecfg._pytensor.hooks`: the slots through which the layers above plug their
  behaviour into those replacements;
* :mod:`~modecfg._pytensor.debugmode`, :mod:`~modecfg._pytensor.backends`: the DebugMode
  fix and the JAX device path.

It stands on the config layer and never imports the layers above it. Importing it does
not import PyTensor.
"""

from typing import TYPE_CHECKING

from modecfg._lazy import LazyNames as _LazyNames
from modecfg._pytensor.hooks import Hooks, hooks
from modecfg._pytensor.mirror import PyTensorBridge

if TYPE_CHECKING:
    from modecfg._pytensor.patches import (
        PATCHES,
        TESTED,
        Patch,
        PatchStatus,
        enable,
        install,
        installed,
        is_on,
        original,
        status,
        uninstall,
    )

__all__ = [
    "PATCHES",
    "TESTED",
    "Hooks",
    "Patch",
    "PatchStatus",
    "PyTensorBridge",
    "enable",
    "hooks",
    "install",
    "installed",
    "is_on",
    "original",
    "status",
    "uninstall",
]

# The patch list's names, loaded on first use (reading the configuration needs none).
__getattr__ = _LazyNames(
    __name__,
    dict.fromkeys(frozenset(__all__) - {"Hooks", "PyTensorBridge", "hooks"}, "modecfg._pytensor.patches"),
)
