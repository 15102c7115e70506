"""PyTensor's JAX linker as the ``device`` flag runs it: data that stays on the device, the
precision the graph says, and timings of what ran there.

PyTensor's ``JITLinker.make_all`` builds a JAX function's single thunk; modecfg's replacement
(patch "jax device", :mod:`modecfg.device.contacts`) calls it, then, for a JAX linker only:

* **x64 and matmul precision pinned per function.** Each function is converted, traced and
  run in JAX's thread-local contexts: ``jax_enable_x64`` on when floatX is float64 or its graph
  holds a float64 (or complex128) variable, so a float64 the graph asks for is computed in
  float64 (PyTensor's JAX dispatch sets x64 once per process from floatX at its first import
  and truncates silently otherwise); off for a float32 graph, which stays float32 throughout;
  and the ``matmul_precision`` flag's precision (JAX's default on NVIDIA GPUs is TF32), set
  *inside* the function JAX traces (:class:`Traced`), so that its products carry it in the
  compiled program and a call enters no context for it. A context is entered at a call only
  where JAX's state in that thread differs from the function's (x64, for a float64 graph while
  JAX's x64 is off; the precision, where PyTensor's linker cannot take the traced form). A
  call made inside the user's own ``jax.default_matmul_precision`` context traces once more (JAX
  keys its cache by that context) and computes with the function's precision all the same. Outputs
  come back in the dtypes the graph declares (PyTensor's JAX reductions return their
  accumulator's dtype under x64). JAX's process-wide x64 is left as it is (PyTensor set it
  at its import; the user's own ``jax.config.update`` stands).
* **Shared variables resident on the device, never stale.** Each shared tensor the graph reads is
  read through a :class:`Resident`: its value is sent to the device once (at link time, all of them
  or none) and the device copy is used on every call while the host value is the same array *and
  nothing else can have written it*; copies are kept per shared variable, so two functions reading
  one dataset share one device copy. The variable's container keeps the host value, so every other
  linker reads it as before. A host array someone else may write is *not private*, and a JAX
  function then sends it at every call, as plain PyTensor does: an array taken in by ``set_value(a,
  borrow=True)`` or ``shared(a, borrow=True)``, or handed out by ``get_value(borrow=True)``, at any
  time since PyTensor's import, before the first JAX link too (patches "shared values", "shared
  values (set)", "shared values (made)": :func:`modecfg.device.contacts.lend`), a view of another
  array, and a variable that a function on another linker updates (cvm's updates change the array
  in place: the "host updates" patch records every such function, however made, in
  :mod:`modecfg._pytensor.hostwrites`), or whose array it hands out (a borrowed output), and
  ``zero(borrow=True)`` (patch "shared values (zero)") sends the zeros once. One alias cannot be
  seen: PyTensor's internal storage written past its doors (``var.container.value = a`` with ``a``
  kept and changed, ``var.container.storage[0][:] = ...``; ``get_value(borrow=True,
  return_internal_type=True)`` is the documented door, and is seen): ``set_value`` after the
  change sends it. Functions made before modecfg was imported (or while it
  was uninstalled) are found at the next link or send
  (:func:`modecfg._pytensor.hostwrites.catch_up`). Values a function *updates* come back from JAX as
  device arrays, as in plain PyTensor; ``get_value`` turns them into numpy (patch "shared values").
* **Device inputs without a copy.** An input passed as a JAX array of the input's dtype is
  handed to the JAX function as it is (patch "device inputs", on once a JAX function exists:
  PyTensor's input check would copy it to the host and back).
* **Timings of the device run.** The first call (trace, XLA compile, run) is timed, finished
  on the device; once the function is profiled, every call is: inputs sent, the run
  synchronised, bytes moved; the report shows them instead of node times JAX cannot give.

Nothing here is attached to a PyTensor object that pickles: the function's VM, the closure
:func:`vm_for` makes over a :class:`DeviceThunk`, stands where PyTensor's own closure would and
is rebuilt when a pickled function is loaded, as PyTensor's is; residency lives in a module-level
table keyed weakly by the shared variable's container, and a profile holds plain dicts.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from modecfg._pytensor import hostwrites, marks
from modecfg._pytensor.state import applied
from modecfg.configuration import config
from modecfg.errors import DeviceMemoryError, SharedValueError

__all__ = [
    "PRECISIONS",
    "DeviceThunk",
    "Resident",
    "device_of",
    "device_thunk",
    "is_device_array",
    "link",
    "sent_to_device",
    "vm_for",
]

# The matmul_precision flag's values are jax.default_matmul_precision's own names.
PRECISIONS: dict[str, str] = {"highest": "highest", "high": "high", "default": "default"}

# Bytes a GPU cannot hold: kinds JAX has no arrays of (objects, strings, void records).
_NO_JAX_KINDS = frozenset("OSUVM")


@functools.cache
def _contexts() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """JAX's thread-local x64 and matmul-precision context managers."""
    import jax

    x64: Any = getattr(jax, "enable_x64", None)
    if not callable(x64):  # pragma: no cover - JAX before 0.5 keeps it under experimental
        from jax.experimental import enable_x64

        x64 = enable_x64
    return x64, jax.default_matmul_precision


