"""PyTensor's flags that modecfg does not declare, adopted from PyTensor's own declaration.

Each ``ConfigParam`` in ``pytensor.config._config_var_dict`` whose name no modecfg flag has
becomes a :class:`~modecfg.config.flags.Flag`: its type from the parameter's class
(``EnumStr`` gives the choices, ``BoolParam`` a boolean, ``IntParam``/``FloatParam`` a number,
anything else text), its default (a callable one is worked out by PyTensor, when first
read), its doc, and ``fixed`` where PyTensor refuses changes after the first use. A value is
checked by modecfg's type and then by PyTensor's own ``apply`` and ``validate``. modecfg cannot
say what such a flag reaches, so data it did not write (a dump) never sets one.

Then the settings that named one of them before PyTensor was imported, held by the
configuration until now, are resolved (:func:`modecfg.config.flags.declarations_complete`).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Literal

from modecfg.config.compat import OBSOLETE, canonical
from modecfg.config.flags import FLAGS, Flag, Lazy, adopt, declarations_complete

if TYPE_CHECKING:
    from pytensor.configparser import ConfigParam

__all__ = ["adopt_declarations", "declaration"]

_log = logging.getLogger("modecfg.bridge")

# PyTensor works a callable default out at the first read, and a second thread reading before
# the first has stored it fails on an immutable parameter ("Can't change the value of
# gcc_version_str ... after initialization!"): modecfg's first reads take turns under this lock.
FIRST_READ = threading.RLock()


def first_read(param: ConfigParam, target: Any) -> Any:
    """PyTensor's ``param.__get__``, one thread at a time until the value is stored."""
    try:
        return param.val
    except AttributeError:
        with FIRST_READ:
            return param.__get__(target, type(target))


# modecfg cannot say what an adopted flag reaches: data modecfg did not write never sets it
REACHES = "PyTensor (an adopted flag: modecfg cannot say what it reaches)"


class PyTensorDefault:
    """The default PyTensor works out for a flag (a callable default: ``gcc_version_str`` asks
    the compiler): read from PyTensor's own parameter, which computes it once."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, cfg: Any) -> Any:
        import pytensor.configdefaults as defaults  # adopted flags exist only once it is imported

        target = defaults.config
        param = target._config_var_dict[self.name]
        param = getattr(param, "original", param)  # the view's proxy: ask PyTensor's own
        return first_read(param, target)


class PyTensorCheck:
    """PyTensor's ``apply`` and ``validate`` of one parameter, run after modecfg's type check."""

    __slots__ = ("param",)

    def __init__(self, param: ConfigParam) -> None:
        self.param = param

    def __call__(self, value: Any) -> Any:
        param = self.param
        try:
            applied = param.apply(value)
            param.validate(applied)
        except ValueError:
            raise
        except Exception as exc:  # PyTensor's validators raise what they like
            raise ValueError(str(exc)) from None
        return applied


def declaration(name: str, param: ConfigParam, release: str) -> Flag:
    """The modecfg flag of PyTensor's parameter ``name`` (PyTensor's ``__`` spelling)."""
    from pytensor.configparser import BoolParam, EnumStr, FloatParam, IntParam

    kind: Any
    if isinstance(param, EnumStr):
        kind = Literal.__getitem__(tuple(sorted(param.all)))
    elif isinstance(param, BoolParam):
        kind = bool
    elif isinstance(param, IntParam):
        kind = int
    elif isinstance(param, FloatParam):
        kind = float
    else:
        kind = str
    default = param.default
    if callable(default):
        default = Lazy(PyTensorDefault(name), f"worked out by PyTensor {release}")
    return Flag(
        canonical(name),
        kind,
        default,
        " ".join(str(param.doc).split()) or "Declared by PyTensor without a description.",
        pytensor=True,
        fixed=not param.mutable,
        check=PyTensorCheck(param),
        reaches=REACHES,
        adopted=release,
    )


def adopt_declarations(target: Any) -> list[Flag]:
    """Adopt every flag of PyTensor's config object ``target`` that modecfg does not declare,
    then settle what the sources held for them. Returns the flags adopted now."""
    import pytensor
    from pytensor.configparser import ConfigParam

    from modecfg.config.live import Config

    release = str(pytensor.__version__)
    taken = {spec.pytensor_name for spec in FLAGS.values()}
    adopted = []
    for name, param in list(target._config_var_dict.items()):
        param = getattr(param, "original", param)
        dotted = canonical(name)
        if name in taken or dotted in OBSOLETE or not isinstance(param, ConfigParam):
            continue
        top = dotted.split(".")[0]
        if hasattr(Config, top) and "." not in dotted:
            _log.warning("PyTensor's flag %s is not adopted: the name is a Config method", name)
            continue
        try:
            spec = declaration(name, param, release)
        except Exception as exc:  # an unusual declaration must not stop PyTensor's import
            _log.warning("PyTensor's flag %s is not adopted: %s", name, exc)
            continue
        if adopt(spec):
            adopted.append(spec)
    declarations_complete(release)
    if adopted:
        _log.debug("adopted from PyTensor %s: %s", release, ", ".join(s.name for s in adopted))
    return adopted
