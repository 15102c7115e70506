"""Every attribute modecfg leaves on a PyTensor object: its name, once, and what it holds.

Each holds plain Python values (strings, tuples, dicts of those) or PyTensor's own objects,
never a modecfg class or a closure, so a compiled function that carries them pickles and
unpickles where modecfg is not installed. ``uninstall()`` leaves them where they are: they
describe compiles that happened, and nothing reads them when modecfg is gone.
"""

from __future__ import annotations

__all__ = [
    "AUTO",
    "AUTO_CHOICE",
    "AUTO_REASON",
    "COMPILED_WITH",
    "GRAD",
    "LOCATION",
    "NO_TEST_VALUE",
    "ORIGINAL",
    "PROFILE_DEVICE",
    "PROFILE_NAME",
    "PROFILE_NOTE",
    "PROFILE_TIMED_BY",
    "TRACE",
]

# on a FunctionGraph a compile rewrote
ORIGINAL = "_modecfg_original"  # the graph before its rewrites: kept as tuples, a clone once asked (locate)
COMPILED_WITH = "modecfg_config"  # the compile's configuration: {flag: (value, origin text)}
AUTO_CHOICE = "modecfg_linker"  # the linker ``linker=per_graph`` chose for the graph ("numba", "cvm")
AUTO_REASON = "modecfg_linker_reason"  # why it chose it, in words

# on a linker
AUTO = "modecfg_auto"  # True on the cvm VMLinker of the modes linker=per_graph builds: it hands graphs on

# on a variable's or a node's tag
TRACE = "modecfg_trace"  # Variable.tag: the user's line a variable made by a rewrite inherits
GRAD = "modecfg_grad"  # Apply.tag: the grad() call (and the op) a gradient node comes from
NO_TEST_VALUE = "_modecfg_no_test_value"  # Variable.tag: no test value here, said once

# on a ProfileStats
PROFILE_NAME = "modecfg_name"  # the function's name in modecfg's reports
PROFILE_TIMED_BY = "modecfg_timed_by"  # the linker that timed the nodes, in words
PROFILE_NOTE = "modecfg_note"  # a note for the report's header
PROFILE_DEVICE = "modecfg_device"  # a JAX function's device figures: a dict (jaxlink.DeviceThunk.stats)

# on an exception PyTensor raises
LOCATION = "modecfg_location"  # (file, line) of the user's code the error points at
