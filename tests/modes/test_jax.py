"""The JAX linker and the device path with a real (CPU) JAX, not a mock. Skipped without jax."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import modecfg

jax = pytest.importorskip("jax")
pt = pytest.importorskip("pytensor.tensor")


@pytest.fixture(scope="module")
def cpu_only() -> None:
    if any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("this machine has a GPU JAX can see")


def test_the_demo_trains_under_mode_jax_on_the_cpu() -> None:
    from modecfg.demo import run

    result = run(steps=30, mode="JAX")
    assert result.linker == "jax" and result.mode == "JAX"
    assert result.last_cost < result.first_cost and result.accuracy > 0.9


def test_float32_enforcement_holds_for_jax() -> None:
    y = pt.vector("y", dtype="float32")
    wide, narrow = y * np.float64(2.0), y * np.float32(2.0)  # built first: PyTensor's check acts at creation
    with modecfg.config.override(floatX="float32", warn_float64="raise"):
        with pytest.raises(modecfg.Float64Error, match="float64 constant"):
            modecfg.function([y], wide, mode="JAX")
        f = modecfg.function([y], narrow, mode="JAX")
    assert f(np.ones(2, dtype="float32")).dtype == np.float32


def test_device_cuda_without_a_gpu_says_what_is_missing(cpu_only: None) -> None:
    x = pt.vector("x")
    with modecfg.config.override(device="cuda"), pytest.raises(modecfg.DeviceUnavailableError) as caught:
        modecfg.function([x], x + 1)
    message = str(caught.value)
    assert "needs a GPU that JAX can see, and it sees none" in message
    assert "jax[cuda12]" in message and "fallback_to_cpu=True" in message


def test_a_configuration_that_cannot_run_is_said_at_the_users_compile(cpu_only: None) -> None:
    """Issue 60: under ``modecfg run``, device=cuda without a GPU printed 30 lines of modecfg's and
    PyTensor's frames and no word of which compile asked. The error names the user's line, and
    the frames between the user's call and the check are left out (not a defect of theirs)."""
    import traceback

    x = pt.vector("x")
    with modecfg.config.override(device="cuda"), pytest.raises(modecfg.DeviceUnavailableError) as caught:
        modecfg.function([x], x + 1)  # the compile
    error = caught.value
    assert any(note.startswith("(compiling the function at ") and "modecfg.function([x], x + 1)" in note
               and f"{__file__}:" in note for note in getattr(error, "__notes__", []))  # fmt: skip
    frames = [f.filename for f in traceback.extract_tb(error.__traceback__)]
    assert not any("/pytensor/" in f or "modes/build.py" in f or "device/where.py" in f for f in frames)
    assert len(frames) <= 5
    import pytensor

    with modecfg.config.override(device="cuda"), pytest.raises(modecfg.DeviceUnavailableError) as again:
        pytensor.function([x], x + 1)  # PyTensor's door: the mode table asks modecfg
    assert "pytensor.function([x], x + 1)" in "".join(getattr(again.value, "__notes__", []))
    frames = [f.filename for f in traceback.extract_tb(again.value.__traceback__)]
    assert not any("/pytensor/" in f or "modes/build.py" in f for f in frames) and len(frames) <= 5


def test_a_compile_an_installed_library_makes_is_said_at_the_line_that_called_it(
    cpu_only: None, tmp_path: Path
) -> None:
    """PyMC compiles inside ``pm.sample``: the note names the script's ``pm.sample`` line, the
    one the user can change, not PyMC's compile."""
    from tests.fresh import installed_module

    text = "import pytensor\ndef sample(x, y):\n    return pytensor.function([x], y)\n"
    modellib = installed_module(tmp_path, "modellib", text)
    x = pt.vector("x")
    with modecfg.config.override(device="cuda"), pytest.raises(modecfg.DeviceUnavailableError) as caught:
        line = sys._getframe().f_lineno + 1
        modellib.sample(x, x + 1)
    notes = getattr(caught.value, "__notes__", [])
    assert notes == [f"(compiling the function at {__file__}:{line}: modellib.sample(x, x + 1))"]


def test_the_compile_note_quotes_the_whole_statement_not_its_first_line(cpu_only: None) -> None:
    """The tutorial's ``train = pytensor.function(`` spans five lines: its first line in the
    note's parentheses read ``train = pytensor.function()``, a call with no arguments."""
    x = pt.vector("x")
    with modecfg.config.override(device="cuda"), pytest.raises(modecfg.DeviceUnavailableError) as caught:
        line = sys._getframe().f_lineno + 1
        modecfg.function(
            [x],
            x + 1,
        )
    assert getattr(caught.value, "__notes__", []) == [
        f"(compiling the function at {__file__}:{line}: modecfg.function( [x], x + 1, ))"
    ]


def test_device_cuda_falls_back_to_the_cpu_when_asked(
    cpu_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg.device import where as device

    monkeypatch.setattr(device, "_warned", set())  # said once per process: this test wants to see it
    x = pt.vector("x")
    with modecfg.config.override(device="cuda", fallback_to_cpu=True):
        with pytest.warns(device.DeviceFallbackWarning, match="running on the CPU instead"):
            f = modecfg.function([x], x + 1)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 3.0])
