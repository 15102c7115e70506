"""The device path's contacts with PyTensor: its six patches, beside their replacements.

- "jax device" (``JITLinker.make_all``), on at PyTensor's import: a JAX linker's function is
  made by :func:`modecfg.device.jaxlink.link` (loaded then, at the first JAX link); every other
  JIT linker's (numba) is PyTensor's.
- "shared values", "shared values (set)", "shared values (made)", on at PyTensor's import: the
  doors through which a host array becomes someone else's too (``get_value(borrow=True)``,
  ``set_value(a, borrow=True)``, ``shared(a, borrow=True)`` through ``shared_constructor``) note
  it (:func:`lend`), from the start: an array lent before the first JAX link is as much someone
  else's as one lent after, and a JAX function must send it at every call. Until a JAX function
  is linked they only note it (no JAX module is loaded); then they also turn device arrays into
  numpy and back.
- "shared values (zero)", "device inputs", *on demand*: applied by :func:`linked` when the first
  JAX function is linked, so that a process that never uses JAX pays no check at every call.

The replacements are module-level functions: they pickle.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

from modecfg._pytensor.patch import Patch
from modecfg._pytensor.state import originals as _originals

__all__ = [
    "DEVICE_INPUTS",
    "JAX_DEVICE",
    "PATCHES",
    "SHARED_VALUES",
    "SHARED_VALUES_MADE",
    "SHARED_VALUES_SET",
    "SHARED_VALUES_ZERO",
    "lend",
    "linked",
]

# numpy's ndarray, looked up at the first call of a replacement: this module is loaded by
# ``import modecfg`` (its patches are registered then), which loads neither numpy nor PyTensor
_ndarray: Any = None
# A JAX function's VM is a function holding "device_thunk" (modecfg.device.jaxlink.vm_for); until
# linked() is called, no function is a JAX one, and "device inputs" is PyTensor's check alone
_function = types.FunctionType


def _array_type() -> Any:
    global _ndarray
    import numpy

    _ndarray = numpy.ndarray
    return _ndarray


_jax_linked: list[bool] = []  # a JAX function was linked (linked()): the doors do their JAX part too
# the record of lent arrays (modecfg._pytensor.hostwrites.lent), bound at the first array lent: a
# borrowed get_value asks it at every call, and an array already recorded is not recorded again
_lent: dict[int, Any] | None = None


def _lent_record() -> dict[int, Any]:
    global _lent
    from modecfg._pytensor import hostwrites

    _lent = hostwrites.lent
    return _lent


def lend(container: Any) -> None:
    """The container's host array is someone else's too: whoever holds it may change it in place,
    so a JAX function sends it at every call, as plain PyTensor does, until the variable holds
    another array (recorded in :mod:`modecfg._pytensor.hostwrites`, once per array; nothing of the
    JAX path is loaded for it)."""
    value = container.storage[0]
    if not isinstance(value, _ndarray or _array_type()):
        return
    ref = (_lent if _lent is not None else _lent_record()).get(id(value))
    if ref is None or ref() is not value:
        _record(container, value)


def _record(container: Any, value: Any) -> None:
    """``value``, an array not recorded yet, recorded as lent."""
    from modecfg._pytensor import hostwrites

    hostwrites.lend(container, value)


def jit_make_all(self: Any, make_all: Any, *args: Any, **kwargs: Any) -> Any:
    """``JITLinker.make_all``: a JAX linker's function is pinned to x64 and the matmul precision,
    reads its shared variables from the device, and is timed there; numba's is PyTensor's."""
    from modecfg._pytensor.kinds import linker_name

    if linker_name(self) != "jax":
        return make_all(self, *args, **kwargs)
    from modecfg.device import jaxlink  # the JAX path, loaded at its first link

    linked()  # the doors watched before any copy is made; inputs given as JAX arrays are used where they are
    return jaxlink.link(self, make_all, *args, **kwargs)


def get_value(self: Any, borrow: bool = False, return_internal_type: bool = False) -> Any:
    """``SharedVariable.get_value`` (PyTensor's: ``original("shared values")``): an array handed out
    with ``borrow`` is lent (:func:`lend`); once a JAX function is linked, a value it left on the
    device comes back as numpy (with ``borrow``, a read-only view of its host copy), its device
    array with ``return_internal_type=True`` (Theano's GPU variables answered so too).

    Put in place as it is (a plain patch: it binds as PyTensor's own method does): a borrowed
    get_value is PyTensor's fastest read of a value, and this one runs in every process."""
    raw = self.container.storage[0]
    if isinstance(raw, _ndarray or _array_type()):
        if borrow:  # the holder may change it in place: no stale device copy (lend(), inline)
            ref = (_lent if _lent is not None else _lent_record()).get(id(raw))
            if ref is None or ref() is not raw:
                _record(self.container, raw)
    elif _jax_linked and not return_internal_type:
        from modecfg.device import jaxlink  # loaded by the first JAX link

        if jaxlink.is_device_array(raw):
            return jaxlink.host_value(raw, borrow)
    return _originals["shared values"](self, borrow, return_internal_type)


def set_value(self: Any, new_value: Any, borrow: bool = False) -> None:
    """``SharedVariable.set_value`` (PyTensor's: ``original("shared values (set)")``): an array taken
    in with ``borrow`` is lent (:func:`lend`); once a JAX function is linked, a JAX array of the
    variable's type is kept on its device as it is, and a value the type refuses is a
    SharedValueError naming the variable (its value kept). Before, PyTensor's errors are
    PyTensor's. Put in place as it is (a plain patch), as ``get_value`` is."""
    set_ = _originals["shared values (set)"]
    if not _jax_linked:
        set_(self, new_value, borrow)
        if borrow:
            lend(self.container)  # the caller keeps it and may change it in place
        return
    from modecfg.device import jaxlink

    if (
        type(new_value) is not (_ndarray or _array_type())
        and jaxlink.is_device_array(new_value)
        and jaxlink.takes_as_is(self.container, new_value)
    ):
        self.container.storage[0] = new_value  # immutable: nothing to copy
        return
    try:
        set_(self, new_value, borrow)
        if borrow:
            lend(self.container)  # the caller keeps it and may change it in place
    except (TypeError, ValueError) as exc:
        kind = self.type
        if not hasattr(kind, "dtype") or not hasattr(kind, "ndim"):
            raise
        from modecfg.errors import SharedValueError

        got = getattr(new_value, "dtype", type(new_value).__name__)
        shape = getattr(new_value, "shape", None)
        raise SharedValueError(
            f"set_value of shared variable {str(self.name or self)!r}: it holds {kind.dtype} values "
            f"of {kind.ndim} dimension(s) (shape {tuple(kind.shape)}), and was given {got}"
            + (f" of shape {tuple(shape)}" if shape is not None else "")
            + f" ({exc}). Its value is unchanged; give np.asarray(value, dtype={kind.dtype!r}) of "
            f"{kind.ndim} dimension(s)"
        ) from exc


def made(constructor: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
    """``shared_constructor``, which ``pytensor.shared`` calls: a variable made with ``borrow=True``
    that holds the caller's array as it is has lent it (:func:`lend`): the caller may change it in
    place, and plain PyTensor's JAX functions, which read the host value at every call, see the
    change. (Its ``register``, which PyTensor's modules call at their import, is the original's.)"""
    variable = constructor(value, *args, **kwargs)
    if kwargs.get("borrow") and variable.container.storage[0] is value:
        lend(variable.container)
    return variable


def zero(self: Any, zero_: Any, borrow: bool = False) -> None:
    """``TensorSharedVariable.zero``: with ``borrow``, PyTensor writes zeros into the variable's own
    array, which a JAX function's device copy would not see (a new array, without it, is seen as
    any new value is)."""
    zero_(self, borrow)
    if borrow:
        from modecfg.device import jaxlink

        jaxlink.written(self.container)


def validate_inputs(self: Any, args: Any, kwargs: Any) -> Any:
    """``Function._validate_inputs`` (PyTensor's: ``original("device inputs")``): a JAX function's
    inputs given as JAX arrays of the input's dtype are passed on as they are (PyTensor's check
    would copy them to the host and back). PyTensor checks everything else: the arrays stand in
    as zero-strided numpy views.

    Put in place as it is (a plain patch: it binds as PyTensor's own method does), for it runs at
    every call of every function once a JAX function is linked: what decides comes first,
    cheapest first (a function that is not a JAX one; numpy's arrays, which are never JAX's)."""
    vm = self.vm
    if type(vm) is _function and "device_thunk" in vm.__dict__:
        ndarray = _ndarray
        for arg in args:
            if type(arg) is not ndarray:
                return _device_inputs(self, args, kwargs)
    return _validate(self, args, kwargs)


def _pytensors_check(self: Any, args: Any, kwargs: Any) -> Any:
    return _originals["device inputs"](self, args, kwargs)


# PyTensor's own check, called by validate_inputs: bound as it is by linked(), which applies the patch
_validate: Callable[[Any, Any, Any], Any] = _pytensors_check


def _device_inputs(self: Any, args: Any, kwargs: Any) -> Any:
    """:func:`validate_inputs` for a JAX function given something other than numpy arrays: the
    JAX arrays among them (JAX's isinstance is slow, ~0.2 us) are kept where they are."""
    validate = _originals["device inputs"]
    jax = sys.modules["jax"]  # (a JAX function was linked)
    ndarray = _ndarray or _array_type()
    for arg in args:
        if type(arg) is not ndarray and isinstance(arg, jax.Array):
            break
    else:
        return validate(self, args, kwargs)
    from modecfg.device.jaxlink import is_device_array, takes_as_is

    kept = {
        i: arg
        for i, (container, arg) in enumerate(zip(self.input_storage, args, strict=False))
        if is_device_array(arg) and takes_as_is(container, arg)
    }
    if not kept:
        return validate(self, args, kwargs)
    import numpy as np

    stand_ins = list(args)
    for i, arg in kept.items():
        stand_ins[i] = np.broadcast_to(np.zeros((), dtype=arg.dtype), arg.shape)
    validate(self, stand_ins, kwargs)
    for i, arg in kept.items():
        self.input_storage[i].storage[0] = arg
    return None


JAX_DEVICE = Patch(
    name="jax device",
    module="pytensor.link.basic",
    attr="JITLinker.make_all",
    params=("self", "input_storage", "output_storage", "storage_map"),
    replacement=jit_make_all,
    why="a JAX function computes float64 where its graph says float64 and float32 matmuls in float32 "
    "(matmul_precision), keeps the shared variables it reads on the device between calls, and is "
    "timed there when profiled (modecfg.device.jaxlink)",
)


SHARED_VALUES = Patch(
    name="shared values",
    module="pytensor.compile.sharedvalue",
    attr="SharedVariable.get_value",
    params=("self", "borrow", "return_internal_type"),
    plain=True,
    replacement=get_value,
    why="an array handed out with borrow=True is sent to the device again at each JAX call (whoever "
    "holds it may change it), noted from PyTensor's import on; once a JAX function is linked, "
    "get_value of a shared variable a JAX function updated on the device returns numpy, as on the "
    "CPU (its device array with return_internal_type=True)",
)


SHARED_VALUES_SET = Patch(
    name="shared values (set)",
    module="pytensor.compile.sharedvalue",
    attr="SharedVariable.set_value",
    params=("self", "new_value", "borrow"),
    plain=True,
    replacement=set_value,
    why="an array taken in with borrow=True is sent to the device again at each JAX call, noted from "
    "PyTensor's import on; once a JAX function is linked, set_value keeps a JAX array on its device, "
    "and a value of the wrong dtype or dimensions is a SharedValueError naming the variable",
)


SHARED_VALUES_MADE = Patch(
    name="shared values (made)",
    module="pytensor.compile.sharedvalue",
    attr="shared_constructor",  # (pytensor.shared calls it, then records the caller's line: no
    # frame of modecfg's is on the stack then, as there would be in a replacement of shared itself)
    params=("value", "name", "strict", "allow_downcast"),
    bound_in=(
        "pytensor.compile",
        "pytensor._sparse_lazy",
        "pytensor.sparse.sharedvar",
        "pytensor.tensor.random.variable",
        "pytensor.tensor.sharedvar",
    ),
    replacement=made,
    why="an array a shared variable is made of with borrow=True and holds as it is stays the caller's "
    "too: a JAX function sends it at each call, as plain PyTensor's JAX functions read it",
)


SHARED_VALUES_ZERO = Patch(
    name="shared values (zero)",
    module="pytensor.tensor.sharedvar",
    attr="TensorSharedVariable.zero",
    params=("self", "borrow"),
    on_demand=True,
    replacement=zero,
    why="zero(borrow=True) writes zeros into the variable's own array: a JAX function reading the "
    "variable sends it again at its next call (its device copy would be stale); on once a JAX "
    "function is linked",
)


DEVICE_INPUTS = Patch(
    name="device inputs",
    module="pytensor.compile.executor",
    attr="Function._validate_inputs",
    params=("self", "args", "kwargs"),
    on_demand=True,
    plain=True,
    replacement=validate_inputs,
    why="a JAX function's inputs given as JAX arrays are used where they are, not copied to the host "
    "and back (on once a JAX function is linked)",
)


PATCHES = (
    JAX_DEVICE,
    SHARED_VALUES,
    SHARED_VALUES_SET,
    SHARED_VALUES_MADE,
    SHARED_VALUES_ZERO,
    DEVICE_INPUTS,
)


def linked() -> None:
    """A function was linked for JAX: inputs given as JAX arrays are used where they are, and
    shared variables it left on the device read as numpy, from now on (the two patches put on here
    cost every call and every ``zero`` a check: off in processes that never use JAX)."""
    global _validate
    from modecfg._pytensor.patches import enable

    _array_type()
    if not _jax_linked:
        _jax_linked.append(True)
    for patch in (SHARED_VALUES_ZERO, DEVICE_INPUTS):
        enable(patch)
    _validate = _originals["device inputs"]  # (recorded as the patch was applied)
