"""Generates the frozen golden vectors of dataset fingerprints, ``spec/fingerprint-vectors-v1.json``.

Every vector is a small table (``docs/FORMAT.md``, section 5): its columns (name and Spark type),
its rows (values rendered in JSON as in ``spec/vectors-v1.json``, see ``spec/generate_vectors.py``),
a Spark SQL query that produces exactly those columns and rows, and the fingerprint the Python
reference computes for it. The JVM side evaluates a vector as::

    SELECT dataset_fingerprint(*) FROM (<sql>)

Before writing, every query is run with a local Spark: its column names and types must be the
declared ones, its rows (as a multiset) the declared rows, and its fingerprint the reference's. The
file is frozen once written, so this script refuses to overwrite it; ``--check`` re-verifies the
existing file instead.

Usage::

    PYTHONPATH=python python spec/generate_fingerprint_vectors.py          # create the file
    PYTHONPATH=python python spec/generate_fingerprint_vectors.py --check  # verify it, write nothing
"""

from __future__ import annotations

import datetime
import decimal
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generate_by_name_vectors import start_spark
from generate_vectors import (
    DOUBLE,
    INT,
    LCASE,
    LONG,
    SECOND,
    STRING,
    _from_spark,
    arr,
    days,
    freeze,
    mp,
    render,
    st,
)
from pyspark.sql.types import DataType, DateType, DecimalType, TimestampType

from hashexpr.reference import FORMAT_VERSION, SEED, dataset_fingerprint, encode_record

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "spec" / "fingerprint-vectors-v1.json"


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, DataType], ...]
    rows: tuple[tuple[Any, ...], ...]
    sql: str

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    @property
    def types(self) -> list[DataType]:
        return [dtype for _, dtype in self.columns]


def table(name: str, columns: list[tuple[str, DataType]], rows: list[tuple[Any, ...]], sql: str) -> Table:
    return Table(name, tuple(columns), tuple(rows), sql)


# ---------------------------------------------------------------------------------------------
# The vectors

ID_S = [("id", INT), ("s", STRING)]
POINT = st(("x", INT, False), ("y", STRING, False))


def all_tables() -> list[Table]:
    ts = 946_684_800 * SECOND
    return [
        table("empty", ID_S, [], "SELECT * FROM VALUES (1, 'a') AS t(id, s) WHERE false"),
        table("empty_bigint", [("id", LONG)], [], "SELECT id FROM range(0)"),
        table("one_row", ID_S, [(1, "a")], "SELECT * FROM VALUES (1, 'a') AS t(id, s)"),
        table("two_rows", ID_S, [(1, "a"), (2, "b")], "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, s)"),
        table("two_rows_reversed", ID_S, [(2, "b"), (1, "a")], "SELECT * FROM VALUES (2, 'b'), (1, 'a') AS t(id, s)"),
        table("duplicate_row", ID_S, [(1, "a"), (1, "a")], "SELECT * FROM VALUES (1, 'a'), (1, 'a') AS t(id, s)"),
        table(
            "duplicates_and_order",
            ID_S,
            [(1, "a"), (2, "b"), (1, "a"), (2, "b"), (1, "a")],
            "SELECT * FROM VALUES (1, 'a'), (2, 'b'), (1, 'a'), (2, 'b'), (1, 'a') AS t(id, s)",
        ),
        table("one_row_renamed", [("key", INT), ("s", STRING)], [(1, "a")], "SELECT * FROM VALUES (1, 'a') AS t(key, s)"),
        table("one_row_bigint", [("id", LONG), ("s", STRING)], [(1, "a")], "SELECT * FROM VALUES (1L, 'a') AS t(id, s)"),
        table(
            "nulls",
            ID_S,
            [(None, "a"), (1, None), (None, None), (0, "")],
            "SELECT * FROM VALUES (NULL, 'a'), (1, NULL), (NULL, NULL), (0, '') AS t(id, s)",
        ),
        table(
            "map_column",
            [("k", INT), ("m", mp(STRING, INT, True))],
            [(1, [("a", 1), ("b", None)]), (2, []), (3, None), (4, [("b", None), ("a", 1)])],
            "SELECT k, CAST(m AS MAP<STRING, INT>) AS m FROM VALUES (1, map('a', 1, 'b', NULL)), "
            "(2, map()), (3, NULL), (4, map('b', NULL, 'a', 1)) AS t(k, m)",
        ),
        table(
            "struct_column",
            [("p", POINT), ("tags", arr(STRING, True))],
            [((1, "q"), ["x", None]), ((2, "r"), []), (None, None), ((1, "q"), ["x", None])],
            "SELECT CAST(p AS STRUCT<x: INT NOT NULL, y: STRING NOT NULL>) AS p, "
            "CAST(tags AS ARRAY<STRING>) AS tags FROM VALUES "
            "(named_struct('x', 1, 'y', 'q'), array('x', NULL)), (named_struct('x', 2, 'y', 'r'), array()), "
            "(NULL, NULL), (named_struct('x', 1, 'y', 'q'), array('x', NULL)) AS t(p, tags)",
        ),
        table(
            "mixed_kinds",
            [("d", DecimalType(10, 2)), ("x", DOUBLE), ("day", DateType()), ("at", TimestampType()), ("c", LCASE)],
            [
                (decimal.Decimal("1.50"), -0.0, days(datetime.date(2000, 1, 1)), ts, "Q"),
                (decimal.Decimal("-0.01"), math.nan, None, ts + 1, None),
                (None, math.inf, days(datetime.date(1969, 12, 31)), None, "q"),
            ],
            "SELECT CAST(d AS DECIMAL(10,2)) AS d, x, day, at, c COLLATE UTF8_LCASE AS c FROM VALUES "
            "(1.50, CAST('-0.0' AS DOUBLE), DATE '2000-01-01', TIMESTAMP '2000-01-01 00:00:00+00:00', 'Q'), "
            "(-0.01, CAST('NaN' AS DOUBLE), NULL, TIMESTAMP '2000-01-01 00:00:00.000001+00:00', NULL), "
            "(NULL, CAST('Infinity' AS DOUBLE), DATE '1969-12-31', NULL, 'q') AS t(d, x, day, at, c)",
        ),
        table(
            "quoted_names",
            [("a`b", INT), ("\u00e9t\u00e9", STRING)],
            [(1, "x")],
            "SELECT * FROM VALUES (1, 'x') AS t(`a``b`, `\u00e9t\u00e9`)",
        ),
        table(
            "sixteen_rows",
            [("n", LONG)],
            [(n,) for n in range(16)],
            "SELECT id AS n FROM range(16)",
        ),
    ]