@functools.cache
def _config() -> Any:
    """JAX's configuration object (its ``jax_enable_x64`` is this thread's value)."""
    import jax

    return jax.config


class _ConfigX64:
    """JAX's x64 flag in the calling thread, read through its configuration object (a JAX whose
    flags have no ``State`` of their own)."""

    __slots__ = ("config",)

    def __init__(self, config: Any) -> None:
        self.config = config

    @property
    def value(self) -> Any:
        return self.config.jax_enable_x64


def _x64_state() -> Any:
    """What answers ``.value``: JAX's x64 flag in the calling thread. Its own ``State`` where this
    JAX has one (22 ns a read against 51 ns through ``jax.config``; it is read at every call),
    else the configuration object."""
    try:
        from jax._src.config import enable_x64
    except ImportError:  # pragma: no cover - a JAX without it
        return _ConfigX64(_config())
    return enable_x64 if isinstance(getattr(enable_x64, "value", None), bool) else _ConfigX64(_config())


@contextlib.contextmanager
def pinned(x64_on: bool, precision: str | None) -> Iterator[None]:
    """x64 as ``x64_on`` and ``precision`` for matmuls and convolutions (None: JAX's own), in this
    thread, for this block."""
    x64, matmul = _contexts()
    with x64(x64_on), contextlib.nullcontext() if precision is None else matmul(PRECISIONS[precision]):
        yield


def pins_precision(device: Any) -> bool:
    """Whether the matmul precision is pinned for functions on ``device``: on a GPU (or TPU) a
    lower one changes float32 products (TF32, bfloat16 passes); a CPU computes them in float32
    whatever the precision says, and a function there runs exactly as plain PyTensor's, its
    program the same."""
    return str(getattr(device, "platform", "cpu")) != "cpu"


def traced_with(
    precision: str | None, dtypes: tuple[str | None, ...], fn: Callable[..., Any], *args: Any
) -> Any:
    """``fn(*args)`` with JAX's matmul precision ``precision``, each output in the dtype the graph
    declares (``dtypes``; None: not a tensor): what :class:`Traced` runs when JAX traces it, so
    that the products carry the precision and the casts are part of the compiled program (a cast
    after the call is a dispatch of its own, ~10 us)."""
    if precision is None:
        outputs = fn(*args)
    else:
        _, matmul = _contexts()
        with matmul(precision):
            outputs = fn(*args)
    if not isinstance(outputs, list | tuple) or len(outputs) != len(dtypes):
        return outputs
    cast = [
        out if dtype is None or str(getattr(out, "dtype", dtype)) == dtype else out.astype(dtype)
        for out, dtype in zip(outputs, dtypes, strict=True)
    ]
    return type(outputs)(cast)


class Traced:
    """The graph's JAX function as modecfg has JAX jit it (:func:`traced_with`), under the
    function's own name and signature (JAX names the program after it; PyTensor's tests read the
    name in the jaxpr). A module-level class: it pickles where the function does."""

    def __init__(self, precision: str | None, dtypes: tuple[str | None, ...], fn: Callable[..., Any]) -> None:
        self.precision, self.dtypes, self.fn = precision, dtypes, fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any) -> Any:
        return traced_with(self.precision, self.dtypes, self.fn, *args)


def _jit_with(
    jit_compile: Callable[[Any], Any],
    precision: str | None,
    dtypes: tuple[str | None, ...],
    fn: Callable[..., Any],
) -> Any:
    return jit_compile(Traced(precision, dtypes, fn))


