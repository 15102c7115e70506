"""Run code in a fresh interpreter, as a user's process would start: no flag variables, no rc
files, and a home directory inside the repository's cache (nothing is written outside it)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def pythonpath(*first: Path | str) -> str:
    """A child's ``PYTHONPATH``: ``first``, this checkout, then the parent's own entries, so that
    packages installed by path (``pip install --target``, a site on ``PYTHONPATH``) still import."""
    inherited = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e and e != str(ROOT)]
    return os.pathsep.join([*map(str, first), str(ROOT), *inherited])


def installed_module(root: Path, name: str, text: str) -> Any:
    """A module made of ``text`` in a ``site-packages`` folder under ``root``, imported: an
    installed package's code (PyMC's, a sampler's) as modecfg tells it from the user's."""
    import importlib.util

    path = root / "env" / "lib" / "site-packages" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_json(code: str, env: dict[str, str] | None = None, timeout: float = 300) -> dict[str, Any]:
    """Run ``code`` (dedented) with ``env`` added; it prints one JSON object as its last line.

    The result has the subprocess's stderr under ``"stderr"``. A non-zero exit fails the test.
    """
    full_env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    full_env["MODECFGRC"] = ""
    full_env["PYTHONPATH"] = pythonpath()
    full_env["HOME"] = str(ROOT / ".cache" / "home")  # ~/.pytensor, ~/.cache: the repository's cache
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stderr"] = proc.stderr
    return result


_PYTORCH_PROBE = """
import json, numpy as np, pytensor, pytensor.tensor as pt
from pytensor.compile.mode import Mode
x, y = pt.matrix("x"), pt.vector("y")
w = pytensor.shared(np.zeros(3), name="w")
p_1 = 1 / (1 + pt.exp(-pt.dot(x, w)))
cost = (-y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)).mean()
try:
    f = pytensor.function([x, y], [p_1 > 0.5, cost], updates=[(w, w - 0.1 * pytensor.grad(cost, w))],
                          mode=Mode(linker="pytorch", optimizer="fast_run"))
    f(np.ones((4, 3)), np.ones(4))
    failure = None
except Exception as exc:
    failure = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
print(json.dumps({"failure": failure}))
"""


@functools.cache
def plain_pytorch_failure() -> str | None:
    """How PyTensor's own PyTorch linker fails on the tutorial's graph in a process that never
    imports modecfg (``"TypeError: 'bool' object is not subscriptable"`` with PyTensor 3.3.8 and
    torch 2.11-2.14), or None where it runs: the reference a modecfg run of it is held to."""
    return run_json(_PYTORCH_PROBE, timeout=600)["failure"]  # type: ignore[no-any-return]


def failure_of(exc: BaseException) -> str:
    """An exception as :func:`plain_pytorch_failure` words it (PyTensor's notes left out)."""
    return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
