"""Precedence: override > assignment > MODECFG_FLAGS > PYTENSOR_FLAGS > AESARA_FLAGS >
THEANO_FLAGS > rc files (right over left) > defaults; and the rc file discovery rules."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

import modecfg
from modecfg.configuration.origin import Layer

LEVELS = [
    "default",
    "rc",
    "THEANO_FLAGS",
    "AESARA_FLAGS",
    "PYTENSOR_FLAGS",
    "MODECFG_FLAGS",
    "assignment",
    "override",
]


def _config_with(levels: set[str], tmp_path: Path) -> tuple[modecfg.Config, modecfg.Override | None]:
    """traceback.limit is set to the level's index in every level named."""
    env: dict[str, str] = {}
    rc_files = []
    if "rc" in levels:
        path = tmp_path / "theanorc"
        path.write_text(f"[traceback]\nlimit = {LEVELS.index('rc')}\n")
        rc_files.append(path)
    for var in ("THEANO_FLAGS", "AESARA_FLAGS", "PYTENSOR_FLAGS", "MODECFG_FLAGS"):
        if var in levels:
            env[var] = f"traceback__limit={LEVELS.index(var)}"
    cfg = modecfg.load(env=env, rc_files=rc_files)
    if "assignment" in levels:
        cfg.traceback.limit = LEVELS.index("assignment")
    override = cfg.override(traceback__limit=LEVELS.index("override")) if "override" in levels else None
    return cfg, override


@pytest.mark.parametrize(("low", "high"), list(itertools.combinations(LEVELS, 2)))
def test_each_layer_wins_over_each_lower_one(low: str, high: str, tmp_path: Path) -> None:
    cfg, override = _config_with({low, high}, tmp_path)
    if override is not None:
        with override:
            assert cfg.traceback.limit == LEVELS.index(high)
            assert cfg.origin("traceback.limit").layer is Layer.OVERRIDE
        # and the layer below shows again afterwards
        assert cfg.traceback.limit == (LEVELS.index(low) if low != "default" else 8)
    else:
        assert cfg.traceback.limit == LEVELS.index(high)
        origin = cfg.origin("traceback.limit")
        expected_layer = {"rc": "rc", "assignment": "assignment"}.get(high, "env")
        assert origin.layer == expected_layer
        if origin.layer is Layer.ENV:
            assert origin.source == high


def test_every_layer_shows_in_explain(tmp_path: Path) -> None:
    cfg, override = _config_with(set(LEVELS), tmp_path)
    assert override is not None
    with override:
        exp = cfg.explain("traceback.limit")
    assert [c.value for c in exp.layers] == list(range(1, len(LEVELS)))
    assert [str(c.origin.layer) for c in exp.layers] == [
        "rc",
        "env",
        "env",
        "env",
        "env",
        "assignment",
        "override",
    ]
    assert exp.value == LEVELS.index("override")
    assert "<- wins" in str(exp)


