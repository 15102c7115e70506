"""One definition of the user's line: an assignment's origin, a warning's location and a
NaN-guard error's location name the same line for the same statement (issue 22)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from modecfg._source import first_user_frame, is_library

# One statement of user code, one line long; the standard library (contextlib) calls back
# into it, so that every mechanism has to look past library frames to find it.
THE_LINE = (
    "    with contextlib.ExitStack() as s: "
    "s.callback(lambda: nan_check(modecfg.function([x], pt.log(x).sum(), mode='NanGuardMode'))); "
    "s.callback(lambda: pytensor.function([i], i * two)); "
    "s.callback(setattr, modecfg.config, 'exception_verbosity', 'high')"
)
PROGRAM = """\
import contextlib, json, warnings
import numpy as np
import modecfg, pytensor, pytensor.tensor as pt

modecfg.config.floatX = "float32"
modecfg.config.warn_float64 = "warn"
found = {}
x, i, two = pt.vector("x"), pt.ivector("i"), pt.constant(np.float32(2))

def nan_check(fn):
    try:
        fn(np.array([-1.0, 1.0], dtype="float32"))
    except modecfg.NanGuardError as exc:
        found["nan"] = exc

with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
{the_line}

origin = modecfg.config.origin("exception_verbosity")
f64 = [w for w in seen if issubclass(w.category, modecfg.Float64Warning)]
bad = found["nan"].bad.source
print(json.dumps({"origin": origin.line, "warning": [w.lineno for w in f64], "nan": bad.line,
                  "files": sorted({origin.source, bad.file, *(w.filename for w in f64)})}))
"""


def test_an_origin_a_warning_and_a_nan_error_name_the_same_user_line(tmp_path: Path) -> None:
    script = tmp_path / "user_code.py"
    program = PROGRAM.replace("{the_line}", THE_LINE)
    script.write_text(program)
    line = next(n for n, text in enumerate(program.splitlines(), 1) if "ExitStack() as s:" in text)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"origin": line, "warning": [line], "nan": line, "files": [str(script)]}


def test_first_user_frame_skips_library_frames_and_counts_them() -> None:
    frame, distance = first_user_frame(0)  # from this function on: it is user code
    assert frame is sys._getframe() and distance == 0
    assert is_library(json.__file__) and not is_library(__file__)


def test_a_node_of_the_users_own_op_is_named_by_the_line_applying_it_not_its_make_node() -> None:
    from types import SimpleNamespace

    import pytensor

    from modecfg._source import source_line

    here = str(Path(__file__).resolve())
    trace = [(pytensor.__file__, 1, "function", "..."), (here, 10, "model", "y = my_op(x)"),
             (here, 20, "make_node", "return Apply(self, [x], [x.type()])")]  # fmt: skip
    var = SimpleNamespace(tag=SimpleNamespace(trace=[trace]))
    assert source_line(var) == (here, 10, "y = my_op(x)")
    only_make_node = SimpleNamespace(tag=SimpleNamespace(trace=[trace[:1] + trace[2:]]))
    assert source_line(only_make_node) == (here, 20, "return Apply(self, [x], [x.type()])")
    helper = SimpleNamespace(tag=SimpleNamespace(trace=[[*trace[:2], (here, 30, "helper", "z = exp(x)")]]))
    assert source_line(helper) == (here, 30, "z = exp(x)")  # the innermost user frame, as before


def test_the_standard_librarys_directory_is_sysconfigs() -> None:
    import sysconfig

    from modecfg._source import _stdlib_dir, is_library

    assert _stdlib_dir() == sysconfig.get_paths()["stdlib"] + os.sep
    assert is_library(sysconfig.__file__) and is_library(os.__file__)


def test_without_a_file_for_os_the_standard_library_is_sysconfigs(monkeypatch: pytest.MonkeyPatch) -> None:
    import sysconfig

    from modecfg._source import _stdlib_dir

    expected = _stdlib_dir()
    monkeypatch.delattr(os, "__file__")
    _stdlib_dir.cache_clear()
    try:
        assert _stdlib_dir() == sysconfig.get_paths()["stdlib"] + os.sep == expected
    finally:
        _stdlib_dir.cache_clear()
