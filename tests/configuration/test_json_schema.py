"""`modecfg schema`: the JSON Schema editors check ~/.modecfg.toml with agrees with modecfg."""

from __future__ import annotations

import io
import json
import tomllib
from pathlib import Path

import pytest

import modecfg
from modecfg.cli import main
from modecfg.configuration.flags import FLAGS
from modecfg.configuration.schema import json_schema

jsonschema = pytest.importorskip("jsonschema")


@pytest.fixture(scope="module")
def validator() -> object:
    out = io.StringIO()
    assert main(["schema"], out, io.StringIO()) == 0
    schema = json.loads(out.getvalue())
    assert schema == json.loads(json.dumps(json_schema()))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


GOOD = """
floatX = "float32"
mode = "NanGuardMode"
linker = "numba"
allow_gc = false
[traceback]
limit = -1
[NanGuardMode]
big = 1e8
"""


def test_a_good_rc_file_is_valid_and_modecfg_reads_it_alike(validator: object, tmp_path: Path) -> None:
    assert list(validator.iter_errors(tomllib.loads(GOOD))) == []  # type: ignore[attr-defined]
    rc = tmp_path / "rc.toml"
    rc.write_text(GOOD)
    assert modecfg.diagnose(env={}, rc_files=[rc]).ok


@pytest.mark.parametrize(
    "text",
    [
        'floatX = "float33"',  # not a choice
        'mode = "FAST_RUNN"',
        "allow_gc = 1",  # TOML values are typed
        '[traceback]\nlimit = "-1"',
        'floatx = "float32"',  # unknown name
        "[tracebak]\nlimit = 1",  # unknown table
    ],
)
def test_what_modecfg_refuses_the_schema_refuses(validator: object, tmp_path: Path, text: str) -> None:
    assert list(validator.iter_errors(tomllib.loads(text)))  # type: ignore[attr-defined]
    rc = tmp_path / "rc.toml"
    rc.write_text(text)
    assert not modecfg.diagnose(env={}, rc_files=[rc]).ok


def test_every_flag_is_in_the_schema_with_its_doc(validator: object) -> None:
    schema = json_schema()
    titles = set()

    def walk(node: dict) -> None:  # type: ignore[type-arg]
        for prop in node.get("properties", {}).values():
            if "$ref" in prop:
                walk(schema["$defs"][prop["$ref"].rsplit("/", 1)[1]])
            else:
                titles.add(prop["title"])
                assert prop["description"]

    walk(schema)
    assert titles == set(FLAGS)
