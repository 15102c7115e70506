"""Every change modecfg makes to PyTensor: one declarative list, verified, undoable.

A :class:`Patch` names its target (a module and an attribute, possibly of a class),
every other module that binds the same object under the same name (``bound_in``: ``from
pytensor.link.utils import raise_with_op`` makes a second reference that patching the
first would miss), the replacement, and why. :func:`install`

1. compares PyTensor's version with the range CI tests (:data:`TESTED`);
2. verifies every patch **before touching anything**: the target exists and is what
   the replacement expects (a function with these parameters, a dict), and every
   loaded module of ``bound_in`` binds that very object;
3. applies the verified patches and leaves the others off; one
   :class:`~modecfg.errors.PyTensorIntegrationWarning` names what is off and why.

It never raises: PyTensor is imported while it runs, and the user's ``import pytensor``
must not fail because of modecfg. :func:`uninstall` puts every original back, in every
module that bound it. A replacement that someone captured meanwhile (``atexit`` holds the profile
printer) calls the original once its patch is off. :func:`status` says, for each
integration point, whether it is on and why (``modecfg doctor`` shows it).

Replacements live in :mod:`modecfg._pytensor.replacements`, as module-level functions
and classes: nothing attached to PyTensor is a closure or a local class, so it pickles.
"""

from __future__ import annotations

import importlib
import sys
import threading
import warnings
from collections.abc import Callable
from types import FunctionType
from typing import TYPE_CHECKING, Any

from modecfg._locks import fork_safe
from modecfg._pytensor import replacements
from modecfg._pytensor.patch import REGISTERED, Patch, register_all
from modecfg._pytensor.state import HAND_OFF, UNINSTALLED, Method, Wrapper, original
from modecfg._pytensor.state import applied as _applied
from modecfg._pytensor.state import originals as _originals
from modecfg._pytensor.version import pytensor_version
from modecfg._record import Record
from modecfg.errors import ConfigError, PyTensorIntegrationWarning

if TYPE_CHECKING:
    import logging

__all__ = [
    "PATCHES",
    "TESTED",
    "Patch",
    "PatchStatus",
    "enable",
    "every",
    "install",
    "installed",
    "original",
    "status",
    "take_registered",
    "uninstall",
]


def _log() -> logging.Logger:
    import logging  # not at import: reading the configuration stays cheap

    return logging.getLogger("modecfg.pytensor")


# The PyTensor versions CI runs modecfg's suite against: >= 3.0 and < 3.4.
TESTED: tuple[tuple[int, int], tuple[int, int]] = ((3, 0), (3, 4))


CONFIG_VIEW = Patch(
    name="config view",
    module="pytensor.configdefaults",
    attr="config",
    bound_in=("pytensor",),
    replacement=replacements.config_view,
    undo=replacements.config_view_off,
    kind=object,
    why="pytensor.config reads, writes and change_flags are modecfg's configuration (one store, "
    "overrides per thread and task); changed in place, since every PyTensor module holds it",
    also=(
        "pytensor.configparser.PyTensorConfigParser.__setattr__",
        "pytensor.configparser.PyTensorConfigParser.add",
        "pytensor.configparser.PyTensorConfigParser.<flag> (a FlagParam for each flag modecfg answers)",
        "pytensor.configdefaults.config._config_var_dict (a Table holding those FlagParams)",
    ),
)


CHANGE_FLAGS = Patch(
    name="change_flags",
    module="pytensor.configparser",
    attr="_ChangeFlagsDecorator.__enter__",
    params=("self",),
    replacement=replacements.change_flags_enter,
    plain=True,
    needs=(CONFIG_VIEW,),
    why="pytensor.config.change_flags (a block or a decorator, made before modecfg was imported or "
    "since): the flags modecfg answers are one modecfg override of this thread or task, the others "
    "PyTensor's",
)


