"""Profiles' contacts with PyTensor: the "profile printer" patch, beside its replacement, and what
the core's compile entry asks of this feature.

- "profile printer" (``pytensor.compile.debug.profiling._atexit_print_fn``), on demand: every
  profile is summarised at exit by modecfg (:func:`modecfg.profiles.session.print_at_exit`, loaded
  then), to ``profiling.destination``, in place of PyTensor's long dump. This module is loaded and
  the patch put on before the first profile modecfg makes, or when the profile flag is turned on
  (``modecfg._wiring``): a process that never profiles loads nothing of this feature. Profiles
  PyTensor made without either (``profile="name"`` given to ``pytensor.function``, a program's
  own ``ProfileStats``) are summarised by the core's exit handler, ``modecfg._wiring``'s, which
  PyTensor's printer (printing only with the flag on) leaves them to.
- :func:`profiled_mode`, the ``profiled_mode`` hook slot: ``pytensor.function`` is the core's
  ("profiled compiles" also says where a ConfigError was made); when a compile is profiled it
  asks this feature for a mode whose linker times nodes, and for the profile.

Light: nothing here imports PyTensor, numpy or the reports at import.
"""

from __future__ import annotations

from typing import Any

from modecfg._pytensor.patch import Patch

__all__ = ["PATCHES", "PROFILE_PRINTER", "atexit_print", "profiled_mode"]


def atexit_print(print_: Any) -> None:
    """``_atexit_print_fn``: modecfg's profile summary at exit (PyTensor's own dump: ``print_``)."""
    from modecfg.profiles.session import print_at_exit

    print_at_exit()


def profiled_mode(mode: Any, name: Any) -> tuple[Any, Any]:
    """A profiled ``pytensor.function``'s mode (by name, object or None: the flag's), with a linker
    that times nodes in place of one that cannot (numba, jax, c|py, py, c), and its ProfileStats."""
    from modecfg.modes.build import describe_linker, get_mode
    from modecfg.profiles.session import new_stats, timing_mode

    built, note = timing_mode(get_mode(mode))
    return built, new_stats(name, describe_linker(built.linker), note)


PROFILE_PRINTER = Patch(
    name="profile printer",
    module="pytensor.compile.debug.profiling",
    attr="_atexit_print_fn",
    params=(),
    on_demand=True,
    replacement=atexit_print,
    why="profiles are summarized at exit by modecfg, to profiling.destination (on before the "
    "process's first profile that modecfg makes or the profile flag asks for)",
)


PATCHES = (PROFILE_PRINTER,)
