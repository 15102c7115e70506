"""Flags honoured in every script, by the user's choice: ``modecfg autoload on|off``.

A script that never imports modecfg runs PyTensor as it is: ``THEANO_FLAGS`` and
``~/.theanorc`` are not PyTensor's (it reads ``PYTENSOR_FLAGS`` and ``~/.pytensorrc`` only), and
modecfg's own flags are not read at all. Two ways to have them anyway:

* ``modecfg run SCRIPT [ARGS]`` (or ``modecfg run -m MODULE``): one run, as ``coverage run``;
* ``modecfg autoload on``: every Python of this environment loads modecfg just before PyTensor
  (a ``.pth`` file in its site-packages, :mod:`modecfg_autoload`); ``modecfg autoload off``
  removes it, ``MODECFG_AUTOLOAD=0`` leaves it out for one run.
"""

from __future__ import annotations

import contextlib
import os
import sysconfig
from pathlib import Path

from modecfg.errors import ModecfgError

__all__ = ["PTH_NAME", "disable", "enable", "enabled", "pth_path"]

PTH_NAME = "modecfg-autoload.pth"


def pth_path() -> Path:
    """Where the ``.pth`` file goes: this interpreter's site-packages (its virtual environment's)."""
    return Path(sysconfig.get_paths()["purelib"]) / PTH_NAME


def _line() -> str:
    import modecfg_autoload

    return modecfg_autoload.line(os.path.abspath(modecfg_autoload.__file__))


def _ours(text: str) -> bool:
    """Whether a ``.pth`` file's text is one ``modecfg autoload on`` writes (this version's line
    for any install place, or the line of earlier versions)."""
    from modecfg_autoload import LINE, line

    head, _, tail = line("\0").partition(repr("\0"))
    return text == LINE or (text.startswith(head) and text.endswith(tail) and "\n" not in text[:-1])


def enabled(path: Path | None = None) -> bool:
    """Whether this environment loads modecfg with PyTensor (the file is there and is ours)."""
    path = pth_path() if path is None else path
    try:
        return _ours(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False


def enable(path: Path | None = None) -> Path:
    """Write the ``.pth`` file (atomically); its path. A file of that name that is not ours is
    left as it is (a ModecfgError says so); a site-packages this user cannot write (a system
    Python) is a ModecfgError saying what to do."""
    path = pth_path() if path is None else path
    if path.exists() and not enabled(path):
        raise ModecfgError(f"{path} is there and is not the file `modecfg autoload on` writes: left as it is")
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        temporary.write_text(_line(), encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise ModecfgError(
            f"cannot write {path} ({exc.strerror or exc}): autoload needs a Python environment you "
            "can write to (a virtual environment: python -m venv .venv, then .venv/bin/modecfg "
            "autoload on); or run one script with `modecfg run SCRIPT`"
        ) from None
    return path


def disable(path: Path | None = None) -> bool:
    """Remove the ``.pth`` file; whether there was one. A file of that name that is not ours
    (other text) is left, and said."""
    path = pth_path() if path is None else path
    if not path.exists():
        return False
    if not enabled(path):
        raise ModecfgError(f"{path} is not the file `modecfg autoload on` writes; left as it is")
    try:
        path.unlink()
    except OSError as exc:
        raise ModecfgError(f"cannot remove {path} ({exc.strerror or exc})") from None
    return True
