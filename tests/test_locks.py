"""The locks modecfg keeps across fork (modecfg._locks)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_a_fork_while_another_thread_imports_a_module_on_first_use_waits_for_it(tmp_path: Path) -> None:
    """Round five: a child forked while another thread made the first validation (importing
    pydantic) blocked for good on pydantic's import lock at its own. modecfg imports such
    modules under a lock a fork waits for (modecfg._locks.load); here a module slow to import."""
    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(1.0)\nVALUE = 7\n")
    script = textwrap.dedent(
        f"""
        import os, sys, threading, time
        sys.path.insert(0, {str(tmp_path)!r})
        from modecfg._locks import load
        threading.Thread(target=load, args=("slow_module",)).start()
        time.sleep(0.3)  # the thread is inside the import now
        pid = os.fork()
        if pid == 0:
            os._exit(0 if load("slow_module").VALUE == 7 else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "child 0", done.stderr
