"""``hashexpr reconcile``: which rows differ between two tables in PostgreSQL, MySQL, MariaDB, DuckDB, Parquet, Delta
or a Spark catalog, each hashed inside its own system, or between many pairs of tables (``--config``;
``docs/RECONCILE.md``)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from hashexpr.cli import session as cli_session
from hashexpr.cli.grammar import parse_columns
from hashexpr.cli.outcome import EXIT_FINDINGS, EXIT_OK, Outcome
from hashexpr.cli.reconcile.sides import FORMS, Side, make_source, parse_side, spark_for
from hashexpr.cli.report import preview
from hashexpr.cli.session import PROG
from hashexpr.errors import SystemFailure

#: Seconds between the progress lines of a running pass, on a terminal.
TICKS = 2.0


def add_reconcile(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "reconcile",
        help="find the rows that differ between two tables in PostgreSQL, MySQL, DuckDB, Parquet, Delta or Spark",
        description=(
            "Compare SOURCE and TARGET by key, each hashed inside its own system (SHA-256 keys and row hashes of "
            "hash format v1): only per-segment counts and sums, and the rows of the segments that differ, leave "
            "a system. Counts inserts (rows only in TARGET), deletes, updates, duplicate and NULL keys; --out "
            f"writes every difference. SOURCE and TARGET: {FORMS}. Read-only on both; see docs/RECONCILE.md. "
            "--config FILE.toml compares many pairs of tables instead, several at a time."
        ),
        epilog=(
            f"Examples: {PROG} reconcile postgresql://app@db:5432/shop?table=public.orders lake/orders --key id\n"
            f"          {PROG} reconcile duckdb:warehouse.duckdb?table=orders spark:lake.sales.orders "
            "--key order_id --exit-code\n"
            f"          {PROG} reconcile --config migration.toml --report migration.html --exit-code"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", metavar="SOURCE", nargs="?", help="the table as it should be")
    parser.add_argument("target", metavar="TARGET", nargs="?", help="the copy to check")
    parser.add_argument(
        "--config",
        metavar="FILE.toml",
        help="compare the pairs of tables a TOML file lists ([[tables]] entries; docs/RECONCILE.md), in place of "
        "SOURCE and TARGET",
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="also write a report for a reviewer: FILE.md (Markdown) or FILE.html, with the counts, the schema "
        "differences and the first --limit differing rows of each table",
    )
    parser.add_argument(
        "--key",
        metavar="A,B,...",
        help="comma-separated key columns (default: the source's primary key, else the target's, where PostgreSQL "
        "or MySQL declares one)",
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument(
        "--columns",
        metavar="A,B,...",
        help="columns to compare, the others left out (default: every column; a column only one side has is a "
        "difference)",
    )
    chosen.add_argument("--exclude", metavar="A,B,...", help="columns to leave out, every other compared")
    parser.add_argument(
        "--limit",
        type=int,
        default=10,
        metavar="N",
        help="show the first N differing rows (default 10; 0: none)",
    )
    parser.add_argument(
        "--values",
        action="store_true",
        help="fetch and show the source and target values of the changed columns (also in --out)",
    )
    parser.add_argument(
        "--out",
        metavar="OUTPUT",
        help="write every differing row: OUTPUT.parquet, OUTPUT.csv, OUTPUT.jsonl, or a directory of Parquet "
        "(with --config: a directory, one TABLE.parquet a pair)",
    )
    parser.add_argument(
        "--mode",
        default="error",
        metavar="MODE",
        help="error: fail when OUTPUT (or the report) exists (default); overwrite: replace it",
    )
    parser.add_argument(
        "--exit-code", action="store_true", help="exit with status 1 when there are differences, 0 when none"
    )
    parser.add_argument(
        "--statement-timeout",
        type=float,
        metavar="SECONDS",
        help="cancel any one pass of a system that takes longer (default: no limit; at most 2,147,483)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of text")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument(
        "--engine",
        choices=("auto", "arrow", "spark"),
        default="auto",
        help="how a Delta directory is read: arrow (auto, the default): delta-rs and the Rust engine, no JVM; "
        "spark: an embedded Spark with Delta Lake (for what delta-rs cannot read: column mapping, deletion vectors)",
    )
    spark = parser.add_argument_group("Spark (for spark: tables, and Delta directories with --engine spark)")
    spark.add_argument("--master", help=f"Spark master URL (default: {cli_session.DEFAULT_MASTER})")
    spark.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_pair,
        help="a Spark setting; may be repeated",
    )
    spark.add_argument("--verbose", action="store_true", help="show Spark's warnings")
    parser.set_defaults(run=_run_reconcile)


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def _run_reconcile(args: argparse.Namespace) -> Outcome:
    if args.config is not None:
        if args.source is not None or args.target is not None:
            raise ValueError("--config names the tables: give it in place of SOURCE and TARGET, not beside them")
        for option in ("key", "columns", "exclude"):
            if getattr(args, option) is not None:
                raise ValueError(f"--{option} is set per table in the --config file (key = [...])")
    elif args.source is None or args.target is None:
        raise ValueError(f"name SOURCE and TARGET ({FORMS}), or give --config FILE.toml")
    if args.statement_timeout is not None:
        from hashexpr.reconcile.columns import CLI_WORDS
        from hashexpr.reconcile.protocol import check_timeout

        check_timeout(args.statement_timeout, CLI_WORDS)
    if args.limit < 0:
        raise ValueError(f"--limit must be 0 or more, not {args.limit}")
    if args.master is not None:
        cli_session.check_master(args.master)
    return _run_config(args) if args.config is not None else _run_one(args)


def _checked_outputs(args: argparse.Namespace, sides: list[Side], directory: bool) -> None:
    """--out and --report, checked before anything runs: they replace no input and nothing unasked."""
    from hashexpr.cli import changes as hchanges
    from hashexpr.cli import outputs as houtputs
    from hashexpr.cli.reconcile import report as hreport

    inputs = [s.local for s in sides if s.local]
    if args.config is not None:
        inputs.append(args.config)
    mode = args.mode
    if args.out:
        if directory:
            mode = houtputs.check_output(args.out, mode, inputs)
        else:
            mode = hchanges.check_out(args.out, mode, inputs)
    if args.report:
        hreport.check(args.report)
        if args.out and os.path.abspath(args.out) == os.path.abspath(args.report):
            raise ValueError(f"--report {args.report} is --out too: name two files")
        parent = os.path.dirname(os.path.abspath(args.report))
        if not os.path.isdir(parent):
            raise ValueError(f"--report {args.report}: the directory {parent} does not exist; create it first")
        houtputs.check_output(args.report, args.mode, inputs)
    args.mode = mode


def _request(args: argparse.Namespace, key: Any, columns: Any, exclude: Any, values: bool) -> Any:
    from hashexpr.reconcile.columns import CLI_WORDS
    from hashexpr.reconcile.protocol import Request

    return Request(key, columns, exclude, values, args.statement_timeout, CLI_WORDS)


def _compared(args: argparse.Namespace, made: list[Any], request: Any, progress: Any, ticks: Any) -> Any:
    from hashexpr.reconcile.protocol import run

    try:
        return run(made[0], made[1], request, progress, ticks)
    except ConnectionError as error:
        # A server that cannot be reached or refuses the login: the URL the user gave.
        raise ValueError(str(error)) from None
    except TimeoutError as error:
        raise SystemFailure(f"{error} (--statement-timeout {args.statement_timeout:g})", "") from None


def _run_one(args: argparse.Namespace) -> Outcome:
    sides = (parse_side(args.source, "SOURCE"), parse_side(args.target, "TARGET"))
    if sides[0] == sides[1]:
        raise ValueError("SOURCE and TARGET are the same table: name two tables")
    key = parse_columns(args.key, "--key") or None if args.key is not None else None
    columns = parse_columns(args.columns, "--columns") or None
    exclude = parse_columns(args.exclude, "--exclude") or None
    from hashexpr.cli import changes as hchanges

    _checked_outputs(args, list(sides), directory=False)
    progress = None if args.quiet else _progress
    # On a terminal a running pass reports what it has done every 2 s; in a log, each step once.
    ticks = TICKS if progress is not None and sys.stderr.isatty() else None
    request = _request(args, key, columns, exclude, args.values)
    with spark_for(args, sides) as spark:
        made = [make_source(side, spark) for side in sides]
        result = _compared(args, made, request, progress, ticks)
        keys = [c.name for c in result.schema if c.role == "key"]
        written = hchanges.write(result.changes(), args.out, args.mode, keys) if args.out else None
    outcome = _outcome(args, sides, result, written)
    if args.report:
        _write_report(args, [{"name": sides[0].table or sides[0].location, **outcome.report}])
        outcome.summary.append(("report", args.report))
    return outcome


def _run_config(args: argparse.Namespace) -> Outcome:
    import threading
    import time

    from hashexpr.cli.reconcile import config as hconfig
    from hashexpr.cli.reconcile import tables as htables

    config = hconfig.load(args.config)
    sides = [s for e in config.entries for s in (e.source, e.target)]
    _checked_outputs(args, sides, directory=True)
    files: dict[str, tuple[str, str]] = {}
    for entry in config.entries:
        if entry.source == entry.target:
            raise ValueError(f"--config {args.config}: {entry.name!r} compares a table with itself")
        # One file a pair in --out, whatever the file system's case.
        file = _file_name(entry.name) + ".parquet"
        other, other_file = files.setdefault(file.casefold(), (entry.name, file))
        if args.out and other != entry.name:
            written = file if file == other_file else f"{other_file} and {file}, one file where case is not told apart,"
            raise ValueError(
                f"--config {args.config}: {other!r} and {entry.name!r} would both write {written} in --out "
                f'{args.out}; give one a name of its own (name = "...")'
            )
    progress = None if args.quiet else _progress
    started = time.perf_counter()
    changed: dict[str, Any] = {}
    lock = threading.Lock()

    with spark_for(args, tuple(sides)) as spark:

        def compare(entry: Any, say: Any, track: Any) -> dict[str, Any]:
            made = [make_source(side, spark) for side in (entry.source, entry.target)]
            track(made)
            request = _request(args, entry.key, entry.columns, entry.exclude, entry.values or args.values)
            result = _compared(args, made, request, say, None)
            if args.out:
                with lock:
                    changed[entry.name] = result.changes()
            return _outcome(args, (entry.source, entry.target), result, None).report

        found = htables.run_all(config, args, spark, compare, progress)
    if args.out:
        _write_directory(args, changed)
    outcome = htables.outcome(found, time.perf_counter() - started)
    if args.report:
        _write_report(args, outcome.report["tables"])
        outcome.summary.append(("report", args.report))
    if args.out:
        outcome.summary.append(("output", f"{args.out} (a TABLE.parquet of the differing rows of each pair)"))
    return outcome


def _write_directory(args: argparse.Namespace, changed: dict[str, Any]) -> None:
    """--out with --config: a directory of one TABLE.parquet a pair that was compared, written whole or not at all."""
    import pyarrow.parquet as pq

    from hashexpr.cli import outputs as houtputs

    def write_into(staging: str) -> None:
        os.makedirs(staging)
        for name, table in changed.items():
            pq.write_table(table, os.path.join(staging, _file_name(name) + ".parquet"), compression="snappy")

    houtputs.write_staged(os.path.abspath(args.out), args.mode, write_into)


def _file_name(name: str) -> str:
    """A table's name as a file name: what a path cannot hold as ``_``."""
    cleaned = "".join(c if c.isalnum() or c in "._-" else "_" for c in name).strip(".")
    return cleaned or "table"


