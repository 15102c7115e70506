"""``modecfg.function``: ``pytensor.function`` with modecfg's mode and configuration.

The mode is resolved from the current context (overrides included) and the overridden
flags PyTensor also reads are applied to ``pytensor.config`` for the length of the
compile. The compiled function is PyTensor's own: nothing is added to its calls.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from modecfg.config import config
from modecfg.config.bridge import pytensor_accepts, pytensor_text
from modecfg.config.flags import FLAGS
from modecfg.modes.build import get_mode

__all__ = ["function", "pytensor_flags_applied"]

# pytensor.config is process-wide: modecfg's compiles take turns.
_compile_lock = threading.RLock()


@contextmanager
def pytensor_flags_applied() -> Iterator[None]:
    """``pytensor.config`` showing this context's overrides, for as long as the block runs."""
    import pytensor

    params = pytensor.config._config_var_dict
    changes = {}
    for name, value in config.overrides().items():
        spec = FLAGS[name]
        param = params.get(spec.pytensor_name)
        if param is None or not param.mutable or not pytensor_accepts(spec, value):
            continue  # modecfg-only, or fixed by PyTensor (modes apply those themselves)
        text = pytensor_text(value)
        if pytensor_text(getattr(pytensor.config, spec.pytensor_name)) != text:
            changes[spec.pytensor_name] = text
    if not changes:
        yield
        return
    with pytensor.config.change_flags(**changes):
        yield


def function(inputs: Any, outputs: Any = None, mode: Any = None, **kwargs: Any) -> Any:
    """Compile like ``pytensor.function``, with modecfg's mode and configuration.

    ``mode`` is a registered name (``"FAST_RUN"``, ``"DebugMode"``, a mode you
    registered), a PyTensor ``Mode``, or None for the ``mode`` flag. Everything else is
    passed to ``pytensor.function`` as it is.
    """
    import pytensor

    built = get_mode(mode)
    profile = kwargs.get("profile")
    memory = False
    if profile is True or (profile is None and config.profile):
        from modecfg.modes.build import describe_linker
        from modecfg.profiles.session import new_stats, timing_mode

        built, note = timing_mode(built)
        kwargs["profile"] = new_stats(kwargs.get("name"), describe_linker(built.linker), note)
        memory = bool(config.profile_memory)
    # Every compile takes the lock, not only those that change pytensor.config: one
    # without overrides must not see another's while it runs.
    with _compile_lock, pytensor_flags_applied():
        if memory:  # PyTensor records shapes only when its own profile flag is on too
            with pytensor.config.change_flags(profile=True, profile_memory=True):
                return pytensor.function(inputs, outputs, mode=built, **kwargs)
        return pytensor.function(inputs, outputs, mode=built, **kwargs)