@contextlib.contextmanager
def _traced(linker: Any, precision: str | None) -> Iterator[bool]:
    """For the ``make_all`` of this block, ``linker`` jits its graph's function with the precision
    set, and the outputs cast, inside it (:func:`traced_with`; its instance's ``jit_compile`` for
    the block, taken away after: nothing stays on the linker); whether it does (PyTensor's linker
    has a ``jit_compile`` to wrap)."""
    own = getattr(type(linker), "jit_compile", None)
    if not callable(own) or "jit_compile" in vars(linker):
        yield False
        return
    dtypes = tuple(getattr(out.type, "dtype", None) for out in linker.fgraph.outputs)
    matmul = None if precision is None else PRECISIONS[precision]
    linker.jit_compile = functools.partial(_jit_with, own.__get__(linker), matmul, dtypes)
    try:
        yield True
    finally:
        del linker.jit_compile


_WIDE = frozenset(["float64", "complex128"])
_WIDE_INTS = frozenset(["int64", "uint64"])
_INT32 = (-(2**31), 2**31 - 1)


def _wide_data(var: Any) -> bool:
    """Data from the host that JAX would truncate with x64 off: an input or shared variable of
    64-bit integers (its values are not known when the function is made), a 64-bit integer
    constant beyond int32's range (``2**33 + 5`` would become ``5``)."""
    if getattr(var.type, "dtype", None) not in _WIDE_INTS:
        return False
    data = getattr(var, "data", None)
    if data is None:  # an input, a shared variable
        return var.owner is None
    values = np.asarray(data)
    return values.size > 0 and (int(values.min()) < _INT32[0] or int(values.max()) > _INT32[1])


def needs_x64(fgraph: Any, inner: bool = False) -> bool:
    """Whether a graph computes in 64 bits: floatX=float64, a float64 / complex128 variable,
    its own or one inside a fused elementwise operation (a Composite's scalar graph: its outer
    variables may all be float32 while it computes a float64 in between), or 64-bit integers
    from the host (:func:`_wide_data`)."""
    if config.floatX == "float64":
        return True
    if any(getattr(var.type, "dtype", None) in _WIDE for var in fgraph.variables):
        return True
    if not inner and any(_wide_data(var) for var in fgraph.variables):  # (a Composite's inputs are not)
        return True
    for node in fgraph.apply_nodes:
        scalar = getattr(node.op, "scalar_op", node.op)
        graph = getattr(scalar, "fgraph", None)
        if graph is not None and graph is not fgraph and needs_x64(graph, inner=True):
            return True
    return False


def is_device_array(value: Any) -> bool:
    """A JAX array (without importing JAX where nothing imported it)."""
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(value, jax.Array)


def _target(device: Any = None) -> Any:
    """The JAX device a function compiled now runs on: JAX's default device (``device=cuda``
    made it the chosen GPU), else the first of JAX's default backend."""
    import jax

    if device is not None:
        return device
    chosen = jax.config.jax_default_device
    if chosen is None:
        return jax.devices()[0]
    if isinstance(chosen, str):
        return jax.devices(chosen)[0]
    return chosen


def describe_device(device: Any) -> str:
    """``cuda:0 (NVIDIA H100 80GB HBM3)``, ``cpu:0``: a JAX device in words."""
    platform = "cuda" if device.platform == "gpu" else str(device.platform)
    kind = str(getattr(device, "device_kind", "") or "")
    shown = f"{platform}:{device.id}"
    return f"{shown} ({kind})" if kind and kind.lower() != "cpu" else shown


# -- residency -----------------------------------------------------------------------


class _Copy:
    """A shared variable's value on one device: the host object it was made from, the copy,
    and whether the host object is private (no one else can change it in place)."""

    __slots__ = ("device", "host", "on_device", "private", "sent", "sent_bytes", "x64")

    def __init__(self) -> None:
        self.host: Any = None
        self.on_device: Any = None
        self.device: Any = None
        self.x64 = False  # made with x64 on (an int64 sent with it off is int32 there)
        self.private = False  # the copy may be reused: the host array is the container's alone
        self.sent = 0  # times a value was sent
        self.sent_bytes = 0


_lock = threading.Lock()
# a shared variable's container -> its device copy (weak: the copy goes with the variable)
_copies: weakref.WeakKeyDictionary[Any, _Copy] = weakref.WeakKeyDictionary()
# containers a function on another linker updates: their host arrays change in place
_host_updated = hostwrites.host_updated


def _copy_of(container: Any) -> _Copy:
    with _lock:
        copy = _copies.get(container)
        if copy is None:
            copy = _copies[container] = _Copy()
        return copy


