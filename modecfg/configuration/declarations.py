"""Every flag modecfg declares, once: one :func:`~modecfg.configuration.flags.flag` call each, grouped
as PyTensor's ``configdefaults.py`` groups them (modecfg's own come last), with the checks some
of them run. Imported by :mod:`modecfg.configuration.flags` at its end: ``FLAGS`` is whole once it is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modecfg._registry.linkers import canonical_linker, detect_cxx, linker_names, pytensor_linker_names
from modecfg._registry.modes import canonical_mode, mode_names, pytensor_mode_names
from modecfg.configuration.flags import Lazy, OneOf, Range, flag

if TYPE_CHECKING:
    from modecfg.configuration.protocol import ConfigLike


# --- value helpers -----------------------------------------------------------------


def _mode_names() -> Sequence[str]:
    return mode_names()


def _pytensor_has_mode(value: Any) -> bool:
    return value in pytensor_mode_names()


def _pytensor_has_linker(value: Any) -> bool:
    return value in pytensor_linker_names()


def _not_none(value: Any) -> bool:
    return value is not None


# The checks of three flags, imported when a value of theirs is first checked: few programs set
# them, and each module imported costs every program's start-up.


def check_compiledir_format(text: str) -> str:
    from modecfg.configuration.partition import check_compiledir_format as check

    return check(text)


def check_size(text: str) -> str:
    from modecfg.configuration.units import check_size as check

    return check(text)


def check_duration(text: str) -> str:
    from modecfg.configuration.units import check_duration as check

    return check(text)


def _check_mode(value: str) -> str:
    return canonical_mode(value)


def _is_mode_object(value: Any) -> bool:
    """A PyTensor Mode (or anything built like one): PyTensor's compiles scope ``mode`` to one.

    Asked of the class (or the instance dict), not the instance: ``Mode.optimizer`` is a property
    that builds the optimizer, 8 ms a compile when ``hasattr`` called it."""
    if isinstance(value, str):
        return False
    own = getattr(value, "__dict__", {})
    return all(hasattr(type(value), name) or name in own for name in ("linker", "optimizer"))


def _linker_names() -> Sequence[str]:
    return linker_names()


def _check_linker(value: str) -> str:
    return canonical_linker(value)


# Patterns are compiled on first use (re keeps them): compiling at import costs start-up.
_DEVICE = r"(cpu|cuda\d*|gpu\d*)"


def _check_device(value: str) -> str:
    value = value.strip()
    if re.fullmatch(_DEVICE, value):
        return value
    if value.startswith("opencl"):
        raise ValueError(
            f"{value!r}: OpenCL devices belonged to Theano's libgpuarray backend, which is gone; "
            "use cpu, cuda or cudaN"
        )
    raise ValueError(f"{value!r} is not a device; use cpu, cuda or cudaN (N = 0, 1, ...), or gpu / gpuN")


_PREALLOC = frozenset(
    ["initial", "previous", "c_contiguous", "f_contiguous", "strided", "wrong_size", "ALL", ""]
)


def _check_prealloc(value: str) -> str:
    bad = [p for p in value.split(":") if p not in _PREALLOC]
    if bad:
        valid = ", ".join(sorted(p for p in _PREALLOC if p))
        raise ValueError(f"{':'.join(bad)!r} is not valid here; use ':'-separated items of {valid}")
    return value


def _finite(value: float) -> float:
    import math

    if not math.isfinite(value):
        raise ValueError(
            f"{value!r} is not finite; use a positive finite number, or NanGuardMode.big_is_error=False "
            "to turn the big check off (NaN and Inf are still caught)"
        )
    return value


def _expand_path(value: Path) -> Path:
    """``~`` and ``~user`` expanded; a ``~name`` that names no user (or no home) is a bad value."""
    try:
        return value.expanduser()
    except RuntimeError:  # pathlib: "Could not determine home directory."
        raise ValueError(f"{str(value)!r} starts with ~ and names no user or home directory here") from None


def _default_cxx(cfg: ConfigLike) -> str:
    return detect_cxx()


_COMPILEDIR_FORMAT = "compiledir_%(short_platform)s-%(processor)s-%(python_version)s-%(python_bitwidth)s"

# --- the flags -----------------------------------------------------------------------
# Grouped as PyTensor's configdefaults.py groups them; modecfg's own flags come last.

Level = OneOf("ignore", "warn", "raise", "pdb")

# One declaration per statement reads as a table: the formatter leaves it alone.
# fmt: off

flag("floatX", OneOf("float64", "float32", "float16"), "float64",
     "Default floating-point dtype of Python floats, numpy scalars and new tensors. "
     "float32 for GPUs; float16 is experimental.", pytensor=True)
flag("warn_float64", Level, "ignore",
     "What to do when float64 enters a float32 graph: PyTensor's own check as each float64 tensor "
     "is created (as in plain PyTensor), then modecfg's check of each compile under "
     "floatX=float32 (or on a GPU), which names the operation, the reason, the user's line and "
     "the fix.", pytensor=True)
flag("cast_policy", OneOf("custom", "numpy+floatX"), "custom",
     "Rules for implicit type casting.", pytensor=True)
flag("print_global_stats", bool, False,
     "Print global statistics (time spent) at exit.", pytensor=True)
flag("unpickle_function", bool, True,
     "Unpickle compiled functions (False replaces them with None).", pytensor=True)

flag("mode", str, "Mode",
     "Default compile mode: an optimizer and a linker (see `modecfg modes`). 'Mode', PyTensor's "
     "default, is the optimizer and linker flags as they are (FAST_RUN's rewrites by default).",
     pytensor=True, choices_from=_mode_names, check=_check_mode, objects=_is_mode_object,
     pytensor_takes=_pytensor_has_mode)
flag("linker", str, "auto",
     "Linker of the default mode (see `modecfg linkers`). 'auto' is PyTensor's: numba. "
     "'per_graph' is modecfg's choice for each graph, by a rule that looks at the graph and the "
     "machine (`modecfg linkers` says what it does here; the rule: modecfg/linkers/auto.py). "
     "Any other value pins that linker.",
     pytensor=True, choices_from=_linker_names, check=_check_linker, pytensor_takes=_pytensor_has_linker)
flag("allow_gc", bool, True,
     "Free intermediate results during a call: less memory, more allocation.", pytensor=True)
flag("optimizer", OneOf("o4", "o3", "o2", "o1", "unsafe", "fast_run", "fast_compile", "merge", "None"),
     "o4", "Graph rewrites of the default mode; 'None' disables them.", pytensor=True)
flag("optimizer_verbose", bool, False, "Print every rewrite that is applied.", pytensor=True)
flag("optimizer_verbose_ignore", str, "",
     "Comma-separated rewrite names not printed by optimizer_verbose.", pytensor=True)
flag("compiler_verbose", bool, False, "Print information about compilation steps.", pytensor=True)
flag("on_opt_error", OneOf("warn", "raise", "pdb", "ignore"), "warn",
     "What to do when a rewrite crashes.", pytensor=True)
flag("on_unused_input", OneOf("raise", "warn", "ignore"), "raise",
     "What to do when an input of a function is not used by its outputs.", pytensor=True)
flag("optimizer_excluding", str, "", "':'-separated rewrite tags to leave out.", pytensor=True)
flag("optimizer_including", str, "", "':'-separated rewrite tags to add.", pytensor=True)
flag("optimizer_requiring", str, "", "':'-separated rewrite tags to require.", pytensor=True)
flag("optdb.position_cutoff", float, float("inf"),
     "Stop graph rewriting at this position of the rewrite database.", pytensor=True)
flag("optdb.max_use_ratio", float, 8.0,
     "Bound on rewrite applications per node, against infinite loops.", pytensor=True)
flag("cycle_detection", OneOf("regular", "fast"), "regular",
     "'fast' allows fewer in-place operations but compiles faster.", pytensor=True)
flag("check_stack_trace", OneOf("off", "log", "warn", "raise"), "off",
     "Check that rewrites keep the user's stack trace on new variables.", pytensor=True)

flag("cxx", str, Lazy(_default_cxx, "g++ found on PATH, else ''"),
     "The C++ compiler; empty disables C code (Python and numba linkers only).",
     pytensor=True, fixed=True, reaches="the C++ compiler")
flag("gcc.cxxflags", str, "", "Extra flags for the C++ compiler.", pytensor=True,
     reaches="the C++ compiler")
flag("nocleanup", bool, False, "Keep the files of C code that failed to compile.", pytensor=True)
flag("cmodule.warn_no_version", bool, False,
     "Warn when an Op's C code cannot be cached (no c_code_cache_version).", pytensor=True)
flag("cmodule.remove_gxx_opt", bool, False,
     "Compile C code without -O (for gdb).", pytensor=True, reaches="the C++ compiler")
flag("cmodule.compilation_warning", bool, False, "Print C compiler warnings.", pytensor=True)
flag("cmodule.preload_cache", bool, False,
     "Load the whole C module cache at import.", pytensor=True, fixed=True)
flag("cmodule.age_thresh_use", int, 60 * 60 * 24 * 24,
     "Seconds after which a cached C module is not reused.", pytensor=True, fixed=True,
     range=Range(ge=0))
flag("cmodule.debug", bool, False, "Define DEBUG in generated C code.", pytensor=True,
     reaches="the C++ compiler")
flag("compile.wait", int, 5,
     "Seconds a compile waits for the compile lock before saying, once, who holds it (pid, command, "
     "host, since when); it goes on waiting until compile.timeout.",
     pytensor=True, fixed=True, range=Range(gt=0))
flag("compile.timeout", int, Lazy(lambda cfg: cfg["compile.wait"] * 24, "24 x compile.wait"),
     "Seconds a compile waits for the compile lock before giving up with a CacheLockTimeout that "
     "names the holder (0: one try). A holder that dies lets go of the lock (the kernel frees it): "
     "no lock is taken over by force.",
     pytensor=True, fixed=True, range=Range(ge=0))
flag("blas.ldflags", str | None, None,
     "Linker flags of the BLAS library (-L/-l words). None: PyTensor detects it; "
     "'' : no BLAS library, numpy does the products.", pytensor=True, fixed=True, reaches="the linker",
     pytensor_takes=_not_none)
flag("blas.check_openmp", bool, True,
     "Check for conflicting OpenMP runtimes in BLAS.", pytensor=True)
flag("compiledir_format", str, _COMPILEDIR_FORMAT,
     "Name of the platform-specific directory under base_compiledir. %(key)s placeholders: "
     "PyTensor's (platform, short_platform, processor, python_version, hostname, ...) and modecfg's "
     "%(cpu_features)s (a hash of this CPU's model and feature flags: one directory per kind of "
     "CPU, since C modules are built with -march=native) and %(job)s (the batch job's id: "
     "SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, JOB_ID; else nojob).",
     pytensor=True, fixed=True, reaches="a path", check=check_compiledir_format)
flag("base_compiledir", Path, Lazy(lambda cfg: Path("~/.pytensor").expanduser(), "~/.pytensor"),
     "Root directory of compiled modules.", pytensor=True, fixed=True, check=_expand_path,
     reaches="a path")
flag("compiledir", Path | None, None,
     "Directory of compiled modules. None: base_compiledir/compiledir_format.",
     pytensor=True, fixed=True, reaches="a path", pytensor_takes=_not_none)
flag("generated_src_dir", str, "",
     "Directory for the generated Python source of compiled functions; empty: one file per "
     "function in the temp directory, never removed.", pytensor=True, pytensor_since=(3, 3),
     reaches="a path")

flag("tensor.cmp_sloppy", int, 0, "Relax float comparisons in tests: 0, 1 or 2.",
     pytensor=True, fixed=True, range=Range(ge=0, le=2))
flag("tensor.insert_inplace_optimizer_validate_nb", int, -1,
     "Validation batch of the in-place rewrite; -1: automatic.", pytensor=True)
flag("lib.amdlibm", bool, False, "Use AMD's libm.", pytensor=True, reaches="the linker")

flag("traceback.limit", int, 8,
     "Stack frames kept where each variable is created (-1: all); used to name the "
     "user's line in errors.", pytensor=True)
flag("traceback.compile_limit", int, 0,
     "Stack frames kept during compilation (-1: all).", pytensor=True)

flag("warn.ignore_bug_before", OneOf(
    "None", "all", "0.3", "0.4", "0.4.1", "0.5", "0.6", "0.7", "0.8", "0.8.1", "0.8.2", "0.9",
    "0.10", "1.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5"), "0.9",
     "Do not warn about old bugs fixed before this version.", pytensor=True, fixed=True,
     pytensor_until=(3, 2))
flag("exception_verbosity", OneOf("low", "medium", "high"), "low",
     "Detail in errors raised by compiled functions.", pytensor=True)

flag("check_input", bool, True, "Check the types of inputs in C code.", pytensor=True)
flag("NanGuardMode.nan_is_error", bool, True, "NanGuardMode: NaN is an error.", pytensor=True)
flag("NanGuardMode.inf_is_error", bool, True, "NanGuardMode: Inf is an error.", pytensor=True)
flag("NanGuardMode.big_is_error", bool, True,
     "NanGuardMode: a value above NanGuardMode.big is an error.", pytensor=True)
flag("NanGuardMode.action", OneOf("raise", "warn", "pdb"), "raise",
     "What NanGuardMode does on a bad value.", pytensor=True)
flag("NanGuardMode.big", float, 1e10,
     "Absolute value above which NanGuardMode calls a value big: a positive finite number "
     "(NanGuardMode.big_is_error=False turns the big check off; NaN and Inf are still caught).",
     range=Range(gt=0), check=_finite, describe="a positive finite number")
flag("NanGuardMode.dump_dir", str, "",
     "Directory for NaN-guard dumps; empty: nanguard under the user's cache directory "
     "(private; a directory others own or may write is refused).", reaches="a path")
flag("NanGuardMode.max_dumps", int, 10,
     "Dumps one process writes at most (a loop that skips bad batches fills no disk); 0: none.",
     range=Range(ge=0))

def _linker_list(value: str) -> str:
    """``auto``, or names of the linker table (numba, cvm, py, jax, ...) separated by ``:`` as
    PyTensor's list flags are (``optimizer_including``), or by commas where a flag string does not
    hold them (a Python call, a TOML or INI file); held ``:``-separated, so ``to_flags()`` round-trips."""
    import re

    from modecfg._registry.linkers import canonical_linker

    if value.strip().lower() == "auto":
        return "auto"
    names = [part for part in re.split(r"[\s:,]+", value) if part]
    if not names:
        raise ValueError("no linker named; use auto, or linker names such as numba:cvm:py")
    try:
        return ":".join(canonical_linker(name) for name in names)
    except ValueError as exc:
        from modecfg._registry.linkers import linker_names

        raise ValueError(f"{exc}; valid: auto, or names among {', '.join(linker_names())}") from None


flag("CompareMode.linkers", str, "auto",
     "CompareMode: the reference linkers every call also runs on, separated by ':' (numba:cvm:py; "
     "commas too, outside a flag string); auto: each of numba, cvm, py and jax this machine can run, "
     "less the function's own linker. The graph as written, run node by node in Python, is always "
     "compared.",
     check=_linker_list, describe="auto, or linker names separated by ':'")
flag("CompareMode.rtol", float | None, None,
     "CompareMode: relative tolerance; None: by dtype (float16 1e-3, float32 1e-4, float64 1e-5: "
     "PyTensor's test tolerances, float32's looser because backends sum in different orders).",
     range=Range(ge=0))
flag("CompareMode.atol", float | None, None,
     "CompareMode: absolute tolerance; None: by dtype (float16 1e-3, float32 1e-5, float64 1e-8).",
     range=Range(ge=0))
flag("CompareMode.action", OneOf("raise", "warn"), "raise",
     "What CompareMode does when backends differ: raise a CompareError, or warn (CompareWarning) "
     "and return the function's own values. Either way the node, the rewrite and a reproduction "
     "are looked for once per function.")
flag("CompareMode.repro_dir", str, "",
     "Directory for the reproduction scripts CompareMode writes; empty: compare under the user's "
     "cache directory (private; a directory others own or may write is refused).", reaches="a path")

flag("DebugMode.patience", int, 10, "Rewrite the graph this many times to find inconsistency.",
     pytensor=True, range=Range(gt=0))
flag("DebugMode.check_c", bool, Lazy(lambda cfg: bool(cfg.cxx), "True when cxx is set"),
     "Run C implementations where possible.", pytensor=True)
flag("DebugMode.check_py", bool, True, "Run Python implementations where possible.", pytensor=True)
flag("DebugMode.check_finite", bool, True, "Complain about NaN/Inf results.", pytensor=True)
flag("DebugMode.check_strides", int, 0,
     "On stride differences between Python and C: 0 ignore, 1 warn, 2 raise.",
     pytensor=True, range=Range(ge=0, le=2))
flag("DebugMode.warn_input_not_reused", bool, True,
     "Warn when an in-place op did not reuse its input.", pytensor=True)
flag("DebugMode.check_preallocated_output", str, "",
     "':'-separated kinds of preallocated output memory to test (initial, previous, "
     "c_contiguous, f_contiguous, strided, wrong_size, ALL).", pytensor=True, check=_check_prealloc,
     describe="':'-separated items of initial, previous, c_contiguous, f_contiguous, strided, "
     "wrong_size, ALL")
flag("DebugMode.check_preallocated_output_ndim", int, 4,
     "Inner dimensions over which strided outputs are tested.", pytensor=True, range=Range(gt=0))

flag("profiling.time_thunks", bool, True, "Time individual nodes when profiling.", pytensor=True)
flag("profiling.n_apply", int, 20, "Apply rows shown in a profile.", pytensor=True, range=Range(gt=0))
flag("profiling.n_ops", int, 20, "Op rows shown in a profile.", pytensor=True, range=Range(gt=0))
flag("profiling.output_line_width", int, 512, "Line width of the profile text.",
     pytensor=True, range=Range(gt=0))
flag("profiling.min_memory_size", int, 1024,
     "Memory profile: hide nodes whose outputs are smaller (bytes).", pytensor=True,
     range=Range(ge=0))
flag("profiling.min_peak_memory", bool, False,
     "Memory profile: also compute the order of minimal peak memory.", pytensor=True)
flag("profiling.destination", str, "stderr",
     "Where the profile text goes: stderr, stdout or a file path.", pytensor=True,
     reaches="a path")
flag("profiling.debugprint", bool, False, "Debugprint each profiled function.", pytensor=True)
flag("profiling.ignore_first_call", bool, False,
     "Leave the first call (compilation, caches) out of profiles.", pytensor=True)
flag("on_shape_error", OneOf("warn", "raise"), "warn",
     "What to do when shape inference fails.", pytensor=True)

flag("openmp", bool, False, "Allow OpenMP parallelism in C code.", pytensor=True,
     reaches="the C++ compiler")
flag("openmp_elemwise_minsize", int, 200000,
     "Smallest elementwise size run in parallel under OpenMP.", pytensor=True, range=Range(ge=0))

flag("profile", bool, False, "Profile compiled functions (see `modecfg profile`).", pytensor=True)
flag("profile_optimizer", bool, False, "Profile graph rewriting.", pytensor=True)
flag("profile_memory", bool, False, "Profile memory use (with profile).", pytensor=True)
flag("vm.lazy", bool | None, None,
     "VM linkers: lazy evaluation (None: when the graph needs it).", pytensor=True)
flag("scan.allow_gc", bool, False, "Free intermediate results inside scan.", pytensor=True)
flag("scan.allow_output_prealloc", bool, True,
     "Preallocate scan outputs.", pytensor=True, fixed=True)
flag("numba.fastmath", bool, True, "Compile numba code with fastmath.", pytensor=True)
flag("numba.cache", bool, True, "Cache numba compilations on disk.", pytensor=True)
flag("cache.max_size", str | None, None,
     "Largest size of the compile caches (C modules and numba's), e.g. 2GiB or 500MB: beyond it the "
     "least recently used entries are removed by `modecfg cache clean` and, at most once an hour, at "
     "the exit of a process that compiled a function. None: no bound.",
     check=check_size, describe="a size such as 2GiB, 500MB or 800M, or None")
flag("cache.max_age", str | None, "31d",
     "Compile cache entries unused for longer are removed (`modecfg cache clean`, and at most once an "
     "hour at the exit of a process that compiled a function). The default is the age at which PyTensor "
     "deletes its own C modules (cmodule.age_thresh_use + 7 days), applied to numba's cache too, "
     "which PyTensor never trims. None: no bound.",
     check=check_duration, describe="a duration such as 31d, 12h or 90m, or None")

# modecfg's own flags
flag("device", str, "cpu",
     "Where graphs run: cpu, cuda or cudaN (a GPU, through JAX). cuda is strict: a GPU that cannot be "
     "used is an error unless fallback_to_cpu=True. Theano's spelling gpu / gpuN behaves as in Theano: "
     "the GPU where one is usable, else the CPU with one warning (an error with force_device=True).",
     check=_check_device, describe="cpu, cuda, cudaN, gpu or gpuN")
flag("fallback_to_cpu", bool, False,
     "device=cuda / cudaN: when that GPU cannot be used, run on the CPU with a warning instead of "
     "raising.")
flag("force_device", bool, False,
     "device=gpu / gpuN (Theano's spelling): raise when that GPU cannot be used, instead of falling "
     "back to the CPU with a warning (Theano's meaning).")
flag("matmul_precision", OneOf("highest", "high", "default"), "highest",
     "Precision of float32 matrix products and convolutions run through JAX (on a GPU; the CPU "
     "computes float32 whatever this says), in JAX's and PyTorch's words. highest: true float32, as "
     "on the CPU (a 4096x4096 product on an H200: max relative error 2.9e-6 against float64, "
     "3.1 ms). high: faster, less exact (TF32 inputs with 10 mantissa bits, or three bfloat16 "
     "passes: XLA's choice; on the H200 3.0e-4, 0.58 ms). default: JAX's own default, the backend's "
     "fastest (on the H200, TF32-like: 3.0e-4, 0.61 ms).")
flag("compute_test_value", OneOf("off", "ignore", "warn", "raise", "pdb"), "off",
     "Evaluate each new node on its inputs' test values as the graph is built.")
# fmt: on
