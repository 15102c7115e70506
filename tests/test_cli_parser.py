"""The command line as a user meets it: every command, option, metavar and help line of
``modecfg --help`` and ``modecfg COMMAND --help``, held to ``tests/data/cli-parser.json``.

A change to the command line is a change users see (scripts call these options; ``--help`` is
the documentation they read first), so it shows in review as a change to that file. Held as data
read from the parser, not as argparse's text, whose layout differs between Python versions.

    python -m tests.test_cli_parser     # write the file again after a deliberate change
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HELD = Path(__file__).parent / "data" / "cli-parser.json"


def _arguments(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        found.append({
            "options": list(action.option_strings) or [action.dest],
            "dest": action.dest,
            "action": type(action).__name__,
            "nargs": action.nargs,
            "metavar": action.metavar,
            "default": repr(action.default),
            "choices": list(action.choices) if action.choices else None,
            "required": action.required,
            "help": action.help,
            "version": getattr(action, "version", None),
            "type": None if action.type is None else getattr(action.type, "__name__", repr(action.type)),
        })  # fmt: skip
    return found


def _handler(parser: argparse.ArgumentParser) -> str | None:
    """The function a command runs, by name (a command that runs none is a usage error)."""
    handler = parser.get_default("handler")
    return None if handler is None else f"{handler.__module__}.{handler.__qualname__}"


def described() -> dict[str, Any]:
    """The parser as data: the program's arguments, and each command's in the order of ``--help``."""
    from modecfg.cli import _parser

    parser = _parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in sub._choices_actions}
    commands: dict[str, Any] = {}
    for name, command in sub.choices.items():
        nested = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        commands[name] = {
            "help": helps.get(name),
            "description": command.description,
            "add_help": command.add_help,
            "handler": _handler(command),
            "action": {"dest": nested[0].dest, "required": nested[0].required, "metavar": nested[0].metavar}
            if nested
            else None,
            "arguments": _arguments(command),
            "actions": {
                action: {
                    "help": choice.help,
                    "handler": _handler(nested[0].choices[action]),
                    "arguments": _arguments(nested[0].choices[action]),
                }
                for choice in (nested[0]._choices_actions if nested else [])
                for action in [choice.dest]
            },
        }
    return {
        "prog": parser.prog,
        "description": parser.description,
        "command": {"dest": sub.dest, "required": sub.required, "metavar": sub.metavar},
        "arguments": _arguments(parser),
        "commands": commands,
    }


def held_form(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as the file holds it: JSON's lists, the version (the installed one) as VERSION."""
    data = json.loads(json.dumps(data))
    for argument in data["arguments"]:
        if argument["version"]:
            argument["version"] = "modecfg VERSION"
    return data


def test_the_command_line_is_what_users_were_told() -> None:
    held = json.loads(HELD.read_text(encoding="utf-8"))
    now = held_form(described())
    assert now == held, (
        f"the command line changed: if that is meant, `python -m tests.test_cli_parser` writes {HELD.name} "
        "again, and docs/cli.md should say so"
    )


def test_the_version_option_names_the_installed_version() -> None:
    import modecfg

    (version,) = (a for a in described()["arguments"] if a["options"] == ["--version"])
    assert version["version"] == f"modecfg {modecfg.__version__}"


if __name__ == "__main__":
    if sys.argv[1:]:
        raise SystemExit("usage: python -m tests.test_cli_parser")
    HELD.write_text(json.dumps(held_form(described()), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {HELD}")
