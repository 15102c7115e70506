"""Legacy names: obsolete flags warn once and say what replaced them; unknown flags and
misspellings get did-you-mean; the strings and files of REALWORLD.md all read."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modecfg
import modecfg.configuration.flags
from modecfg.configuration.compat import OBSOLETE, canonical, lookup
from modecfg.configuration.flags import FLAGS, declared, written_name
from tests.fresh import pythonpath


def _load_warnings(
    env: dict[str, str], rc_files: list[Path] | None = None
) -> tuple[modecfg.Config, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = modecfg.load(env=env, rc_files=rc_files)
    return cfg, [str(w.message) for w in caught if issubclass(w.category, modecfg.ObsoleteFlagWarning)]


def test_no_obsolete_name_is_also_a_flag() -> None:
    assert not set(OBSOLETE) & set(FLAGS)


@pytest.mark.parametrize(
    ("flag", "says"),
    [
        ("lib.cnmem", "XLA_PYTHON_CLIENT_MEM_FRACTION"),
        ("gpuarray.preallocate", "XLA_PYTHON_CLIENT_MEM_FRACTION"),
        ("nvcc.fastmath", "numba.fastmath"),
        ("nvcc.flags", "device=cuda"),
        ("cuda.root", "nothing is needed"),
        ("dnn.enabled", "nothing is needed"),
        ("dnn.conv.algo_bwd_filter", "nothing is needed"),
        ("init_gpu_device", "device=cudaN"),
        ("print_active_device", "modecfg doctor"),
        ("contexts", "device=cudaN"),
        ("assert_no_cpu_op", "no replacement"),
        ("enable_initial_driver_test", "nothing here"),
        ("warn.sum_div_dimshuffle_bug", "nothing to do"),
        ("warn.argmax_pushdown_bug", "nothing to do"),
        ("int_division", "'//'"),
        ("unittests.rseed", "nothing is needed"),
        ("cmodule.mac_framework_link", "nothing is needed"),
        ("gpuarray.single_stream", "nothing here"),
        ("magma.enabled", "cuSOLVER"),
    ],
)
def test_obsolete_flags_are_accepted_with_a_warning_naming_the_replacement(flag: str, says: str) -> None:
    cfg, messages = _load_warnings({"THEANO_FLAGS": f"{flag}=True,floatX=float32"})
    assert cfg.floatX == "float32"
    assert len(messages) == 1
    assert f"{flag} is obsolete" in messages[0] and says in messages[0]
    assert "(from THEANO_FLAGS)" in messages[0]
    assert flag in {n.flag for n in cfg.notes}


def test_one_warning_per_flag_however_many_sources_set_it(tmp_path: Path) -> None:
    rc = tmp_path / "rc"
    rc.write_text("[lib]\ncnmem = 0.8\n[nvcc]\nfastmath = True\n")
    _, messages = _load_warnings(
        {"THEANO_FLAGS": "lib.cnmem=0.5,lib__cnmem=.75", "PYTENSOR_FLAGS": "lib.cnmem=1"}, [rc]
    )
    assert sorted(m.split(" is obsolete")[0] for m in messages) == ["lib.cnmem", "nvcc.fastmath"]


def test_theano_gpu_devices_are_kept_as_written_without_a_warning() -> None:
    """device=gpu is Theano's spelling, with Theano's meaning (fall back to the CPU where no GPU
    is usable): not an obsolete name of cuda, which is strict."""
    for old in ("gpu", "gpu0", "gpu3"):
        cfg, messages = _load_warnings({"THEANO_FLAGS": f"device={old}"})
        assert cfg.device == old and messages == []


def test_force_device_is_a_flag_again() -> None:
    cfg, messages = _load_warnings({"THEANO_FLAGS": "device=gpu,force_device=True"})
    assert cfg.force_device is True and messages == []


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda0", "cuda12", "gpu", "gpu1"])
def test_modern_devices_need_no_warning(device: str) -> None:
    cfg, messages = _load_warnings({"THEANO_FLAGS": f"device={device}"})
    assert cfg.device == device and messages == []


def test_opencl_devices_are_refused_with_the_reason() -> None:
    with pytest.raises(
        modecfg.FlagValueError, match="OpenCL devices belonged to Theano's libgpuarray backend"
    ):
        modecfg.load(env={"THEANO_FLAGS": "device=opencl0:0"})


@pytest.mark.parametrize(
    ("written", "suggestion"),
    [
        ("optimizer_incuding", "optimizer_including"),
        ("scan.allow_fc", "scan.allow_gc"),
        ("base_compile_dir", "base_compiledir"),
        ("cnmem", "lib.cnmem"),
        ("config.floatX", "floatX"),
        ("floatx", "floatX"),
        ("nvcc.optimizer_including", "optimizer_including"),
        ("excepton_verbosity", "exception_verbosity"),
    ],
)
def test_unknown_flags_suggest_what_was_meant(written: str, suggestion: str) -> None:
    with pytest.raises(modecfg.UnknownFlagError) as info:
        modecfg.load(env={"THEANO_FLAGS": f"{written}=1"})
    assert info.value.suggestions[0] == suggestion  # the closest first
    assert f"; did you mean {suggestion}?" in str(info.value) or f"; did you mean {suggestion} or " in str(
        info.value
    )
    assert "(from THEANO_FLAGS)" in str(info.value)
    assert info.value.flag == written


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("allow_input_downcast", "argument of modecfg.function"),
        ("nvcc.use_fast_math", "nvcc.fastmath"),
    ],
)
def test_names_that_never_were_flags_say_so(written: str, hint: str) -> None:
    with pytest.raises(modecfg.UnknownFlagError, match=hint):
        modecfg.load(env={"THEANO_FLAGS": f"{written}=True"})


def test_cudnn_names_are_read_as_the_obsolete_dnn_ones() -> None:
    _, messages = _load_warnings({"THEANO_FLAGS": "cudnn.enabled=True"})
    assert len(messages) == 1 and messages[0].startswith("cudnn.enabled is obsolete: XLA chooses cuDNN")
    (note,) = modecfg.diagnose(env={"THEANO_FLAGS": "cudnn.enabled=True"}).notes
    assert note.flag == "dnn.enabled"  # the obsolete flag it was read as


def test_canonical_spelling() -> None:
    assert canonical(" DebugMode__check_c ") == "DebugMode.check_c"
    assert lookup("traceback__limit").flag is FLAGS["traceback.limit"]
    assert lookup("LIMIT", section="traceback").flag is FLAGS["traceback.limit"]
    assert lookup("limit", section="Traceback").flag is None


# -- the strings and files people really write (REALWORLD.md) ---------------------------

REAL_STRINGS = [
    (
        "floatX=float32,device=gpu0,optimizer=None",
        {"floatX": "float32", "device": "gpu0", "optimizer": "None"},
    ),
    (
        "device=cuda, floatX=float32, optimizer_including=cudnn",
        {"device": "cuda", "optimizer_including": "cudnn"},
    ),
    ("mode=FAST_RUN,device=gpu,floatX=float32,lib.cnmem=.75", {"mode": "FAST_RUN", "device": "gpu"}),
    ("mode=DEBUG_MODE", {"mode": "DebugMode"}),
    ("mode=FAST_COMPILE,exception_verbosity=high", {"mode": "FAST_COMPILE", "exception_verbosity": "high"}),
    ("mode=Mode,linker=c|py,optimizer=fast_compile", {"linker": "c|py", "optimizer": "fast_compile"}),
    ("mode=JAX", {"mode": "JAX"}),
    ("mode=ProfileMode", {"mode": "ProfileMode"}),
    (",floatX=float32", {"floatX": "float32"}),
    ("", {}),
    ("cxx=,blas.ldflags=", {"cxx": "", "blas.ldflags": ""}),
    ("blas.ldflags=-lopenblas,openmp=True", {"blas.ldflags": "-lopenblas", "openmp": True}),
    (
        "blas.ldflags='-L/usr/lib -lopenblas -Wl,-rpath=/usr/lib'",
        {"blas.ldflags": "-L/usr/lib -lopenblas -Wl,-rpath=/usr/lib"},
    ),
    ('gcc.cxxflags="-march=native -O3"', {"gcc.cxxflags": "-march=native -O3"}),
    ("gcc__cxxflags=-I/opt/include,base_compiledir=/tmp/theano", {"gcc.cxxflags": "-I/opt/include"}),
    (
        "warn_float64=raise,floatX=float32,cast_policy=numpy+floatX",
        {"warn_float64": "raise", "cast_policy": "numpy+floatX"},
    ),
    (
        "allow_gc=False,scan.allow_gc=True,profile=1,profile_memory=0",
        {"allow_gc": False, "scan.allow_gc": True, "profile": True},
    ),
    ("compute_test_value=raise,traceback.limit=-1", {"compute_test_value": "raise", "traceback.limit": -1}),
    ("DebugMode.check_strides=0,on_opt_error=raise,on_shape_error=raise", {"on_opt_error": "raise"}),
    ("floatX=float32,floatX=float64", {"floatX": "float64"}),
    ('"floatX=float32,device=cuda"', {"floatX": "float32", "device": "cuda"}),
    (
        "compiledir_format=compiledir_%(platform)s-%(processor)s",
        {"compiledir_format": "compiledir_%(platform)s-%(processor)s"},
    ),
    ("vm.lazy=True,cycle_detection=fast,numba.fastmath=False", {"vm.lazy": True, "numba.fastmath": False}),
    ("vm__lazy=None", {"vm.lazy": None}),
    ("nvcc.fastmath=True,dnn.enabled=False,cuda.root=/usr/local/cuda,floatX=float32", {"floatX": "float32"}),
    ("warn.ignore_bug_before=all,warn.sum_div_dimshuffle_bug=False", {"warn.ignore_bug_before": "all"}),
]


@pytest.mark.parametrize(("text", "expected"), REAL_STRINGS)
def test_real_flag_strings_read(text: str, expected: dict[str, object]) -> None:
    cfg, _ = _load_warnings({"THEANO_FLAGS": text})
    for name, value in expected.items():
        assert cfg[name] == value, name


REAL_BAD_STRINGS = [
    ("float32,device=gpu,floatX=float32", modecfg.FlagSyntaxError, "did you mean floatX=float32"),
    ("exception_verbosity=True", modecfg.FlagValueError, "valid choices: low, medium, high"),
    ("floatX=float32 device=gpu", modecfg.FlagValueError, "separated by commas, not spaces"),
    ("blas.ldflags=-lblas floatX=float32", modecfg.FlagValueError, "looks like a second flag"),
    ("mode=FAST_RUNN", modecfg.FlagValueError, "did you mean 'FAST_RUN'"),
    ("optimizer=none", modecfg.FlagValueError, "did you mean 'None'"),
    ("allow_gc=maybe", modecfg.FlagValueError, "yes/no"),
    ("traceback.limit=ten", modecfg.FlagValueError, "integer"),
    ("profiling.n_apply=0", modecfg.FlagValueError, "greater than 0"),
    ("DebugMode.check_strides=3", modecfg.FlagValueError, "less than or equal to 2"),
    ("DebugMode.check_preallocated_output=initial:bogus", modecfg.FlagValueError, "'bogus' is not valid"),
    ("linker=cvmm", modecfg.FlagValueError, "did you mean 'cvm'"),
    ("cxx='g++", modecfg.FlagSyntaxError, "unterminated"),
]


@pytest.mark.parametrize(("text", "error", "needle"), REAL_BAD_STRINGS)
def test_real_mistakes_get_clear_errors(text: str, error: type[Exception], needle: str) -> None:
    with pytest.raises(error) as info:
        modecfg.load(env={"THEANO_FLAGS": text})
    assert needle in str(info.value)
    assert "THEANO_FLAGS" in str(info.value)


REAL_THEANORC = """\
#!sh
# ~/.theanorc of a 2016 GPU box — “works on my machine”
[global]
floatX = float32
device = gpu0
optimizer_including=cudnn
allow_gc = False
base_compiledir = /scratch/%(user)s/theano   # per-user cache