def _private(storage: list[Any], copy: _Copy, container: Any) -> bool:
    """Whether the host array in ``storage`` can change only through PyTensor's own doors
    (``set_value``, a JAX function's update): it owns its data (a view's base may be written),
    it was not handed out (``get_value(borrow=True)``) or taken in (``set_value(a, borrow=True)``)
    as it is, no function on another linker updates it in place, and every door of :data:`DOORS`
    is watched. (Decided without reference counts, whose meaning changes with the interpreter.)"""
    value = storage[0]
    return (
        value.base is None
        and not hostwrites.is_lent(value)
        and container not in _host_updated
        and hostwrites.recording()  # (off: a function made from now on would go unseen)
        and all(door in applied for door in DOORS)  # (one off: what it lets in would go unseen)
    )


# PyTensor's doors through which a host array is handed out, taken in or written in place: where one
# of their patches is off (it did not verify against this PyTensor, or uninstall()), no copy is reused
# (modecfg.device.contacts' names)
DOORS = ("shared values", "shared values (set)", "shared values (made)", "shared values (zero)")


def lent(container: Any, value: np.ndarray) -> None:
    """``value``, the container's host array, is someone else's too (recorded by
    :func:`modecfg._pytensor.hostwrites.lend`, from the doors :mod:`modecfg.device.contacts` watches
    from PyTensor's import on): its device copy is not reused, and a JAX function sends it at every
    call, as plain PyTensor does, until the variable holds another array."""
    with _lock:
        copy = _copies.get(container)
        if copy is not None and copy.host is value:
            copy.private = False


def written(container: Any) -> None:
    """The container's host array was written in place through PyTensor's own door
    (``zero(borrow=True)``, patch "shared values (zero)"): its device copy is not reused; the
    array is still the container's alone, so the copy sent at the next call is."""
    with _lock:
        copy = _copies.get(container)
        if copy is not None:
            copy.host = copy.on_device = None


def not_private(containers: list[Any]) -> None:
    """Their host arrays change in place from now on (:mod:`modecfg._pytensor.hostwrites`, which
    tells this of each function compiled from now on): copies not reused."""
    with _lock:
        for container in containers:
            copy = _copies.get(container)
            if copy is not None:
                copy.private = False


def _none_private() -> None:
    """The patches came off (``uninstall()``): the functions made from now on go unrecorded, so no
    copy is reused; once they are on again, the next call looks for those functions first."""
    with _lock:
        for copy in _copies.values():
            copy.private = False


hostwrites.listeners.append(not_private)  # loaded once: told of every function compiled from now on
hostwrites.lent_listeners.append(lent)  # and of every array lent from now on
hostwrites.uninstalled.append(_none_private)


def _put(name: str, value: np.ndarray, device: Any, x64_on: bool) -> Any:
    """``value`` on ``device`` as a function with ``x64_on`` reads it, finished, or a clear error."""
    import jax

    if value.dtype.kind in _NO_JAX_KINDS:
        raise SharedValueError(
            f"shared variable {name!r} holds {value.dtype} values, which JAX has no arrays of: it "
            f"cannot be used on {describe_device(device)}; give it a numeric dtype"
        )
    x64, _ = _contexts()
    try:
        with x64(x64_on):
            return jax.block_until_ready(jax.device_put(value, device))
    except Exception as exc:
        text = str(exc)
        if "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower():
            raise DeviceMemoryError(
                f"shared variable {name!r} ({value.nbytes / 2**20:.1f} MiB, {value.dtype}"
                f"{tuple(value.shape)}) does not fit in the memory of {describe_device(device)}: "
                f"{text.splitlines()[0]}. Nothing was placed; free "
                "device memory (XLA_PYTHON_CLIENT_MEM_FRACTION, smaller batches) or use device=cpu"
            ) from exc
        raise


