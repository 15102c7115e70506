"""The reproduction CompareMode writes: a standalone script and an ``.npz`` of its inputs.

The script builds the node that differs alone, on its inputs' values, when that shows the
difference (checked here first), else the sub-graph up to it; or, for a rewrite, the graph as
written. It compiles it with plain PyTensor on the backend that differs and on the reference,
prints what each computes, and exits 1 while they differ: what a PyTensor or numba issue needs.
The graph is written as PyTensor code (:mod:`modecfg.compare.graphsource`); the data file
holds numeric arrays only, read without pickle.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from modecfg._record import Record
from modecfg.configuration import config

__all__ = ["repro_directory", "smallest_repro", "write_repro"]


def repro_directory() -> str:
    """Where reproductions go (not created): ``CompareMode.repro_dir``, else the user's cache."""
    from modecfg._files import configured_directory

    return configured_directory(str(config.CompareMode.repro_dir), "compare")


_SCRIPT = '''\
"""{title}

Written by modecfg's CompareMode on {when}: PyTensor {pytensor}, numpy {numpy}{more}.
{what}
Run with plain PyTensor (no modecfg needed): python {name}
It prints what each backend computes and exits 1 while they differ beyond rtol={rtol:g}, atol={atol:g}.
The inputs are in {data} (numpy's .npz, read without pickle).
"""

import sys
from pathlib import Path

{imports}
import pytensor
from pytensor.compile.mode import Mode

data = np.load(Path(__file__).with_suffix(".npz"))

{body}

inputs = [{inputs}]
outputs = [{outputs}]
values = [{values}]
RTOL, ATOL = {rtol!r}, {atol!r}

runs = {{}}
for label, linker, rewrites, excluding in {runs}:
    mode = Mode(linker=linker, optimizer=rewrites)
    if excluding:
        mode = mode.excluding(excluding)
    f = pytensor.function(inputs, outputs, mode=mode, accept_inplace=True, on_unused_input="ignore")
    runs[label] = [np.asarray(v) for v in f(*[np.array(v, copy=True) for v in values])]
    print(f"{{label}}:", *runs[label], sep="\\n  ")

first, second = {compared}
differ = False
for k, (a, b) in enumerate(zip(runs[first], runs[second])):
    exact = a.dtype.kind in "biu" and b.dtype.kind in "biu"  # integers: equal or not (2**63-1 is no float)
    close = a.shape == b.shape and (
        np.array_equal(a, b) if exact else np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)
    )
    if not close:
        differ = True
        print(f"output {{k}} differs between {{first}} and {{second}}")
sys.exit(1 if differ else 0)
'''


class _Inputs(Record):
    """A graph known by its inputs (all write_repro asks of one)."""

    inputs: list[Any]


def smallest_repro(graph: Any, node: Any, input_values: Sequence[Any], inputs: list[Any], backend: str,
                   reference: str, tolerances: tuple[float, float],
                   differs: Callable[[Any, Any], bool]) -> tuple[str | None, str]:  # fmt: skip
    """``node`` alone, on its inputs' values (``input_values``), when that shows the difference
    (``differs(value on backend, value on reference)``); else the sub-graph of ``graph`` up to it,
    on the graph's ``inputs``. Either is checked here before it is written."""
    from modecfg.compare.graphs import compile_on, lone

    def shows(ins: list[Any], outs: list[Any], values: list[Any]) -> bool:
        try:
            a = compile_on(ins, outs, backend, rewrites=None)(values)
            b = compile_on(ins, outs, reference, rewrites=None)(values)
        except Exception:
            return False
        return any(differs(x, y) for x, y in zip(a, b, strict=True))

    lone_inputs, lone_outputs, positions = lone(node)
    values = [input_values[k] for k in positions]
    if shows(lone_inputs, lone_outputs, values):
        return write_repro(
            _Inputs(lone_inputs), lone_outputs, values, backend, reference, tolerances, alone=True
        )
    outputs = list(node.outputs)
    path, note = write_repro(graph, outputs, inputs, backend, reference, tolerances)
    if path is not None and not shows(list(graph.inputs), outputs, inputs):
        note = "the reproduction does not show the difference on its own: it needs the whole function"
    return path, note


