"""``modecfg.function``: ``pytensor.function`` with modecfg's mode and configuration.

The mode is resolved from the current context (overrides included); PyTensor reads the
same values, since ``pytensor.config`` is a view of modecfg's configuration in each thread
and task (:mod:`modecfg._pytensor.view`). Compiles in different threads run side by side.
The compiled function is PyTensor's own: nothing is added to its calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modecfg._pytensor import marks
from modecfg.configuration import config
from modecfg.errors import ConfigError
from modecfg.modes.build import backend_missing, get_mode

if TYPE_CHECKING:
    from modecfg.configuration.explain import CompiledWith

__all__ = ["compiled_with", "function"]


def _check_backend(mode: Any) -> None:
    """A mode whose backend is not installed fails here, naming what to install."""
    why = backend_missing(mode)
    if why:
        from modecfg.errors import LinkerUnavailableError

        raise LinkerUnavailableError(why, flag="mode")


def function(inputs: Any, outputs: Any = None, mode: Any = None, **kwargs: Any) -> Any:
    """Compile like ``pytensor.function``, with modecfg's mode and configuration.

    ``mode`` is a registered name (``"FAST_RUN"``, ``"DebugMode"``, a mode you
    registered), a PyTensor ``Mode``, or None for the ``mode`` flag. Everything else is
    passed to ``pytensor.function`` as it is.
    """
    from modecfg._pytensor.load import compile_function

    try:
        built = get_mode(mode)
        _check_backend(built)
    except ConfigError as exc:  # a configuration this machine cannot run: said at the user's compile
        from modecfg._source import at_users_compile

        raise at_users_compile(exc)  # noqa: B904 (the same exception: its own cause and context stay)
    if config.warn_float64 == "raise":
        from modecfg.checks.enforce import before_compile

        before_compile(outputs, kwargs.get("updates"))
    profile = kwargs.get("profile")
    if profile is True or (profile is None and config.profile):
        from modecfg.modes.build import describe_linker
        from modecfg.profiles.session import new_stats, timing_mode

        built, note = timing_mode(built)
        name = kwargs.get("name")
        if name is None:  # the line that compiled it, rather than "<unnamed function>"
            from modecfg._source import calling_line

            where = calling_line()
            name = f"function compiled at {where.file}:{where.line}" if where else None
        kwargs["profile"] = new_stats(name, describe_linker(built.linker), note)
    return compile_function(inputs, outputs, built, **kwargs)


def compiled_with(fn: Any) -> CompiledWith:
    """The configuration ``fn`` was compiled with (a compiled function, its ``maker`` or its
    graph): flag -> (value, origin), recorded in the compiling thread or task, overrides
    included. Empty for a function compiled before modecfg was imported."""
    from modecfg.configuration.explain import CompiledWith

    maker = getattr(fn, "maker", fn)
    fgraph = getattr(maker, "fgraph", maker)
    return CompiledWith(getattr(fgraph, marks.COMPILED_WITH, None) or {})