class Resident:
    """A shared tensor's storage as a JAX function's thunk reads it (``storage[0]``): the device
    copy of the host value, sent when the host value is new (link time, ``set_value``); a
    device array the function itself put there (an update) as it is."""

    __slots__ = ("container", "copy", "device", "name", "storage", "x64")

    def __init__(self, container: Any, copy: _Copy, device: Any, name: str, x64_on: bool) -> None:
        self.container = container
        self.storage = container.storage
        self.copy = copy
        self.device = device
        self.name = name
        self.x64 = x64_on

    def current(self, value: Any) -> bool:
        copy = self.copy
        return value is copy.host and copy.private and copy.device is self.device and copy.x64 is self.x64

    def __getitem__(self, index: int) -> Any:
        value = self.storage[index]
        copy = self.copy  # current(value), inline: read at every call of the function
        if value is copy.host and copy.private and copy.device is self.device and copy.x64 is self.x64:
            return copy.on_device
        if not isinstance(value, np.ndarray):
            return value  # a device array (an update), or what PyTensor passes on as it is
        hostwrites.catch_up()  # (the record put on anew: the functions made while it was off)
        private = _private(self.storage, self.copy, self.container)
        _keep([(self, value, _put(self.name, value, self.device, self.x64), private)])
        return self.copy.on_device

    def __setitem__(self, index: int, value: Any) -> None:
        self.storage[index] = value

    def __len__(self) -> int:
        return len(self.storage)

    def __repr__(self) -> str:
        return f"<resident {self.name!r} on {describe_device(self.device)}>"


def _keep(placed: list[tuple[Resident, np.ndarray, Any, bool]]) -> None:
    with _lock:
        for resident, value, on_device, private in placed:
            copy = resident.copy
            copy.host, copy.on_device, copy.device, copy.x64 = value, on_device, resident.device, resident.x64
            copy.private = private and resident.container not in _host_updated
            copy.sent += 1
            copy.sent_bytes += value.nbytes


def _place_all(residents: list[Resident]) -> None:
    """Send every resident's host value now, all or none: a value that does not fit leaves
    the others where they were (their earlier copies, or none)."""
    placed = []
    for resident in residents:
        if not isinstance(resident.storage[0], np.ndarray) or resident.current(resident.storage[0]):
            continue
        private = _private(resident.storage, resident.copy, resident.container)
        value = resident.storage[0]
        placed.append((resident, value, _put(resident.name, value, resident.device, resident.x64), private))
    _keep(placed)


def sent_to_device(variable: Any) -> tuple[int, int]:
    """How often a shared variable's value was sent to a device, and how many bytes in all."""
    with _lock:
        copy = _copies.get(variable.container)
    return (copy.sent, copy.sent_bytes) if copy is not None else (0, 0)


# -- the thunk -----------------------------------------------------------------------


# what DeviceThunk.steady_call is made of: setting one of these makes it again
_STEADY_PARTS = frozenset(
    ["fast", "inline", "x64_state", "x64", "jit_fn", "thunk_inputs", "thunk_outputs", "thunk"]
)
_FIRST = operator.itemgetter(0)  # a storage cell's value


