"""A NaN-guard dump is data, never code: hostile pickles, hostile op state, hostile flags, hostile files.

Each test here ran code, read forever or imported a module before the restricted loader of
:mod:`modecfg.modes.safeload` (the adversarial review of issue 20 found the routes).
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.errors import DumpError, DumpWarning
from modecfg.modes import dump as dump_module
from modecfg.modes import safeload

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")


def _wrap(body: bytes) -> bytes:
    """``body`` behind a valid header and digest: only the loader's own checks stand in the way."""
    return dump_module.MAGIC + b"sha256:" + hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def _write(path: Path, body: bytes) -> Path:
    path.write_bytes(_wrap(body))
    return path


def _global(module: str, name: str, call: bool = False) -> bytes:
    """Protocol 4: push the global ``module.name`` (and call it with no arguments)."""
    return b"\x80\x04c" + module.encode() + b"\n" + name.encode() + b"\n" + (b")R" if call else b"") + b"."


@pytest.fixture(scope="module")
def dump_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real dump of a graph with a DimShuffle (C source), an Elemwise and a Composite."""
    directory = tmp_path_factory.mktemp("dumps")
    from pytensor.scalar.basic import Composite, float64, log
    from pytensor.tensor.elemwise import Elemwise

    a = float64("a")
    fused = Elemwise(Composite([a], [log(a) * 2 + 1]))  # as PyTensor's fusion writes it
    x = pt.matrix("x")
    fn = modecfg.function([x], fused(x.T).sum(), mode="NanGuardMode")
    with modecfg.config.override({"NanGuardMode.dump_dir": str(directory)}):
        with pytest.raises(modecfg.NanGuardError) as info:
            fn(-np.ones((2, 2)))
    return Path(info.value.dump_path)


def _payload(path: Path) -> dict[str, Any]:
    """The payload as pickle itself reads it (the test writes it, so it may use pickle)."""
    data = path.read_bytes()
    return pickle.loads(data[data.index(b"\n", len(dump_module.MAGIC)) + 1 :])


def _ops(payload: dict[str, Any]) -> list[Any]:
    from pytensor.graph.traversal import apply_ancestors

    return [node.op for node in apply_ancestors(payload["outputs"])]


def _pickled_with_state(path: Path, cls: type, edit: Any) -> bytes:
    """The dump's payload pickled with ``edit(state)`` as the state of every ``cls`` object:
    a state no PyTensor __getstate__ would write, as an attacker would."""

    class Pickler(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if not isinstance(obj, cls):
                return NotImplemented
            func, args, state, *rest = obj.__reduce_ex__(5)
            return (func, args, edit(state), *rest)

    buffer = io.BytesIO()
    Pickler(buffer, protocol=5).dump(_payload(path))
    return buffer.getvalue()


def _rewritten(path: Path, tmp: Path, edit: Any) -> Path:
    payload = _payload(path)
    edit(payload)
    return _write(tmp / "edited.pkl", pickle.dumps(payload, protocol=5))


# -- globals: decided on the object, never on the name ------------------------------------------


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("pytensor.tensor", "pytensor.utils.subprocess.Popen"),  # a dotted route through modules
        ("numpy", "lib.npyio.os.system"),
        ("pytensor.tensor.type", "np.load"),
        ("modecfg.modes.dump", "os.system"),
        ("pytensor.scalar.basic", "builtins.eval"),
        ("pytensor.link.c.op", "ExternalCOp"),  # reads C files named by its state
    ],
)
def test_a_global_reached_by_any_route_is_judged_by_the_object_it_reaches(
    tmp_path: Path, module: str, name: str
) -> None:
    path = _write(tmp_path / "d.pkl", _global(module, name, call=True))
    with pytest.raises(DumpError, match="refused"):
        dump_module.load_dump(path)


def _pairs() -> list[tuple[str, str]]:
    """Every (module, name) of numpy's, PyTensor's and modecfg's loaded modules, and the dotted
    names one step further through the modules and classes they hold."""
    pairs = []
    for module_name, module in sorted(sys.modules.items()):
        if not isinstance(module, ModuleType) or module_name.split(".")[0] not in (
            "numpy",
            "pytensor",
            "modecfg",
        ):
            continue
        for name, value in list(vars(module).items()):
            pairs.append((module_name, name))
            if isinstance(value, ModuleType | type):
                pairs += [(module_name, f"{name}.{inner}") for inner in list(vars(value))[:200]]
    return pairs


def test_no_name_of_numpy_pytensor_or_modecfg_reaches_an_object_outside_the_admitted_ones() -> None:
    import_before = set(sys.modules)
    objects = safeload.admitted()
    unpickler = safeload._Unpickler(b"", objects, True)
    pairs = _pairs()
    assert len(pairs) > 20_000  # the generator covers the three packages
    reached = 0
    for module, name in pairs:
        try:
            found = unpickler.find_class(module, name)
        except DumpError as exc:
            assert "refused" in str(exc)
            continue
        reached += 1
        assert objects.get(id(found)) is found, f"{module}.{name}"
    assert 0 < reached < len(pairs) // 4
    assert set(sys.modules) - import_before == set()  # naming a module imported nothing


def test_nothing_admitted_runs_programs_reads_files_or_calls_out() -> None:
    import builtins
    import importlib

    from pytensor.breakpoint import PdbBreakpoint
    from pytensor.compile.ops import FromFunctionOp
    from pytensor.link.c.op import ExternalCOp
    from pytensor.printing import Print

    objects = safeload.admitted().values()
    forbidden = [
        subprocess.Popen, os.system, builtins.eval, builtins.exec, builtins.getattr, builtins.__import__,
        importlib.import_module, np.load, np.memmap, np.fromfile, pickle.loads, Print, PdbBreakpoint,
        FromFunctionOp, ExternalCOp,
    ]  # fmt: skip
    assert [f for f in forbidden if any(f is o for o in objects)] == []


@pytest.mark.parametrize("module", ["modecfg.__main__", "numpy.f2py.__main__", "this", "antigravity"])
def test_naming_a_module_does_not_import_it(tmp_path: Path, module: str) -> None:
    """Importing ``modecfg.__main__`` runs the CLI (a SystemExit escaped replay); ``this`` prints."""
    path = _write(tmp_path / "d.pkl", _global(module, "x"))
    script = (
        "import sys, modecfg\n"
        "from modecfg.errors import DumpError\n"
        "try:\n"
        f"    modecfg.replay({str(path)!r})\n"
        "except DumpError as exc:\n"
        "    print('refused' if 'refused' in str(exc) else exc)\n"
        f"print({module!r} in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["refused", "False"]


# -- state: what a pickle gives an object is checked before the object sees it ----------------


def _shuffle_with_c_source() -> Any:
    from pytensor.link.c.op import ExternalCOp
    from pytensor.tensor.elemwise import DimShuffle

    if not issubclass(DimShuffle, ExternalCOp):
        pytest.skip("this PyTensor's DimShuffle carries no C source in its state")
    return DimShuffle


def test_c_source_in_a_dump_is_replaced_by_the_one_pytensor_ships(dump_file: Path, tmp_path: Path) -> None:
    DimShuffle = _shuffle_with_c_source()

    def inject(payload: dict[str, Any]) -> None:
        for op in _ops(payload):
            if isinstance(op, DimShuffle):
                op.code_sections = {k: 'system("touch pwned");' for k in op.code_sections}
                op.func_codes = ['system("touch pwned");']

    edited = _rewritten(dump_file, tmp_path, inject)
    shuffles = [op for op in _ops(dump_module.load_dump(edited)) if isinstance(op, DimShuffle)]
    assert shuffles
    for op in shuffles:
        assert "pwned" not in repr(op.code_sections) and "pwned" not in repr(op.func_codes)
        assert "cpu_dimshuffle" in op.code_sections["support_code_apply"]


def test_a_c_file_named_by_a_dump_is_not_read(dump_file: Path, tmp_path: Path) -> None:
    DimShuffle = _shuffle_with_c_source()

    evil = tmp_path / "evil.c"
    evil.write_text("#section support_code_apply\nint pwned;\n")

    def c_file_instead_of_source(state: dict[str, Any]) -> dict[str, Any]:
        """DimShuffle.__setstate__ reads and keeps the C file a state names when it has no source."""
        kept = {k: v for k, v in state.items() if k not in safeload._C_SOURCE}
        return {**kept, "c_func_file": str(evil)}

    path = _write(tmp_path / "d.pkl", _pickled_with_state(dump_file, DimShuffle, c_file_instead_of_source))
    with pytest.raises(DumpError, match=r"names C files for a DimShuffle \(c_func_file\): refused"):
        dump_module.load_dump(path)


def test_cached_code_pytensor_never_pickles_is_refused(dump_file: Path, tmp_path: Path) -> None:
    from pytensor.scalar.basic import Composite

    def with_c_code(state: dict[str, Any]) -> dict[str, Any]:  # PyTensor's __getstate__ drops it
        return {**state, "_c_code": 'system("touch pwned");'}

    path = _write(tmp_path / "d.pkl", _pickled_with_state(dump_file, Composite, with_c_code))
    with pytest.raises(DumpError, match=r"Composite state PyTensor never writes \(_c_code\): refused"):
        dump_module.load_dump(path)


def test_an_elemwise_naming_a_function_to_import_is_refused(dump_file: Path, tmp_path: Path) -> None:
    from pytensor.tensor.elemwise import Elemwise

    def name_os_system(payload: dict[str, Any]) -> None:
        for op in _ops(payload):
            if isinstance(op, Elemwise):
                op.nfunc_spec = ("os.system", 1, 1)  # PyTensor imports it by that name

    with pytest.raises(DumpError, match=r"run \('os\.system', 1, 1\).*refused"):
        dump_module.load_dump(_rewritten(dump_file, tmp_path, name_os_system))


_CALLED: list[str] = []  # what the hostile callables below did


def _hostile_print(op: Any, x: Any) -> None:
    """A Print's ``global_fn``: PyTensor calls it with the op and the value when the graph runs."""
    _CALLED.append("Print")