def _write_report(args: argparse.Namespace, tables: list[dict[str, Any]]) -> None:
    import hashexpr as hx
    from hashexpr.cli.reconcile import report as hreport

    hreport.write(args.report, args.mode, tables, hx.__version__)


def _progress(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def _outcome(args: argparse.Namespace, sides: tuple[Side, Side], result: Any, written: str | None) -> Outcome:
    from hashexpr.cli import changes as hchanges
    from hashexpr.reconcile.columns import ONLY_IN_SOURCE
    from hashexpr.reconcile.protocol import plural

    counts = result.counts
    keys = [c.name for c in result.schema if c.role == "key"]
    summary: list[tuple[str, str]] = []
    for c in result.schema_differences:
        side = "source" if c.role == ONLY_IN_SOURCE else "target"
        shown = c.source_type if side == "source" else c.target_type
        why = f"; {c.reason}" if c.reason else ""
        summary.append(("schema", f"column {c.name!r} ({shown}) is only in the {side}{why}"))
    summary += [("source", result.source), ("target", result.target), ("key", ", ".join(keys))]
    compared = result.compared
    if compared:
        summary.append(("compared", f"{plural(len(compared), 'column')}: {preview(compared)}"))
    else:
        summary.append(("compared", "no column besides the key: which keys exist, not their rows' values"))
    # The columns one side alone has are counted in --json; the text says them first, above.
    summary += [(name, f"{n:,}") for name, n in counts.items() if n or not name.startswith("columns_only_in_")]
    left_out = [c for c in result.schema if c.role == "left out"]
    if left_out:
        summary.append(("left out", preview([c.name for c in left_out])))
    stats = result.stats
    summary.append(
        (
            "passes",
            "; ".join(
                f"{side} {plural(stats[side]['scans'], 'scan')}, {plural(stats[side]['queries'], 'query')}"
                for side in ("source", "target")
            ),
        )
    )
    changes = result.changes()
    shown_rows = min(args.limit, changes.num_rows)
    lines = []
    if shown_rows:
        more = f"; --out writes all {changes.num_rows:,}" if shown_rows < changes.num_rows else ""
        lines.append(f"differing rows: the first {shown_rows:,} of {changes.num_rows:,}{more}")
        lines += ["  " + line for line in hchanges.lines(changes, keys, shown_rows)]
    report: dict[str, Any] = {
        "source": sides[0].label(),
        "target": sides[1].label(),
        "key": keys,
        "counts": counts,
        "differences": result.differences,
        "schema_differences": [
            {"column": c.name, "only_in": "source" if c.role == ONLY_IN_SOURCE else "target",
             "type": c.source_type if c.role == ONLY_IN_SOURCE else c.target_type}
            for c in result.schema_differences
        ],
        "compared": compared,
        "schema": [c.as_dict() for c in result.schema],
        "sample": hchanges.sample(changes, keys, args.limit),
        "stats": stats,
    }  # fmt: skip
    if written is not None:
        summary.append(("output", f"{args.out} ({written}, {plural(changes.num_rows, 'row')})"))
        report["output"] = {"path": args.out, "format": written, "rows": changes.num_rows}
    status = EXIT_FINDINGS if args.exit_code and result.differences else EXIT_OK
    return Outcome(status=status, summary=summary, report=report, after=lines)