REGISTER_MODE = Patch(
    name="register_mode",
    module="pytensor.compile.mode",
    attr="register_mode",
    bound_in=("pytensor.compile", "pytensor.compile.debug.debugmode"),
    params=("name", "mode"),
    replacement=replacements.register_mode_unless_taken,
    why="PyTensor's register_mode refuses every name the mode table answers, DEBUG_MODE "
    "(registered when DebugMode is imported) among them: it checks PyTensor's own entries",
)


# The one list of every change modecfg makes to PyTensor: the core's here, and each feature's,
# declared beside its replacements and registered when modecfg is wired (before install()).
PATCHES: list[Patch] = [
    CONFIG_VIEW,
    CHANGE_FLAGS,
    Patch(
        name="change_flags (exit)",
        module="pytensor.configparser",
        attr="_ChangeFlagsDecorator.__exit__",
        params=("self",),
        replacement=replacements.change_flags_exit,
        plain=True,
        needs=(CHANGE_FLAGS,),
        why="ends that override",
    ),
    Patch(
        name="change_flags (make)",
        module="pytensor.configparser",
        attr="PyTensorConfigParser.change_flags",
        params=("self", "kwargs"),
        replacement=replacements.change_flags_make,
        plain=True,
        needs=(CHANGE_FLAGS,),
        why="makes the same decorator as PyTensor's, without the class call (a third of a with "
        "statement's time)",
    ),
    Patch(
        name="profiled compiles",
        module="pytensor.compile.maker",
        attr="function",
        bound_in=(
            "pytensor.compile",
            "pytensor",
            "pytensor.compile.builders",
            "pytensor.tensor.optimize",
            "pytensor.link.jax.ops",
        ),
        params=("inputs", "outputs", "mode"),
        replacement=replacements.function,
        why="a profiled pytensor.function (profile=True or the flag) on numba, c|py, py or c, "
        "which cannot time nodes, is compiled with cvm (or vm) and says so, not empty tables (jax is "
        "timed on its device)",
    ),
    Patch(
        name="host updates",
        module="pytensor.compile.maker",
        attr="FunctionMaker.create",
        params=("self", "input_storage", "storage_map"),
        replacement=replacements.create,
        why="every function made (pytensor.function, Function.copy, unpickled): the shared variables "
        "it updates in place on a host linker are read by JAX functions from the host at every call",
    ),
    REGISTER_MODE,
    Patch(
        name="mode table",
        module="pytensor.compile.mode",
        attr="predefined_modes",
        bound_in=("pytensor.compile",),
        kind=dict,
        replacement=replacements.mode_table,
        needs=(REGISTER_MODE,),
        why="pytensor.function(mode='NanGuardMode'), get_mode() and the mode flag reach modecfg's "
        "modes; PyTensor's other entries stay",
    ),
    Patch(
        name="compile hook",
        module="pytensor.compile.maker",
        attr="FunctionMaker.prepare_fgraph",
        params=("inputs", "outputs", "additional_outputs", "fgraph"),
        replacement=replacements.prepare_fgraph,
        why="every compile keeps the graph as written (error locations, the NaN guard), checks it "
        "for float64 under floatX=float32, and carries user lines through the rewrites",
    ),
    Patch(
        name="error locations",
        module="pytensor.link.utils",
        attr="raise_with_op",
        bound_in=(
            "pytensor.link.basic",
            "pytensor.link.c.basic",
            "pytensor.link.vm",
            "pytensor.compile.executor",
            "pytensor.compile.debug.debugmode",
        ),
        params=("fgraph", "node", "thunk", "exc_info", "storage_map"),
        replacement=replacements.raise_with_op,
        why="errors of compiled functions name the line of user code that made the failing node",
    ),
    Patch(
        name="gradients",
        module="pytensor.gradient",
        attr="grad",
        bound_in=(
            "pytensor",
            "pytensor.tensor",
            "pytensor.tensor.optimize",
            "pytensor.tensor.extra_ops",
            "pytensor.compile.builders",
            "pytensor.scan.op",
        ),
        params=("cost", "wrt"),
        replacement=replacements.grad,
        why="nodes a gradient adds name the grad call and the user's expression they differentiate "
        "(their own traces stop inside PyTensor)",
    ),
]
PATCHES.extend(REGISTERED)  # the features' registered so far (later ones: take_registered)


