"""What this machine offers PyTensor: compiler, BLAS, backends, GPUs, usable linkers and devices.

``verdict()`` is the one line a user acts on (and the problems and costs under it);
``diagnose_machine()`` returns sections of (name, finding) rows; ``modecfg doctor`` prints
both (every contact with PyTensor with ``--verbose``). It runs the compiler and nvidia-smi
with ``--version`` / ``-L`` only, and imports numba and jax only to ask their versions and
devices.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import metadata

from modecfg._record import Record
from modecfg.configuration import Config, config
from modecfg.errors import ModecfgError
from modecfg.linkers import resolve_linker, table

__all__ = ["Assessment", "assess", "diagnose_machine", "preflight", "verdict"]

INTEGRATION = "integration with PyTensor"

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

    from modecfg._pytensor.blas import ldflags

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTensor's own notes at its start-up: said below
            flags = ldflags()
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


def _integration(verbose: bool = True) -> list[tuple[str, str]]:
    """Each point where modecfg meets PyTensor: on or off, and why (imports PyTensor); not
    ``verbose``: how many are on, waiting and off, and those off (not because not needed)."""
    import warnings

    from modecfg._pytensor.load import load_pytensor as load
    from modecfg._pytensor.patches import TESTED, contacts, status, version_problem

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what is off is listed here
            load()  # loading PyTensor puts the integration points in
    except Exception as exc:
        return [("PyTensor", f"fails to start with this configuration ({type(exc).__name__}: {exc})")]
    low, high = TESTED
    rows = [("PyTensor", version_problem() or f"{_version('pytensor')}, in the tested range "
             f">= {low[0]}.{low[1]}, < {high[0]}.{high[1]}")]  # fmt: skip
    found = [*status(), *contacts()]
    if not verbose:
        counts = {state: sum(row.state == state for row in found) for state in ("on", "waiting", "off")}
        failed = sum(_failed(row.state, row.reason) for row in found)
        off = f"{counts['off'] - failed} off as not needed here" + (f", {failed} off" if failed else "")
        rows.append(("contacts", f"{counts['on']} on, {counts['waiting']} waiting until needed, "
                     f"{off} (modecfg doctor --verbose lists each)"))  # fmt: skip
        found = [row for row in found if _failed(row.state, row.reason)]
    for row in found:
        also = getattr(row.patch, "also", ())  # what else the patch changes, undone with it
        target = row.patch.target + (f" (also {'; '.join(also)})" if also else "")
        rows.append((row.patch.name, f"{row.state}: {target} - {row.reason}"))
    return rows


def _failed(state: str, reason: str) -> bool:
    """An integration point off for a reason other than not being needed here."""
    return state == "off" and not reason.startswith("not needed")


# What each matmul_precision costs and gains on a GPU: a 4096x4096 float32 product on an H200
# (bench/device_bench.py, 2026-11-28, JAX 0.11.2; the CPU computes float32 whatever the flag says).
PRECISION_COST = {
    "highest": "matmuls and convolutions through JAX in true float32 (an H200's 4096x4096 "
    "product: max relative error 2.9e-6 against float64, 3.1 ms); matmul_precision=default "
    "is ~5x faster there at 3.0e-4",
    "high": "matmuls through JAX at JAX's 'high' precision (TF32 inputs or three bfloat16 passes, "
    "XLA's choice; an H200's 4096x4096 product: 3.0e-4, 0.58 ms): faster than float32, less exact; "
    "matmul_precision=highest for true float32",
    "default": "matmuls through JAX at JAX's default, the backend's fastest (an H200's 4096x4096 "
    "product: max relative error 3.0e-4, 0.61 ms); matmul_precision=highest for true float32 "
    "(2.9e-6)",
}


def diagnose_machine(verbose: bool = True) -> Report:
    from modecfg.device.gpus import gpu_devices
    from modecfg.device.where import why_no_gpu

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
    report[INTEGRATION] = _integration(verbose)
    from modecfg.linkers import limit

    report["linkers"] = [
        (row.name, (f"partly usable: {limit(row.name)}" if limit(row.name) else "usable")
         if row.available else f"not usable: {row.why_not}")
        for row in table(cxx)
    ] + [("auto", f"PyTensor's default: {resolve_linker('auto', cxx)}"),
         ("per_graph", f"{_auto_rule()}; {_per_graph_advice()}")]  # fmt: skip
    cuda = why_no_gpu("cuda")
    report["devices"] = [
        ("cpu", "usable"),
        ("cuda", "usable" if not cuda else f"not usable: {cuda}"),
        ("device flag", f"{config.device}   (from {config.origin('device')})"),
        ("matmul_precision", f"{config.matmul_precision}   (from {config.origin('matmul_precision')}): "
         f"{PRECISION_COST[str(config.matmul_precision)]}"),
    ]  # fmt: skip
    from modecfg._files import others_can_write

    base = str(config.base_compiledir)
    unsafe = others_can_write(base)
    report["compile cache"] = [
        ("base_compiledir", f"{base}   (from {config.origin('base_compiledir')})"),
        ("who can write it", f"others too: {unsafe}: whoever writes it runs code in your process"
         if unsafe else "only you (and root)"),
    ]  # fmt: skip
    return report if verbose else _short(report)


def _short(report: Report) -> Report:
    """The report in under 30 lines (``modecfg doctor`` without ``--verbose``): a section's rows
    that say one thing joined on one line, the linkers by what they can do here."""
    rows = {section: dict(items) for section, items in report.items()}
    short: Report = dict(report)
    python = rows["python"]
    short["python"] = [("python", f"{python['version']} ({python['executable']})")]
    cxx = rows["C++ compiler"]
    short["C++ compiler"] = [("cxx", f"{cxx['cxx']}: {cxx['version']}")]
    blas = rows["BLAS"]
    short["BLAS"] = [("PyTensor links", blas["PyTensor links"]), ("numpy uses", blas["numpy uses"])]
    backends = rows["backends"]
    short["backends"] = [("versions", ", ".join(f"{k} {v}" for k, v in backends.items() if k != "jax GPUs")),
                         ("jax GPUs", backends["jax GPUs"])]  # fmt: skip
    linkers = report["linkers"]
    usable = [name for name, said in linkers if said == "usable"]
    partly = [f"{name} ({said.removeprefix('partly usable: ').split(':')[0]})" for name, said in linkers
              if said.startswith("partly usable")]  # fmt: skip
    not_usable = [name for name, said in linkers if said.startswith("not usable")]
    short["linkers"] = [
        ("usable", ", ".join(usable) or "none"),
        *([("partly usable", "; ".join(partly))] if partly else []),
        *([("not usable", ", ".join(not_usable) + " (modecfg linkers says why)")] if not_usable else []),
        ("auto", rows["linkers"]["auto"]),
    ]
    devices = rows["devices"]
    short["devices"] = [("cpu, cuda", f"{devices['cpu']}, {devices['cuda']}"),
                        ("device flag", devices["device flag"]),
                        ("matmul_precision", devices["matmul_precision"].split(":", 1)[0])]  # fmt: skip
    return short


class Assessment(Record):
    """What this configuration cannot do here (``problems``: fix them before it runs) and what it
    does otherwise than it says, or slower (``notes``): the one verdict ``modecfg doctor`` and
    ``modecfg validate`` both give."""

    problems: list[str]
    notes: list[str]
    running: str  # the linker and device it runs on, in words


def assess(cfg: Config, *, pytensor: bool = True) -> Assessment:
    """The verdict on ``cfg`` here: :func:`preflight`'s problems, PyTensor failing to start or
    outside the tested range, and the integration points off for a reason other than not being
    needed (``pytensor``: PyTensor is loaded to ask); notes: a compile cache shared between
    machines without a partition, a GPU device that falls back to the CPU, matrix products
    without BLAS."""
    problems = preflight(cfg)
    if pytensor:
        problems += _integration_problems()
    shared = shared_cache_warning(cfg)  # it runs here; another host may crash on its modules
    notes = [shared] if shared else []
    device = str(cfg.device)
    if device.startswith(("gpu", "cuda")) and not _strict_device(cfg):
        from modecfg.device.where import why_no_gpu

        why = why_no_gpu(device)
        if why:
            device += " (the CPU: no GPU here)"  # the verdict's own line says where graphs run
            notes.append(
                f"graphs run on the CPU, not the GPU device={cfg.device} asks for (from "
                f"{cfg.origin('device')}): {why}; force_device=True makes this an error"
            )
    try:
        linker = resolve_linker(str(cfg.linker), str(cfg.cxx))
    except ModecfgError:  # a linker this machine cannot run: one of the problems above
        linker = str(cfg.linker)
    if (
        _pytensor_blas().startswith("nothing")
        and linker.startswith(("cvm", "c|py", "c"))
        and not linker.startswith("cvm_")
    ):
        notes.append(
            f"no BLAS for PyTensor's C code: linker {linker} does matrix products through numpy (slower); "
            "apt install libopenblas-dev, then blas.ldflags=-lopenblas, or linker=per_graph (numba for them)"
        )
    running = (
        f"linker {cfg.linker}" + (f": {linker}" if linker != str(cfg.linker) else "") + f", device {device}"
    )
    return Assessment(problems, notes, running)


def _strict_device(cfg: Config) -> bool:
    """Whether a GPU device that cannot be had is an error (else: the CPU, said once)."""
    device = str(cfg.device)
    return (device.startswith("cuda") and not cfg.fallback_to_cpu) or (
        device.startswith("gpu") and bool(cfg.force_device)
    )


def _integration_problems() -> list[str]:
    """PyTensor failing to start or outside the tested range, and each integration point off for
    a reason other than not being needed here."""
    import warnings

    from modecfg._pytensor.load import load_pytensor as load
    from modecfg._pytensor.patches import contacts, status, version_problem

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what is off is said here
            load()
    except Exception as exc:
        return [f"PyTensor fails to start with this configuration ({type(exc).__name__}: {exc})"]
    problems = [f"PyTensor {version_problem()}"] if version_problem() else []
    for row in (*status(), *contacts()):
        if _failed(row.state, row.reason):
            problems.append(
                f"integration point {row.patch.name}: {row.state}: {row.patch.target} - {row.reason}"
            )
    return problems


def verdict(cfg: Config, report: Report | None = None) -> list[str]:
    """The first lines ``modecfg doctor`` prints: ready, or the problems to fix (each on a line of
    its own), then the notes (:func:`assess`: the same verdict as ``modecfg validate``, however
    much of ``report`` is shown)."""
    found = assess(cfg)
    if not found.problems:
        head = f"modecfg doctor: ready: this configuration runs here ({found.running})"
    else:
        count = f"{len(found.problems)} problem{'s' if len(found.problems) > 1 else ''}"
        head = f"modecfg doctor: {count} to fix before this configuration runs here ({found.running})"
    return [head, *(f"  problem: {p}" for p in found.problems), *(f"  note: {n}" for n in found.notes)]


def _library_missing(flags: str) -> list[str]:
    """The ``-lNAME`` words of linker flags that name no library here (``-L`` dirs searched first)."""
    import ctypes.util
    import glob
    import os
    import shlex

    try:
        words = shlex.split(flags)
    except ValueError:
        words = flags.split()
    dirs = [w[2:] for w in words if w.startswith("-L") and len(w) > 2]
    missing = []
    for word in words:
        if not word.startswith("-l") or len(word) <= 2:
            continue
        name = word[2:]
        in_dirs = any(glob.glob(os.path.join(d, f"lib{name}.*")) for d in dirs)
        if not in_dirs and ctypes.util.find_library(name) is None:
            missing.append(name)
    return missing


def _does_not_run(cxx: str) -> str:
    """Why ``cxx --version`` does not run ('' when it does)."""
    import subprocess

    try:
        proc = subprocess.run([cxx, "--version"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the C++ compiler {cxx} does not run ({exc})"
    if proc.returncode != 0:
        return f"the C++ compiler {cxx} does not run (`{cxx} --version` exited with {proc.returncode})"
    return ""


def _does_not_link(cxx: str, ldflags: str) -> str:
    """Why an empty C++ program does not link with ``ldflags`` ('' when it does).

    A success is remembered (keyed by the compiler, its modification time and the flags) in
    modecfg's cache directory, so validate stays quick; a failure is tried again each time.
    """
    import hashlib
    import os
    import shlex
    import subprocess
    import tempfile

    try:
        stamp = f"{cxx}\0{os.stat(cxx if os.sep in cxx else _which(cxx)).st_mtime_ns}\0{ldflags}"
    except OSError:
        stamp = f"{cxx}\0?\0{ldflags}"
    from modecfg._files import user_cache_dir

    marker = user_cache_dir("linktest", hashlib.sha256(stamp.encode()).hexdigest())
    if os.path.exists(marker):
        return ""
    try:
        words = shlex.split(ldflags)
    except ValueError:
        words = ldflags.split()
    with tempfile.TemporaryDirectory(prefix="modecfg-linktest-") as tmp:
        try:
            proc = subprocess.run(
                [cxx, "-x", "c++", "-", "-o", os.path.join(tmp, "a.out"), *words],
                input=b"int main() { return 0; }\n",
                capture_output=True,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"the link test could not run ({exc})"
    if proc.returncode != 0:
        said = proc.stderr.decode(errors="replace").strip().splitlines()
        linker = [line for line in said if "ld:" in line or "cannot find" in line]
        errors = [line for line in said if "error" in line]
        first = (linker or errors or said or [""])[0]
        return f"an empty program does not link with these flags ({first.strip()[:200]})"
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        open(marker, "w").close()
    except OSError:
        pass  # not remembered: tried again next time
    return ""


def _which(cxx: str) -> str:
    import shutil

    return shutil.which(cxx) or cxx


def preflight(cfg: Config) -> list[str]:
    """What this configuration asks of the machine that the machine cannot give, found now
    rather than at the first compile: the compiler, the linker, the mode's backend, the device,
    the BLAS libraries (present, and an empty program links with them), the compile directory
    and the NaN-guard dump directory (writable, private). Empty when all is there. Imports no
    PyTensor."""
    import os

    from modecfg._registry import linkers as registry
    from modecfg._registry.modes import find_mode
    from modecfg.device.where import why_no_gpu

    problems = []
    cxx = str(cfg.cxx)
    compiler_ok = False
    if cxx:
        why = registry.why_unavailable("cvm", cxx) or _does_not_run(cxx)
        if why:
            problems.append(f"cxx: {why} (from {cfg.origin('cxx')})")
        compiler_ok = not why
    if cfg.linker not in ("auto", "per_graph"):
        why = registry.why_unavailable(str(cfg.linker), cxx)
        if why:
            problems.append(f"linker={cfg.linker} (from {cfg.origin('linker')}): {why}")
    entry = find_mode(str(cfg.mode))
    if entry is not None and entry.linker:  # CVM, C, NUMBA, JAX: the linker the entry names
        why = registry.why_unavailable(entry.linker, cxx)
        if why:
            problems.append(f"mode={cfg.mode} (from {cfg.origin('mode')}): {why}")
    device = str(cfg.device)
    if _strict_device(cfg):
        why = why_no_gpu(device)
        if why:
            problems.append(f"device={device} (from {cfg.origin('device')}): {why}")
    ldflags = cfg.blas.ldflags
    if ldflags:
        missing = _library_missing(str(ldflags))
        for name in missing:
            problems.append(
                f"blas.ldflags (from {cfg.origin('blas.ldflags')}): -l{name} names no library on this "
                f"machine (no lib{name}.so; Debian/Ubuntu: apt install lib{name}-dev), so PyTensor's C "
                "code would fail to link"
            )
        why = "" if missing or not compiler_ok else _does_not_link(cxx, str(ldflags))
        if why:
            problems.append(f"blas.ldflags={ldflags} (from {cfg.origin('blas.ldflags')}): {why}")
    from modecfg._files import directory_problem
    from modecfg.nanguard.dump import dump_directory

    dumps = dump_directory(cfg)
    why = directory_problem(dumps)
    if why:
        problems.append(f"NaN-guard dumps would go to {dumps} (NanGuardMode.dump_dir, from "
                        f"{cfg.origin('NanGuardMode.dump_dir')}): {why}")  # fmt: skip
    from modecfg.signing import key_problem

    why = key_problem()
    if why:
        problems.append(f"dump key: {why}; NaN-guard dumps would be written unsigned, and replaying "
                        "your own would need --trust")  # fmt: skip
    base = os.path.abspath(str(cfg.base_compiledir))
    from modecfg._files import unsafe_cache

    unsafe = unsafe_cache(base, cfg.origin("base_compiledir"))
    if unsafe:
        problems.append(unsafe)
    from modecfg._files import creatable

    why = (
        creatable(base)
        if not os.path.exists(base)
        else (
            "" if os.path.isdir(base) and os.access(base, os.W_OK | os.X_OK) else f"{base} cannot be written"
        )
    )
    if why:
        problems.append(
            f"base_compiledir={base} (from {cfg.origin('base_compiledir')}): {why}, so PyTensor cannot "
            "keep its compiled code there"
        )
    return problems


def _per_graph_advice() -> str:
    """Whether linker=per_graph would help here: where cvm runs (a C++ compiler), small graphs
    pay numba's per-call overhead under linker=auto (measured: docs/modes.md, bench/workloads.py)."""
    from modecfg.linkers import why_unavailable

    if why_unavailable("cvm") or why_unavailable("numba"):
        return "it would choose the one linker this machine runs: nothing to gain"
    return (
        "recommended here for training loops of small and mid-sized graphs (cvm's per-call overhead "
        "is the lowest; numba keeps scans and, without BLAS, matrix products): linker=per_graph"
    )


