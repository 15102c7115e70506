"""A PyTensor graph written as Python source that rebuilds it with plain PyTensor.

What the comparing mode's reproduction scripts are made of (:mod:`modecfg.compare.mode`):
a graph a maintainer can read, edit and run, with no pickle in it. Each node is written as
its op built from the op's ``__props__`` (checked here: the op built from the very values
written equals the node's op), a module-level object that equals it (``pytensor.scalar.exp``),
or, for a fused scalar graph (``Composite``), its scalar graph written out the same way. An op
that none of these describes is a :class:`CannotWrite` naming it: no guessing.

Inputs are ``pt.tensor(name, dtype=..., shape=...)``; a constant of up to 16 values is written
as a literal, a larger one is an array of the data file beside the script (``.npz``, read
without pickle). Nothing here runs the source it writes.
"""

from __future__ import annotations

import inspect
import keyword
import math
import re
import sys
import textwrap
import unicodedata
from collections.abc import Mapping
from typing import Any

import numpy as np

from modecfg._record import Record

__all__ = ["CannotWrite", "Source", "write_graph"]

_LITERAL_MAX = 16  # a constant with more values goes to the data file


class CannotWrite(Exception):
    """A part of the graph that cannot be written as source (said by the message)."""


class Source(Record):
    imports: tuple[str, ...]  # import lines the body needs, sorted
    body: str  # statements defining the inputs, then every node, in order
    inputs: tuple[str, ...]  # the names of the graph's inputs, in order
    outputs: tuple[str, ...]  # the names of its outputs, in order
    constants: dict[str, np.ndarray]  # the larger constants, by their key in the data file (const_...)


