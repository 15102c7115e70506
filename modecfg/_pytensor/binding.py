"""How PyTensor sees each flag: the one function that says it.

A flag's declaration says what decides it (``pytensor``: PyTensor has it; ``fixed``: PyTensor
uses one value per process; ``pytensor_takes``: which values PyTensor's parameter takes), and
the installed PyTensor's parameter says the rest (does it exist; is it mutable). From these:

* ``view``: ``pytensor.config`` answers it from modecfg's store, per thread and task, overrides
  included (a :class:`~.view.FlagParam` in PyTensor's parameter's place);
* ``handed over``: PyTensor fixes it per process: it receives modecfg's value at its import
  (``PYTENSOR_FLAGS``, :mod:`.mirror`); an assignment later reaches PyTensor's parameter until
  PyTensor has read it, and is a ``ReadOnlyFlagError`` after;
* ``modecfg``: this PyTensor has no such parameter (``device``, ``compute_test_value`` on
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

from typing import Any, Literal

from modecfg._pytensor.version import pytensor_version
from modecfg.configuration.flags import Flag

__all__ = ["Binding", "StandIn", "binding", "pytensor_accepts"]


# How PyTensor sees a flag (the module's text says each): strings, not an Enum (an Enum class
# costs start-up ~0.1 ms), checked by mypy wherever they are compared.
Binding = Literal["view", "handed over", "modecfg"]


class StandIn:
    """What the bridge's parameters derive from (:class:`~.view.FlagParam`, which puts one in the
    place of PyTensor's own): ``original`` is PyTensor's parameter it stands for, None for a flag
    this PyTensor has none of. (A class test: reading PyTensor's parameters' instance dicts would
    make each a dictionary object: ~75 more, measured, for every collection to walk.)"""

    original: Any


def binding(spec: Flag, param: Any) -> Binding:
    """How PyTensor sees ``spec``, given its parameter in ``pytensor.config`` (None: it has none)."""
    if isinstance(param, StandIn):  # the bridge's parameter: PyTensor's own decides
        param = param.original
    if param is None:
        return "modecfg"
    if spec.fixed and not param.mutable:
        return "handed over"
    return "view"


# Values as PyTensor takes them: which modecfg values it accepts (PyTensor parses ``str()`` of
# each: the text of a float is its shortest repr, which reads back the same).


def pytensor_accepts(spec: Flag, value: Any) -> bool:
    """Whether PyTensor's ``spec`` takes ``value``: the flag is this PyTensor's, and the value
    one its declaration says PyTensor takes (``Flag.pytensor_takes``: modecfg's own values, such
    as ``linker=per_graph``, stay modecfg's)."""
    if not spec.in_pytensor(pytensor_version()):
        return False
    return spec.pytensor_takes is None or spec.pytensor_takes(value)
