"""``modecfg migrate`` never changes what a value means: the migrated file, read by another user,
gives what the original gives that user, or the flag is refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modecfg
from modecfg.configuration.migrate import migrate_file, migrate_flags
from modecfg.configuration.partition import OWN_KEYS, PYTENSOR_KEYS
from modecfg.errors import RcFileError

ORIGINAL = """\
[global]
base_compiledir = /scratch/%(user)s/theano
floatX = float32
[compile]
timeout = 100
"""
PORTABLE = """\
[global]
base_compiledir = ~/theano_%%x
compiledir_format = c_%(platform)s
"""


def _read(path: Path, user: str, home: Path) -> dict[str, object]:
    cfg = modecfg.load(env={"USER": user, "HOME": str(home)}, rc_files=[str(path)])
    return {name: cfg[name] for name in ("base_compiledir", "compiledir_format", "floatX", "compile.timeout")}


@pytest.mark.parametrize("fmt", ["ini", "toml"])
def test_a_migrated_file_means_for_every_reader_what_the_original_means(tmp_path: Path, fmt: str) -> None:
    original = tmp_path / "theanorc"
    original.write_text(PORTABLE)
    migrated = tmp_path / f"new.{fmt}"
    migration = migrate_file(original)
    migrated.write_text(migration.render(fmt))
    assert migration.refused(fmt) == [] and migration.errors == []
    for user, home in [("alice", tmp_path / "a"), ("bob", tmp_path / "b")]:
        assert _read(migrated, user, home) == _read(original, user, home)
    assert "~/theano_" in migrated.read_text()  # the home of whoever reads it, not of who migrated


def test_per_user_interpolation_stays_in_ini_and_is_refused_elsewhere_with_why(tmp_path: Path) -> None:
    original = tmp_path / "theanorc"
    original.write_text(ORIGINAL)
    migration = migrate_file(original)
    ini = tmp_path / "new.ini"
    ini.write_text(migration.render("ini"))
    for user in ("alice", "bob"):
        assert _read(ini, user, tmp_path) == _read(original, user, tmp_path)
        assert str(_read(ini, user, tmp_path)["base_compiledir"]) == f"/scratch/{user}/theano"
    for fmt in ("toml", "flags"):
        (refused,) = migration.refused(fmt)
        assert isinstance(refused, RcFileError) and refused.origin.line == 2
        assert str(refused).startswith(
            f"{original}:2: base_compiledir = /scratch/%(user)s/theano: %(user)s is INI"
        )
        assert "modecfg migrate FILE --to ini" in str(refused)
        assert "base_compiledir" not in migration.render(fmt) and "float32" in migration.render(fmt)


def test_a_percent_meant_literally_is_doubled_in_ini_only(tmp_path: Path) -> None:
    migration = migrate_flags("base_compiledir=/data/100%_mine,compiledir_format=x_%(platform)s")
    assert "base_compiledir = /data/100%%_mine" in migration.render("ini")
    assert 'base_compiledir = "/data/100%_mine"' in migration.render("toml")
    assert "base_compiledir=/data/100%_mine" in migration.render("flags")
    path = tmp_path / "new.ini"
    path.write_text(migration.render("ini"))
    cfg = modecfg.load(env={"HOME": str(tmp_path)}, rc_files=[str(path)])
    assert str(cfg.base_compiledir) == "/data/100%_mine" and cfg.compiledir_format == "x_%(platform)s"


def test_per_user_interpolation_in_any_section_still_reads_per_user(tmp_path: Path) -> None:
    """Not only [global]: a section's value with %(user)s stays interpolation in INI (issue 59)."""
    original = tmp_path / "theanorc"
    original.write_text("[global]\nfloatX = float32\n[NanGuardMode]\ndump_dir = /scratch/%(user)s/dumps\n")
    migration = migrate_file(original)
    ini = tmp_path / "new.ini"
    ini.write_text(migration.render("ini"))
    assert "dump_dir = /scratch/%(user)s/dumps" in ini.read_text()
    for user in ("alice", "bob"):
        cfg = modecfg.load(env={"USER": user, "HOME": str(tmp_path)}, rc_files=[str(ini)])
        assert str(cfg["NanGuardMode.dump_dir"]) == f"/scratch/{user}/dumps"
    for fmt in ("toml", "flags"):
        (refused,) = migration.refused(fmt)
        assert refused.origin.line == 4 and "NanGuardMode.dump_dir" in str(refused)
        assert "dump_dir" not in migration.render(fmt)


