"""PyTensor's mode table with modecfg imported: modecfg's modes by name, PyTensor's as PyTensor has them."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import modecfg

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

from pytensor.compile import mode as ptmode  # noqa: E402

BACKENDS = {"JAX": ("JAXLinker", "jax"), "PYTORCH": ("PytorchLinker", "torch"), "MLX": ("MLXLinker", "mlx")}


@pytest.mark.parametrize("name", BACKENDS)
def test_backend_modes_are_built_whether_or_not_the_backend_is_installed(name: str) -> None:
    linker_class, _ = BACKENDS[name]
    assert type(modecfg.get_mode(name).linker).__name__ == linker_class
    assert type(ptmode.get_mode(name).linker).__name__ == linker_class


def test_the_mode_flag_set_through_pytensor_selects_pytensors_jax_mode() -> None:
    """PyTensor's own test_predefined_modes_respected, which modecfg used to break."""
    from pytensor.link.jax.linker import JAXLinker

    assert not isinstance(ptmode.get_default_mode().linker, JAXLinker)
    with pytensor.config.change_flags(mode="JAX"):
        assert isinstance(ptmode.get_default_mode().linker, JAXLinker)
    assert not isinstance(ptmode.get_default_mode().linker, JAXLinker)


@pytest.mark.parametrize("name", BACKENDS)
def test_compiling_with_a_missing_backend_names_what_to_install(name: str) -> None:
    _, package = BACKENDS[name]
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    x = pt.vector("x")
    with pytest.raises(modecfg.LinkerUnavailableError, match=f"pip install {package}"):
        modecfg.function([x], x * 2, mode=name)
    with pytest.raises(ImportError, match=package):  # PyTensor's door: PyTensor's own error
        pytensor.function([x], x * 2, mode=name)


def test_modecfgs_modes_answer_pytensors_names_in_any_case() -> None:
    x = pt.vector("x")
    for name in ("NanGuardMode", "NANGUARDMODE", "nanguardmode"):
        fn = pytensor.function([x], pt.log(x), mode=name)
        with pytest.raises(modecfg.NanGuardError):
            fn(np.array([-1.0]))
    assert type(ptmode.get_mode("DebugMode")).__module__ == "modecfg._pytensor.debugmode"


def test_every_alias_of_the_table_is_the_same_object() -> None:
    assert pytensor.compile.predefined_modes is ptmode.predefined_modes
    assert pytensor.compile.register_mode is ptmode.register_mode


def test_pytensors_register_mode_still_registers_and_refuses_its_own_duplicates() -> None:
    import pytensor.compile.debug.debugmode

    mode = ptmode.Mode(linker="py", optimizer="fast_compile")
    ptmode.register_mode("MODECFG_TEST_PY", mode)
    try:
        assert ptmode.get_mode("MODECFG_TEST_PY") is mode
        x = pt.vector("x")
        assert pytensor.function([x], x + 1, mode="MODECFG_TEST_PY")([1.0]).tolist() == [2.0]
        with pytest.raises(ValueError, match="already taken"):
            ptmode.register_mode("MODECFG_TEST_PY", mode)
    finally:
        dict.pop(ptmode.predefined_modes, "MODECFG_TEST_PY")
