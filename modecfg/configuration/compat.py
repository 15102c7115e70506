"""Flag names across Theano, Aesara, PyTensor and modecfg.

``lookup(name)`` says what a name written by a user is: a declared flag, an obsolete
flag (accepted, with the message for its :class:`~modecfg.errors.ObsoleteFlagWarning`),
or unknown (with suggestions and a hint). Spellings: ``.`` and ``__`` are the same
separator, even mixed in one name; case matters except in the option part of an rc
file, which Theano matched without regard to case.
"""

from __future__ import annotations

import re

from modecfg._record import Record
from modecfg.configuration.flags import Flag, FlagSet, canonical, declared, may_be_pytensors, written_name

__all__ = ["OBSOLETE", "Lookup", "canonical", "lookup"]

_GPU = (
    "belonged to Theano's old GPU backend; modecfg runs GPU graphs through JAX "
    "(device=cuda) and needs nothing here"
)
_XLA_MEM = (
    "GPU memory preallocation is now XLA's business: set the environment variable "
    "XLA_PYTHON_CLIENT_MEM_FRACTION=<fraction> (or XLA_PYTHON_CLIENT_PREALLOCATE=false)"
)
_DNN = "XLA chooses cuDNN and its convolution algorithms itself; nothing is needed"
_CUDA = "JAX finds CUDA through its jax[cuda12] packages; nothing is needed"
_BUGS = "warned about Theano bugs fixed before 2017; nothing to do"

# Exact names of obsolete flags -> what replaced them, or why nothing is needed.
OBSOLETE: dict[str, str] = {
    "nvcc.fastmath": _GPU + " (fast math on the CPU: numba.fastmath)",
    "nvcc.flags": _GPU,
    "nvcc.compiler_bindir": _GPU,
    "nvcc.cudafe": _GPU,
    "lib.cnmem": _XLA_MEM,
    "gpuarray.preallocate": _XLA_MEM,
    "gpuarray.single_stream": _GPU,
    "gpuarray.sched": _GPU,
    "gpuarray.sync": _GPU,
    "cuda.root": _CUDA,
    "cuda.enabled": _CUDA,
    "cuda.include_path": _CUDA,
    "dnn.enabled": _DNN,
    "dnn.include_path": _DNN,
    "dnn.library_path": _DNN,
    "dnn.bin_path": _DNN,
    "dnn.base_path": _DNN,
    "dnn.conv.algo_fwd": _DNN,
    "dnn.conv.algo_bwd": _DNN,
    "dnn.conv.algo_bwd_data": _DNN,
    "dnn.conv.algo_bwd_filter": _DNN,
    "dnn.conv.precision": _DNN,
    "dnn.conv.workmem": _DNN,
    "dnn.conv.workmem_bwd": _DNN,
    "magma.enabled": "MAGMA linear algebra on the GPU is gone; JAX uses cuSOLVER",
    "magma.include_path": "MAGMA linear algebra on the GPU is gone; nothing is needed",
    "magma.library_path": "MAGMA linear algebra on the GPU is gone; nothing is needed",
    "pycuda.init": _GPU,
    "init_gpu_device": "use device=cudaN",
    "print_active_device": "run `modecfg doctor` to see the devices and backends",
    "contexts": "multi-GPU contexts are gone; give each process its own device=cudaN",
    "assert_no_cpu_op": "there is no replacement; check the compiled graph with pytensor.dprint(fn) instead",
    "enable_initial_driver_test": _GPU,
    "experimental.unpickle_gpu_on_cpu": "GPU arrays are no longer pickled; nothing is needed",
    "int_division": "'/' on integers now always gives floatX (true division); use '//' for integer division",
    "unittests.rseed": "a seed for Theano's own test suite; nothing is needed",
    "cmodule.mac_framework_link": "nothing is needed on macOS any more",
    "compute_test_value_opt": "test values are checked by compute_test_value alone",
    "deterministic": "deterministic GPU algorithms are XLA's: set XLA_FLAGS=--xla_gpu_deterministic_ops=true",
    "ctc.root": "the warp-ctc binding is gone; nothing is needed",
    "lib.cnmem_fraction": _XLA_MEM,
    # Theano's ProfileMode flags: the profile of any mode now reads the profiling flags
    "ProfileMode.n_apply_to_print": "use profiling.n_apply (rows of the apply-wise table)",
    "ProfileMode.n_ops_to_print": "use profiling.n_ops (rows of the op-wise tables)",
    "ProfileMode.min_memory_size": "use profiling.min_memory_size",
    "ProfileMode.profile_memory": "use profile_memory=True (with profile=True)",
}

# Families: obsolete unless the name is a known flag (or misplaced known flag).
# The patterns are compiled on first use (re keeps them): compiling at import costs start-up.
_OBSOLETE_FAMILIES: tuple[tuple[str, str], ...] = (
    (r"warn\.(?!ignore_bug_before$)\w+", _BUGS),
    (r"nvcc\..+", _GPU),
    (r"gpuarray\..+", _GPU),
    (r"dnn\..+", _DNN),
    (r"cuda\..+", _CUDA),
    (r"magma\..+", "MAGMA linear algebra on the GPU is gone; nothing is needed"),
)

