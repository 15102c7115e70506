"""The commands that run a script: run, check-float32, compare, profile, and replay of a dump."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from collections.abc import Callable, Sequence
from typing import TextIO

import modecfg
from modecfg.cli.common import _Failed, script_arguments

__all__ = ["cmd_check_float32", "cmd_compare", "cmd_profile", "cmd_replay", "cmd_run"]


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run a script (or ``-m MODULE``) with modecfg loaded, as ``python SCRIPT ARGS`` would:
    THEANO_FLAGS, the rc files and modecfg's flags reach PyTensor. Its exit status is ours; an
    exception it raises is printed from its own frames on, status 1."""
    import runpy
    import traceback

    from modecfg.scripts import exit_status, run_module, run_script

    run: Callable[[str, Sequence[str]], None] = run_module
    if args.module:
        target, rest = args.module[0], args.module[1:]
    elif args.words:
        args.script, args.args = args.words[0], args.words[1:]
        script_arguments(args, ())
        target, rest, run = args.script, args.args, run_script
    else:
        raise _Failed("name the script to run (modecfg run train.py ARGS) or a module (modecfg run -m NAME)")
    try:
        run(target, rest)
    except SystemExit as exc:
        return exit_status(exc, err)
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        runpys = [i for i, frame in enumerate(frames) if frame.filename in (runpy.__file__, "<frozen runpy>")]
        shown = traceback.TracebackException.from_exception(exc)
        shown.stack = traceback.StackSummary.from_list(frames[runpys[-1] + 1 :] if runpys else frames)
        err.write("".join(shown.format()))
        return 1
    return 0


