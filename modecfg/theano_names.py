"""The Theano and Aesara names a script uses that moved: ``modecfg migrate SCRIPT.py [--write]``.

Every import of ``theano`` or ``aesara`` and every dotted name reached through one
(``theano.tensor.opt.Assert``, ``T.nnet.sigmoid`` after ``import theano.tensor as T``,
``from theano.compile.nanguardmode import NanGuardMode``) is looked up in :data:`MOVED`, longest
prefix first; what is not there keeps its path under ``pytensor`` (``theano.printing.Print`` is
``pytensor.printing.Print``). A flag read as ``theano.config.X`` that is obsolete is said with
what replaced it. ``--write`` rewrites the names in place: the script is read with :mod:`ast`
(for the names and their positions) and only those spans of its text are replaced, so its
comments, blank lines and layout stay as they are (libcst would do the same with a dependency
of its own; a span replacement needs none). The result is compiled before it is written, and a
name that cannot be rewritten in place (an import whose names moved to different modules) is
said, not guessed at. Nothing in the script is run or imported.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Iterator

from modecfg._record import Record

__all__ = ["MOVED", "Rename", "find", "rewrite"]

ROOTS = {"theano": "pytensor", "aesara": "pytensor"}

# old dotted name -> (new dotted name, why). Longest prefix wins; below it, the rest of the path
# is kept. Every new name here is checked to exist by the tests (tests/test_theano_names.py).
MOVED: dict[str, tuple[str, str]] = {
    "theano.compile.nanguardmode.NanGuardMode": ("modecfg.NanGuardMode", "NanGuardMode is modecfg's"),
    "theano.compile.nanguardmode": ("modecfg", "NanGuardMode is modecfg's"),
    "theano.compile.NanGuardMode": ("modecfg.NanGuardMode", "NanGuardMode is modecfg's"),
    "theano.ProfileMode": ("modecfg.ProfileMode", "ProfileMode is modecfg's (profile=True in pytensor)"),
    "theano.compile.ProfileMode": ("modecfg.ProfileMode", "ProfileMode is modecfg's"),
    "theano.compile.profilemode.ProfileMode": ("modecfg.ProfileMode", "ProfileMode is modecfg's"),
    "theano.compile.debugmode.DebugMode": ("modecfg.DebugMode", "DebugMode, modecfg's (it trains)"),
    "theano.compile.DebugMode": ("modecfg.DebugMode", "DebugMode, modecfg's (it trains)"),
    "theano.compile.MonitorMode": ("modecfg.MonitorMode", "MonitorMode is modecfg's"),
    "theano.compile.monitormode.MonitorMode": ("modecfg.MonitorMode", "MonitorMode is modecfg's"),
    "theano.tensor.opt.Assert": ("pytensor.raise_op.Assert", "Assert moved to pytensor.raise_op"),
    "theano.gof.OpWiseCLinker": ("pytensor.link.c.basic.OpWiseCLinker", "theano.gof was split"),
    "theano.gof.Op": ("pytensor.graph.op.Op", "theano.gof was split"),
    "theano.gof.Apply": ("pytensor.graph.basic.Apply", "theano.gof was split"),
    "theano.gof.Variable": ("pytensor.graph.basic.Variable", "theano.gof was split"),
    "theano.gof.FunctionGraph": ("pytensor.graph.fg.FunctionGraph", "theano.gof was split"),
    "theano.gof.COp": ("pytensor.link.c.op.COp", "theano.gof was split"),
    "theano.tensor.nnet.sigmoid": ("pytensor.tensor.sigmoid", "theano.tensor.nnet was removed"),
    "theano.tensor.nnet.softplus": ("pytensor.tensor.softplus", "theano.tensor.nnet was removed"),
    "theano.tensor.nnet.softmax": ("pytensor.tensor.special.softmax", "theano.tensor.nnet was removed"),
    "theano.tensor.nnet.logsoftmax": ("pytensor.tensor.special.log_softmax", "theano.tensor.nnet is gone"),
    "theano.tensor.shared_randomstreams.RandomStreams": (
        "pytensor.tensor.random.utils.RandomStream", "random streams are pytensor.tensor.random's"
    ),
    "theano.sandbox.rng_mrg.MRG_RandomStreams": (
        "pytensor.tensor.random.utils.RandomStream", "random streams are pytensor.tensor.random's"
    ),
}  # fmt: skip
for _old, _new in list(MOVED.items()):  # Aesara had Theano's layout
    MOVED.setdefault("aesara" + _old[len("theano") :], _new)
# The same names spelled with pytensor, as a reader of the Theano documents writes them by hand
# (`from pytensor.compile.nanguardmode import NanGuardMode` fails bare): where PyTensor has no
# such name (the tests check each). PyTensor's own DebugMode and MonitorMode stay PyTensor's.
_PYTENSOR_HAS = ("theano.compile.debugmode.", "theano.compile.monitormode.", "theano.compile.DebugMode",
                 "theano.compile.MonitorMode", "theano.tensor.nnet.")  # fmt: skip
for _old, _new in list(MOVED.items()):
    if _old.startswith("theano.") and not _old.startswith(_PYTENSOR_HAS):
        MOVED.setdefault("pytensor" + _old[len("theano") :], _new)

# what an old name needs said but has no new name to write (its module is gone)
GONE: dict[str, str] = {
    "theano.sandbox.cuda": "the old GPU backend is gone: device=cuda runs graphs through JAX",
    "theano.gpuarray": "the old GPU backend is gone: device=cuda runs graphs through JAX",
    "theano.tensor.nnet.conv2d": "convolutions: pytensor.tensor.conv.abstract_conv.conv2d",
}


class Rename(Record):
    """One name of the script that moved: where, as written, and what to write instead."""

    line: int
    column: int  # 1-based, in characters
    written: str  # the text as it is in the script
    old: str  # the dotted name it stands for
    new: str  # the text to write ('' where nothing can be written in place)
    why: str

    def __str__(self) -> str:
        to = self.new.replace("\n", "; ") if self.new else "(by hand)"
        return f"{self.line}:{self.column}: {self.written} -> {to}: {self.why}"


@functools.cache
def _pytensor_dirs() -> tuple[str, ...]:
    """Where PyTensor's package is installed, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("pytensor")
    return tuple(spec.submodule_search_locations or ()) if spec is not None else ()


