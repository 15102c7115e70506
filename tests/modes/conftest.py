"""Fixtures of the modes tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
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


@pytest.fixture(scope="module")
def repro_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private directory for CompareMode's reproductions, for the module's tests."""
    from modecfg import config

    directory = tmp_path_factory.mktemp("repro")
    directory.chmod(0o700)
    config.set("CompareMode.repro_dir", str(directory), source="tests/modes")
    yield directory
    config.reset("CompareMode.repro_dir")
