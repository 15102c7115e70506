"""Flag strings: Theano's rules, the quirks of REALWORLD.md, and property tests."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from pytensor.configparser import parse_config_string  # the oracle: imported once, not in a timed example

import modecfg
from modecfg.configuration.flagstring import format_flags, parse, parse_flags, unwrap_quotes
from modecfg.configuration.origin import Layer
from modecfg.errors import ConfigError, FlagSyntaxError, FlagValueError


def test_simple_items_split_on_commas() -> None:
    assert parse_flags("floatX=float32,device=cuda,optimizer=None") == {
        "floatX": "float32",
        "device": "cuda",
        "optimizer": "None",
    }


def test_an_unquoted_comma_splits_and_the_rest_must_be_an_item() -> None:
    with pytest.raises(FlagSyntaxError, match="'-O1' has no '='"):
        parse_flags("blas.ldflags=-lblas -Wl,-O1")


def test_first_equals_splits_and_later_ones_stay_in_the_value() -> None:
    assert parse_flags("gcc.cxxflags=-DA=1 -DB=2") == {"gcc.cxxflags": "-DA=1 -DB=2"}


def test_spaces_around_items_names_and_values_are_dropped() -> None:
    assert parse_flags(" floatX = float32 ,  device=cuda ") == {"floatX": "float32", "device": "cuda"}


def test_empty_items_and_a_leading_comma_are_skipped() -> None:
    assert parse_flags(",floatX=float32,,, ,") == {"floatX": "float32"}
    assert parse_flags("") == {}
    assert parse_flags("   ") == {}


def test_empty_values_are_kept() -> None:
    assert parse_flags("cxx=,blas.ldflags=") == {"cxx": "", "blas.ldflags": ""}


def test_later_duplicates_win_and_all_are_kept_in_order() -> None:
    settings_ = parse("floatX=float64,floatX=float32", source="THEANO_FLAGS")
    assert [s.raw for s in settings_] == ["float64", "float32"]
    assert parse_flags("floatX=float64,floatX=float32") == {"floatX": "float32"}


def test_settings_carry_their_variable_as_origin() -> None:
    (s,) = parse("floatX=float32", source="PYTENSOR_FLAGS")
    assert s.origin.layer is Layer.ENV
    assert s.origin.source == "PYTENSOR_FLAGS"
    assert s.origin.line is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("""blas.ldflags='-L/opt/a,b -lmkl'""", "-L/opt/a,b -lmkl"),
        ('''blas.ldflags="-L'/opt/x y' -lmkl"''', "-L'/opt/x y' -lmkl"),
        ("""blas.ldflags='-L"/opt/x y" -lmkl'""", '-L"/opt/x y" -lmkl'),
        (
            """blas.ldflags=-L"C:/Program Files (x86)/Intel" -lmkl_core""",
            "-LC:/Program Files (x86)/Intel -lmkl_core",
        ),
        ('''gcc.cxxflags=\\"-DX\\"''', '"-DX"'),
        ('''gcc.cxxflags="a\\"b"''', 'a"b'),
        ("gcc.cxxflags=-Wl\\,-rpath=/x", "-Wl,-rpath=/x"),
    ],
)
def test_quotes_and_escapes(text: str, expected: str) -> None:
    key = text.split("=", 1)[0]
    assert parse_flags(text)[key] == expected


def test_quoted_blanks_at_the_ends_of_a_value_are_kept() -> None:
    assert parse_flags("gcc.cxxflags=' -O3 '") == {"gcc.cxxflags": " -O3 "}


def test_windows_set_leaves_the_whole_list_quoted_and_we_unwrap_it() -> None:
    assert parse_flags('"floatX=float32,device=gpu"') == {"floatX": "float32", "device": "gpu"}
    assert parse_flags("'floatX=float32,device=gpu'") == {"floatX": "float32", "device": "gpu"}


def test_two_quoted_items_are_not_mistaken_for_a_wrapped_list() -> None:
    assert parse_flags('"floatX=float32","device=cuda"') == {"floatX": "float32", "device": "cuda"}
    assert unwrap_quotes('"a=1","b=2"') == '"a=1","b=2"'


def test_windows_paths_keep_their_backslashes() -> None:
    assert parse_flags(r"base_compiledir=C:\Users\me\theano") == {"base_compiledir": r"C:\Users\me\theano"}


@pytest.mark.parametrize("path", [r"C:\Xilinx\lib", r"D:\x\Y z", r"\\server\share"])
def test_a_double_quoted_windows_path_keeps_every_backslash_that_escapes_nothing(path: str) -> None:
    # Inside "...", only \" and \\ are escapes: C:\Xilinx is a path, not an escaped X.
    quoted = '"' + path.replace("\\\\", "\\\\\\\\") + '"'
    assert parse_flags(f"base_compiledir={quoted}") == {"base_compiledir": path}
    assert unwrap_quotes(quoted) == path


def test_an_escaped_blank_at_the_end_of_a_value_is_kept_and_a_plain_one_dropped() -> None:
    assert parse_flags("gcc.cxxflags=-O3\\ ,floatX=float32 ") == {"gcc.cxxflags": "-O3 ", "floatX": "float32"}
    assert parse_flags("gcc.cxxflags=\\ -O3") == {"gcc.cxxflags": " -O3"}


def test_blanks_after_a_closing_quote_are_dropped() -> None:
    assert parse_flags("gcc.cxxflags='-O3' \t,floatX=\"float32\"  ") == {
        "gcc.cxxflags": "-O3",
        "floatX": "float32",
    }


def test_hash_is_an_ordinary_character() -> None:
    # shlex treated '#' as a comment and silently dropped the rest of the string
    assert parse_flags("gcc.cxxflags=-DX#1,floatX=float32") == {"gcc.cxxflags": "-DX#1", "floatX": "float32"}


def test_semicolons_arrows_and_placeholders_are_plain_text() -> None:
    assert parse_flags("a=x;y,b=a->b,c=%(user)s") == {"a": "x;y", "b": "a->b", "c": "%(user)s"}


def test_an_item_without_equals_is_an_error_naming_the_variable() -> None:
    with pytest.raises(FlagSyntaxError) as info:
        parse("float32,device=gpu", source="THEANO_FLAGS")
    msg = str(info.value)
    assert "THEANO_FLAGS" in msg and "'float32'" in msg and "has no '='" in msg
    assert "did you mean floatX=float32?" in msg
    assert info.value.origin is not None and info.value.origin.source == "THEANO_FLAGS"


@pytest.mark.parametrize("flags", ["floatX=float32, =float32", "=float32", "floatX=float32,=float32"])
def test_an_item_without_a_name_is_an_error(flags: str) -> None:
    with pytest.raises(FlagSyntaxError, match="no name before '='") as info:
        parse(flags, source="THEANO_FLAGS")
    assert str(info.value) == "THEANO_FLAGS: item '=float32' has no name before '='"
    assert info.value.origin == modecfg.Origin(Layer.ENV, "THEANO_FLAGS")


@pytest.mark.parametrize("wrapped", ['""', "''", " '' "])
def test_two_quotes_and_nothing_else_are_no_flags(wrapped: str) -> None:
    # `set THEANO_FLAGS=""` on Windows leaves the two quotes in the variable.
    assert unwrap_quotes(wrapped) == ""
    assert parse_flags(wrapped) == {}


def test_single_quotes_wrapping_a_string_keep_its_backslashes() -> None:
    assert unwrap_quotes("'C:\\\\x\\\"'") == 'C:\\\\x\\"'
    assert unwrap_quotes('"C:\\\\x\\""') == 'C:\\x"'


def test_an_escaped_quote_inside_a_single_quoted_list_reaches_the_parser_escaped() -> None:
    # Windows `set THEANO_FLAGS='gcc.cxxflags=-DNAME=\"v\",floatX=float32'`: the single quotes
    # wrap the list; inside them \" is still the parser's escaped quote.
    text = "'gcc.cxxflags=-DNAME=\\\"v\\\",floatX=float32'"
    assert parse_flags(text) == {"gcc.cxxflags": '-DNAME="v"', "floatX": "float32"}


def test_a_word_that_is_no_flag_s_choice_gets_no_guess() -> None:
    with pytest.raises(FlagSyntaxError) as info:
        parse_flags("nonsense", source="MODECFG_FLAGS")
    assert str(info.value) == (
        "MODECFG_FLAGS: item 'nonsense' has no '=' (each item is name=value, items are separated by commas)"
    )


def test_an_unnamed_string_is_called_flags_in_messages_and_origins() -> None:
    (setting,) = parse("floatX=float32")
    assert setting.origin.source == "<flags>"
    for call in (parse, parse_flags):
        with pytest.raises(FlagSyntaxError, match=r"^<flags>: item 'x' has no '='"):
            call("x")


def test_parse_flags_names_its_source_in_errors() -> None:
    with pytest.raises(FlagSyntaxError, match=r"^THEANO_FLAGS: unterminated ' quote"):
        parse_flags("cxx='g++", source="THEANO_FLAGS")


@pytest.mark.parametrize("text", ['cxx="/usr/bin/g++', "cxx='g++", 'a=1,b="x\\"'])
def test_an_unterminated_quote_is_an_error(text: str) -> None:
    with pytest.raises(FlagSyntaxError, match="unterminated"):
        parse(text, source="PYTENSOR_FLAGS")


def test_an_unterminated_quote_says_where_it_opens_and_how_to_fix_it() -> None:
    with pytest.raises(FlagSyntaxError) as info:
        parse("floatX=float32,cxx='g++", source="PYTENSOR_FLAGS")
    assert str(info.value) == (
        "PYTENSOR_FLAGS: unterminated ' quote at position 20 in \"floatX=float32,cxx='g++\"; "
        "close it or escape it with a backslash"
    )
    assert info.value.origin == modecfg.Origin(Layer.ENV, "PYTENSOR_FLAGS")


def test_format_quotes_only_what_needs_it() -> None:
    text = format_flags({"floatX": "float32", "blas.ldflags": "-Wl,-rpath=/x -lblas", "cxx": ""})
    assert text == 'floatX=float32,blas.ldflags="-Wl,-rpath=/x -lblas",cxx='
    assert parse_flags(text) == {"floatX": "float32", "blas.ldflags": "-Wl,-rpath=/x -lblas", "cxx": ""}


# -- properties ------------------------------------------------------------------------

_KEY = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}((\.|__)[A-Za-z_][A-Za-z0-9_]{0,8}){0,2}", fullmatch=True)


@settings(max_examples=300)
@given(st.text(max_size=80))
def test_the_parser_raises_nothing_but_config_errors(text: str) -> None:
    try:
        parse(text, source="THEANO_FLAGS")
    except ConfigError:
        pass


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(list("ab=,'\"\\ #x.")), max_size=40))
def test_the_parser_raises_nothing_but_config_errors_on_quote_heavy_text(text: str) -> None:
    try:
        parse(text, source="THEANO_FLAGS")
    except ConfigError:
        pass


@settings(max_examples=300)
@given(st.dictionaries(_KEY, st.text(max_size=30), max_size=6))
def test_parse_of_format_is_identity(flags: dict[str, str]) -> None:
    assert parse_flags(format_flags(flags)) == flags


def _theano_parse(text: str) -> dict[str, str]:
    """The installed PyTensor's own parser (``configparser.parse_config_string``, Theano's
    algorithm): pairs split on commas outside quotes (``shlex``, POSIX rules), each pair
    stripped, then split at its first ``=``, the key and the value kept as they are. Ours also
    strips blanks around ``=`` (people write ``floatX = float32``), so the cases below have
    none there; where the two differ on purpose is tested by the real-world cases above."""
    return dict(parse_config_string(text, issue_warnings=False))


# Quoted blanks at the ends of a value are kept by us and stripped by Theano: left out.
_PLAIN = st.text(alphabet=st.sampled_from(list("abcXY01._-/ ()")), min_size=1, max_size=12).filter(
    lambda v: v == v.strip()
)
_VALUE = st.one_of(
    _PLAIN,
    _PLAIN.map(lambda v: f"'{v}'"),
    _PLAIN.map(lambda v: f'"{v}"'),
    st.tuples(_PLAIN, _PLAIN).map(lambda p: f"{p[0]}'{p[1]},x'"),
)


@settings(max_examples=300)
@given(st.lists(st.tuples(_KEY, _VALUE), max_size=5), st.sampled_from(["", ",", " ,"]))
def test_we_read_what_theano_read_where_theano_was_right(items: list[tuple[str, str]], lead: str) -> None:
    text = lead + ",".join(f"{k}={v}" for k, v in items)
    assume(not (text.strip()[:1] in "'\"" and text.strip()))  # whole-string quotes: ours unwrap
    assume(all(v.strip() for _, v in items))
    assert parse_flags(text) == _theano_parse(text)


# -- values that survive every hand-off (issue 32) --------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=40)
)
@example("\x0c/.")  # normalised to "/tmp/\x0c": whitespace at the end only after normalisation
def test_a_path_reaches_a_worker_and_pytensor_exactly(text: str) -> None:
    """base_compiledir='.../cache#2' reached PyTensor as '.../cache' (its parser reads '#' as a
    comment), and to_flags() wrote spaces and newlines unquoted: a worker read another value."""
    value = "/tmp/" + text
    cfg = modecfg.load(env={}, assignments={"base_compiledir": value})
    path = str(cfg.base_compiledir)  # normalised: "/tmp/\x0c/." is "/tmp/\x0c"
    if path != path.strip() or "\r" in path:
        return  # PyTensor's parser strips the pair; carriage returns are not path text
    flags = cfg.to_flags()
    again = modecfg.load(env={"MODECFG_FLAGS": flags})
    assert str(again.base_compiledir) == str(cfg.base_compiledir)
    assert parse_config_string(flags)["base_compiledir"] == str(cfg.base_compiledir)


@pytest.mark.parametrize("name", ["floatX", "traceback.limit", "profile", "NanGuardMode.big", "linker",
                                  "gcc.cxxflags", "blas.ldflags", "device"])  # fmt: skip
def test_every_kind_of_flag_round_trips_through_to_flags(name: str) -> None:
    from modecfg.configuration.flags import FLAGS

    samples = {"floatX": "float32", "traceback.limit": -1, "profile": True, "NanGuardMode.big": 1.5e12,
               "linker": "c|py", "gcc.cxxflags": "-O3 -march=native -DX='a b'",
               "blas.ldflags": "-lopenblas -lm", "device": "cuda0"}  # fmt: skip
    assert name in FLAGS
    cfg = modecfg.load(env={}, assignments={name: samples[name]})
    again = modecfg.load(env={"MODECFG_FLAGS": cfg.to_flags()})
    assert again[name] == cfg[name]


def _flag_schemas() -> list[tuple[str, dict[str, Any]]]:
    """Every flag with its JSON schema (sections' flags by dotted name)."""
    from modecfg.configuration.schema import json_schema

    schema = json_schema()
    found = []
    for name, prop in schema["properties"].items():
        ref = prop.get("$ref")
        if ref:
            section = schema["$defs"][ref.rsplit("/", 1)[1]]
            found += [
                (f"{name}.{key}", sub) for key, sub in section["properties"].items() if "$ref" not in sub
            ]
        else:
            found.append((name, prop))
    return found


def _values(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return st.sampled_from([v for v in prop["enum"] if v is not None])
    kinds = prop.get("type") or [t.get("type") for t in prop.get("anyOf", [])]
    kinds = [kinds] if isinstance(kinds, str) else [k for k in kinds if k and k != "null"]
    kind = kinds[0] if kinds else "string"
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(prop.get("minimum", -(10**6)), prop.get("maximum", 10**6))
    if kind == "number":
        low = prop.get("exclusiveMinimum", prop.get("minimum", -1e12))
        numbers = st.floats(low, prop.get("maximum", 1e12), allow_nan=False, allow_infinity=False)
        return numbers.filter(lambda v: v > low) if "exclusiveMinimum" in prop else numbers
    characters = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r")
    return st.text(characters, max_size=20).map(str.strip)  # spaces, '#', quotes, newlines


FLAG_SCHEMAS = _flag_schemas()


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_every_flag_s_values_round_trip_through_to_flags(data: st.DataObject) -> None:
    """For every flag and any value it accepts, a worker reading to_flags() gets the same value
    (issue 32: a value with a space, a newline or '#' read back as another one)."""
    name, prop = data.draw(st.sampled_from(FLAG_SCHEMAS), label="flag")
    value = data.draw(_values(prop), label="value")
    try:
        cfg = modecfg.load(env={}, assignments={name: value})
    except ConfigError:
        assume(False)  # a value the flag refuses (a check beyond its schema): nothing to carry
        return
    again = modecfg.load(env={"MODECFG_FLAGS": cfg.to_flags()})
    assert again[name] == cfg[name], (name, value, cfg.to_flags())


def test_a_path_naming_no_user_is_a_flag_value_error() -> None:
    """Found by the round trip above: base_compiledir='~0' raised pathlib's bare RuntimeError."""
    from modecfg.errors import FlagValueError

    with pytest.raises(FlagValueError, match="starts with ~ and names no user or home directory"):
        modecfg.load(env={}, assignments={"base_compiledir": "~no_such_user_here"})


def test_a_quoted_value_holding_name_equals_is_a_value_not_a_second_flag() -> None:
    """Hypothesis found it: base_compiledir='/tmp/ device=' came back from to_flags() refused as
    "looks like a second flag"; only unquoted text is a comma forgotten."""
    cfg = modecfg.load(env={"MODECFG_FLAGS": "base_compiledir='/tmp/ device=x'"})
    assert str(cfg.base_compiledir) == "/tmp/ device=x"
    with pytest.raises(FlagValueError, match="looks like a second flag"):
        modecfg.load(env={"MODECFG_FLAGS": "base_compiledir=/tmp/x device=cuda"})
    with pytest.raises(FlagValueError, match="looks like a second flag"):
        modecfg.load(env={"MODECFG_FLAGS": "'base_compiledir=/tmp/x device=cuda'"})  # all of it quoted
