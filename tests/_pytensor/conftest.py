"""Fixtures of the bridge's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from modecfg import config


@pytest.fixture
def pytensor_alone() -> Iterator[object]:
    """PyTensor's config as PyTensor's own (the view off) until the test installs it again."""
    import pytensor

    from modecfg._pytensor import install, uninstall

    uninstall()
    try:
        yield pytensor.config
    finally:
        install()  # a second install is a no-op
        for name in ("floatX", "cast_policy", "exception_verbosity"):
            config.reset(name)