def _auto_rule() -> str:
    try:
        from modecfg.linkers.auto import rule_here

        return rule_here()
    except Exception as exc:  # doctor reports; it does not fail
        return f"cannot say ({type(exc).__name__}: {exc})"


def shared_cache_warning(cfg: Config) -> str:
    """Why the compile cache, on a filesystem other hosts see, should be partitioned ('' when it
    is not shared, or is partitioned by host or CPU already)."""
    from modecfg._files import shared_filesystem

    if cfg.compiledir is not None:
        return ""  # a directory named outright: the user chose what shares it
    kind = shared_filesystem(str(cfg.base_compiledir))
    layers = cfg.layers("compiledir_format")
    raw = str(layers[-1].raw) if layers else str(cfg.compiledir_format)  # as written: keys unfilled
    if not kind or "%(hostname)s" in raw or "%(cpu_features)s" in raw:
        return ""
    return (
        f"base_compiledir={cfg.base_compiledir} is on {kind}, which other hosts share, and "
        f"compiledir_format={raw} ({cfg.origin('compiledir_format')}) gives every host the same "
        "directory: PyTensor builds C modules for the CPU it runs on (-march=native), and one built on "
        "a newer CPU can crash an older one. Add %(cpu_features)s (one directory per kind of CPU) or "
        "%(hostname)s (per host) to compiledir_format, or %(job)s for one per batch job"
    )
