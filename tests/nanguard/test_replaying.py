"""Replaying a dump: the same call again, compiled under the flags it was made with, run as it was."""

from __future__ import annotations

import hashlib
import json
import pickle
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.errors import DumpError, DumpWarning
from modecfg.nanguard import dump as dump_module
from tests.nanguard.dumptools import parts, rebuild

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    x = pt.vector("x")
    unused = pt.vector("unused")
    w = pytensor.shared(np.full(3, 4.0), name="w")
    return {
        "scaled": modecfg.function([x], x * 1000.0, mode="NanGuardMode"),
        # the NaN is in the update only: the outputs are finite
        "update": modecfg.function([x], x.sum(), updates=[(w, pt.log(w - x))], mode="NanGuardMode"),
        "w": w,
        # an input the outputs do not use (allowed when the function was made)
        "unused": modecfg.function([x, unused], pt.log(x), on_unused_input="ignore", mode="NanGuardMode"),
    }


def _dump_of(call: Any, directory: Path, **flags: Any) -> str:
    overrides = {"NanGuardMode.dump_dir": str(directory), **flags}
    with modecfg.config.override(overrides), pytest.raises(modecfg.NanGuardError) as info:
        call()
    assert info.value.dump_path is not None
    return info.value.dump_path


def test_a_replay_compiles_and_runs_under_the_flags_the_dump_was_made_with(fns: dict, tmp_path: Path) -> None:
    # 1000 is "big" only under the threshold the failing call had; the replay happens without it
    path = _dump_of(lambda: fns["scaled"](np.ones(3)), tmp_path, NanGuardMode__big=100.0)
    assert modecfg.config.NanGuardMode.big == 1e10
    with pytest.raises(modecfg.NanGuardError) as again:
        modecfg.replay(path)
    assert again.value.bad.kind == "big"
    assert modecfg.config.NanGuardMode.big == 1e10  # and the flags are the caller's again after it


def test_a_replay_compiles_under_the_compile_flags_of_the_dump(tmp_path: Path) -> None:
    # without rewrites log(exp(x)) overflows at 1000; the default rewrites make it x
    x = pt.vector("x")
    with modecfg.config.override(optimizer="None"):
        fn = modecfg.function([x], pt.log(pt.exp(x)), mode="NanGuardMode")
    path = _dump_of(lambda: fn(np.array([1000.0])), tmp_path)
    assert modecfg.function([x], pt.log(pt.exp(x)), mode="NanGuardMode")(np.array([1000.0])) == [1000.0]
    with pytest.raises(modecfg.NanGuardError, match="Inf in Exp"):
        modecfg.replay(path)


def test_a_replay_asked_to_dump_checks_as_the_call_did_and_dumps(fns: dict, tmp_path: Path) -> None:
    path = _dump_of(lambda: fns["scaled"](np.ones(3)), tmp_path / "first", NanGuardMode__big=100.0)
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path / "again")}),
        pytest.raises(modecfg.NanGuardError) as again,
    ):
        modecfg.replay(path, dump=True)
    assert again.value.bad.kind == "big"
    assert again.value.dump_path is not None and Path(again.value.dump_path).parent == tmp_path / "again"


def test_a_nan_made_only_by_an_update_is_replayed(fns: dict, tmp_path: Path) -> None:
    fns["w"].set_value(np.full(3, 4.0))
    path = _dump_of(lambda: fns["update"](np.array([5.0, 1.0, 1.0])), tmp_path)
    np.testing.assert_array_equal(fns["w"].get_value(), np.full(3, 4.0))
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        modecfg.replay(path)


def test_a_replay_of_a_warned_call_starts_from_the_values_before_the_call(tmp_path: Path) -> None:
    # action=warn lets the call write its updates; the dump holds the values it started from
    w = pytensor.shared(np.array([-1.0, 1.0]), name="w")
    fn = modecfg.function([], pt.log(w), updates=[(w, w + 10.0)], mode="NanGuardMode")
    flags = {"NanGuardMode.dump_dir": str(tmp_path), "NanGuardMode.action": "warn"}
    with modecfg.config.override(flags), pytest.warns(modecfg.nanguard.mode.NanGuardWarning):
        fn()
    np.testing.assert_array_equal(w.get_value(), [9.0, 11.0])  # written, as asked
    (path,) = tmp_path.glob("nanguard-*.npz")
    assert modecfg.load_dump(path).shared["w"].tolist() == [-1.0, 1.0]
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        modecfg.replay(path)
    np.testing.assert_array_equal(w.get_value(), [9.0, 11.0])  # the replay runs on its own copy


def test_an_input_the_outputs_do_not_use_does_not_stop_a_replay(fns: dict, tmp_path: Path) -> None:
    path = _dump_of(lambda: fns["unused"](np.array([-1.0]), np.ones(2)), tmp_path)
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        modecfg.replay(path)


def test_a_replay_writes_no_dump_and_says_how_to_have_one(fns: dict, tmp_path: Path) -> None:
    path = _dump_of(lambda: fns["scaled"](np.ones(3)), tmp_path, NanGuardMode__big=100.0)
    with pytest.raises(modecfg.NanGuardError) as again:
        modecfg.replay(path)
    assert again.value.dump_path is None
    assert "no dump: a replay writes no dump (replay with dump=True, or --dump, to write one)" in str(
        again.value
    )


# -- versions --------------------------------------------------------------------------------------


def _with_versions(path: str, target: Path, versions: dict[str, str]) -> Path:
    data = json.loads(parts(path)[dump_module.DATA])
    data["versions"] = versions
    return rebuild(path, target, replace={dump_module.DATA: json.dumps(data).encode()})


