"""What this machine offers PyTensor: compiler, BLAS, backends, GPUs, usable linkers and devices.

``diagnose_machine()`` returns sections of (name, finding) rows; ``modecfg doctor`` prints
them. It runs the compiler and nvidia-smi with ``--version`` / ``-L`` only, and imports
numba and jax only to ask their versions and devices.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import metadata

from modecfg.config import config
from modecfg.linkers import best_linker, table

__all__ = ["diagnose_machine"]

Report = dict[str, list[tuple[str, str]]]


def _first_line(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot run {cmd[0]}: {exc}"
    text = (proc.stdout or proc.stderr).strip().splitlines()
    return text[0] if text else f"{cmd[0]} printed nothing"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _numpy_blas() -> str:
    import numpy as np

    try:
        info = np.show_config(mode="dicts")
        blas = info.get("Build Dependencies", {}).get("blas", {})
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception as exc:  # numpy's config format varies between versions
        return f"unknown ({exc})"


def _pytensor_blas() -> str:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTensor warns when it finds none: said below
            import pytensor

            flags = str(pytensor.config.blas__ldflags or "")
    except Exception as exc:  # PyTensor itself cannot start with this configuration
        return f"unknown: PyTensor fails to start here ({type(exc).__name__}: {exc})"
    if flags:
        return flags
    return "nothing: C code does matrix products through numpy (slower; conda's PyTensor links a BLAS)"


def _gpus() -> str:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "none visible (no nvidia-smi on PATH)"
    return _first_line([smi, "-L"])


def _integration() -> list[tuple[str, str]]:
    """Each point where modecfg meets PyTensor: on or off, and why (imports PyTensor)."""
    import warnings

    from modecfg._pytensor.patches import TESTED, status, version_problem

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what is off is listed here
            import pytensor  # noqa: F401  (loading it puts the integration points in)
    except Exception as exc:
        return [("PyTensor", f"fails to start with this configuration ({type(exc).__name__}: {exc})")]
    low, high = TESTED
    rows = [("PyTensor", version_problem() or f"{_version('pytensor')}, in the tested range "
             f">= {low[0]}.{low[1]}, < {high[0]}.{high[1]}")]  # fmt: skip
    for row in status():
        rows.append((row.patch.name, f"{row.state}: {row.patch.target} - {row.reason}"))
    return rows


def diagnose_machine() -> Report:
    from modecfg._pytensor.backends import gpu_devices
    from modecfg.modes.device import why_no_gpu

    cxx = str(config.cxx)
    report: Report = {}
    report["python"] = [("version", sys.version.split()[0]), ("executable", sys.executable)]
    report["C++ compiler"] = [
        ("cxx", f"{cxx or '(none)'}   (from {config.origin('cxx')})"),
        ("version", _first_line([cxx, "--version"]) if cxx else "-"),
    ]
    report["BLAS"] = [
        ("blas.ldflags", f"{config.blas.ldflags}   (None: PyTensor detects it)"),
        ("PyTensor links", _pytensor_blas()),
        ("numpy uses", _numpy_blas()),
    ]
    jax_devices = "-"
    if _version("jax") != "not installed":
        jax_devices = ", ".join(str(d) for d in gpu_devices()) or "no GPU (CPU-only jaxlib or no driver)"
    report["backends"] = [
        ("pytensor", _version("pytensor")),
        ("numpy", _version("numpy")),
        ("numba", _version("numba")),
        ("jax", _version("jax")),
        ("jax GPUs", jax_devices),
        ("torch", _version("torch")),
    ]
    report["GPUs"] = [("nvidia-smi", _gpus())]
    report["integration with PyTensor"] = _integration()
    report["linkers"] = [
        (row.name, "usable" if row.available else f"not usable: {row.why_not}") for row in table(cxx)
    ] + [("auto", f"means {best_linker(cxx)} here")]
    cuda = why_no_gpu("cuda")
    report["devices"] = [
        ("cpu", "usable"),
        ("cuda", "usable" if not cuda else f"not usable: {cuda}"),
        ("device flag", f"{config.device}   (from {config.origin('device')})"),
    ]
    return report