[lib]
cnmem = .9

[nvcc]
fastmath = True
flags = -D_FORCE_INLINES
compiler_bindir = C:\\Program Files (x86)\\Microsoft Visual Studio 12.0\\VC\\bin

[dnn]
enabled = True
include_path = /usr/local/cuda/include
conv.algo_fwd = "time_once"

[dnn.conv]
algo_bwd_filter = 'deterministic'

[blas]
ldflags = -L/opt/intel/mkl/lib/intel64 -lmkl_rt -Wl,--no-as-needed,-rpath=/opt/intel/mkl/lib/intel64

[gcc]
cxxflags = -march=native -O3
[DebugMode]
check_preallocated_output = initial:previous
[cuda]
root = /usr/local/cuda-8.0
[warn]
ignore_bug_before = 0.8
[empty_section]
"""


def test_a_real_theanorc_reads_in_full(tmp_path: Path) -> None:
    rc = tmp_path / ".theanorc"
    rc.write_text(REAL_THEANORC)
    cfg, messages = _load_warnings({"HOME": str(tmp_path), "USER": "ann"})
    assert cfg.floatX == "float32"
    assert cfg.device == "gpu0"
    assert cfg.optimizer_including == "cudnn"
    assert cfg.allow_gc is False
    assert str(cfg.base_compiledir) == "/scratch/ann/theano"
    assert cfg.blas.ldflags.endswith("-rpath=/opt/intel/mkl/lib/intel64")
    assert cfg.gcc.cxxflags == "-march=native -O3"
    assert cfg.DebugMode.check_preallocated_output == "initial:previous"
    assert cfg["warn.ignore_bug_before"] == "0.8"
    obsolete = sorted(m.split(" ")[0] for m in messages)
    assert obsolete == sorted(
        ["lib.cnmem", "nvcc.fastmath", "nvcc.flags", "nvcc.compiler_bindir", "dnn.enabled",
         "dnn.include_path", "dnn.conv.algo_fwd", "dnn.conv.algo_bwd_filter", "cuda.root"]
    )  # fmt: skip
    assert cfg.origin("allow_gc").line == 7


def test_thousands_of_obsolete_names_are_twenty_warnings_and_one_for_the_rest(tmp_path: Path) -> None:
    """Round four: an rc file of 50,000 such names gave 10 MB of warnings, one per name."""
    rc = tmp_path / "rc"
    rc.write_text("[gpuarray]\n" + "".join(f"opt{i} = 1\n" for i in range(5000)))
    cfg, messages = _load_warnings({}, [rc])
    assert cfg.floatX == "float64" and len(messages) == 21
    assert messages[0].startswith("gpuarray.opt0 is obsolete")
    assert messages[-1].startswith("and 4980 more obsolete flags (gpuarray.opt20, gpuarray.opt21,")
    assert "`modecfg validate` lists them all" in messages[-1]


def test_an_obsolete_flag_read_during_pytensors_import_is_warned_at_the_users_import_line(
    tmp_path: Path,
) -> None:
    """Issue 50: the warning said ``sys:1``: Python's warnings count the frames of an import in
    progress (importlib's) out of the stack level, and modecfg counted them in."""
    import os
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text("import modecfg\nimport pytensor\n")
    env = {**os.environ, "PYTHONPATH": pythonpath(), "THEANO_FLAGS": "lib.cnmem=0.5", "THEANORC": ""}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{script}:2: ObsoleteFlagWarning: lib.cnmem is obsolete" in done.stderr, done.stderr
    assert "sys:1" not in done.stderr


_FLAG_NAMES = sorted(FLAGS)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(_FLAG_NAMES) | st.text("abcdefgx_.YZ ", max_size=20),
    split=st.integers(min_value=0, max_value=4),
    section=st.sampled_from([None, "global", "", "DebugMode", "debugmode", "x"]),
    dunder=st.booleans(),
)
def test_a_flags_own_name_is_what_the_lookup_finds(
    name: str, split: int, section: str | None, dunder: bool
) -> None:
    """The readers that skip the lookup for a flag's own name (an assignment, a setting of an
    environment variable or rc file) find the flag the lookup finds, whatever the spelling,
    section or blanks; a name they do not find is no flag's exact name (the lookup's case
    folding of an INI option is left to it)."""
    parts = name.split(".")
    if section is not None and 0 < split < len(parts):  # an INI section's option
        section, key = ".".join(parts[:split]), ".".join(parts[split:])
    else:
        key = name
    if dunder:
        key = key.replace(".", "__")
    flags = declared()
    own = flags.get(canonical(written_name(key, section)))
    if own is not None:
        assert lookup(key, section=section, flags=flags).flag is own
    else:
        found = lookup(key, section=section, suggest=False, flags=flags).flag  # (folded, say)
        assert found is None or found.name != canonical(written_name(key, section))


def test_written_name_joins_a_section_and_its_option() -> None:
    assert written_name("check_c", "DebugMode") == "DebugMode.check_c"
    assert written_name("floatX", "global") == "floatX"
    assert written_name("floatX", None) == "floatX"
    assert written_name("a", "") == ".a"
    assert canonical(" DebugMode__check_c ") == "DebugMode.check_c"
    assert canonical is modecfg.configuration.flags.canonical  # one rule, compat's name kept
