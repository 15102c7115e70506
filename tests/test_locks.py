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


def test_a_fork_during_pydantics_first_use_never_leaves_the_child_waiting() -> None:
    """Round six: the slow module above did not reproduce pydantic, whose names and internals
    are imported at their first access (``from pydantic import AfterValidator`` imports a
    submodule), outside the lock. Children are forked all through another thread's first
    validation; each validates at once and must finish."""
    script = textwrap.dedent(
        """
        import os, sys, threading, time
        from modecfg.configuration.units import size_bytes
        first = threading.Thread(target=size_bytes, args=("1GiB",))
        children = []
        first.start()
        while first.is_alive() and len(children) < 200:
            pid = os.fork()
            if pid == 0:
                os._exit(0 if size_bytes("2KiB") == 2048 else 3)
            children.append(pid)
            time.sleep(0.002)
        first.join()
        deadline = time.monotonic() + 20
        hung, failed = 0, 0
        for pid in children:
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    failed += os.waitstatus_to_exitcode(status) != 0
                    break
                if time.monotonic() > deadline:
                    hung += 1
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.01)
        print(len(children), "children", hung, "hung", failed, "failed")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    count, _, hung, _, failed, _ = done.stdout.split()
    assert int(count) > 0 and (hung, failed) == ("0", "0"), done.stdout + done.stderr