class PatchStatus(Record):
    """Where one integration point stands: ``state`` is on, off, waiting or failed."""

    patch: Patch | Contact
    state: str
    reason: str


class _Applied(Record):
    owner: Any  # the module or class whose attribute was replaced
    raw: Any  # what owner held (a staticmethod stays one)
    original: Any
    replacement: Any
    bound_in: tuple[str, ...]  # the other modules patched


class _Mismatch(Exception):
    pass


_lock = fork_safe(sys.modules[__name__], "_lock", threading.RLock)
_problems: dict[str, str] = {}
_version_problem = ""
_installed = False
_warned = False
# the on-demand patches enable() put on: uninstall() takes them off with the rest, install() puts
# them back (the need that put them on, a JAX function, a flag, outlives an uninstall)
_demanded: set[str] = set()


def installed() -> bool:
    return _installed


def take_registered() -> None:
    """The features' patches registered since (``modecfg._pytensor.patch.register``), added to
    the one list."""
    with _lock:
        listed = {patch.name for patch in PATCHES}
        PATCHES.extend(patch for patch in REGISTERED if patch.name not in listed)


def _check_version() -> str:
    version = pytensor_version()
    low, high = TESTED
    if version is None:
        return "PyTensor's version cannot be read"
    if not low <= version < high:
        text = getattr(sys.modules["pytensor"], "__version__", "?")
        return (
            f"PyTensor {text} is outside the range modecfg is tested with "
            f"(>= {low[0]}.{low[1]}, < {high[0]}.{high[1]})"
        )
    return ""


def _resolve(patch: Patch) -> tuple[Any, str, Any]:
    """(owner, attribute, raw object) of a patch's target; _Mismatch if it is not there."""
    try:
        module = sys.modules.get(patch.module) or importlib.import_module(patch.module)
    except Exception as exc:
        raise _Mismatch(f"{patch.module} cannot be imported ({exc!r})") from None
    *path, attr = patch.attr.split(".")
    owner: Any = module
    for part in path:
        owner = getattr(owner, part, None)
        if owner is None:
            raise _Mismatch(f"{patch.module} has no {part}")
    raw = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
    if raw is None:
        raise _Mismatch(f"{patch.target} does not exist")
    return owner, attr, raw


_VARARGS, _VARKEYWORDS = 0x04, 0x08  # inspect.CO_VARARGS, inspect.CO_VARKEYWORDS


def parameter_names(obj: Any) -> tuple[str, ...]:
    """``tuple(inspect.signature(obj).parameters)``: for a plain function (nothing wrapped, no
    signature of its own), read from its code as inspect reads it, without making the Signature
    (the patch list's verification asks 17 targets at every import: 0.3 ms through inspect)."""
    own = getattr(obj, "__dict__", {})
    if type(obj) is not FunctionType or "__wrapped__" in own or "__signature__" in own:
        import inspect

        return tuple(inspect.signature(obj).parameters)
    code = obj.__code__
    names, positional, keyword_only = code.co_varnames, code.co_argcount, code.co_kwonlyargcount
    found = list(names[:positional])
    after = positional + keyword_only
    if code.co_flags & _VARARGS:
        found.append(names[after])
        after += 1
    found += names[positional : positional + keyword_only]
    if code.co_flags & _VARKEYWORDS:
        found.append(names[after])
    return tuple(found)


