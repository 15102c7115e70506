"""The linker table. This package imports PyTensor only when a linker is built."""

from modecfg.linkers.names import LinkerInfo, canonical_linker, linker_names, table

__all__ = ["LinkerInfo", "canonical_linker", "linker_names", "table"]
