"""A graph written as PyTensor source: run in a fresh process with plain PyTensor, it computes what
the graph computes; what cannot be written is said, never guessed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytensor")

import pytensor
import pytensor.tensor as pt
from pytensor.compile.mode import Mode
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.tensor.special import softmax

from modecfg.compare.graphsource import CannotWrite, write_graph
from tests.fresh import pythonpath


def _run(fgraph: Any, values: list[np.ndarray], tmp_path: Path) -> list[Any]:
    """Write ``fgraph`` as source, run it in a process of plain PyTensor on ``values``."""
    source = write_graph(list(fgraph.inputs), list(fgraph.outputs))
    np.savez(tmp_path / "data.npz", **source.constants)
    np.savez(tmp_path / "values.npz", *values)
    script = "\n".join(
        [
            *source.imports,
            "import json, sys, pytensor",
            "from pytensor.compile.mode import Mode",
            f"data = np.load({str(tmp_path / 'data.npz')!r})",
            source.body,
            f"f = pytensor.function([{', '.join(source.inputs)}], [{', '.join(source.outputs)}], "
            "mode=Mode(linker='py', optimizer=None), accept_inplace=True)",
            f"given = np.load({str(tmp_path / 'values.npz')!r})",
            "out = f(*[given[f'arr_{k}'] for k in range(len(given.files))])",
            "print(json.dumps([np.asarray(o).tolist() for o in out]))",
            "print('modecfg' in sys.modules)",
        ]
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env["PYTHONPATH"] = pythonpath()
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr + "\n" + script
    *_, result, imported = run.stdout.strip().splitlines()
    assert imported == "False"
    return list(json.loads(result))


def test_a_rewritten_graph_with_fused_ops_symbolic_ops_and_constants_is_written_whole(tmp_path: Path) -> None:
    x, m = pt.vector("x"), pt.matrix("m")
    big = np.arange(30.0).reshape(5, 6)
    y = (pt.log1p(pt.exp(x)) * 2 + pt.exp(x).sum() + m.T.dot(x)[0] + x[1:].max() + softmax(x)
         + pt.arange(5.0) ** 2 + big.sum(1)).sum()  # fmt: skip
    f = pytensor.function([x, m], y, mode=Mode(linker="py"))
    kinds = {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    assert {"Elemwise", "Subtensor", "Max", "DimShuffle", "Sum"} <= kinds  # and Softmax on PyTensor 3.0
    assert any(
        type(getattr(n.op, "scalar_op", None)).__name__ == "Composite" for n in f.maker.fgraph.toposort()
    )
    values = [np.linspace(-1, 1, 5), np.ones((5, 5))]
    assert _run(f.maker.fgraph, values, tmp_path) == pytest.approx([float(f(*values))])


def test_integers_booleans_and_several_outputs(tmp_path: Path) -> None:
    i = pt.vector("i", dtype="int64")
    f = pytensor.function(
        [i], [i // 2, pt.eq(i % 3, 0), pt.argmax(i)], mode=Mode(linker="py", optimizer=None)
    )
    values = [np.array([4, 9, -3], dtype="int64")]
    assert _run(f.maker.fgraph, values, tmp_path) == [[2, 4, -2], [False, True, True], 1]


class _NoProps(Op):  # type: ignore[misc]
    def make_node(self, x: Any) -> Apply:
        return Apply(self, [x], [x.type()])

    def perform(self, node: Any, inputs: Any, outputs: Any) -> None:
        outputs[0][0] = inputs[0]


def test_an_op_that_cannot_be_rebuilt_is_named() -> None:
    x = pt.vector("x")
    with pytest.raises(CannotWrite, match=r"the op .*_NoProps.*: neither built from its __props__"):
        write_graph([x], [_NoProps()(x) + 1])


def test_names_are_valid_and_distinct() -> None:
    a, b = pt.vector("lambda"), pt.vector("1x")
    source = write_graph([a, b], [a + b, a * b])
    assert source.inputs == ("v_lambda", "v_1x")
    assert len(set(source.outputs)) == 2
    compile(source.body, "<written>", "exec")  # valid Python (compiled, never run here)


def test_names_people_write_are_valid_identifiers_distinct_after_normalisation(tmp_path: Path) -> None:
    """PyMC users name variables x with a subscript one, sigma squared; script small l and l are
    one Python identifier after NFKC."""
    x1, sigma2, script_l, ell = (pt.vector(n) for n in ("x\u2081", "\u03c3\u00b2", "\u2113", "l"))
    fgraph = pytensor.graph.fg.FunctionGraph([x1, sigma2, script_l, ell], [x1 + sigma2 * script_l - ell])
    source = write_graph(list(fgraph.inputs), list(fgraph.outputs))
    assert source.inputs[:2] == ("x1", "\u03c32")
    assert len({__import__("unicodedata").normalize("NFKC", n) for n in source.inputs}) == 4
    values = [np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0]), np.array([7.0, 8.0])]
    assert _run(fgraph, values, tmp_path) == [[9.0, 18.0]]


def _local_op_class() -> type:
    class Local(Op):  # type: ignore[misc]
        __props__ = ("scale",)

        def __init__(self, scale: float) -> None:
            self.scale = scale

        def make_node(self, x: Any) -> Apply:
            x = pt.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node: Any, inputs: Any, outputs: Any) -> None:
            outputs[0][0] = inputs[0] * self.scale

    return Local


def test_an_op_class_no_script_can_import_is_cannot_write_with_the_reason() -> None:
    x = pt.vector("x")
    local = _local_op_class()
    with pytest.raises(CannotWrite, match=r"is defined inside a function: a script cannot import it"):
        write_graph([x], [local(2.0)(x)])
    local.__module__, local.__qualname__ = "__main__", "Local"  # as a notebook's or a script's own class
    with pytest.raises(CannotWrite, match=r"defined in __main__ .* cannot import it"):
        write_graph([x], [local(2.0)(x)])
    local.__module__ = "modecfg.anything"
    with pytest.raises(CannotWrite, match=r"modecfg's, and a reproduction runs with plain PyTensor"):
        write_graph([x], [local(2.0)(x)])


# -- the parts, as text -------------------------------------------------------------------------


def _value(obj: Any) -> str:
    from modecfg.compare.graphsource import _Writer

    return _Writer().value(obj)


@pytest.mark.parametrize(
    ("obj", "text"),
    [
        (None, "None"), (True, "True"), ("s", "'s'"), (b"b", "b'b'"), (3, "3"), (1.5, "1.5"),
        (float("inf"), "float('inf')"), (float("-inf"), "float('-inf')"), (float("nan"), "float('nan')"),
        ((), "()"), ((1,), "(1,)"), ((1, 2.5), "(1, 2.5)"), ([1, (2,)], "[1, (2,)]"),
        ({"a": 1, "b": (2,)}, "{'a': 1, 'b': (2,)}"),
        (frozenset({9, 10, 1}), "frozenset({1, 10, 9})"),  # sorted by their text: always the same
        (slice(1, None, 2), "slice(1, None, 2)"), (slice(None, 3, None), "slice(None, 3, None)"),
        (np.dtype("float32"), "np.dtype('float32')"), (np.dtype("V4"), "np.dtype('|V4')"),
        (np.float32(1.5), "np.float32(1.5)"), (np.int8(-2), "np.int8(-2)"),
        (np.arange(16), f"np.array({list(range(16))}, dtype='int64')"),
        (np.array([True]), "np.array([True], dtype='bool')"),
    ],
)  # fmt: skip
def test_a_props_value_as_source(obj: Any, text: str) -> None:
    assert _value(obj) == text


def test_a_frozendict_is_imported_and_built() -> None:
    from pytensor.misc.frozendict import frozendict

    from modecfg.compare.graphsource import _Writer

    writer = _Writer()
    assert writer.value(frozendict({1: 2})) == "frozendict({1: 2})"
    assert "from pytensor.misc.frozendict import frozendict" in writer.imports


@pytest.mark.parametrize(
    ("obj", "said"),
    [
        (np.arange(17), "an array prop of 17 values"),
        (np.array(["a"]), "an array prop of 1 values"),
        (object(), "a value of type object (<object object at"),
    ],
)
def test_a_value_no_source_can_hold_is_said(obj: Any, said: str) -> None:
    with pytest.raises(CannotWrite) as caught:
        _value(obj)
    assert str(caught.value).startswith(said)


def test_a_mapping_of_a_type_no_script_can_import_is_said() -> None:
    from collections import UserDict

    class Local(UserDict):  # type: ignore[type-arg]
        pass

    with pytest.raises(CannotWrite) as caught:
        _value(Local({1: 2}))
    assert str(caught.value) == f"a mapping of type {Local.__qualname__}"


def test_constants_small_as_literals_large_and_complex_in_the_data_file() -> None:
    from pytensor.scalar.basic import constant as scalar_constant

    from modecfg.compare.graphsource import _Writer

    writer = _Writer()
    small = pt.constant(np.arange(16.0))
    assert writer.constant(small) == "const"
    assert writer.lines[-1] == f"const = pt.constant(np.array({np.arange(16.0).tolist()}, dtype='float64'))"
    large = pt.constant(np.arange(17.0), name="big")
    assert writer.constant(large) == "big"
    assert writer.lines[-1] == "big = pt.constant(data['const_big'])"
    np.testing.assert_array_equal(writer.constants["const_big"], np.arange(17.0))
    wavy = pt.constant(np.array([1 + 2j]))
    assert (
        writer.constant(wavy) == "const_2"
        and writer.lines[-1] == "const_2 = pt.constant(data['const_const_2'])"
    )
    assert writer.constant(scalar_constant(2.5)) == "const_3"
    assert writer.lines[-1] == "const_3 = ps.constant(np.float32(2.5), dtype='float32')"
    assert "import pytensor.scalar as ps" in writer.imports


def test_a_constant_of_another_type_is_said() -> None:
    from pytensor.tensor.type_other import NoneConst

    from modecfg.compare.graphsource import _Writer

    with pytest.raises(CannotWrite, match=r"^a constant of type "):
        _Writer().constant(NoneConst)


def test_fused_graphs_are_functions_of_their_own_with_distinct_names() -> None:
    from pytensor.scalar.basic import Composite, float64

    from modecfg.compare.graphsource import _Writer

    a, b = float64(), float64("b")
    first, second = Composite([a, b], [a * b + 1]), Composite([a], [a - 2])
    writer = _Writer()
    assert writer.op(first) == "composite_1()" and writer.op(second) == "composite_2()"
    text = "".join(writer.lines)
    first_inputs = "    i = ps.ScalarType('float64')('i')\n    i_2 = ps.ScalarType('float64')('i_2')\n"
    assert "def composite_1():\n" + first_inputs in text
    assert "    return ps.Composite([i, i_2], [" in text
    assert (
        "def composite_2():\n    i_3 = ps.ScalarType('float64')('i_3')\n" in text
    )  # after the first's names
    assert {"composite_1", "composite_2", "i", "i_2", "i_3"} <= writer.taken


# -- names, imports and ops ----------------------------------------------------------------------


def _writer() -> Any:
    from modecfg.compare.graphsource import _Writer

    return _Writer()


def test_fresh_names_are_identifiers_distinct_and_never_the_scripts_own() -> None:
    w = _writer()
    assert [w.fresh("x"), w.fresh("x"), w.fresh("x")] == ["x", "x_2", "x_3"]
    assert [w.fresh(""), w.fresh("..."), w.fresh("__y__"), w.fresh("a b.c"), w.fresh("Xa")] == [
        "v", "v_2", "y", "a_b_c", "Xa",
    ]  # fmt: skip
    assert [w.fresh(n) for n in ("1x", "class", "np", "pt", "ps", "data")] == [
        "v_1x", "v_class", "v_np", "v_pt", "v_ps", "v_data",
    ]  # fmt: skip
    assert [w.fresh("\u2113"), w.fresh("l"), w.fresh("é")] == ["l", "l_2", "é"]  # script l is l (NFKC)


def test_a_nodes_outputs_are_named_after_the_variable_or_its_operation() -> None:
    from pytensor.scalar.basic import Composite, float64
    from pytensor.tensor.elemwise import Elemwise

    from modecfg.compare.graphsource import _hint

    x = pt.vector("x")
    named = x * 2
    named.name = "twice"
    assert _hint(named, named.owner) == "twice"
    assert _hint(x + 1, (x + 1).owner) == "add"  # the scalar op of an Elemwise
    assert _hint(pt.exp(x), pt.exp(x).owner) == "exp"
    assert _hint(x.sum(), x.sum().owner) == "add"  # a reduction: by its scalar op too
    row = x.dimshuffle("x", 0)
    assert _hint(row, row.owner) == "dimshuffle"  # no scalar op: by the op's class
    a = float64()
    fused = Elemwise(Composite([a], [a + 1]))(x)
    assert _hint(fused, fused.owner) == "elemwise"  # a fused graph: by the Elemwise


def test_a_node_with_several_outputs_and_one_used_before_it_is_made() -> None:
    from pytensor.tensor.linalg import Eigh

    x = pt.matrix("x")
    w = _writer()
    w.names[x] = "x"
    line = w.node(Eigh()(x)[0].owner)
    assert line.startswith("(eigh, eigh_2) = Eigh(") and line.endswith(")(x, return_list=True)")
    later = x + 1
    with pytest.raises(CannotWrite) as caught:
        w.name_of(later)
    assert str(caught.value) == f"{later} is used before the node that makes it"


def test_imports_scalar_ops_through_ps_and_others_by_name_renamed_where_taken() -> None:
    w = _writer()
    assert w.imported("pytensor.scalar.basic", "exp") == "ps.exp"
    assert w.imported("pytensor.scalar", "log") == "ps.log"
    assert "import pytensor.scalar as ps" in w.imports
    assert w.imported("pytensor.tensor.math", "Sum") == "Sum"
    assert "from pytensor.tensor.math import Sum" in w.imports
    w.fresh("Elemwise")  # a variable took the name
    assert w.imported("pytensor.tensor.elemwise", "Elemwise") == "Elemwise_2"
    assert w.imported("pytensor.tensor.elemwise", "Elemwise") == "Elemwise_2"  # once
    assert "from pytensor.tensor.elemwise import Elemwise as Elemwise_2" in w.imports
    assert not any(line.endswith("import Sum as Sum") for line in w.imports)


class Outer:
    class Inner:
        pass


class Keywords(Op):  # type: ignore[misc]
    """An op whose __init__ takes its props as keyword arguments only (``**kwargs``)."""

    __props__ = ("a",)

    def __init__(self, **kwargs: Any) -> None:
        self.a = kwargs.get("a", 0)

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Any, inputs: Any, outputs: Any) -> None:
        outputs[0][0] = inputs[0]


class Opaque(Op):  # type: ignore[misc]
    """No props, no module-level instance: nothing to write it by."""

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Any, inputs: Any, outputs: Any) -> None:
        outputs[0][0] = inputs[0]


def test_an_op_built_from_keyword_props_and_one_nothing_describes() -> None:
    w = _writer()
    assert w.op(Keywords(a=3)) == "Keywords(a=3)"
    assert f"from {__name__} import Keywords" in w.imports
    with pytest.raises(CannotWrite) as caught:
        w.op(Opaque())
    assert str(caught.value) == (
        f"the op {Opaque()} ({__name__}.Opaque): neither built from its __props__ nor a module-level object"
    )


def test_which_classes_a_script_can_import(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from modecfg.compare.graphsource import _importable
    from modecfg.errors import CompareError

    assert _importable(Keywords) == (__name__, "Keywords")

    def said(cls: type) -> str:
        with pytest.raises(CannotWrite) as caught:
            _importable(cls)
        return str(caught.value)

    class Local:
        pass

    assert said(Local) == (
        f"the class {__name__}.{Local.__qualname__} is defined inside a function: a script cannot "
        "import it (define it at the top level of a module)"
    )
    main = type("Script", (), {"__module__": "__main__"})
    assert said(main) == (
        "the class Script is defined in __main__ (the script that ran, or a notebook): a reproduction "
        "is a script of its own and cannot import it (define it in a module)"
    )
    assert said(CompareError) == (
        "the class modecfg.errors.CompareError is modecfg's, and a reproduction runs with plain PyTensor"
    )
    assert said(Outer.Inner) == (
        f"the class {__name__}.Outer.Inner is nested in another class (import its module instead)"
    )
    elsewhere = type("Elsewhere", (), {"__module__": __name__})  # not this module's Elsewhere
    assert said(elsewhere) == f"the class {__name__}.Elsewhere cannot be imported by that name"
    odd = type("Odd", (), {"__module__": __name__, "__qualname__": "Odd-Name"})
    monkeypatch.setattr(sys.modules[__name__], "Odd-Name", odd, raising=False)  # reached, not importable
    assert said(odd) == f"the class {__name__}.Odd-Name cannot be imported by that name"
    module = types.ModuleType("odd-module")
    plain = type("Plain", (), {"__module__": "odd-module"})
    module.Plain = plain  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "odd-module", module)
    assert said(plain) == "the class odd-module.Plain cannot be imported by that name"


def test_objects_a_module_holds_and_ops_equal_to_one() -> None:
    import textwrap

    import pytensor.scalar as ps
    from pytensor.tensor.elemwise import Elemwise

    from modecfg.compare.graphsource import _module_level
    from modecfg.errors import CompareError

    assert _module_level(textwrap.indent) == ("textwrap", "indent")
    assert _module_level(Keywords) == (__name__, "Keywords")
    assert _module_level(Outer.Inner) is None  # nested
    assert _module_level(CompareError) is None  # modecfg's
    assert _module_level(type("S", (), {"__module__": "__main__"})) is None
    fresh = Elemwise(ps.exp)  # equal to pytensor.tensor.math.exp, not it
    assert _module_level(fresh) is None
    assert _module_level(fresh, equal=True) == ("pytensor.tensor.math", "exp")
    assert _module_level(Opaque(), equal=True) is None