def module_exists(dotted: str) -> bool:
    """Whether the installed PyTensor has module ``dotted`` (``pytensor.tensor.nnet``: no), by its
    files; other packages' names are taken as they are (nothing is imported)."""
    parts = dotted.split(".")
    if parts[0] != "pytensor" or len(parts) == 1:
        return True
    for base in _pytensor_dirs():
        path = os.path.join(base, *parts[1:])
        if os.path.isfile(os.path.join(path, "__init__.py")) or os.path.isfile(path + ".py"):
            return True
        folder, leaf = os.path.split(path)
        if os.path.isdir(folder) and any(
            name.startswith(leaf + ".") and name.endswith((".so", ".pyd")) for name in os.listdir(folder)
        ):
            return True
    return not _pytensor_dirs()  # no PyTensor here to ask: take the name as it is


def translate(dotted: str) -> tuple[str, str] | None:
    """The new dotted name of ``dotted`` and why; None when it is no Theano or Aesara name (or a
    PyTensor spelling of a name that moved elsewhere)."""
    parts = dotted.split(".")
    if parts[0] not in ROOTS:
        if parts[0] != "pytensor":
            return None
        for cut in range(len(parts), 1, -1):
            head = ".".join(parts[:cut])
            if head in MOVED:
                new, why = MOVED[head]
                return ".".join([new, *parts[cut:]]), why
        return None
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        if head in GONE:
            return "", GONE[head]
        if head in MOVED:
            new, why = MOVED[head]
            return ".".join([new, *parts[cut:]]), why
    return ".".join([ROOTS[parts[0]], *parts[1:]]), f"{parts[0]} is now {ROOTS[parts[0]]}"


