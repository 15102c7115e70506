"""Profile reports, byte for byte, made by hand: the page and notebook cells (``profiles/html.py``),
the text and the merged report (``profiles/rows.py``): every number, class, bar and label is
held (a change to the layout shows here, as a diff to read).

After a deliberate change: ``python -m tests.profiles.test_html_golden`` writes the expected
files again; read their diff before committing it."""

from __future__ import annotations

import sys
from pathlib import Path

from modecfg.profiles.html import notebook_html
from modecfg.profiles.render import to_html
from modecfg.profiles.rows import ApplyRow, ClassRow, MemoryRow, OpRow, ProfileReport

DATA = Path(__file__).resolve().parent / "data"
LONG_OP = "Elemwise{Composite{((i0 * exp(-sqr(i1))) + (i2 / sqrt(i3 + i4)))}}[(0, 1)]"


SIZES = (("(400, 784)", "float32"),)


def _row(rank: int, function: str, op: str, time: float, share: float, calls: int,
         source: str | None, inputs: tuple[tuple[str, str], ...] = SIZES) -> ApplyRow:  # fmt: skip
    return ApplyRow(rank, function, op, time, share, share, calls, time / calls, inputs, (), source)


def reports() -> list[ProfileReport]:
    """Two functions' reports: ranks out of order, a long operation, a row of few calls, one of
    short calls, a row without a source, a size not recorded, a note and compile flags."""
    train = ProfileReport(
        name="train", calls=200, call_time=0.05, vm_time=0.045, profiled_time=0.04, compile_time=1.25,
        rewrite_time=0.5, linker_time=0.25, linker="cvm", note="",
        applies=(
            _row(2, "train", "CGemv{inplace}", 0.01, 0.25, 200, "/home/user/project/train.py:17: p = x @ w"),
            _row(1, "train", LONG_OP, 0.02, 0.5, 200, "train.py:18: cost = ..."),
            _row(3, "train", "Sum{axes=None}", 4e-6, 0.001, 3, None, (("?", "float32"),)),
            _row(4, "train", "Shape_i{0}", 2e-7, 0.0005, 200, "model.py:3"),
        ),
        ops=(OpRow("CGemv{inplace}", 0.01, 0.25, 200, 1, 5e-5), OpRow(LONG_OP, 0.02, 0.5, 200, 1, 1e-4)),
        classes=(ClassRow("Elemwise", 0.02, 0.5, 200, 1), ClassRow("CGemv", 0.01, 0.25, 200, 1)),
        peak_memory=2_000_000, largest=(MemoryRow("w", "CGemv{inplace}", 3136, "(784,)", "float32"),),
        config=(("floatX", "float32", "THEANO_FLAGS"), ("mode", "FAST_RUN", "default")),
    )  # fmt: skip
    predict = ProfileReport(
        name="predict <&>", calls=5, call_time=0.002, vm_time=0.0015, profiled_time=0.001, compile_time=0.5,
        rewrite_time=0.25, linker_time=0.125, linker="numba", note="nodes timed by cvm (numba times none)",
        applies=(_row(1, "predict <&>", "Dot", 0.001, 1.0, 5, "predict.py:4: y = x.dot(w)"),),
        ops=(OpRow("Dot", 0.001, 1.0, 5, 1, 2e-4),),
        classes=(ClassRow("Dot", 0.001, 1.0, 5, 1), ClassRow("CGemv", 0.0005, 0.5, 5, 2)),
        peak_memory=3_000_000, largest=(MemoryRow("x", "Dot", 1_254_400, "(400, 784)", "float64"),),
    )  # fmt: skip
    return [train, predict]


def rendered() -> dict[str, str]:
    train, predict = reports()
    import json

    merged = ProfileReport.merged([train, predict])
    return {
        "profile_train.txt": train.text(n_apply=3, n_ops=1) + "\n",
        "profile_predict.txt": predict.text() + "\n",
        "profile_merged.txt": merged.text() + "\n",
        "profile_merged.json": json.dumps(merged.to_dict(), indent=1) + "\n",
        "profile_page.html": to_html([train, predict], n_apply=3, n_ops=1),
        "profile_cell.html": notebook_html(train),
        "profile_cell_top2.html": notebook_html(train, n_apply=2, n_ops=1),
    }


def test_the_profile_page_and_cells_are_as_written() -> None:
    for name, text in rendered().items():
        expected = (DATA / name).read_text(encoding="utf-8")
        assert text == expected, (
            f"{name} changed: `python -m tests.profiles.test_html_golden` writes it again"
        )


def test_a_notebook_cells_style_reaches_nothing_outside_it() -> None:
    """Every selector of the cell's style is inside the cell: a selector list (``td,th``) was scoped
    by its first item only, and every ``th`` of the notebook took the report's borders."""
    import re

    from modecfg.profiles.html import CSS, scoped

    style = re.search(r"<style>(.*)</style>", notebook_html(reports()[0]), re.S)
    assert style is not None
    selectors = [s.strip() for rule in style[1].split("}") if rule for s in rule.partition("{")[0].split(",")]
    written = [s for rule in CSS.split("}") if rule.strip() for s in rule.partition("{")[0].split(",")]
    assert len(selectors) == len(written) == 12  # each of the page's selectors, none lost
    assert all(s.startswith(".modecfg-profile") for s in selectors), selectors
    assert scoped("body{a:1}td,th.l{b:2}", ".x") == ".x{a:1}.x td,.x th.l{b:2}"
    assert scoped("\n a , b {c:1}\n", ".s") == ".s a,.s b{c:1}"


if __name__ == "__main__":
    for name, text in rendered().items():
        (DATA / name).write_text(text, encoding="utf-8")
        print(f"wrote {DATA / name}", file=sys.stderr)