def _verify(patch: Patch) -> tuple[Any, str, Any, Any]:
    """Check one patch against the installed PyTensor, touching nothing."""
    owner, attr, raw = _resolve(patch)
    obj: Any = raw.__func__ if isinstance(raw, staticmethod | classmethod) else raw
    if patch.kind is not None:
        if not isinstance(obj, patch.kind):
            raise _Mismatch(f"{patch.target} is a {type(obj).__name__}, not a {patch.kind.__name__}")
    elif not callable(obj):
        raise _Mismatch(f"{patch.target} is not callable")
    if patch.params is not None:
        try:
            names = parameter_names(obj)
        except (TypeError, ValueError):
            raise _Mismatch(f"{patch.target} has no readable signature") from None
        if names[: len(patch.params)] != patch.params or (not patch.params and names):
            raise _Mismatch(
                f"{patch.target} takes ({', '.join(names)}), where modecfg expects "
                f"({', '.join(patch.params)}{', ...' if patch.params else ''})"
            )
    for other in patch.bound_in:
        module = sys.modules.get(other)
        if module is None:
            continue  # not loaded: it binds the replacement when it is imported
        bound = getattr(module, attr, None)
        if bound is not None and bound is not obj:
            raise _Mismatch(f"{other}.{attr} is not {patch.target}: patching one would miss the other")
    return owner, attr, raw, obj


def _apply(patch: Patch, owner: Any, attr: str, raw: Any, obj: Any) -> None:
    made = patch.replacement
    replacement: Any
    if patch.kind is not None:  # an object: the replacement is a factory of what takes its place
        replacement = made(obj)
    elif patch.plain:
        replacement = made
    elif isinstance(owner, type) and not isinstance(raw, staticmethod | classmethod):
        # a method: made(self, original, ...), bound as a partial, which puts no frame of its
        # own on the stack (PyTensor keeps a few frames of each node's creation: a wrapper's
        # frame in Op.__call__ would push the user's line out)
        replacement = Method(made, obj)
    else:  # a function: made(original, ...), through the Wrapper (original once off)
        replacement = Wrapper(patch.name, made, obj)
    _originals[patch.name] = obj
    patched = []
    for other in patch.bound_in:
        module = sys.modules.get(other)
        if module is not None and getattr(module, attr, None) is obj:
            patched.append(other)
    setattr(owner, attr, staticmethod(replacement) if isinstance(raw, staticmethod) else replacement)
    for other in patched:
        setattr(sys.modules[other], attr, replacement)
    _applied[patch.name] = _Applied(owner, raw, obj, replacement, tuple(patched))


_UNREADABLE = "left off: the configuration cannot be read"


def _try(patches: list[Patch]) -> list[str]:
    """Verify all of ``patches``, then apply those that verified; the problems found."""
    verified = []
    problems = []
    for patch in patches:
        try:
            verified.append((patch, *_verify(patch)))
        except _Mismatch as exc:
            _problems[patch.name] = str(exc)
            problems.append(f"{patch.name} ({patch.target}): {exc}")
    for patch, owner, attr, raw, obj in verified:
        missing = [needed.name for needed in patch.needs if needed.name not in _applied]
        unreadable = [n for n in missing if _problems.get(n, "").startswith(_UNREADABLE)]
        if unreadable:  # the user's configuration: said once, at the import
            _problems[patch.name] = _problems[unreadable[0]]
            continue
        if missing:  # e.g. the mode table without register_mode: PyTensor's DebugMode import fails
            _problems[patch.name] = f"left off: it needs {', '.join(missing)}, which is off"
            problems.append(f"{patch.name}: left off, it needs {', '.join(missing)}")
            continue
        try:
            _apply(patch, owner, attr, raw, obj)
            _problems.pop(patch.name, None)
        except ConfigError as exc:  # the user's configuration cannot be read: said at the import
            _problems[patch.name] = f"{_UNREADABLE} ({exc})"
        except Exception as exc:  # pragma: no cover - verified just before
            _problems[patch.name] = f"could not be applied ({exc!r})"
            problems.append(f"{patch.name}: could not be applied ({exc!r})")
    return problems


def _say(problems: list[str]) -> None:
    global _warned
    if not problems:
        return
    for problem in problems:
        _log().warning("integration with PyTensor left off: %s", problem)
    if _warned:
        return
    _warned = True
    warnings.warn(
        "modecfg left some of its integration with PyTensor off, and PyTensor runs as it is "
        "there (modecfg doctor lists them): " + "; ".join(problems),
        PyTensorIntegrationWarning,
        stacklevel=2,
    )