class DeviceThunk:
    """What a JAX function's VM runs: PyTensor's thunk, with the function's x64 and matmul
    precision, its outputs in the graph's dtypes, timed on the device for profiles. The VM
    PyTensor's Function holds and calls is the function :func:`vm_for` makes over it.

    No ``__getattr__``: on a class with one, Python reads every attribute the slow way (~28 ns
    against ~10 on this machine), and every call reads ``steady_call``."""

    steady_call: tuple[Any, ...] | None  # made by __setattr__ (:meth:`_steady_call`)

    def __init__(self, thunk: Any, device: Any, x64_on: bool, precision: str, residents: list[Resident],
                 inputs: list[Any], dtypes: list[str | None], traced: bool = False,
                 fgraph: Any = None, node: Any = None) -> None:  # fmt: skip
        self.thunk = thunk
        self.jax_config = _config()  # JAX's state in the calling thread (the matmul precision)
        self.x64_state = _x64_state()  # read at every call: JAX's x64 in the calling thread
        # The steady call runs the jitted function itself, as PyTensor's thunk does (its inputs'
        # values in, its outputs into their storage), one Python frame fewer, where the thunk is
        # the one it replicates: PyTensor's closure over exactly these (else the thunk is called).
        self.jit_fn: Any = getattr(thunk, "jit_fn", None)
        self.thunk_inputs: Any = getattr(thunk, "inputs", None)
        self.thunk_outputs: Any = getattr(thunk, "outputs", None)
        self.inline = (
            node is not None
            and bool(self.thunk_outputs)
            and tuple(map(id, getattr(thunk, "__defaults__", None) or ()))
            == (id(self.jit_fn), id(self.thunk_inputs), id(self.thunk_outputs))
        )
        self.fgraph, self.node = fgraph, node  # what PyTensor's thunk names when the call fails
        # no precision context at a call: it is in the traced function (:class:`Traced`), or not
        # pinned on this device (:func:`pins_precision`)
        self.traced = traced
        self.device = device
        self.x64 = x64_on
        self.precision = precision
        self.residents = residents
        self.plain_inputs = inputs  # the storage of inputs that are not shared variables
        self.dtypes = dtypes  # each output's declared dtype (None: not a tensor)
        self.casts: list[tuple[list[Any], str]] = []  # outputs JAX returns in another dtype
        self.profiled = False
        self.steady = False  # the first call made, no output to cast, not timed: the thunk alone
        self.fast = False  # steady, and the precision in the traced program: __call__'s first test
        self.stats: dict[str, Any] = {
            "device": describe_device(device),
            "precision": precision,
            "x64": x64_on,
            "first_call": None,  # seconds: trace, XLA compile and the first run, finished
            "calls": 0,  # calls timed (after the first, once profiled)
            "run": 0.0,  # seconds on the device, finished
            "sent": 0.0,  # seconds sending inputs
            "sent_bytes": 0,
            "shared_sent": {},  # shared variable -> (calls, bytes) sent during timed calls
            "returned_bytes": 0,  # outputs, left on the device (moved when read)
        }

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _STEADY_PARTS:
            object.__setattr__(self, "steady_call", self._steady_call())

    def _steady_call(self) -> tuple[Any, ...] | None:
        """What the steady call reads, in one attribute (one read and an unpacking, against
        six reads): (JAX's x64 in this thread, the function's, the jitted function or None
        where the call is the thunk's, the thunk's inputs and outputs, the thunk); None while
        calls are not steady ones."""
        held = self.__dict__
        if not held.get("fast"):
            return None
        return (
            held["x64_state"],
            held["x64"],
            held["jit_fn"] if held.get("inline") else None,
            held["thunk_inputs"],
            held["thunk_outputs"],
            held["thunk"],
        )

    def _pinned(self) -> Any:
        jax_config = self.jax_config
        same_x64 = self.x64_state.value is self.x64
        same_precision = (
            self.traced
            or (jax_config.jax_default_matmul_precision or "default") == PRECISIONS[self.precision]
        )  # JAX's unset precision is its "default"
        if same_x64 and same_precision:
            # JAX's state in this thread is what the function needs already: no context to enter
            return self.thunk() if self.steady else self._run()
        x64, matmul = _contexts()
        if same_precision:  # x64 alone differs (a float32 graph while PyTensor turned JAX's on)
            with x64(self.x64):
                return self.thunk() if self.steady else self._run()
        with matmul(PRECISIONS[self.precision]), contextlib.nullcontext() if same_x64 else x64(self.x64):
            return self.thunk() if self.steady else self._run()

    def _run(self) -> Any:
        if self.stats["first_call"] is None:
            result = self._first()
        elif self.profiled:
            result = self._timed()
        else:
            result = self.thunk()
        for storage, dtype in self.casts:
            storage[0] = storage[0].astype(dtype)
        return result

    def _finish(self) -> int:
        """Wait for the outputs on the device; their bytes."""
        import jax

        total = 0
        for storage in self.thunk.outputs:
            value = storage[0]
            if is_device_array(value):
                jax.block_until_ready(value)
                total += int(value.nbytes)
        return total

    def _first(self) -> Any:
        start = time.perf_counter()
        result = self.thunk()
        self._finish()
        self.stats["first_call"] = time.perf_counter() - start
        self.casts = [
            (storage, dtype)
            for storage, dtype in zip(self.thunk.outputs, self.dtypes, strict=True)
            if dtype is not None and is_device_array(storage[0]) and str(storage[0].dtype) != dtype
        ]
        self.steady = not self.casts and not self.profiled
        self.fast = self.steady and self.traced
        return result

    def _timed(self) -> Any:
        import jax

        stats = self.stats
        before = {r.name: r.copy.sent_bytes for r in self.residents}
        start = time.perf_counter()
        sent = 0
        for storage in self.plain_inputs:  # numpy inputs: sent here, so the send is timed apart
            value = storage[0]
            if isinstance(value, np.ndarray):
                storage[0] = jax.device_put(value, self.device)
                sent += value.nbytes
        for storage in self.plain_inputs:
            if is_device_array(storage[0]):
                jax.block_until_ready(storage[0])
        for resident in self.residents:
            resident[0]  # a new host value is sent now, and counted
        sent_at = time.perf_counter()
        result = self.thunk()
        returned = self._finish()
        done = time.perf_counter()
        stats["calls"] += 1
        stats["sent"] += sent_at - start
        stats["run"] += done - sent_at
        stats["sent_bytes"] += sent
        stats["returned_bytes"] += returned
        for resident in self.residents:
            moved = resident.copy.sent_bytes - before.get(resident.name, 0)
            if moved:
                stats["sent_bytes"] += moved
                shared = stats["shared_sent"]
                count, total = shared.get(resident.name, (0, 0))
                shared[resident.name] = (count + 1, total + moved)
        return result

    def update_profile(self, profile: Any) -> None:
        """Function.__call__ asks after each profiled call: from now on every call is timed,
        and the profile holds the device's figures (a plain dict: it pickles anywhere)."""
        self.profiled = True
        self.steady = self.fast = False
        setattr(profile, marks.PROFILE_DEVICE, dict(self.stats, shared_sent=dict(self.stats["shared_sent"])))