# Python's own line ends (ast's line numbers count these, and only these: str.splitlines also
# breaks at form feeds, \x1c-\x1e, \x85 and U+2028/9, which are text inside a line to Python)
_LINE_END = re.compile(r"\r\n|\r|\n")


def lines_of(source: str) -> list[str]:
    """``source``'s lines as Python reads them, each with its line end."""
    lines = []
    at = 0
    for end in _LINE_END.finditer(source):
        lines.append(source[at : end.end()])
        at = end.end()
    if at < len(source):
        lines.append(source[at:])
    return lines


def newline_of(source: str) -> str:
    """The line end ``source`` uses (its first), ``\n`` where it has none."""
    found = _LINE_END.search(source)
    return found.group() if found else "\n"


def _offsets(lines: list[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


class _Span(Record):
    start: int
    end: int
    text: str


def _where(lines: list[str], starts: list[int], line: int, col: int) -> int:
    """The character offset of ast's (line, UTF-8 byte column)."""
    text = lines[line - 1]
    if text.isascii():  # a byte is a character
        return starts[line - 1] + col
    return starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8", errors="replace"))


def _dotted(node: ast.expr) -> tuple[str, ast.Name] | None:
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(names)]), node


def _analyse(source: str) -> tuple[list[Rename], list[_Span], set[str]]:
    """The renames of ``source``, the spans of text to replace, the top-level modules the new
    text names in full (``import pytensor`` reaches every name of :data:`MOVED`)."""
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))  # one walk: each pass below reads this list
    inner = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}  # only the longest chain
    lines = lines_of(source) or [""]
    starts = _offsets(lines)
    renames: list[Rename] = []
    spans: list[_Span] = []
    # local name -> the Theano dotted name it is bound to (a fragment that uses theano.x without
    # importing it means the module too)
    aliases: dict[str, str] = {root: root for root in ROOTS}
    rebound: dict[str, str] = {}  # local name -> the new dotted name its import now binds
    renamed: dict[str, str] = {}  # local name -> the name the rewritten import binds instead
    needed: set[str] = set()  # top-level modules the rewritten names use without an import

    def at(node: ast.AST) -> tuple[int, int, int]:
        line, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
        start = _where(lines, starts, line, col)
        end = _where(lines, starts, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end, start - starts[line - 1] + 1

    def said(node: ast.AST, written: str, old: str, new: str, why: str) -> None:
        start, end, column = at(node)
        renames.append(Rename(node.lineno, column, written, old, new, why))  # type: ignore[attr-defined]
        if new:
            spans.append(_Span(start, end, new))

    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found = translate(alias.name)
                if found is None:
                    if alias.name.split(".")[0] == "pytensor":  # a chain through it may hold a moved name
                        aliases[alias.asname or "pytensor"] = alias.name if alias.asname else "pytensor"
                    continue
                if alias.name.split(".")[0] == "pytensor" and not alias.asname:
                    needed.add("pytensor")  # `import pytensor.x` bound pytensor: still bound after
                new, why = found
                local = alias.asname or alias.name.split(".")[0]
                aliases[local] = alias.name if alias.asname else alias.name.split(".")[0]
                if (
                    new
                    and "." in new
                    and not alias.asname
                    and new.split(".")[0] != ROOTS[alias.name.split(".")[0]]
                ):
                    new = ""  # `import theano.x` whose x left pytensor: the name theano stays bound
                    why += " (import it under its new name by hand)"
                elif new and not module_exists(new):
                    why = f"PyTensor has no module {new}: import what it uses from where it is now, by hand"
                    new = ""
                said(alias, source[at(alias)[0] : at(alias)[1]], alias.name, _aliased(new, alias.asname), why)
                if new:  # `import theano` binds pytensor now; `import theano.tensor as T` still binds T
                    rebound[local] = new if alias.asname else new.split(".")[0]
                    renamed[local] = local if alias.asname else new.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] not in (*ROOTS, "pytensor"):
                continue
            targets = []
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                aliases[alias.asname or alias.name] = full
                targets.append((alias, translate(full)))
            if node.module.split(".")[0] == "pytensor" and all(found is None for _, found in targets):
                continue  # PyTensor's own names
            _from_import(node, targets, source, lines, starts, renames, spans, rebound)
    stored = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    stored |= {n.arg for n in nodes if isinstance(n, ast.arg)}
    stored |= {
        n.name for n in nodes if isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name
    }
    own_vars, rebound_here = _bindings(tree, set(aliases)) if stored & set(aliases) else (set(), set())
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in inner:
            # a bare module name (`theano is not None`): the name its rewritten import binds
            now = renamed.get(node.id)
            if now is not None and now != node.id and id(node) not in own_vars:
                if id(node) in rebound_here:
                    said(node, node.id, aliases[node.id], "", f"{node.id} is assigned here too: by hand")
                else:
                    said(node, node.id, aliases[node.id], now, f"{node.id} is imported as {now} now")
            continue
        if not isinstance(node, ast.Attribute):
            continue
        chain = _dotted(node)
        if chain is None:
            continue
        dotted, root = chain
        if root.id not in aliases or id(node) in inner or id(root) in own_vars:
            continue  # not a Theano name, a part of a longer chain, or a function's own name
        old = aliases[root.id] + dotted[len(root.id) :]
        translated = translate(old)
        if translated is None:
            continue
        new, why = translated
        if id(root) in rebound_here:
            said(node, source[at(node)[0] : at(node)[1]], old, "", f"{root.id} is assigned here too: by hand")
            continue
        if old.split(".")[0] in ROOTS and ".config." in f"{old}." and new:
            flag = old.split(".config.", 1)[1] if ".config." in old else ""
            if flag:
                problem = _flag_problem(flag)
                if problem:
                    said(node, source[at(node)[0] : at(node)[1]], old, "", problem)
                    continue
        base = rebound.get(root.id)
        if not new:
            said(node, source[at(node)[0] : at(node)[1]], old, "", why)
            continue
        if base is not None and (new == base or new.startswith(base + ".")):
            text = renamed.get(root.id, root.id) + new[len(base) :]  # what the rewritten import binds
        else:
            text = new
            needed.add(new.split(".")[0])
        written = source[at(node)[0] : at(node)[1]]
        if text != written:
            said(node, written, old, text, why)
    said_lines: set[int] = set()
    for node in nodes:  # the tutorial's "CPU or GPU?": op class names tested (Gemv, GpuGemm, ...)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (node.value in _CPU_OPS or _GPU_OP.fullmatch(node.value))
            and node.lineno not in said_lines
        ):
            said_lines.add(node.lineno)
            said(node, repr(node.value), node.value, "", WHERE_IT_RAN)
    return renames, spans, needed


