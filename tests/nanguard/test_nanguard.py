"""NanGuardMode on the demo's logistic regression: NaN / Inf / big injected three ways."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import modecfg
from modecfg.demo import build_problem
from modecfg.errors import DumpError

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

N, D = 50, 12
LINES = {
    text.rsplit("# line: ", 1)[1]: i
    for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
    if text.rstrip().endswith(("# line: input", "# line: log", "# line: p1"))
}


def _model(mode: str) -> dict[str, object]:
    """The demo's model, with a log-prior on the weights (so that a zero weight is log(0))."""
    floatx = modecfg.config.floatX
    rng = np.random.default_rng(1)
    x = pt.matrix("x", dtype=floatx)  # line: input
    y = pt.vector("y", dtype=floatx)
    w = pytensor.shared((0.5 + rng.random(D)).astype(floatx), name="w")
    b = pytensor.shared(np.asarray(0.0, dtype=floatx), name="b")
    lr = pytensor.shared(np.asarray(0.1, dtype=floatx), name="lr")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))  # line: p1
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)
    prior = -pt.log(pt.abs(w)).sum()  # line: log
    cost = xent.mean() + 0.001 * prior
    gw, gb = pytensor.grad(cost, [w, b])
    train = modecfg.function([x, y], cost, updates=[(w, w - lr * gw), (b, b - lr * gb)], mode=mode)
    return {"train": train, "w": w, "b": b, "lr": lr}


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    return build_problem(0, N, D)  # floatX, as the model


@pytest.fixture(scope="module")
def guarded() -> dict[str, object]:
    return _model("NanGuardMode")


@pytest.fixture(scope="module")
def plain() -> dict[str, object]:
    # The guard watches each node, so it runs on a VM linker (cvm here): compare like with like.
    with modecfg.config.override(linker=modecfg.linkers.best_linker()):
        return _model("FAST_RUN")


@pytest.fixture(autouse=True)
def _dumps(tmp_path: Path) -> object:
    with modecfg.config.override(**{"NanGuardMode.dump_dir": str(tmp_path)}):
        yield


def _snapshot(model: dict[str, object]) -> list[np.ndarray]:
    return [model[k].get_value().copy() for k in ("w", "b", "lr")]  # type: ignore[attr-defined]


def _restore(model: dict[str, object], values: list[np.ndarray]) -> None:
    for key, value in zip(("w", "b", "lr"), values, strict=True):
        model[key].set_value(value.copy())  # type: ignore[attr-defined]


def _assert_untouched(model: dict[str, object], before: list[np.ndarray]) -> None:
    for value, old in zip(_snapshot(model), before, strict=True):
        assert value.tobytes() == old.tobytes()  # bit for bit


def test_a_clean_run_matches_fast_run(guarded: dict, plain: dict, data: tuple) -> None:
    start = _snapshot(plain)
    _restore(guarded, start)
    for _ in range(3):
        a = guarded["train"](*data)
        b = plain["train"](*data)
        assert a == b
    np.testing.assert_array_equal(guarded["w"].get_value(), plain["w"].get_value())
    assert type(guarded["train"].maker.linker).__name__ == "GuardLinker"


def test_a_bad_input_batch_is_named_and_nothing_is_updated(guarded: dict, data: tuple) -> None:
    x, y = data
    bad = x.copy()
    bad[5, 2] = np.nan
    before = _snapshot(guarded)
    with pytest.raises(modecfg.NanGuardError) as info:
        guarded["train"](bad, y)
    _assert_untouched(guarded, before)
    found = info.value.bad
    assert found.kind == "NaN" and found.where == "input x" and found.n_bad == 1
    assert (found.source.file, found.source.line) == (__file__, LINES["input"])
    assert "nothing was updated: w, b keep their values" in str(info.value)


