"""How the ``hashexpr`` command line shows what it found: values as text and as JSON, summaries, errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from hashexpr.cli.outcome import Outcome
from hashexpr.cli.session import PROG

#: The engines a command runs on: ``hashexpr.arrow`` (no JVM) or Spark.
ARROW, SPARK = "arrow", "spark"


def text(value: object) -> str:
    """A value as one field of a tab-separated line: NULL, hex for bytes, tabs and newlines escaped."""
    if value is None:
        return "NULL"
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex().upper()
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def json_value(value: object) -> object:
    """A value as JSON shows it: bytes as upper-case hex, dates and times as ISO text, numbers as numbers."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex().upper()
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if hasattr(value, "asDict"):
        return {k: json_value(v) for k, v in value.asDict().items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def print_json(report: dict[str, Any]) -> None:
    print(json.dumps(report, default=str))


def print_summary(items: Sequence[tuple[str, str]], stream: Any) -> None:
    """Print ``label  value`` lines, labels padded to one width."""
    width = max(len(label) for label, _ in items)
    for label, value in items:
        print(f"{label:<{width}}  {value}", file=stream)


def preview(names: Sequence[str], limit: int = 10) -> str:
    """``a, b, c``, or the first ``limit`` names and how many more."""
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])}, ... ({len(names) - limit} more)"


def count(n: int, noun: str) -> str:
    """``1 duplicate``, ``2 duplicates``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def ran_on(outcome: Outcome, engine: str) -> Outcome:
    """``outcome`` with the engine that computed it, in the summary (its last line before the time) and in
    ``--json``."""
    outcome.summary.append(("engine", engine))
    outcome.report["engine"] = engine
    return outcome


def error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)
