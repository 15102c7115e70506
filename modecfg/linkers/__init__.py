"""The linker table. Nothing here imports PyTensor."""

from modecfg.linkers.names import (
    LinkerInfo,
    best_linker,
    canonical_linker,
    linker_names,
    resolve_linker,
    table,
    why_unavailable,
)

__all__ = [
    "LinkerInfo",
    "best_linker",
    "canonical_linker",
    "linker_names",
    "resolve_linker",
    "table",
    "why_unavailable",
]
