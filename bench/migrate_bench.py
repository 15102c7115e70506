"""``modecfg migrate SCRIPT.py``'s codemod on large scripts, beside Python's own parse of them.

    python bench/migrate_bench.py [--lines 24000]

Two scripts of about ``--lines`` lines: the seed documents' Theano code (tests/data/theano_scripts)
repeated, each copy in a function of its own; and a dense one, two Theano names to rewrite on
every line. For each: the rewrite's time, ``ast.parse``'s time of the same text (a floor: the
codemod parses it once), and their ratio. The time grows with the lines (the spans are joined
once, not spliced one by one).
"""

from __future__ import annotations

import argparse
import ast
import time
from pathlib import Path

from modecfg.theano_names import rewrite

ROOT = Path(__file__).resolve().parents[1]


def _best(fn: object, text: str, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn(text)  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=24000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpus = "".join(p.read_text() + "\n" for p in sorted((ROOT / "tests/data/theano_scripts").glob("*.py")))
    body = corpus.splitlines()
    copies = args.lines // (len(body) + 1) + 1
    seeds = "\n".join(f"def block{i}():\n" + "".join(f"    {line}\n" for line in body) for i in range(copies))
    dense = "import theano\nimport theano.tensor as T\n" + "".join(
        f"y{i} = T.nnet.sigmoid(T.dot(x, W)) + theano.shared({i}).sum()\n" for i in range(args.lines)
    )
    print(f"{'script':<14}{'lines':>8}{'renames':>9}{'rewrite':>10}{'ast.parse':>11}{'ratio':>8}")
    for name, text in (("seed scripts", seeds), ("dense", dense)):
        renames = len(rewrite(text)[1])
        took = _best(rewrite, text, args.rounds)
        parse = _best(ast.parse, text, args.rounds)
        lines = len(text.splitlines())
        print(f"{name:<14}{lines:>8}{renames:>9}{took:>9.2f}s{parse:>10.2f}s{took / parse:>7.1f}x")


if __name__ == "__main__":
    main()
