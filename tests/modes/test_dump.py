"""NaN-guard dumps under hostile conditions: where they go, what is read back, what is refused."""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import stat
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.errors import DumpError, DumpWarning
from modecfg.modes import dump as dump_module

# The suite's profiling.destination (tests/conftest.py) is in every dump; a replay does not apply it
_SUITE_FLAG = r"not applied from the dump: profiling\.destination"

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


@pytest.fixture(scope="module")
def model() -> dict[str, Any]:
    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    fn = modecfg.function([x], pt.log(x * w).sum(), updates=[(w, w + 1)], mode="NanGuardMode")
    return {"fn": fn, "w": w}


def _fail(model: dict[str, Any], directory: Path | str | None = None) -> modecfg.NanGuardError:
    flags = {} if directory is None else {"NanGuardMode.dump_dir": str(directory)}
    model["w"].set_value(np.ones(3))
    with modecfg.config.override(flags), pytest.raises(modecfg.NanGuardError) as info:
        model["fn"](np.array([-1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(model["w"].get_value(), np.ones(3))  # a dump never changes that
    return info.value


def _rewrite(path: str, payload: Any) -> None:
    """A dump with ``payload`` and a correct digest: only the structural checks stand in the way."""
    body = pickle.dumps(payload, protocol=5)
    digest = hashlib.sha256(body).hexdigest().encode()
    Path(path).write_bytes(dump_module.MAGIC + b"sha256:" + digest + b"\n" + body)


# -- where dumps go ------------------------------------------------------------------------


def test_the_default_directory_is_private_under_the_users_cache(
    model: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    error = _fail(model)
    directory = tmp_path / "cache" / "modecfg" / "nanguard"
    assert Path(error.dump_path).parent == directory
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_a_directory_others_may_write_is_refused_and_the_error_still_comes(
    model: dict, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    error = _fail(model, shared)
    assert error.dump_path is None
    assert "no dump:" in str(error) and "writable by group or others" in str(error)
    assert list(shared.iterdir()) == []


def test_a_directory_owned_by_another_user_is_refused(
    model: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "theirs"
    mine.mkdir(mode=0o700)
    monkeypatch.setattr(dump_module.os, "getuid", lambda: os.stat(mine).st_uid + 1)  # as if another user
    error = _fail(model, mine)
    assert error.dump_path is None and "belongs to another user" in str(error)


def test_a_symbolic_link_as_the_directory_is_refused(model: dict, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    error = _fail(model, link)
    assert error.dump_path is None and "not a plain directory" in str(error)


def test_a_dump_that_cannot_be_written_still_raises_the_guards_error(model: dict, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    error = _fail(model, blocker / "dumps")
    assert error.dump_path is None and "no dump: cannot create" in str(error)
    assert "NaN in Log" in str(error)


def test_temporary_files_of_killed_writers_are_removed(model: dict, tmp_path: Path) -> None:
    directory = tmp_path / "dumps"
    directory.mkdir(mode=0o700)
    dead = 2**22 + 12345  # above Linux's default pid_max: no process has it
    with pytest.raises(ProcessLookupError):
        os.kill(dead, 0)
    stale = directory / f".nanguard-{dead}-abc.tmp"
    stale.write_bytes(b"half a dump")
    ours = directory / f".nanguard-{os.getpid()}-abc.tmp"  # a writer of this process: alive
    ours.write_bytes(b"")
    _fail(model, directory)
    assert not stale.exists() and ours.exists()


def test_max_dumps_caps_the_dumps_of_a_process_and_the_error_says_so(model: dict, tmp_path: Path) -> None:
    with modecfg.config.override({"NanGuardMode.max_dumps": 2}):
        errors = [_fail(model, tmp_path) for _ in range(3)]
    assert [e.dump_path is not None for e in errors] == [True, True, False]
    assert "NanGuardMode.max_dumps=2 reached in this process" in str(errors[2])
    assert len(list(tmp_path.glob("nanguard-*.pkl"))) == 2


def test_replay_writes_no_new_dump_unless_asked(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    with modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}):
        with (
            pytest.warns(DumpWarning, match=_SUITE_FLAG),
            pytest.raises(modecfg.NanGuardError, match=r"no dump: NanGuardMode\.max_dumps is 0"),
        ):
            modecfg.replay(error.dump_path)
        assert len(list(tmp_path.glob("nanguard-*.pkl"))) == 1
        with pytest.warns(DumpWarning, match=_SUITE_FLAG), pytest.raises(modecfg.NanGuardError) as again:
            modecfg.replay(error.dump_path, dump=True)
    assert again.value.dump_path is not None
    assert len(list(tmp_path.glob("nanguard-*.pkl"))) == 2


# -- what is read back -------------------------------------------------------------------------


class _Payload:
    """A pickle that runs code when it is loaded (a file it creates proves it)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.marker}",))


def test_a_crafted_pickle_behind_a_valid_header_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    crafted = tmp_path / "crafted.pkl"
    _rewrite(str(crafted), {"inputs": _Payload(marker)})
    with pytest.raises(DumpError, match=r"asks for posix\.system.*refused"):
        modecfg.replay(crafted)
    assert not marker.exists()


@pytest.mark.parametrize(
    "global_name",
    ["builtins.eval", "builtins.getattr", "numpy.memmap", "pytensor.utils.call_subprocess_Popen",
     "pytensor.link.c.cmodule.ModuleCache", "subprocess.Popen", "numpy.load",
     # classes of the admitted PyTensor modules that call out when run
     "pytensor.printing.Print", "pytensor.breakpoint.PdbBreakpoint", "pytensor.compile.ops.FromFunctionOp",
     "pytensor.compile.ops.load_back", "pytensor.link.c.op.ExternalCOp"],
)  # fmt: skip
def test_the_unpickler_refuses_what_no_dump_holds(tmp_path: Path, global_name: str) -> None:
    """Each name exists and is loaded: the refusal is the allowlist's, not a failed lookup."""
    module, name = global_name.rsplit(".", 1)
    body = b"\x80\x04c" + module.encode() + b"\n" + name.encode() + b"\n."  # protocol 4, GLOBAL
    path = tmp_path / "d.pkl"
    Path(path).write_bytes(
        dump_module.MAGIC + b"sha256:" + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    )
    assert module in sys.modules and hasattr(sys.modules[module], name)
    refused = rf"asks for {re.escape(global_name)}, which no NaN-guard dump holds: refused"
    with pytest.raises(DumpError, match=refused):
        dump_module.load_dump(path)


def test_a_flipped_bit_is_caught_before_anything_is_unpickled(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    data = bytearray(Path(error.dump_path).read_bytes())
    data[-40] ^= 0x01
    Path(error.dump_path).write_bytes(bytes(data))
    with pytest.raises(DumpError, match="digest does not match"):
        modecfg.replay(error.dump_path)


@pytest.mark.parametrize(
    "edit",
    [
        lambda p: p.pop("values"),
        lambda p: p.update(values=p["values"][:-1]),
        lambda p: p.update(n_outputs=99),
        lambda p: p.update(target_indices=[42]),
        lambda p: p.update(inputs=["not a variable"]),
        lambda p: p.update(flags={"floatX": 32}),
        lambda p: p.update(outputs="abc"),
    ],
    ids=["no values", "a value short", "n_outputs", "target", "not variables", "flags", "outputs"],
)
def test_a_structurally_broken_dump_is_a_dump_error(model: dict, tmp_path: Path, edit: Any) -> None:
    error = _fail(model, tmp_path)
    payload = dump_module.load_dump(error.dump_path)
    edit(payload)
    _rewrite(error.dump_path, payload)
    with pytest.raises(DumpError, match="corrupted"):
        modecfg.replay(error.dump_path)


def test_a_dump_whose_values_do_not_fit_the_graph_is_a_dump_error(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    payload = dump_module.load_dump(error.dump_path)
    payload["values"] = [np.ones((2, 2, 2))] * len(payload["values"])
    _rewrite(error.dump_path, payload)
    with pytest.warns(DumpWarning, match=_SUITE_FLAG), pytest.raises(DumpError, match="cannot be replayed"):
        modecfg.replay(error.dump_path)


def test_a_truncated_dump_is_a_dump_error(model: dict, tmp_path: Path) -> None:
    error = _fail(model, tmp_path)
    data = Path(error.dump_path).read_bytes()
    Path(error.dump_path).write_bytes(data[: len(dump_module.MAGIC) + 10])
    with pytest.raises(DumpError, match="corrupted"):
        modecfg.replay(error.dump_path)
