"""The commands that run a script: run, check-float32, compare, profile, and replay of a dump."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

import modecfg
from modecfg.cli.common import script_arguments

__all__ = ["cmd_check_float32", "cmd_compare", "cmd_profile", "cmd_replay", "run_command"]


def run_command(words: Sequence[str], *, keep_main: bool = False, err: TextIO | None = None) -> int:
    """``modecfg run SCRIPT ARGS`` / ``modecfg run -m MODULE ARGS``: the script run with modecfg
    loaded, as ``python SCRIPT ARGS`` runs it (:mod:`modecfg.scripts`): every word after the
    script or module is its own (``--`` included), its warnings filtered as ``PYTHONWARNINGS``
    and ``-W`` say, an exception it does not catch given to ``sys.excepthook`` (status 1), its
    exit status the command's. ``keep_main``: this process ends with the script."""
    from modecfg.scripts import exit_status, report, run_module, run_script

    err = err or sys.stderr
    words = list(words)
    if words[:1] == ["--"]:
        words = words[1:]
    run: Callable[..., None] = run_script
    if words[:1] == ["-m"] or (words and words[0].startswith("-m") and len(words[0]) > 2):
        rest = words[1:] if words[0] == "-m" else [words[0][2:], *words[1:]]
        if not rest:
            err.write("error: -m needs a module name (modecfg run -m NAME ARGS)\n")
            return 2
        target, rest, run = rest[0], rest[1:], run_module
    elif words and words[0] not in ("-h", "--help"):
        target, rest = words[0], words[1:]
        if not os.path.exists(target):  # as python says it, status 2
            where = os.path.abspath(target)
            err.write(f"error: can't open file {where!r}: no such file (modecfg run SCRIPT ARGS)\n")
            return 2
    else:
        err.write(
            "usage: modecfg run SCRIPT [ARGS ...] | modecfg run -m MODULE [ARGS ...]\n"
            "Run SCRIPT (or -m MODULE) as python would, with modecfg loaded first: THEANO_FLAGS, the rc\n"
            "files and modecfg's flags shape PyTensor although the script never imports modecfg. Every\n"
            "word after SCRIPT is the script's; its exit status is the command's.\n"
        )
        return 0 if words else 2
    if keep_main:  # this process is the run: the Pythons the script starts load modecfg too
        children_load_modecfg()
    try:
        run(target, rest, keep_main=keep_main)
    except SystemExit as exc:
        status = exit_status(exc, err)
    except KeyboardInterrupt as exc:
        report(exc)
        status = 130
    except BaseException as exc:
        report(exc)
        status = 1
    else:
        status = 0
    _compare_verdict(err)
    return status


def _compare_verdict(err: TextIO) -> None:
    """CompareMode's one line, where the script compared calls (mode=CompareMode by flag, or its
    own): what ``modecfg compare`` says at its end."""
    compare = sys.modules.get("modecfg.compare.mode")
    counted = getattr(compare, "counted", None)
    if counted is None or not counted.calls:
        return
    backends = ", ".join(sorted(counted.backends))
    if counted.differences:
        err.write(f"compare: {counted.differences} of {counted.calls} calls of {counted.functions} "
                  f"functions differ (above); the others agree on {backends}\n")  # fmt: skip
    else:
        err.write(f"compare: {counted.calls} calls of {counted.functions} functions agree on {backends}\n")


def children_load_modecfg() -> None:
    """Every Python this process starts from now on (``multiprocessing``'s spawn and forkserver
    children, ``subprocess.run([sys.executable, ...])``) loads modecfg just before PyTensor, as
    ``modecfg autoload on`` would have it: a ``sitecustomize`` of modecfg's first on
    ``PYTHONPATH`` (it runs the environment's own after it). ``MODECFG_AUTOLOAD=0`` turns it off."""
    site = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_site")
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if site not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([site, *paths])