@pytest.mark.parametrize("differ", [("pytensor",), ("numpy",), ("python",), ("pytensor", "python")])
def test_a_dump_written_under_other_versions_warns_naming_each_that_differs(
    fns: dict, tmp_path: Path, differ: tuple[str, ...]
) -> None:
    path = _dump_of(lambda: fns["scaled"](np.ones(3)), tmp_path, NanGuardMode__big=100.0)
    here = dump_module._versions()
    changed = _with_versions(path, tmp_path / "other.npz", {**here, **{k: "0.0.1" for k in differ}})
    with pytest.warns(DumpWarning) as said, pytest.raises(modecfg.NanGuardError):
        modecfg.replay(changed)
    named = ", ".join(f"{k} 0.0.1 (here {here[k]})" for k in differ)
    assert [str(w.message) for w in said] == [f"{changed} was written with {named}: the replay may differ"]


@pytest.mark.parametrize(
    "versions",
    [{}, {"numpy": "same"}, {"pytensor": "same", "numpy": "same", "python": "same"}],
    ids=["none recorded", "some recorded", "all the same"],
)
def test_a_dump_of_these_versions_or_of_none_recorded_replays_without_a_warning(
    fns: dict, tmp_path: Path, versions: dict[str, str]
) -> None:
    path = _dump_of(lambda: fns["scaled"](np.ones(3)), tmp_path, NanGuardMode__big=100.0)
    here = dump_module._versions()
    recorded = {k: here[k] for k in versions}
    changed = _with_versions(path, tmp_path / "same.npz", recorded)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DumpWarning)
        with pytest.raises(modecfg.NanGuardError):
            modecfg.replay(changed)


# -- a replay that cannot happen, or that no longer fails ----------------------------------------


def _legacy(path: Path, payload: dict[str, Any]) -> Path:
    """A dump in modecfg's older pickle format (what `replay --trust` still runs)."""
    body = pickle.dumps(payload)
    digest = hashlib.sha256(body).hexdigest().encode()
    path.write_bytes(b"MODECFG-NANGUARD-DUMP 2\nsha256:" + digest + b"\n" + body)
    return path


def _payload(inputs: list[Any], outputs: list[Any], values: list[Any]) -> dict[str, Any]:
    return {"inputs": inputs, "outputs": outputs, "n_outputs": len(outputs), "target_indices": [],
            "values": values, "flags": {}}  # fmt: skip


def test_a_call_that_no_longer_fails_returns_its_outputs(tmp_path: Path) -> None:
    x = pt.vector("x")
    dump = _legacy(tmp_path / "fine.pkl", _payload([x], [pt.log(x)], [np.array([1.0, np.e])]))
    (out,) = modecfg.replay(dump, trust=True)
    np.testing.assert_allclose(out, [0.0, 1.0])


def test_an_older_dump_replays_its_recorded_values_not_those_its_shared_variables_were_pickled_with(
    tmp_path: Path,
) -> None:
    # the older format pickled shared variables as they were (after a warned call's updates);
    # its list of values is the call's
    w = pytensor.shared(np.array([9.0, 11.0]), name="w")
    dump = _legacy(tmp_path / "old.pkl", _payload([w], [pt.log(w)], [np.array([-1.0, 1.0])]))
    with pytest.raises(modecfg.NanGuardError, match="NaN in Log"):
        modecfg.replay(dump, trust=True)
    np.testing.assert_array_equal(w.get_value(), [9.0, 11.0])  # the replay's w is the dump's own


def test_a_graph_that_does_not_compile_is_a_dump_error_naming_why(tmp_path: Path) -> None:
    x, y = pt.vector("x"), pt.vector("y")
    dump = _legacy(tmp_path / "missing.pkl", _payload([x], [pt.log(x + y)], [np.ones(2)]))
    with pytest.raises(DumpError) as info:
        modecfg.replay(dump, trust=True)
    assert str(info.value).startswith(f"{dump}: the dump cannot be replayed (MissingInputError: ")


def test_a_call_that_fails_for_another_reason_is_a_dump_error_naming_it(tmp_path: Path) -> None:
    x = pt.vector("x")
    dump = _legacy(tmp_path / "shape.pkl", _payload([x], [pt.log(x)], [np.ones((2, 2))]))
    with pytest.raises(DumpError) as info:
        modecfg.replay(dump, trust=True)
    assert str(info.value).startswith(f"{dump}: the dump's call fails otherwise (TypeError: ")
    assert isinstance(info.value.__cause__, TypeError)


def test_a_replay_runs_on_the_linker_the_call_ran_on_not_the_flags(tmp_path: Path) -> None:
    """Round five: a dump made under NanGuardMode(linker="cvm") while the linker flag said numba
    was replayed on numba. The dump records the linker the guard wrapped: the replay uses it."""
    from modecfg.nanguard import replaying
    from modecfg.nanguard.mode import NanGuardMode

    x = pt.vector("x")
    with modecfg.config.override(linker="py"):
        fn = modecfg.function([x], pt.log(x), mode=NanGuardMode(linker="cvm"))
        path = _dump_of(lambda: fn(np.array([-1.0])), tmp_path)
    assert modecfg.load_dump(path).linker == "cvm"
    seen: list[str] = []
    real = replaying.function

    def spying(*args: Any, **kwargs: Any) -> Any:
        seen.append(str(modecfg.config.linker))
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp, modecfg.config.override(linker="py"):
        mp.setattr(replaying, "function", spying)
        with pytest.raises(modecfg.NanGuardError) as again:
            modecfg.replay(path)
    assert seen == ["cvm"] and again.value.bad is not None