def install(wanted: Callable[[Patch], bool] | None = None) -> None:
    """Put every verified integration point in place (PyTensor must be loaded). Never raises;
    what is on, off and why, :func:`status` says.

    On-demand patches wait for :func:`enable`; those it put on before an :func:`uninstall` are put
    back. ``wanted`` selects patches (tests).
    """
    global _installed, _version_problem
    if "pytensor" not in sys.modules:  # nothing to patch yet: PyTensor's import will call this
        return
    with _lock:
        try:
            problems = []
            if not _installed:
                _version_problem = _check_version()
                if _version_problem:
                    problems.append(_version_problem + "; only the points verified below are on")
            if not _installed:  # what modecfg relies on without replacing it, checked first
                problems += [
                    f"{r.patch.name} ({r.patch.target}): {r.reason}"
                    for r in contacts(asked=False)
                    if r.state == "failed"
                ]
            todo = [
                p for p in PATCHES
                if (not p.on_demand or p.name in _demanded)
                and p.name not in _applied and (wanted is None or wanted(p))
            ]  # fmt: skip
            problems += _try(todo)
            wrapped = sys.modules.get("modecfg._pytensor.wrapped")
            if wrapped is not None:  # installed again after uninstall(): its registrations too
                wrapped.register_again()
            _installed = True
        except Exception as exc:  # pragma: no cover - the machinery itself failed
            problems = [f"modecfg's integration failed ({exc!r})"]
        _say(problems)


def enable(patch: Patch) -> bool:
    """Apply an on-demand patch now (verified first); whether it is on. Before the patches are
    installed (PyTensor still being imported: the flag read from the environment at its
    import) it waits: the after-import hook enables it, once PyTensor's modules can be
    imported (pytensor.scan.basic imported halfway through PyTensor's import is circular)."""
    with _lock:
        if patch.name in _applied:
            return True
        if "pytensor" not in sys.modules or not _installed:
            return False
        _say(_try([patch]))
        if patch.name in _applied:
            _demanded.add(patch.name)
        return patch.name in _applied


def uninstall() -> None:
    """Put back every original object PyTensor had, in every module that held it."""
    global _installed
    with _lock:
        for patch in reversed(PATCHES):
            applied = _applied.pop(patch.name, None)
            if applied is None:
                continue
            attr = patch.attr.rsplit(".", 1)[-1]
            if patch.undo is not None:
                patch.undo(applied.replacement)
            setattr(applied.owner, attr, applied.raw)
            for other in patch.bound_in:  # those loaded since bound the replacement too
                module = sys.modules.get(other)
                if module is not None and getattr(module, attr, None) is applied.replacement:
                    setattr(module, attr, applied.original)
            if isinstance(applied.original, dict):  # entries registered meanwhile stay registered
                for key in dict.keys(applied.replacement):
                    applied.original.setdefault(key, dict.__getitem__(applied.replacement, key))
        wrapped = sys.modules.get("modecfg._pytensor.wrapped")
        if wrapped is not None:  # the one change that is no attribute: singledispatch registrations
            wrapped.unregister_inner_graph_rewrites()
        _problems.clear()
        _installed = False
    for listener in UNINSTALLED:
        listener()


def every() -> list[Patch]:
    """The whole patch list: the patches of the features that load at their first use loaded and
    listed too (``PATCHES`` holds those registered so far)."""
    register_all()
    return list(PATCHES)


def status() -> list[PatchStatus]:
    """Each integration point: on, off (and why), waiting (on demand) or failed; the patches of the
    features that load at their first use loaded to be listed (``register_all``)."""
    register_all()
    return _rows()


def _rows() -> list[PatchStatus]:
    rows = []
    for patch in PATCHES:
        if patch.name in _applied:
            rows.append(PatchStatus(patch, "on", patch.why))
        elif patch.name in _problems:
            rows.append(PatchStatus(patch, "off", _problems[patch.name]))
        elif "pytensor" not in sys.modules:
            rows.append(PatchStatus(patch, "waiting", "PyTensor is not imported yet"))
        elif patch.on_demand:
            rows.append(PatchStatus(patch, "waiting", "applied when first needed: " + patch.why))
        else:
            rows.append(PatchStatus(patch, "off", "not installed"))
    return rows


