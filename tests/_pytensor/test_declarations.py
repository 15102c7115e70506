"""modecfg's flag declarations against each supported PyTensor's: what differs, said and held.

A flag both declare is modecfg's (typed, with provenance) and PyTensor reads modecfg's value; a
flag only PyTensor declares is PyTensor's, end to end (modecfg hands it what its sources set
for it, and ``pytensor.config`` keeps PyTensor's own parameter); a flag only modecfg
declares is modecfg's alone (PyTensor's ``change_flags`` still finds it). When a PyTensor release
adds, drops or renames a flag, the test of its series fails here and names the flag.
"""

from __future__ import annotations

import pytensor

import modecfg  # noqa: F401  (the bridge)
from modecfg._pytensor import view
from modecfg.configuration.flags import FLAGS

# What modecfg declares and this PyTensor series does not: modecfg's own (its modes, cache
# bounds, devices), and test values (PyTensor 3 dropped them; modecfg brings them back).
_MODECFG_ONLY = {
    "CompareMode__action", "CompareMode__atol", "CompareMode__linkers", "CompareMode__repro_dir",
    "CompareMode__rtol", "NanGuardMode__big", "NanGuardMode__dump_dir", "NanGuardMode__max_dumps",
    "cache__max_age", "cache__max_size", "compute_test_value", "device", "fallback_to_cpu",
    "force_device", "matmul_precision",
}  # fmt: skip
DIFFERENCES = {
    # series: (declared by modecfg only, declared by PyTensor only: PyTensor's own)
    "3.0": (_MODECFG_ONLY | {"generated_src_dir"}, {"gcc_version_str"}),  # generated_src_dir came in 3.3
    "3.3": (_MODECFG_ONLY | {"warn__ignore_bug_before"}, {"gcc_version_str"}),  # 3.3 dropped that warning
}


def _series() -> str:
    return ".".join(pytensor.__version__.split(".")[:2])


def test_what_modecfg_and_this_pytensor_declare_differently_is_what_is_recorded() -> None:
    current = view.view()
    assert current is not None
    pytensors = set(current.params) | set(current.originals)  # PyTensor's parameters, answered or not
    ours = {spec.pytensor_name for spec in FLAGS.values()}
    theirs = pytensors - ours
    assert all(type(current.params[name]).__module__ == "pytensor.configparser" for name in theirs)
    found = (ours - pytensors, theirs)
    assert _series() in DIFFERENCES, f"PyTensor {pytensor.__version__}: record its differences: {found}"
    assert found == DIFFERENCES[_series()]


def test_no_flag_only_modecfg_declares_takes_the_name_of_an_attribute_of_pytensors_config() -> None:
    """The view puts a parameter on PyTensor's config class for each flag this PyTensor has no
    parameter for (``device``): such a name must not be a method or attribute PyTensor's class
    has (``add``, ``change_flags``), which the parameter would hide."""
    from pytensor.configparser import PyTensorConfigParser

    from modecfg._pytensor import install, uninstall

    uninstall()
    try:
        plain = set(dir(PyTensorConfigParser))  # PyTensor's class as PyTensor made it
    finally:
        install()
    current = view.view()
    assert current is not None and "device" in current.own
    assert "add" in plain and "change_flags" in plain  # what is checked
    assert sorted(set(current.own) & plain) == []
