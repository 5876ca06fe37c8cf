"""Which rows differ between two tables in PostgreSQL, DuckDB, Parquet, Arrow or Spark, without moving the tables.

>>> import decimal, duckdb, pyarrow as pa
>>> from hashexpr import reconcile as rc
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE orders (id INTEGER, amount DECIMAL(18,2))")
>>> _ = con.execute("INSERT INTO orders VALUES (1, 1.50), (2, 2.00), (3, 3.00)")
>>> amounts = pa.array([decimal.Decimal(v) for v in ("1.5000", "2.5000", "4.0000")], pa.decimal128(12, 4))
>>> lake = pa.table({"id": pa.array([1, 2, 4], pa.int64()), "amount": amounts})
>>> res = rc.compare(rc.duckdb(con, "orders"), rc.arrow(lake), key="id", values=True)
>>> res.counts                                                    # doctest: +NORMALIZE_WHITESPACE
{'inserted': 1, 'deleted': 1, 'updated': 1, 'unchanged': 1, 'duplicate_key': 0, 'null_key': 0,
 'columns_only_in_source': 0, 'columns_only_in_target': 0}
>>> update = res.changes().to_pylist()[2]
>>> update["id"], update["change"], update["changed_columns"]
(2, 'update', ['amount'])
>>> update["source"], update["target"]
({'amount': Decimal('2.00')}, {'amount': Decimal('2.5000')})

Each system computes the SHA-256 key hash and row hash of format v1 (docs/FORMAT.md) of its own rows: PostgreSQL
with hashexpr.sql's SQL, DuckDB, Parquet and Arrow data with the Rust engine, Spark with the jar (or hashexpr.sql's
``spark`` dialect without it). Only aggregates of segments of the key hash, and the rows of the segments that
differ, leave a system. docs/RECONCILE.md describes the protocol, its cost and its guarantees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hashexpr.errors import require

require("numpy", "hashexpr.reconcile", "reconcile")

from hashexpr.reconcile.arrow import ArrowDataSource, ParquetSource
from hashexpr.reconcile.delta import DeltaSource
from hashexpr.reconcile.duckdb import DuckDBSource
from hashexpr.reconcile.mysql import MySQLSource
from hashexpr.reconcile.postgres import PostgresSource
from hashexpr.reconcile.protocol import Request, run
from hashexpr.reconcile.result import Result
from hashexpr.reconcile.sources import Source
from hashexpr.reconcile.spark import SparkSource

__all__ = ["Result", "Source", "arrow", "compare", "delta", "duckdb", "mysql", "parquet", "postgres", "spark"]


def postgres(connection: Any, table: str) -> PostgresSource:
    """A PostgreSQL table, view or materialized view.

    Parameters
    ----------
    connection : str or :class:`psycopg.Connection`
        A connection string (``postgresql://user@host:5432/db`` or ``host=... dbname=...``; a password from the
        string, ``PGPASSWORD`` or ``~/.pgpass``, as libpq finds it), or an open psycopg 3 connection that is not
        inside a transaction (it is left open, with its settings as they were).
    table : str
        ``[schema.]table``; a part with capitals, spaces or dots in double quotes (``'"Sales"."Order Lines"'``).

    Returns
    -------
    :class:`~hashexpr.reconcile.postgres.PostgresSource`
        Read in one ``REPEATABLE READ, READ ONLY`` transaction (a replica works); nothing is written.
    """
    return PostgresSource(connection, table)


def mysql(connection: Any, table: str) -> MySQLSource:
    """A MySQL (8.0.17 and later) or MariaDB (10.5 and later) table or view.

    Parameters
    ----------
    connection : str or :class:`pymysql.connections.Connection`
        A URL, ``mysql://USER:PASSWORD@HOST:PORT/DB`` (or ``mariadb://``; the password from the URL, else from
        ``MYSQL_PWD``; options ``ssl-mode``, ``ssl-ca``, ``ssl-cert``, ``ssl-key``, ``socket``), or an open
        PyMySQL connection that is not inside a transaction (left open, its session settings as they were).
    table : str
        ``[database.]table``; a part with spaces or other characters in backquotes (```Order Lines```).

    Returns
    -------
    :class:`~hashexpr.reconcile.mysql.MySQLSource`
        Read in one ``REPEATABLE READ`` transaction ``WITH CONSISTENT SNAPSHOT, READ ONLY``; nothing is written.
        Needs the ``mysql`` extra (PyMySQL).
    """
    return MySQLSource(connection, table)


def duckdb(database: Any, table: str) -> DuckDBSource:
    """A DuckDB table or view.

    Parameters
    ----------
    database : str, path or :class:`duckdb.DuckDBPyConnection`
        A database file (opened read-only) or an open connection (read through a cursor of its own).
    table : str
        ``[schema.]table``, double-quoted parts as in SQL.

    Returns
    -------
    :class:`~hashexpr.reconcile.duckdb.DuckDBSource`
        Read in one transaction; its rows are hashed by the Rust engine as DuckDB hands them over.
    """
    return DuckDBSource(database, table)


def parquet(path: Any) -> ParquetSource:
    """Parquet data: a file, a directory (Hive-partitioned or not), or a ``pyarrow.dataset`` of files, read as
    ``spark.read.parquet`` reads it (INT96 timestamps, Spark's schema in the footer, partition columns; what the
    engine cannot read as Spark does is refused, see docs/ARROW.md).

    The files are read a column chunk at a time; a file that changes while it is compared fails the comparison.
    """
    return ParquetSource(path)


def delta(path: Any, version: int | None = None) -> DeltaSource:
    """A Delta table's directory, read without Spark: its files at ``version`` (default: the newest when the
    comparison starts) through delta-rs, as Spark reads them (INT96 timestamps, partition values typed by the
    table's schema). What delta-rs cannot read (column mapping, deletion vectors) is refused: compare such a
    table through :func:`spark`. Needs the ``delta`` extra (``deltalake``)."""
    return DeltaSource(path, version)


def arrow(data: Any) -> ArrowDataSource:
    """Arrow data: anything :mod:`hashexpr.arrow` takes (a pyarrow Table or dataset, pandas, Polars, a DuckDB
    relation, ...). A stream is read into memory once: the comparison reads the rows more than once."""
    return ArrowDataSource(data)


def spark(data: Any, spark: Any = None, engine: str = "auto") -> SparkSource:
    """A Spark table (by name) or DataFrame, classic or Spark Connect.

    Parameters
    ----------
    data : str or :class:`pyspark.sql.DataFrame`
        A catalog table, files as Spark SQL names them (``parquet.`/lake/orders```, ``orc.`...```,
        ``delta.`...```), or a DataFrame (which must give the same rows each time it runs: a table, files, or a
        cached frame). A Delta table is read at its version when the comparison starts.
    spark : :class:`pyspark.sql.SparkSession`, optional
        The session of a table name (default: the active session).
    engine : {'auto', 'jar', 'sql'}
        ``jar``: hashexpr's functions; ``sql``: hashexpr.sql's ``spark`` dialect, for a Spark without the jar;
        ``auto`` (default): the jar's when the session has them.
    """
    return SparkSource(data, spark, engine)


def compare(
    source: Source,
    target: Source,
    key: str | Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    *,
    exclude: Sequence[str] | None = None,
    values: bool = False,
    statement_timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> Result:
    """Compare two tables by key, each inside its own system, and return which rows differ.

    Parameters
    ----------
    source, target : :class:`Source`
        The tables (:func:`postgres`, :func:`duckdb`, :func:`parquet`, :func:`arrow`, :func:`spark`). ``inserted``
        rows are only in the target, ``deleted`` ones only in the source.
    key : str or sequence of str, optional
        The key column(s), on both sides, of any type the format covers (names matched as Spark matches them:
        exactly, else the one name equal ignoring case). Default: the source's primary key, else the target's,
        where the system declares one (PostgreSQL, MySQL, MariaDB).
    columns : sequence of str, optional
        The columns to compare; the others are left out. Default: every non-key column: the columns of the
        source are paired with the target's by name, exactly first, then ignoring case where that pairs one
        column with one; a column only one side has is a difference of the schemas (``counts``,
        ``Result.schema_differences``). Naming only key columns compares which keys exist.
    exclude : sequence of str, optional
        Columns to leave out (of either side), comparing every other column as with ``columns=None``.
    values : bool
        Fetch the compared columns' values of the differing rows too: ``changes()`` then has the structs
        ``source`` and ``target`` (as :func:`hashexpr.spark.diff` with ``include_values=True``).
    statement_timeout : float, optional
        Seconds any one pass of a system may take before it is cancelled (a ``TimeoutError``).
    progress : callable, optional
        Called with a line of text after each step.

    Returns
    -------
    :class:`Result`
        ``counts``, ``changes()`` (a pyarrow Table: the key columns, ``change``, ``side``, ``changed_columns``),
        ``schema`` and ``stats``.

    Raises
    ------
    ValueError
        A missing table or key column, a column whose type cannot be compared exactly (naming the column, its
        type and the system, and what to do), or a value no Spark type holds (a numeric NaN, naming the column
        and a key).
    ConnectionError
        A system that cannot be reached.
    TimeoutError
        A pass over ``statement_timeout``.
    hashexpr.errors.SystemFailure
        A system that failed while it answered (a query that failed for another reason, a lost connection).

    Notes
    -----
    Two values are equal when their encodings in format v1 are (INTEGER and BIGINT alike, ``1.5000`` and
    ``1.50``, ``-0.0`` and ``0.0``, every NaN); NULL differs from ``''``; one ulp, one microsecond and a change of
    case are changes. Keys match the same way, whatever the systems' collations.
    """
    for name, side in (("source", source), ("target", target)):
        if not isinstance(side, Source):
            raise TypeError(
                f"compare: {name} must be a source made by rc.postgres, rc.mysql, rc.duckdb, rc.parquet, rc.delta, rc.arrow or "
                f"rc.spark, got {type(side).__name__}"
            )
    if source is target:
        raise ValueError("compare: source and target are the same object; make a source for each side")
    request = Request(key, columns, exclude, values, statement_timeout)
    return run(source, target, request, progress)
