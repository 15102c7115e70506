"""The reproductions CompareMode writes (modecfg.compare.repro), on the fast linkers: where they
go, what they are called, which graph they hold (the node alone or the sub-graph up to it), and
what a name from anyone may become in them. CompareMode's own tests run them end to end."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")  # the planted ops register numba implementations

import pytensor.tensor as pt
from pytensor.graph.fg import FunctionGraph

from modecfg import config
from modecfg._files import user_cache_dir
from modecfg.compare.repro import _said, repro_directory, smallest_repro, write_repro
from tests.compare import planted

TOLERANCES = (1e-5, 1e-8)


@pytest.fixture
def repro_dir(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "repro"
    with config.override(**{"CompareMode.repro_dir": str(directory)}):
        yield directory


def _halved() -> tuple[FunctionGraph, Any]:
    """x -> halve(x), the graph and its one node (a planted rewrite under fast_run drops it)."""
    x = pt.vector("x")
    graph = FunctionGraph([x], [planted.halve(x)], clone=True)
    return graph, graph.outputs[0].owner


def _what(path: str | None) -> str:
    assert path is not None
    return Path(path).read_text(encoding="utf-8").split("\n")[3]  # the docstring's "what" line


def test_reproductions_go_to_the_flags_directory_else_compare_in_the_users_cache(tmp_path: Path) -> None:
    with config.override(**{"CompareMode.repro_dir": ""}):
        assert repro_directory() == user_cache_dir("compare")
    with config.override(**{"CompareMode.repro_dir": str(tmp_path / "r")}):
        assert repro_directory() == str(tmp_path / "r")


def test_a_script_is_named_by_backend_time_process_and_graph_beside_its_data(repro_dir: Path) -> None:
    graph, _ = _halved()
    path, note = write_repro(graph, list(graph.outputs), [np.ones(2)], "c|py", "py", TOLERANCES)
    assert path is not None and note == ""
    assert Path(path).parent == repro_dir
    name = os.path.basename(path)
    assert re.fullmatch(rf"repro-cpy-\d{{8}}-\d{{6}}-{os.getpid()}(-\d+)?\.py", name), name
    assert Path(path).with_suffix(".npz").is_file()
    assert np.load(Path(path).with_suffix(".npz")).files == ["input_0"]  # the inputs only
    assert "The sub-graph up to the first node that differs (1 nodes), as c|py ran it" in _what(path)
    assert "in [('c|py', 'c|py', None, None), ('py', 'py', None, None)]:" in Path(path).read_text(
        encoding="utf-8"
    )
    alone, _ = write_repro(graph, list(graph.outputs), [np.ones(2)], "c|py", "py", TOLERANCES, alone=True)
    assert _what(alone).startswith("The first node that differs, alone, on its inputs' values")
    assert "The sub-graph up to the first node" in _what(path)  # the first kept: its report names it


def test_reproductions_of_one_second_never_share_a_name(
    repro_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One process, one second, one graph: each reproduction has its own script and data (an
    earlier version named both after the second and the graph, and the second replaced the
    first); a name whose data alone is left (a script removed by hand) is not reused."""
    monkeypatch.setattr(
        "time.strftime", lambda fmt, *args: "20261130-120000" if "%S" in fmt else "2026-11-30"
    )
    graph, _ = _halved()
    stem = repro_dir / f"repro-cpy-20261130-120000-{os.getpid()}"
    repro_dir.mkdir()
    (repro_dir / f"{stem.name}-3.npz").write_bytes(b"kept")
    paths = [write_repro(graph, list(graph.outputs), [np.full(2, k)], "c|py", "py", TOLERANCES)[0]
             for k in range(3)]  # fmt: skip
    assert paths == [f"{stem}.py", f"{stem}-2.py", f"{stem}-4.py"]
    for k, path in enumerate(paths):
        assert path is not None
        assert np.load(Path(path).with_suffix(".npz"))["input_0"].tolist() == [k, k]
        assert Path(path).with_suffix(".npz").name in Path(path).read_text(encoding="utf-8")
    assert (repro_dir / f"{stem.name}-3.npz").read_bytes() == b"kept"


def test_the_node_alone_is_written_when_it_shows_the_difference(repro_dir: Path) -> None:
    graph, node = _halved()
    values = [np.array([1.0, 2.0])]
    given: list[tuple[Any, Any]] = []

    def differs(a: Any, b: Any) -> bool:  # every pair differs: but both values must be given
        given.append((a, b))
        return a is not None and b is not None

    path, note = smallest_repro(graph, node, values, values, "py", "py", TOLERANCES, differs)
    assert note == "" and _what(path).startswith("The first node that differs, alone")
    assert [(a.tolist(), b.tolist()) for a, b in given] == [([0.5, 1.0], [0.5, 1.0])]


