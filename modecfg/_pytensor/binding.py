"""How PyTensor sees each flag: the one function that says it.

A flag's declaration says what decides it (``pytensor``: PyTensor has it; ``fixed``: PyTensor
uses one value per process; ``pytensor_takes``: which values PyTensor's parameter takes), and
the installed PyTensor's parameter says the rest (does it exist; is it mutable). From these:

* ``VIEW``: ``pytensor.config`` answers it from modecfg's store, per thread and task, overrides
  included (a :class:`~.view.FlagParam` in PyTensor's parameter's place);
* ``HANDED_OVER``: PyTensor fixes it per process: it receives modecfg's value at its import
  (``PYTENSOR_FLAGS``, :mod:`.mirror`); an assignment later reaches PyTensor's parameter until
  PyTensor has read it, and is a ``ReadOnlyFlagError`` after;
* ``MODECFG``: this PyTensor has no such parameter (``device``, ``compute_test_value`` on
  PyTensor 3): ``pytensor.config`` answers it from modecfg's store too, read-only in PyTensor's
  eyes, and no PyTensor code reads it.

Why the hand-off is not the view: PyTensor builds its config object and reads the flags it
fixes (``compiledir``, ``cxx``, ``blas__ldflags``) while ``import pytensor`` runs, before there
is an object to attach a view to; its one door at that moment is its environment
(``PYTENSOR_FLAGS``, ``PYTENSORRC``), the interface every PyTensor release documents. Serving
that import from the view would mean replacing PyTensor's config constructor, a private function
whose shape changes between releases.
"""

from __future__ import annotations

import enum
from typing import Any

from modecfg.configuration.flags import Flag

__all__ = ["Binding", "binding"]


class Binding(enum.Enum):
    VIEW = "answered by the view"
    HANDED_OVER = "handed to PyTensor at its import (PyTensor fixes it per process)"
    MODECFG = "modecfg's alone (this PyTensor has no such flag)"


def binding(spec: Flag, param: Any) -> Binding:
    """How PyTensor sees ``spec``, given its parameter in ``pytensor.config`` (None: it has none)."""
    param = getattr(param, "original", param)  # the bridge's parameter: PyTensor's own decides
    if param is None:
        return Binding.MODECFG
    if spec.fixed and not param.mutable:
        return Binding.HANDED_OVER
    return Binding.VIEW
