"""The commands on this machine: linkers, modes, doctor, autoload, and the demo."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

import modecfg
from modecfg.configuration.flagstring import parse as parse_flags

__all__ = ["cmd_autoload", "cmd_demo", "cmd_doctor", "cmd_linkers", "cmd_modes"]


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
