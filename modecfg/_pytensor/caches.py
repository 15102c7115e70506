"""Where PyTensor keeps its compile caches, and the lock it takes to write them.

* C modules: ``pytensor.config.compiledir`` (``base_compiledir/compiledir_format``): one
  directory per module (``tmpXXXXXXXX/`` holding the module's ``.so``, its source and its key),
  beside the support modules PyTensor builds once (``cutils_ext``, ``lazylinker_ext``, ...).
  Every write is made holding ``compiledir/.lock``, a ``filelock.FileLock`` (an ``flock`` on
  POSIX systems: the kernel lets it go when its holder dies).
* numba: ``base_compiledir/numba`` (``pytensor.link.numba.cache.NUMBA_CACHE_PATH``), numba's own
  index (``.nbi``) and data (``.nbc``) files, written by numba without a lock.

The layout is PyTensor's; :func:`layout_problem` checks it against the installed source (a
contact of the patch list) without importing numba, and the keys PyTensor fills in
``compiledir_format`` against those modecfg's flag check lets through.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from modecfg._pytensor.load import load_pytensor as load
from modecfg.configuration import config

__all__ = ["LOCK_NAME", "SUPPORT_MODULES", "c_cache_dir", "layout_problem", "numba_cache_dir", "signature"]

LOCK_NAME = ".lock"  # compilelock.lock_ctx: FileLock(Path(lock_dir) / ".lock")
SUPPORT_MODULES = ("cutils_ext", "lazylinker_ext", "scan_perform")  # ModuleCache.clear_base_files


def c_cache_dir() -> Path:
    """The directory of this process's C modules (imports PyTensor, which works it out). Asking
    makes nothing: PyTensor's first read of its ``compiledir`` creates the directory (with an
    ``__init__.py``), so where it has not been read, the path is worked out as PyTensor would."""
    load()
    import pytensor

    param = type(pytensor.config).__dict__.get("compiledir")
    if param is None or hasattr(param, "val") or config.compiledir is not None:
        return Path(pytensor.config.compiledir)  # read already (the directory is there), or named
    try:
        from pytensor.configdefaults import _default_compiledir
    except ImportError:  # pragma: no cover - a PyTensor without it: its own read
        return Path(pytensor.config.compiledir)
    return Path(_default_compiledir()).expanduser().resolve()


def numba_cache_dir() -> Path:
    """The directory of numba's cache of PyTensor's functions."""
    load()
    import pytensor

    return Path(pytensor.config.base_compiledir) / "numba"


def _source(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise LookupError(f"{module} is not installed")
    return Path(spec.origin).read_text(encoding="utf-8")


def layout_problem() -> str:
    """What of the layout above the installed PyTensor no longer has ('' when it has it all)."""
    wanted = (
        ("pytensor.compile.compilelock", f'Path(lock_dir) / "{LOCK_NAME}"'),
        ("pytensor.link.numba.cache", 'config.base_compiledir / "numba"'),
        ("pytensor.link.c.cmodule", "cutils_ext"),
    )
    gone = []
    for module, text in wanted:
        try:
            if text not in _source(module):
                gone.append(f"{module} ({text})")
        except (LookupError, OSError) as exc:
            gone.append(f"{module} ({exc})")
    from modecfg.configuration.partition import PYTENSOR_KEYS

    defaults = sys.modules.get("pytensor.configdefaults")
    keys = getattr(defaults, "_compiledir_format_keys", None)
    if defaults is not None and set(keys or ()) != set(PYTENSOR_KEYS):
        gone.append(f"pytensor.configdefaults._compiledir_format_keys ({sorted(keys or ())})")
    return ", ".join(gone)


def signature() -> dict[str, str]:
    """What a compiled module depends on besides its source: the versions and the machine a
    cache was built with (a warm cache travels only to where these are the same)."""
    import platform

    load()
    import numpy
    import pytensor

    from modecfg.configuration.partition import cpu_features

    try:
        from importlib.metadata import version

        numba = version("numba")
    except Exception:
        numba = ""
    return {
        "pytensor": str(pytensor.__version__),
        "numpy": str(numpy.__version__),
        "numba": numba,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
        "compiler": str(getattr(pytensor.config, "gcc_version_str", "")),
        "cxxflags": str(pytensor.config.gcc__cxxflags),
        "cpu_features": cpu_features(),
    }
