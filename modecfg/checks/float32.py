"""Find every float64 that enters a float32 graph, say where it came from and how to fix it.

One finding per *origin*: the place where float64 first enters the graph, either a
float64 root (an input, a shared variable, a constant) or an operation that makes
float64 out of narrower inputs (mixing an integer with a float, the mean of integers,
a product with a shape, an explicit cast). Every float64 variable downstream is one of
its ``consequences``, not a finding of its own.

The graph checked is the one the user wrote (before rewrites), so that operations and
lines are the user's. One pass in topological order, linear in the size of the graph.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Any

from modecfg._pytensor.kinds import is_cast, is_constant, is_elemwise, is_shape_op
from modecfg._pytensor.locate import untouched
from modecfg._record import Record
from modecfg._source import SourceLine, source_line

__all__ = ["Finding", "Reason", "check_float32", "graph_of"]

WIDE = "float64"


class Reason(enum.StrEnum):
    """Why float64 entered the graph."""

    FLOAT64_INPUT = "float64 input"
    FLOAT64_SHARED = "float64 shared variable"
    FLOAT64_CONSTANT = "float64 constant"
    INT_FLOAT_UPCAST = "integer/float mixing that upcasts"
    SHAPE_ARITHMETIC = "integer mean or division by a shape or size"
    EXPLICIT_CAST = "explicit cast"


class Finding(Record):
    """Where one float64 enters the graph, and what follows from it."""

    variable: Any  # the first float64 variable (the root itself, or the operation's output)
    node: Any  # the operation that brought float64 in (for a root: where it meets float32)
    op: str
    input_dtypes: tuple[str, ...]
    reason: Reason
    source: SourceLine | None  # the user's line that made it
    fix: str
    consequences: tuple[Any, ...]  # float64 variables downstream

    def __str__(self) -> str:
        where = f"{self.source}: {self.source.code}" if self.source else "(no line recorded)"
        lines = [
            where,
            f"  {self.reason}: {self.op}({', '.join(self.input_dtypes)}) -> float64",
            f"  fix: {self.fix}",
        ]
        if self.consequences:
            lines.append(f"  {len(self.consequences)} float64 variable(s) follow from it downstream")
        return "\n".join(lines)


def _is_wide(var: Any) -> bool:
    return getattr(getattr(var, "type", None), "dtype", None) == WIDE


def _dtype(var: Any) -> str:
    return str(getattr(getattr(var, "type", None), "dtype", type(var).__name__))


def _is_int(var: Any) -> bool:
    return _dtype(var).startswith(("int", "uint"))


def _name(var: Any) -> str:
    if getattr(var, "name", None):
        return str(var.name)
    owner = getattr(var, "owner", None)
    return f"the {_dtype(var)} result of {owner.op}" if owner is not None else f"a {_dtype(var)} value"


_CONSTRUCTORS = {0: "scalar", 1: "vector", 2: "matrix", 3: "tensor3", 4: "tensor4"}


def _declaration(var: Any) -> str:
    """How to declare ``var`` as a float32 input: its name, its number of dimensions, its static
    shape where it has one (``pt.matrix('X', dtype='float32')``)."""
    name = getattr(var, "name", None)
    shape = tuple(getattr(getattr(var, "type", None), "shape", ()) or ())
    named = f"{str(name)!r}, " if name else ""
    if all(size is None for size in shape) and len(shape) in _CONSTRUCTORS:
        return f"pt.{_CONSTRUCTORS[len(shape)]}({named}dtype='float32')"
    return f"pt.tensor({named}dtype='float32', shape={shape!r})"


def graph_of(target: Any) -> tuple[list[Any], list[Any]]:
    """The output variables and the nodes, in topological order, of what is to be checked.

    ``target`` is a compiled function (its graph before rewrites is checked), a
    FunctionGraph, a variable, or a sequence of variables.
    """
    maker = getattr(target, "maker", None)
    if maker is not None:
        target = untouched(maker.fgraph) or maker.fgraph
    if hasattr(target, "apply_nodes") and hasattr(target, "outputs"):
        outputs = list(target.outputs)
    elif isinstance(target, Sequence) and not isinstance(target, str):
        outputs = list(target)
    else:
        outputs = [target]
    return outputs, _toposort(outputs)


def _toposort(outputs: Iterable[Any]) -> list[Any]:
    order: list[Any] = []
    seen: set[int] = set()
    for out in outputs:
        stack = [(out.owner, False)] if getattr(out, "owner", None) is not None else []
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for inp in node.inputs:
                owner = inp.owner
                if owner is not None and id(owner) not in seen:
                    stack.append((owner, False))
    return order


class _Walker:
    def __init__(self) -> None:
        self.findings: list[dict[str, Any]] = []
        self.origins: dict[int, frozenset[int]] = {}  # id(float64 variable) -> finding indices
        self.from_shape: dict[int, bool] = {}
        # A float64 cast of a shape (mean() makes one to divide by the size) is an origin
        # only if it meets integers or float32 on its own; next to float64 that has an
        # origin already, it follows that one and is not a finding.
        self.weak: set[int] = set()
        self.confirmed: set[int] = set()

    def shape_derived(self, var: Any) -> bool:
        """True if an integer ``var`` is computed from a shape or size (iterative: graphs are deep)."""
        memo = self.from_shape
        stack = [(var, False)]
        while stack:
            current, expanded = stack.pop()
            key = id(current)
            if key in memo and not expanded:
                continue
            owner = current.owner
            if owner is None:
                memo[key] = False
            elif is_shape_op(owner.op):
                memo[key] = True
            else:
                parents = [i for i in owner.inputs if _is_int(i) or _dtype(i) == WIDE]
                if expanded:
                    memo[key] = any(memo.get(id(p), False) for p in parents)
                else:
                    memo[key] = False  # provisional, until its parents are known
                    stack.append((current, True))
                    stack.extend((p, False) for p in parents if id(p) not in memo)
        return memo[id(var)]

    def add(self, **fields: Any) -> int:
        fields.setdefault("consequences", [])
        self.findings.append(fields)
        return len(self.findings) - 1

    def root(self, var: Any) -> frozenset[int]:
        key = id(var)
        if key not in self.origins:
            if is_constant(var):
                reason = Reason.FLOAT64_CONSTANT
                fix = (
                    "make the constant float32: np.float32(...) for a scalar, "
                    "np.asarray(..., dtype='float32') for an array"
                )
            elif hasattr(var, "get_value"):
                reason = Reason.FLOAT64_SHARED
                named = f" {var.name}" if getattr(var, "name", None) else ""
                fix = (
                    f"create the shared variable{named} from a float32 array: "
                    "pytensor.shared(value.astype('float32'))"
                )
            else:
                reason = Reason.FLOAT64_INPUT
                fix = f"declare the input {_name(var)} as float32: {_declaration(var)}, or floatX"
            self.origins[key] = frozenset([self.add(variable=var, node=None, reason=reason, fix=fix)])
        return self.origins[key]

    def visit(self, node: Any) -> None:
        wide_in = [i for i in node.inputs if _is_wide(i)]
        for inp in wide_in:
            if inp.owner is None:
                self.root(inp)
        wide_out = [o for o in node.outputs if _is_wide(o)]
        if wide_in:
            origins = frozenset().union(*(self.origins.get(id(i), frozenset()) for i in wide_in))
            strong = origins - self.weak
            if strong:
                origins = strong
            elif is_elemwise(node.op) and any(
                not _is_wide(i) for i in node.inputs if _is_int(i) or _dtype(i).startswith("float")
            ):  # arithmetic with integers or float32 (not an index, not a shape argument)
                self.confirmed |= origins
            if any(_dtype(i).startswith("float") and not _is_wide(i) for i in node.inputs):
                for index in origins:  # where float64 meets float32: the operation to report
                    if self.findings[index]["node"] is None:
                        self.findings[index]["node"] = node
            for out in wide_out:
                self.origins[id(out)] = origins
                for index in origins:
                    self.findings[index]["consequences"].append(out)
            return
        if wide_out:
            reason, fix = self.classify(node)
            index = self.add(variable=wide_out[0], node=node, reason=reason, fix=fix)
            if reason is Reason.SHAPE_ARITHMETIC and is_cast(getattr(node.op, "scalar_op", node.op)):
                self.weak.add(index)
            for out in wide_out:
                self.origins[id(out)] = frozenset([index])
            for out in wide_out[1:]:
                self.findings[index]["consequences"].append(out)

    def classify(self, node: Any) -> tuple[Reason, str]:
        ints = [i for i in node.inputs if _is_int(i)]
        op = node.op
        scalar = getattr(op, "scalar_op", op)
        is_cast_op = is_cast(scalar)
        if any(self.shape_derived(i) for i in ints):
            if is_cast_op:
                return (
                    Reason.SHAPE_ARITHMETIC,
                    "the mean (or a division by a size) of integers is float64: take the mean of a "
                    "float32 array (x.astype('float32').mean()) or pass dtype='float32'",
                )
            return (
                Reason.SHAPE_ARITHMETIC,
                "shapes and sizes are int64: cast them before the arithmetic, "
                "e.g. pt.cast(x.shape[0], 'float32')",
            )
        if is_cast_op:
            return Reason.EXPLICIT_CAST, "cast to float32 (or config.floatX) instead of float64"
        if ints and getattr(op, "dtype", None) != WIDE:  # asked for float64: said below, whatever its inputs
            operand = ints[0]
            name = getattr(operand, "name", None)
            roots = [] if name else _named_int_roots(operand)
            if name or not roots:
                what = name or (f"(made by {operand.owner.op})" if operand.owner is not None else "")
                operand_is = " ".join(filter(None, [_dtype(operand), "operand", what]))
                return (
                    Reason.INT_FLOAT_UPCAST,
                    f"cast the {operand_is} to float32 before this operation: "
                    f"pt.cast({name or '...'}, 'float32'), or make it float32 where it is created",
                )
            names = ", ".join(roots)
            return (
                Reason.INT_FLOAT_UPCAST,
                f"the {_dtype(operand)} operand is computed from {names}: declare {names} float32 where "
                f"it is created (e.g. pt.vector('{roots[0]}', dtype='float32')), or cast it first: "
                f"pt.cast({roots[0]}, 'float32')",
            )
        return (
            Reason.EXPLICIT_CAST,
            f"{op} was asked for float64 (a dtype= or acc_dtype= argument): ask for float32",
        )


def _named_int_roots(var: Any, limit: int = 200) -> list[str]:
    """The named integer inputs an integer value is computed from (``y`` for ``1 - y``)."""
    names: list[str] = []
    seen: set[int] = set()
    stack = [var]
    while stack and len(seen) < limit:
        current = stack.pop()
        if id(current) in seen or not _is_int(current):
            continue
        seen.add(id(current))
        if current.owner is None:
            if getattr(current, "name", None) and current.name not in names and not is_constant(current):
                names.append(str(current.name))
            continue
        stack.extend(current.owner.inputs)
    return names


def _fold_gradient_seeds(findings: list[Finding]) -> list[Finding]:
    """Float64 that ``pt.grad`` made is no origin of its own: the seed of the gradient of a
    float64 cost (a float64 constant), and the cast back to float64 in the gradient of a cast
    down to float32 (what the forward expression cast was float64), follow from whatever made
    the forward graph float64. Folded into the first other finding; alone, said at the grad
    call, with the fix that works."""
    from modecfg._pytensor.gradients import grad_origin

    def made_by_grad(f: Finding) -> bool:
        return (
            f.reason in (Reason.FLOAT64_CONSTANT, Reason.EXPLICIT_CAST)
            and f.node is not None
            and grad_origin(f.node) is not None
        )

    made = [f for f in findings if made_by_grad(f)]
    if not made:
        return findings
    others = [f for f in findings if not made_by_grad(f)]
    if others:
        first = others[0]
        folded = first._replace(
            consequences=first.consequences + tuple(v for s in made for v in (s.variable, *s.consequences))
        )
        return [folded, *others[1:]]
    said = made[0]
    origin = grad_origin(said.node)
    assert origin is not None
    if said.reason is Reason.FLOAT64_CONSTANT:
        fix = (
            "the gradient of a float64 cost is float64 from its first step: make the cost float32 "
            "(find where float64 enters it), and the gradient follows"
        )
    else:
        where = f" at {origin.forward}" if origin.forward is not None else ""
        fix = (
            f"the gradient of a cast to float32{where} casts back to float64, the dtype of what it "
            "cast: make that float32 (find where float64 enters it), and the gradient follows"
        )
    return [said._replace(source=origin.call or said.source, fix=fix)]


class Findings(list[Finding]):
    """The findings of :func:`check_float32`: a list, shown as a table in a notebook."""

    def __str__(self) -> str:
        if not self:
            return "no float64 enters this graph"
        return "\n".join(str(f) for f in self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        from modecfg._html import html_table

        if not self:
            return "<p><b>float32 check</b>: no float64 enters this graph</p>"
        rows = [
            (
                f"{f.source}" if f.source else "(no line recorded)",
                f.source.code if f.source else "",
                f"{f.reason}: {f.op}({', '.join(f.input_dtypes)}) -> float64",
                f.fix,
                len(f.consequences),
            )
            for f in self
        ]
        caption = f"float32 check: {len(self)} place(s) where float64 enters"
        return html_table(["where", "code", "what", "fix", "float64 downstream"], rows, caption=caption)


def check_float32(target: Any) -> Findings:
    """Every origin of float64 in ``target``: a compiled function, a FunctionGraph, or outputs."""
    outputs, order = graph_of(target)
    walker = _Walker()
    for node in order:
        walker.visit(node)
    for out in outputs:
        if _is_wide(out) and out.owner is None:
            walker.root(out)
        if _is_wide(out):
            walker.confirmed |= walker.origins.get(id(out), frozenset()) & walker.weak
    findings = []
    for index, raw in enumerate(walker.findings):
        if index in walker.weak and index not in walker.confirmed:
            continue
        var, node = raw["variable"], raw["node"]
        if node is None and var.owner is None:  # a root that never meets float32: its first use,
            users = [n for n in order if var in n.inputs]  # preferably one computing in float64
            node = next(
                (n for n in users if any(_is_wide(o) for o in n.outputs)), users[0] if users else None
            )
        shown = node if node is not None else var
        source = source_line(var) if var.owner is None else None
        source = source or (source_line(node) if node is not None else None)
        findings.append(
            Finding(
                variable=var,
                node=node,
                op=str(shown.op) if node is not None else "input",
                input_dtypes=tuple(_dtype(i) for i in node.inputs) if node is not None else (),
                reason=raw["reason"],
                source=source,
                fix=raw["fix"],
                consequences=tuple(raw["consequences"]),
            )
        )
    return Findings(_fold_gradient_seeds(findings))