@pytest.mark.parametrize("key", [*PYTENSOR_KEYS, *OWN_KEYS])
@pytest.mark.parametrize("fmt", ["ini", "toml", "flags"])
def test_a_compiledir_format_key_is_kept_for_the_reader_to_fill(
    tmp_path: Path, key: str, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 60: %(cpu_features)s became this host's hash and %(job)s 'nojob' in every format.
    Each key is kept as written: whoever reads the file fills it, on their host and job."""
    original = tmp_path / "theanorc"
    original.write_text(f"[global]\ncompiledir_format = cache_%({key})s\n")
    migration = migrate_file(original)
    assert migration.errors == [] and migration.refused(fmt) == [] and migration.changed == []
    text = migration.render(fmt)
    assert f"%({key})s" in text.replace("%%", "%")
    if fmt == "flags":

        def read(path: Path) -> object:
            return modecfg.load(env={"THEANO_FLAGS": text.strip()}, rc_files=[])["compiledir_format"]
    else:
        migrated = tmp_path / f"new.{fmt}"
        migrated.write_text(text)

        def read(path: Path) -> object:
            return modecfg.load(env={}, rc_files=[str(path)])["compiledir_format"]

    for job in ("101", "202"):  # two jobs of a cluster read the same file
        monkeypatch.setenv("SLURM_JOB_ID", job)
        assert read(tmp_path / f"new.{fmt}") == read(original)


# -- each format's text, exactly (make mutate: the survivors of config/migrate) ----------------


def test_toml_and_ini_write_each_kind_of_value_as_their_readers_take_it(tmp_path: Path) -> None:
    import tomllib

    migration = migrate_flags(
        "optdb.position_cutoff=inf,NanGuardMode.nan_is_error=False,"
        "print_global_stats=True,optdb.max_use_ratio=2.5,traceback.limit=12"
    )
    assert migration.errors == []
    toml = migration.render("toml")
    assert not toml.startswith("\n") and toml.endswith("\n") and not toml.endswith("\n\n")
    assert "position_cutoff = inf\n" in toml and "max_use_ratio = 2.5\n" in toml
    assert "nan_is_error = false\n" in toml and "print_global_stats = true\n" in toml
    assert "limit = 12\n" in toml
    read = tomllib.loads(toml)
    assert read["print_global_stats"] is True and read["NanGuardMode"]["nan_is_error"] is False
    assert read["optdb"]["position_cutoff"] == float("inf") and read["optdb"]["max_use_ratio"] == 2.5
    below = migrate_flags("optdb.position_cutoff=-inf").render("toml")
    assert (
        below == "[optdb]\nposition_cutoff = -inf\n" and tomllib.loads(below)["optdb"]["position_cutoff"] < 0
    )
    ini = migration.render("ini")
    assert (
        ini.startswith("[global]\n")
        and "nan_is_error = False\n" in ini
        and "print_global_stats = True\n" in ini
    )
    path = tmp_path / "new.ini"
    path.write_text(ini)
    cfg = modecfg.load(env={}, rc_files=[str(path)])
    assert cfg.print_global_stats is True and cfg["NanGuardMode.nan_is_error"] is False


def test_global_comes_first_however_the_flags_are_declared() -> None:
    from modecfg.configuration.flags import FLAGS

    names = list(FLAGS)
    sectioned = next(n for n in names if "." in n)
    late_global = [n for n in names if "." not in n and names.index(n) > names.index(sectioned)][-1]
    assert names.index(late_global) > names.index(sectioned)  # (the case this test is about)
    value = FLAGS[late_global].choices()[-1] if FLAGS[late_global].choices() else "1"
    migration = migrate_flags(f"{sectioned}=100,{late_global}={value}")
    assert migration.errors == []
    assert migration.render("ini").startswith("[global]\n")
    assert migration.render("toml").startswith(f"{late_global} = ")


def test_a_section_only_toml_starts_with_its_header(tmp_path: Path) -> None:
    toml = migrate_flags("NanGuardMode.big=1e5").render("toml")
    assert toml == "[NanGuardMode]\nbig = 100000.0\n"


def test_the_refusal_says_all_of_why_and_where(tmp_path: Path) -> None:
    original = tmp_path / "theanorc"
    original.write_text("[global]\nbase_compiledir = /scratch/%(user)s/theano\n")
    (refused,) = migrate_file(original).refused("toml")
    assert str(refused) == (
        f"{original}:2: base_compiledir = /scratch/%(user)s/theano: %(user)s is INI interpolation, "
        "filled when the file is read (each user's or process's own value); a TOML file or a flag "
        "string has none, so it would be one literal value for everyone: left out. Keep it in an INI "
        "rc file (modecfg migrate FILE --to ini), or write the value it should be"
    )


def test_a_missing_file_says_who_named_it_and_a_toml_file_is_read_as_toml(tmp_path: Path) -> None:
    (error,) = migrate_file(tmp_path / "gone").errors
    assert str(error) == f"rc file {tmp_path / 'gone'} (named by the command line) does not exist"
    toml = tmp_path / "rc.toml"
    toml.write_text('floatX = "float32"\n[NanGuardMode]\nbig = 1e5\n')
    migration = migrate_file(toml)
    assert migration.errors == [] and migration.flags == {"floatX": "float32", "NanGuardMode.big": 1e5}


def test_a_flag_string_is_read_as_the_variable_it_names() -> None:
    (note,) = migrate_flags("lib.cnmem=.8").dropped
    assert note.origin.source == "THEANO_FLAGS" and note.origin.layer is modecfg.Layer.ENV
    (note,) = migrate_flags("lib.cnmem=.8", source="--flags").dropped
    assert note.origin.source == "--flags"


# -- what INI cannot hold ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml_value", "held"),
    [
        ('"\\"-O3\\""', True),  # wrapped whole in quotes: INI's reader takes a pair off, so one more
        ("\"'-O3'\"", True),
        ('"-O3 -Wall"', True),
        ('"-O3 # fast"', False),  # " #" starts a comment in INI: the value read would be "-O3"
        ('"a\\nb"', False),  # a line break
        ('"#x"', False),
    ],
)
def test_a_value_ini_cannot_hold_is_refused_in_ini_never_cut(
    tmp_path: Path, toml_value: str, held: bool
) -> None:
    """``migrate --to ini`` wrote ``cxxflags = -O3 # fast`` (read back as ``-O3``) and a
    ``"-O3"`` without the quotes the reader takes off: silently another value."""
    original = tmp_path / "rc.toml"
    original.write_text(f"[gcc]\ncxxflags = {toml_value}\n")
    expected = modecfg.load(env={}, rc_files=[str(original)])["gcc.cxxflags"]
    migration = migrate_file(original)
    ini = tmp_path / "new.ini"
    ini.write_text(migration.render("ini"))
    if held:
        assert migration.refused("ini") == []
        assert modecfg.load(env={}, rc_files=[str(ini)])["gcc.cxxflags"] == expected
    else:
        (refused,) = migration.refused("ini")
        assert isinstance(refused, RcFileError) and refused.origin.line == 2
        assert str(refused).startswith(f"{original}:2: gcc.cxxflags = {expected!r}: an INI value cannot")
        assert "--to toml" in str(refused) and "cxxflags" not in ini.read_text()
        assert "[gcc]" not in ini.read_text()  # no section left empty
    assert migration.refused("toml") == []


_ANY = st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("%#;\"'\\\n []=")


@settings(max_examples=200, deadline=None)
@given(value=st.text(_ANY, max_size=20))
def test_any_string_migrated_to_ini_reads_back_as_it_was_or_is_refused(value: str) -> None:
    from modecfg.configuration.rcformats import ini_text, read_ini

    if "\x00" in value:
        return
    text = ini_text(value)
    if text is None:  # what INI cannot hold, and only that
        line_break = len(f"x{value}x".splitlines()) > 1
        assert line_break or "#" in value or value != value.strip(), value
        return
    assert [s.raw for s in read_ini(f"[gcc]\ncxxflags = {text}\n", "rc")] == [value]
