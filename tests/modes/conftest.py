"""Fixtures of the modes tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def unwritable(tmp_path: Path) -> Path:
    """A directory this process cannot write in (for root: a read-only one of the system's)."""
    place = tmp_path / "read-only"
    place.mkdir(mode=0o500)
    if not os.access(place, os.W_OK):
        return place
    system = Path("/proc/sys")
    if system.is_dir() and not os.access(system, os.W_OK):
        return system
    pytest.skip("no directory this process cannot write in")
