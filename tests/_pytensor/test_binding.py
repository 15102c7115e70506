"""How PyTensor sees each flag: one function (modecfg._pytensor.binding) that the view and the
hand-off both read, from the flag's declaration and PyTensor's parameter."""

from __future__ import annotations

import pytensor
import pytest

import modecfg  # noqa: F401  (wired: the view is attached)
from modecfg._pytensor import view as view_module
from modecfg._pytensor.binding import Binding, binding, pytensor_accepts
from modecfg.configuration.flags import FLAGS


def _param(name: str) -> object:
    param = pytensor.config._config_var_dict.get(FLAGS[name].pytensor_name)
    return getattr(param, "original", param)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("floatX", "view"),
        ("linker", "view"),
        ("traceback.limit", "view"),
        ("compiledir", "handed over"),
        ("base_compiledir", "handed over"),
        ("device", "modecfg"),
        ("compute_test_value", "modecfg"),
    ],
)
def test_each_kind_of_flag_has_its_binding(name: str, expected: Binding) -> None:
    assert binding(FLAGS[name], _param(name)) == expected


def test_the_view_answers_exactly_the_flags_bound_to_it() -> None:
    current = view_module.view()
    assert current is not None
    bound = {
        spec.name
        for spec in FLAGS.values()
        if binding(spec, pytensor.config._config_var_dict.get(spec.pytensor_name)) == "view"
    }
    assert set(spec.name for spec in current.flags.values()) == bound
    for spec in FLAGS.values():  # each of the others is handed over or modecfg's alone
        if spec.name not in bound:
            assert spec.pytensor_name not in current.flags


def test_values_pytensor_has_no_name_for_stay_modecfg_s() -> None:
    """Said by the flag's declaration (pytensor_takes), not by its name in a list elsewhere."""
    assert pytensor_accepts(FLAGS["linker"], "cvm") and not pytensor_accepts(FLAGS["linker"], "per_graph")
    assert pytensor_accepts(FLAGS["mode"], "FAST_RUN")
    assert not pytensor_accepts(FLAGS["compiledir"], None) and pytensor_accepts(FLAGS["compiledir"], "/x")
    assert not pytensor_accepts(FLAGS["blas.ldflags"], None) and pytensor_accepts(FLAGS["blas.ldflags"], "")
    assert not pytensor_accepts(FLAGS["device"], "cpu")  # not PyTensor 3's
    assert pytensor_accepts(FLAGS["floatX"], "float32")


def test_a_flag_of_other_pytensor_releases_takes_no_value_in_this_one() -> None:
    """Asked of the installed release: a flag PyTensor added later, or removed, takes nothing here
    (its value stays modecfg's), and takes its values in the releases that have it."""
    from modecfg._pytensor.version import pytensor_version

    version = pytensor_version()
    releases = [FLAGS["generated_src_dir"], FLAGS["warn.ignore_bug_before"]]  # since 3.3; until 3.2
    assert not all(spec.in_pytensor(version) for spec in releases)  # one is absent from any release
    for spec in releases:
        assert pytensor_accepts(
            spec, "/x" if spec.name == "generated_src_dir" else "all"
        ) is spec.in_pytensor(version)
