"""Checks on compiled graphs: float32 enforcement."""

from modecfg.checks.float32 import Finding, Reason, check_float32

__all__ = ["Finding", "Reason", "check_float32"]
