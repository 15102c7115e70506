"""The compile caches (C modules and numba's): what they hold, who holds their lock, trimming them.

    >>> from modecfg import cache
    >>> print(cache.show())                           # where, how big, how old, the lock's holder
    >>> cache.clean(older_than="7d", max_size="1GiB")  # or the cache.max_age / cache.max_size flags

``modecfg cache show`` and ``modecfg cache clean`` are the same from the shell. Where the
caches are is PyTensor's (``compiledir``, ``base_compiledir/numba``), asked of it through
:mod:`modecfg._pytensor.caches`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modecfg._lazy import attach as _attach

# Handed out on first use (modecfg._lazy): ``import modecfg`` registers this feature's contacts
# (modecfg.cache.contacts), which loads this package, and a compile never exports a cache.
if TYPE_CHECKING:
    from modecfg.cache.entries import Cache as Cache
    from modecfg.cache.entries import Entry as Entry
    from modecfg.cache.entries import caches as caches
    from modecfg.cache.holders import Holder as Holder
    from modecfg.cache.status import Status as Status
    from modecfg.cache.status import clean as clean
    from modecfg.cache.status import show as show
    from modecfg.cache.travel import Exported as Exported
    from modecfg.cache.travel import Imported as Imported
    from modecfg.cache.travel import export_cache as export_cache
    from modecfg.cache.travel import import_cache as import_cache
    from modecfg.cache.trim import Bounds as Bounds
    from modecfg.cache.trim import CleanReport as CleanReport
    from modecfg.cache.trim import Plan as Plan

__all__ = [
    "Bounds",
    "Cache",
    "CleanReport",
    "Entry",
    "Exported",
    "Holder",
    "Imported",
    "Plan",
    "Status",
    "caches",
    "clean",
    "export_cache",
    "import_cache",
    "show",
]

__getattr__ = _attach(__name__, __file__)  # the TYPE_CHECKING block's names, on first use
__dir__ = __getattr__.dir
