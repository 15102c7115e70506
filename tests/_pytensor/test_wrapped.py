"""Modes whose linker wraps another rewrite inner graphs for the wrapped linker (PyTensor 3.3).

modecfg._pytensor.wrapped."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import modecfg

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

from pytensor.compile.builders import OpFromGraph  # noqa: E402


@pytest.mark.parametrize("mode", ["NanGuardMode", "MonitorMode"])
def test_inner_graphs_are_rewritten_for_the_wrapped_linker(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """PyTensor 3.3 rewrites a scan's or an OpFromGraph's inner graph for the compile's linker,
    chosen by its class: a wrapper's class must not leave them unrewritten (PyTensor logs an
    error for each). Earlier releases have no such step, and log nothing either way."""
    a, v = pt.vector("a"), pt.vector("v")
    inner = OpFromGraph([a], [pt.exp(a) * 2])
    summed = pytensor.scan(lambda s, acc: acc + s, sequences=[v], outputs_info=[pt.zeros(())],
                           return_updates=False)  # fmt: skip
    with caplog.at_level(logging.ERROR):
        fn = modecfg.function([v], [inner(v).sum(), summed[-1]], mode=mode)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    np.testing.assert_allclose(fn(np.array([0.0, 1.0])), [2 + 2 * np.e, 1.0])


def test_uninstall_takes_the_inner_graph_registrations_back_and_install_makes_them_again() -> None:
    """Issue 61: the registration of modecfg's wrapping linker with PyTensor 3.3's inner-graph
    rewrites (a ``functools.singledispatch`` each) was the one change with no undo. Before PyTensor
    3.3 there is nothing to register, and nothing is."""
    from tests.fresh import run_json

    out = run_json(
        """
        import importlib, json
        import pytensor, pytensor.tensor as pt
        import pytensor.compile.debug.debugmode  # registers PyTensor's own linker of DebugMode
        from modecfg._pytensor.wrapped import INNER_GRAPH_REWRITES  # (imports modecfg: none registered)
        def registries():
            found = {}
            for module_name, name in INNER_GRAPH_REWRITES:
                try:
                    dispatcher = getattr(importlib.import_module(module_name), name)
                except (ImportError, AttributeError):
                    continue
                found[name] = sorted(cls.__qualname__ for cls in dispatcher.registry)
            return found
        before = registries()
        import modecfg
        from modecfg._pytensor import patches
        x = pt.vector("x")
        pytensor.function([x], x * 2, mode="NanGuardMode")  # loads the wrapping linker's module
        installed = registries()
        patches.uninstall()
        after = registries()
        patches.install()
        print(json.dumps({"before": before, "installed": installed, "after": after,
                          "again": registries()}))
        """
    )
    before, installed = out["before"], out["installed"]
    added = {name: sorted(set(installed[name]) - set(before[name])) for name in before}
    assert added == {name: ["WrappingLinker"] for name in before}  # {} before PyTensor 3.3
    assert out["after"] == before
    assert out["again"] == installed
