"""pytensor.config is a view of modecfg's configuration: reads, writes and change_flags, in
every direction and every scope (issue 21)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg import config
from modecfg.configuration.origin import Layer
from modecfg.errors import FlagValueError, UnknownFlagError
from tests.fresh import run_json

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

# After PyTensor: a private module of the view imported before PyTensor would import PyTensor
# from inside itself, and the view could not attach (modecfg says so, and runs PyTensor as it is).
from modecfg._pytensor import install, uninstall  # noqa: E402
from modecfg._pytensor.view import ADOPTED, _is_pytensors_source, _same  # noqa: E402

HERE = str(Path(__file__))


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    yield
    for name in ("floatX", "optimizer", "warn_float64", "exception_verbosity"):
        config.reset(name)


def _answered(name: str) -> bool:
    """Whether modecfg answers PyTensor's ``name``: its parameter, in PyTensor's table and on its
    config class, is the bridge's."""
    from modecfg._pytensor.view import FlagParam

    param = pytensor.config._config_var_dict[name]
    return isinstance(param, FlagParam) and type(pytensor.config).__dict__[name] is param


def _line(text: str) -> int:
    for number, line in enumerate(Path(__file__).read_text().splitlines(), 1):
        if text in line and "_line(" not in line:
            return number
    raise AssertionError(text)


# -- the table of issue 21, row by row --------------------------------------------------------


def test_an_assignment_through_pytensor_config_is_modecfgs_with_the_users_line() -> None:
    pytensor.config.floatX = "float32"  # assigned here
    assert config.floatX == "float32" == pytensor.config.floatX
    origin = config.origin("floatX")
    assert (origin.source, origin.line) == (HERE, _line("# assigned here"))
    assert f"{HERE}:{origin.line}" in str(config.explain("floatX"))
    heard = []
    undo = config.subscribe(heard.append, ["floatX"])
    try:
        pytensor.config.floatX = "float64"
    finally:
        undo()
    assert [(c.name, c.value, c.kind) for c in heard] == [("floatX", "float64", "assigned")]


def test_the_float32_check_runs_after_pytensor_config_floatx_is_assigned() -> None:
    pytensor.config.floatX = "float32"
    x = pt.vector("x")  # float32, from the assignment
    n = pt.scalar("n", dtype="int32")
    y = x * n  # Mul(float32, int32) -> float64: built before the check is on (PyTensor's would raise)
    pytensor.config.warn_float64 = "raise"
    with pytest.raises(modecfg.Float64Error):
        modecfg.function([x, n], y)
    assert x.dtype == "float32"


def test_optimizer_can_be_assigned_after_import_as_through_modecfg() -> None:
    pytensor.config.optimizer = "fast_compile"
    assert config.optimizer == "fast_compile" == pytensor.config.optimizer


def test_a_bad_value_names_the_users_line_and_the_valid_choices() -> None:
    with pytest.raises(FlagValueError) as caught:
        pytensor.config.floatX = "float33"  # the bad one
    message = str(caught.value)
    assert f"{HERE}:{_line('# the bad one')}" in message
    assert "float32" in message and "did you mean" in message
    assert isinstance(caught.value, ValueError)
    assert pytensor.config.floatX == config.floatX  # nothing changed


def test_a_modecfg_override_reaches_graph_building() -> None:
    with config.override(floatX="float32"):
        assert pt.vector().dtype == "float32"
        assert pytensor.shared(np.zeros(2)).dtype == "float64"  # numpy's dtype, as in PyTensor
        assert pt.constant(1.5).dtype == "float32"
    assert pt.vector().dtype == config.floatX


def test_change_flags_is_a_modecfg_override_shown_at_its_line() -> None:
    with pytensor.config.change_flags(floatX="float32"):  # change_flags here
        assert config.floatX == "float32"
        origin = config.origin("floatX")
        assert (origin.layer.value, origin.source, origin.line) == (
            "override",
            HERE,
            _line("# change_flags here"),
        )
        with config.override(floatX="float16"):  # innermost wins, both ways
            assert pytensor.config.floatX == "float16"
            with pytensor.config.change_flags(floatX="float64"):
                assert config.floatX == "float64"
            assert pytensor.config.floatX == "float16"
    assert config.floatX == pytensor.config.floatX == "float64"
    assert config.origin("floatX").layer.value != "override"


def test_change_flags_as_a_decorator_enters_at_each_call() -> None:
    @pytensor.config.change_flags(floatX="float32", exception_verbosity="high")
    def inside() -> tuple[str, str]:
        return config.floatX, pytensor.config.exception_verbosity

    assert inside() == ("float32", "high")
    assert inside() == ("float32", "high")
    assert (config.floatX, config.exception_verbosity) == ("float64", "low")


def test_a_decorated_functions_override_comes_from_where_it_is_called() -> None:
    """PyTensor's decorator enters the block inside its wrapper (``res``): the override's origin
    is the line that called the decorated function, found by the wrapper's code object."""
    from modecfg._pytensor import view

    current = view.view()
    assert current is not None and current.wrapper is not None and current.wrapper.co_name == "res"

    @pytensor.config.change_flags(floatX="float32")
    def inside() -> modecfg.Origin:
        return config.origin("floatX")

    line = sys._getframe().f_lineno + 1
    where = inside()
    assert (where.layer, where.source, where.line) == ("override", __file__, line)
    with pytensor.config.change_flags(floatX="float32"):
        assert config.origin("floatX").line == sys._getframe().f_lineno - 1
    assert view._wrapper_code(object()) is None and view._wrapper_code(len) is None


