"""``modecfg migrate SCRIPT.py``: the Theano and Aesara names a script uses that moved, rewritten
in place with ``--write``. The corpus is the seed documents' code blocks (tests/data/theano_scripts:
the fenced Python 3 blocks as they are, the configuration tutorial's exercise and ProfileMode
section in Python 3 syntax)."""

from __future__ import annotations

import ast
import importlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from modecfg.cli import main
from modecfg.theano_names import GONE, MOVED, WHERE_IT_RAN, find, rewrite, translate

CORPUS = sorted((Path(__file__).parent / "data" / "theano_scripts").glob("*.py"))


def _exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(found, part):
                return False
            found = getattr(found, part)
        return True
    return False


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_new_name_exists(old: str) -> None:
    assert _exists(MOVED[old][0]), (old, MOVED[old][0])


def test_every_name_gone_is_gone_and_says_where_to_go() -> None:
    for old, why in GONE.items():
        assert not _exists(old.replace("theano", "pytensor", 1))  # nothing of that name to write
        assert translate(old) == ("", why) and why


def test_a_name_moved_nowhere_keeps_its_path_under_pytensor_and_others_are_not_theanos() -> None:
    assert translate("theano.printing.Print") == ("pytensor.printing.Print", "theano is now pytensor")
    assert translate("aesara.tensor.nnet.sigmoid") == (
        "pytensor.tensor.sigmoid",
        "theano.tensor.nnet was removed",
    )
    assert translate("theano.tensor.opt.Assert.x") == (
        "pytensor.raise_op.Assert.x",
        "Assert moved to pytensor.raise_op",
    )
    assert translate("numpy.random") is None and translate("theanos.x") is None


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_every_seed_script_is_rewritten_into_python_without_theano(path: Path) -> None:
    source = path.read_text()
    text, renames = rewrite(source)
    ast.parse(text)
    advice = [r for r in renames if r.why == WHERE_IT_RAN]  # the exercise's CPU-or-GPU test: ran_on
    renames = [r for r in renames if r.why != WHERE_IT_RAN]
    assert renames and all(r.new for r in renames)
    assert bool(advice) == (path.name == "004_exercise.py")
    imported = [a.name for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module or "" for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ImportFrom)]
    assert not [name for name in imported if name.startswith(("theano", "aesara"))]
    kept = [line for line in source.splitlines() if line.lstrip().startswith("#")]
    assert all(line in text.splitlines() for line in kept)  # comments stay where they are
    assert [r for r in rewrite(text)[1] if r.why != WHERE_IT_RAN] == []  # nothing left to do
    for rename in renames:
        assert rename.written in source.splitlines()[rename.line - 1]


def test_the_names_the_issue_quotes_get_their_new_homes() -> None:
    nanguard = find("from theano.compile.nanguardmode import NanGuardMode\n")
    assert [(r.new, r.why) for r in nanguard] == [
        ("from modecfg import NanGuardMode", "NanGuardMode is modecfg's")
    ]
    text, _ = rewrite("from theano import tensor\nop = tensor.opt.Assert('no')  # the check\n")
    assert (
        text
        == "from pytensor import tensor\nimport pytensor\nop = pytensor.raise_op.Assert('no')  # the check\n"
    )
    text, renames = rewrite("from theano import ProfileMode\nimport theano\nm = theano.ProfileMode()\n")
    assert (
        text
        == "from modecfg import ProfileMode\nimport modecfg\nimport pytensor\nm = modecfg.ProfileMode()\n"
    )
    assert [r.line for r in renames] == [1, 2, 3]


def test_aliases_are_followed_and_kept() -> None:
    source = (
        "import aesara.tensor as at\nimport theano as th\ny = at.nnet.sigmoid(at.vector()) + th.shared(1.)\n"
    )
    text, _ = rewrite(source)
    expected = "import pytensor.tensor as at\nimport pytensor as th\n"
    assert text == expected + "y = at.sigmoid(at.vector()) + th.shared(1.)\n"
    text, _ = rewrite("from theano.tensor.shared_randomstreams import RandomStreams\nrs = RandomStreams(1)\n")
    assert (
        text
        == "from pytensor.tensor.random.utils import RandomStream as RandomStreams\nrs = RandomStreams(1)\n"
    )


