"""Put first on ``PYTHONPATH`` by ``modecfg run``: every Python the script starts (a spawn or
forkserver child of ``multiprocessing``, a ``subprocess`` of ``python``) loads modecfg just
before PyTensor, as ``modecfg autoload on`` gives every Python of an environment. Then the
``sitecustomize`` this file hides, if there is one, runs as Python would have run it.

Not a module of the package (it has no ``__init__``): Python's start-up finds it by name.
"""

import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
try:
    import modecfg_autoload

    modecfg_autoload.arm()
except Exception:  # never a child's start: it runs without modecfg
    pass
_path = sys.path
sys.path = [p for p in _path if os.path.abspath(p or os.curdir) != _here]
_this = sys.modules.pop("sitecustomize")
try:
    import sitecustomize  # type: ignore[import-not-found]  # noqa: F401  (the environment's own, if any)
except ImportError as exc:
    if exc.name != "sitecustomize":  # the environment's own failed: said as Python says it
        raise
finally:
    sys.path = _path
    # importlib takes the module it ran from sys.modules when this file ends: the environment's,
    # where there is one, else this one (without it, every Python started said a KeyError)
    sys.modules.setdefault("sitecustomize", _this)
