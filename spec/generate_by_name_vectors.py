"""Generates the frozen golden vectors of by-name records, ``spec/by-name-vectors-v1.json``.

Every vector is a by-name record (``docs/FORMAT.md``, section 6): a list of named arguments, each
a column name, a Spark SQL expression, its Spark type and its value, with the 16-byte
``record_hash_by_name`` the Python reference computes for it. The JVM side evaluates a vector as::

    SELECT hex(record_hash_by_name(*)) FROM (SELECT <sql1> AS `<name1>`, ..., <sqln> AS `<namen>`)

with every name in backticks (a backtick inside a name doubled). Values are rendered in JSON as in
``spec/vectors-v1.json`` (see ``spec/generate_vectors.py``). Before writing, every expression is
evaluated with a local Spark (its type and value must be the declared ones) and every vector's
query is run with ``hashexpr.jar``: its result must equal the reference's. The file is frozen once
written, so this script refuses to overwrite it; ``--check`` re-verifies the existing file instead.

Usage::

    PYTHONPATH=python python spec/generate_by_name_vectors.py          # create the file
    PYTHONPATH=python python spec/generate_by_name_vectors.py --check  # verify it, write nothing
"""

from __future__ import annotations

import datetime
import decimal
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generate_vectors import (
    DAY,
    DOUBLE,
    INT,
    LCASE,
    LONG,
    SECOND,
    STRING,
    Arg,
    _check_arg,
    arr,
    days,
    freeze,
    mp,
    render,
    st,
)
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    NullType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from hashexpr.reference import FORMAT_VERSION, SEED, record_hash_by_name

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "spec" / "by-name-vectors-v1.json"
JAR = ROOT / "target" / "hashexpr.jar"


@dataclass(frozen=True)
class NamedArg:
    name: str
    arg: Arg


@dataclass(frozen=True)
class Vector:
    name: str
    args: tuple[NamedArg, ...]


def vec(name: str, *args: tuple[str, str, DataType, Any]) -> Vector:
    """A vector from (column name, sql, type, value) tuples, in the order the query selects them."""
    return Vector(name, tuple(NamedArg(column, Arg(sql, dtype, value)) for column, sql, dtype, value in args))


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def query(vector: Vector) -> str:
    columns = ", ".join(f"{a.arg.sql} AS {quote(a.name)}" for a in vector.args)
    return f"SELECT hex(record_hash_by_name(*)) FROM (SELECT {columns})"


# ---------------------------------------------------------------------------------------------
# The vectors

A1 = ("a", "1", INT, 1)
BX = ("b", "'x'", STRING, "x")
C_ARRAY = ("c", "array(1, 2)", arr(INT), [1, 2])
NULL_A = ("a", "CAST(NULL AS INT)", INT, None)
NULL_S = ("s", "CAST(NULL AS STRING)", STRING, None)
NULL_Z = ("z", "NULL", NullType(), None)
POINT = st(("x", INT, False), ("y", STRING, False))


def order_vectors() -> list[Vector]:
    # The same record in every order the query can select it: one hash for all of them.
    return [
        vec("single_int", A1),
        vec("ab", A1, BX),
        vec("ba", BX, A1),
        vec("abc", A1, BX, C_ARRAY),
        vec("cab", C_ARRAY, A1, BX),
        vec("bca", BX, C_ARRAY, A1),
        vec("b_only", BX),
    ]


def null_vectors() -> list[Vector]:
    # A NULL column is left out: each of these equals "ab" or "b_only".
    return [
        vec("ab_null_first", NULL_S, A1, BX),
        vec("ab_null_middle", A1, NULL_S, BX),
        vec("ab_null_last", A1, BX, NULL_Z),
        vec("ab_two_nulls", NULL_Z, BX, NULL_S, A1),
        vec("b_null_a", NULL_A, BX),
        vec("all_null_one", NULL_A),
        vec("all_null_three", NULL_A, NULL_S, NULL_Z),
        vec("null_struct_field", ("p", "CAST(NULL AS STRUCT<x: INT, y: STRING>)", st(("x", INT, True), ("y", STRING, True)), None)),
        # Present values that are empty or zero are not NULL.
        vec("empty_string", ("a", "''", STRING, "")),
        vec("zero", ("a", "0", INT, 0)),
        vec("empty_array", ("a", "array()", arr(NullType()), [])),
        vec("struct_of_nulls", ("p", "named_struct('x', CAST(NULL AS INT), 'y', CAST(NULL AS STRING))",
                                st(("x", INT, True), ("y", STRING, True)), (None, None))),
    ]


