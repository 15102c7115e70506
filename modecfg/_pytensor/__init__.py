"""The PyTensor layer: every place where modecfg meets PyTensor, and nothing else does.

* :mod:`~modecfg._pytensor.mirror`: the config mirror (``pytensor.config`` follows
  modecfg's config; PyTensor's import is handed modecfg's values);
* :mod:`~modecfg._pytensor.patches`: the declarative list of patches, verified against
  the installed PyTensor before any is applied, and undoable;
* :mod:`~modecfg._pytensor.replacements`: what the patches put in place (the mode
  table, the compile hook, error locations, the profile printer);
* :mod:`~modecfg._pytensor.hooks`: the slots through which the layers above plug their
  behaviour into those replacements;
* :mod:`~modecfg._pytensor.debugmode`: the DebugMode fix.

The features that own their contacts (:mod:`modecfg.testvalues`, :mod:`modecfg.device`) declare
their patches beside their replacements and register them in the one list.

It stands on the config layer and never imports the layers above it. Importing it does
not import PyTensor.
"""

from typing import TYPE_CHECKING

from modecfg._lazy import attach as _attach
from modecfg._pytensor.hooks import Hooks, hooks
from modecfg._pytensor.mirror import PyTensorBridge

if TYPE_CHECKING:  # the patch list's names, handed out on first use (modecfg._lazy)
    from modecfg._pytensor.patches import PATCHES as PATCHES
    from modecfg._pytensor.patches import TESTED as TESTED
    from modecfg._pytensor.patches import Patch as Patch
    from modecfg._pytensor.patches import PatchStatus as PatchStatus
    from modecfg._pytensor.patches import enable as enable
    from modecfg._pytensor.patches import install as install
    from modecfg._pytensor.patches import installed as installed
    from modecfg._pytensor.patches import original as original
    from modecfg._pytensor.patches import status as status
    from modecfg._pytensor.patches import uninstall as uninstall

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
    "original",
    "status",
    "uninstall",
]

# Loaded on first use (reading the configuration needs none).
__getattr__ = _attach(__name__, __file__)  # the TYPE_CHECKING block's names, on first use
__dir__ = __getattr__.dir