def test_the_node_is_compiled_as_it_is_on_both_backends(repro_dir: Path) -> None:
    """halve(x) alone, without rewrites: the planted rewrite (fast_run) would drop it on either."""
    graph, node = _halved()
    values = [np.array([1.0, 2.0])]
    seen: list[tuple[list[float], list[float]]] = []

    def differs(a: Any, b: Any) -> bool:
        seen.append((np.asarray(a).tolist(), np.asarray(b).tolist()))
        return False

    path, note = smallest_repro(graph, node, values, values, "py", "py", TOLERANCES, differs)
    assert seen == [([0.5, 1.0], [0.5, 1.0])] * 2  # the node alone, then the sub-graph
    assert _what(path).startswith("The sub-graph up to the first node that differs")
    assert note == "the reproduction does not show the difference on its own: it needs the whole function"


def test_a_backend_that_cannot_compile_the_node_gets_the_sub_graph_and_says_it_shows_nothing(
    repro_dir: Path,
) -> None:
    graph, node = _halved()
    values = [np.array([1.0, 2.0])]
    path, note = smallest_repro(graph, node, values, values, "no_such_linker", "py", TOLERANCES,
                                lambda a, b: True)  # fmt: skip
    assert _what(path).startswith("The sub-graph up to the first node that differs")
    assert note == "the reproduction does not show the difference on its own: it needs the whole function"


def test_what_anyone_named_is_said_in_ascii_with_no_quote_left() -> None:
    assert _said("a\"b'c\u00e9\n\x1b") == "a\\x22b\\x27c\\xe9\\n\\x1b"
    assert _said("local_fine") == "local_fine"


def test_a_written_script_runs_with_plain_pytensor_says_what_it_is_and_imports_a_foreign_rewrite(
    repro_dir: Path,
) -> None:
    """The graph as written with a rewrite left out, on two inputs: the script's header, its
    imports (a rewrite from outside PyTensor imported by its module; PyTensor's never), and its
    three runs, as plain PyTensor prints them."""
    import pytensor

    from modecfg.compare.repro import _versions
    from tests.compare.test_compare import _run_plain

    x, y = pt.vector("x"), pt.vector("y")
    graph = FunctionGraph([x, y], [planted.halve(planted.wrong_in_c(x)) + y], clone=True)
    values = [np.array([0.5, 3.0]), np.array([1.0, 2.0])]
    path, note = write_repro(graph, list(graph.outputs), values, "cvm", "py", TOLERANCES,
                             rewrites="fast_run", exclude="local_planted_drop_halve")  # fmt: skip
    assert path is not None and note == "", note
    name = Path(path).name
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    versions = "".join(f", {k} {v}" for k, v in _versions().items())
    assert lines[0] == '"""A difference between cvm and py, found by modecfg compare.'
    assert re.fullmatch(
        rf"Written by modecfg's CompareMode on \d{{4}}-\d\d-\d\d \d\d:\d\d: PyTensor "
        rf"{re.escape(pytensor.__version__)}, numpy {re.escape(np.__version__)}{re.escape(versions)}\.",
        lines[2],
    ), lines[2]
    assert lines[3] == (
        "The graph as written, compiled with the fast_run rewrites on cvm, again without "
        "local_planted_drop_halve, and as written on py."
    )
    assert lines[4] == f"Run with plain PyTensor (no modecfg needed): python {name}"
    assert (
        lines[6]
        == f"The inputs are in {Path(path).with_suffix('.npz').name} (numpy's .npz, read without pickle)."
    )
    imports = lines[lines.index("from pathlib import Path") + 2 : lines.index("import pytensor")]
    assert "import tests.compare.planted  # registers local_planted_drop_halve" in imports
    assert imports == sorted(imports, key=lambda line: (line.startswith("from"), line))  # from-lines last
    run = _run_plain(path)
    assert run.returncode == 1, run.stderr
    halved, whole = 1.5 * np.exp(3.0) / 2 + 2.0, 1.5 * np.exp(3.0) + 2.0
    out = run.stdout
    assert (
        out.index("cvm:\n")
        < out.index("cvm without local_planted_drop_halve:\n")
        < out.index("py as written:\n")
    )
    assert (
        f"{whole:.4f}"[:6] in out and f"{halved:.4f}"[:6] in out and f"{np.exp(3.0) / 2 + 2:.4f}"[:6] in out
    )
    assert "output 0 differs between cvm and py as written" in out
    pytensors, _ = write_repro(graph, list(graph.outputs), values, "cvm", "py", TOLERANCES,
                               rewrites="fast_run", exclude="local_mul_canonizer")  # fmt: skip
    assert pytensors is not None and "# registers" not in Path(pytensors).read_text(encoding="utf-8")
    plain, _ = write_repro(graph, list(graph.outputs), values, "cvm", "py", TOLERANCES, rewrites="fast_run")
    assert (
        _what(plain)
        == "The graph as written, compiled with the fast_run rewrites on cvm and as written on py."
    )


def test_an_input_of_python_objects_writes_no_reproduction(repro_dir: Path) -> None:
    """The data file is read without pickle: an object array (which would need one) is refused,
    and the name reserved for it is given back."""
    graph, _ = _halved()
    path, note = write_repro(graph, list(graph.outputs), [np.array([1.0, None], dtype=object)], "c|py", "py",
                             TOLERANCES)  # fmt: skip
    assert (
        path is None
        and note == "no reproduction written: an input holds Python objects, which the data file cannot"
    )
    assert list(repro_dir.iterdir()) == []