def write_repro(graph: Any, outputs: list[Any], inputs: list[Any], backend: str, reference: str,
                tolerances: tuple[float, float], *, rewrites: str | None = None, exclude: str | None = None,
                alone: bool = False) -> tuple[str | None, str]:  # fmt: skip
    """Write the sub-graph of ``graph`` up to ``outputs`` as a script and its inputs as an .npz; its
    path, or None and why not. The script compiles it on ``backend`` (with ``rewrites``, and
    without ``exclude`` as a third run) and on ``reference`` as it is."""
    from modecfg._files import private_directory
    from modecfg.compare.graphs import nodes_between, upstream
    from modecfg.compare.graphsource import CannotWrite, write_graph

    used = upstream(graph, outputs)
    sub_inputs = [v for v in graph.inputs if v in used]
    try:
        source = write_graph(sub_inputs, outputs)
    except CannotWrite as exc:
        return None, f"no reproduction written: {exc}"
    directory = repro_directory()
    problem = private_directory(directory)
    if problem:
        return None, f"no reproduction written: {problem}"
    rtol, atol = tolerances
    runs: list[tuple[str, str, str | None, str | None]] = [(backend, backend, rewrites, None)]
    if exclude:
        runs.append((f"{backend} without {exclude}", backend, rewrites, exclude))
    runs.append((f"{reference} as written" if rewrites else reference, reference, None, None))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = _reserve(os.path.join(directory, f"repro-{backend.replace('|', '')}-{stamp}-{os.getpid()}"))
    arrays = {f"input_{k}": np.asarray(inputs[graph.inputs.index(v)]) for k, v in enumerate(sub_inputs)}
    arrays.update(source.constants)
    versions = _versions()
    if exclude:  # a rewrite that is not PyTensor's is registered by its module's import
        from modecfg.compare.graphs import rewrite_module

        module = rewrite_module(exclude)
        if (
            module
            and module.split(".")[0] not in ("pytensor", "__main__", "modecfg")
            and _DOTTED.fullmatch(module)
        ):
            source = source._replace(
                imports=(*source.imports, f"import {module}  # registers {_said(exclude)}")
            )
    n_nodes = len(nodes_between(sub_inputs, outputs))
    what = (
        "The first node that differs, alone, on its inputs' values (which both backends compute alike), "
        f"compiled as {backend} ran it on {backend} and on {reference}."
        if alone
        else f"The sub-graph up to the first node that differs ({n_nodes} nodes), as "
        f"{backend} ran it (rewritten), compiled without further rewrites on {backend} and on {reference}."
        if rewrites is None
        else f"The graph as written, compiled with the {rewrites} rewrites on {backend}"
        + (f", again without {_said(exclude)}," if exclude else "")
        + f" and as written on {reference}."
    )
    script = _SCRIPT.format(
        title=f"A difference between {backend} and {reference}, found by modecfg compare.",
        when=time.strftime("%Y-%m-%d %H:%M"),
        pytensor=_versions(("pytensor",))["pytensor"],
        numpy=np.__version__,
        more="".join(f", {k} {v}" for k, v in versions.items()),
        what=what,
        name=os.path.basename(base) + ".py",
        data=os.path.basename(base) + ".npz",
        rtol=rtol,
        atol=atol,
        imports="\n".join(sorted(source.imports, key=lambda line: (line.startswith("from"), line))),
        body=source.body,
        inputs=", ".join(source.inputs),
        outputs=", ".join(source.outputs),
        values=", ".join(f"data['input_{k}']" for k in range(len(sub_inputs))),
        runs=repr(runs),
        compared=f"{runs[0][0]!r}, {runs[-1][0]!r}",
    )
    try:  # never a script that does not parse: what a name held cannot end up as code
        compile(script, base + ".py", "exec")
    except SyntaxError as exc:
        os.unlink(base + ".py")  # (the name reserved, empty)
        return None, f"no reproduction written: the script would not parse ({exc.msg}, line {exc.lineno})"
    if any(array.dtype.hasobject for array in arrays.values()):  # (the data is read without pickle)
        os.unlink(base + ".py")
        return None, "no reproduction written: an input holds Python objects, which the data file cannot"
    save: Any = np.savez  # (numpy 2.0's takes no allow_pickle: passed, it would be stored as an array)
    save(base + ".npz", **arrays)
    with open(base + ".py", "w", encoding="utf-8") as fh:
        fh.write(script)
    return base + ".py", ""


def _reserve(stem: str) -> str:
    """The first of ``stem``, ``stem-2``, ``stem-3``, ... that names neither a script nor its
    data, its script made empty (``O_EXCL``: no other writer gets it). Two reproductions written
    in one second by one process never share a name (an earlier version's second replaced the
    first, which the first report still named)."""
    for n in itertools.count(1):
        base = stem if n == 1 else f"{stem}-{n}"
        if os.path.lexists(base + ".npz"):
            continue
        try:
            os.close(os.open(base + ".py", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return base
    raise AssertionError("unreachable")  # pragma: no cover - itertools.count never ends


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _said(text: str) -> str:
    """``text`` (a rewrite's name: anyone's string) as it may stand in a docstring or a comment:
    ASCII, escapes for everything else, no quote that could end the docstring."""
    escaped = text.encode("unicode_escape").decode("ascii")
    return escaped.replace('"', "\\x22").replace("'", "\\x27")


def _versions(names: Sequence[str] = ("numba", "jax")) -> dict[str, str]:
    import importlib.metadata

    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found