class _Writer:
    def __init__(self) -> None:
        self.imports: set[str] = {"import numpy as np", "import pytensor.tensor as pt"}
        self.lines: list[str] = []
        self.names: dict[Any, str] = {}  # variable -> its name in the source
        self.taken: set[str] = set()
        self.constants: dict[str, np.ndarray] = {}
        self.composites = 0
        self.aliases: dict[tuple[str, str], str] = {}  # (module, name) imported -> its name here

    # -- names ---------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        """A new Python identifier for ``hint`` (a variable's name: x with a subscript one is
        ``x1``; what no identifier may hold becomes ``_``), distinct from the others after the
        NFKC normalisation Python applies to identifiers (script small l and l are one name there)."""
        hint = unicodedata.normalize("NFKC", hint or "v")
        base = "".join(c if ("a" + c).isidentifier() else "_" for c in hint).strip("_") or "v"
        if base[0].isdigit() or keyword.iskeyword(base) or base in {"np", "pt", "ps", "data"}:
            base = "v_" + base
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def name_of(self, var: Any) -> str:
        found = self.names.get(var)
        if found is not None:
            return found
        if var.owner is not None:
            raise CannotWrite(f"{var} is used before the node that makes it")  # not in topological order
        return self.constant(var)

    # -- values --------------------------------------------------------------------------
    def value(self, obj: Any) -> str:
        """Source for a prop's value."""
        if obj is None or isinstance(obj, bool | str | bytes | int):
            return repr(obj)
        if isinstance(obj, float):
            return repr(obj) if math.isfinite(obj) else f"float({str(obj)!r})"
        if isinstance(obj, tuple):
            inner = ", ".join(self.value(v) for v in obj)
            return f"({inner},)" if len(obj) == 1 else f"({inner})"
        if isinstance(obj, list):
            return "[" + ", ".join(self.value(v) for v in obj) + "]"
        if isinstance(obj, Mapping):
            items = "{" + ", ".join(f"{self.value(k)}: {self.value(v)}" for k, v in obj.items()) + "}"
            if type(obj) is dict:
                return items
            named = _module_level(type(obj))  # PyTensor's frozendict
            if named is None:
                raise CannotWrite(f"a mapping of type {type(obj).__qualname__}")
            return f"{self.imported(*named)}({items})"
        if isinstance(obj, frozenset):
            return "frozenset({" + ", ".join(self.value(v) for v in sorted(obj, key=repr)) + "})"
        if isinstance(obj, slice):
            return f"slice({self.value(obj.start)}, {self.value(obj.stop)}, {self.value(obj.step)})"
        if isinstance(obj, np.dtype):
            return f"np.dtype({obj.str if obj.kind == 'V' else obj.name!r})"
        if isinstance(obj, np.generic):
            return f"np.{obj.dtype.name}({self.value(obj.item())})"
        if isinstance(obj, np.ndarray):
            if obj.size > _LITERAL_MAX or obj.dtype.kind not in "biufc":
                raise CannotWrite(f"an array prop of {obj.size} values")
            return f"np.array({self.value(obj.tolist())}, dtype={obj.dtype.name!r})"
        kind = _type_source(obj)
        if kind is not None:
            self.imports.update(kind[1])
            return kind[0]
        if _is_op(obj):
            return self.op(obj)
        named = _module_level(obj)
        if named is not None:
            return self.imported(*named)
        raise CannotWrite(f"a value of type {type(obj).__qualname__} ({obj!r})")

    def imported(self, module: str, name: str) -> str:
        if module == "pytensor.scalar.basic" or module == "pytensor.scalar":
            self.imports.add("import pytensor.scalar as ps")
            return f"ps.{name}"
        alias = self.aliases.get((module, name))
        if alias is None:
            alias = self.fresh(name) if name in self.taken else name
            self.taken.add(alias)
            self.aliases[(module, name)] = alias
            self.imports.add(f"from {module} import {name}" + (f" as {alias}" if alias != name else ""))
        return alias

    # -- ops -------------------------------------------------------------------------------
    def op(self, op: Any) -> str:
        from pytensor.scalar.basic import Composite

        if isinstance(op, Composite):
            return self.composite(op)
        built = _from_props(op)
        if built is not None:
            cls = self.imported(*_importable(type(op)))
            args = ", ".join(f"{k}={self.value(v)}" for k, v in built.items())
            return f"{cls}({args})"
        named = _module_level(op, equal=True)
        if named is not None:
            return self.imported(*named)
        raise CannotWrite(
            f"the op {op} ({type(op).__module__}.{type(op).__qualname__}): neither built from its "
            "__props__ nor a module-level object"
        )

    def composite(self, op: Any) -> str:
        """A fused scalar graph: written as a function that builds it, then called."""
        self.composites += 1
        fn = self.fresh(f"composite_{self.composites}")
        inner = _Writer()
        inner.imports, inner.aliases = self.imports, self.aliases
        inner.taken = set(self.taken)
        fgraph = op.fgraph
        lines = [f"def {fn}():"]
        for var in fgraph.inputs:
            name = inner.fresh(var.name or "i")
            inner.names[var] = name
            lines.append(f"    {name} = {inner.value(var.type)}({name!r})")
        for node in fgraph.toposort():
            statement = inner.node(node)
            lines.extend(textwrap.indent(line, "    ") for line in inner.lines)  # its constants first
            inner.lines.clear()
            lines.append("    " + statement)
        ins = ", ".join(inner.names[v] for v in fgraph.inputs)
        outs = ", ".join(inner.name_of(v) for v in fgraph.outputs)
        self.imports.add("import pytensor.scalar as ps")
        lines.append(f"    return ps.Composite([{ins}], [{outs}])")
        self.taken |= inner.taken
        if inner.constants:
            raise CannotWrite(f"{op}: a fused graph with array constants")
        self.lines.append("\n".join(lines) + "\n")
        return f"{fn}()"

    def node(self, node: Any) -> str:
        ins = ", ".join(self.name_of(v) for v in node.inputs)
        op = self.op(node.op)
        outs = [self.fresh(_hint(v, node)) for v in node.outputs]
        for var, name in zip(node.outputs, outs, strict=True):
            self.names[var] = name
        target = f"({outs[0]},)" if len(outs) == 1 else f"({', '.join(outs)})"
        return f"{target} = {op}({ins}, return_list=True)"

    def constant(self, var: Any) -> str:
        from pytensor.scalar.basic import ScalarConstant
        from pytensor.tensor.variable import TensorConstant

        name = self.fresh(var.name or "const")
        self.names[var] = name
        if isinstance(var, TensorConstant):
            data = np.asarray(var.data)
            if data.size <= _LITERAL_MAX and data.dtype.kind in "biuf":
                literal = self.value(data.tolist())
                self.lines.append(f"{name} = pt.constant(np.array({literal}, dtype={data.dtype.name!r}))")
            else:
                key = f"const_{name}"  # beside the inputs' keys (input_0, ...) in one data file
                self.constants[key] = data
                self.lines.append(f"{name} = pt.constant(data[{key!r}])")
            return name
        if isinstance(var, ScalarConstant):
            self.imports.add("import pytensor.scalar as ps")
            self.lines.append(f"{name} = ps.constant({self.value(var.data)}, dtype={var.type.dtype!r})")
            return name
        raise CannotWrite(f"a constant of type {var.type}")


def _hint(var: Any, node: Any) -> str:
    if var.name:
        return str(var.name)
    op = type(node.op).__name__.lower()
    scalar = getattr(node.op, "scalar_op", None)
    if scalar is not None and type(scalar).__name__ != "Composite":
        op = type(scalar).__name__.lower()
    return op