class Contact(Record):
    """An integration point that replaces no attribute of PyTensor's: listed with the patches
    (``modecfg doctor``), its state probed when asked."""

    name: str
    target: str
    why: str
    probe: Callable[[], tuple[str, str]]  # (state, reason) now
    # a probe too slow for every import (it reads PyTensor's source): ``modecfg doctor`` runs it,
    # and the process's first compile where it says something a compile relies on
    asked_only: bool = False


def _hand_off() -> tuple[str, str]:
    if HAND_OFF:
        return "on", HAND_OFF[0]
    hooked = any(type(f).__name__ == "ImportHook" for f in sys.meta_path)
    return ("waiting", "PyTensor is not imported yet") if hooked else ("off", "no import hook")


def _debugmode_fix() -> tuple[str, str]:
    try:
        from modecfg._pytensor import debugmode
    except Exception as exc:  # pragma: no cover - PyTensor's DebugMode cannot be imported
        return "off", f"PyTensor's DebugMode cannot be imported ({exc!r})"
    fix_in_place = getattr(debugmode, "fix_in_place", None)
    if fix_in_place is None:  # its import imported PyTensor (modecfg.DebugMode, read first): checked later
        return "waiting", "modecfg._pytensor.debugmode is being imported (doctor checks it then)"
    if fix_in_place():
        return "on", "DebugMode's linker restores 0-d inputs with fill (numpy 2 has no itemset)"
    return "off", "not needed here (numpy 1), or PyTensor no longer calls itemset where expected"


def _fixed_flags() -> tuple[str, str]:
    from modecfg._pytensor import view

    if view.view() is not None:
        return "on", "pytensor.config answers modecfg's values; the rest are handed over at import"
    return "off", "the config view is off: assignments are copied into pytensor.config where it takes them"


def _requiring_check() -> tuple[str, str]:
    from modecfg._pytensor.modebuild import requiring_defect

    if not requiring_defect():
        return "off", "not needed: this PyTensor applies required rewrite tags"
    return "on", "optimizer_requiring is refused at the mode's build, with where it was set"


def _wrapping_linkers() -> tuple[str, str]:
    from modecfg._pytensor.wrapped import stamps_modes

    if stamps_modes():
        return "on", (
            "the NaN guard's, CompareMode's and MonitorMode's rewrites are stamped with the linker they "
            "wrap, and PyTensor's inner-graph rewrites (scan, OpFromGraph, optimize) know their linkers"
        )
    return "off", "not needed: this PyTensor rewrites inner graphs without asking the linker"


def _always() -> tuple[str, str]:
    return "on", "applied whenever modecfg builds that mode"


def _missing(pairs: tuple[tuple[str, str], ...]) -> list[str]:
    """Which ``module.attr`` of ``pairs`` (module, dotted attribute) this PyTensor lacks."""
    gone = []
    for module_name, dotted in pairs:
        try:
            obj: Any = importlib.import_module(module_name)
            for part in dotted.split("."):
                obj = getattr(obj, part)
        except Exception:
            gone.append(f"{module_name}.{dotted}")
    return gone


def _subclassed() -> tuple[str, str]:
    gone = _missing((
        ("pytensor.compile.debug.monitormode", "MonitorMode.eval"),
        ("pytensor.compile.mode", "Mode.__setstate__"),
        ("pytensor.link.basic", "WrapLinker"),
        ("pytensor.link.c.basic", "OpWiseCLinker"),
        ("pytensor.compile.maker", "FunctionMaker"),
        ("pytensor.compile.debug.profiling", "ProfileStats"),
    ))  # fmt: skip
    if gone:
        return "failed", f"this PyTensor has no {', '.join(gone)}"
    from pytensor.compile.maker import FunctionMaker

    if not {"profile", "name"} <= set(parameter_names(FunctionMaker.__init__)):
        return "failed", "FunctionMaker takes no profile or name: ProfileMode cannot make its profiles"
    return "on", "MonitorMode and ProfileMode derive from PyTensor's classes (modecfg._pytensor.subclasses)"


