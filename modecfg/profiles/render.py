"""Profile reports as files: JSON (a documented schema), Chrome trace events, HTML.

* JSON follows ``schema.json`` beside this module (``schema()``): version 1 is stable,
  fields are only ever added.
* The trace is the Chrome trace-event format that Perfetto and chrome://tracing open:
  one track per function, one complete event per node with its mean time per call,
  laid out in the order PyTensor ran the nodes (a representative call, not a recording).
* HTML is one self-contained file: tables and an SVG chart of where the time goes, no
  script and no network needed to view it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from importlib import resources
from typing import Any

from modecfg.profiles.html import CSS, sections
from modecfg.profiles.rows import SCHEMA_VERSION, ProfileReport

__all__ = ["schema", "to_html", "to_json", "to_trace"]


def schema() -> dict[str, Any]:
    """The JSON Schema of ``to_json``'s output."""
    text = resources.files("modecfg.profiles").joinpath("schema.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def to_json(reports: Sequence[ProfileReport]) -> dict[str, Any]:
    merged = ProfileReport.merged(reports)
    return {
        "schema_version": SCHEMA_VERSION,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "functions": [r.to_dict() for r in reports],
        "merged": merged.to_dict(),
    }


def to_trace(reports: Sequence[ProfileReport]) -> dict[str, Any]:
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "modecfg profile"}}
    ]
    for tid, report in enumerate(reports, 1):
        events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": report.name}})
        clock = 0.0
        for row in sorted(report.applies, key=lambda r: r.rank):
            duration = row.per_call * 1e6  # microseconds
            events.append(
                {
                    "name": row.op,
                    "cat": "apply",
                    "ph": "X",
                    "ts": round(clock, 3),
                    "dur": round(duration, 3),
                    "pid": 1,
                    "tid": tid,
                    "args": {"calls": row.calls, "share": round(row.share, 6), "source": row.source or ""},
                }
            )
            clock += duration
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def to_html(reports: Sequence[ProfileReport], n_apply: int = 20, n_ops: int = 20) -> str:
    shown = list(reports) + ([ProfileReport.merged(reports)] if len(reports) > 1 else [])
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>modecfg profile</title>'
        f"<style>{CSS}</style></head><body><h1>modecfg profile</h1>{sections(shown, n_apply, n_ops)}"
        "</body></html>\n"
    )
