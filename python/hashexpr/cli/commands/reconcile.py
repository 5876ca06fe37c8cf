"""``hashexpr reconcile``: which rows differ between two tables in PostgreSQL, DuckDB, Parquet, Delta or a Spark
catalog, each hashed inside its own system (``docs/RECONCILE.md``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import session as cli_session
from hashexpr.cli.grammar import parse_columns
from hashexpr.cli.outcome import EXIT_FINDINGS, EXIT_OK, Outcome
from hashexpr.cli.report import preview
from hashexpr.cli.session import PROG
from hashexpr.errors import SystemFailure

#: Seconds between the progress lines of a running pass, on a terminal.
TICKS = 2.0

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from hashexpr.reconcile import Source

_FORMS = (
    "postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE, duckdb:PATH?table=TABLE, a Parquet file or directory, a "
    "Delta table's directory, or spark:CATALOG.DB.TABLE"
)


def add_reconcile(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "reconcile",
        help="find the rows that differ between two tables in PostgreSQL, DuckDB, Parquet, Delta or Spark",
        description=(
            "Compare SOURCE and TARGET by key, each hashed inside its own system (SHA-256 keys and row hashes of "
            "hash format v1): only per-segment counts and sums, and the rows of the segments that differ, leave "
            "a system. Counts inserts (rows only in TARGET), deletes, updates, duplicate and NULL keys; --out "
            f"writes every difference. SOURCE and TARGET: {_FORMS}. Read-only on both; see docs/RECONCILE.md."
        ),
        epilog=(
            f"Examples: {PROG} reconcile postgresql://app@db:5432/shop?table=public.orders lake/orders --key id\n"
            f"          {PROG} reconcile duckdb:warehouse.duckdb?table=orders spark:lake.sales.orders "
            "--key order_id --exit-code"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", metavar="SOURCE", help="the table as it should be")
    parser.add_argument("target", metavar="TARGET", help="the copy to check")
    parser.add_argument("--key", required=True, metavar="A,B,...", help="comma-separated key columns")
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
        help="write every differing row: OUTPUT.parquet, OUTPUT.csv, OUTPUT.jsonl, or a directory of Parquet",
    )
    parser.add_argument(
        "--mode",
        default="error",
        metavar="MODE",
        help="error: fail when OUTPUT exists (default); overwrite: replace it",
    )
    parser.add_argument(
        "--exit-code", action="store_true", help="exit with status 1 when there are differences, 0 when none"
    )
    parser.add_argument(
        "--statement-timeout",
        type=float,
        metavar="SECONDS",
        help="cancel any one pass of a system that takes longer (default: no limit)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of text")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    spark = parser.add_argument_group("Spark (for spark: tables and Delta directories)")
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


@dataclass(frozen=True)
class Side:
    """SOURCE or TARGET as given: its kind, and what the kind needs."""

    kind: str  # postgres, duckdb, parquet, delta, spark
    location: str  # a connection string, a path, or a table name
    table: str | None = None
    local: str | None = None  # a local path the side reads, which --out may not replace

    def label(self) -> str:
        if self.kind == "postgres":
            from hashexpr.reconcile.urls import masked

            return masked(self.location) + f" table {self.table}"
        if self.kind == "duckdb":
            return f"duckdb:{self.location} table {self.table}"
        if self.kind == "spark":
            return f"spark:{self.location}"
        return f"{self.location} ({self.kind})"


def parse_side(text: str, which: str) -> Side:
    """Read SOURCE or TARGET (see ``_FORMS``), checking what needs no system.

    Examples
    --------
    >>> parse_side("postgresql://app:s3cret@db:5432/shop?table=public.orders&sslmode=require", "SOURCE").label()
    'postgresql://app:***@db:5432/shop?sslmode=require table public.orders'
    >>> parse_side("postgresql://app:p@ss/w#rd@db/shop?table=t", "SOURCE").label()
    'postgresql://app:***@db/shop table t'
    >>> parse_side("spark:lake.sales.orders", "TARGET").kind
    'spark'
    >>> parse_side("postgresql://db/shop", "SOURCE")
    Traceback (most recent call last):
        ...
    ValueError: SOURCE postgresql://db/shop names no table: add ?table=SCHEMA.TABLE
    """
    if text.startswith(("postgresql://", "postgres://")):
        from hashexpr.reconcile.urls import AmbiguousURL, masked, normalized

        # A password written with the characters a URL reserves is read as written (urls.normalized).
        try:
            parts = urlsplit(normalized(text))
        except AmbiguousURL as error:
            raise ValueError(f"{which} {error}") from None
        query = parse_qsl(parts.query, keep_blank_values=True)
        tables = [v for k, v in query if k == "table"]
        shown = masked(text)
        if len(tables) != 1 or not tables[0]:
            raise ValueError(f"{which} {shown} names no table: add ?table=SCHEMA.TABLE")
        # The other options go to libpq as they were written (a re-encoding would turn a space into '+').
        rest = "&".join(p for p in parts.query.split("&") if p and unquote(p.partition("=")[0]) != "table")
        return Side("postgres", urlunsplit(parts._replace(query=rest)), tables[0])
    if text.startswith("duckdb:"):
        path, sep, query = text[len("duckdb:") :].rpartition("?")
        if not sep:
            raise ValueError(f"{which} {text} names no table: write duckdb:PATH?table=TABLE")
        tables = [v for k, v in parse_qsl(query, keep_blank_values=True) if k == "table"]
        if len(tables) != 1 or not tables[0] or not path:
            raise ValueError(f"{which} {text}: write duckdb:PATH?table=TABLE")
        if not os.path.exists(path):
            raise FileNotFoundError(f"{which}: no such DuckDB database file: {path}")
        return Side("duckdb", path, tables[0], local=path)
    if text.startswith("spark:"):
        name = text[len("spark:") :]
        if not name:
            raise ValueError(f"{which} spark: names no table: write spark:CATALOG.DB.TABLE")
        return Side("spark", name)
    local = hformats.local_path(text)
    if local is None:
        raise ValueError(f"{which} {text} is none of: {_FORMS}")
    if not os.path.exists(local):
        raise FileNotFoundError(f"{which} not found: {text} (give {_FORMS})")
    if hinputs.table_format_of(text) == "delta":
        return Side("delta", text, local=local)
    if os.path.isdir(local) or hformats.format_of_name(local) == "parquet":
        return Side("parquet", text, local=local)
    raise ValueError(
        f"{which} {text} is neither a Parquet file nor a directory of Parquet or Delta files ({_FORMS})"
    )


def _run_reconcile(args: argparse.Namespace) -> Outcome:
    sides = (parse_side(args.source, "SOURCE"), parse_side(args.target, "TARGET"))
    if sides[0] == sides[1]:
        raise ValueError("SOURCE and TARGET are the same table: name two tables")
    key = parse_columns(args.key, "--key")
    columns = parse_columns(args.columns, "--columns") or None
    exclude = parse_columns(args.exclude, "--exclude") or None
    if args.statement_timeout is not None and not args.statement_timeout > 0:
        raise ValueError(
            f"--statement-timeout must be a positive number of seconds, not {args.statement_timeout}"
        )
    if args.limit < 0:
        raise ValueError(f"--limit must be 0 or more, not {args.limit}")
    from hashexpr.cli import changes as hchanges

    if args.out:
        args.mode = hchanges.check_out(args.out, args.mode, [s.local for s in sides if s.local])
    if args.master is not None:
        cli_session.check_master(args.master)
    progress = None if args.quiet else _progress
    # On a terminal a running pass reports what it has done every 2 s; in a log, each step once.
    ticks = TICKS if progress is not None and sys.stderr.isatty() else None
    from hashexpr.reconcile.columns import CLI_WORDS
    from hashexpr.reconcile.protocol import Request, run

    request = Request(key, columns, exclude, args.values, args.statement_timeout, CLI_WORDS)
    with _spark_for(args, sides) as spark:
        made = [_source(side, spark) for side in sides]
        try:
            result = run(made[0], made[1], request, progress, ticks)
        except ConnectionError as error:
            # A server that cannot be reached or refuses the login: the URL the user gave.
            raise ValueError(str(error)) from None
        except TimeoutError as error:
            raise SystemFailure(f"{error} (--statement-timeout {args.statement_timeout:g})", "") from None
        keys = [c.name for c in result.schema if c.role == "key"]
        written = hchanges.write(result.changes(), args.out, args.mode, keys) if args.out else None
    return _outcome(args, sides, result, written)


@contextlib.contextmanager
def _spark_for(args: argparse.Namespace, sides: tuple[Side, Side]) -> Iterator[SparkSession | None]:
    """The embedded Spark, when a side is a Spark table or a Delta directory; none otherwise."""
    kinds = {s.kind for s in sides}
    if not kinds & {"spark", "delta"}:
        if args.master is not None or args.conf:
            raise ValueError(
                "--master and --conf are for spark: tables and Delta directories, which neither side is"
            )
        yield None
        return
    formats = ["delta"] if "delta" in kinds else []
    for side in sides:
        if side.kind == "delta":
            hinputs.require_library("delta", side.location, hinputs.available_table_formats(dict(args.conf)))
    if args.session is not None:
        with cli_session.given_session(args.session, args.master, args.conf, formats, args.verbose) as spark:
            yield spark
        return
    with cli_session.spark_session(
        args.master or cli_session.DEFAULT_MASTER, args.conf, formats, args.verbose
    ) as spark:
        yield spark


def _source(side: Side, spark: SparkSession | None) -> Source:
    from hashexpr import reconcile as rc

    if side.kind == "postgres":
        return rc.postgres(side.location, side.table)
    if side.kind == "duckdb":
        return rc.duckdb(side.location, side.table)
    if side.kind == "parquet":
        return rc.parquet(side.location)
    assert spark is not None
    if side.kind == "spark":
        return rc.spark(side.location, spark=spark)
    # A Delta directory, read at the version it has now: every pass sees the same rows.
    path = hformats.spark_path(side.location)
    quoted = path.replace("`", "``")
    version = int(spark.sql(f"DESCRIBE HISTORY delta.`{quoted}` LIMIT 1").first()["version"])
    return rc.spark(spark.read.format("delta").option("versionAsOf", version).load(path))


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
