"""Many pairs of tables in one run (``--config``): compared ``jobs`` at a time, each pair's two sides at once, one
summary line per pair, and an exit status over all of them.

A pair that fails (a table that does not exist, a server that cannot be reached, a value no Spark type holds)
is reported with its error and does not stop the others; the exit status is then the worst: 3 for a system
that failed, 2 for what the configuration or the data must fix, else 1 (with ``--exit-code``) where a pair
differs.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from hashexpr.cli.outcome import EXIT_FINDINGS, EXIT_OK, EXIT_SYSTEM, EXIT_USAGE, Outcome
from hashexpr.cli.reconcile.config import Config, Entry
from hashexpr.errors import ExtraMissingError, PySparkMissingError, SystemFailure

#: The counts a summary line shows, in its order.
SHOWN = ("inserted", "deleted", "updated", "duplicate_key", "null_key")


@dataclass
class Done:
    """One pair's end: its report (as ``--json`` gives one table's), or its error and the exit status it means."""

    entry: Entry
    seconds: float
    report: dict[str, Any] | None = None
    error: str | None = None
    status: int = EXIT_OK


def run_all(
    config: Config,
    args: argparse.Namespace,
    spark: Any,
    compare: Callable[[Entry, Callable[[str], None] | None], dict[str, Any]],
    say: Callable[[str], None] | None,
) -> list[Done]:
    """Every pair of ``config``, ``config.jobs`` at a time; ``compare`` runs one and returns its report."""
    lock = threading.Lock()

    def one(entry: Entry) -> Done:
        started = time.perf_counter()
        told = None
        if say is not None:

            def told(message: str, name: str = entry.name) -> None:
                with lock:
                    say(f"{name}: {message}")

        try:
            report = compare(entry, told)
        except (ValueError, FileNotFoundError, ConnectionError, ExtraMissingError, PySparkMissingError) as error:
            return Done(entry, time.perf_counter() - started, error=_line(error), status=EXIT_USAGE)
        except (SystemFailure, TimeoutError) as error:
            return Done(entry, time.perf_counter() - started, error=_line(error), status=EXIT_SYSTEM)
        done = Done(entry, time.perf_counter() - started, report=report)
        if args.exit_code and report["differences"]:
            done.status = EXIT_FINDINGS
        return done

    with ThreadPoolExecutor(max_workers=config.jobs, thread_name_prefix="hashexpr-tables") as pool:
        return list(pool.map(one, config.entries))


def outcome(found: list[Done], seconds: float) -> Outcome:
    """The summary of a run of many pairs: a line each, then the totals."""
    width = max(len(d.entry.name) for d in found)
    header = f"{'table':<{width}}  {'status':<11}" + "".join(f"{c.replace('_key', ''):>10}" for c in SHOWN)
    header += f"{'unchanged':>12}{'seconds':>9}"
    lines = [header]
    totals = dict.fromkeys((*SHOWN, "unchanged"), 0)
    for d in found:
        if d.report is None:
            lines.append(f"{d.entry.name:<{width}}  {'error':<11}  {d.error}")
            continue
        counts = d.report["counts"]
        for name in totals:
            totals[name] += counts[name]
        state = "differs" if d.report["differences"] else "equal"
        if d.report["schema_differences"]:
            state = "schema" if not d.report["differences"] else state
        row = f"{d.entry.name:<{width}}  {state:<11}" + "".join(f"{counts[c]:>10,}" for c in SHOWN)
        lines.append(row + f"{counts['unchanged']:>12,}{d.seconds:>9.1f}")
    failed = [d for d in found if d.report is None]
    differing = [d for d in found if d.report is not None and (d.report["differences"] or d.report["schema_differences"])]
    status = max((d.status for d in found), default=EXIT_OK)
    equal = len(found) - len(failed) - len(differing)
    summary = [("tables", f"{len(found)}: {equal} equal, {len(differing)} differ, {len(failed)} failed")]
    summary += [(name, f"{n:,}") for name, n in totals.items()]
    report = {
        "tables": [
            {"name": d.entry.name, "seconds": round(d.seconds, 3), **(d.report or {"error": d.error})} for d in found
        ],
        "totals": totals | {"tables": len(found), "differ": len(differing), "failed": len(failed)},
        "seconds": round(seconds, 3),
    }
    return Outcome(status=status, lines=lines, summary=summary, report=report)


def _line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