def name_vectors() -> list[Vector]:
    e_acute, tilde, grin = "\u00e9", "\uff5e", "\U0001f600"
    return [
        # The same value under another name is another record.
        vec("renamed_a_to_c", ("c", "1", INT, 1), BX),
        # Bytewise 'B' < '_' < 'a' < 'b'; case-insensitively 'a' < 'B'.
        vec("case_Ba", ("B", "1", INT, 1), ("a", "2", INT, 2)),
        vec("case_aB", ("a", "2", INT, 2), ("B", "1", INT, 1)),
        vec("case_a_A", ("a", "1", INT, 1), ("A", "2", INT, 2)),
        vec("case_A_a", ("A", "1", INT, 1), ("a", "2", INT, 2)),
        vec("underscore_between_cases", ("x", "'lower'", STRING, "lower"), ("_x", "'under'", STRING, "under"),
            ("X", "'upper'", STRING, "upper")),
        # Prefixes come first; digits compare as bytes, not as numbers.
        vec("prefixes", ("ab", "2", INT, 2), ("a", "1", INT, 1), ("aa", "3", INT, 3)),
        vec("digit_names", ("2", "2", INT, 2), ("10", "10", INT, 10), ("1", "1", INT, 1)),
        # Multibyte UTF-8: 'z' (7A) < 'é' (C3 A9) < '～' (EF BD 9E) < '😀' (F0 9F 98 80). In UTF-16 the
        # emoji (D83D DE00) sorts before '～' (FF5E), so only a byte (or code point) order gets this right.
        vec("multibyte_names", (grin, "'grin'", STRING, "grin"), (tilde, "'tilde'", STRING, "tilde"),
            (e_acute, "'e'", STRING, "e"), ("z", "'z'", STRING, "z")),
        vec("multibyte_names_permuted", ("z", "'z'", STRING, "z"), (e_acute, "'e'", STRING, "e"),
            (tilde, "'tilde'", STRING, "tilde"), (grin, "'grin'", STRING, "grin")),
        vec("cjk_name_with_null", ("\u5217", "42L", LONG, 42), ("\u540d\u524d", "CAST(NULL AS DATE)", DateType(), None)),
        vec("punctuation_names", ("a b", "1", INT, 1), ("a.b", "2", INT, 2), ("a`b", "3", INT, 3)),
        # A 40-byte name: the stream crosses MurmurHash3 block boundaries inside a name.
        vec("long_name", ("n" * 40, "true", BooleanType(), True)),
    ]


def value_vectors() -> list[Vector]:
    ts = 946_684_800 * SECOND
    return [
        vec(
            "every_kind",
            ("t_bool", "false", BooleanType(), False),
            ("t_byte", "-7Y", ByteType(), -7),
            ("t_double", "-2.5D", DOUBLE, -2.5),
            ("t_decimal", "CAST(1.50 AS DECIMAL(10,2))", DecimalType(10, 2), decimal.Decimal("1.50")),
            ("t_binary", "X'00FF'", BinaryType(), b"\x00\xff"),
            ("t_date", "DATE '2000-01-01'", DateType(), days(datetime.date(2000, 1, 1))),
            ("t_ts", "TIMESTAMP '2000-01-01 00:00:00+00:00'", TimestampType(), ts),
            ("t_ts_ntz", "TIMESTAMP_NTZ '2000-01-01 00:00:00'", TimestampNTZType(), ts),
            ("t_interval", "INTERVAL '1' DAY", DayTimeIntervalType(DayTimeIntervalType.DAY), DAY),
            ("t_lcase", "'Q' COLLATE UTF8_LCASE", LCASE, "Q"),
        ),
        # Struct fields are positional inside a column: their names are not part of the record.
        vec("nested_struct", ("p", "named_struct('x', 1, 'y', 'q')", POINT, (1, "q")), A1),
        vec("nested_struct_renamed_fields", A1, ("p", "named_struct('u', 1, 'v', 'q')",
                                                 st(("u", INT, False), ("v", STRING, False)), (1, "q"))),
        vec(
            "nested_array_of_structs",
            ("rows", "array(named_struct('x', 1, 'y', 'q'), NULL, named_struct('x', 2, 'y', 'r'))",
             arr(POINT, True), [(1, "q"), None, (2, "r")]),
            ("k", "CAST(NULL AS BIGINT)", LONG, None),
        ),
        vec(
            "nested_map",
            ("m", "map('k', array(1, NULL), 'j', NULL)", mp(STRING, arr(INT, True), True), [("k", [1, None]), ("j", None)]),
            ("a", "'x'", STRING, "x"),
        ),
        vec(
            "nested_struct_in_struct",
            ("outer", "named_struct('inner', named_struct('v', CAST(NULL AS STRING)), 'w', array('a'))",
             StructType([StructField("inner", st(("v", STRING, True)), False), StructField("w", arr(STRING), False)]),
             ((None,), ["a"])),
        ),
    ]