def test_log_of_zero_names_the_log_line(guarded: dict, data: tuple) -> None:
    before = _snapshot(guarded)
    w = before[0].copy()
    w[3] = 0.0  # log(|0|) = -inf in the prior
    _restore(guarded, [w, before[1], before[2]])
    broken = _snapshot(guarded)
    try:
        with pytest.raises(modecfg.NanGuardError) as info:
            guarded["train"](*data)
        _assert_untouched(guarded, broken)
        found = info.value.bad
        assert found.kind == "Inf" and found.node is not None
        assert "Log" in str(found.node.op)
        assert (found.source.file, found.source.line) == (__file__, LINES["log"])
        assert found.input_dtypes == (modecfg.config.floatX,) and found.input_shapes == ((D,),)
    finally:
        _restore(guarded, before)


def test_an_overflow_to_big_names_the_line_and_writes_nothing(guarded: dict, data: tuple) -> None:
    x, y = data
    before = _snapshot(guarded)
    with pytest.raises(modecfg.NanGuardError) as info:
        # every input below NanGuardMode.big (1e10), their products with w above it
        guarded["train"](np.full_like(x, 5e9), y)
    _assert_untouched(guarded, before)
    found = info.value.bad
    assert found.kind == "big" and found.node is not None
    assert (found.source.file, found.source.line) == (__file__, LINES["p1"])
    assert found.input_shapes[0] == (N, D)  # the dot of x and w
    assert "output 0" in info.value.bad_outputs


def test_a_shared_value_above_big_is_named(guarded: dict, data: tuple) -> None:
    before = _snapshot(guarded)
    _restore(guarded, [before[0], before[1], np.asarray(1e12, dtype=before[2].dtype)])
    broken = _snapshot(guarded)
    try:
        with pytest.raises(modecfg.NanGuardError) as info:
            guarded["train"](*data)
        _assert_untouched(guarded, broken)
        assert info.value.bad.kind == "big" and info.value.bad.where == "shared variable lr"
        assert "update of w" in info.value.bad_outputs
    finally:
        _restore(guarded, before)


def test_the_dump_replays_to_the_same_error(guarded: dict, data: tuple) -> None:
    x, y = data
    bad = x.copy()
    bad[0, 0] = np.inf
    with pytest.raises(modecfg.NanGuardError) as info:
        guarded["train"](bad, y)
    dump = info.value.dump_path
    assert Path(dump).exists() and not list(Path(dump).parent.glob(".nanguard-*"))  # atomic
    with pytest.raises(modecfg.NanGuardError) as again:  # the suite's own dump: signed, replayed
        modecfg.replay(dump)
    assert again.value.bad.kind == "Inf" and again.value.bad.where == "input x"
    assert again.value.bad.source == info.value.bad.source
    assert "no dump: a replay writes no dump" in str(again.value)


def test_warn_writes_the_updates_and_warns_with_the_same_findings(guarded: dict, data: tuple) -> None:
    before = _snapshot(guarded)
    x, y = data
    bad = x.copy()
    bad[1, 1] = np.nan
    try:
        with modecfg.config.override(NanGuardMode__action="warn"):
            with pytest.warns(modecfg.nanguard.mode.NanGuardWarning, match="NaN in input x") as record:
                guarded["train"](bad, y)
        assert record[0].filename == __file__
        assert np.isnan(guarded["w"].get_value()).any()  # written, as PyTensor would
    finally:
        _restore(guarded, before)


