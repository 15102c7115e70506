"""``modecfg migrate SCRIPT.py --write`` never changes what it does not rewrite: a property test
over scripts with every line end Python knows (and the characters ``str.splitlines`` also breaks
at, which are text to Python), a BOM, an encoding cookie, a shebang and a docstring, non-ASCII
text before a name; the file's bytes outside the rewritten spans are kept, every string and
comment is kept, the result compiles and a second run changes nothing. Then the file itself: a
symbolic link's target edited, an existing backup never replaced, shadowed and bare names."""

from __future__ import annotations

import ast
import difflib
import io
import os
import re
import tokenize
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modecfg.cli import main
from modecfg.theano_names import _analyse, lines_of, rewrite

# text to Python, line breaks to str.splitlines
NOT_LINE_ENDS = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]

STATEMENTS = [
    "import theano",
    "import theano.tensor as T",
    "from theano import tensor as tt",
    "from theano.tensor.nnet import sigmoid",
    "x = T.dmatrix('x')",
    "y = T.nnet.sigmoid(T.dot(x, x))",
    "f = theano.function([x], y)",
    "g = tt.nnet.softplus(x)  # a comment: T.nnet.sigmoid stays a comment",
    "label = 'σ²'; h = theano.shared(1.0)",
    "s = '''T.nnet.sigmoid in a string'''",
    "ok = theano is not None",
    "z = sigmoid(x) + theano.tensor.nnet.softplus(x)",
    "def loss(T):\n    return T.nnet.sigmoid(1)",
    "pass",
]


@st.composite
def scripts(draw: st.DrawFn) -> tuple[str, str]:
    """A script's text and the encoding it is written in."""
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    odd = draw(st.lists(st.sampled_from(NOT_LINE_ENDS), max_size=4))
    body = draw(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=10))
    lines = []
    if draw(st.booleans()):
        lines.append("#!/usr/bin/env python")
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1"]))
    if encoding == "latin-1":
        lines.append("# -*- coding: latin-1 -*-")
    if draw(st.booleans()):
        lines.append('"""Logistic regression.' + "".join(odd) + ' T.nnet.sigmoid(T.dot(x, W))."""')
    for statement in body:
        if odd and draw(st.booleans()):
            lines.append("# page" + draw(st.sampled_from(odd)) + "break")
        lines.extend(statement.split("\n"))
    text = newline.join(lines) + (newline if draw(st.booleans()) else "")
    if encoding == "latin-1":
        text = text.replace("σ²", "é").replace("\u2028", "").replace("\u2029", "")
    return text, encoding


def _strings_and_comments(source: str) -> list[str]:
    return [
        tok.string
        for tok in tokenize.generate_tokens(io.StringIO(source, newline=None).readline)
        if tok.type in (tokenize.STRING, tokenize.COMMENT)
    ]