def all_vectors() -> list[Vector]:
    return order_vectors() + null_vectors() + name_vectors() + value_vectors()


# ---------------------------------------------------------------------------------------------
# JSON


def reference_hex(vector: Vector) -> str:
    values = [(a.name, a.arg.value) for a in vector.args]
    types = {a.name: a.arg.dtype for a in vector.args}
    return record_hash_by_name(values, types).hex()


def to_json(vectors: list[Vector]) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "seed": SEED,
        "vectors": [
            {
                "name": vector.name,
                "args": [
                    {
                        "name": a.name,
                        "sql": a.arg.sql,
                        "type": a.arg.dtype.jsonValue(),
                        "value": render(a.arg.value, a.arg.dtype),
                    }
                    for a in vector.args
                ],
                "hex": reference_hex(vector),
            }
            for vector in vectors
        ],
    }


# ---------------------------------------------------------------------------------------------
# Checks


def check_vectors(vectors: list[Vector]) -> None:
    names = [vector.name for vector in vectors]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SystemExit(f"duplicate vector names: {duplicates}")
    for vector in vectors:
        columns = [a.name for a in vector.args]
        if len(set(columns)) != len(columns):
            raise SystemExit(f"{vector.name}: duplicate column names {columns}")


def start_spark() -> Any:
    if not JAR.exists():
        raise SystemExit(f"{JAR} is missing: build it with `make jar`")
    os.environ["TZ"] = "UTC"
    time.tzset()  # PySpark turns collected TIMESTAMPs into naive datetimes in the local zone.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.jars", str(JAR))
        .config("spark.sql.extensions", "io.hashexpr.HashExprExtensions")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("FATAL")
    return spark


def check_with_spark(vectors: list[Vector]) -> None:
    """Every argument has its declared type and value, and Spark's hash is the reference's.

    Runs under ANSI and non-ANSI mode with different session time zones, so that the vectors do not
    depend on either setting.
    """
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    spark = start_spark()
    failures = []
    for ansi, zone in (("true", "UTC"), ("false", "America/Los_Angeles")):
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        spark.conf.set("spark.sql.session.timeZone", zone)
        for vector in vectors:
            try:
                problems = _check_vector(spark, vector)
            except (PySparkException, Py4JJavaError) as error:  # report every failure
                problems = [f"{type(error).__name__}: {str(error).splitlines()[0]}"]
            failures += [f"{vector.name} ansi={ansi} tz={zone}: {problem}" for problem in problems]
    spark.stop()
    if failures:
        raise SystemExit("Spark disagrees with the declared vectors:\n" + "\n".join(failures))


def _check_vector(spark: Any, vector: Vector) -> list[str]:
    problems = [f"{a.name}: {p}" for a in vector.args if (p := _check_arg(spark, a.arg))]
    sql = query(vector)
    schema = spark.sql(sql.replace("hex(record_hash_by_name(*))", "*", 1)).schema
    if schema.names != [a.name for a in vector.args]:
        problems.append(f"columns {schema.names} != declared {[a.name for a in vector.args]}")
    actual = spark.sql(sql).collect()[0][0].lower()
    if actual != reference_hex(vector):
        problems.append(f"Spark {actual} != reference {reference_hex(vector)}")
    return problems


def _build() -> tuple[int, dict[str, Any]]:
    vectors = all_vectors()
    check_vectors(vectors)
    check_with_spark(vectors)
    return len(vectors), to_json(vectors)


def main(argv: list[str] | None = None) -> int:
    return freeze(argv, __doc__, OUTPUT, _build)


if __name__ == "__main__":
    sys.exit(main())
