"""Which shared variables a function on a host linker (cvm, py, numba, ...) updates.

cvm writes a shared variable's update into its array in place, so a JAX function's device copy
of that array would go stale (issue 58). Every compiled function's updates are recorded here,
from the first compile on, by the "host updates" replacement (``FunctionMaker.create``, which
makes the functions of ``pytensor.function``, ``Function.copy`` and unpickling alike): a module
this small so that a process that never uses JAX does not load the JAX path (:mod:`modecfg.device.jaxlink`
reads this record and, once loaded, listens for the functions compiled after its copies were
made).
"""

from __future__ import annotations

import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["host_updated", "host_updates", "listeners"]

_lock = threading.Lock()
# containers of the shared variables a function on another linker than JAX updates
host_updated: weakref.WeakSet[Any] = weakref.WeakSet()
# told of each function's updated containers after they are recorded (the JAX path, once loaded)
listeners: list[Callable[[list[Any]], None]] = []


def host_updates(fn: Any) -> None:
    """Record the shared variables ``fn`` updates, where ``fn`` is not a JAX function; a device
    copy of one already made is not reused from now on."""
    vm = getattr(fn, "vm", None)
    if type(vm) is types.FunctionType and "device_thunk" in vm.__dict__:  # a JAX function's VM
        return  # (modecfg.device.jaxlink.vm_for): its updates stay on the device
    expanded = getattr(getattr(fn, "maker", None), "expanded_inputs", None)
    if expanded is None:
        return
    # the shared variable's own container (the function's is another one around the same list)
    updated = [
        container
        for given in expanded
        if getattr(given, "update", None) is not None
        and (container := getattr(getattr(given, "variable", None), "container", None)) is not None
    ]
    if not updated:
        return
    with _lock:
        host_updated.update(updated)
    for listener in listeners:
        listener(updated)