def _profile_list() -> tuple[str, str]:
    from pytensor.compile.debug import profiling

    if not isinstance(getattr(profiling, "_atexit_print_list", None), list):
        return "failed", "PyTensor keeps no list of its profiles: modecfg's summary would find none"
    return "on", "every ProfileStats made for printing at exit is read from PyTensor's own list"


def _dump_graph() -> tuple[str, str]:
    if _missing((("pytensor.compile.executor", "Function"),)) and _missing(
        (("pytensor.compile.function.types", "Function"),)
    ):
        return "failed", "PyTensor's compiled-function class is in neither place modecfg knows"
    gone = _missing((("pytensor.graph.basic", "clone"), ("pytensor.graph.op", "Op")))
    if gone:
        return "failed", f"this PyTensor has no {', '.join(gone)}: dumps hold no graph to replay"
    return "on", "a dump's graph is a copy PyTensor clones, pickled without compiled inner functions"


def _cache_layout() -> tuple[str, str]:
    from modecfg._pytensor.caches import layout_problem

    gone = layout_problem()
    if gone:
        return "failed", f"PyTensor's cache layout is not as modecfg knows it: {gone}"
    return "on", "the C cache's lock file and directories and numba's cache directory are where named"


def _class_kinds() -> tuple[str, str]:
    from modecfg._pytensor import kinds

    gone = kinds.missing()
    if gone:
        return "failed", (
            f"this PyTensor has no {', '.join(gone)}: the float32 check and the linker names "
            "no longer recognise them"
        )
    return "on", "every class named in modecfg._pytensor.kinds is where it is named"


def _flag_names() -> tuple[str, str]:
    from modecfg._pytensor import declared
    from modecfg.configuration.flags import canonical

    pytensor = sys.modules.get("pytensor")
    if pytensor is None or not hasattr(pytensor, "config"):
        return "waiting", "PyTensor is not imported yet"
    read = declared.names()
    actual = {canonical(name) for name in pytensor.config._config_var_dict}
    missed = sorted(actual - read)
    if missed:
        shown = ", ".join(missed[:5]) + (f" and {len(missed) - 5} more" if len(missed) > 5 else "")
        return "failed", (
            f"PyTensor declares {len(missed)} flags its source does not show as config.add(...): "
            f"{shown}; before its import their settings are refused as unknown"
        )
    return "on", f"the {len(actual)} flags PyTensor declares are all read from its source"


