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
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli import session as cli_session
from hashexpr.cli.grammar import parse_columns
from hashexpr.cli.outcome import EXIT_FINDINGS, EXIT_OK, Outcome
from hashexpr.cli.session import PROG

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
    parser.add_argument(
        "--columns",
        metavar="A,B,...",
        help="columns to compare (default: every non-key column of SOURCE that TARGET has)",
    )
    parser.add_argument("--out", metavar="OUTPUT", help="write every difference here (a Parquet directory)")
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
            return _without_password(self.location) + f" table {self.table}"
        if self.kind == "duckdb":
            return f"duckdb:{self.location} table {self.table}"
        if self.kind == "spark":
            return f"spark:{self.location}"
        return f"{self.location} ({self.kind})"


def parse_side(text: str, which: str) -> Side:
    """Read SOURCE or TARGET (see ``_FORMS``), checking what needs no system.

    Examples
    --------
    >>> parse_side("postgresql://app:s3cret@db:5432/shop?table=public.orders&sslmode=require", "SOURCE")
    Side(kind='postgres', location='postgresql://app:s3cret@db:5432/shop?sslmode=require', table='public.orders', local=None)
    >>> parse_side("spark:lake.sales.orders", "TARGET").kind
    'spark'
    >>> parse_side("postgresql://db/shop", "SOURCE")
    Traceback (most recent call last):
        ...
    ValueError: SOURCE postgresql://db/shop names no table: add ?table=SCHEMA.TABLE
    """
    if text.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(text)
        query = parse_qsl(parts.query, keep_blank_values=True)
        tables = [v for k, v in query if k == "table"]
        shown = _without_password(text)
        if len(tables) != 1 or not tables[0]:
            raise ValueError(f"{which} {shown} names no table: add ?table=SCHEMA.TABLE")
        rest = urlencode([(k, v) for k, v in query if k != "table"])
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


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _run_reconcile(args: argparse.Namespace) -> Outcome:
    sides = (parse_side(args.source, "SOURCE"), parse_side(args.target, "TARGET"))
    if sides[0] == sides[1]:
        raise ValueError("SOURCE and TARGET are the same table: name two tables")
    key = parse_columns(args.key, "--key")
    columns = parse_columns(args.columns, "--columns") or None
    if args.statement_timeout is not None and not args.statement_timeout > 0:
        raise ValueError(
            f"--statement-timeout must be a positive number of seconds, not {args.statement_timeout}"
        )
    if args.out:
        try:
            parquet = hformats.output_format(args.out) == "parquet"
        except ValueError:
            parquet = False
        if not parquet:
            raise ValueError(
                f"--out writes Parquet: name OUTPUT without another format's extension ({args.out})"
            )
        args.mode = houtputs.check_output(args.out, args.mode, [s.local for s in sides if s.local])
    if args.master is not None:
        cli_session.check_master(args.master)
    progress = None if args.quiet else _progress
    from hashexpr import reconcile as rc

    with _spark_for(args, sides) as spark:
        made = [_source(rc, side, spark) for side in sides]
        try:
            result = rc.compare(
                made[0], made[1], key, columns, statement_timeout=args.statement_timeout, progress=progress
            )
        except (ConnectionError, TimeoutError) as error:
            # A server that cannot be reached, or a pass over the limit it was given: what the user named.
            raise ValueError(str(error)) from None
        if args.out:
            _write(result.changes(), args.out, args.mode)
    return _outcome(args, sides, result)


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


def _source(rc: Any, side: Side, spark: SparkSession | None) -> Source:
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


def _write(changes: Any, out: str, mode: str) -> None:
    import pyarrow.parquet as pq

    def write_into(staging: str) -> None:
        os.makedirs(staging)
        pq.write_table(changes, os.path.join(staging, "part-00000.snappy.parquet"), compression="snappy")
        open(os.path.join(staging, "_SUCCESS"), "wb").close()

    houtputs.write_staged(os.path.abspath(hformats.local_path(out)), mode, write_into)


def _outcome(args: argparse.Namespace, sides: tuple[Side, Side], result: Any) -> Outcome:
    counts = result.counts
    found = result.differences
    keys = [c.name for c in result.schema if c.role == "key"]
    summary = [("source", result.source), ("target", result.target), ("key", ", ".join(keys))]
    summary += [(name, f"{n:,}") for name, n in counts.items()]
    left_out = [c for c in result.schema if c.role == "left out"]
    if left_out:
        summary.append(("left out", ", ".join(f"{c.name} ({c.reason})" for c in left_out)))
    stats = result.stats
    summary.append(
        (
            "passes",
            (
                f"source {stats['source']['scans']} scan(s), {stats['source']['queries']} queries; "
                f"target {stats['target']['scans']} scan(s), {stats['target']['queries']} queries"
            ),
        )
    )
    report: dict[str, Any] = {
        "source": sides[0].label(),
        "target": sides[1].label(),
        "key": keys,
        "counts": counts,
        "differences": found,
        "schema": [c.as_dict() for c in result.schema],
        "stats": stats,
    }
    if args.out:
        summary.append(("output", f"{args.out} (parquet)"))
        report["output"] = {"path": args.out, "format": "parquet"}
    status = EXIT_FINDINGS if args.exit_code and found else EXIT_OK
    return Outcome(status=status, summary=summary, report=report)
