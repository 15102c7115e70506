"""The README and the pages of ``docs/`` run as written: every ```python block of a page, in order,
in one fresh interpreter (a page's blocks build on each other, as a reader's session does).

A block may need what its page does not show (a model's ``cost``, a file to read): an HTML comment
right before it, ``<!-- setup`` ... ``-->``, holds that code; one right after it, ``<!-- check``
... ``-->``, code that checks what the block claims (run after it, in the same file, below a line
``# --- check``). The site and GitHub show no comment.
Blocks of other languages are not run: ``text`` is output or a command's usage, ``sh`` the set-up
commands that CI runs itself (``.ci/run``). Any other language is refused, so that no code is
shown untested.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.fresh import pythonpath

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)$")
SETUP = re.compile(r"<!-- setup\n((?:(?!-->).)*?)\n-->\n$", re.S)
CHECK = re.compile(r"^<!-- check\n(.*?)\n-->\n", re.S)
NOT_RUN = {"text", "sh"}


class Block(NamedTuple):
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    setup: str
    check: str = ""

    def source(self) -> str:
        """What is run: the setup, the block, then the check."""
        return self.setup + self.code + (f"# --- check\n{self.check}" if self.check else "")


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, each with the setup comment right before it (if any)."""
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    found, i = [], 0
    while i < len(lines):
        opened = FENCE.match(lines[i].rstrip("\n"))
        if not opened:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip("\n") == "```"), None)
        assert end is not None, f"{page.name}:{i + 1}: a block that is never closed"
        before = "".join(lines[max(0, i - 40) : i])
        setup = SETUP.search(before)
        check = CHECK.match("".join(lines[end + 1 : end + 60]))
        code = "".join(lines[i + 1 : end])
        before_code = setup.group(1) + "\n" if setup else ""
        after_code = check.group(1) + "\n" if check else ""
        found.append(Block(page.name, i + 1, opened.group(1), code, before_code, after_code))
        i = end + 1
    return found


def test_every_block_is_run_or_is_output() -> None:
    everything = [block for page in PAGES for block in blocks(page)]
    assert sum(block.language == "python" for block in everything) >= 10  # the reader finds them all
    odd = [f"{b.page}:{b.line} ```{b.language}" for b in everything if b.language not in {"python", *NOT_RUN}]
    assert odd == []  # e.g. an unlabelled block: say whether it is code (python) or output (text)


def test_a_setup_comment_belongs_to_the_block_right_after_it() -> None:
    page = ROOT / ".cache" / "docs-test-page.md"
    page.parent.mkdir(exist_ok=True)
    page.write_text("<!-- setup\nx = 1\n-->\n```python\nprint(x)\n```\n<!-- check\nassert x\n-->\n\n"
                    "```python\nprint(2)\n```\n")  # fmt: skip
    first, second = blocks(page)
    assert (first.setup, first.code, first.check, first.line) == ("x = 1\n", "print(x)\n", "assert x\n", 4)
    assert first.source() == "x = 1\nprint(x)\n# --- check\nassert x\n"
    assert (second.setup, second.code, second.check) == ("", "print(2)\n", "")


RUNNABLE = [page for page in PAGES if any(b.language == "python" for b in blocks(page))]


@pytest.mark.parametrize("page", RUNNABLE, ids=[page.name for page in RUNNABLE])
def test_the_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    """Each block is a file of its own (so that errors and modecfg's findings quote its lines),
    run with the globals the page's blocks before it left (as a module that is not ``__main__``:
    a process pool that spawns would run ``__main__`` again, as it does a script without a
    ``if __name__ == "__main__"`` guard)."""
    python = [block for block in blocks(page) if block.language == "python"]
    names = []
    for n, block in enumerate(python):
        path = tmp_path / f"block{n}_line{block.line}.py"
        path.write_text(block.source(), encoding="utf-8")
        names.append(path.name)
    runner = (
        "import runpy, sys\n"
        "namespace = {}\n"
        f"for name in {names!r}:\n"
        "    print(f'--- {name}', file=sys.stderr, flush=True)\n"
        "    namespace = runpy.run_path(name, init_globals=namespace, run_name='docs_page')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_FLAGS", "RC"))}
    env.update(MODECFGRC="", PYTHONPATH=pythonpath(), HOME=str(ROOT / ".cache" / "home"))
    proc = subprocess.run([sys.executable, "-c", runner], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    failed = proc.stderr.rsplit("--- ", 1)[-1].split("\n", 1)[0] if proc.returncode else ""
    assert proc.returncode == 0, f"{page.name}, the block of {failed}:\n{proc.stderr[-3000:]}"
