"""Run code in a fresh interpreter, as a user's process would start: no flag variables, no rc
files, and a home directory inside the repository's cache (nothing is written outside it)."""

from __future__ import annotations

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
    inherited = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    return os.pathsep.join([*map(str, first), str(ROOT), *inherited])


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
