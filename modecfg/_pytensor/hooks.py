"""What the layers above do at PyTensor's integration points.

The PyTensor layer owns the patches; the behaviour behind some of them belongs to layers above
it (modes, checks, profiles), which this layer must not import. They plug in here, and
:mod:`modecfg` does the plugging, in one place. An empty slot means "do what PyTensor does". (A
feature that owns its contacts, as test values and the device path do, needs no slot: its
replacements are its own.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Hooks", "hooks"]


class Hooks:
    """One slot per integration point that calls upward."""

    __slots__ = (
        "after_import", "before_rewrites", "float64_checked", "get_mode", "profile_made", "profiled_mode",
        "rewrite_mode",
    )  # fmt: skip

    def __init__(self) -> None:
        # Called once PyTensor is loaded and the patches are in (after install()).
        self.after_import: list[Callable[[], None]] = []
        # Every compile's graph and mode, before PyTensor rewrites it (float32 enforcement).
        self.before_rewrites: list[Callable[[Any, Any], None]] = []
        # Whether compiles are checked for float64 now (floatX=float32, a GPU): then PyTensor's
        # warn_float64=warn at each float64 variable made is folded into modecfg's one warning per finding.
        self.float64_checked: Callable[[], bool] | None = None
        # The mode a compile's graph (and its profile) is rewritten with: linker=per_graph chooses per graph
        # (modecfg.linkers.contacts.rewrite_mode: the choice is made inside the compile hook).
        self.rewrite_mode: Callable[[Any, Any, Any], Any] | None = None
        # A registered mode by name (None: the ``mode`` flag), for PyTensor's mode table.
        self.get_mode: Callable[[str | None], Any] | None = None
        # A profiled pytensor.function: (mode, name) -> (the mode to compile with, its ProfileStats),
        # a linker that times nodes in place of one that cannot (numba, jax, c|py, py, c)
        # (modecfg.profiles.contacts.profiled_mode: pytensor.function's replacement is the core's).
        self.profiled_mode: Callable[[Any, Any], tuple[Any, Any]] | None = None
        # modecfg is about to make a ProfileStats (``modecfg._pytensor.profiling.new_stats``): the
        # profiles' contacts load then, and their printer goes on before PyTensor registers it
        # with atexit.
        self.profile_made: Callable[[], None] | None = None


hooks = Hooks()
