"""Named compile modes. This package imports PyTensor only when a mode is built."""

from modecfg.modes.registry import canonical_mode, mode_names

__all__ = ["canonical_mode", "mode_names"]
