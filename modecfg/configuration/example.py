"""``.theanorc.example``, generated from the flag declarations (``modecfg schema --format ini``).

Every flag with its doc, its choices and its default, in the sections an rc file uses.
A test keeps the committed file equal to what this writes, so the example cannot drift
from the declarations.
"""

from __future__ import annotations

import textwrap
from typing import Any

from modecfg.configuration.flags import FLAGS, Flag
from modecfg.configuration.origin import Layer, precedence_line, rung

__all__ = ["theanorc_example"]

_HEADER = """\
#!sh
# .theanorc.example: every modecfg flag, its doc, its choices and its default.
# Generated from modecfg's flag declarations (modecfg schema --format ini > .theanorc.example).
#
{order}
#
# Rules: [global] holds plain flags, [section] holds dotted ones ([traceback] limit is
# traceback.limit; section.option also works under [global]). Option names match in any
# case, section names exactly. "# comments" may follow a value. Quotes around a whole
# value are removed. %(user)s, %(tmpdir)s, %(lscratch)s, %(temp)s, %(tmp)s, %(pid)s and
# the section's own options are interpolated (write %% for a literal %). A flag set twice
# in one section, a malformed line or an unknown flag is an error naming this file and
# the line. Booleans: True/False, true/false, 1/0, yes/no, on/off.
# Check a file with:  modecfg validate --rc FILE      Explain one flag:  modecfg explain FLAG
#
# Every value below is the default: change what you need. Defaults computed from other
# flags, and flags unset by default, are shown commented out.
"""

_FOOTER = """
# Obsolete sections a Theano-era file may still have. modecfg accepts them with one
# ObsoleteFlagWarning per flag saying what replaced them; `modecfg migrate FILE` writes
# the file without them.
# [nvcc]
# fastmath = True
# [lib]
# cnmem = .75
"""


def _order() -> str:
    """Which value wins and which rc files are read, from the one table that says it."""
    rc = rung(Layer.RC)
    lines = ["# modecfg reads, lowest precedence first (assignments: config.floatX = ... in Python;"]
    lines.append("# overrides: config.override(...) and change_flags blocks):")
    lines += textwrap.wrap(
        precedence_line(), width=86, initial_indent="#   ", subsequent_indent="#" + " " * 12
    )
    files = (
        f"rc files: the path lists in {', '.join(rc.named_by)} (a file on the right overrides one on "
        f"the left), or else {', '.join(rc.reads[:-1])} and {rc.reads[-1]} (a .toml file uses the "
        "same names as tables; point a TOML editor at `modecfg schema` for completion and checking)."
    )
    lines += textwrap.wrap(files, width=86, initial_indent="# ", subsequent_indent="# ")
    return "\n".join(lines)


def _value(value: Any) -> str:
    if value is None:
        return ""
    return str(value).replace("%", "%%")


def _entry(spec: Flag) -> list[str]:
    doc = spec.doc
    choices = spec.choices()
    if choices and len(choices) <= 12:
        doc += f" Choices: {', '.join(choices)}."
    lines = textwrap.wrap(doc, width=86, initial_indent="# ", subsequent_indent="# ")
    if spec.is_lazy:
        lines.append(f"# {spec.attr} =    (default: {spec.default})")
    elif spec.default is None:  # unset: PyTensor or modecfg decides; no rc value means that
        lines.append(f"# {spec.attr} =    (default: unset)")
    else:
        lines.append(f"{spec.attr} = {_value(spec.default)}".rstrip())
    return lines


def theanorc_example() -> str:
    """The text of ``.theanorc.example``: modecfg's declarations."""
    sections: dict[str, list[Flag]] = {}
    for spec in FLAGS.values():
        sections.setdefault(".".join(spec.section) or "global", []).append(spec)
    out = [_HEADER.format(order=_order())]
    for section, specs in sections.items():
        out.append(f"[{section}]")
        for spec in specs:
            out.extend(_entry(spec))
            out.append("")
    out.append(_FOOTER)
    return "\n".join(out).rstrip() + "\n"