def cmd_check_float32(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.checks.script import check_script
    from modecfg.scripts import exit_status

    script_arguments(args, ())
    status = 0
    cfg = modecfg.config
    if cfg.floatX != "float32":  # first: under float64, every float64 of the graphs is a finding
        out.write(
            f"floatX={cfg.floatX} (from {cfg.origin('floatX')}): float64 is this configuration's own "
            "dtype, so every float64 the graphs take is listed; a GPU run has floatX=float32 "
            "(THEANO_FLAGS=floatX=float32 modecfg check-float32 SCRIPT)\n"
        )

    def before_exit(findings: list[modecfg.checks.Finding], code: int) -> None:  # the script's os._exit
        _print_findings(findings, out)
        out.flush()

    try:
        findings = check_script(args.script, args.args, keep_main=args.keep_main, before_exit=before_exit)
    except SystemExit as exc:  # the script's own exit: keep what was found, and its status
        findings = getattr(exc, "findings", [])
        status = exit_status(exc, err)
    except Exception as exc:
        findings = getattr(exc, "findings", [])
        err.write(f"error: {args.script} raised {type(exc).__name__}: {exc}\n")
        _print_findings(findings, out, stopped=type(exc).__name__)
        return 2
    _print_findings(findings, out)
    return status or (1 if findings else 0)


def _print_findings(findings: Sequence[modecfg.checks.Finding], out: TextIO, stopped: str = "") -> None:
    """The findings by line; ``stopped`` names the exception that ended the script early (what it
    would have compiled after that was not checked)."""
    if stopped:
        out.write(f"float32 check: incomplete: the script stopped at {stopped}; only the graphs "
                  "compiled before that were checked\n")  # fmt: skip
    if not findings:
        out.write(f"float32 check: no float64 enters any compiled graph{' of those' if stopped else ''}\n")
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
    from modecfg.compare.mode import counted
    from modecfg.errors import CompareError
    from modecfg.scripts import exit_status, run_script

    script_arguments(args, ())
    cfg = modecfg.config
    wanted = {"mode": "CompareMode", "CompareMode.action": "raise"}
    for name in ("linkers", "rtol", "atol"):
        if getattr(args, name) is not None:
            wanted[f"CompareMode.{name}"] = getattr(args, name)
    calls, functions = counted.calls, counted.functions

    def verdict(code: int) -> int:
        compared, compiled = counted.calls - calls, counted.functions - functions
        if not compared:
            out.write("compare: no call was compared (did the script compile and call a function without "
                      "a mode of its own?)\n")  # fmt: skip
            return code or 1
        backends = ", ".join(sorted(counted.backends))
        out.write(f"compare: {compared} calls of {compiled} functions agree on {backends}\n")
        out.flush()
        return code

    def verdict_at_exit(code: int) -> None:  # the script's os._exit: the verdict first
        verdict(code)

    code = 0
    try:  # flags, not an override: the script's threads compare too
        with cfg.assigned(wanted, source="modecfg compare"):
            run_script(args.script, args.args, keep_main=args.keep_main, before_exit=verdict_at_exit)
    except CompareError as exc:
        out.write(f"{exc}\n")
        return 1
    except SystemExit as exc:
        code = exit_status(exc, err)
    except Exception as exc:
        err.write(f"error: {args.script} raised {type(exc).__name__}: {exc}\n")
        return 2
    return verdict(code)


def cmd_profile(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.profiles.session import all_stats
    from modecfg.scripts import exit_status, run_script

    script_arguments(args, ("--json", "--trace", "--html"))
    cfg = modecfg.config
    before = len(all_stats())  # report the script's functions only
    code = 0

    def before_exit(status: int) -> None:  # the script's os._exit: the report of what ran first
        _profile_report(args, before, status, out)
        out.flush()

    try:  # the flag, not an override: threads the script starts compile profiled too; put back
        # after, as it was and where from, for a caller of main() whose process goes on (tests)
        with cfg.assigned({"profile": True}, source="modecfg profile"):
            run_script(args.script, args.args, keep_main=args.keep_main, before_exit=before_exit)
    except SystemExit as exc:
        code = exit_status(exc, err)
    except Exception as exc:
        err.write(f"error: {args.script} raised {type(exc).__name__}: {exc}\n")
        code = 2
    return _profile_report(args, before, code, out)


def _profile_report(args: argparse.Namespace, before: int, code: int, out: TextIO) -> int:
    from modecfg.profiles import ProfileReport
    from modecfg.profiles.render import to_html, to_json, to_trace
    from modecfg.profiles.session import all_stats, mark_printed, reports

    cfg = modecfg.config
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
