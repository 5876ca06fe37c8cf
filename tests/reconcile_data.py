"""Tables for the reconcile tests: rows in hashexpr.reference's conventions (ints for dates and timestamps,
tuples for structs), loaded into PostgreSQL, DuckDB, Parquet, Arrow and Spark with the types given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from arrow_data import arrow_column
from pyspark.sql.types import DataType
from sql_engines import PostgresTypes, literal

Columns = Sequence[tuple[str, DataType]]


def arrow_table(columns: Columns, rows: Sequence[Sequence[Any]]) -> pa.Table:
    """The rows as an Arrow table of the Arrow types Spark reads back as the columns' types."""
    return pa.table(
        {name: arrow_column([r[i] for r in rows], dtype) for i, (name, dtype) in enumerate(columns)}
    )


def write_parquet(table: pa.Table, path: str, parts: int = 1) -> None:
    """``table`` as one file, or as a directory of ``parts`` part files."""
    if parts == 1:
        pq.write_table(table, path)
        return
    import os

    os.makedirs(path, exist_ok=True)
    size = -(-table.num_rows // parts)
    for i in range(parts):
        pq.write_table(table.slice(i * size, size), os.path.join(path, f"part-{i:05d}.parquet"))


def postgres_table(
    conn: Any, name: str, columns: Columns, rows: Sequence[Sequence[Any]], batch: int = 500
) -> None:
    """Create the table ``name`` (SQL text) in PostgreSQL and insert the rows as literals of their types."""
    types = PostgresTypes(conn)
    definition = ", ".join(f'"{c}" {types.name(t)}' for c, t in columns)
    conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(f"CREATE TABLE {name} ({definition})")
    for start in range(0, len(rows), batch):
        values = ", ".join(
            "(" + ", ".join(literal(v, t, "postgres", types) for v, (_, t) in zip(row, columns)) + ")"
            for row in rows[start : start + batch]
        )
        conn.execute(f"INSERT INTO {name} VALUES {values}")
    conn.execute(f"ANALYZE {name}")


def duckdb_table(con: Any, name: str, table: pa.Table) -> None:
    """Create the table ``name`` (SQL text) in DuckDB from an Arrow table."""
    con.register("hx_rows", table)
    try:
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM hx_rows")
    finally:
        con.unregister("hx_rows")