def test_change_flags_of_a_flag_pytensor_fixes_is_refused_with_modecfgs_error() -> None:
    with pytest.raises(modecfg.ReadOnlyFlagError, match="compiledir"):
        with pytensor.config.change_flags(base_compiledir="/tmp/elsewhere"):
            pass


def test_pytensors_own_scoped_cxx_still_works() -> None:
    """PyTensor's shape folding scopes cxx="" (tensor/basic.py): a fixed flag in modecfg, but
    PyTensor's declaration lets it change for a block."""
    with pytensor.config.change_flags(cxx=""):
        assert pytensor.config.cxx == "" == config.cxx
    assert pytensor.config.cxx == config.cxx
    assert pt.zeros((pt.constant(2) + 1,)).type.shape == (3,)  # the fold that uses it


def test_a_mode_object_passes_through_change_flags() -> None:
    from pytensor.compile.mode import Mode, get_default_mode

    mode = Mode(linker="py", optimizer="fast_compile")
    with pytensor.config.change_flags(mode=mode):
        assert config.mode is mode
        assert pytensor.config.mode is mode
        assert get_default_mode() is mode
    assert config.mode == "Mode"  # PyTensor's default, as plain PyTensor reads it


def test_a_parameter_asked_directly_answers_for_the_view() -> None:
    param = pytensor.config._config_var_dict["floatX"]
    with config.override(floatX="float16"):
        assert param.__get__(pytensor.config, type(pytensor.config)) == "float16"
    param.__set__(pytensor.config, "float32")
    assert config.floatX == "float32"
    assert config.origin("floatX").layer.value == "assignment"
    assert param.name == "floatX" and param.doc and param.in_c_key in (True, False)
    assert param.apply("float16") == "float16" and param.validate("float16") is True
    with pytest.raises(ValueError, match="float8"):  # PyTensor's own check, asked through the view
        param.apply("float8")


def test_a_flag_read_on_the_class_is_its_descriptor_not_a_value() -> None:
    """As with PyTensor's own parameters: ``type(pytensor.config).floatX`` is no value of any context
    (pydoc, ``inspect.getmembers`` and PyTensor's own tests read the class)."""
    cls = type(pytensor.config)
    with config.override(floatX="float16", device="cpu"):
        for name in ("floatX", "device", "exception_verbosity", "compiledir"):
            assert getattr(cls, name) != getattr(pytensor.config, name), name


def test_the_config_hash_follows_the_context() -> None:
    plain = pytensor.config.get_config_hash()
    with pytensor.config.change_flags(floatX="float16"):
        scoped = pytensor.config.get_config_hash()
    assert scoped != plain == pytensor.config.get_config_hash()


def test_pytensors_own_test_configs_stay_isolated() -> None:
    import configparser as stdlib

    from pytensor import configparser

    root = configparser.PyTensorConfigParser({}, stdlib.ConfigParser(), stdlib.RawConfigParser())
    root.add("test__view_isolated", "a test flag", configparser.StrParam("a"), in_c_key=False)
    with root.change_flags(test__view_isolated="b"):
        assert root.test__view_isolated == "b"
    assert root.test__view_isolated == "a"
    assert type(root) is configparser.PyTensorConfigParser
    assert not hasattr(pytensor.config, "test__view_isolated")
    assert pytensor.config.floatX == config.floatX


# -- threads and tasks ---------------------------------------------------------------------------


def test_change_flags_in_two_threads_is_seen_by_each_alone() -> None:
    barrier = threading.Barrier(2)
    seen: dict[str, list[str]] = {"float32": [], "float16": []}

    def work(dtype: str) -> None:
        with pytensor.config.change_flags(floatX=dtype):
            for _ in range(200):
                barrier.wait(10)
                seen[dtype].append(pytensor.config.floatX)
                seen[dtype].append(config.floatX)

    threads = [threading.Thread(target=work, args=(d,)) for d in seen]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(seen["float32"]) == {"float32"} and set(seen["float16"]) == {"float16"}
    assert len(seen["float32"]) == len(seen["float16"]) == 400


