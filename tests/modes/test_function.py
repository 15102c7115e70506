"""modecfg.function: PyTensor's own compiled function, compiled under modecfg's config."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import modecfg

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


def test_the_compiled_function_is_pytensors_own() -> None:
    from pytensor.compile.executor import Function

    x = pt.vector("x")
    f = modecfg.function([x], x + 1)
    assert type(f) is Function  # nothing wraps the call path
    np.testing.assert_array_equal(f(np.array([1.0])), [2.0])


def test_keyword_arguments_reach_pytensor() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    s = pytensor.shared(np.zeros(1), name="s")
    f = modecfg.function([x, y], x + 1, updates=[(s, s + x)], on_unused_input="ignore", name="f1")
    f(np.array([2.0]), np.array([0.0]))
    assert s.get_value()[0] == 2.0 and f.name == "f1"


def test_overrides_of_pytensor_flags_apply_to_the_compile_and_are_undone() -> None:
    x, unused = pt.vector("x"), pt.vector("unused")
    with pytest.raises(Exception, match="unused"):
        modecfg.function([x, unused], x + 1)  # PyTensor's default: on_unused_input=raise
    with modecfg.config.override(on_unused_input="ignore"):
        f = modecfg.function([x, unused], x + 1)
        assert pytensor.config.on_unused_input == "ignore"  # pytensor.config is the view
    assert pytensor.config.on_unused_input == "raise"
    np.testing.assert_array_equal(f(np.array([1.0]), np.array([0.0])), [2.0])


def test_compiles_with_overrides_in_threads_do_not_leak_into_each_other() -> None:
    results: dict[str, object] = {}

    def compile_with(name: str, value: str | None) -> None:
        x, unused = pt.vector("x"), pt.vector("unused")
        try:
            if value is None:
                modecfg.function([x, unused], x)
                results[name] = "compiled"
            else:
                with modecfg.config.override(on_unused_input=value):
                    modecfg.function([x, unused], x)
                    results[name] = "compiled"
        except Exception as exc:
            results[name] = type(exc).__name__

    threads = [
        threading.Thread(target=compile_with, args=(f"t{i}", "ignore" if i % 2 else None)) for i in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == {
        "t0": "UnusedInputError", "t1": "compiled", "t2": "UnusedInputError",
        "t3": "compiled", "t4": "UnusedInputError", "t5": "compiled",
    }  # fmt: skip
    assert pytensor.config.on_unused_input == "raise"


def test_a_mode_object_is_used_as_it_is() -> None:
    from pytensor.compile.mode import Mode

    x = pt.vector("x")
    mode = Mode(linker="py", optimizer="fast_compile")
    assert modecfg.function([x], x, mode=mode).maker.mode is mode