# Op class names Theano scripts test to tell whether a function ran on the CPU or the GPU: the
# GPU ones are gone, and PyTensor's CPU ones depend on the linker (numba has no Gemv node)
_CPU_OPS = frozenset(["Gemv", "CGemv", "Gemm", "CGemm", "Dot22", "Dot22Scalar"])
_GPU_OP = re.compile(r"Gpu[A-Z]\w*|HostFromGpu")
WHERE_IT_RAN = (
    "op class names no longer tell CPU from GPU (the GPU ops are gone; which CPU ops a graph "
    "holds depends on the linker): modecfg.ran_on(f) says where f runs ('cpu through numba', "
    "'cuda:0 through jax')"
)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)  # fmt: skip


def _parameters(a: ast.arguments) -> list[ast.arg]:
    return [arg for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if arg]


def _body(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST]:
    return [*function.body] if isinstance(function.body, list) else [function.body]


def _stored(scope: ast.AST) -> tuple[set[str], set[str]]:
    """The names ``scope`` binds itself other than by an import (parameters, assignments, loop
    and ``with`` targets, ...), and those it declares global or nonlocal; nested scopes apart."""
    bound: set[str] = set()
    declared: set[str] = set()
    todo = list(ast.iter_child_nodes(scope))
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        bound |= {arg.arg for arg in _parameters(scope.args)}
        todo = _body(scope)  # decorators, defaults and annotations belong to the enclosing scope
    elif isinstance(scope, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        todo = [scope.elt] if not isinstance(scope, ast.DictComp) else [scope.key, scope.value]
        for comp in scope.generators:
            todo += [comp.target, *comp.ifs]
        todo += [comp.iter for comp in scope.generators[1:]]  # the first is the enclosing scope's
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
            todo += [*node.decorator_list, *getattr(node, "bases", ()), *getattr(node, "keywords", ())]
            continue  # its body is a scope of its own
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        if isinstance(node, _SCOPES):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return bound, declared


def _bindings(tree: ast.Module, names: set[str]) -> tuple[set[int], set[int]]:
    """Of the ``Name`` nodes spelling one of ``names`` (a module a Theano import bound): those
    that are a function's own variable (a parameter ``T`` under ``import theano.tensor as T``),
    and those at module level where the module is also bound by an assignment (which one a use
    means depends on the order things run in: said, to do by hand)."""
    local: set[int] = set()
    rebound: set[int] = set()
    module_bound, _ = _stored(tree)
    ambiguous = module_bound & names

    def visit(nodes: list[ast.AST], shadowing: frozenset[str]) -> None:
        todo = list(nodes)
        while todo:
            node = todo.pop()
            if isinstance(node, _SCOPES):
                bound, declared = _stored(node)
                inner = frozenset((shadowing | (bound & names)) - declared)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    a = node.args
                    outer = [*a.defaults, *(d for d in a.kw_defaults if d is not None)]
                    if not isinstance(node, ast.Lambda):
                        outer += [*node.decorator_list, *([node.returns] if node.returns else [])]
                        outer += [arg.annotation for arg in _parameters(a) if arg.annotation]
                    todo += outer
                    visit(_body(node), inner)
                else:  # a comprehension: its first iterable is the enclosing scope's
                    todo.append(node.generators[0].iter)
                    rest = [*node.generators[0].ifs, node.generators[0].target, *node.generators[1:]]
                    elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                    visit([*elts, *rest], inner)
                continue
            if isinstance(node, ast.Name) and node.id in names:
                if node.id in shadowing:
                    local.add(id(node))
                elif node.id in ambiguous:
                    rebound.add(id(node))
            todo.extend(ast.iter_child_nodes(node))

    visit(list(ast.iter_child_nodes(tree)), frozenset())
    return local, rebound


def _aliased(new: str, asname: str | None) -> str:
    return f"{new} as {asname}" if new and asname else new


def _from_import(
    node: ast.ImportFrom,
    targets: list[tuple[ast.alias, tuple[str, str] | None]],
    source: str,
    lines: list[str],
    starts: list[int],
    renames: list[Rename],
    spans: list[_Span],
    rebound: dict[str, str],
) -> None:
    """``from theano.x import a, b``: the names kept (``as`` their old names where the new one
    differs), imported from their new modules: one statement per module (a statement written on
    several lines keeps its layout where one module holds them all); a name that is gone is said,
    by hand. A PyTensor name that did not move stays where it is."""
    start = _where(lines, starts, node.lineno, node.col_offset)
    end = _where(lines, starts, node.end_lineno or node.lineno, node.end_col_offset or 0)
    text = source[start:end]
    column = start - starts[node.lineno - 1] + 1
    module_now = node.module or ""
    news = []
    for alias, found in targets:
        if found is None:  # pytensor's own name: it stays
            news.append((alias, f"{module_now}.{alias.name}", ""))
        else:
            news.append((alias, found[0], found[1]))
    why = "; ".join(dict.fromkeys(w for _, _, w in news if w))
    if any(not new for _, new, _ in news):
        gone = [f"{a.name} -> {new or '(gone)'}" for a, new, _ in news]
        renames.append(Rename(node.lineno, column, text, module_now, "", f"{why}: {', '.join(gone)}"))
        return
    missing = sorted({new.rpartition(".")[0] for _, new, _ in news} - {""})
    missing = [module for module in missing if not module_exists(module)]
    if missing:
        renames.append(Rename(node.lineno, column, text, module_now, "",
                              f"PyTensor has no module {', '.join(missing)}: rewrite by hand"))  # fmt: skip
        return
    by_module: dict[str, list[str]] = {}
    for alias, new, _ in news:
        module, _, leaf = new.rpartition(".")
        local = alias.asname or alias.name
        by_module.setdefault(module, []).append(leaf if leaf == local else f"{leaf} as {local}")
        rebound[local] = new
    several_lines = "(" in text or "\\" in text or "#" in text
    if several_lines:  # the module only, the rest of the statement as written
        names_same = all(new.rpartition(".")[2] == (a.asname or a.name) for a, new, _ in news)
        if len(by_module) != 1 or not names_same:
            renames.append(Rename(node.lineno, column, text, module_now, "", f"{why}: rewrite by hand"))
            return
        rewritten = re.sub(r"^from\s+[\w.]+", f"from {next(iter(by_module))}", text)
    else:
        indent = lines[node.lineno - 1][: len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip())]
        rewritten = f"{newline_of(source)}{indent}".join(
            f"from {module} import {', '.join(names)}" for module, names in by_module.items()
        )
    if rewritten != text:
        renames.append(Rename(node.lineno, column, text, module_now, rewritten, why))
        spans.append(_Span(start, end, rewritten))