def test_threads_building_and_compiling_under_different_overrides_get_their_dtypes() -> None:
    errors: list[str] = []
    barrier = threading.Barrier(2)

    def work(dtype: str, use_change_flags: bool) -> None:
        for i in range(15):
            scope = pytensor.config.change_flags if use_change_flags else config.override
            with scope(floatX=dtype):
                barrier.wait(30)
                x = pt.vector("x")
                f = modecfg.function([x], x * 2, mode="FAST_COMPILE")
                out = f(np.ones(2, dtype=dtype))
                if (x.dtype, f.maker.fgraph.outputs[0].dtype, out.dtype) != (dtype,) * 3:
                    errors.append(f"{dtype} #{i}: {x.dtype}, {f.maker.fgraph.outputs[0].dtype}, {out.dtype}")

    threads = [
        threading.Thread(target=work, args=("float32", False)),
        threading.Thread(target=work, args=("float64", True)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_asyncio_tasks_each_see_their_own_change_flags() -> None:
    async def task(dtype: str) -> list[str]:
        seen = []
        with pytensor.config.change_flags(floatX=dtype):
            for _ in range(20):
                await asyncio.sleep(0)
                seen.append(pt.vector().dtype)
        return seen

    async def main() -> list[list[str]]:
        return list(await asyncio.gather(task("float32"), task("float16"), task("float64")))

    results = asyncio.run(main())
    assert [set(r) for r in results] == [{"float32"}, {"float16"}, {"float64"}]


# -- taking the view away -----------------------------------------------------------------------


def test_uninstall_leaves_pytensor_config_usable_with_the_values_in_effect() -> None:
    from pytensor.configparser import PyTensorConfigParser

    config.floatX = "float32"
    config.exception_verbosity = "high"
    uninstall()
    try:
        assert type(pytensor.config) is PyTensorConfigParser
        assert (pytensor.config.floatX, pytensor.config.exception_verbosity) == ("float32", "high")
        with pytensor.config.change_flags(floatX="float16"):  # PyTensor's own again
            assert pytensor.config.floatX == "float16"
            assert config.floatX == "float32"
        pytensor.config.floatX = "float64"
        assert config.floatX == "float32"  # no longer one store
        assert pt.vector().dtype == "float64"
    finally:
        install()
    assert _answered("floatX")
    assert pytensor.config.floatX == config.floatX == "float32"


# -- import order --------------------------------------------------------------------------------

_BOTH_WAYS = """
import json, threading
{imports}
import pytensor.tensor as pt
from modecfg import config
pytensor.config.floatX = "float32"
a = (config.floatX, str(config.origin("floatX")))
with config.override(floatX="float16"):
    b = pt.vector().dtype
with pytensor.config.change_flags(floatX="float64"):
    c = config.floatX
view = type(pytensor.config._config_var_dict["floatX"]).__name__
print(json.dumps({{"a": a, "b": b, "c": c, "view": view}}))
"""


@pytest.mark.parametrize("first", ["modecfg", "pytensor"])
def test_either_import_order_gives_one_configuration(first: str) -> None:
    imports = "import modecfg\nimport pytensor" if first == "modecfg" else "import pytensor\nimport modecfg"
    out = run_json(_BOTH_WAYS.format(imports=imports))
    assert out["a"][0] == "float32" and out["a"][1].startswith("assignment at <string>:")
    assert (out["b"], out["c"], out["view"]) == ("float16", "float64", "FlagParam")


def test_pytensor_config_shows_modecfgs_environment_and_rc_values(tmp_path: Path) -> None:
    rc = tmp_path / "rc"
    rc.write_text("[global]\nexception_verbosity = high\n")
    out = run_json(
        """
        import json, pytensor, modecfg
        c = pytensor.config
        print(json.dumps({"floatX": c.floatX, "ev": c.exception_verbosity,
                          "origin": str(modecfg.config.origin("floatX"))}))
        """,
        {"THEANO_FLAGS": "floatX=float32", "MODECFGRC": str(rc)},
    )
    assert (out["floatX"], out["ev"], out["origin"]) == ("float32", "high", "THEANO_FLAGS")


def test_first_reads_of_a_default_pytensor_works_out_take_turns_between_threads() -> None:
    """PyTensor computes gcc_version_str (it runs the compiler) at the first read; a second
    thread reading meanwhile failed: "Can't change the value of gcc_version_str ... after
    initialization!" (two threads' first compiles hit it)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(
            """
            import threading
            import modecfg, pytensor
            barrier = threading.Barrier(8)
            errors, values = [], []
            def read():
                barrier.wait()
                try:
                    values.append((pytensor.config.gcc_version_str, pytensor.config.compiledir))
                except Exception as exc:
                    errors.append(repr(exc))
            threads = [threading.Thread(target=read) for _ in range(8)]
            for t in threads: t.start()
            for t in threads: t.join()
            assert errors == [], errors
            assert len(set(values)) == 1 and len(values) == 8, values
            """
        )],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_model_s_logp_and_gradient_are_bitwise_plain_pytensor_s_on_the_same_linker() -> None:
    """What PyMC 6.0.1 showed (its eight-schools NUTS draws, seed 7): with modecfg imported the
    draws are bitwise those of plain PyTensor with the same linker (PyTensor's default picks
    numba, modecfg's linker=auto picks cvm for that graph, hence other draws without pinning)."""
    from pytensor.compile.mode import Mode

    def compile_logp() -> object:
        mu, log_tau = pt.scalar("mu"), pt.scalar("log_tau")
        theta = pt.vector("theta")
        y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
        sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
        tau = pt.exp(log_tau)
        logp = (
            -0.5 * (mu / 5) ** 2
            - pt.log1p((tau / 5) ** 2) + log_tau
            - 0.5 * (((theta - mu) / tau) ** 2).sum() - 8 * log_tau
            - 0.5 * (((y - theta) / sigma) ** 2).sum()
        )  # fmt: skip
        grads = pytensor.grad(logp, [mu, log_tau, theta])
        return pytensor.function([mu, log_tau, theta], [logp, *grads], mode=Mode(linker="cvm"))

    point = (np.float64(1.3), np.float64(0.7), np.linspace(-2.0, 9.0, 8))
    ours = compile_logp()(*point)  # type: ignore[operator]
    uninstall()
    try:
        theirs = compile_logp()(*point)  # type: ignore[operator]
    finally:
        install()
    for a, b in zip(ours, theirs, strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


# -- flags modecfg declares and PyTensor 3 does not (issue 31, item 1) -----------------------------


def test_pytensor_config_assigns_a_flag_only_modecfg_declares_and_it_acts() -> None:
    """The tips post's ``config.compute_test_value = 'warn'`` was stored as a plain attribute
    and did nothing; the next line failed on a missing test value."""
    assert "compute_test_value" not in pytensor.config._config_var_dict  # PyTensor 3 has none
    try:
        pytensor.config.compute_test_value = "raise"  # line: ctv assigned
        origin = config.origin("compute_test_value")
        assert (config.compute_test_value, origin.layer, origin.line) == (
            "raise",
            "assignment",
            _line("# line: ctv assigned"),
        )
        assert pytensor.config.compute_test_value == "raise"  # reads back
        x = pt.vector("x")
        x.tag.test_value = np.ones(3)
        np.testing.assert_array_equal((x * 2).tag.test_value, [2.0, 2.0, 2.0])  # and acts
        with pytest.raises(FlagValueError, match="compute_test_value"):
            pytensor.config.compute_test_value = "sometimes"
        pytensor.config.device = "cpu"
        assert config.origin("device").layer == "assignment" and pytensor.config.device == "cpu"
    finally:
        config.reset("compute_test_value")
        config.reset("device")
    assert "compute_test_value" not in vars(pytensor.config) and "device" not in vars(pytensor.config)


def test_change_flags_takes_a_flag_only_modecfg_declares() -> None:
    with pytensor.config.change_flags(compute_test_value="warn", floatX="float32"):
        assert (config.compute_test_value, pytensor.config.compute_test_value) == ("warn", "warn")
        assert config.origin("compute_test_value").layer == "override"
    assert config.compute_test_value == "off"


def test_a_typo_on_pytensor_config_is_a_warning_with_the_did_you_mean(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from modecfg._pytensor import view

    monkeypatch.setattr(view, "_said", set())  # said once a name and process: this test's own
    with pytest.warns(modecfg.UnknownFlagWarning) as said:
        pytensor.config.floatx = "float32"
    assert [str(w.message) for w in said] == [
        "pytensor.config.floatx is no flag of modecfg or PyTensor; did you mean floatX? (kept as a plain "
        "attribute of pytensor.config, which nothing reads)"
    ]
    try:
        assert config.floatX == "float64"  # nothing set, as in PyTensor; the attribute is kept
        assert pytensor.config.floatx == "float32"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pytensor.config.floatx = "float16"  # said once a name
            assert not hasattr(pytensor.config, "floatxx_never_assigned")  # a read says nothing
    finally:
        object.__delattr__(pytensor.config, "floatx")
    with pytest.warns(modecfg.UnknownFlagWarning) as said:
        pytensor.config.my_library_note = 1
    assert [str(w.message) for w in said] == [
        "pytensor.config.my_library_note is no flag of modecfg or PyTensor (kept as a plain "
        "attribute of pytensor.config, which nothing reads)"
    ]
    object.__delattr__(pytensor.config, "my_library_note")
    hint = r"traceback__limt is .*; did you mean traceback\.limit or traceback\.compile_limit\? \(kept"
    with pytest.warns(modecfg.UnknownFlagWarning, match=hint):
        pytensor.config.traceback__limt = 3  # PyTensor's __ spelling, looked up as the dotted name
    object.__delattr__(pytensor.config, "traceback__limt")
    with pytest.warns(modecfg.ObsoleteFlagWarning, match=r"lib__cnmem is obsolete.*does nothing"):
        pytensor.config.lib__cnmem = 0.5
    object.__delattr__(pytensor.config, "lib__cnmem")
    pytensor.config._private_note = 1  # private names are a library's own business: silent
    object.__delattr__(pytensor.config, "_private_note")


def test_change_flags_checks_its_values_when_entered_or_called_as_pytensor_does() -> None:
    """PyTensor's own tests/tensor/test_basic.py decorates a function, never called, with
    cast_policy="numpy" at module level: the decorator failed, and the file did not collect."""

    @pytensor.config.change_flags(cast_policy="numpy")  # line: refused decorator
    def never_called() -> int:
        return 1

    with pytest.raises(
        FlagValueError, match=r"cast_policy='numpy' \(from override at .*\): not a valid choice"
    ):
        never_called()
    with pytest.raises(FlagValueError, match="float33"):
        with pytensor.config.change_flags(floatX="float33"):
            raise AssertionError("entered")
    assert config.floatX == "float64" and config.origin("floatX").layer != "override"
    assert never_called.__name__ == "never_called"


# -- what PyTensor held before the view (modecfg imported after it, inside a block) -------------


def test_a_value_pytensor_was_given_before_the_view_is_adopted_with_an_origin_that_says_so(
    pytensor_alone: object,
) -> None:
    pc = pytensor.config
    pc.floatX = "float32"  # PyTensor's own assignment: a notebook's first cell, PyMC
    pc.exception_verbosity = "low"  # PyTensor's default: nothing to adopt
    install()
    assert (pc.floatX, config.floatX) == ("float32", "float32")
    origin = config.origin("floatX")
    assert (origin.layer, origin.source) == (Layer.ASSIGNMENT, ADOPTED)
    assert config.origin("exception_verbosity").layer is Layer.DEFAULT


def _open(block: Any) -> Any:
    """Enter ``block`` as a ``with`` statement does: its ``__exit__`` is looked up at the entry, so
    the block ends through PyTensor's own method even if modecfg comes in meanwhile."""
    exit_ = type(block).__exit__
    block.__enter__()
    return lambda: exit_(block, None, None, None)


def test_a_block_open_when_the_view_came_ends_through_modecfg(pytensor_alone: object) -> None:
    pc = pytensor.config
    end = _open(pc.change_flags(cast_policy="numpy+floatX"))
    install()
    assert (pc.cast_policy, config.cast_policy) == ("numpy+floatX", "numpy+floatX")
    assert config.origin("cast_policy").source == ADOPTED
    end()
    # back to what PyTensor had before the block: its default, so the adopted value is dropped
    assert (pc.cast_policy, config.cast_policy) == ("custom", "custom")
    assert config.origin("cast_policy").layer is Layer.DEFAULT


def test_a_block_open_when_the_view_came_can_be_entered_again(pytensor_alone: object) -> None:
    """A change_flags decorator whose function was running when modecfg came is called again later."""
    pc = pytensor.config
    block = pc.change_flags(cast_policy="numpy+floatX")
    end = _open(block)
    install()
    end()
    with block:
        assert (pc.cast_policy, config.cast_policy) == ("numpy+floatX", "numpy+floatX")
    assert (pc.cast_policy, config.cast_policy) == ("custom", "custom")


def test_a_block_open_when_the_view_came_leaves_a_later_modecfg_assignment_alone(
    pytensor_alone: object,
) -> None:
    pc = pytensor.config
    end = _open(pc.change_flags(cast_policy="numpy+floatX"))
    install()
    config.cast_policy = "numpy+floatX"  # the user's own, after the view: not the block's to undo
    end()
    assert config.cast_policy == "numpy+floatX" and config.origin("cast_policy").source == HERE


def test_a_block_open_when_the_view_came_puts_back_pytensors_earlier_assignment(
    pytensor_alone: object,
) -> None:
    pc = pytensor.config
    pc.floatX = "float32"
    end = _open(pc.change_flags(floatX="float16"))
    install()
    assert config.floatX == "float16"
    end()
    assert (pc.floatX, config.floatX) == ("float32", "float32")
    origin = config.origin("floatX")
    assert (origin.layer, origin.source) == (Layer.ASSIGNMENT, ADOPTED)


def test_values_pytensor_was_given_across_its_flags_are_all_adopted(pytensor_alone: object) -> None:
    """One flag PyTensor never read (no value of its own) does not end the adoption of the others."""
    from modecfg._pytensor.view import view

    pc = pytensor.config
    params = pc._config_var_dict
    order = list(params)
    assert order.index("floatX") < order.index("cast_policy") < order.index("exception_verbosity")
    pc.floatX = "float32"
    pc.exception_verbosity = "high"
    del params["cast_policy"].val  # between them, one PyTensor never read (as in a fresh process)
    install()
    attached = view()
    assert attached is not None
    from modecfg._pytensor import state

    assert state.current_view is attached
    for name, value in (("floatX", "float32"), ("exception_verbosity", "high")):
        assert (config[name], config.origin(name).source) == (value, ADOPTED), name


def test_a_reinstalled_view_keeps_the_users_own_assignment_and_its_line() -> None:
    config.floatX = "float32"  # the user's, before a reinstall
    line = _line("# the user's, before a reinstall")
    uninstall()
    install()  # PyTensor held float32 meanwhile: modecfg's own value, not one to adopt
    assert (config.floatX, config.origin("floatX").source, config.origin("floatX").line) == (
        "float32",
        HERE,
        line,
    )


def test_a_view_reinstalled_inside_an_override_adopts_nothing_from_below_it() -> None:
    config.floatX = "float32"  # the user's, below an override
    line = _line("# the user's, below an override")
    with config.override(floatX="float16"):
        uninstall()  # PyTensor is handed the value below the override: the user's float32
        install()
        assert config.floatX == "float16"
        assert pytensor.config.floatX == "float16"  # the new view is told of the open override
    assert (config.floatX, config.origin("floatX").source, config.origin("floatX").line) == (
        "float32",
        HERE,
        line,
    )


def test_which_sources_pytensor_reads_itself(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A value from one of these is what PyTensor started with, not a change made on its side."""
    monkeypatch.delenv("PYTENSORRC", raising=False)
    assert _is_pytensors_source("PYTENSOR_FLAGS")
    assert _is_pytensors_source("/home/u/.pytensorrc") and _is_pytensors_source("/home/u/.pytensorrc.txt")
    for other in ("THEANO_FLAGS", "MODECFG_FLAGS", "/home/u/.theanorc", "/home/u/pytensorrc", "", None):
        assert not _is_pytensors_source(other)
    monkeypatch.setenv("PYTENSORRC", os.pathsep.join(["/etc/site.rc", "/home/u/my.rc"]))
    assert _is_pytensors_source("/etc/site.rc") and _is_pytensors_source("/home/u/my.rc")
    assert not _is_pytensors_source("/home/u/.pytensorrc")  # PYTENSORRC replaces the default files
    assert not _is_pytensors_source("/etc/site")


def test_values_are_the_same_as_pytensor_shows_them() -> None:
    assert _same("float32", "float32") and _same(3, "3") and _same(None, "None")
    assert not _same("float32", "float64") and not _same(3, 4)
    array = np.zeros(3)
    assert _same(array, array)  # == gives an array: the object itself decides
    assert not _same(array, np.zeros(3))


def test_a_view_installed_again_answers_as_the_first_did() -> None:
    """uninstall() and install() (modecfg.unwire()/wire(), a test's teardown) give the same view:
    every read path, the parameters PyTensor's C keys ask, the flags left to PyTensor."""
    import configparser as stdlib

    from pytensor.configparser import PyTensorConfigParser

    from modecfg._pytensor.view import FlagParam, _TakingTurns

    uninstall()
    install()
    pc = pytensor.config
    assert type(pc) is PyTensorConfigParser  # PyTensor's own class, its parameters modecfg's
    params = pc._config_var_dict
    floatx = params["floatX"]
    assert isinstance(floatx, FlagParam) and floatx.name == "floatX" and floatx.in_c_key is True
    assert floatx.__get__(None, type(pc)) is floatx  # on the class: the parameter itself
    assert type(pc).__dict__["floatX"] is floatx
    assert not isinstance(params["compiledir"], FlagParam)  # fixed per process: PyTensor's own
    assert isinstance(params["cxx"], FlagParam)  # fixed by modecfg, scoped by PyTensor (cxx="")
    assert isinstance(type(pc).__dict__["gcc_version_str"], _TakingTurns) and pc.gcc_version_str
    assert isinstance(type(pc).__dict__["device"], FlagParam) and pc.device == config.device
    assert "device" not in params  # modecfg's alone: not in PyTensor's table of its parameters
    plain = pc.get_config_hash()
    with config.override(floatX="float16"):
        assert pc.floatX == "float16" and floatx.__get__(pc, type(pc)) == "float16"
        assert pc.get_config_hash() != plain
    floatx.__set__(pc, "float32")
    assert (config.floatX, config.origin("floatX").layer) == ("float32", Layer.ASSIGNMENT)
    other = PyTensorConfigParser({}, stdlib.ConfigParser(), stdlib.RawConfigParser())
    with pytest.raises(Exception, match="registered on a different instance"):
        floatx.__get__(other, type(other))  # PyTensor's own safeguard, kept


def test_print_of_pytensor_config_lists_every_flag_with_the_value_in_this_context() -> None:
    """``print(theano.config)``, the tutorials' first look at the configuration."""
    with config.override(floatX="float16"):
        text = str(pytensor.config)
    block = text[text.index("floatX (") :].split("\n\n", 2)
    assert block[0].startswith("floatX (") and "Doc:  Default floating-point precision" in block[0]
    assert block[1].startswith("Note: float16 support is experimental") and "    Value:  float16" in block[1]
    assert str(pytensor.config._config_var_dict["floatX"]) == block[0].split("\n", 1)[0]
    assert text.count("\n    Value:  ") == len(pytensor.config._config_var_dict)  # every parameter


@pytest.fixture
def added_flag() -> Iterator[str]:
    """A flag PyTensor declares after the view is attached (``config.add`` at a later import, as
    PyTensor's own modules and libraries do), taken away again after the test."""
    from modecfg._pytensor import view
    from modecfg.configuration import flags
    from modecfg.configuration.store import _PROCESS_WIDE

    name = "modecfgtest_added_late"
    yield name
    current = view.view()
    assert current is not None
    for table in (current.known, current.answered, current.originals):
        table.pop(name, None)
    pytensor.config._config_var_dict.pop(name, None)
    if name in type(pytensor.config).__dict__:
        delattr(type(pytensor.config), name)
    flags.FLAGS.pop(name, None)
    flags._declared.clear()
    for store in _PROCESS_WIDE:
        store.flags = flags.declared()
        store.sections[()].__dict__.pop(name, None)
        # an override's descriptor, left until a read of the attribute (none came): gone too, so
        # that the test runs again the same in one process (mutmut runs the suite twice)
        if store.shadowed.pop(name, None) is None and name in vars(type(store.sections[()])):
            delattr(type(store.sections[()]), name)
        for table in (store.listeners, store.override_listeners, store.held, store.candidates):
            table.pop(name, None)


def test_a_flag_pytensor_declares_after_the_view_is_pytensors_own_end_to_end(added_flag: str) -> None:
    """modecfg does not declare it: PyTensor's parameter reads, assigns and scopes it, as without
    modecfg; modecfg's configuration does not know the name."""
    from pytensor.configparser import EnumStr

    pytensor.config.add(added_flag, "a flag declared late (test)", EnumStr("a", ["b", "c"]), in_c_key=False)
    assert getattr(pytensor.config, added_flag) == "a" and not _answered(added_flag)
    with pytest.raises(UnknownFlagError):
        config[added_flag]
    with pytensor.config.change_flags(**{added_flag: "c"}):
        assert getattr(pytensor.config, added_flag) == "c"
    assert getattr(pytensor.config, added_flag) == "a"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no UnknownFlagWarning: the name is PyTensor's
        setattr(pytensor.config, added_flag, "b")
    assert getattr(pytensor.config, added_flag) == "b"
    with pytest.raises(ValueError, match="'d'"):
        setattr(pytensor.config, added_flag, "d")
    param = pytensor.config._config_var_dict[added_flag]  # declared as PyTensor's add() was told
    assert (param.doc, param.in_c_key) == ("a flag declared late (test)", False)


def test_a_flag_declared_late_is_in_the_c_key_unless_told_otherwise(added_flag: str) -> None:
    from pytensor.configparser import BoolParam

    pytensor.config.add(added_flag, "a flag declared late (test)", BoolParam(False))
    assert pytensor.config._config_var_dict[added_flag].in_c_key is True  # PyTensor's default


def test_only_parameters_left_to_pytensor_that_work_their_default_out_take_turns() -> None:
    """Left to PyTensor (fixed per process) and worked out at the first read: their first reads take
    turns; one with a plain default (base_compiledir, cmodule.age_thresh_use) has nothing to race over."""
    from modecfg._pytensor.view import view

    current = view()
    assert current is not None
    assert set(current.taking_turns) == {"gcc_version_str", "compile__timeout", "compiledir"}
    for plain in ("base_compiledir", "cmodule__age_thresh_use", "compiledir_format"):
        assert plain in current.params and plain not in current.flags and plain not in current.taking_turns


def test_only_pytensors_config_object_can_become_the_view(pytensor_alone: object) -> None:
    import configparser as stdlib

    from pytensor.configparser import PyTensorConfigParser

    from modecfg._pytensor import view

    with pytest.raises(TypeError) as info:
        view.attach(object())
    assert str(info.value) == "not PyTensor's config object: object"
    half = PyTensorConfigParser({}, stdlib.ConfigParser(), stdlib.RawConfigParser())
    del half._config_var_dict  # PyTensor's class, without the parameters of one
    with pytest.raises(TypeError, match="not PyTensor's config object: PyTensorConfigParser"):
        view.attach(half)
    assert view.view() is None  # nothing attached by either


def test_an_uninstalled_view_leaves_nothing_behind_and_hears_no_more_changes(
    pytensor_alone: object,
) -> None:
    from pytensor.configparser import ConfigParam, PyTensorConfigParser

    from modecfg._pytensor.view import FlagParam, _TakingTurns

    listening = [
        listener
        for listeners in config._cfg_store.listeners.values()
        for listener in listeners
        if isinstance(getattr(listener, "__self__", None), FlagParam)
    ]
    assert listening == []  # no parameter of the bridge hears of changes any more
    from modecfg._pytensor import state

    assert state.current_view is None  # what every block reads first: no view to ask
    on_class = PyTensorConfigParser.__dict__
    for name in ("floatX", "gcc_version_str", "compiledir"):  # PyTensor's own parameters are back
        assert type(on_class[name]) is not FlagParam and not isinstance(on_class[name], _TakingTurns)
        assert isinstance(on_class[name], ConfigParam)
    assert "device" not in on_class and "device" not in pytensor.config._config_var_dict
    assert "__setattr__" not in on_class and on_class["add"].__module__ == "pytensor.configparser"
    config.floatX = "float32"
    with config.override(floatX="float16"):
        assert pytensor.config.floatX == "float64"  # PyTensor's own again


def test_a_block_entered_again_at_its_call_site_makes_the_items_its_override_makes() -> None:
    """The first entry at a call site is the override's own ``__enter__`` (a cache miss); later
    ones write its item out (the hot path): the same item, left the same way."""
    import weakref

    from modecfg.configuration.overrides import SingleOverride
    from modecfg.configuration.sections import ALIVE, ORIGIN, OWNER, PARENT, SHOWN, VALUE

    block = pytensor.config.change_flags(floatX="float32")
    seen = []
    for _ in range(3):
        with block:
            scope = vars(block)["_modecfg_entered"]
            assert type(scope) is SingleOverride
            item = scope._var.get()
            assert [item[VALUE], item[ORIGIN], item[PARENT], item[OWNER]] == [
                scope._value,
                scope._origin,
                None,
                scope,
            ]
            assert type(item[ALIVE]) is weakref.ref and item[ALIVE]() is scope._one_held
            assert len(item) == SHOWN and scope._last is item  # nothing shown yet
            assert scope._name in scope._shadowed
            seen.append((scope, pytensor.config.floatX, config.floatX))
        assert scope._var.get() is None and scope._last is None and vars(block)["_modecfg_entered"] is None
    assert seen == [(seen[0][0], "float32", "float32")] * 3
    assert (pytensor.config.floatX, config.origin("floatX").layer) == ("float64", Layer.DEFAULT)


def test_a_block_left_in_another_thread_is_no_longer_read_where_it_was_entered() -> None:
    """pytensor.config keeps what it showed for an override on the override's item; a block
    entered in one thread and left in another ends that item in place: the thread that entered
    it reads what was beneath it, not what was shown before."""
    block = pytensor.config.change_flags(floatX="float32")
    entered, left, seen = threading.Event(), threading.Event(), []

    def inside() -> None:
        block.__enter__()
        seen.append(pytensor.config.floatX)  # shown, and kept on the item
        entered.set()
        left.wait(10)
        seen.append(pytensor.config.floatX)

    thread = threading.Thread(target=inside)
    thread.start()
    entered.wait(10)
    block.__exit__(None, None, None)  # left here, as PyTensor allows
    left.set()
    thread.join(10)
    assert seen == ["float32", "float64"]


def test_one_change_flags_object_entered_by_two_threads_is_left_by_each_in_any_order() -> None:
    """Thread A enters, thread B enters the same object (another call site: another override), A
    leaves first: A's own entry ends, in A; B keeps its value until it leaves."""
    block = pytensor.config.change_flags(floatX="float32")
    steps = {name: threading.Event() for name in ("a_in", "b_in", "a_out")}
    seen: dict[str, list[str]] = {"a": [], "b": []}

    def a() -> None:
        block.__enter__()
        steps["a_in"].set()
        steps["b_in"].wait(10)
        block.__exit__(None, None, None)
        seen["a"].append(pytensor.config.floatX)
        steps["a_out"].set()

    def b() -> None:
        steps["a_in"].wait(10)
        with block:
            steps["b_in"].set()
            steps["a_out"].wait(10)
            seen["b"].append(pytensor.config.floatX)
        seen["b"].append(pytensor.config.floatX)

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert seen == {"a": ["float64"], "b": ["float32", "float64"]}
    assert vars(block).get("_modecfg_entered") in (None, [])


def test_one_change_flags_decorator_entered_again_inside_itself_and_by_threads_at_once() -> None:
    """A decorated function that recurses, called from several threads: each entry ends its
    own override, in its own thread, whatever the order the threads leave in."""

    @pytensor.config.change_flags(floatX="float32")
    def deep(n: int, seen: list[str]) -> None:
        seen.append(pytensor.config.floatX)
        if n:
            deep(n - 1, seen)
        seen.append(config.floatX)

    outs: list[list[str]] = []
    gate = threading.Barrier(4)

    def run() -> None:
        seen: list[str] = []
        gate.wait()
        deep(5, seen)
        seen.append(pytensor.config.floatX)  # out of every block: this thread's value again
        outs.append(seen)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outs == [["float32"] * 12 + ["float64"]] * 4
    assert pytensor.config.floatX == "float64" and config.origin("floatX").layer is Layer.DEFAULT


@pytest.mark.parametrize("mode", ["MonitorMode", "CompareMode", "ProfileMode", "NanGuardMode"])
def test_a_mode_pytensors_filter_does_not_take_is_shown_by_its_name(mode: str) -> None:
    """PyTensor's own parameter refuses these names, yet its get_mode finds them (the "mode
    table" patch): pytensor.config.mode shows modecfg's mode by its name, not PyTensor's value."""
    with config.override(mode=mode), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (ProfileMode's, said where it is built)
        assert pytensor.config.mode == mode
        assert pytensor.compile.mode.get_mode(pytensor.config.mode) is not None


def test_a_linker_value_only_modecfg_has_is_shown_as_pytensors_own() -> None:
    """linker=per_graph is modecfg's alone: PyTensor's code reads what its own parameter holds
    (its get_mode path and caches key on a linker name it knows), never a name it cannot take."""
    from modecfg._pytensor import state

    pytensors = state.current_view.by_flag["linker"].pytensors()
    with config.override(linker="per_graph"):
        assert config.linker == "per_graph"
        assert pytensor.config.linker == pytensors != "per_graph"


def test_an_attach_that_fails_part_way_is_undone_and_says_its_own_error() -> None:
    """attach() undoes what it did when a step fails (detach on a view never completed: no
    read-through flags yet), and the error said is that step's, not one of the undoing."""
    done = run_json("""
        import json, modecfg, pytensor
        from pytensor.configparser import PyTensorConfigParser
        from modecfg._pytensor import uninstall, view
        uninstall()
        plain = dict(vars(PyTensorConfigParser))
        def fails(self):
            raise RuntimeError("a step failed")
        view._View.hand_late = fails
        try:
            view.attach(pytensor.config)
            said = None
        except Exception as exc:
            said = f"{type(exc).__name__}: {exc}"
        print(json.dumps({
            "said": said,
            "attached": view.view() is not None,
            "class back": dict(vars(PyTensorConfigParser)) == plain,
            "table": type(pytensor.config._config_var_dict).__name__,
        }))
    """)  # fmt: skip
    assert done["said"] == "RuntimeError: a step failed", done["stderr"]
    assert (done["attached"], done["class back"], done["table"]) == (False, True, "dict")


def test_a_flag_pytensor_took_at_its_import_reset_to_the_value_it_has_is_heard_by_no_parameter() -> None:
    """The flags PyTensor took at its import have no parameter of the view (PyTensor reads its
    own): dropping an assignment that changes nothing (none made) is refused by no guard and
    heard by the parameters of the flags they answer only."""
    from modecfg._pytensor import state

    handed = [n for n in ("compile.wait", "cmodule.age_thresh_use", "compiledir_format")
              if n not in state.current_view.by_flag]  # fmt: skip
    assert handed == ["compile.wait", "cmodule.age_thresh_use", "compiledir_format"]
    before = [config[name] for name in handed]
    for name in handed:
        config.reset(name)
    assert [config[name] for name in handed] == before
    assert pytensor.config.compile__wait == config["compile.wait"]
