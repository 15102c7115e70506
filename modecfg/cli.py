"""The ``modecfg`` command: a thin layer over the public API.

Each command reads the library's results and prints them; a :class:`ModecfgError`
becomes its message on stderr and its ``exit_code``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO, cast

import modecfg
from modecfg.config.flagstring import parse as parse_flags
from modecfg.config.migrate import Migration, migrate_file, migrate_flags
from modecfg.config.units import check_duration, check_size
from modecfg.errors import ConfigErrors, HeldFlagWarning, ModecfgError
from modecfg.terminal import Shown

__all__ = ["main"]


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)


def _origin_dict(origin: modecfg.Origin) -> dict[str, Any]:
    return {"layer": str(origin.layer), "source": origin.source, "line": origin.line}


def _with_pytensors_flags(*, say_held: bool = True) -> None:
    """Import PyTensor, so that the flags it declares and modecfg does not are adopted and
    listed, and the settings held for them resolved. A held name that is no flag of PyTensor
    either is said (a HeldFlagWarning), unless the command reports it itself (``validate``)."""
    import importlib.util

    if "pytensor" in sys.modules or importlib.util.find_spec("pytensor") is None:
        return
    try:
        modecfg.config.sources  # noqa: B018  (the sources first: a broken one is this command's error)
    except ModecfgError:
        if say_held:
            raise
        return  # validate reports every problem itself
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTensor's own notes on the same names
        if say_held:
            warnings.simplefilter("always", HeldFlagWarning)
        modecfg.load_pytensor()  # its import puts modecfg's integration in


def cmd_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _with_pytensors_flags()
    cfg = modecfg.config
    names = list(cfg) if args.all else list(cfg.changed())
    if args.json:
        rows = [
            {
                "name": n,
                "value": _jsonable(cfg[n]),
                "origin": _origin_dict(cfg.origin(n)),
                "default": _jsonable(cfg.explain(n).default),
            }
            for n in names
        ]
        json.dump({"sources": list(cfg.sources), "flags": rows}, out, indent=2)
        out.write("\n")
        return 0
    if not names:
        out.write("every flag has its default value (modecfg show --all lists them)\n")
    width = max((len(n) for n in names), default=0)
    for n in names:
        out.write(f"{n:<{width}}  {cfg[n]!s:<20}  {cfg.origin(n)}\n")
    if cfg.sources:
        out.write(f"\nread from: {', '.join(cfg.sources)}\n")
    return 0


def cmd_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _with_pytensors_flags()
    exp = modecfg.config.explain(args.flag)
    if args.json:
        json.dump(
            {
                "name": exp.name,
                "value": _jsonable(exp.value),
                "origin": _origin_dict(exp.origin),
                "default": _jsonable(exp.default),
                "doc": exp.doc,
                "type": exp.kind,
                "choices": list(exp.choices),
                "layers": [  # lowest precedence first, the default included, as the text shows them
                    {"raw": None, "value": _jsonable(exp.default), "origin": {"layer": "default"}},
                    *(
                        {
                            "raw": _jsonable(c.raw),
                            "value": _jsonable(c.value),
                            "origin": _origin_dict(c.origin),
                        }
                        for c in exp.layers
                    ),
                ],
            },
            out,
            indent=2,
        )
        out.write("\n")
    else:
        out.write(f"{exp}\n")
    return 0


def cmd_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", modecfg.ObsoleteFlagWarning)  # reported below, once
        _with_pytensors_flags(say_held=False)
    report = modecfg.diagnose(rc_files=args.rc or None)
    for source in report.sources:
        out.write(f"read {source}\n")
    if not report.sources and not report.errors:
        out.write("no flag variables or rc files are set: everything is at its default\n")
    for note in report.notes:
        out.write(f"warning: {note}\n")
    problems = [str(p) for p in report.errors]
    if report.ok:  # then what the values ask of this machine: found now, not at the first compile
        from modecfg.doctor import preflight, shared_cache_warning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the notes were written above
            checked = modecfg.load(rc_files=args.rc or None)
            problems = preflight(checked)
            shared = shared_cache_warning(checked)
        if shared:
            out.write(f"warning: {shared}\n")
    for problem in problems:
        out.write(f"error: {problem}\n")
    if not problems:
        out.write("configuration OK, and this machine can run it\n")
        return 0
    out.write(f"{len(problems)} problem(s) found\n")
    return 1


def _report_migration(mig: Migration, fmt: str, out: TextIO, err: TextIO) -> int:
    out.write(mig.render(fmt))
    for note in mig.changed:
        err.write(f"changed: {note.origin}: {note.message}\n")
    for note in mig.dropped:
        err.write(f"dropped: {note.origin}: {note.message}\n")
    errors = [*mig.errors, *mig.refused(fmt)]
    for e in errors:
        err.write(f"error: {e}\n")
    return 1 if errors else 0


def cmd_migrate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.file is not None and args.flags is not None:
        raise _Usage("give a FILE or --flags, not both")
    if args.write and not (args.file or "").endswith(".py"):
        raise _Usage("--write rewrites a Python script (modecfg migrate SCRIPT.py --write)")
    if args.flags is not None:
        return _report_migration(migrate_flags(args.flags, source="--flags"), args.to or "flags", out, err)
    if args.file is not None and args.file.endswith(".py"):
        return _migrate_script(args.file, args.write, out, err)
    if args.file is not None:
        fmt = args.to or ("toml" if args.file.endswith(".toml") else "ini")
        return _report_migration(migrate_file(args.file), fmt, out, err)
    # Nothing named: the legacy variables and rc files of this environment.
    from modecfg.config.sources import LEGACY_FLAG_VARS, LEGACY_RC_FILES

    for var in LEGACY_FLAG_VARS:
        if os.environ.get(var):
            return _report_migration(migrate_flags(os.environ[var], source=var), args.to or "flags", out, err)
    for default in LEGACY_RC_FILES:
        path = Path(default).expanduser()
        if path.is_file():
            return _report_migration(migrate_file(path), args.to or "ini", out, err)
    err.write(f"nothing to migrate: no {', '.join((*LEGACY_FLAG_VARS, *LEGACY_RC_FILES))}\n")
    return 0


def _migrate_script(path: str, write: bool, out: TextIO, err: TextIO) -> int:
    """The Theano and Aesara names of a script that moved; rewritten in place with ``write``.
    Exit status: 0 nothing (left) to change; 1 names to change, or some to change by hand."""
    from modecfg.config.edit import write_atomically
    from modecfg.theano_names import rewrite

    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise _Failed(f"cannot read {path}: {exc}") from None
    try:
        text, renames = rewrite(source)
    except SyntaxError as exc:
        raise _Failed(f"{path}:{exc.lineno}: not Python 3 ({exc.msg}): nothing to migrate") from None
    if not renames:
        out.write(f"{path}: no Theano or Aesara name to change\n")
        return 0
    for rename in renames:
        out.write(f"{path}:{rename}\n")
    by_hand = [r for r in renames if not r.new]
    if write:
        if text != source:
            backup = write_atomically(path, text)
            kept = f" (the previous file is kept as {backup})" if backup else ""
            out.write(f"rewrote {len(renames) - len(by_hand)} names in {path}{kept}\n")
        if by_hand:
            err.write(f"{len(by_hand)} to change by hand (above, '(by hand)')\n")
        return 1 if by_hand else 0
    out.write(f"{len(renames)} names moved; modecfg migrate {path} --write rewrites them in place\n")
    return 1


def cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg import demo

    cfg = modecfg.config
    if args.flags:
        for setting in parse_flags(args.flags, source="--flags"):
            cfg.set(setting.key, setting.raw, source="modecfg demo --flags")
    if cfg.is_default("floatX"):  # the demo is the GPU-style float32 workload unless told otherwise
        cfg.set("floatX", "float32", source="modecfg demo")
    if args.mode:
        modecfg.get_mode(args.mode)  # an unknown or unusable mode fails before anything is printed
        cfg.set("mode", args.mode, source="modecfg demo --mode")
    modecfg.get_mode(None)
    out.write("modecfg demo: logistic regression, 400 examples x 784 features\n\n")
    out.write("configuration (what shapes this run, and where each value came from):\n")
    shown = list(cfg.changed())
    values = {name: str(cfg[name]) for name in dict.fromkeys([*shown, "floatX", "mode", "linker"])}
    if values["linker"] in ("auto", "per_graph"):
        values["linker"] += f" ({modecfg.linkers.linker_name(modecfg.get_mode(None).linker)})"
    width = max(14, *(len(v) for v in values.values()))
    for name, value in values.items():
        out.write(f"  {name:<24} {value:<{width}} {cfg.origin(name)}\n")
    out.flush()
    result = demo.run(steps=args.steps, profile=args.profile)
    compiled = f"{result.compile_seconds:8.3f} s"
    if result.compile_seconds > 5:  # the first run on a machine compiles PyTensor's C code
        compiled += f"  (C code compiled once, cached in {cfg.base_compiledir}: later runs are faster)"
    out.write(
        f"\nmode {result.mode}, linker {result.linker}, floatX {result.floatX}\n"
        f"compile time     {compiled}\n"
        f"time per step    {result.step_seconds * 1e3:8.3f} ms (median of {result.steps})\n"
        f"cost             {result.first_cost:.4f} -> {result.last_cost:.4f}\n"
        f"accuracy         {result.accuracy:8.1%}\n"
        f"ran on             {result.ran_on}\n"
    )
    if result.floatX != "float32":
        out.write(f"float32 check    not applicable: floatX={result.floatX}\n")
    elif result.float64:
        out.write(f"float32 check    {len(result.float64)} place(s) where float64 enters:\n")
        for finding in result.float64:
            out.write(f"  {finding}\n")
    else:
        out.write("float32 check    no float64 in the compiled graphs\n")
    if result.profile is not None:
        out.write("\n" + result.profile.text(n_apply=5, n_ops=5) + "\n")
    return 0


def _after_edit(edit: Any, out: TextIO) -> None:
    """Say where the edit went, and whether something else decides the flag here."""
    if edit.backup:
        out.write(f"the previous file is kept as {edit.backup}\n")
    try:
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always", modecfg.ObsoleteFlagWarning)
            winner = modecfg.load().origin(edit.flag)
    except modecfg.ConfigError:
        return
    obsolete = sorted({str(w.message).split(" is obsolete", 1)[0] for w in heard
                       if issubclass(w.category, modecfg.ObsoleteFlagWarning)})  # fmt: skip
    if obsolete:  # one line, not each flag's warning again at every edit
        plural = "s" if len(obsolete) > 1 else ""
        out.write(f"note: {len(obsolete)} obsolete flag{plural} here too ({', '.join(obsolete)}): "
                  "modecfg validate says why, modecfg unset NAME removes one\n")  # fmt: skip
    elsewhere = winner.layer is modecfg.Layer.ENV or (
        winner.layer is modecfg.Layer.RC and winner.source != os.path.abspath(edit.path)
    )
    if elsewhere:
        out.write(f"note: {winner} also sets {edit.flag}, and that is what counts here\n")


def cmd_set(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.config.edit import set_flag

    edit = set_flag(args.flag, args.value, args.file)
    where = f"{edit.path}" + (f" (line {edit.line})" if edit.line else "")
    verb = "set" if edit.changed else "already set"
    out.write(f"{edit.flag} = {edit.value!r} {verb} in {where}\n")
    _after_edit(edit, out)
    return 0


def cmd_unset(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.config.edit import unset_flag

    edit = unset_flag(args.flag, args.file)
    if not edit.changed:
        out.write(f"{edit.flag} is not set in {edit.path}: nothing to do\n")
        return 0
    out.write(f"{edit.flag} removed from {edit.path}\n")
    _after_edit(edit, out)
    return 0


def cmd_schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _with_pytensors_flags()
    if args.format == "ini":
        from modecfg.config.example import theanorc_example

        out.write(theanorc_example())
        return 0
    from modecfg.config.schema import json_schema

    out.write(json.dumps(json_schema(), indent=2) + "\n")
    return 0


def cmd_linkers(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    rows = modecfg.linkers.table()
    limits = {row.name: modecfg.linkers.limit(row.name) for row in rows if row.available}
    if args.json:
        json.dump([{**row._asdict(), "limit": limits.get(row.name, "")} for row in rows], out, indent=2)
        out.write("\n")
        return 0
    out.write(f"{'linker':<10} {'usable':<7} {'gc':<4} {'by op':<6} {'overhead':<9} what it is\n")
    for row in rows:
        usable = ("partly" if limits.get(row.name) else "yes") if row.available else "no"
        out.write(
            f"{row.name:<10} {usable:<7} {'yes' if row.gc else 'no':<4} "
            f"{'yes' if row.raises_by_op else 'no':<6} {row.overhead:<9} {row.description}\n"
        )
        if not row.available or limits.get(row.name):
            out.write(f"{'':<10} {row.why_not or limits[row.name]}\n")
    from modecfg.linkers.auto import rule_here

    out.write(f"\nlinker=auto (the default, PyTensor's): {modecfg.linkers.resolve_linker('auto')}\n")
    out.write(f"linker=per_graph (modecfg's, opt-in): {rule_here()}\n")
    return 0


def cmd_modes(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    cfg = modecfg.config
    rows = modecfg.modes.table()
    cells = [(r.name, r.optimizer, r.linker if r.available else "unusable here") for r in rows]
    widths = [
        max(len(title), *(len(c[i]) for c in cells))
        for i, title in enumerate(("mode", "optimizer", "linker"))
    ]
    out.write(f"{'mode':<{widths[0]}}  {'optimizer':<{widths[1]}}  {'linker':<{widths[2]}}  what it is for\n")
    for row, (name, optimizer, linker) in zip(rows, cells, strict=True):
        mark = " (deprecated)" if row.deprecated else ""
        out.write(
            f"{name:<{widths[0]}}  {optimizer:<{widths[1]}}  {linker:<{widths[2]}}  {row.purpose}{mark}\n"
        )
        if not row.available:
            out.write(f"{'':<{widths[0]}}  {row.why_not}\n")
    aliases = [n for n in modecfg.modes.mode_names() if n not in {r.name for r in rows}]
    for alias in aliases:
        out.write(f"\n{alias} is another name for {modecfg.modes.canonical_mode(alias)}")
    out.write(f"\n{'' if not aliases else chr(10)}the mode flag is {cfg.mode} (from {cfg.origin('mode')})\n")
    return 0


def cmd_doctor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.doctor import diagnose_machine, verdict

    report = diagnose_machine(verbose=args.verbose)
    out.write("\n".join(verdict(modecfg.config, report)) + "\n\n")
    for section, rows in report.items():
        out.write(f"{section}\n")
        for key, value in rows:
            out.write(f"  {key:<22} {value}\n")
    return 0


def _script_arguments(args: argparse.Namespace, options: Sequence[str]) -> None:
    """Options of ours written after the script (``modecfg profile train.py 3 --html p.html``)
    are ours; everything after ``--`` is the script's. Checked before the script runs."""
    if not os.path.isfile(args.script):
        raise _Failed(
            f"no script {args.script!r} (the first argument after the command is the script to run)"
        )
    rest: list[str] = []
    words = list(args.args)
    while words:
        word = words.pop(0)
        name, eq, value = word.partition("=")
        if name in options:
            if not eq:
                if not words:
                    raise _Failed(f"{name} needs a file name")
                value = words.pop(0)
            setattr(args, name.lstrip("-"), value)
            continue
        rest.append(word)
    args.args = rest + list(getattr(args, "passthrough", []))
    for option in options:
        path = getattr(args, option.lstrip("-"), None)
        if path:
            # resolved now: the script may change directory
            setattr(args, option.lstrip("-"), os.path.abspath(path))
            directory = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(directory):
                raise _Failed(f"{option} {path}: the directory {directory} does not exist")
            if not os.access(directory, os.W_OK):
                raise _Failed(f"{option} {path}: cannot write in {directory}")


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
        _script_arguments(args, ())
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


