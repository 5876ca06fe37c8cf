"""Many pairs of tables in one run (``--config``): compared ``jobs`` at a time, each pair's two sides at once, one
summary line per pair, and an exit status over all of them.

A pair that fails (a table that does not exist, a server that cannot be reached, a value no Spark type holds,
anything unforeseen) is reported with its error and does not stop the others; the exit status is then the worst:
3 for a system that failed (or an unforeseen error), 2 for what the configuration or the data must fix, else 1
(with ``--exit-code``) where a pair differs. An interrupt cancels every pair's running queries.
"""

from __future__ import annotations

import argparse
import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from hashexpr.cli.outcome import EXIT_FINDINGS, EXIT_OK, EXIT_SYSTEM, EXIT_USAGE, Outcome
from hashexpr.cli.reconcile.config import Config, Entry
from hashexpr.errors import ExtraMissingError, PySparkMissingError, SystemFailure
from hashexpr.reconcile.protocol import CANCEL_EVERY

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


class Running:
    """The sources of the pairs being compared, which an interrupt cancels (each pair's passes run in a thread
    of their own, which no KeyboardInterrupt reaches)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: list[Any] = []
        self._stopped = False

    def track(self, sources: list[Any]) -> None:
        """Sources a pair is about to compare; none starts once the run is stopping."""
        with self._lock:
            if self._stopped:
                raise Stopped("the run was interrupted")
            self._sources.extend(sources)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True

    def cancel(self) -> None:
        with self._lock:
            sources = list(self._sources)
        for source in sources:
            cancel = getattr(source, "cancel", None)
            with contextlib.suppress(Exception):
                if cancel is not None:
                    cancel()


class Stopped(Exception):
    """A pair not started because the run was interrupted."""


def run_all(
    config: Config,
    args: argparse.Namespace,
    spark: Any,
    compare: Callable[[Entry, Callable[[str], None] | None, Callable[[list[Any]], None]], dict[str, Any]],
    say: Callable[[str], None] | None,
) -> list[Done]:
    """Every pair of ``config``, ``config.jobs`` at a time; ``compare`` runs one (its sources given to the third
    argument before they run) and returns its report. An interrupt cancels the running queries of every system
    before it goes on."""
    lock = threading.Lock()
    running = Running()

    def one(entry: Entry) -> Done:
        started = time.perf_counter()
        told = None
        if say is not None:

            def told(message: str, name: str = entry.name) -> None:
                with lock:
                    say(f"{name}: {message}")

        try:
            report = compare(entry, told, running.track)
        except (ValueError, FileNotFoundError, ConnectionError, ExtraMissingError, PySparkMissingError) as error:
            return Done(entry, time.perf_counter() - started, error=_line(error), status=EXIT_USAGE)
        except (SystemFailure, TimeoutError, Stopped) as error:
            return Done(entry, time.perf_counter() - started, error=_line(error), status=EXIT_SYSTEM)
        except Exception as error:  # noqa: BLE001 - one pair's failure, whatever it is, leaves the others to run
            failure = f"{type(error).__name__}: {_line(error)}"
            return Done(entry, time.perf_counter() - started, error=failure, status=EXIT_SYSTEM)
        done = Done(entry, time.perf_counter() - started, report=report)
        if args.exit_code and report["differences"]:
            done.status = EXIT_FINDINGS
        return done

    pool = ThreadPoolExecutor(max_workers=config.jobs, thread_name_prefix="hashexpr-tables")
    futures = [pool.submit(one, entry) for entry in config.entries]
    try:
        return [future.result() for future in futures]
    except BaseException:
        running.stop()
        for future in futures:
            future.cancel()
        # A cancel that reaches a source before its query starts is lost: repeated until every pair has ended.
        while not all(future.done() for future in futures):
            running.cancel()
            wait(futures, timeout=CANCEL_EVERY)
        raise
    finally:
        pool.shutdown(wait=True)


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