@pytensor.wrap_py(itypes=[pt.dvector], otypes=[pt.dvector])
def _hostile_fn(x: Any) -> Any:
    """A FromFunctionOp's function: called when the graph runs."""
    _CALLED.append("FromFunctionOp")
    return x


def _calling_out(kind: str) -> tuple[Any, Any]:
    """A graph whose running calls out through ``kind`` (an input and an output)."""
    from pytensor.breakpoint import PdbBreakpoint
    from pytensor.compile.builders import OpFromGraph
    from pytensor.printing import Print

    x = pt.dvector("x")
    if kind == "PdbBreakpoint":
        return x, PdbBreakpoint("stop")(pt.all(x > 0), x)[0]
    if kind == "FromFunctionOp":
        return x, _hostile_fn(x)
    printed = Print("hi", global_fn=_hostile_print)
    if kind == "Print":
        return x, printed(x)
    inner = pt.dvector("inner")  # "Print inside OpFromGraph": the op hides in an inner graph
    return x, OpFromGraph([inner], [printed(inner) * 2])(x)


@pytest.mark.parametrize("kind", ["Print", "PdbBreakpoint", "FromFunctionOp", "Print inside OpFromGraph"])
def test_ops_that_call_out_are_refused_and_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Print calls its ``global_fn``, PdbBreakpoint stops at the debugger, FromFunctionOp calls
    its function. Plain pickle and PyTensor do all three with the dump's graph; a replay, even a
    trusted one, refuses the op and nothing is called."""
    import pdb

    monkeypatch.setattr(pdb, "set_trace", lambda *a, **k: _CALLED.append("PdbBreakpoint"))
    for debugger in ("pudb", "ipdb"):  # PdbBreakpoint tries these first
        monkeypatch.setitem(sys.modules, debugger, None)
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # Print and PdbBreakpoint print
    x, out = _calling_out(kind)
    payload = {"inputs": [x], "outputs": [out], "values": [np.ones(2)], "n_outputs": 1,
               "target_indices": [], "flags": {}}  # fmt: skip
    body = pickle.dumps(payload, protocol=5)

    _CALLED.clear()  # the attack is real: what pickle gives back calls out when run
    loaded = pickle.loads(body)
    pytensor.function(loaded["inputs"], loaded["outputs"], mode="FAST_COMPILE")(*loaded["values"])
    assert _CALLED == [kind.split()[0]]

    _CALLED.clear()
    path = _write(tmp_path / "d.pkl", body)
    named = "load_back" if kind == "FromFunctionOp" else kind.split()[0]  # it pickles through its loader
    for trust in (False, True):
        with pytest.raises(DumpError, match=rf"{named}, which no NaN-guard dump holds: refused"):
            modecfg.replay(path, trust=trust)
    assert _CALLED == []


# -- flags and compilation: nothing reaches a compiler unless the user says so ----------------


def test_compiler_flags_in_a_dump_are_shown_not_applied(dump_file: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    def wrapper(payload: dict[str, Any]) -> None:
        payload["flags"]["gcc.cxxflags"] = f"-wrapper sh,-c,touch {marker}"
        payload["flags"]["profiling.destination"] = str(tmp_path / "written")
        payload["flags"]["on_opt_error"] = "pdb"

    edited = _rewritten(dump_file, tmp_path, wrapper)
    with pytest.warns(DumpWarning) as said, pytest.raises(modecfg.NanGuardError):
        modecfg.replay(edited)
    text = str(said[0].message)
    assert "gcc.cxxflags='-wrapper sh,-c,touch" in text and "reaches the C++ compiler" in text
    assert "profiling.destination" in text and "on_opt_error='pdb' (stops at the debugger)" in text
    assert "trust=True" in text
    assert not marker.exists()


def test_an_untrusted_replay_compiles_no_c_code(dump_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ops carry strings PyTensor pastes into C source (an Assert message): an untrusted
    dump's graph runs on Python implementations."""
    from pytensor.link.c import cmodule

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an untrusted dump's graph was compiled to C")

    monkeypatch.setattr(cmodule.ModuleCache, "module_from_key", refuse)
    # the suite's profiling.destination (tests/conftest.py) is in the dump: it reaches a path
    with (
        pytest.warns(DumpWarning, match=r"not applied from the dump: profiling\.destination"),
        pytest.raises(modecfg.NanGuardError, match="NaN in Composite"),
    ):
        modecfg.replay(dump_file)
    with pytest.raises(DumpError, match="compiled to C"):  # and trust=True does compile
        modecfg.replay(dump_file, trust=True)