def cmd_autoload(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg import autoload

    path = autoload.pth_path()
    if args.action == "on":
        autoload.enable(path)
        out.write(
            "autoload on: every Python of this environment loads modecfg before PyTensor\n"
            f"  ({path}; undo: modecfg autoload off; one run without it: MODECFG_AUTOLOAD=0)\n"
        )
    elif args.action == "off":
        was = autoload.disable(path)
        out.write(f"autoload off{'' if was else ' (it was not on)'}: scripts that do not import modecfg run "
                  "PyTensor without it (modecfg run SCRIPT loads it for one run)\n")  # fmt: skip
    else:
        on = autoload.enabled(path)
        out.write(f"autoload {'on' if on else 'off'} for {sys.executable} ({path})\n")
    return 0


def cmd_check_float32(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.checks.script import check_script
    from modecfg.scripts import exit_status

    _script_arguments(args, ())
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

    _script_arguments(args, ())
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

    _script_arguments(args, ("--json", "--trace", "--html"))
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


def cmd_cache(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg import cache
    from modecfg.config.units import human_size

    if args.action == "export":
        done = cache.export_cache(args.file)
        unsigned = ", unsigned (no key of yours: importing it will need --trust)"
        out.write(f"exported {done.entries} entries ({human_size(done.size)}) to {done.path}"
                  f"{'' if done.signed else unsigned}\n")  # fmt: skip
        return 0
    if args.action == "import":
        got = cache.import_cache(args.file, trust=args.trust)
        out.write(
            f"imported {len(got.added)} entries from {args.file}; {len(got.present)} were here already\n"
        )
        return 0
    if args.action == "show":
        status = cache.show()
        out.write(json.dumps(status.to_json(), indent=2) + "\n" if args.json else f"{status}\n")
        return 0

    def waiting(holders: list[cache.Holder]) -> None:
        who = ", ".join(str(h) for h in holders if not h.waiting) or "a process this host cannot name"
        err.write(f"waiting for the compile lock, held by {who}\n")

    report = cache.clean(args.older_than, args.max_size, dry_run=args.dry_run, on_wait=waiting)
    verb = "would remove" if report.dry_run else "removed"
    chosen = (
        report.plan.remove
        if report.dry_run
        else [(e, w) for e, w in report.plan.remove if e in report.removed]
    )
    if args.verbose:
        for entry, why in chosen:
            out.write(f"{verb} {entry.kind} {entry.name} ({human_size(entry.size)}): {why}\n")
        for entry, why in report.plan.keep:
            out.write(f"kept {entry.kind} {entry.name} ({human_size(entry.size)}): {why}\n")
    else:
        out.writelines(_entries_in_short(verb, chosen))
        out.writelines(_entries_in_short("kept", report.plan.keep))
    for entry, why in report.failed:
        err.write(f"error: could not remove {entry.kind} {entry.name}: {why}\n")
    freed = report.plan.freed if report.dry_run else report.freed
    before = sum(c.size for c in report.caches)
    out.write(f"{verb} {len(chosen)} entries, {human_size(freed)} of {human_size(before)}\n")
    return 1 if report.failed else 0


def _entries_in_short(verb: str, rows: Sequence[tuple[Any, str]]) -> list[str]:
    """Cache entries in short: a line per cache and reason, with the count, the size and the
    range the reason spans ("unused for 39 min to 6.1 h")."""
    import re

    from modecfg.config.units import human_size

    groups: dict[tuple[str, str], list[tuple[Any, str]]] = {}
    for entry, why in rows:
        reason = re.split(r" \d", why, maxsplit=1)[0]  # "unused for 6.1 h": "unused for"
        groups.setdefault((entry.kind, reason), []).append((entry, why))
    lines = []
    for (kind, reason), found in groups.items():
        whys = [why for _, why in sorted(found, key=lambda row: row[0].last_used)]  # the oldest first
        said = whys[0] if whys[0] == whys[-1] else f"{whys[-1]} to {whys[0][len(reason) :].strip()}"
        size = human_size(sum(entry.size for entry, _ in found))
        lines.append(f"{verb} {len(found)} {kind} entr{'y' if len(found) == 1 else 'ies'} ({size}): {said}\n")
    return lines


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


class _Failed(Exception):
    """A command that cannot start (missing script, unwritable output): a message, exit 2."""


class _Usage(Exception):
    pass


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} steps: give 1 or more")
    return value


def _checked(check: Callable[[str], str]) -> Callable[[str], str]:
    """An argparse type from a flag's check: its ValueError is the usage error's text."""

    def parse(text: str) -> str:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="modecfg", description="Typed configuration and compile modes for PyTensor."
    )
    p.add_argument("--version", action="version", version=f"modecfg {modecfg.__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("show", help="each flag's value and where it came from")
    s.set_defaults(handler=cmd_show)
    s.add_argument("--all", action="store_true", help="every flag, defaults included")
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser("explain", help="one flag: value, origin, every layer, doc, choices")
    s.set_defaults(handler=cmd_explain)
    s.add_argument("flag")
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser("validate", help="check the environment and rc files; non-zero exit on problems")
    s.set_defaults(handler=cmd_validate)
    s.add_argument("--rc", action="append", metavar="FILE", help="check this rc file instead (repeatable)")

    s = sub.add_parser(
        "migrate", help="a legacy .theanorc or flag string in the modern form; a script's moved Theano names",
        description="An rc file or flag string: written in the modern form (--to ini, toml or flags), "
        "meaning kept or the flag refused with why. A Python script (SCRIPT.py): every Theano and Aesara "
        "name it uses that moved (modules, classes, functions, flags), with the PyTensor or modecfg name to "
        "use; --write rewrites them in place, keeping comments and layout (the old file kept as .bak).",
    )  # fmt: skip
    s.set_defaults(handler=cmd_migrate)
    s.add_argument(
        "file", nargs="?", help="an rc file or a .py script (default: THEANO_FLAGS, then ~/.theanorc)"
    )
    s.add_argument("--flags", help="a flag string to migrate instead of a file")
    s.add_argument("--to", choices=["ini", "toml", "flags"], help="output format")
    s.add_argument("--write", action="store_true", help="a script: rewrite its names in place")

    s = sub.add_parser("set", help="set a flag in an rc file, keeping the rest of it as it is")
    s.add_argument("flag")
    s.add_argument("value")
    s.add_argument("--file", help="the rc file (default: the one that sets the flag, else the first "
                   "existing rc file, else ~/.theanorc)")  # fmt: skip
    s.set_defaults(handler=cmd_set)
    s = sub.add_parser("unset", help="remove a flag from an rc file, keeping the rest of it as it is")
    s.add_argument("flag")
    s.add_argument("--file", help="the rc file (default: the one that sets the flag)")
    s.set_defaults(handler=cmd_unset)
    s = sub.add_parser("schema", help="a JSON Schema of the rc file, for editors (TOML language servers)")
    s.add_argument(
        "--format",
        choices=["json", "ini"],
        default="json",
        help="json: a JSON Schema (default); ini: a documented rc file of every flag (.theanorc.example)",
    )
    s.set_defaults(handler=cmd_schema)
    s = sub.add_parser("linkers", help="the linker table: what each linker is, and if it runs here")
    s.set_defaults(handler=cmd_linkers)
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser("modes", help="the registered modes: optimizer, linker, what each is for")
    s.set_defaults(handler=cmd_modes)
    s = sub.add_parser("doctor", help="a verdict on this configuration here, then compiler, BLAS, backends, "
                       "GPUs, linkers, devices")  # fmt: skip
    s.set_defaults(handler=cmd_doctor)
    s.add_argument("--verbose", action="store_true", help="also every contact with PyTensor, one a line")

    s = sub.add_parser(
        "run", help="run a script with modecfg loaded: THEANO_FLAGS and rc files reach PyTensor",
        description="Run SCRIPT (or -m MODULE) as python would, with modecfg loaded first, so that "
        "THEANO_FLAGS, PYTENSOR_FLAGS, MODECFG_FLAGS, ~/.theanorc and the other rc files shape PyTensor "
        "although the script never imports modecfg. The script's exit status is the command's. For every "
        "script of this environment: modecfg autoload on.",
    )  # fmt: skip
    s.set_defaults(handler=cmd_run)
    s.add_argument(
        "-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE", help="run a module, as python -m"
    )
    s.add_argument("words", nargs=argparse.REMAINDER, metavar="SCRIPT [ARGS]")

    s = sub.add_parser(
        "autoload", help="load modecfg whenever PyTensor is imported, in every script of this environment",
        description="on: write modecfg-autoload.pth into this environment's site-packages, so that every "
        "Python started from it loads modecfg just before PyTensor (a script that never imports PyTensor "
        "pays ~1 ms). off: remove it. status (the default): say which. MODECFG_AUTOLOAD=0 leaves it out "
        "for one run.",
    )  # fmt: skip
    s.set_defaults(handler=cmd_autoload)
    s.add_argument("action", nargs="?", choices=("on", "off", "status"), default="status")

    s = sub.add_parser("check-float32", help="run a script and report every float64 its graphs let in")
    s.set_defaults(handler=cmd_check_float32)
    s.add_argument("script")
    s.add_argument("args", nargs=argparse.REMAINDER)

    s = sub.add_parser(
        "compare", help="run a script with mode=CompareMode: the backends compared on every call",
        description="Run a script with mode=CompareMode: every call of a function compiled without a mode "
        "of its own also runs on the other backends (CompareMode.linkers) and on the graph as written. "
        "At the first difference: the node, the rewrite, a reproduction script. Exit status: 0 all agreed, "
        "1 a difference (or nothing compared), 2 the script failed otherwise.",
    )  # fmt: skip
    s.set_defaults(handler=cmd_compare)
    s.add_argument("--linkers", help="reference linkers, e.g. numba:cvm (CompareMode.linkers; default auto)")
    s.add_argument("--rtol", type=float, help="relative tolerance (CompareMode.rtol; default by dtype)")
    s.add_argument("--atol", type=float, help="absolute tolerance (CompareMode.atol; default by dtype)")
    s.add_argument("script")
    s.add_argument("args", nargs=argparse.REMAINDER)

    s = sub.add_parser("profile", help="run a script and profile every function it compiles")
    s.set_defaults(handler=cmd_profile)
    s.add_argument("--json", metavar="FILE", help="write the reports as JSON (modecfg/profiles/schema.json)")
    s.add_argument("--trace", metavar="FILE", help="write Chrome trace events (Perfetto, chrome://tracing)")
    s.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    s.add_argument("script")
    s.add_argument("args", nargs=argparse.REMAINDER)

    s = sub.add_parser(
        "replay", help="re-run a NaN-guard dump of yours; show the data of anyone else's",
        description="Re-run the failing call of a NaN-guard dump signed with your own key. A dump that is "
        "not yours is shown (its finding, flags, versions, graph, captured values), not run. Exit status: "
        "0 reproduced, 1 no longer fails, 2 the dump cannot be read or replayed, 3 not run (not yours).",
    )  # fmt: skip
    s.set_defaults(handler=cmd_replay)
    s.add_argument("dump")
    s.add_argument("--dump", dest="write_dump", action="store_true", help="write a new dump if it fails")
    s.add_argument(
        "--trust", action="store_true",
        help="run a dump that is not signed with your key: unpickling its graph runs whatever code the "
        "file holds, so only for a dump you trust, after reading what `modecfg replay DUMP` shows",
    )  # fmt: skip

    s = sub.add_parser(
        "cache", help="the compile caches: where, how big, who holds the lock; trim them",
        description="show: each compile cache (C modules, numba), its size, entries and ages, who holds its "
        "lock. clean: remove the entries beyond the bounds (cache.max_age and cache.max_size, or the "
        "options), holding the compile lock, never a module a running process has loaded.",
    )  # fmt: skip
    s.set_defaults(handler=cmd_cache)
    actions = s.add_subparsers(dest="action", required=True, metavar="ACTION")
    a = actions.add_parser("show", help="where each cache is, its size and ages, its lock's holder")
    a.add_argument("--json", action="store_true", help="machine-readable output")
    a = actions.add_parser("export", help="write the caches' complete entries to FILE, signed with your key")
    a.add_argument("file")
    a = actions.add_parser(
        "import", help="add the entries of an exported cache that this one lacks",
        description="Add the entries of FILE (from `modecfg cache export`) that this cache lacks. Refused "
        "unless FILE is signed with your key (or --trust), and where it was built for another machine or "
        "other versions (PyTensor, numpy, numba, Python, compiler, CPU features). Exit 2: unreadable or "
        "not for here; 3: not yours.",
    )  # fmt: skip
    a.add_argument("file")
    a.add_argument(
        "--trust",
        action="store_true",
        help="import a cache not signed with your key: it holds code that runs here",
    )
    a = actions.add_parser("clean", help="remove the entries beyond the bounds")
    a.add_argument(
        "--older-than",
        metavar="AGE",
        type=_checked(check_duration),
        help="unused for longer than AGE (31d, 12h; default: cache.max_age)",
    )
    a.add_argument("--max-size", metavar="SIZE", type=_checked(check_size),
                   help="keep at most SIZE in all (2GiB, 500MB; default: cache.max_size)")  # fmt: skip
    a.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    a.add_argument("--verbose", action="store_true", help="each entry on a line of its own, with why")

    s = sub.add_parser("demo", help="train the logistic regression under the current configuration")
    s.set_defaults(handler=cmd_demo)
    s.add_argument("--mode", help="a registered mode (default: the mode flag)")
    s.add_argument("--steps", type=_positive, default=200, help="training steps (default 200)")
    s.add_argument("--flags", help="flags for this run, over every other source (name=value,...)")
    s.add_argument("--profile", action="store_true", help="profile the training step; show its top rows")
    return p


def _set_words(words: list[str]) -> list[str]:
    """``set`` with its options first and its two words after ``--``: a value that starts with
    '-' (``modecfg set blas.ldflags -lopenblas``) is the value, not an option."""
    options, words_ = [], []
    rest = words[1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--":
            words_ += rest[i + 1 :]
            break
        if word == "--file" and i + 1 < len(rest):
            options += rest[i : i + 2]
            i += 2
            continue
        if word.startswith("--file=") or word in ("-h", "--help"):
            options.append(word)
        else:
            words_.append(word)
        i += 1
    return ["set", *options, "--", *words_]


def _quiet_stdout() -> None:
    """Point standard output at /dev/null: Python's own flush at exit must not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    err = err or sys.stderr or open(os.devnull, "w")
    if out is None and sys.stdout is None:  # `modecfg show >&-`
        err.write("error: standard output is closed: nothing can be shown\n")
        return 1
    out = out or sys.stdout
    if out is sys.stdout and hasattr(out, "reconfigure"):
        # an ASCII terminal (LANG=C, PYTHONIOENCODING=ascii) shows a non-ASCII value escaped
        out.reconfigure(errors="backslashreplace")
    try:  # what a dump, a lock note or a name holds is shown, never run by the terminal
        return _main(argv, cast(TextIO, Shown(out)), cast(TextIO, Shown(err)))
    except BrokenPipeError:  # `modecfg show --all | head`: the reader has all it wanted
        _quiet_stdout()
        return 0
    except OSError as exc:  # `modecfg show > /dev/full`: one line, as git and pip say it
        if out is not sys.stdout and getattr(exc, "filename", None):
            raise
        err.write(f"error: cannot write the output: {exc.strerror or exc}\n")
        _quiet_stdout()
        return 1


def _main(argv: Sequence[str] | None, out: TextIO, err: TextIO) -> int:
    parser = _parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["set"]:  # a value may start with '-' (blas.ldflags -lopenblas)
        args = parser.parse_args(_set_words(words))
        passthrough: list[str] = []
    else:  # everything after "--" is the script's (argparse would drop the "--" itself)
        passthrough = words[words.index("--") + 1 :] if "--" in words else []
        args = parser.parse_args(words[: len(words) - len(passthrough) - 1] if "--" in words else words)
    args.passthrough = passthrough
    with warnings.catch_warnings():
        warnings.simplefilter("default")

        def show(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
            err.write(f"{category.__name__}: {message}\n")

        warnings.showwarning = show
        try:
            handler: Callable[[argparse.Namespace, TextIO, TextIO], int] = args.handler
            code = handler(args, out, err)
            out.flush()  # a full disk says so here, not in Python's flush at exit
            return code
        except _Usage as exc:
            parser.error(str(exc))
        except _Failed as exc:
            err.write(f"error: {exc}\n")
            return 2
        except ConfigErrors as exc:
            for e in exc.errors:
                err.write(f"error: {e}\n")
            return exc.exit_code
        except ModecfgError as exc:
            err.write(f"error: {exc}\n")
            return exc.exit_code
    raise AssertionError("unreachable")  # pragma: no cover