@settings(max_examples=300, deadline=None)
@given(scripts())
def test_outside_its_spans_the_text_is_kept_and_each_span_is_the_name_it_replaces(
    script: tuple[str, str],
) -> None:
    source, _ = script
    _, spans, _ = _analyse(source)
    tree = ast.parse(source)
    segments = {
        ast.get_source_segment(source, n)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute | ast.Name | ast.alias | ast.ImportFrom)
    }
    for span in spans:  # each span is the text ast gives for a node: never a stretch beside it
        assert source[span.start : span.end] in segments, (span, source[span.start : span.end])
    text, _ = rewrite(source)
    compile(text, "<rewritten>", "exec")
    assert _strings_and_comments(text) == _strings_and_comments(source)
    assert rewrite(text)[0] == text  # a second run is a no-op
    # outside the spans every character is kept; beside them only whole `import M` lines are added
    core = source
    for span in sorted(spans, key=lambda s: s.start, reverse=True):
        core = core[: span.start] + span.text + core[span.end :]
    core_lines, text_lines = lines_of(core), lines_of(text)
    ops = difflib.SequenceMatcher(a=core_lines, b=text_lines, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        new = text_lines[j1:j2]
        if tag == "replace":  # a last line without a line end gets one, where an import follows it
            assert i2 - i1 == 1 and i2 == len(core_lines) and new[0].rstrip("\r\n") == core_lines[i1], ops
            new = new[1:]
        else:
            assert tag == "insert", ops
        assert all(re.fullmatch(r"import \w+(\r\n|\r|\n)?", line) for line in new), new
    assert [line[-1:] in "\r\n" for line in lines_of(text)[:-1]] == [True] * (len(lines_of(text)) - 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scripts())
def test_the_file_is_read_and_written_as_python_reads_it(tmp_path: Path, script: tuple[str, str]) -> None:
    source, encoding = script
    path = tmp_path / "train.py"
    for old in tmp_path.iterdir():
        old.unlink()
    raw = source.encode(encoding)
    path.write_bytes(raw)
    expected, _ = rewrite(source)
    out, err = io.StringIO(), io.StringIO()
    main(["migrate", str(path), "--write"], out, err)
    assert path.read_bytes() == expected.encode(encoding)  # BOM, cookie, line ends as they were
    if expected != source:
        assert (tmp_path / "train.py.bak").read_bytes() == raw
    main(["migrate", str(path), "--write"], io.StringIO(), io.StringIO())
    assert path.read_bytes() == expected.encode(encoding)


def test_a_form_feed_keeps_every_span_in_its_place() -> None:
    """The report's case: a page break shifted every span after it (str.splitlines)."""
    source = (
        '"""Logit.\x0c sigmoid(T.dot(x, W))."""\nimport theano.tensor as T\n\x0c\n'
        "y = T.nnet.sigmoid(T.dot(x, W))\n"
    )
    text, _ = rewrite(source)
    assert text == source.replace("import theano.tensor", "import pytensor.tensor").replace(
        "T.nnet.sigmoid", "T.sigmoid"
    )


def _migrate(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["migrate", *args], out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_symlinks_target_is_edited_and_the_link_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text("import theano\nf = theano.function\n")
    link = tmp_path / "train.py"
    link.symlink_to(real)
    code, out, _ = _migrate(str(link), "--write")
    assert code == 0 and "rewrote" in out
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "import pytensor\nf = pytensor.function\n"
    assert (tmp_path / "real.py.bak").read_text() == "import theano\nf = theano.function\n"


def test_an_existing_backup_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text("import theano\nf = theano.function\n")
    (tmp_path / "train.py.bak").write_text("my own backup\n")
    code, out, _ = _migrate(str(path), "--write")
    assert code == 0 and "train.py.bak.1" in out
    assert (tmp_path / "train.py.bak").read_text() == "my own backup\n"
    assert (tmp_path / "train.py.bak.1").read_text() == "import theano\nf = theano.function\n"


def test_crlf_bom_and_a_cookie_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_bytes(b"\xef\xbb\xbfimport theano\r\nf = theano.function\r\n")
    _migrate(str(path), "--write")
    assert path.read_bytes() == b"\xef\xbb\xbfimport pytensor\r\nf = pytensor.function\r\n"
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\nimport theano\nname = '\xe9'\nf = theano.function\n")
    _migrate(str(latin), "--write")
    assert (
        latin.read_bytes()
        == b"# -*- coding: latin-1 -*-\nimport pytensor\nname = '\xe9'\nf = pytensor.function\n"
    )


def test_a_shebang_and_docstring_stay_first_where_an_import_is_added() -> None:
    source = '#!/usr/bin/env python\n"""Doc."""\nx = theano.tensor.nnet.sigmoid(1)\n'
    text, _ = rewrite(source)
    assert text == '#!/usr/bin/env python\n"""Doc."""\nimport pytensor\nx = pytensor.tensor.sigmoid(1)\n'
    source = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = theano.tensor.nnet.sigmoid(1)"
    text, _ = rewrite(source)
    assert text.startswith("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport pytensor\n")


def test_a_functions_own_variable_named_like_the_module_is_not_rewritten() -> None:
    source = (
        "import theano.tensor as T\n"
        "def f(T):\n    return T.nnet.sigmoid(1)\n"
        "def g(x):\n    return T.nnet.sigmoid(x)\n"
        "h = lambda T: T.nnet.relu\n"
        "xs = [T.nnet.sigmoid(t) for T in range(3)]\n"
    )
    text, renames = rewrite(source)
    assert text == (
        "import pytensor.tensor as T\n"
        "def f(T):\n    return T.nnet.sigmoid(1)\n"
        "def g(x):\n    return T.sigmoid(x)\n"
        "h = lambda T: T.nnet.relu\n"
        "xs = [T.nnet.sigmoid(t) for T in range(3)]\n"
    )
    assert [r.line for r in renames] == [1, 5]


def test_a_bare_module_name_follows_its_import_and_an_assigned_one_is_by_hand() -> None:
    text, _ = rewrite("import theano\nok = theano is not None\nprint(theano)\n")
    assert text == "import pytensor\nok = pytensor is not None\nprint(pytensor)\n"
    compile(text, "<x>", "exec")
    text, renames = rewrite("import theano\ntheano = None\nx = theano.function\n")
    assert "x = theano.function" in text
    assert [str(r).split(": ", 1)[1] for r in renames if not r.new] == [
        "theano.function -> (by hand): theano is assigned here too: by hand"
    ]


def test_an_import_of_a_removed_module_is_by_hand_never_a_failing_import() -> None:
    text, renames = rewrite("import theano.tensor.nnet\nfrom theano.tensor.nnet import conv\n")
    assert "import pytensor.tensor.nnet" not in text and "from pytensor.tensor.nnet" not in text
    hand = [r for r in renames if not r.new]
    assert len(hand) == 2 and all("PyTensor has no module pytensor.tensor.nnet" in r.why for r in hand)


@pytest.mark.parametrize("name", ["σ²", "日本語", "a\u00e9b"])
def test_non_ascii_text_before_a_name_on_its_line(name: str) -> None:
    source = f'label = "{name}"; f = theano.function\nimport theano\n'
    text, _ = rewrite(source)
    assert text == f'label = "{name}"; f = pytensor.function\nimport pytensor\n'


def test_a_script_python_cannot_read_is_a_clear_error_and_stays_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    raw = b"# -*- coding: no-such-codec -*-\nimport theano\n"
    path.write_bytes(raw)
    code, _, err = _migrate(str(path), "--write")
    assert code == 2 and err.startswith(f"error: cannot read {path}: ") and "no-such-codec" in err
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"name = '\xe9'\nimport theano\n")  # no cookie: not UTF-8, as Python refuses it
    code, _, err = _migrate(str(latin), "--write")
    assert code == 2 and err.startswith(f"error: cannot read {latin}: ")
    nul = tmp_path / "nul.py"
    nul.write_bytes(b'import theano\nx = "\0"\n')
    code, _, err = _migrate(str(nul), "--write")
    assert code == 2 and err.startswith(f"error: {nul}: not Python 3 (") and ":None" not in err
    assert path.read_bytes() == raw and not list(tmp_path.glob("*.bak*"))