def test_what_cannot_be_rewritten_in_place_is_said_and_left() -> None:
    source = (
        "from theano.compile import (DebugMode,\n    function)\nimport theano.sandbox.cuda\n"
        "x = theano.config.lib.cnmem\n"
    )
    text, renames = rewrite(source)
    assert text == source
    said = {r.line: r for r in renames}
    assert said[1].new == "" and "rewrite by hand" in said[1].why  # two modules, on several lines
    split, _ = rewrite("from theano.compile import DebugMode, function\n")  # on one line: split
    assert split == "from modecfg import DebugMode\nfrom pytensor.compile import function\n"
    said = {r.line: r for r in renames}
    said[2] = said.pop(3)
    said[3] = said.pop(4)
    assert said[2].new == "" and "device=cuda" in said[2].why
    assert said[3].new == "" and "lib.cnmem is obsolete" in said[3].why
    assert str(said[3]).startswith(
        "4:5: theano.config.lib.cnmem -> (by hand): the flag lib.cnmem is obsolete"
    )


def test_a_multiline_import_keeps_its_layout() -> None:
    source = "from theano import (tensor,  # the tensors\n    function)\n"
    text, _ = rewrite(source)
    assert text == "from pytensor import (tensor,  # the tensors\n    function)\n"


def test_a_name_of_the_script_that_merely_looks_theano_like_is_left() -> None:
    source = "import numpy as theano_like\nclass theanoish: ...\nx = theano_like.zeros(3)\n"
    assert rewrite(source) == (source, [])


