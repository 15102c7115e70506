"""The commands on the configuration: show, explain, validate, migrate, set, unset, schema."""

from __future__ import annotations

import argparse
import json
import os
import re
import warnings
from pathlib import Path
from typing import Any, TextIO

import modecfg
from modecfg.cli.common import _Failed, _Usage, jsonable, origin_dict
from modecfg.configuration.migrate import Migration, migrate_file, migrate_flags

__all__ = [
    "LISTED_PROBLEMS",
    "cmd_explain",
    "cmd_migrate",
    "cmd_schema",
    "cmd_set",
    "cmd_show",
    "cmd_unset",
    "cmd_validate",
]


def cmd_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    cfg = modecfg.config
    names = list(cfg) if args.all else list(cfg.changed())
    if args.json:
        rows = [
            {
                "name": n,
                "value": jsonable(cfg[n]),
                "origin": origin_dict(cfg.origin(n)),
                "default": jsonable(cfg.explain(n).default),
            }
            for n in names
        ]
        theirs = [{"name": s.pytensor_name, "raw": jsonable(s.raw), "origin": origin_dict(s.origin)}
                  for s in cfg.for_pytensor]  # fmt: skip
        json.dump({"sources": list(cfg.sources), "flags": rows, "pytensor_own": theirs}, out, indent=2)
        out.write("\n")
        return 0
    if not names:
        out.write("every flag has its default value (modecfg show --all lists them)\n")
    width = max((len(n) for n in names), default=0)
    for n in names:
        out.write(f"{n:<{width}}  {cfg[n]!s:<20}  {cfg.origin(n)}\n")
    if cfg.for_pytensor:
        out.write("\nPyTensor's own flags, handed to it as written (modecfg does not declare them):\n")
        for s in cfg.for_pytensor:
            out.write(f"{s.pytensor_name}  {s.raw!s:<20}  {s.origin}\n")
    if cfg.sources:
        out.write(f"\nread from: {', '.join(cfg.sources)}\n")
    return 0


def cmd_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    exp = modecfg.config.explain(args.flag)
    if args.json:
        json.dump(
            {
                "name": exp.name,
                "value": jsonable(exp.value),
                "origin": origin_dict(exp.origin),
                "default": jsonable(exp.default),
                "doc": exp.doc,
                "type": exp.kind,
                "choices": list(exp.choices),
                "layers": [  # lowest precedence first, the default included, as the text shows them
                    {"raw": None, "value": jsonable(exp.default), "origin": {"layer": "default"}},
                    *(
                        {
                            "raw": jsonable(c.raw),
                            "value": jsonable(c.value),
                            "origin": origin_dict(c.origin),
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


LISTED_PROBLEMS = 100  # what validate lists without --all (a file of 50,000 unknown names: 3.7 MB)


def cmd_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    report = modecfg.diagnose(rc_files=args.rc or None)
    for source in report.sources:
        out.write(f"read {source}\n")
    if not report.sources and not report.errors:
        out.write("no flag variables or rc files are set: everything is at its default\n")
    for warned in report.notes:
        out.write(f"warning: {warned}\n")
    problems = [str(p) for p in report.errors]
    notes: list[str] = []
    running = ""
    if report.ok:  # then what the values ask of this machine (modecfg doctor's verdict, the same)
        from modecfg.doctor import assess

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the notes were written above
            found = assess(modecfg.load(rc_files=args.rc or None))
        problems, notes, running = found.problems, found.notes, f" ({found.running})"
    shown = problems if getattr(args, "all", False) else problems[:LISTED_PROBLEMS]
    for problem in shown:
        out.write(f"error: {problem}\n")
    if len(shown) < len(problems):
        out.write(f"... and {len(problems) - len(shown)} more: modecfg validate --all lists every one\n")
    for note in notes:
        out.write(f"note: {note}\n")
    if not problems:
        out.write(f"configuration OK, and this machine can run it{running}\n")
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
    from modecfg.configuration.sources import LEGACY_FLAG_VARS, LEGACY_RC_FILES

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
    Exit status: 0 nothing (left) to change; 1 names to change, or some to change by hand.

    The script is read as Python reads it (its encoding cookie or BOM, its line ends as they
    are) and written back the same way: only the spans of the names rewritten change. A
    symbolic link's target is edited, the link kept; the old file is kept beside it as ``.bak``
    (or ``.bak.N``: an existing backup is never replaced)."""
    import tokenize

    from modecfg.configuration.edit import edit_lock, edit_target, write_bytes
    from modecfg.theano_names import rewrite

    target = edit_target(path)
    try:
        with open(target, "rb") as f:
            raw = f.read()
        # its first two lines as Python reads them (a lone \r ends a line too) hold any cookie
        first = iter(re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", raw[:4096])[:2])
        encoding, _ = tokenize.detect_encoding(lambda: next(first, b""))
        source = raw.decode(encoding)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise _Failed(f"cannot read {path}: {exc}") from None
    try:
        text, renames = rewrite(source)
    except SyntaxError as exc:
        where = f"{path}:{exc.lineno}" if exc.lineno else path
        raise _Failed(f"{where}: not Python 3 ({exc.msg}): nothing to migrate") from None
    if not renames:
        out.write(f"{path}: no Theano or Aesara name to change\n")
        return 0
    for rename in renames:
        out.write(f"{path}:{rename}\n")
    by_hand = [r for r in renames if not r.new]
    if write:
        if text != source:
            try:
                data = text.encode(encoding)
            except UnicodeEncodeError as exc:  # pragma: no cover - the names written are ASCII
                raise _Failed(f"cannot write {path} in its encoding {encoding}: {exc}") from None
            with edit_lock(target):
                with open(target, "rb") as f:
                    if f.read() != raw:
                        raise _Failed(f"{path} changed while it was read: nothing was written; run it again")
                backup = write_bytes(target, data)
            kept = f" (the previous file is kept as {backup})" if backup else ""
            out.write(f"rewrote {len(renames) - len(by_hand)} names in {path}{kept}\n")
        if by_hand:
            err.write(f"{len(by_hand)} to change by hand (above, '(by hand)')\n")
        return 1 if by_hand else 0
    out.write(f"{len(renames)} names moved; modecfg migrate {path} --write rewrites them in place\n")
    return 1


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
    from modecfg.configuration.edit import set_flag

    edit = set_flag(args.flag, args.value, args.file)
    where = f"{edit.path}" + (f" (line {edit.line})" if edit.line else "")
    verb = "set" if edit.changed else "already set"
    out.write(f"{edit.flag} = {edit.value!r} {verb} in {where}\n")
    _after_edit(edit, out)
    return 0


def cmd_unset(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from modecfg.configuration.edit import unset_flag

    edit = unset_flag(args.flag, args.file)
    if not edit.changed:
        out.write(f"{edit.flag} is not set in {edit.path}: nothing to do\n")
        return 0
    out.write(f"{edit.flag} removed from {edit.path}\n")
    _after_edit(edit, out)
    return 0


def cmd_schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.format == "ini":
        from modecfg.configuration.example import theanorc_example

        out.write(theanorc_example())
        return 0
    from modecfg.configuration.schema import json_schema

    out.write(json.dumps(json_schema(), indent=2) + "\n")
    return 0