def _is_op(obj: Any) -> bool:
    from pytensor.graph.op import Op

    return isinstance(obj, Op)


def _type_source(obj: Any) -> tuple[str, tuple[str, ...]] | None:
    from pytensor.scalar.basic import ScalarType
    from pytensor.tensor.type import TensorType

    if isinstance(obj, TensorType):
        return f"pt.TensorType({obj.dtype!r}, shape={tuple(obj.shape)!r})", ()
    if isinstance(obj, ScalarType):
        return f"ps.ScalarType({obj.dtype!r})", ("import pytensor.scalar as ps",)
    return None


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _importable(cls: type) -> tuple[str, str]:
    """(module, name) by which a script imports ``cls``, or a CannotWrite saying why none does."""
    module, qualname = str(cls.__module__), str(cls.__qualname__)
    shown = f"{module}.{qualname}"
    if "<" in qualname:  # <locals>, <lambda>
        raise CannotWrite(f"the class {shown} is defined inside a function: a script cannot import it "
                          "(define it at the top level of a module)")  # fmt: skip
    if module == "__main__":
        raise CannotWrite(f"the class {qualname} is defined in __main__ (the script that ran, or a "
                          "notebook): a reproduction is a script of its own and cannot import it "
                          "(define it in a module)")  # fmt: skip
    if module.split(".")[0] == "modecfg":
        raise CannotWrite(f"the class {shown} is modecfg's, and a reproduction runs with plain PyTensor")
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is not cls or not _DOTTED.fullmatch(module) or not _DOTTED.fullmatch(qualname):
        raise CannotWrite(f"the class {shown} cannot be imported by that name")
    if "." in qualname:  # a class inside a class: imported through the outer one
        raise CannotWrite(f"the class {shown} is nested in another class (import its module instead)")
    return module, qualname


def _module_level(obj: Any, *, equal: bool = False) -> tuple[str, str] | None:
    """(module, name) of an object a module already imported holds at its top level: the object
    itself (a function, a class), or for an op one that equals it (``pytensor.scalar.exp``)."""
    qualname = getattr(obj, "__qualname__", None)
    module_name = getattr(obj, "__module__", None)
    if (
        isinstance(qualname, str)
        and isinstance(module_name, str)
        and "<" not in qualname
        and module_name != "__main__"
        and module_name.split(".")[0] != "modecfg"
    ):
        found: Any = sys.modules.get(module_name)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is obj and "." not in qualname:
            return module_name, qualname
    if not equal:
        return None
    for module_name in (type(obj).__module__, "pytensor.scalar.basic", "pytensor.scalar.math",
                        "pytensor.tensor.math", "pytensor.tensor.basic"):  # fmt: skip
        module = sys.modules.get(module_name)
        for name, value in vars(module or object()).items():
            if not name.startswith("_") and type(value) is type(obj) and _equal(value, obj):
                return module_name, name
    return None


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # an op whose comparison needs what a bare instance lacks
        return False


def _from_props(op: Any) -> dict[str, Any] | None:
    """The keyword arguments that build an op equal to ``op`` from its props, or None."""
    props = getattr(type(op), "__props__", None)
    if props is None:
        return None
    try:
        params = inspect.signature(type(op).__init__).parameters
    except (TypeError, ValueError):
        return None
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kwargs = {p: getattr(op, p) for p in props if p in params or takes_any}
    try:
        built = type(op)(**kwargs)
    except Exception:  # an op that cannot be built so
        return None
    try:
        same = built == op and hash(built) == hash(op)
    except Exception:  # one that compares what only make_node gives it (a symbolic op): its props
        same = all(_equal(getattr(built, p, None), getattr(op, p)) for p in props)
    return kwargs if same else None


def write_graph(inputs: list[Any], outputs: list[Any]) -> Source:
    """The source of the graph from ``inputs`` to ``outputs`` (every node between them)."""
    from pytensor.graph.traversal import io_toposort

    writer = _Writer()
    input_names = []
    for var in inputs:
        name = writer.fresh(var.name or "x")
        writer.names[var] = name
        input_names.append(name)
        kind = _type_source(var.type)
        if kind is None:
            raise CannotWrite(f"an input of type {var.type}")
        writer.imports.update(kind[1])
        writer.lines.append(f"{name} = {kind[0]}({name!r})")
    for node in io_toposort(inputs, outputs):
        writer.lines.append(writer.node(node))
    output_names = tuple(writer.name_of(v) for v in outputs)
    return Source(
        tuple(sorted(writer.imports)),
        "\n".join(writer.lines),
        tuple(input_names),
        output_names,
        writer.constants,
    )
