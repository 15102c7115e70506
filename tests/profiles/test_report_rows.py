"""ProfileReport's arithmetic on timings made by hand: every row, share, class, shape and byte
is known in advance (a real profile's times are not), so each is asserted exactly."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytensor.tensor as pt
import pytest

from modecfg._pytensor import marks
from modecfg.profiles.rows import MemoryRow, ProfileReport, _dtype, _shape_text


class CompiledGraph:
    """A stand-in for the FunctionGraph a profile's keys hold (hashable, as PyTensor's is)."""


class Var:
    """A variable as the report reads one: only its type (hashable, as PyTensor's are)."""

    def __init__(self, **type_fields: Any) -> None:
        self.type = SimpleNamespace(**type_fields)


def stats_of(times: dict[Any, float], counts: dict[Any, int], shapes: dict[Any, Any], **marked: Any) -> Any:
    """A stand-in for PyTensor's ProfileStats: what ProfileReport.from_stats reads of it."""
    graph = CompiledGraph()
    setattr(graph, marks.COMPILED_WITH, marked.pop("compiled_with", {}))
    stats = SimpleNamespace(
        apply_time={(graph, node): t for node, t in times.items()},
        apply_callcount={(graph, node): n for node, n in counts.items()},
        variable_shape=shapes,
        message=marked.pop("message", None),
        fct_callcount=4, fct_call_time=2.0, vm_call_time=1.5,
        compile_time=0.25, rewriting_time=0.125, linker_time=0.0625,
    )  # fmt: skip
    for key, value in marked.items():
        setattr(stats, key, value)
    return stats


@pytest.fixture
def graph() -> SimpleNamespace:
    """exp(x), two products, a sum and a transpose, their nodes without a user's line."""
    x = pt.vector("x", shape=(3,), dtype="float64")
    m = pt.matrix("m", dtype="float32")
    e = pt.exp(x)
    e.name = "e"
    p = e * x
    q = p * x
    t = m.sum()
    d = m.T
    for var in (e, p, q, t, d):
        var.tag.trace = []
    return SimpleNamespace(x=x, m=m, e=e, p=p, q=q, t=t, d=d)


def report_of(g: SimpleNamespace, **marked: Any) -> ProfileReport:
    E, P, Q, T, D = (v.owner for v in (g.e, g.p, g.q, g.t, g.d))
    # the order PyTensor ran them in: exp, sum, the products, the transpose; four tie at 1/8 s
    times = {E: 0.5, T: 0.125, P: 0.125, Q: 0.125, D: 0.125}
    counts = {E: 4, T: 4, P: 2, D: 0}  # Q's count missing: no call recorded
    shapes = {g.x: (3,), g.e: (3,), g.p: [3], g.m: (5, 2), g.t: (), g.d: (np.int64(2), np.int64(5))}
    return ProfileReport.from_stats(stats_of(times, counts, shapes, **marked))


def test_rows_are_ranked_by_time_then_by_operation_with_exact_shares(graph: SimpleNamespace) -> None:
    r = report_of(graph)
    rows = [(a.rank, a.op, a.time, a.share, a.cumulative, a.calls, a.per_call) for a in r.applies]
    assert rows == [
        (1, "Exp", 0.5, 0.5, 0.5, 4, 0.125),
        (2, "MatrixTranspose", 0.125, 0.125, 0.625, 0, 0.0),  # ties ordered by the operation's name
        (3, "Mul", 0.125, 0.125, 0.75, 2, 0.0625),
        (4, "Mul", 0.125, 0.125, 0.875, 0, 0.0),
        (5, "Sum{axes=None, acc=float64}", 0.125, 0.125, 1.0, 4, 0.03125),
    ]
    assert (r.calls, r.call_time, r.vm_time, r.profiled_time) == (4, 2.0, 1.5, 1.0)
    assert (r.compile_time, r.rewrite_time, r.linker_time) == (0.25, 0.125, 0.0625)
    assert all(a.source is None and a.function == "<unnamed function>" for a in r.applies)


def test_shapes_are_the_recorded_ones_else_the_static_ones(graph: SimpleNamespace) -> None:
    r = report_of(graph)
    by_op = {(a.op, a.calls): (a.inputs, a.outputs) for a in r.applies}
    assert by_op[("Exp", 4)] == ((("(3,)", "float64"),), (("(3,)", "float64"),))
    assert by_op[("Mul", 2)] == ((("(3,)", "float64"), ("(3,)", "float64")), (("(3,)", "float64"),))
    # q was not recorded: its static shape
    assert by_op[("Mul", 0)] == ((("(3,)", "float64"), ("(3,)", "float64")), (("(3,)", "float64"),))
    assert by_op[("Sum{axes=None, acc=float64}", 4)] == ((("(5, 2)", "float32"),), (("()", "float32"),))
    assert by_op[("MatrixTranspose", 0)] == ((("(5, 2)", "float32"),), (("(2, 5)", "float32"),))


@pytest.mark.parametrize(
    ("recorded", "static", "text"),
    [((3,), (None,), "(3,)"), ([4, 5], (None, None), "(4, 5)"), ((), (), "()"),
     (None, (None, 7), "(?, 7)"), (None, (2,), "(2,)"), (None, (), "()"), ("not a shape", (1,), "(1,)")],
)  # fmt: skip
def test_a_shape_reads_as_python_writes_a_tuple(
    recorded: Any, static: tuple[int | None, ...], text: str
) -> None:
    var = Var(shape=static)
    assert _shape_text(var, {var: recorded} if recorded is not None else {}) == text


def test_a_type_without_a_shape_reads_as_a_scalar() -> None:
    var = Var()  # e.g. a random generator's type
    assert _shape_text(var, {}) == "()"
    assert _dtype(var) == "SimpleNamespace"  # no dtype either: the type's name


def test_ops_and_classes_add_up_their_nodes(graph: SimpleNamespace) -> None:
    r = report_of(graph)
    assert [(o.op, o.time, o.share, o.calls, o.nodes, o.per_call) for o in r.ops] == [
        ("Exp", 0.5, 0.5, 4, 1, 0.125),
        ("Mul", 0.25, 0.25, 2, 2, 0.125),
        ("MatrixTranspose", 0.125, 0.125, 0, 1, 0.0),
        ("Sum{axes=None, acc=float64}", 0.125, 0.125, 4, 1, 0.03125),
    ]
    assert [tuple(c) for c in r.classes] == [
        ("Elemwise{Exp}", 0.5, 0.5, 4, 1),
        ("Elemwise{Mul}", 0.25, 0.25, 2, 2),
        ("DimShuffle", 0.125, 0.125, 0, 1),  # no scalar operation: the class alone
        ("Sum{Add}", 0.125, 0.125, 4, 1),
    ]


def test_a_graph_that_took_no_time_has_no_shares(graph: SimpleNamespace) -> None:
    E, P = graph.e.owner, graph.p.owner
    r = ProfileReport.from_stats(stats_of({E: 0.0, P: 0.0}, {E: 1, P: 1}, {}))
    assert [(a.share, a.cumulative, a.per_call) for a in r.applies] == [(0.0, 0.0, 0.0)] * 2
    assert [(o.share, o.per_call) for o in r.ops] == [(0.0, 0.0)] * 2
    assert [c.share for c in r.classes] == [0.0, 0.0]
    merged = ProfileReport.merged([r, r])
    assert [(a.share, a.cumulative) for a in merged.applies] == [(0.0, 0.0)] * 4
    assert [c.share for c in merged.classes] == [0.0, 0.0]


def test_peak_memory_frees_each_value_after_its_last_use(graph: SimpleNamespace) -> None:
    r = report_of(graph)
    # e 24 B, t 4 B, p 24 B live at once (52); e freed after p, p after q; d 40 B comes after
    assert r.peak_memory == 52
    assert r.largest == (
        MemoryRow("m.T", "MatrixTranspose", 40, "(2, 5)", "float32"),
        MemoryRow("e", "Exp", 24, "(3,)", "float64"),
        MemoryRow("Mul.0", "Mul", 24, "(3,)", "float64"),
        MemoryRow("Sum{axes=None, acc=float64}.0", "Sum{axes=None, acc=float64}", 4, "()", "float32"),
    )


def test_the_smallest_listed_value_is_min_memory_size_itself(graph: SimpleNamespace) -> None:
    E, T = graph.e.owner, graph.t.owner
    shapes = {graph.e: (3,), graph.t: ()}
    listed = ProfileReport.from_stats(stats_of({E: 1.0, T: 1.0}, {}, shapes), min_memory_size=4)
    assert [m.bytes for m in listed.largest] == [24, 4]
    empty = {graph.e: (0,)}
    assert [m.bytes for m in ProfileReport.from_stats(stats_of({E: 1.0}, {}, empty)).largest] == [0]


def test_no_recorded_shapes_means_no_memory_section(graph: SimpleNamespace) -> None:
    E = graph.e.owner
    r = ProfileReport.from_stats(stats_of({E: 1.0}, {E: 1}, {}))
    assert (r.peak_memory, r.largest) == (None, ())
    del_shapes = stats_of({E: 1.0}, {E: 1}, {})
    del del_shapes.variable_shape  # an older PyTensor's stats without the attribute
    assert ProfileReport.from_stats(del_shapes).peak_memory is None


def test_a_value_of_unknown_size_is_left_out_of_the_memory() -> None:
    x = pt.vector("x", dtype="float64")
    e = pt.exp(x)
    odd = Var(dtype="not a dtype")
    r = ProfileReport.from_stats(stats_of({e.owner: 1.0}, {}, {e: (None,), x: (2,)}))
    assert (r.peak_memory, r.largest) == (0, ())
    from modecfg.profiles.rows import _nbytes

    assert _nbytes(odd, {odd: (2,)}) is None
    big = Var(dtype="float32")
    assert _nbytes(big, {big: (2**20, 2**12)}) == 2**34  # a product past 32 bits stays exact


@pytest.mark.parametrize(
    ("given", "name_mark", "message", "said"),
    [("given", "marked", "message", "given"), (None, "marked", "message", "marked"),
     (None, None, "message", "message"), (None, None, None, "<unnamed function>")],
)  # fmt: skip
def test_the_functions_name_is_the_one_given_else_marked_else_its_message(
    graph: SimpleNamespace, given: str | None, name_mark: str | None, message: str | None, said: str
) -> None:
    marked = {marks.PROFILE_NAME: name_mark} if name_mark else {}
    stats = stats_of({graph.e.owner: 1.0}, {}, {}, message=message, **marked)
    assert ProfileReport.from_stats(stats, name=given).name == said


def test_the_header_says_the_linker_note_and_configuration_only_when_known(graph: SimpleNamespace) -> None:
    plain = ProfileReport.from_stats(stats_of({graph.e.owner: 1.0}, {}, {}))
    assert (plain.linker, plain.note, plain.config, plain.device) == ("", "", (), None)
    assert "linker" not in plain.text().splitlines()[1] and "note" not in plain.text()
    compiled = {
        "mode": ("FAST_RUN", "default"),
        "linker": ("cvm", "THEANO_FLAGS"),
        "floatX": ("float32", "~/.theanorc:2"),
    }
    marked = ProfileReport.from_stats(
        stats_of({graph.e.owner: 1.0}, {}, {}, compiled_with=compiled,
                 **{marks.PROFILE_TIMED_BY: "cvm (profiling)", marks.PROFILE_NOTE: "the note"})
    )  # fmt: skip
    assert (marked.linker, marked.note) == ("cvm (profiling)", "the note")
    assert marked.config == (("mode", "'FAST_RUN'", "default"), ("linker", "'cvm'", "THEANO_FLAGS"),
                             ("floatX", "'float32'", "~/.theanorc:2"))  # fmt: skip
    passed = ProfileReport.from_stats(
        stats_of({graph.e.owner: 1.0}, {}, {}, compiled_with=compiled,
                 **{marks.PROFILE_NOTE: "compiled in ProfileMode"})
    )  # fmt: skip
    # a mode passed to the compile is said instead of the mode and linker flags
    assert passed.config == (
        ("mode", "ProfileMode", "passed to the compile"),
        ("floatX", "'float32'", "~/.theanorc:2"),
    )


def test_a_node_without_a_line_names_the_one_its_rewrite_inherited(
    tmp_path: Path, graph: SimpleNamespace
) -> None:
    script = tmp_path / "model.py"
    script.write_text("import pytensor\ny = (\n    x * 2)\n", encoding="utf-8")
    setattr(graph.e.tag, marks.TRACE, (str(script), 3, "<module>", None))
    r = ProfileReport.from_stats(stats_of({graph.e.owner: 1.0}, {}, {}))
    assert r.applies[0].source == f"{script}:3: y = ( x * 2) (rewritten)"
    # a line that cannot be read: the code the trace kept, else the place alone
    setattr(graph.e.tag, marks.TRACE, (str(tmp_path / "gone.py"), 7, "<module>", "z = w + 1"))
    assert ProfileReport.from_stats(stats_of({graph.e.owner: 1.0}, {}, {})).applies[0].source == (
        f"{tmp_path / 'gone.py'}:7: z = w + 1 (rewritten)"
    )
    setattr(graph.e.tag, marks.TRACE, (str(tmp_path / "gone.py"), 7, "<module>", None))
    assert ProfileReport.from_stats(stats_of({graph.e.owner: 1.0}, {}, {})).applies[0].source == (
        f"{tmp_path / 'gone.py'}:7 (rewritten)"
    )


def test_a_nodes_own_line_is_its_whole_statement(tmp_path: Path, graph: SimpleNamespace) -> None:
    script = tmp_path / "model.py"
    script.write_text("import pytensor\ny = (\n    x * 2)\n", encoding="utf-8")
    graph.e.tag.trace = [[(str(script), 3, "<module>", "x * 2)")]]
    assert ProfileReport.from_stats(stats_of({graph.e.owner: 1.0}, {}, {})).applies[0].source == (
        f"{script}:3: y = ( x * 2)"
    )
    graph.e.tag.trace = [[(str(tmp_path / "gone.py"), 3, "<module>", "kept = code")]]
    assert ProfileReport.from_stats(stats_of({graph.e.owner: 1.0}, {}, {})).applies[0].source == (
        f"{tmp_path / 'gone.py'}:3: kept = code"
    )


def test_the_text_is_the_table_a_person_reads(graph: SimpleNamespace) -> None:
    compiled = {"profile_memory": (True, "THEANO_FLAGS")}
    text = report_of(graph, message="f", compiled_with=compiled).text(n_apply=4, n_ops=3)
    assert text == "\n".join([
        "Profile of f: 4 call(s), 2000.000 ms in calls, 1000.000 ms in the graph's nodes",
        "  compile 250.0 ms (rewrites 125.0 ms, linking 62.5 ms)",
        "  compiled with profile_memory=True (THEANO_FLAGS)",
        "",
        "        time  share  cumul   calls   per call  apply (source)",
        "   500.000ms  50.0%  50.0%       4 125000.00us  Exp(float64(3,))",
        "   125.000ms  12.5%  62.5%       0     0.00us  MatrixTranspose(float32(5, 2))",
        "   125.000ms  12.5%  75.0%       2 62500.00us  Mul(float64(3,), float64(3,))",
        "   125.000ms  12.5%  87.5%       0     0.00us  Mul(float64(3,), float64(3,))",
        "  ... 1 more (profiling.n_apply)",
        "",
        "        time  share   calls nodes  op",
        "   500.000ms  50.0%       4     1  Exp",
        "   250.000ms  25.0%       2     2  Mul",
        "   125.000ms  12.5%       0     1  MatrixTranspose",
        "",
        "        time  share   calls nodes  op class",
        "   500.000ms  50.0%       4     1  Elemwise{Exp}",
        "   250.000ms  25.0%       2     2  Elemwise{Mul}",
        "   125.000ms  12.5%       0     1  DimShuffle",
        "",
        "  peak memory of intermediate results: 0.1 KiB",
        "           0.0 KiB  float32(2, 5)  m.T = MatrixTranspose",
        "           0.0 KiB  float64(3,)  e = Exp",
        "           0.0 KiB  float64(3,)  Mul.0 = Mul",
        "           0.0 KiB  float32()  Sum{axes=None, acc=float64}.0 = Sum{axes=None, acc=float64}",
    ])  # fmt: skip


def test_the_text_shows_twenty_rows_unless_told_and_says_none_were_left(graph: SimpleNamespace) -> None:
    r = report_of(graph, message="f")
    lines = r.text().splitlines()
    assert not any("more (profiling.n_apply)" in line for line in lines)
    more = r._replace(applies=r.applies * 5).text().splitlines()  # 25 rows: 20 shown, and the rest said
    assert len(more) == len(lines) + 16 and "  ... 5 more (profiling.n_apply)" in more
    exactly = r.text(n_apply=5)
    assert "more (profiling.n_apply)" not in exactly
    many = r._replace(ops=r.ops * 6, classes=r.classes * 6)  # 24 rows each: 20 shown
    assert len(many.text().splitlines()) == len(lines) + 2 * (20 - 4)


def test_the_missing_memory_section_is_explained_only_where_it_was_asked(graph: SimpleNamespace) -> None:
    asked = {"profile_memory": (True, "assignment")}
    unasked = {"profile_memory": (False, "default"), "profile": (True, "assignment")}
    E = graph.e.owner
    why = "no memory section: PyTensor records the sizes of values only while the profile and"
    assert why in ProfileReport.from_stats(stats_of({E: 1.0}, {}, {}, compiled_with=asked)).text()
    assert why not in ProfileReport.from_stats(stats_of({E: 1.0}, {}, {}, compiled_with=unasked)).text()
    recorded = ProfileReport.from_stats(stats_of({E: 1.0}, {}, {graph.e: (3,)}, compiled_with=asked)).text()
    assert why not in recorded and "peak memory" in recorded
    full = ProfileReport.from_stats(stats_of({E: 1.0}, {}, {}, compiled_with=asked)).text()
    assert full.endswith(
        "\n  no memory section: PyTensor records the sizes of values only while the profile and "
        "profile_memory flags are both on during the calls (profile=True passed to one compile, or "
        "ProfileMode, does not): set both flags (THEANO_FLAGS=profile=True,profile_memory=True)"
    )


def test_a_jax_functions_text_is_its_device_figures(
    graph: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modecfg.profiles.device as device

    monkeypatch.setattr(device, "device_lines", lambda figures: [f"device {figures['name']}", "second"])
    stats = stats_of({graph.e.owner: 1.0}, {}, {}, message="f", **{marks.PROFILE_DEVICE: {"name": "cpu:0"}})
    r = ProfileReport.from_stats(stats)
    assert r.device == {"name": "cpu:0"}
    assert r.text().splitlines()[2:] == ["  device cpu:0", "  second"]


def test_merged_notes_and_linkers_are_each_said_once(graph: SimpleNamespace) -> None:
    E = graph.e.owner
    marked = {marks.PROFILE_NOTE: "b", marks.PROFILE_TIMED_BY: "cvm"}
    a = ProfileReport.from_stats(stats_of({E: 1.0}, {}, {}, **marked))
    b = a._replace(note="a", linker="c")
    merged = ProfileReport.merged([a, b, a._replace(note="", linker="")])
    assert (merged.note, merged.linker) == ("a; b", "c, cvm")
