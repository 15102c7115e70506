"""The ``modecfg`` command: a thin layer over the public API.

Each command reads the library's results and prints them; a :class:`ModecfgError`
becomes its message on stderr and its ``exit_code``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TextIO, cast

import modecfg
from modecfg.cli.cache import cmd_cache
from modecfg.cli.common import _Failed, _Usage
from modecfg.cli.config import (
    LISTED_PROBLEMS,
    cmd_explain,
    cmd_migrate,
    cmd_schema,
    cmd_set,
    cmd_show,
    cmd_unset,
    cmd_validate,
)
from modecfg.cli.machine import cmd_autoload, cmd_demo, cmd_doctor, cmd_linkers, cmd_modes
from modecfg.cli.running import cmd_check_float32, cmd_compare, cmd_profile, cmd_replay, run_command
from modecfg.configuration.units import check_duration, check_size
from modecfg.errors import ConfigErrors, ModecfgError
from modecfg.terminal import Shown

__all__ = ["main"]


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
    s.add_argument(
        "--all",
        action="store_true",
        help=f"every problem (without it: the first {LISTED_PROBLEMS}, and how many)",
    )

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

    # Listed for `modecfg --help` only: main() hands `modecfg run ...` to run_command before any
    # parsing (every word after SCRIPT is the script's, and argparse would take some for its own).
    sub.add_parser(
        "run",
        help="run a script with modecfg loaded: THEANO_FLAGS and rc files reach PyTensor",
        add_help=False,
    )

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
    _script_and_its_arguments(s)

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
    _script_and_its_arguments(s)

    s = sub.add_parser("profile", help="run a script and profile every function it compiles")
    s.set_defaults(handler=cmd_profile)
    s.add_argument("--json", metavar="FILE", help="write the reports as JSON (modecfg/profiles/schema.json)")
    s.add_argument("--trace", metavar="FILE", help="write Chrome trace events (Perfetto, chrome://tracing)")
    s.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    _script_and_its_arguments(s)

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


def _script_and_its_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)


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
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["run"]:  # the script's own, untouched: its output, warnings, words after it
        return run_command(words[1:], keep_main=argv is None, err=err)
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
    args.keep_main = argv is None  # this process ends with a script it runs: its __main__ stays
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
