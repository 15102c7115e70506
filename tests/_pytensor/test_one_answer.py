"""One configuration, one answer: every flag modecfg declares that this PyTensor has reads the
same through ``pytensor.config.X``, ``modecfg.config.X`` and ``config.explain(X)``, whichever
layer set it (a flag variable, an rc file, an assignment through ``pytensor.config``,
``change_flags``). Each layer in a fresh process, every flag set to a value other than its
default at once (issue 60: ``mode=CompareMode`` read ``Mode`` through PyTensor's door)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytensor")

from modecfg._pytensor.version import pytensor_version
from modecfg.configuration.flags import FLAGS, Flag
from modecfg.configuration.flagstring import format_flags

# values other than the default for the flags whose type says none (free text, worked-out defaults)
TEXT = {
    "optimizer_verbose_ignore": "local_useless_x",
    "optimizer_excluding": "fusion",
    "optimizer_including": "local_remove_all_assert",
    "optimizer_requiring": "",
    "gcc.cxxflags": "-O2",
    "DebugMode.check_c": False,
    "DebugMode.check_preallocated_output": "initial",
    "profiling.destination": "stdout",
    "vm.lazy": True,
}
# linkers a fresh process may lack, or that change what every compile in it does
NOT_PICKED = ("pytorch", "mlx", "jax", "per_graph", "numba")
# a default PyTensor works out itself: modecfg says None ("worked out"), PyTensor what it found
WORKED_OUT = {"blas.ldflags", "compiledir"}
# linker=per_graph is shown to PyTensor's own code as "auto" (its get_mode("FAST_RUN") path and
# runtime-mode cache take linker names without modecfg's linker table); Mode(linker="per_graph")
# works all the same
# The one flag PyTensor's door shows otherwise, on purpose: under floatX=float32 (or on a GPU),
# warn_float64=warn is modecfg's check of each compile (one warning per finding, with the line and
# the fix), and PyTensor is shown "ignore" so that it does not also warn at every float64
# variable made (view.Float64Param). Under floatX=float64, where modecfg checks nothing, "warn".
SHOWN_TO_PYTENSOR = {"warn_float64": ("warn", "ignore")}


def _other_value(spec: Flag) -> Any:
    if spec.name in TEXT:
        return TEXT[spec.name]
    choices = spec.choices()
    if choices:
        return next((c for c in choices if c != str(spec.default) and c not in NOT_PICKED), None)
    default = spec.default
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return default * 2 if default else 1.5
    return None


def _flags() -> dict[str, Any]:
    version = pytensor_version()
    chosen = {}
    for name, spec in FLAGS.items():
        if spec.pytensor and spec.in_pytensor(version) and not spec.fixed and name not in WORKED_OUT:
            value = _other_value(spec)
            if value is not None and name != "mode":
                chosen[name] = value
    chosen["mode"] = "CompareMode"  # the report's case: a mode PyTensor's own filter does not know
    return chosen


CHECK = """
import json, sys
import modecfg, pytensor
from modecfg.configuration.flags import FLAGS
flags = json.loads(sys.argv[1])
layer = sys.argv[2]

def answers():
    found = {}
    for name in flags:
        spec = FLAGS[name]
        through_pytensor = getattr(pytensor.config, spec.pytensor_name)
        explained = modecfg.config.explain(name).value
        found[name] = [str(through_pytensor), str(modecfg.config[name]), str(explained)]
    return found

if layer == "assignment":
    for name, value in flags.items():
        setattr(pytensor.config, FLAGS[name].pytensor_name, value)
    print(json.dumps(answers()))
elif layer == "override":
    with pytensor.config.change_flags(**{FLAGS[n].pytensor_name: v for n, v in flags.items()}):
        print(json.dumps(answers()))
else:
    print(json.dumps(answers()))
"""


@pytest.mark.parametrize("layer", ["env", "rc", "assignment", "override"])
def test_every_flag_reads_the_same_through_every_door(tmp_path: Path, layer: str) -> None:
    flags = _flags()
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env["HOME"] = str(tmp_path)
    if layer == "env":
        env["THEANO_FLAGS"] = format_flags(flags.items())
    elif layer == "rc":
        rc = tmp_path / ".theanorc"
        sections: dict[str, list[str]] = {}
        for name, value in flags.items():
            section, _, key = name.rpartition(".")
            sections.setdefault(section or "global", []).append(f"{key} = {value}")
        rc.write_text("".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in sections.items()))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHECK), json.dumps(flags), layer],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    differ = {name: doors for name, doors in found.items() if len(set(doors)) != 1}
    for name, (value, shown) in SHOWN_TO_PYTENSOR.items():
        if flags.get("floatX") == "float32" and flags.get(name) == value:
            assert differ.pop(name) == [shown, value, value]
    assert differ == {}, differ
    assert found["mode"] == ["CompareMode"] * 3
    assert len(found) > 50  # (every flag set, not a few)


def test_every_flag_of_the_installed_pytensor_is_readable_through_modecfg_config() -> None:
    """Issue 60: modecfg.config.gcc_version_str (a flag of PyTensor's that modecfg does not
    declare) was an AttributeError. Each such flag reads (and sets) PyTensor's own parameter."""
    import pytensor

    import modecfg
    from modecfg._pytensor import view

    for name in list(pytensor.config._config_var_dict):
        if name.replace("__", ".") not in WORKED_OUT and not (
            name == "linker" and modecfg.config.linker == "per_graph"
        ):
            assert str(getattr(modecfg.config, name)) == str(getattr(pytensor.config, name)), name
    through = view.view().through
    assert "gcc_version_str" in through and "floatX" not in through
