"""modecfg._pytensor.patch: a feature's patches registered in the one list, now or when first used."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import modecfg  # noqa: F401  (wired: the features' patches are registered, PyTensor loaded)
from modecfg._pytensor import patch, patches


@pytest.fixture
def lists_kept() -> Iterator[None]:
    """The registries as they were after the test (the lists are shared: put back in place)."""
    registered, later, listed = list(patch.REGISTERED), list(patch.LATER), list(patches.PATCHES)
    yield
    patch.REGISTERED[:], patch.LATER[:], patches.PATCHES[:] = registered, later, listed


def _passing(original: object, *args: object) -> object:
    return original


def _extra(name: str) -> patch.Patch:
    return patch.Patch(name, "json", "dumps", replacement=_passing, why="a test")


@pytest.mark.usefixtures("lists_kept")
def test_a_patch_registered_once_the_engine_is_loaded_is_in_its_list_at_once_and_once() -> None:
    extra = _extra("a test's patch")
    patch.register(extra)
    assert patches.PATCHES[-1] is extra and patch.REGISTERED[-1] is extra
    patch.register(extra, _extra("a test's patch"))  # a name registered already: listed once
    assert [p.name for p in patches.PATCHES].count("a test's patch") == 1
    assert [p.name for p in patch.REGISTERED].count("a test's patch") == 1


@pytest.mark.usefixtures("lists_kept")
def test_a_feature_registered_for_later_is_named_once_and_loaded_when_the_whole_list_is_asked() -> None:
    assert {"modecfg.testvalues.contacts", "modecfg.profiles.contacts"} <= set(patch.LATER)  # (wired)
    patch.register_later("modecfg.testvalues.contacts")
    assert patch.LATER.count("modecfg.testvalues.contacts") == 1
    patch.register_later("modecfg.device.contacts")  # a new name: appended
    assert patch.LATER[-1] == "modecfg.device.contacts"
    patch.register_all()
    names = [p.name for p in patch.REGISTERED]
    assert {"test values", "scan test values", "profile printer"} <= set(names)
    assert len(names) == len(set(names))  # (device's were registered at the import: not again)
    assert [p.name for p in patches.every()] == [p.name for p in patches.PATCHES]