CONTACTS: tuple[Contact, ...] = (
    Contact(
        "flag names",
        'the config.add("name", ...) calls in PyTensor\'s modules (parsed, not run)',
        "a setting naming one of PyTensor's own flags is handed to PyTensor as written, any other "
        "unknown name refused at once, before that import and after it (modecfg._pytensor.declared)",
        _flag_names,
        asked_only=True,  # parsing 371 files took 35-74 ms of every import (issue 61)
    ),
    Contact(
        "import hand-off",
        "sys.meta_path: the loader of the pytensor package",
        "PyTensor is imported with modecfg's values for the flags it fixes at import "
        "(PYTENSOR_FLAGS and PYTENSORRC set for the import, restored after)",
        _hand_off,
    ),
    Contact(
        "DebugMode fix",
        "pytensor.compile.debug.debugmode (a subclass of its linker; PyTensor's classes untouched)",
        "modecfg's DebugMode runs under numpy 2 and compares float32 results with float32 tolerances",
        _debugmode_fix,
        asked_only=True,  # never fails (it imports PyTensor's 2,287-line DebugMode): doctor asks
    ),
    Contact(
        "requiring check",
        "pytensor.misc.ordered_set.OrderedSet (read: does it have intersection_update?)",
        "PyTensor 3.0-3.3 fails every compile with optimizer_requiring set (its rewrite database "
        "calls a method its OrderedSet lacks): modecfg says so before (modes/build.py)",
        _requiring_check,
        asked_only=True,  # it never fails: the check at import has nothing to say of it
    ),
    Contact(
        "DebugMode fusion",
        "the local_careduce_fusion rewrite, left out of modecfg's DebugMode",
        "PyTensor 3.0's Python code of a fused reduction starts from the first element, not the "
        "identity: DebugMode would report PyTensor's bug on every sum of squares (modes/build.py)",
        _always,
    ),
    Contact(
        "wrapping linkers",
        "the mode PyTensor 3.3 stamps on a graph while rewriting it (_ActiveModeGraphRewriter._mode); "
        "its inner-graph rewrites by linker class (rewrite_scan_inner_graph, ...: WrappingLinker registered)",
        "inner graphs (scan, OpFromGraph) are rewritten for the linker that runs them, not for the "
        "NaN guard's or MonitorMode's wrapper, which PyTensor's inner-graph rewrites do not know",
        _wrapping_linkers,
        asked_only=True,  # it never fails
    ),
    Contact(
        "subclassed modes",
        "PyTensor's MonitorMode, Mode, FunctionMaker, WrapLinker, OpWiseCLinker and ProfileStats",
        "modecfg's MonitorMode (callbacks of either signature, a linker that pickles) and ProfileMode "
        "derive from PyTensor's classes and rely on these names",
        _subclassed,
    ),
    Contact(
        "profile list",
        "pytensor.compile.debug.profiling._atexit_print_list (read; private)",
        "modecfg's summary at exit and `modecfg profile` list every profile from PyTensor's own list",
        _profile_list,
    ),
    Contact(
        "dump graph",
        "pytensor.graph.basic.clone, pytensor.graph.op.Op, PyTensor's compiled-function class",
        "a NaN-guard dump's graph part: a clone of the graph as written, pickled without compiled "
        "inner functions (modecfg.nanguard.dumpgraph)",
        _dump_graph,
    ),
    Contact(
        "cache layout",
        "compiledir/.lock (compilelock.lock_ctx), base_compiledir/numba, the C support modules",
        "`modecfg cache` and the cache bounds find PyTensor's caches and take its compile lock "
        "while they remove entries (modecfg._pytensor.caches)",
        _cache_layout,
        # it reads three of PyTensor's source files (0.3 ms of every import, issue 61): checked at
        # the process's first compile instead, which is before any cache is filled, bounded or
        # locked by modecfg (modecfg._wiring), and by doctor
        asked_only=True,
    ),
    Contact(
        "class kinds",
        "PyTensor's linker classes and the Shape, Elemwise, Cast and Constant classes (by module and name)",
        "the float32 check asks what an operation is, the linker table names a linker object "
        "(modecfg._pytensor.kinds: a walk of the object's class hierarchy, nothing imported)",
        _class_kinds,
        # it imports modecfg._pytensor.kinds and walks PyTensor's modules (0.2 ms of every import,
        # issue 61): checked at the process's first compile instead, before any graph is asked
        # what its operations are (modecfg._wiring), and by doctor
        asked_only=True,
    ),
    Contact(
        "fixed flags",
        "pytensor.config's immutable parameters (compiledir, cxx, ...)",
        "PyTensor receives modecfg's values at its import; a later change is a ReadOnlyFlagError",
        _fixed_flags,
    ),
)


def contacts(*, asked: bool = True) -> list[PatchStatus]:
    """The integration points that are not patches, each with its state now (a probe that
    itself fails says so: it never raises). ``asked=False`` (the check at PyTensor's import)
    leaves out the probes that are only run when asked."""
    rows = []
    for contact in CONTACTS:
        if contact.asked_only and not asked:
            continue
        try:
            state, reason = contact.probe()
        except Exception as exc:
            state, reason = "failed", f"could not be checked ({type(exc).__name__}: {exc})"
        rows.append(PatchStatus(contact, state, reason))
    return rows


def version_problem() -> str:
    """Why the installed PyTensor is outside the tested range ('' when it is inside)."""
    return _version_problem
