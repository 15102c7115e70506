"""The profiles feature's contacts with PyTensor: the mode a profiled compile runs under (the
one it was given, with a linker that times nodes) and the profile it fills (its function's name,
the linker that timed it, and the note saying so)."""

from __future__ import annotations

import warnings

import pytest

pytensor = pytest.importorskip("pytensor")

from pytensor.compile.mode import Mode  # noqa: E402

import modecfg  # noqa: E402, F401
from modecfg._pytensor import marks  # noqa: E402
from modecfg.profiles import contacts  # noqa: E402


def test_a_profiled_compile_runs_the_mode_it_was_given_and_names_its_profile() -> None:
    built, stats = contacts.profiled_mode("FAST_COMPILE", "step")
    assert "fast_compile" in built.provided_optimizer.include  # the mode given, not the flag's
    assert stats.message == "step" and getattr(stats, marks.PROFILE_NAME) == "step"
    assert getattr(stats, marks.PROFILE_TIMED_BY) == "vm (Python thunks)"  # FAST_COMPILE's own VM
    assert getattr(stats, marks.PROFILE_NOTE) == ""  # (a VM times nodes: kept)


def test_a_linker_that_cannot_time_nodes_is_replaced_and_one_that_can_is_kept() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (said once a process: "cannot time nodes")
        built, stats = contacts.profiled_mode(Mode(linker="c|py", optimizer="fast_run"), None)
    assert "fast_run" in built.provided_optimizer.include
    assert "the c|py linker cannot time nodes" in getattr(stats, marks.PROFILE_NOTE)
    assert getattr(stats, marks.PROFILE_TIMED_BY) in {"cvm", "vm"}  # (cvm where a compiler is)
    assert stats.message == "<unnamed function>" and getattr(stats, marks.PROFILE_NAME) is None
    kept = Mode(linker="cvm", optimizer="fast_compile")
    built, stats = contacts.profiled_mode(kept, "f")
    assert built is kept and getattr(stats, marks.PROFILE_TIMED_BY) == "cvm"
    assert getattr(stats, marks.PROFILE_NOTE) == ""
