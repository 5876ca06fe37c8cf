"""SOURCE and TARGET of ``hashexpr reconcile`` as written (URLs, paths, ``duckdb:``, ``spark:``), the sources they
make, and the embedded Spark the sides that need one share."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import session as cli_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from hashexpr.reconcile import Source

FORMS = (
    "postgresql://USER@HOST:PORT/DB?table=SCHEMA.TABLE, mysql://USER@HOST:PORT/DB?table=TABLE (or mariadb://), "
    "duckdb:PATH?table=TABLE, a Parquet file or directory, a Delta table's directory, or spark:CATALOG.DB.TABLE"
)


@dataclass(frozen=True)
class Side:
    """SOURCE or TARGET as given: its kind, and what the kind needs."""

    kind: str  # postgres, mysql, duckdb, parquet, delta, spark
    location: str  # a connection string, a path, or a table name
    table: str | None = None
    local: str | None = None  # a local path the side reads, which --out may not replace

    def label(self) -> str:
        if self.kind in ("postgres", "mysql"):
            from hashexpr.reconcile.urls import masked

            return masked(self.location) + f" table {self.table}"
        if self.kind == "duckdb":
            return f"duckdb:{self.location} table {self.table}"
        if self.kind == "spark":
            return f"spark:{self.location}"
        return f"{self.location} ({self.kind})"


def parse_side(text: str, which: str) -> Side:
    """Read SOURCE or TARGET (see ``FORMS``), checking what needs no system.

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
    if text.startswith(("mysql://", "mariadb://")):
        from hashexpr.reconcile.mysql_connection import settings
        from hashexpr.reconcile.urls import AmbiguousURL, masked, normalized

        try:
            parts = urlsplit(normalized(text))
        except AmbiguousURL as error:
            raise ValueError(f"{which} {error}") from None
        tables = [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k == "table"]
        if len(tables) != 1 or not tables[0]:
            raise ValueError(f"{which} {masked(text)} names no table: add ?table=TABLE (or DB.TABLE)")
        rest = "&".join(p for p in parts.query.split("&") if p and unquote(p.partition("=")[0]) != "table")
        url = urlunsplit(parts._replace(query=rest))
        settings(url, which)  # the options checked before anything connects
        return Side("mysql", url, tables[0])
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
        raise ValueError(f"{which} {text} is none of: {FORMS}")
    if not os.path.exists(local):
        raise FileNotFoundError(f"{which} not found: {text} (give {FORMS})")
    if hinputs.table_format_of(text) == "delta":
        return Side("delta", text, local=local)
    if os.path.isdir(local) or hformats.format_of_name(local) == "parquet":
        return Side("parquet", text, local=local)
    raise ValueError(
        f"{which} {text} is neither a Parquet file nor a directory of Parquet or Delta files ({FORMS})"
    )


@contextlib.contextmanager
def spark_for(args: argparse.Namespace, sides: tuple[Side, Side]) -> Iterator[SparkSession | None]:
    """The embedded Spark, when a side is a Spark table, or a Delta directory under --engine spark; none
    otherwise."""
    from hashexpr.reconcile import spark_tables  # the reconcile package loads numpy: not at the CLI's start

    kinds = {s.kind for s in sides}
    delta_files = [
        s.location for s in sides if s.kind == "spark" and spark_tables.file_format(s.location) == "delta"
    ]
    spark_delta = ("delta" in kinds and args.engine == "spark") or bool(delta_files)
    if "spark" not in kinds and not spark_delta:
        if args.master is not None or args.conf:
            raise ValueError(
                "--master and --conf are for spark: tables and Delta directories read with --engine spark, which "
                "neither side is"
            )
        yield None
        return
    formats = ["delta"] if spark_delta else []
    for location in [s.location for s in sides if s.kind == "delta" and spark_delta] + delta_files:
        hinputs.require_library("delta", location, hinputs.available_table_formats(dict(args.conf)))
    if args.session is not None:
        with cli_session.given_session(args.session, args.master, args.conf, formats, args.verbose) as spark:
            yield spark
        return
    with cli_session.spark_session(
        args.master or cli_session.DEFAULT_MASTER, args.conf, formats, args.verbose
    ) as spark:
        yield spark


def make_source(side: Side, spark: SparkSession | None) -> Source:
    from hashexpr import reconcile as rc

    if side.kind == "postgres":
        return rc.postgres(side.location, side.table)
    if side.kind == "mysql":
        return rc.mysql(side.location, side.table)
    if side.kind == "duckdb":
        return rc.duckdb(side.location, side.table)
    if side.kind == "parquet":
        return rc.parquet(side.location)
    if side.kind == "delta" and spark is None:
        return rc.delta(side.local or side.location)
    assert spark is not None
    if side.kind == "spark":
        return rc.spark(side.location, spark=spark)
    # A Delta directory, read at the version it has now: every pass sees the same rows.
    path = hformats.spark_path(side.location)
    quoted = path.replace("`", "``")
    version = int(spark.sql(f"DESCRIBE HISTORY delta.`{quoted}` LIMIT 1").first()["version"])
    return rc.spark(spark.read.format("delta").option("versionAsOf", version).load(path))
