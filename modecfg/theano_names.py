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
import re
from typing import NamedTuple

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


class Rename(NamedTuple):
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


def _offsets(source: str) -> list[int]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


class _Span(NamedTuple):
    start: int
    end: int
    text: str


def _where(lines: list[str], starts: list[int], line: int, col: int) -> int:
    """The character offset of ast's (line, UTF-8 byte column)."""
    text = lines[line - 1]
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
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}  # only the longest chain
    lines = source.splitlines(keepends=True) or [""]
    starts = _offsets(source)
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

    for node in ast.walk(tree):
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
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = _dotted(node)
        if chain is None:
            continue
        dotted, root = chain
        if root.id not in aliases or id(node) in inner:
            continue
        old = aliases[root.id] + dotted[len(root.id) :]
        translated = translate(old)
        if translated is None:
            continue
        new, why = translated
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
    return renames, spans, needed


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
        rewritten = f"\n{indent}".join(
            f"from {module} import {', '.join(names)}" for module, names in by_module.items()
        )
    if rewritten != text:
        renames.append(Rename(node.lineno, column, text, module_now, rewritten, why))
        spans.append(_Span(start, end, rewritten))


def _flag_problem(flag: str) -> str:
    """What is wrong with reading flag ``flag`` ('' when it is a flag)."""
    from modecfg.config.compat import lookup

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
    """``source`` with the names rewritten, and every rename (those with no ``new`` were left)."""
    renames, spans, needed = _analyse(source)
    text = source
    for span in sorted(spans, key=lambda s: s.start, reverse=True):
        text = text[: span.start] + span.text + text[span.end :]
    imports = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Import)]
    bound = {a.asname or a.name.split(".")[0] for n in imports for a in n.names}  # `from m import x` binds x
    if needed - bound:
        text = _add_imports(text, sorted(needed - bound))
    compile(text, "<rewritten>", "exec")  # never written unless it is Python
    return text, sorted(renames, key=lambda r: (r.line, r.column))


def _add_imports(text: str, modules: list[str]) -> str:
    """``import M`` lines after the first top-level import (at the top where there is none)."""
    tree = ast.parse(text)
    first = next((n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)), None)
    lines = text.splitlines(keepends=True)
    at = first.end_lineno if first is not None and first.end_lineno is not None else 0
    return "".join([*lines[:at], *(f"import {m}\n" for m in modules), *lines[at:]])
