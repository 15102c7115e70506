"""Issue 61's import row counted in instructions: deterministic where wall time is not.

    python bench/instructions.py [REV ...]      (needs valgrind; about 12 s a process)
    python bench/instructions.py --parts        (where the import goes, part by part)

The import row (``import pytensor, modecfg`` against ``import pytensor``, whole processes) moves
by 0.8-1.3x from one round to the next on a shared machine, more than the 5% it is judged by.
The instructions a process executes do not: under valgrind's callgrind, with the hash seed fixed
(string hashes decide dict and set orders) and one BLAS thread, two runs of the same tree differ
by a few thousand of its ~1,100 million. This script counts, in one run:

* ``plain``: ``python -c "import pytensor"``;
* ``modecfg``: ``python -c "import pytensor, modecfg"``, with this tree first on the path;
* each ``REV`` given, the same for that git revision (extracted with ``git archive``);

and prints each count, the ratio to plain, and how much of the difference is the interpreter's
exit (``Py_FinalizeEx``: the final collections and the teardown of every module and object).

``--parts`` prints instead where this tree's import goes: the count after each part of modecfg's
import (``PARTS``, in the order modecfg imports them; each imported after those before it, in a
copy of the tree whose ``modecfg/__init__.py`` is empty so that a part loads without the rest,
with the collector off as modecfg's own import has it), then ``wire()`` and the whole
``import modecfg``, each with what it adds and the modecfg modules loaded by then.
Instructions are not time (a cache miss costs more than an add), but on this code they track it:
~4 instructions a nanosecond, and an instruction cut has shown up as the time cut it predicts
(``bench/heads.py``, timed inside the process). Bytecode is compiled first, as users have it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # (bench.heads, run as a script)
PLAIN = "import pytensor"
OURS = "import pytensor, modecfg"

# modecfg's import in parts, lowest first: (what it is, the modules its line imports)
PARTS = (
    ("errors, records, lazy names, files, locks",
     "modecfg._lazy, modecfg.errors, modecfg._record, modecfg._files, modecfg._locks"),
    ("the mode and linker registries", "modecfg._registry.modes, modecfg._registry.linkers"),
    ("the configuration (93 flags, the store)", "modecfg.configuration"),
    ("the PyTensor layer's and features' modules", "modecfg._wiring"),
)  # fmt: skip
WIRE = "modecfg._wiring.wire()"


def environment(tree: Path) -> dict[str, str]:
    """A child's environment: ``tree`` first on the path, nothing of the caller's flags or rc
    files, a fixed hash seed, one BLAS thread, bytecode written."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(PYTHONPATH=str(tree), PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MODECFGRC="", PYTENSORRC=os.devnull)  # fmt: skip
    return env


def counted(code: str, tree: Path, workdir: Path) -> tuple[int, int]:
    """(instructions of the whole process, those under ``Py_FinalizeEx``) of ``python -c code``."""
    env = environment(tree)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "modecfg")], env=env, check=True)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=workdir)  # caches warm
    out = workdir / "callgrind.out"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", code],
        env=env, check=True, cwd=workdir, capture_output=True,
    )  # fmt: skip
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    out.unlink()
    return _total(annotated), _function(annotated, "Py_FinalizeEx")


def _total(annotated: str) -> int:
    found = re.search(r"^\s*([\d,]+)\s+\(100\.0+%\)\s+PROGRAM TOTALS", annotated, re.MULTILINE)
    if found is None:
        raise RuntimeError("callgrind_annotate printed no PROGRAM TOTALS line")
    return int(found.group(1).replace(",", ""))


def _function(annotated: str, name: str) -> int:
    """The largest inclusive count of a line naming C function ``name`` (0 if none does)."""
    counts = [
        int(match.group(1).replace(",", ""))
        for match in re.finditer(rf"^\s*([\d,]+)\s+\([\d. ]+%\)\s+\S*:{name}\b", annotated, re.MULTILINE)
    ]
    return max(counts, default=0)


def part_lines() -> list[tuple[str, str]]:
    """(label, the child's code) of each cumulative part: ``import pytensor``, the collector off,
    the parts so far imported, the collector on again."""
    lines, imported = [], []
    for label, modules in PARTS:
        imported.append(f"import {modules}")
        lines.append((label, "; ".join(imported)))
    lines.append(("wire(): the view attached, the patches in", "; ".join([*imported, WIRE])))
    return [(label, f"{PLAIN}; import gc; gc.disable(); {code}; gc.enable()") for label, code in lines]


def modules_loaded(code: str, tree: Path, workdir: Path) -> int:
    """How many of modecfg's modules ``code`` leaves in ``sys.modules``."""
    probe = code + "; import sys; print(sum(m.split('.')[0] == 'modecfg' for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], env=environment(tree), cwd=workdir, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return int(done.stdout.split()[-1])


def parts(workdir: Path, temp: Path) -> int:
    """Print the count after each part of this tree's import, and what each adds."""
    bare = temp / "bare"
    shutil.copytree(ROOT / "modecfg", bare / "modecfg", ignore=shutil.ignore_patterns("__pycache__"))
    (bare / "modecfg" / "__init__.py").write_text("")
    plain, _ = counted(PLAIN, ROOT, workdir)
    rows = [(label, code, bare) for label, code in part_lines()]
    rows.append(("modecfg/__init__ (the whole import)", OURS, ROOT))
    print(f"instructions, {sys.version.split()[0]}, hash seed 0: import pytensor {plain:,}; then")
    before = plain
    for label, code, tree in rows:
        total, _ = counted(code, tree, workdir)
        loaded = modules_loaded(code, tree, workdir)
        print(f"  + {label:<44} {total:>15,}  +{(total - before) / 1e6:5.1f} M  {total / plain:.4f}x  "
              f"({loaded} modules)")  # fmt: skip
        before = total
    return 0


def extracted(rev: str, into: Path) -> Path:
    """``rev``'s tree, extracted as ``bench/heads.py`` extracts it."""
    from bench.heads import extract

    where = into / rev.replace("/", "_")
    where.mkdir()
    extract(rev, where)
    return where / "tree"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="*", help="git revisions to count beside this tree")
    parser.add_argument("--parts", action="store_true", help="where this tree's import goes, part by part")
    args = parser.parse_args(argv)
    if args.parts and args.revs:
        parser.error("--parts counts this tree only")
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("valgrind (with callgrind_annotate) is not installed: nothing counted", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as temp:
        workdir = Path(temp) / "work"
        workdir.mkdir()  # an empty working directory: nothing of the caller's on the path
        if args.parts:
            return parts(workdir, Path(temp))
        plain, plain_exit = counted(PLAIN, ROOT, workdir)
        rows = [("this tree", *counted(OURS, ROOT, workdir))]
        rows += [(rev, *counted(OURS, extracted(rev, Path(temp)), workdir)) for rev in args.revs]
    print(f"instructions, {sys.version.split()[0]}, hash seed 0 (callgrind; deterministic to ~0.01%)")
    print(f"  {'import pytensor':<34} {plain:>15,}")
    for label, total, exit_part in rows:
        extra, extra_exit = total - plain, exit_part - plain_exit
        print(f"  {'import pytensor, modecfg: ' + label:<34} {total:>15,}  {total / plain:.4f}x  "
              f"(+{extra / 1e6:.1f} M, of which the exit +{extra_exit / 1e6:.1f} M)  goal 1.05x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