def test_rc_files_on_the_right_override_those_on_the_left(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("[global]\nfloatX = float32\ndevice = cuda\n")
    b.write_text("[global]\nfloatX = float16\n")
    cfg = modecfg.load(env={"THEANORC": f"{a}{os.pathsep}{b}"})
    assert cfg.floatX == "float16" and cfg.origin("floatX").source == str(b)
    assert cfg.device == "cuda" and cfg.origin("device").source == str(a)


def test_rc_variables_more_specific_win(tmp_path: Path) -> None:
    files = {}
    chain = [
        ("THEANORC", "float16"),
        ("AESARARC", "float32"),
        ("PYTENSORRC", "float16"),
        ("MODECFGRC", "float64"),
    ]
    for var, value in chain:
        files[var] = tmp_path / var
        files[var].write_text(
            f"[global]\nfloatX = {value}\nmode = FAST_COMPILE\n"
            if var == "THEANORC"
            else f"[global]\nfloatX = {value}\n"
        )
    env = {var: str(path) for var, path in files.items()}
    cfg = modecfg.load(env=env)
    assert cfg.floatX == "float64"
    assert cfg.mode == "FAST_COMPILE"  # only THEANORC sets it
    assert [c.origin.source for c in cfg.layers("floatX")] == [str(files[v]) for v, _ in chain]
    # AESARARC between THEANORC and PYTENSORRC, as the README's table says
    del env["PYTENSORRC"], env["MODECFGRC"]
    assert modecfg.load(env=env).floatX == "float32"


def test_default_rc_files_are_read_from_home_in_order(tmp_path: Path) -> None:
    (tmp_path / ".theanorc").write_text("[global]\nfloatX = float32\ndevice = cuda\n")
    (tmp_path / ".pytensorrc").write_text("[global]\nfloatX = float16\n")
    (tmp_path / ".modecfg.toml").write_text("[traceback]\nlimit = 2\n")
    cfg = modecfg.load(env={"HOME": str(tmp_path)})
    assert cfg.floatX == "float16" and cfg.device == "cuda" and cfg.traceback.limit == 2
    assert cfg.sources == (
        str(tmp_path / ".theanorc"),
        str(tmp_path / ".pytensorrc"),
        str(tmp_path / ".modecfg.toml"),
    )


def test_aesararc_is_a_default_file_between_theanorc_and_pytensorrc(tmp_path: Path) -> None:
    (tmp_path / ".theanorc").write_text("[global]\nfloatX = float16\ndevice = cuda\n")
    (tmp_path / ".aesararc").write_text("[global]\nfloatX = float32\n")
    cfg = modecfg.load(env={"HOME": str(tmp_path)})
    assert (cfg.floatX, cfg.device) == ("float32", "cuda")
    assert cfg.sources == (str(tmp_path / ".theanorc"), str(tmp_path / ".aesararc"))
    (tmp_path / ".pytensorrc").write_text("[global]\nfloatX = float64\n")
    assert modecfg.load(env={"HOME": str(tmp_path)}).floatX == "float64"


def test_theanorc_txt_is_a_default_file_too(tmp_path: Path) -> None:
    (tmp_path / ".theanorc.txt").write_text("[global]\nfloatX = float32\n")
    assert modecfg.load(env={"HOME": str(tmp_path)}).floatX == "float32"


def test_a_set_rc_variable_replaces_the_default_files(tmp_path: Path) -> None:
    (tmp_path / ".theanorc").write_text("[global]\nfloatX = float32\n")
    assert modecfg.load(env={"HOME": str(tmp_path), "THEANORC": ""}).floatX == "float64"


def test_rc_path_lists_expand_tilde_skip_empty_entries_and_accept_relative_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rc").write_text("[global]\nfloatX = float32\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "local.rc").write_text("[global]\ndevice = cuda\n")
    monkeypatch.chdir(tmp_path)
    cfg = modecfg.load(
        env={"HOME": str(tmp_path), "THEANORC": f"{os.pathsep}~/rc{os.pathsep}{os.pathsep}sub/local.rc"}
    )
    assert cfg.floatX == "float32" and cfg.device == "cuda"
    assert cfg.origin("device").source == str(sub / "local.rc")


def test_a_named_rc_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(modecfg.RcFileError, match=r"named by THEANORC\) does not exist"):
        modecfg.load(env={"THEANORC": str(tmp_path / "missing")})


def test_rc_text_pasted_into_the_variable_is_read_as_a_file() -> None:
    cfg = modecfg.load(env={"THEANORC": "[global]\nfloatX = float32\n[traceback]\nlimit = 3\n"})
    assert cfg.floatX == "float32" and cfg.traceback.limit == 3
    assert cfg.origin("traceback.limit") == modecfg.Origin(Layer.RC, "$THEANORC (inline text)", 4)


def test_later_duplicates_in_one_variable_win() -> None:
    cfg = modecfg.load(env={"THEANO_FLAGS": "floatX=float64,floatX=float32"})
    assert cfg.floatX == "float32"
    assert [c.raw for c in cfg.layers("floatX")] == ["float64", "float32"]


def test_dotted_and_double_underscore_spellings_mix_freely() -> None:
    with pytest.warns(modecfg.ObsoleteFlagWarning, match="dnn.conv__algo_fwd is obsolete"):
        cfg = modecfg.load(
            env={"THEANO_FLAGS": "DebugMode__check_strides=1,NanGuardMode.big=5,dnn.conv__algo_fwd=time_once"}
        )
    assert cfg.DebugMode.check_strides == 1
    assert cfg["NanGuardMode__big"] == 5.0


def test_env_keys_are_case_sensitive() -> None:
    with pytest.raises(modecfg.UnknownFlagError, match="did you mean floatX"):
        modecfg.load(env={"PYTENSOR_FLAGS": "floatx=float32"})


def test_assignments_of_load_are_the_assignment_layer() -> None:
    cfg = modecfg.load(env={"MODECFG_FLAGS": "floatX=float16"}, assignments={"floatX": "float32"})
    assert cfg.floatX == "float32"
    assert cfg.origin("floatX").layer is Layer.ASSIGNMENT


def test_load_with_env_none_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODECFG_FLAGS", "floatX=float16")
    assert modecfg.load().floatX == "float16"


def test_booleans_in_every_spelling() -> None:
    words = {"True": True, "False": False, "true": True, "false": False, "1": True, "0": False,
             "yes": True, "no": False, "on": True, "off": False, "YES": True, "Off": False}  # fmt: skip
    for word, expected in words.items():
        assert modecfg.load(env={"THEANO_FLAGS": f"allow_gc={word}"}).allow_gc is expected, word


def test_numbers_in_the_forms_people_write() -> None:
    cfg = modecfg.load(
        env={"THEANO_FLAGS": "NanGuardMode.big=.75e3,traceback.limit=-1,optdb.position_cutoff=inf"}
    )
    assert cfg.NanGuardMode.big == 750.0
    assert cfg.traceback.limit == -1
    assert cfg.optdb.position_cutoff == float("inf")