def cmd_check_float32(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.checks.script import check_script
    from modecfg.scripts import exit_status

    script_arguments(args, ())
    status = 0
    try:
        findings = check_script(args.script, args.args)
    except SystemExit as exc:  # the script's own exit: keep what was found, and its status
        findings = getattr(exc, "findings", [])
        status = exit_status(exc, err)
    except Exception as exc:
        findings = getattr(exc, "findings", [])
        err.write(f"error: {args.script} raised {type(exc).__name__}: {exc}\n")
        _print_findings(findings, out)
        return 2
    _print_findings(findings, out)
    return status or (1 if findings else 0)


def _print_findings(findings: Sequence[modecfg.checks.Finding], out: TextIO) -> None:
    if not findings:
        out.write("float32 check: no float64 enters any compiled graph\n")
        return
    by_line: dict[str, list[modecfg.checks.Finding]] = {}
    seen: dict[tuple[object, ...], int] = {}  # one finding found by several compiles: said once
    for finding in findings:
        same = (finding.source, finding.reason, finding.op, tuple(finding.input_dtypes), finding.fix)
        seen[same] = seen.get(same, 0) + 1
        if seen[same] > 1:
            continue
        key = f"{finding.source}: {finding.source.code}" if finding.source else "(no line recorded)"
        by_line.setdefault(key, []).append(finding)
    unique = sum(len(found) for found in by_line.values())
    out.write(f"float32 check: float64 enters at {len(by_line)} line(s) ({unique} finding(s))\n")

    def order(key: str) -> tuple[str, int]:
        source = by_line[key][0].source
        return (source.file, source.line) if source else ("~", 0)

    for where in sorted(by_line, key=order):
        out.write(f"\n{where}\n")
        for finding in by_line[where]:
            dtypes = ", ".join(finding.input_dtypes)
            same = (finding.source, finding.reason, finding.op, tuple(finding.input_dtypes), finding.fix)
            times = f" (in {seen[same]} compiled functions)" if seen[same] > 1 else ""
            out.write(f"  {finding.reason}: {finding.op}({dtypes}) -> float64{times}\n")
            out.write(f"  fix: {finding.fix}\n")


def cmd_compare(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run a script with mode=CompareMode: exit 0 when every compared call agreed, 1 at the first
    that did not (its report printed), 2 when the script failed otherwise."""
    from modecfg.errors import CompareError
    from modecfg.modes.compare import counted
    from modecfg.scripts import exit_status, run_script

    script_arguments(args, ())
    cfg = modecfg.config
    wanted = {"mode": "CompareMode", "CompareMode.action": "raise"}
    for name in ("linkers", "rtol", "atol"):
        if getattr(args, name) is not None:
            wanted[f"CompareMode.{name}"] = getattr(args, name)
    calls, functions = counted.calls, counted.functions
    code = 0
    try:  # flags, not an override: the script's threads compare too
        with cfg.assigned(wanted, source="modecfg compare"):
            run_script(args.script, args.args)
    except CompareError as exc:
        out.write(f"{exc}\n")
        return 1
    except SystemExit as exc:
        code = exit_status(exc, err)
    except Exception as exc:
        err.write(f"error: {args.script} raised {type(exc).__name__}: {exc}\n")
        return 2
    calls, functions = counted.calls - calls, counted.functions - functions
    if not calls:
        out.write("compare: no call was compared (did the script compile and call a function without "
                  "a mode of its own?)\n")  # fmt: skip
        return code or 1
    backends = ", ".join(sorted(counted.backends))
    out.write(f"compare: {calls} calls of {functions} functions agree on {backends}\n")
    return code


def cmd_profile(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.profiles import ProfileReport
    from modecfg.profiles.render import to_html, to_json, to_trace
    from modecfg.profiles.session import all_stats, mark_printed, reports
    from modecfg.scripts import exit_status, run_script

    script_arguments(args, ("--json", "--trace", "--html"))
    cfg = modecfg.config
    before = len(all_stats())  # report the script's functions only
    code = 0
    try:  # the flag, not an override: threads the script starts compile profiled too; put back
        # after, as it was and where from, for a caller of main() whose process goes on (tests)
        with cfg.assigned({"profile": True}, source="modecfg profile"):
            run_script(args.script, args.args)
    except SystemExit as exc:
        code = exit_status(exc, err)
    except Exception as exc:
        err.write(f"error: {args.script} raised {type(exc).__name__}: {exc}\n")
        code = 2
    found = reports(since=before)
    mark_printed(all_stats()[before:])  # printed here: not again at exit
    if not found:
        out.write("no function was profiled (did the script compile any?)\n")
        return code or 1
    n_apply, n_ops = int(cfg.profiling.n_apply), int(cfg.profiling.n_ops)
    for report in found:
        out.write(report.text(n_apply, n_ops) + "\n\n")
    if len(found) > 1:
        out.write(ProfileReport.merged(found).text(n_apply, n_ops) + "\n")
    for path, make in ((args.json, to_json), (args.trace, to_trace)):
        if path:
            _write_whole(path, json.dumps(make(found), indent=1))
            out.write(f"wrote {path}\n")
    if args.html:
        _write_whole(args.html, to_html(found, n_apply, n_ops))
        out.write(f"wrote {args.html}\n")
    return code


def _write_whole(path: str, text: str) -> None:
    """``text`` to ``path`` in UTF-8, whole or not at all (made in full first, then renamed into
    place); what UTF-8 cannot hold (a file name's undecodable bytes, read as surrogates where the
    locale is not UTF-8) written as its escape."""
    import tempfile

    data = text.encode("utf-8", errors="backslashreplace")
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".modecfg-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """0: reproduced; 1: the call no longer fails; 2: the dump cannot be read or replayed;
    3: not run (not signed with your key, and no --trust): its data is shown instead."""
    from modecfg.errors import NanGuardError

    dump = None
    if not args.trust:
        dump = modecfg.load_dump(args.dump)
        if not dump.signed_by_you:
            out.write(dump.summary())
            out.write(
                f"\nnot run: this dump is not yours (its signature: {dump.signature}), and replaying it\n"
                "runs the code its pickled graph holds. To go further:\n"
                f"  modecfg replay --trust {args.dump}\n"
                "      runs it as its writer compiled it: only a dump you trust, after reading the above\n"
                f"  modecfg.load_dump({args.dump!r}).call(f)\n"
                "      runs YOUR compiled function f on its captured inputs and shared values\n"
            )
            return 3
    try:
        modecfg.replay(args.dump, dump=args.write_dump, trust=args.trust)
    except NanGuardError as exc:
        now = exc.bad.describe() if exc.bad is not None else f"bad values in {', '.join(exc.bad_outputs)}"
        before = dump.bad if dump is not None else None
        same = (
            before is None or exc.bad is None or (before.kind, before.where) == (exc.bad.kind, exc.bad.where)
        )
        out.write(
            f"reproduced: {now}\n" if same else f"reproduced, elsewhere: {now}\n  the dump said: {before}\n"
        )
        if exc.dump_path:
            out.write(f"new dump: {exc.dump_path}\n")
        return 0
    out.write(f"not reproduced: {args.dump}: the call no longer produces a bad value\n")
    return 1