# -- files: only regular files, read in bounded time ------------------------------------------


def _finishes(func: Any, seconds: float = 20) -> Any:
    result: list[Any] = []

    def run() -> None:
        try:
            func()
        except Exception as exc:
            result.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "still reading"
    return result[0] if result else None


def test_a_fifo_or_a_device_is_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    cases = (
        (fifo, "a FIFO (a named pipe)"),
        (Path("/dev/zero"), "a character device"),
        (tmp_path, "a directory"),
    )
    for path, kind in cases:
        error = _finishes(lambda p=path: dump_module.load_dump(p))
        assert isinstance(error, DumpError) and f"is {kind}, not a regular file" in str(error)


def test_an_rc_path_that_is_a_device_or_a_fifo_or_huge_is_an_rc_file_error(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.theanorc"
    with open(huge, "wb") as fh:
        fh.truncate(5 << 20)  # sparse: costs no disk
    cases = ((fifo, "is a FIFO"), (Path("/dev/zero"), "is a character device"), (huge, "is larger than"))
    for path, said in cases:
        error = _finishes(lambda p=path: modecfg.load(env={"THEANORC": str(p)}))
        assert isinstance(error, modecfg.RcFileError), error
        assert said in str(error) and "(named by THEANORC)" in str(error)


def test_modecfg_show_with_theanorc_at_dev_zero_says_so(tmp_path: Path) -> None:
    env = {**os.environ, "THEANORC": "/dev/zero", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "modecfg", "show"], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "/dev/zero" in done.stderr and "character device" in done.stderr


def test_the_warning_category_is_modecfgs() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert issubclass(DumpWarning, modecfg.ModecfgWarning)
