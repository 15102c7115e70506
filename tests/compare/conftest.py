"""Fixtures of CompareMode's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def repro_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private directory for CompareMode's reproductions, for the module's tests."""
    from modecfg import config

    directory = tmp_path_factory.mktemp("repro")
    directory.chmod(0o700)
    config.set("CompareMode.repro_dir", str(directory), source="tests/compare")
    yield directory
    config.reset("CompareMode.repro_dir")