# what PyTensor's JIT linker sets on the thunk that is a JAX function's VM (``make_all`` and
# ``create_jitable_thunk``), and its Function reads off the VM: the device VM carries them too
_THUNK_ATTRIBUTES = ("inputs", "outputs", "lazy", "jit_fn", "storage_map", "allow_gc")


def vm_for(device: DeviceThunk) -> Any:
    """The VM PyTensor's Function holds and calls for a JAX function: a function over ``device``,
    as PyTensor's own JAX VM is one over its jitted function (its thunk, a closure), carrying
    what PyTensor's thunk carries as a VM (the same objects: ``inputs``, ``outputs``, ``lazy``,
    ``jit_fn``, ``storage_map``, ``allow_gc``), ``update_profile`` and ``device_thunk``.

    A function and not ``device`` itself: JAX's dispatch reads the Python stack at each call,
    and a call through a class's ``__call__`` cost a small function's call ~0.25 us more (of
    ~10; PyTensor's Function calling either, the same jitted function, this machine). Like
    PyTensor's VM it is a closure, the one modecfg attaches to a PyTensor object, in place of
    PyTensor's: neither pickles, and a Function pickles without its VM (it links a new one
    when loaded)."""

    def device_vm() -> Any:
        # The steady call, where this thread's x64 is the function's (the precision is in its
        # traced program): what PyTensor's thunk does, written out (``inline``), else the thunk;
        # any other call goes through the device thunk's pinning, first-call and profiling paths.
        steady = device.steady_call
        if steady is not None:
            x64_state, x64, jit_fn, inputs, outputs, thunk = steady
            if x64_state.value is x64:
                if jit_fn is None:
                    return thunk()
                # The inputs' values passed as arguments where there are one or two (the usual
                # functions): ``*`` over an iterator made JAX's call ~0.3 us dearer (of ~6;
                # this machine); PyTensor's thunk unpacks a generator.
                count = len(inputs)
                try:
                    if count == 1:
                        results = jit_fn(inputs[0][0])
                    elif count == 2:
                        results = jit_fn(inputs[0][0], inputs[1][0])
                    else:
                        results = jit_fn(*map(_FIRST, inputs))
                except Exception:
                    from pytensor.link import basic  # (its raise_with_op, patched or not, as the thunk's)

                    basic.raise_with_op(device.fgraph, device.node, thunk)
                    raise  # (raise_with_op raises: what it was given, if it ever returned)
                if len(outputs) == 1:
                    outputs[0][0] = results[0]  # (zip's first pair, as PyTensor's loop takes it)
                else:
                    for storage, value in zip(outputs, results):  # noqa: B905 (a hot loop, as PyTensor's)
                        storage[0] = value
                return None
        return device._pinned()

    vm: Any = device_vm
    thunk = device.thunk
    for name in _THUNK_ATTRIBUTES:
        if hasattr(thunk, name):
            setattr(vm, name, getattr(thunk, name))
    vm.update_profile = device.update_profile
    vm.device_thunk = device
    return vm


def device_thunk(fn: Any) -> DeviceThunk | None:
    """A compiled function's :class:`DeviceThunk`, or None where it is not a JAX function."""
    vm = getattr(fn, "vm", None)
    if type(vm) is not types.FunctionType:
        return None
    held = vm.__dict__.get("device_thunk")
    return held if isinstance(held, DeviceThunk) else None


