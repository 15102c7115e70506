"""The linker table: rows, availability with reasons, 'auto', and every usable linker compiling."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import modecfg
from modecfg.linkers import best_linker, linker_names, resolve_linker, table, why_unavailable
from tests.machine import best_linker_here, usable_here

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

EXPECTED = [
    "cvm",
    "cvm_nogc",
    "c|py",
    "c|py_nogc",
    "c",
    "py",
    "vm",
    "vm_nogc",
    "numba",
    "jax",
    "pytorch",
    "mlx",
]


def test_the_table_has_every_linker_once_with_its_facts() -> None:
    rows = table()
    assert [r.name for r in rows] == EXPECTED
    assert linker_names() == ("auto", "per_graph", *EXPECTED)
    by_name = {r.name: r for r in rows}
    assert by_name["cvm"].gc and not by_name["cvm_nogc"].gc
    assert by_name["py"].raises_by_op and not by_name["c"].raises_by_op
    assert all(r.description and r.overhead for r in rows)
    for row in rows:  # the table's answer against the machine's facts, found without it
        assert row.available == usable_here(row.name), (row.name, row.why_not)
        assert (row.why_not == "") == row.available


def test_every_linker_pytensor_knows_is_in_the_table() -> None:
    from pytensor.compile.mode import predefined_linkers

    assert set(predefined_linkers) <= set(EXPECTED)


def test_without_a_compiler_the_c_linkers_say_why_and_auto_falls_back() -> None:
    assert "cxx flag is empty" in why_unavailable("cvm", cxx="")
    assert why_unavailable("vm", cxx="") == ""
    numba_installed = importlib.util.find_spec("numba") is not None  # a fact, not the table's answer
    assert best_linker(cxx="") == ("numba" if numba_installed else "vm")
    with pytest.raises(modecfg.LinkerUnavailableError) as info:
        resolve_linker("cvm", cxx="")
    msg = str(info.value)
    assert "linker 'cvm' cannot run on this machine" in msg and "Usable here:" in msg and "py" in msg


def test_a_compiler_that_does_not_exist_is_named() -> None:
    assert "/nope/g++ does not exist" in why_unavailable("c", cxx="/nope/g++")


def test_a_backend_that_is_not_installed_is_named_with_its_install_line() -> None:
    rows = {r.name: r for r in table()}
    for name, module in [("jax", "jax"), ("pytorch", "torch"), ("mlx", "mlx")]:
        if not rows[name].available:
            assert f"{module} is not installed (pip install" in rows[name].why_not


def test_an_unusable_linker_in_the_config_is_a_clear_error_at_compile() -> None:
    unusable = [r.name for r in table() if not r.available]
    if not unusable:
        pytest.skip("every linker is usable here")
    x = pt.vector("x")
    with modecfg.config.override(linker=unusable[0]), pytest.raises(modecfg.LinkerUnavailableError):
        modecfg.function([x], x + 1)


def test_best_linker_follows_the_machine_s_compiler_and_numba() -> None:
    assert best_linker() == best_linker_here()


USABLE = [r.name for r in table() if r.available]


@pytest.fixture(scope="module")
def small_graph() -> tuple[object, object]:
    x = pt.vector("x")
    return x, pt.exp(x) * 2 + 1


@pytest.mark.parametrize("linker", USABLE)
def test_every_usable_linker_compiles_and_runs_a_small_graph(linker: str, small_graph: tuple) -> None:
    x, out = small_graph
    with modecfg.config.override(linker=linker):
        f = modecfg.function([x], out, mode="FAST_RUN")
    assert f.maker.mode.provided_linker == linker  # the linker asked for, not a substitute
    data = np.array([0.0, 1.0, 2.0], dtype=x.dtype)
    np.testing.assert_allclose(f(data), np.exp(data) * 2 + 1, rtol=1e-6)


def test_c_without_a_blas_is_partly_usable_and_says_why_not_a_raw_error() -> None:
    """linker=c on the tutorial's exercise was a NotImplementedError traceback at the compile
    while `modecfg linkers` listed c as usable (issue 31, item 5)."""
    import io

    from modecfg._pytensor.blas import c_has_blas
    from modecfg.cli import main

    pytensor = pytest.importorskip("pytensor")
    pt = pytest.importorskip("pytensor.tensor")
    if modecfg.linkers.why_unavailable("c"):
        pytest.skip("no C++ compiler")
    out = io.StringIO()
    assert main(["linkers"], out, io.StringIO()) == 0
    row = next(line for line in out.getvalue().splitlines() if line.startswith("c "))
    x, w = pt.matrix("x"), pytensor.shared(np.ones(3), name="w")
    graph = pt.dot(x, w).sum()
    if c_has_blas():
        assert row.split()[1] == "yes" and modecfg.linkers.limit("c") == ""
        return
    assert row.split()[1] == "partly" and "no BLAS for PyTensor's C code" in out.getvalue()
    with modecfg.config.override(linker="c"), pytest.raises(modecfg.LinkerUnavailableError) as info:
        pytensor.function([x], graph)
    message = str(info.value)
    assert "cannot produce C code here (PyTensor's C code has no BLAS to link)" in message
    assert "Use linker=c|py or cvm" in message and "blas.ldflags=-lopenblas" in message
    with modecfg.config.override(linker="c"):  # a graph without a product runs on c
        assert pytensor.function([x], (x * 2).sum())(np.ones((2, 3))) == 12.0
