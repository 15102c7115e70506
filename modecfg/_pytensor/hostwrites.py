"""Which shared variables a function on a host linker (cvm, py, numba, ...) updates, or hands out.

cvm writes a shared variable's update into its array in place, so a JAX function's device copy
of that array would go stale (issue 58). Every compiled function's updates are recorded here,
from the first compile on, by the "host updates" replacement (``FunctionMaker.create``, which
makes the functions of ``pytensor.function``, ``Function.copy`` and unpickling alike): a module
this small so that a process that never uses JAX does not load the JAX path (:mod:`modecfg.device.jaxlink`
reads this record and, once loaded, listens for the functions compiled after its copies were
made). A function whose borrowed output (``Out(w, borrow=True)``, or a view of ``w``) is the
variable's own array is recorded too: its caller holds that array and may change it in place. So
is an array lent through PyTensor's doors (:func:`lend`: ``get_value(borrow=True)``,
``set_value(a, borrow=True)``, ``shared(a, borrow=True)``, watched from PyTensor's import on by
:mod:`modecfg.device.contacts`).

The replacement sees the functions made while it is on. Those made before it (PyTensor imported
before modecfg, a step compiled in between) or while it was off (``uninstall()``, after which the
JAX path reuses no device copy: :data:`uninstalled`) are found by :func:`catch_up`, which the JAX
path calls at each link and before it sends a value: one walk of the collector's objects (~70 ms
in a PyMC process of 180,000 objects) the first time after the replacement went on (none where
PyTensor was imported after modecfg: the replacement went on at its import, which makes no
function) (an earlier version missed them, and a JAX function linked after ``import modecfg`` read
0.0 where plain PyTensor reads 6.0).
"""

from __future__ import annotations

import gc
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

from modecfg._pytensor import state as _state
from modecfg._pytensor.state import applied

__all__ = [
    "catch_up",
    "host_updated",
    "host_updates",
    "is_lent",
    "lend",
    "lent",
    "lent_listeners",
    "listeners",
    "recording",
    "uninstalled",
]

_lock = threading.Lock()
_walking = threading.Lock()  # held by catch_up's walk
# containers of the shared variables a function on another linker than JAX updates in place, or
# whose arrays it hands out to its caller (a borrowed output)
host_updated: weakref.WeakSet[Any] = weakref.WeakSet()
# told of each function's updated containers after they are recorded (the JAX path, once loaded)
listeners: list[Callable[[list[Any]], None]] = []
# the "host updates" record under which every function is known to be recorded (state.WALKED)
_walked = _state.WALKED
# told when the patches come off (the JAX path: no copy is private while nothing is recorded)
uninstalled = _state.UNINSTALLED
# a host array someone else holds too (lend()), by its id -> a weak reference to it: weak, so that
# an array no variable holds any longer is not kept alive for this; an id a dead array left behind
# answers no other array (is_lent compares the objects), and is dropped as the record grows
lent: dict[int, Any] = {}
_lent_lock = threading.Lock()
_prune_at = [1024]  # the record's size at which the dead arrays' entries are next dropped
# told of each array lent, with its container (the JAX path, once loaded: its copy is not reused)
lent_listeners: list[Callable[[Any, Any], None]] = []


def lend(container: Any, value: Any) -> None:
    """``value``, the container's host array, is someone else's too: whoever holds it may change it
    in place, so no device copy of it may be reused (a JAX function sends it at every call)."""
    with _lent_lock:
        lent[id(value)] = weakref.ref(value)
        if len(lent) >= _prune_at[0]:
            for key in [key for key, ref in lent.items() if ref() is None]:
                del lent[key]
            _prune_at[0] = max(1024, 2 * len(lent))
    for listener in lent_listeners:
        listener(container, value)


def is_lent(value: Any) -> bool:
    """Whether ``value`` (a host array) was lent (:func:`lend`)."""
    ref = lent.get(id(value))
    return ref is not None and ref() is value


def host_updates(fn: Any) -> None:
    """Record the shared variables ``fn`` updates, or whose arrays it hands out (a borrowed
    output), where ``fn`` is not a JAX function; a device copy of one already made is not reused
    from now on."""
    vm = getattr(fn, "vm", None)
    if type(vm) is types.FunctionType and "device_thunk" in vm.__dict__:  # a JAX function's VM
        return  # (modecfg.device.jaxlink.vm_for): its updates stay on the device
    maker = getattr(fn, "maker", None)
    expanded = getattr(maker, "expanded_inputs", None)
    if expanded is None:
        return
    try:
        written = _written(maker, expanded)
    except Exception:  # not a function as PyTensor makes them: the safe answer, all it reads
        written = _shared(expanded)
    if not written:
        return
    with _lock:
        host_updated.update(written)
    for listener in listeners:
        listener(written)


def _written(maker: Any, expanded: Any) -> list[Any]:
    """The containers of the shared variables the function updates (in place, off JAX), then those
    whose own arrays it may hand out: an output declared ``Out(..., borrow=True)`` that is the
    variable, or a view of it (PyTensor lets such an output alias a shared input instead of
    copying it), which its caller may change in place."""
    # the shared variable's own container (the function's is another one around the same list);
    # an explicit input's variable (In(x, update=...)) has none: its value is the caller's
    updated = [
        given.variable.container
        for given in expanded
        if given.update is not None and getattr(given.variable, "container", None) is not None
    ]
    borrowed = [i for i, out in enumerate(maker.outputs) if out.borrow]
    if not borrowed:
        return updated
    fgraph = maker.fgraph
    roots = {_alias_root(fgraph.outputs[i]) for i in borrowed}
    handed = [
        given.variable.container
        for given, variable in zip(expanded, fgraph.inputs, strict=True)
        if given.shared and variable in roots
    ]
    return updated + [container for container in handed if container not in updated]


def _shared(expanded: Any) -> list[Any]:
    """Every shared variable's container among ``expanded`` (what a function may write or hand out,
    where what it does cannot be read: sent again at each call, slower, never stale)."""
    return [
        container
        for given in expanded
        if (container := getattr(getattr(given, "variable", None), "container", None)) is not None
    ]


def _alias_root(variable: Any) -> Any:
    """The variable whose storage ``variable``'s may be: back through each op's ``view_map`` and
    ``destroy_map`` (what PyTensor's own ``alias_root`` follows)."""
    while (node := variable.owner) is not None:
        index = node.outputs.index(variable)
        on = node.op.view_map.get(index) or node.op.destroy_map.get(index)
        if not on:
            return variable
        variable = node.inputs[on[0]]
    return variable


def recording() -> bool:
    """Whether the functions made from now on are recorded (the replacement is on)."""
    return "host updates" in applied


def catch_up() -> bool:
    """Record the functions made while no replacement recorded them (see the module's text): one
    walk of the collector's objects each time the replacement is found put on anew (the first
    call, and after an ``uninstall()``); whether every function is recorded now (False while the
    replacement is off: then no host array is private)."""
    on = applied.get("host updates")
    if on is None:
        return False
    if on is _walked[0]:
        return True
    with _walking:  # another thread linking meanwhile waits for the walk's end
        if on is not _walked[0]:
            from pytensor.compile.executor import Function

            # (issubclass of each type: neither an object's __class__ nor a type's hash is asked,
            # either of which may run anyone's code or raise: a set of types fails on a metaclass
            # without a hash)
            made = [obj for obj in gc.get_objects() if issubclass(type(obj), Function)]
            for fn in made:  # (one made during the walk: the replacement records it)
                host_updates(fn)
            _walked[0] = on
    return True