def test_the_command_lists_rewrites_and_keeps_a_backup(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import theano\nf = theano.function  # compile\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["migrate", str(script)], out=out, err=err) == 1
    assert out.getvalue() == (
        f"{script}:1:8: theano -> pytensor: theano is now pytensor\n"
        f"{script}:2:5: theano.function -> pytensor.function: theano is now pytensor\n"
        f"2 names moved; modecfg migrate {script} --write rewrites them in place\n"
    )
    assert script.read_text() == "import theano\nf = theano.function  # compile\n"  # only with --write
    out = io.StringIO()
    assert main(["migrate", str(script), "--write"], out=out, err=io.StringIO()) == 0
    assert script.read_text() == "import pytensor\nf = pytensor.function  # compile\n"
    assert (tmp_path / "train.py.bak").read_text() == "import theano\nf = theano.function  # compile\n"
    out = io.StringIO()
    assert main(["migrate", str(script)], out=out, err=io.StringIO()) == 0
    assert out.getvalue() == f"{script}: no Theano or Aesara name to change\n"


def test_the_command_refuses_python_2_and_write_without_a_script(tmp_path: Path) -> None:
    script = tmp_path / "old.py"
    script.write_text("import theano\nprint theano.config\n")
    done = subprocess.run(
        [sys.executable, "-m", "modecfg", "migrate", str(script)], capture_output=True, text=True
    )
    assert done.returncode == 2 and f"{script}:2: not Python 3" in done.stderr
    command = [sys.executable, "-m", "modecfg", "migrate", "--flags", "floatX=float32", "--write"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 2 and "--write rewrites a Python script" in done.stderr


def test_the_pytensor_spelling_of_a_moved_name_is_rewritten_too_and_pytensors_own_names_stay() -> None:
    """A reader of the Theano documents who writes pytensor for theano by hand gets
    ModuleNotFoundError for pytensor.compile.nanguardmode and pytensor.tensor.opt: migrate says
    where they went; PyTensor's own names (DebugMode, tensor, function) are left as they are."""
    for old in MOVED:
        if old.startswith("pytensor."):
            assert not _exists(old), old  # no such name in PyTensor: moved
    assert "pytensor.compile.debugmode.DebugMode" not in MOVED  # PyTensor's own, kept
    source = (
        "import pytensor\nfrom pytensor import tensor, ProfileMode\n"
        "op = pytensor.tensor.opt.Assert('x')  # check\nf = pytensor.function\n"
    )
    text, renames = rewrite(source)
    assert text == (
        "import pytensor\nfrom pytensor import tensor\nfrom modecfg import ProfileMode\n"
        "op = pytensor.raise_op.Assert('x')  # check\nf = pytensor.function\n"
    )
    assert str(renames[0]).startswith(
        "2:1: from pytensor import tensor, ProfileMode -> from pytensor import tensor; from"
    )
    assert rewrite("from pytensor import tensor, function\nimport pytensor.tensor as pt\n")[1] == []
    text, _ = rewrite("import pytensor.compile.nanguardmode\nf = pytensor.function\n")
    assert text == "import modecfg\nimport pytensor\nf = pytensor.function\n"  # pytensor stays bound


def test_an_import_split_over_lines_in_parentheses_then_a_rewritten_use() -> None:
    source = "from theano import (tensor,\n    function)\nx = tensor.nnet.sigmoid(1)\nf = function\n"
    text, renames = rewrite(source)
    assert text == "from pytensor import (tensor,\n    function)\nx = tensor.sigmoid(1)\nf = function\n"
    assert [(r.line, r.column) for r in renames] == [(1, 1), (3, 5)]


def test_a_name_whose_text_does_not_change_is_no_rename() -> None:
    """`T.dot` under `import theano.tensor as T` still reads `T.dot` once the import is
    rewritten: only the import is a rename."""
    text, renames = rewrite("import theano.tensor as T\ny = T.dot(1, 2)\nz = T.nnet.sigmoid(y)\n")
    assert text == "import pytensor.tensor as T\ny = T.dot(1, 2)\nz = T.sigmoid(y)\n"
    assert [r.written for r in renames] == ["theano.tensor as T", "T.nnet.sigmoid"]


def test_a_script_telling_cpu_from_gpu_by_op_class_names_is_told_of_ran_on() -> None:
    """The exercise's last question (issue 60): after migration it printed 'ERROR, not able to
    tell' with nothing said. Each line testing such names is listed, by hand, naming ran_on."""
    source = (
        "import theano\n"
        'if any([x.op.__class__.__name__ in ["Gemv", "CGemv"] for x in f.maker.fgraph.toposort()]):\n'
        "    print('cpu')\n"
        "elif any(type(x.op).__name__ == 'GpuGemm' for x in nodes):\n"
        "    print('gpu')\n"
        "label = 'Gemvs are fast'\n"
    )
    hand = [r for r in rewrite(source)[1] if not r.new]
    assert [(r.line, r.written) for r in hand] == [(2, "'Gemv'"), (4, "'GpuGemm'")]
    assert all("modecfg.ran_on(f)" in r.why for r in hand)


# -- each kind of statement, exactly (make mutate: the survivors of theano_names) -------------

EXACT = [
    # a module path whose new home is no module of pytensor: by hand, the import kept
    ("import theano.compile.nanguardmode.NanGuardMode\n", "import theano.compile.nanguardmode.NanGuardMode\n", 1),  # noqa: E501
    # `import theano.tensor` binds `pytensor` once rewritten: no second import for pytensor.shared
    ("import theano.tensor\nx = theano.shared(1)\n", "import pytensor.tensor\nx = pytensor.shared(1)\n", 0),
    # PyTensor's own from-import is left, and what follows it is still looked at
    ("from pytensor import function\nimport theano\nx = theano.shared\n",
     "from pytensor import function\nimport pytensor\nx = pytensor.shared\n", 0),
    ("from pytensor.tensor import exp\nfrom theano.tensor.nnet import sigmoid\n",
     "from pytensor.tensor import exp\nfrom pytensor.tensor import sigmoid\n", 0),
    # other modules in the same import statement
    ("import numpy, theano\nx = theano.shared(1)\n", "import numpy, pytensor\nx = pytensor.shared(1)\n", 0),
    ("import pytensor, theano\nx = theano.shared(1)\n", "import pytensor, pytensor\nx = pytensor.shared(1)\n", 0),  # noqa: E501
    # a chain through PyTensor under another name: PyTensor's own names stay
    ("import pytensor as P\ny = P.tensor.nnet.sigmoid(x)\n", "import pytensor as P\ny = P.tensor.nnet.sigmoid(x)\n", 0),  # noqa: E501
    # an assignment of a name that is not the module's: the module's uses are rewritten
    ("import theano\nT = theano.tensor\nok = theano.shared\n",
     "import pytensor\nT = pytensor.tensor\nok = pytensor.shared\n", 0),
    # flags: an obsolete one by hand, a method of the config object rewritten
    ("import theano\nx = theano.config.lib.cnmem\ny = theano.config.change_flags\n",
     "import pytensor\nx = theano.config.lib.cnmem\ny = pytensor.config.change_flags\n", 1),
    ("import theano\ntheano.sandbox.cuda.use('gpu')\n", "import pytensor\ntheano.sandbox.cuda.use('gpu')\n", 1),  # noqa: E501
    # decorators, defaults, annotations and the return annotation are the enclosing scope's
    ("import theano.tensor as T\n@T.nnet.sigmoid\ndef f(x: T.nnet.softplus = T.nnet.sigmoid, T=1) -> T.nnet.softplus:\n"  # noqa: E501
     "    return T\n",
     "import pytensor.tensor as T\n@T.sigmoid\ndef f(x: T.softplus = T.sigmoid, T=1) -> T.softplus:\n    return T\n", 0),  # noqa: E501
    # a comprehension's own variable, used by its second loop
    ("import theano.tensor as T\nys = [1 for T in range(3) for y in T.nnet.sigmoid(x)]\n",
     "import pytensor.tensor as T\nys = [1 for T in range(3) for y in T.nnet.sigmoid(x)]\n", 0),
    # a from-import over lines (a backslash), with a comment: the module alone is rewritten
    ("from theano import tensor, \\\n    function\nx = tensor.nnet.sigmoid\n",
     "from pytensor import tensor, \\\n    function\nx = tensor.sigmoid\n", 0),
    ("from theano import function  # compile\nf = function\n", "from pytensor import function  # compile\nf = function\n", 0),  # noqa: E501
    # a from-import whose names moved to two modules: one statement each, at its indentation
    ("if True:\n    from theano.tensor.nnet import sigmoid, softmax\n",
     "if True:\n    from pytensor.tensor import sigmoid\n    from pytensor.tensor.special import softmax\n", 0),  # noqa: E501
    # no import at all, a comment first, a shebang and comments: the import after them
    ("x = theano.tensor.nnet.sigmoid(1)\n", "import pytensor\nx = pytensor.tensor.sigmoid(1)\n", 0),
    ("  # indented comment\nx = theano.tensor.nnet.sigmoid(1)\n",
     "  # indented comment\nimport pytensor\nx = pytensor.tensor.sigmoid(1)\n", 0),
    ("#!/usr/bin/env python\n# one\n# two\nx = theano.tensor.nnet.sigmoid(1)\n",
     "#!/usr/bin/env python\n# one\n# two\nimport pytensor\nx = pytensor.tensor.sigmoid(1)\n", 0),
]  # fmt: skip


@pytest.mark.parametrize(("source", "expected", "by_hand"), EXACT)
def test_each_kind_of_statement_is_rewritten_exactly(source: str, expected: str, by_hand: int) -> None:
    text, renames = rewrite(source)
    assert text == expected
    assert len([r for r in renames if not r.new]) == by_hand
    assert rewrite(text)[0] == text


def test_what_is_said_of_a_name_by_hand() -> None:
    (hand,) = [r for r in rewrite("import theano.compile.nanguardmode.NanGuardMode\n")[1] if not r.new]
    assert hand.why == "NanGuardMode is modecfg's (import it under its new name by hand)"
    assert hand.written == "theano.compile.nanguardmode.NanGuardMode"
    (gone,) = [r for r in rewrite("import theano\ntheano.sandbox.cuda.use('gpu')\n")[1] if not r.new]
    assert (gone.written, gone.line, gone.column) == ("theano.sandbox.cuda.use", 2, 1)
    assert gone.why == "the old GPU backend is gone: device=cuda runs graphs through JAX"
    (mixed,) = rewrite("from theano.tensor.nnet import sigmoid, conv2d\n")[1]
    assert mixed.new == "" and mixed.why == (
        "theano.tensor.nnet was removed; convolutions: pytensor.tensor.conv.abstract_conv.conv2d: "
        "sigmoid -> pytensor.tensor.sigmoid, conv2d -> (gone)"
    )
    (flag,) = [r for r in rewrite("import theano\nx = theano.config.lib.cnmem\n")[1] if not r.new]
    assert (
        flag.why.startswith("the flag lib.cnmem is obsolete: ") and flag.written == "theano.config.lib.cnmem"
    )


@pytest.mark.parametrize(
    "block",
    [
        "if x:\n    import pytensor\n",  # body
        "if x:\n    pass\nelse:\n    import pytensor\n",  # orelse
        "try:\n    pass\nfinally:\n    import pytensor\n",  # finalbody
        "try:\n    pass\nexcept ImportError:\n    import pytensor\n",  # handlers
        "match x:\n    case 1:\n        import pytensor\n",  # cases
        "while x:\n    for y in x:\n        with y:\n            import pytensor\n",  # nested bodies
    ],
    ids=["if", "else", "finally", "except", "match", "nested"],
)
def test_an_import_the_rewrite_needs_is_not_added_where_any_block_already_has_it(block: str) -> None:
    source = f"import theano.sandbox.rng_mrg\nx = 0\n{block}r = theano.sandbox.rng_mrg.MRG_RandomStreams\n"
    text, _ = rewrite(source)
    assert text.count("import pytensor\n") == 1, text
    assert text.endswith("r = pytensor.tensor.random.utils.RandomStream\n")
    alone = rewrite("import theano.sandbox.rng_mrg\nr = theano.sandbox.rng_mrg.MRG_RandomStreams\n")[0]
    assert alone.count("import pytensor\n") == 1  # where none is, it is added


def test_module_exists_reads_pytensors_files_packages_modules_and_extensions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modecfg import theano_names

    root = tmp_path / "site" / "pytensor"
    (root / "tensor").mkdir(parents=True)
    (root / "tensor" / "__init__.py").write_text("")
    (root / "tensor" / "basic.py").write_text("")
    (root / "scan").mkdir()  # a folder with no __init__: no module
    (root / "link").mkdir()
    (root / "link" / "cutils_ext.cpython-311-x86_64-linux-gnu.so").write_text("")
    (root / "link" / "notes.so.txt").write_text("")
    (root / "link" / "other.so").write_text("")
    (root / "link" / "winmod.cp311-win_amd64.pyd").write_text("")
    monkeypatch.setattr(theano_names, "_pytensor_dirs", lambda: [str(root)])
    exists = theano_names.module_exists
    assert exists("pytensor") and exists("numpy.linalg") and exists("theano.tensor.nnet")  # not PyTensor's
    assert exists("pytensor.tensor") and exists("pytensor.tensor.basic")
    assert exists("pytensor.link.cutils_ext") and exists("pytensor.link.winmod")  # compiled extensions
    assert (
        not exists("pytensor.tensor.nnet")
        and not exists("pytensor.scan")
        and not exists("pytensor.link.notes")
    )
    assert not exists("pytensor.link.cutils") and not exists("pytensor.nothing.here")
    monkeypatch.setattr(theano_names, "_pytensor_dirs", lambda: [])
    assert exists("pytensor.tensor.nnet")  # no PyTensor to ask: the name is taken as it is