# Names seen in real rc files and flag strings that never were flags.
_NOT_FLAGS: dict[str, str] = {
    "allow_input_downcast": "it is an argument of modecfg.function / pytensor.function, not a flag",
    "nvcc.use_fast_math": "Theano's flag was nvcc.fastmath, which is obsolete too",
    "on_unused_inputs": "the flag is on_unused_input",
}


class Lookup(Record):
    """What a written name is. Exactly one of ``flag`` / ``obsolete`` / ``suggestions``-only."""

    written: str
    flag: Flag | None = None
    obsolete: str | None = None  # canonical obsolete name, with ``message``
    message: str = ""
    suggestions: tuple[str, ...] = ()


def _folded(flags: FlagSet) -> dict[tuple[str, str], str]:
    """(exact prefix, lower-cased rest) -> name, for every split of every known name (kept
    with the FlagSet)."""
    index: dict[tuple[str, str], str] | None = flags.memo.get("folded")
    if index is None:
        index = {}
        for name in (*flags, *OBSOLETE):
            parts = name.split(".")
            for i in range(len(parts)):
                prefix = ".".join(parts[:i])
                rest = ".".join(parts[i:]).lower()
                index.setdefault((prefix, rest), name)
        flags.memo["folded"] = index
    return index


def lookup(
    name: str, *, section: str | None = None, suggest: bool = True, flags: FlagSet | None = None
) -> Lookup:
    """What ``name`` is among ``flags`` (None: those declared now). With ``section`` (an INI
    file), ``name`` is the option part.

    ``suggest=False`` skips the did-you-mean search for an unknown name (a source with
    thousands of unknown names is reported without spending seconds on each)."""
    flags = declared() if flags is None else flags
    written = written_name(name, section)
    full = canonical(written)
    found = _exact(full, flags)
    if found is None and section is not None:
        prefix = "" if section == "global" else canonical(section)
        found = _folded(flags).get((prefix, canonical(name).lower()))
    if found is not None:
        if found in flags:
            return Lookup(written, flag=flags[found])
        return Lookup(written, obsolete=found, message=OBSOLETE[found])
    return _unknown(written, full, suggest, flags)


def _exact(full: str, flags: FlagSet) -> str | None:
    if full in flags or full in OBSOLETE:
        return full
    return None


def _unknown(written: str, full: str, suggest: bool, flags: FlagSet) -> Lookup:
    if full in _NOT_FLAGS:
        return Lookup(written, message=_NOT_FLAGS[full])
    if may_be_pytensors(full):
        param = full.replace(".", "__")
        return Lookup(
            written,
            message=f"it is PyTensor's own flag, which modecfg does not declare: pytensor.config.{param} "
            "reads and sets it, and PYTENSOR_FLAGS and rc files hand it to PyTensor",
        )
    if full.startswith("config.") and _exact(full[7:], flags):
        return Lookup(written, message="drop the 'config.' prefix", suggestions=(full[7:],))
    if full.startswith("cudnn."):
        alt = "dnn." + full[6:]
        return _obsolete_family(written, alt) or Lookup(written, suggestions=_close(alt, flags))
    # A known flag filed under the wrong section ([nvcc] optimizer_including).
    parts = full.split(".")
    for i in range(1, len(parts)):
        rest = ".".join(parts[i:])
        if rest in flags:
            where = ".".join(parts[:i])
            home = "[global]" if "." not in rest else f"[{rest.rsplit('.', 1)[0]}]"
            return Lookup(
                written,
                message=f"{rest} is a {home} flag, not one of [{where}]",
                suggestions=(rest,),
            )
    family = _obsolete_family(written, full)
    if family is not None:
        return family
    if not suggest:
        return Lookup(written)
    # A bare option of a dotted flag (cnmem, root, limit).
    owners = tuple(n for n in (*flags, *OBSOLETE) if "." in n and n.rsplit(".", 1)[1] == full)
    if owners:
        return Lookup(written, suggestions=owners[:4])
    return Lookup(written, suggestions=_close(full, flags))


def _obsolete_family(written: str, full: str) -> Lookup | None:
    for pattern, message in _OBSOLETE_FAMILIES:
        if re.fullmatch(pattern, full):
            return Lookup(written, obsolete=full, message=message)
    return None


def _names(flags: FlagSet) -> tuple[list[str], dict[str, str]]:
    found: tuple[list[str], dict[str, str]] | None = flags.memo.get("names")
    if found is None:
        names = [*flags, *OBSOLETE]
        found = flags.memo["names"] = (names, {n.lower(): n for n in names})
    return found


def _close(full: str, flags: FlagSet) -> tuple[str, ...]:
    import difflib

    names, lowered = _names(flags)
    if full.lower() in lowered:
        return (lowered[full.lower()],)
    return tuple(difflib.get_close_matches(full, names, n=3, cutoff=0.75))