def test_pdb_keeps_the_state_and_stops(guarded: dict, data: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    import pdb

    stops = []
    monkeypatch.setattr(pdb, "set_trace", lambda: stops.append(1))
    before = _snapshot(guarded)
    x, y = data
    bad = x.copy()
    bad[2, 2] = np.nan
    with modecfg.config.override(NanGuardMode__action="pdb"), pytest.raises(modecfg.NanGuardError):
        guarded["train"](bad, y)
    assert stops == [1]
    _assert_untouched(guarded, before)


def test_pytensor_function_reaches_the_same_guard(data: tuple) -> None:
    x = pt.vector("x")
    f = pytensor.function([x], pt.log(x), mode="NanGuardMode")
    assert type(f.maker.linker).__name__ == "GuardLinker"
    with pytest.raises(modecfg.NanGuardError, match="Inf in Log"):
        f(np.array([0.0, 1.0]))


def test_a_foreign_or_corrupted_dump_is_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.pkl"
    foreign.write_bytes(pickle.dumps({"inputs": []}))
    with pytest.raises(DumpError, match="not a modecfg NaN-guard dump"):
        modecfg.replay(foreign)
    corrupted = tmp_path / "corrupted.npz"
    corrupted.write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(DumpError, match="corrupted"):
        modecfg.replay(corrupted)
    with pytest.raises(DumpError, match="cannot read"):
        modecfg.replay(tmp_path / "missing.npz")


def test_the_replay_command_says_reproduced_and_exits_0(guarded: dict, data: tuple, tmp_path: Path) -> None:
    import io

    from modecfg.cli import main

    x, y = data
    bad = x.copy()
    bad[4, 4] = np.nan
    with pytest.raises(modecfg.NanGuardError) as info:
        guarded["train"](bad, y)
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", info.value.dump_path], out, err) == 0, err.getvalue()
    assert out.getvalue().startswith("reproduced: NaN in input x (1 of")
    assert "error" not in err.getvalue() and "max_dumps" not in out.getvalue()
    assert main(["replay", str(tmp_path / "nope.npz")], out, err) == 2
    assert "cannot read the dump" in err.getvalue()


def test_theanos_constructor_spelling_reaches_modecfgs_guard() -> None:
    """NanGuardMode(nan_is_error=..., inf_is_error=..., big_is_error=...) as the Theano tutorials
    write it (issue 31, item 8): modecfg's guard, the checks given holding whatever the flags say."""
    mode = modecfg.NanGuardMode(nan_is_error=True, inf_is_error=False, big_is_error=False)
    assert type(mode.linker).__name__ == "GuardLinker" and mode.linker.checks == (True, False, False)
    x = pt.vector("x")
    fn = pytensor.function([x], pt.log(x), mode=mode)
    with modecfg.config.override(NanGuardMode__inf_is_error=True):  # the mode's own choice holds
        np.testing.assert_array_equal(fn(np.array([0.0])), [-np.inf])
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        fn(np.array([-1.0]))
    strict = modecfg.modes.NanGuardMode(True, True, True, optimizer="fast_compile")  # positional, as Theano
    assert strict.linker.checks == (True, True, True)
    with modecfg.config.override(NanGuardMode__inf_is_error=False), pytest.raises(modecfg.NanGuardError):
        pytensor.function([x], pt.log(x), mode=strict)(np.array([0.0]))
    f2 = pickle.loads(pickle.dumps(fn))  # the checks travel with the function
    np.testing.assert_array_equal(f2(np.array([0.0])), [-np.inf])


@pytest.fixture(scope="module")
def small() -> dict[str, object]:
    x = pt.dvector("x")
    y = pt.dvector()  # unnamed: shown as PyTensor shows it
    with modecfg.config.override(**{"NanGuardMode.max_dumps": 0}):
        return {
            "log": modecfg.function([x, y], pt.log(x) * y, mode="NanGuardMode"),  # line: small log
            "mul": modecfg.function([x, y], x * y, mode="NanGuardMode"),  # line: small mul
            "y": y,
        }


def _said(fn: object, *args: object) -> tuple[modecfg.NanGuardError, list[str]]:
    with pytest.raises(modecfg.NanGuardError) as info:
        fn(*(np.asarray(a, dtype="float64") for a in args))  # type: ignore[operator]
    return info.value, str(info.value).splitlines()


def _at(mark: str) -> str:
    line = next(i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if t.endswith(mark))
    code = Path(__file__).read_text().splitlines()[line - 1].strip()
    return f"{__file__}:{line}: {code}"


def test_the_guards_message_counts_the_bad_values_and_names_the_operation_and_its_inputs(small: dict) -> None:
    error, lines = _said(small["log"], [0, 0, 1], [1, 1, 1])
    assert lines[:5] == [
        "NanGuardMode: bad values in output 0",
        "the first input or operation with one, re-running the call without rewrites:",
        "  Inf in Log (2 of 3 values)",
        f"    created at {_at('# line: small log')}",
        "    operation: Log on inputs float64(3,)",
    ]
    error, lines = _said(small["mul"], [1e6, 1e6, 1], [1e5, 1e5, 1])
    assert lines[2:5] == [
        "  big in Mul (2 of 3 values)",
        f"    created at {_at('# line: small mul')}",
        "    operation: Mul on inputs float64(3,), float64(3,)",
    ]
    bad = error.bad
    assert bad is not None
    assert "\n".join(f"  {line}" for line in bad.describe().splitlines()) == "\n".join(lines[2:5])
    at = _said(small["mul"], [1e6, 1e5, 1], [1e5, 1e5, 1])[1]  # 1e10 is the threshold, not past it
    assert at[2] == "  big in Mul (1 of 3 values)"
    html = bad._repr_html_()
    assert "first bad value: big" in html and "#a00" in html and "big in Mul (2 of 3 values)" in html

    class Printer:
        said = ""

        def text(self, text: str) -> None:
            self.said += text

    printer = Printer()
    bad._repr_pretty_(printer, False)
    assert printer.said == bad.describe()


def test_a_bad_unnamed_input_is_named_as_pytensor_shows_it(small: dict) -> None:
    error, lines = _said(small["log"], [1, 1, 1], [np.nan, 1, np.inf])
    assert error.bad is not None and error.bad.where == f"input {small['y']}"
    assert lines[2] == f"  NaN in input {small['y']} (1 of 3 values)" and "None" not in lines[2]
    with modecfg.config.override(**{"NanGuardMode.nan_is_error": False}):
        error, lines = _said(small["log"], [np.e, 1, np.e], [np.nan, 1, np.inf])
    assert lines[2] == f"  Inf in input {small['y']} (1 of 3 values)"


def test_warn_writes_the_updates_says_so_and_dumps_the_first_bad_call_only(tmp_path: Path) -> None:
    x = pt.dvector("x")
    w = pytensor.shared(np.zeros(2), name="w")
    step = modecfg.function([x], x.sum(), updates=[(w, w + pt.log(x))], mode="NanGuardMode")
    with modecfg.config.override(NanGuardMode__action="warn", **{"NanGuardMode.dump_dir": str(tmp_path)}):
        said = []
        for _ in range(2):
            with pytest.warns(modecfg.nanguard.mode.NanGuardWarning) as record:
                assert step(np.array([0.0, 1.0])) == 1.0  # the output itself is fine
            said.append(str(record[0].message).splitlines())
    assert np.isneginf(w.get_value()[0])  # written, as PyTensor would
    first, second = said
    assert first[0] == "NanGuardMode: bad values in update of w"
    assert first[2] == "  Inf in Log (1 of 2 values)"
    assert "the updates of w were written (action=warn)" in first
    assert first[-1].startswith(f"dump: {tmp_path}") and first[-1].endswith(".npz)")
    assert second[-1] == "no dump: written at the first bad call of this function (action=warn)"
    (dumped,) = tmp_path.glob("*.npz")
    assert modecfg.load_dump(dumped).linker == modecfg.modes.build.describe_linker(step.maker.linker.inner)
    with pytest.raises(modecfg.NanGuardError) as info:  # action=raise again: it is the guard's own error
        step(np.array([0.0, 1.0]))
    assert "nothing was updated: w keep their values from before the call" in str(info.value)
    with pytest.raises(AttributeError):  # the guard's own error has no failing node for PyTensor to show
        step.vm.position_of_error  # noqa: B018


def test_the_guards_warning_made_an_error_by_a_filter_blames_no_node() -> None:
    """pytest -W error, filterwarnings=error: the guard's warning is raised out of the call, and
    PyTensor added its "no line of your code is recorded for the failing operation" notes to it."""
    x = pt.vector("x")
    with modecfg.config.override(linker="cvm"):
        f = modecfg.function([x], pt.log(x) * 2, mode="NanGuardMode")
    with (
        modecfg.config.override(NanGuardMode__action="warn"),
        warnings.catch_warnings(),
        pytest.raises(modecfg.nanguard.mode.NanGuardWarning) as warned,
    ):
        warnings.simplefilter("error")
        f(np.array([-1.0]))
    assert getattr(warned.value, "__notes__", []) == []
