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
