"""The keys of ``compiledir_format``: PyTensor's, and two of modecfg's that partition a shared cache.

PyTensor fills ``%(hostname)s``, ``%(platform)s``, ``%(numpy_version)s`` and its other keys at
its import. modecfg adds two that a cache shared between machines or jobs needs, filled in when
the flag is read (PyTensor never sees them):

* ``%(cpu_features)s``: 12 hex digits of a hash of this CPU's model and feature flags
  (``/proc/cpuinfo``). PyTensor compiles C with ``-march=native``: a module built on one CPU
  may crash on another with fewer features, while hosts of one kind share their modules.
* ``%(job)s``: the batch job's id (``SLURM_JOB_ID``, ``PBS_JOBID``, ``LSB_JOBID``, ``JOB_ID``),
  else ``nojob``: a job's own cache, without naming a directory per job.

A key neither knows is refused when the flag is set (PyTensor's own import would fail on it).
"""

from __future__ import annotations

import os
import re

__all__ = ["OWN_KEYS", "PYTENSOR_KEYS", "check_compiledir_format", "cpu_features", "filled_when_read", "job"]

PYTENSOR_KEYS = (
    "platform",
    "short_platform",
    "processor",
    "python_version",
    "python_bitwidth",
    "python_int_bitwidth",
    "pytensor_version",
    "numpy_version",
    "gxx_version",
    "hostname",
)  # fmt: skip  (pytensor.configdefaults._compiledir_format_keys, 3.0-3.3)
OWN_KEYS = ("cpu_features", "job")
_KEY = r"%\(([^)]*)\)s"  # compiled at first use
_JOB_VARS = ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID")


def cpu_features(cpuinfo: str | None = None) -> str:
    """12 hex digits naming this CPU's model and feature flags (``cpuinfo``: the text of
    /proc/cpuinfo; where there is none, the machine and processor names)."""
    import hashlib  # here: platform compiles patterns when imported, and start-up compiles none
    import platform

    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            cpuinfo = ""
    wanted = {"vendor_id", "cpu family", "model", "flags", "features", "cpu implementer", "cpu part"}
    lines = sorted(
        {line.strip() for line in cpuinfo.splitlines() if line.split(":")[0].strip().lower() in wanted}
    )
    text = "\n".join(lines) or f"{platform.machine()} {platform.processor()}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def job(environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    for name in _JOB_VARS:
        value = env.get(name, "").strip()
        if value:
            return re.sub(r"[^A-Za-z0-9._-]+", "_", value)[:64]
    return "nojob"


def check_compiledir_format(value: str) -> str:
    """``value`` with modecfg's keys filled in; ValueError for a key nobody fills."""
    unknown = [key for key in re.findall(_KEY, value) if key not in PYTENSOR_KEYS + OWN_KEYS]
    if unknown:
        raise ValueError(
            f"%({unknown[0]})s is no key of compiledir_format: PyTensor fills "
            f"{', '.join(PYTENSOR_KEYS)}; modecfg fills {', '.join(OWN_KEYS)}"
        )
    if "%(cpu_features)s" in value:
        value = value.replace("%(cpu_features)s", cpu_features())
    if "%(job)s" in value:
        value = value.replace("%(job)s", job())
    return value


def filled_when_read(text: str) -> bool:
    """Whether ``text`` holds a key modecfg fills when the flag is read (``%(cpu_features)s``,
    ``%(job)s``): its value then is this host's, this job's (``modecfg migrate`` keeps the key)."""
    return any(f"%({key})s" in text for key in OWN_KEYS)
