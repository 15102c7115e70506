"""compiledir_format's keys: PyTensor's, and modecfg's cpu_features and job that partition a cache."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import modecfg
from modecfg import _files
from modecfg.cli import main
from modecfg.configuration.partition import PYTENSOR_KEYS, check_compiledir_format, cpu_features, job
from modecfg.doctor import shared_cache_warning
from modecfg.errors import FlagValueError

SKYLAKE = (
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
    "flags\t\t: fpu sse avx2 avx512f\n"
)


def test_a_cpu_is_named_by_its_model_and_features_not_by_its_core_or_clock() -> None:
    same = SKYLAKE.replace("processor\t: 0", "processor\t: 7") + "cpu MHz\t\t: 2100.000\n"
    older = SKYLAKE.replace(" avx512f", "")
    assert cpu_features(SKYLAKE) == cpu_features(same) == cpu_features(SKYLAKE + SKYLAKE)
    assert cpu_features(SKYLAKE) != cpu_features(older)
    assert len(cpu_features(SKYLAKE)) == 12 and int(cpu_features(SKYLAKE), 16) >= 0
    assert len(cpu_features("")) == 12  # no /proc/cpuinfo: the machine's names


def test_a_job_is_the_schedulers_id_made_safe_for_a_path() -> None:
    assert job({"SLURM_JOB_ID": "4711"}) == "4711"
    assert job({"PBS_JOBID": "12.server/../x"}) == "12.server_.._x"
    assert job({"LSB_JOBID": "  ", "JOB_ID": "9"}) == "9"
    assert job({}) == "nojob"


def test_modecfgs_keys_are_filled_and_pytensors_left_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    value = check_compiledir_format("c_%(short_platform)s-%(cpu_features)s-%(job)s-%(hostname)s")
    assert value == f"c_%(short_platform)s-{cpu_features()}-77-%(hostname)s"
    all_pytensor = "-".join(f"%({key})s" for key in PYTENSOR_KEYS)
    assert check_compiledir_format(all_pytensor) == all_pytensor


def test_a_key_nobody_fills_is_refused_with_the_keys_there_are() -> None:
    with pytest.raises(FlagValueError) as caught:
        modecfg.load(env={"THEANO_FLAGS": "compiledir_format=c_%(host)s"}).compiledir_format  # noqa: B018
    assert str(caught.value) == (
        "compiledir_format='c_%(host)s' (from THEANO_FLAGS): %(host)s is no key of compiledir_format: "
        "PyTensor fills platform, short_platform, processor, python_version, python_bitwidth, "
        "python_int_bitwidth, pytensor_version, numpy_version, gxx_version, hostname; "
        "modecfg fills cpu_features, job"
    )


MOUNTS = """\
/dev/vda1 / ext4 rw,relatime 0 0
server:/export/home /home nfs4 rw,relatime 0 0
/dev/vdb /home/scratch xfs rw 0 0
lustre@o2ib:/fs /lustre lustre rw 0 0
/dev/vdc /mnt/my\\040disk ext4 rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "kind"),
    [("/home/ann/.pytensor", "nfs4"), ("/home/scratch/c", ""), ("/lustre/proj", "lustre"), ("/tmp/x", ""),
     ("/home", "nfs4"), ("/homework", ""), ("/mnt/my disk/c", "")],
)  # fmt: skip
def test_which_filesystems_other_hosts_share(path: str, kind: str) -> None:
    assert _files.shared_filesystem(path, mounts=MOUNTS) == kind


def test_validate_warns_of_a_shared_cache_every_host_writes_alike(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_files, "shared_filesystem", lambda path, mounts=None: "nfs4")
    shared = modecfg.load(env={"PYTENSOR_FLAGS": f"base_compiledir={tmp_path}"})
    warning = shared_cache_warning(shared)
    assert warning.startswith(
        f"base_compiledir={tmp_path} is on nfs4, which other hosts share, and compiledir_format="
    )
    assert warning.endswith("or %(job)s for one per batch job")
    for partitioned in ("c_%(cpu_features)s", "c_%(hostname)s"):
        cfg = modecfg.load(
            env={"PYTENSOR_FLAGS": f"base_compiledir={tmp_path},compiledir_format={partitioned}"}
        )
        assert shared_cache_warning(cfg) == ""
    named = modecfg.load(env={"PYTENSOR_FLAGS": f"base_compiledir={tmp_path},compiledir={tmp_path}/c"})
    assert shared_cache_warning(named) == ""
    out = io.StringIO()  # the suite's own configuration (MODECFG_FLAGS names its compile directory)
    assert main(["validate"], out, io.StringIO()) == 0  # a note: the configuration still runs
    assert (
        "\nnote: base_compiledir=" in out.getvalue()
        and " is on nfs4, which other hosts share" in out.getvalue()
    )
