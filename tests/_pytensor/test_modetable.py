"""PyTensor's mode table with modecfg imported: modecfg's modes by name, PyTensor's as PyTensor has them."""

from __future__ import annotations

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


_MISSING = """
import sys
sys.modules[{package!r}] = None  # hidden: find_spec says None and `import {package}` fails
import modecfg, pytensor, pytensor.tensor as pt
x = pt.vector("x")
try:
    modecfg.function([x], x * 2, mode={name!r})
except modecfg.LinkerUnavailableError as exc:
    assert "pip install {package}" in str(exc), str(exc)
else:
    raise AssertionError("compiled without {package}")
try:  # PyTensor's door: PyTensor's own error
    pytensor.function([x], x * 2, mode={name!r})
except ImportError as exc:
    assert {package!r} in str(exc), str(exc)
else:
    raise AssertionError("PyTensor compiled without {package}")
"""


@pytest.mark.parametrize("name", BACKENDS)
def test_compiling_with_a_missing_backend_names_what_to_install(name: str) -> None:
    """Run with the backend hidden (an import blocker), installed here or not: jax always is
    under `make test`, and the test used to skip then."""
    import subprocess
    import sys

    _, package = BACKENDS[name]
    code = _MISSING.format(package=package, name=name)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


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


def test_per_graph_is_a_linker_name_wherever_pytensor_takes_one() -> None:
    """Issue 60: Mode(linker="per_graph") was a KeyError though the flag takes it."""
    import numpy as np
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.mode import Mode, get_mode, predefined_linkers

    from modecfg._pytensor import marks

    assert "per_graph" in predefined_linkers and "cvm" in predefined_linkers
    mode = Mode(linker="per_graph")
    assert getattr(mode.linker, marks.AUTO, False) is True
    x = pt.vector("x")
    f = pytensor.function([x], x * 2, mode=mode)
    assert f(np.ones(2)).tolist() == [2.0, 2.0]
    assert get_mode(mode) is mode and getattr(predefined_linkers["cvm"], marks.AUTO, False) is False
    with pytest.raises(ValueError, match="already taken"):
        pytensor.compile.mode.register_linker("per_graph", predefined_linkers["cvm"])
