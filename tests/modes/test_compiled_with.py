"""A compiled function remembers the configuration it was compiled with (issue 21, part 5)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import modecfg
from modecfg.nanguard import dump_reading

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

_HERE = __file__


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(Path(_HERE).read_text().splitlines(), 1) if text in line)


def test_each_thread_s_function_remembers_its_own_override() -> None:
    results: dict[str, list[Any]] = {"float32": [], "float64": []}

    def work(dtype: str) -> None:
        for _ in range(5):
            with modecfg.config.override(floatX=dtype, exception_verbosity="high"):  # the thread's line
                x = pt.vector()
                fn = pytensor.function([x], x * 2)
            results[dtype].append((fn, x.dtype))

    threads = [threading.Thread(target=work, args=(d,)) for d in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    line = _line_of("# the thread's line")
    for dtype, found in results.items():
        assert len(found) == 5
        for fn, built in found:
            record = modecfg.compiled_with(fn)
            assert built == dtype and record["floatX"] == (dtype, f"override at {_HERE}:{line}")
            assert record["exception_verbosity"][0] == "high"
            assert record["mode"][1] == "default"
    assert modecfg.config.floatX == "float64"  # nothing leaked out of the threads


def test_the_record_reads_as_text_and_survives_pickling_without_modecfg(tmp_path: Path) -> None:
    with modecfg.config.override(floatX="float32"):
        x = pt.vector("x")
        fn = pytensor.function([x], x + 1)
    text = str(modecfg.compiled_with(fn))
    assert text.startswith("compiled with:") and "floatX" in text and "'float32'" in text
    assert modecfg.compiled_with(pickle.loads(pickle.dumps(fn)))["floatX"][0] == "float32"
    path = tmp_path / "fn.pkl"
    path.write_bytes(pickle.dumps(fn))
    code = f"""
        import pickle, sys
        sys.modules["modecfg"] = None  # modecfg cannot be imported here
        fn = pickle.loads(open({str(path)!r}, "rb").read())
        record = fn.maker.fgraph.modecfg_config
        assert type(record) is dict and record["floatX"][0] == "float32", record
        plain = (bool, int, float, str, type(None))
        assert all(type(v) in plain and type(o) is str for v, o in record.values()), record
        print(fn([1.0, 2.0]))
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
    )
    assert done.returncode == 0, done.stderr
    assert "[2. 3.]" in done.stdout


def test_a_function_compiled_before_modecfg_recorded_anything_says_so() -> None:
    assert dict(modecfg.compiled_with(object())) == {}
    assert "compiled before modecfg" in str(modecfg.compiled_with(object()))


def test_the_profile_header_names_the_configuration_the_function_was_compiled_with() -> None:
    from modecfg.profiles.rows import ProfileReport

    with modecfg.config.override(exception_verbosity="medium"):
        x = pt.vector("x")
        fn = pytensor.function([x], pt.exp(x).sum(), profile=True)
    fn(np.ones(3))
    report = ProfileReport.from_stats(fn.profile)
    assert ("exception_verbosity", "'medium'") == report.config[
        [c[0] for c in report.config].index("exception_verbosity")
    ][:2]
    header = report.text().splitlines()[:4]
    assert any(
        line.startswith("  compiled with ") and "exception_verbosity='medium' (override at" in line
        for line in header
    )


def test_a_nan_guard_dump_keeps_the_flags_of_the_compile_not_of_the_call(tmp_path: Path) -> None:
    with modecfg.config.override(exception_verbosity="high"):  # the compile's line
        x = pt.vector("x")
        fn = modecfg.function([x], pt.log(x).sum(), mode="NanGuardMode")
    with (
        modecfg.config.override({"NanGuardMode.dump_dir": str(tmp_path)}),
        pytest.raises(modecfg.NanGuardError) as info,
    ):
        fn(np.array([-1.0, 1.0]))
    dump = dump_reading.load_dump(info.value.dump_path)
    assert dump.flags["exception_verbosity"] == "high"  # the call ran outside that override
    line = _line_of("# the compile's line")
    assert dump.origins["exception_verbosity"] == f"override at {_HERE}:{line}"
    assert "NanGuardMode.dump_dir" not in dump.flags  # set for the call, not the compile