def _flag_problem(flag: str) -> str:
    """What is wrong with reading flag ``flag`` ('' when it is a flag)."""
    from modecfg.configuration.compat import lookup

    info = lookup(flag, suggest=False)
    if info.flag is not None:
        return ""
    if info.obsolete is not None:
        return f"the flag {flag} is obsolete: {info.message}"
    return ""  # a method or attribute of the config object (config.change_flags, ...)


def find(source: str) -> list[Rename]:
    """Every Theano or Aesara name of ``source`` that moved, in the order of the script."""
    return sorted(_analyse(source)[0], key=lambda r: (r.line, r.column))


def rewrite(source: str) -> tuple[str, list[Rename]]:
    """``source`` with the names rewritten, and every rename (those with no ``new`` were left).
    Outside the spans of the names rewritten (and the import lines added, where a rewritten name
    needs one), every character of ``source`` is kept."""
    renames, spans, needed = _analyse(source)
    pieces = []
    at = 0
    for span in sorted(spans, key=lambda s: s.start):
        pieces += [source[at : span.start], span.text]
        at = span.end
    pieces.append(source[at:])
    text = "".join(pieces)
    if needed:
        tree = ast.parse(text)
        imports = [n for n in _statements(tree.body) if isinstance(n, ast.Import)]
        bound = {a.asname or a.name.split(".")[0] for n in imports for a in n.names}  # not `from m import x`
        if needed - bound:
            text = _add_imports(text, tree, sorted(needed - bound))
    compile(text, "<rewritten>", "exec")  # never written unless it is Python
    return text, sorted(renames, key=lambda r: (r.line, r.column))


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks inside it (imports are statements: the
    expressions, most of a tree, are not walked)."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt):
            yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                todo.extend(child for child in inner if isinstance(child, ast.AST))


def _add_imports(text: str, tree: ast.Module, modules: list[str]) -> str:
    """``import M`` lines after the first top-level import; where there is none, after the
    module's docstring, or its leading comments (a shebang, an encoding cookie), which stay first."""
    first = next((n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)), None)
    lines = lines_of(text)
    newline = newline_of(text)
    if first is not None and first.end_lineno is not None:
        at = first.end_lineno
    elif tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        at = tree.body[0].end_lineno or 0  # the docstring
    else:
        at = 0
        while at < len(lines) and lines[at].lstrip().startswith("#"):
            at += 1
    if at and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += newline  # the statement ended the file without a line end
    return "".join([*lines[:at], *(f"import {m}{newline}" for m in modules), *lines[at:]])