# ---------------------------------------------------------------------------------------------
# JSON


def reference_fingerprint(vector: Table) -> str:
    return dataset_fingerprint(vector.rows, vector.names, vector.types)


def to_json(tables: list[Table]) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "seed": SEED,
        "vectors": [
            {
                "name": vector.name,
                "columns": [{"name": name, "type": dtype.jsonValue()} for name, dtype in vector.columns],
                "rows": [[render(v, dtype) for v, dtype in zip(row, vector.types)] for row in vector.rows],
                "sql": vector.sql,
                "fingerprint": reference_fingerprint(vector),
            }
            for vector in tables
        ],
    }


# ---------------------------------------------------------------------------------------------
# Checks


def check_tables(tables: list[Table]) -> None:
    names = [vector.name for vector in tables]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SystemExit(f"duplicate vector names: {duplicates}")
    for vector in tables:
        for row in vector.rows:
            if len(row) != len(vector.columns):
                raise SystemExit(f"{vector.name}: row {row!r} does not have {len(vector.columns)} values")


def check_with_spark(tables: list[Table]) -> None:
    """Every query yields the declared columns and rows, and Spark's fingerprint is the reference's.

    Runs under ANSI and non-ANSI mode with different session time zones.
    """
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    spark = start_spark()
    failures = []
    for ansi, zone in (("true", "UTC"), ("false", "America/Los_Angeles")):
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        spark.conf.set("spark.sql.session.timeZone", zone)
        for vector in tables:
            try:
                problems = _check_table(spark, vector)
            except (PySparkException, Py4JJavaError) as error:  # report every failure
                problems = [f"{type(error).__name__}: {str(error).splitlines()[0]}"]
            failures += [f"{vector.name} ansi={ansi} tz={zone}: {problem}" for problem in problems]
    spark.stop()
    if failures:
        raise SystemExit("Spark disagrees with the declared vectors:\n" + "\n".join(failures))


def _check_table(spark: Any, vector: Table) -> list[str]:
    problems = []
    frame = spark.sql(vector.sql)
    actual_columns = [(field.name, field.dataType) for field in frame.schema.fields]
    if actual_columns != list(vector.columns):
        problems.append(f"columns {actual_columns!r} != declared {list(vector.columns)!r}")
    # Rows compare as multisets of their encodings: every byte the fingerprint sees.
    actual = Counter(
        encode_record([_from_spark(v, t) for v, t in zip(row, vector.types)], vector.types)
        for row in frame.collect()
    )
    expected = Counter(encode_record(row, vector.types) for row in vector.rows)
    if actual != expected:
        problems.append(f"rows differ: Spark has {sum(actual.values())}, declared {sum(expected.values())}")
    fingerprint = spark.sql(f"SELECT dataset_fingerprint(*) FROM ({vector.sql})").collect()[0][0]
    if fingerprint != reference_fingerprint(vector):
        problems.append(f"Spark {fingerprint} != reference {reference_fingerprint(vector)}")
    return problems


def _build() -> tuple[int, dict[str, Any]]:
    tables = all_tables()
    check_tables(tables)
    check_with_spark(tables)
    return len(tables), to_json(tables)


def main(argv: list[str] | None = None) -> int:
    return freeze(argv, __doc__, OUTPUT, _build)


if __name__ == "__main__":
    sys.exit(main())