def link(linker: Any, make_all: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """PyTensor's ``make_all`` for a JAX linker, with the JAX function pinned, its shared
    inputs resident and its VM running a :class:`DeviceThunk` (:func:`vm_for`)."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.tensor.type import TensorType

    hostwrites.catch_up()  # the functions made while none were recorded: before modecfg's import
    precision = str(config.matmul_precision)
    x64_on = needs_x64(linker.fgraph)
    device = _target()
    pins = pins_precision(device)  # (a CPU: the program is plain PyTensor's, precision and all)
    pinning = precision if pins else None
    with pinned(x64_on, pinning), _traced(linker, pinning) as traced:
        fn, inputs, outputs, thunks, nodes = make_all(linker, *args, **kwargs)
    residents = []
    plain = []
    for i, (variable, storage) in enumerate(zip(linker.fgraph.inputs, list(fn.inputs), strict=True)):
        if isinstance(variable, SharedVariable) and isinstance(variable.type, TensorType):
            name = str(variable.name or variable)
            if storage is not variable.container.storage:  # not the container's list: read as PyTensor does
                plain.append(storage)
                continue
            resident = Resident(variable.container, _copy_of(variable.container), device, name, x64_on)
            fn.inputs[i] = resident  # the thunk reads this very list: x[0] for x in thunk_inputs
            residents.append(resident)
        else:
            plain.append(storage)
    _place_all(residents)
    dtypes = [getattr(out.type, "dtype", None) for out in linker.fgraph.outputs]
    thunk = DeviceThunk(fn, device, x64_on, precision, residents, plain, dtypes, traced or not pins,
                        linker.fgraph, nodes[0] if nodes else None)  # fmt: skip
    return vm_for(thunk), inputs, outputs, thunks, nodes


# -- what the other patches ask ------------------------------------------------------


def device_of(fn: Any) -> Any:
    """The JAX device a compiled function runs on, or None when it is not a JAX function."""
    device = device_thunk(fn)
    return device.device if device is not None else None


def takes_as_is(container: Any, value: Any) -> bool:
    """Whether ``value``, a JAX array, can be a JAX function's input of ``container``'s type."""
    kind = container.type
    dtype = getattr(kind, "dtype", None)
    shape = getattr(kind, "shape", None)
    if dtype is None or shape is None or str(value.dtype) != dtype or value.ndim != len(shape):
        return False
    return all(s is None or s == v for s, v in zip(shape, value.shape, strict=True))


def host_value(value: Any, borrow: bool) -> Any:
    """A device array as numpy: a view of the host copy with ``borrow`` (read-only), else a
    copy of its own."""
    if not is_device_array(value):
        return value
    return np.asarray(value) if borrow else np.array(value)


def lowered(fn: Any, *args: Any) -> str:
    """The StableHLO text XLA compiles for a JAX function called with ``args`` (its inputs that
    are not shared variables), traced as its calls trace it: with its x64 and matmul precision.
    Where a precision or a dtype is in doubt, this is what ran."""
    vm = device_thunk(fn)
    if vm is None:
        raise TypeError("lowered() takes a function compiled for JAX (linker=jax or device=cuda)")
    given = iter(args)
    values = [item[0] if isinstance(item, Resident) else next(given) for item in vm.thunk.inputs]
    with pinned(vm.x64, vm.precision if pins_precision(vm.device) else None):
        return str(vm.thunk.jit_fn.lower(*values).as_text())


# Operations whose float32 results a lower matmul precision changes (by class name, with
# Blockwise's core operation): products and convolutions.
_PRODUCTS = frozenset(["Dot", "Dot22", "Dot22Scalar", "Gemm", "Gemv", "Ger", "BatchedDot", "Dot2", "MatMul"])


def _is_product(op: Any) -> bool:
    op = getattr(op, "core_op", op)
    name = type(op).__name__
    return name in _PRODUCTS or "Conv" in name


def precision_note(graph: Any) -> str:
    """Why a JAX function on a GPU may differ from the CPU in float32 products: the
    ``matmul_precision`` flag (not ``highest``), said for CompareMode; '' when that cannot be it."""
    precision = str(config.matmul_precision)
    if precision == "highest" or "jax" not in sys.modules:
        return ""
    device = _target()
    if device.platform != "gpu":
        return ""
    products = [node for node in getattr(graph, "apply_nodes", ()) if _is_product(node.op)]
    if not products:
        return ""
    return (
        f"jax on {describe_device(device)} computes float32 matmuls and convolutions at "
        f"matmul_precision={precision} (JAX's '{PRECISIONS[precision]}': TF32-like, a relative error "
        f"near 3e-4 where float32 gives 1e-6) in {len(products)} node(s) of this graph, first "
        f"{products[0].op}: a difference that size is that precision's; matmul_precision=highest "
        "compares float32 with float32"
    )
