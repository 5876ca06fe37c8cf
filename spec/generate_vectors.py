"""Generates the frozen golden vectors of hash format v1, ``spec/vectors-v1.json``.

Every vector is a record: a list of arguments, each a Spark SQL expression, its Spark type and its
value, with the 16-byte ``record_hash`` the Python reference computes for it. Before writing, every
expression is evaluated with a local Spark: its type must equal the declared type exactly and its
value must equal the declared value. The file is frozen once written, so this script refuses to
overwrite it; ``--check`` re-verifies the vectors against Spark and the existing file instead.

JSON rendering of values (``args[i].value``), chosen so that JSON parsers in any language read it
exactly and ``tests/test_golden_vectors.py`` can rebuild the Python value:

* ``NULL`` (of any type) is ``null``; ``BOOLEAN`` is ``true``/``false``.
* ``TINYINT``..``BIGINT`` are JSON integers; ``INTERVAL YEAR TO MONTH`` is an integer of months.
* ``FLOAT`` and ``DOUBLE`` are JSON numbers (a ``FLOAT`` as its exact value widened to a double),
  except ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` and ``"-0.0"``, which are strings; Python's
  ``float()`` reads both forms.
* ``DECIMAL(p, s)`` is a string in plain notation with exactly ``s`` fractional digits.
* ``STRING`` (any collation) is a JSON string, or ``{"utf8_hex": "<hex>"}`` when its bytes are not
  valid UTF-8.
* ``BINARY`` is a lowercase hex string.
* ``DATE`` is an integer of days since 1970-01-01; ``TIMESTAMP``, ``TIMESTAMP_NTZ`` and
  ``INTERVAL DAY TO SECOND`` are integers of microseconds; ``INTERVAL`` (calendar) is
  ``[months, days, microseconds]``.
* ``ARRAY`` is a JSON array; ``MAP`` is a JSON array of ``[key, value]`` pairs; ``STRUCT`` is a JSON
  array of its field values in field order.

Usage::

    PYTHONPATH=python python spec/generate_vectors.py          # create spec/vectors-v1.json
    PYTHONPATH=python python spec/generate_vectors.py --check  # verify it, write nothing
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import math
import os
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CalendarIntervalType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    YearMonthIntervalType,
)

from hashexpr.reference import FORMAT_VERSION, SEED, encode_record, encode_value, record_hash

OUTPUT = Path(__file__).resolve().parent / "vectors-v1.json"

UTC = datetime.timezone.utc
EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()
DAY = 86_400_000_000
HOUR = 3_600_000_000
MINUTE = 60_000_000
SECOND = 1_000_000


@dataclass(frozen=True)
class Arg:
    sql: str
    dtype: DataType
    value: Any


@dataclass(frozen=True)
class Vector:
    name: str
    args: tuple[Arg, ...]


# ---------------------------------------------------------------------------------------------
# Type shorthands. Nullability must match what Spark infers for each expression exactly.


def arr(element: DataType, contains_null: bool = False) -> ArrayType:
    return ArrayType(element, contains_null)


def mp(key: DataType, value: DataType, value_contains_null: bool = False) -> MapType:
    return MapType(key, value, value_contains_null)


def st(*fields: tuple[str, DataType, bool]) -> StructType:
    return StructType([StructField(name, dtype, nullable) for name, dtype, nullable in fields])


def f32(number: float) -> float:
    """The float32 nearest to ``number``, widened back: the value a Spark FLOAT holds."""
    return struct.unpack("<f", struct.pack("<f", number))[0]


def days(date: datetime.date) -> int:
    return date.toordinal() - EPOCH_DAY


def micros(moment: datetime.datetime) -> int:
    epoch = datetime.datetime(1970, 1, 1, tzinfo=moment.tzinfo)
    delta = moment - epoch
    return (delta.days * 86400 + delta.seconds) * SECOND + delta.microseconds


INT = IntegerType()
LONG = LongType()
STRING = StringType()
LCASE = StringType("UTF8_LCASE")
DOUBLE = DoubleType()


def one(name: str, sql: str, dtype: DataType, value: Any) -> Vector:
    return Vector(name, (Arg(sql, dtype, value),))


def many(name: str, *args: tuple[str, DataType, Any]) -> Vector:
    return Vector(name, tuple(Arg(*arg) for arg in args))


# ---------------------------------------------------------------------------------------------
# The vectors


def null_vectors() -> list[Vector]:
    return [
        one("null_literal", "NULL", NullType(), None),
        one("null_void_cast", "CAST(NULL AS VOID)", NullType(), None),
        one("null_boolean", "CAST(NULL AS BOOLEAN)", BooleanType(), None),
        one("null_int", "CAST(NULL AS INT)", INT, None),
        one("null_bigint", "CAST(NULL AS BIGINT)", LONG, None),
        one("null_double", "CAST(NULL AS DOUBLE)", DOUBLE, None),
        one("null_decimal", "CAST(NULL AS DECIMAL(10,2))", DecimalType(10, 2), None),
        one("null_string", "CAST(NULL AS STRING)", STRING, None),
        one("null_binary", "CAST(NULL AS BINARY)", BinaryType(), None),
        one("null_date", "CAST(NULL AS DATE)", DateType(), None),
        one("null_timestamp", "CAST(NULL AS TIMESTAMP)", TimestampType(), None),
        one("null_array", "CAST(NULL AS ARRAY<INT>)", arr(INT, True), None),
        one("null_map", "CAST(NULL AS MAP<STRING,INT>)", mp(STRING, INT, True), None),
    ]


def scalar_vectors() -> list[Vector]:
    byte, short = ByteType(), ShortType()
    flt = FloatType()
    return [
        one("boolean_true", "true", BooleanType(), True),
        one("boolean_false", "false", BooleanType(), False),
        one("tinyint_7", "CAST(7 AS TINYINT)", byte, 7),
        one("tinyint_max", "127Y", byte, 127),
        one("tinyint_min", "-128Y", byte, -128),
        one("smallint_7", "7S", short, 7),
        one("smallint_max", "32767S", short, 32767),
        one("smallint_min", "-32768S", short, -32768),
        one("int_7", "7", INT, 7),
        one("int_0", "0", INT, 0),
        one("int_minus_1", "-1", INT, -1),
        one("int_max", "2147483647", INT, 2**31 - 1),
        one("int_min", "CAST(-2147483648 AS INT)", INT, -(2**31)),
        one("bigint_7", "7L", LONG, 7),
        one("bigint_max", "9223372036854775807L", LONG, 2**63 - 1),
        one("bigint_min", "-9223372036854775808L", LONG, -(2**63)),
        one("float_1_5", "1.5F", flt, 1.5),
        one("float_0_1", "CAST(0.1 AS FLOAT)", flt, f32(0.1)),
        one("float_minus_zero", "CAST('-0.0' AS FLOAT)", flt, -0.0),
        one("float_nan", "CAST('NaN' AS FLOAT)", flt, math.nan),
        one("float_zero", "0.0F", flt, 0.0),
        one("float_infinity", "CAST('Infinity' AS FLOAT)", flt, math.inf),
        one("float_minus_infinity", "CAST('-Infinity' AS FLOAT)", flt, -math.inf),
        one("float_max", "CAST('3.4028235E38' AS FLOAT)", flt, f32(3.4028235e38)),
        one("float_min_subnormal", "CAST('1.4E-45' AS FLOAT)", flt, f32(1.4e-45)),
        one("double_1_5", "1.5D", DOUBLE, 1.5),
        one("double_0_1", "0.1D", DOUBLE, 0.1),
        one("double_zero", "0.0D", DOUBLE, 0.0),
        one("double_minus_zero", "-0.0D", DOUBLE, -0.0),
        one("double_minus_zero_cast", "CAST('-0.0' AS DOUBLE)", DOUBLE, -0.0),
        one("double_nan", "CAST('NaN' AS DOUBLE)", DOUBLE, math.nan),
        one("double_nan_sqrt", "sqrt(-1D)", DOUBLE, math.nan),
        one("double_infinity", "CAST('Infinity' AS DOUBLE)", DOUBLE, math.inf),
        one("double_minus_infinity", "CAST('-Infinity' AS DOUBLE)", DOUBLE, -math.inf),
        one("double_min_subnormal", "4.9E-324D", DOUBLE, 5e-324),
        one("double_max", "1.7976931348623157E308D", DOUBLE, 1.7976931348623157e308),
        one("double_minus_pi", "-3.141592653589793D", DOUBLE, -3.141592653589793),
    ]


def decimal_vectors() -> list[Vector]:
    def dec(name: str, sql: str, precision: int, scale: int, text: str) -> Vector:
        return one(name, sql, DecimalType(precision, scale), decimal.Decimal(text))

    nines = "9" * 38
    return [
        dec("decimal_spec_example", "CAST(-1.50 AS DECIMAL(10,2))", 10, 2, "-1.50"),
        dec("decimal_1_50_p10s2", "CAST(1.50 AS DECIMAL(10,2))", 10, 2, "1.50"),
        dec("decimal_1_5_p38s1", "CAST(1.5 AS DECIMAL(38,1))", 38, 1, "1.5"),
        dec("decimal_1_5000_p20s4", "CAST(1.5 AS DECIMAL(20,4))", 20, 4, "1.5000"),
        dec("decimal_zero_p10s2", "CAST(0 AS DECIMAL(10,2))", 10, 2, "0.00"),
        dec("decimal_zero_p38s0", "CAST(0 AS DECIMAL(38,0))", 38, 0, "0"),
        dec("decimal_100_p3s0", "CAST(100 AS DECIMAL(3,0))", 3, 0, "100"),
        dec("decimal_literal_123_456", "123.456", 6, 3, "123.456"),
        dec("decimal_127", "CAST(127 AS DECIMAL(3,0))", 3, 0, "127"),
        dec("decimal_128", "CAST(128 AS DECIMAL(3,0))", 3, 0, "128"),
        dec("decimal_minus_128", "CAST(-128 AS DECIMAL(3,0))", 3, 0, "-128"),
        dec("decimal_minus_129", "CAST(-129 AS DECIMAL(3,0))", 3, 0, "-129"),
        dec("decimal_1e37", "CAST('1E37' AS DECIMAL(38,0))", 38, 0, "1E37"),
        dec("decimal_max_p38s0", f"{nines}BD", 38, 0, nines),
        dec("decimal_min_p38s0", f"-{nines}BD", 38, 0, "-" + nines),
        dec("decimal_max_p38s38", f"CAST('0.{nines}' AS DECIMAL(38,38))", 38, 38, "0." + nines),
        dec("decimal_min_p38s38", f"CAST('-0.{nines}' AS DECIMAL(38,38))", 38, 38, "-0." + nines),
        dec("decimal_tiny_p38s38", "CAST('1E-38' AS DECIMAL(38,38))", 38, 38, "1E-38"),
        dec(
            "decimal_p38s10",
            "CAST('-1234567890123456789012345678.0123456789' AS DECIMAL(38,10))",
            38,
            10,
            "-1234567890123456789012345678.0123456789",
        ),
    ]


def string_vectors() -> list[Vector]:
    return [
        one("string_empty", "''", STRING, ""),
        one("string_a", "'a'", STRING, "a"),
        one("string_NULL_text", "'NULL'", STRING, "NULL"),
        one("string_1", "'1'", STRING, "1"),
        one("string_ascii", "'hello, world'", STRING, "hello, world"),
        one("string_2_byte", "'h\u00e9llo'", STRING, "h\u00e9llo"),
        one("string_3_byte", "'\u65e5\u672c\u8a9e'", STRING, "\u65e5\u672c\u8a9e"),
        one("string_4_byte_emoji", "'\U0001f600'", STRING, "\U0001f600"),
        one("string_mixed", "'a\u00e9\u20ac\U0001d11e'", STRING, "a\u00e9\u20ac\U0001d11e"),
        one("string_nul_byte", "CAST(X'610062' AS STRING)", STRING, "a\x00b"),
        one("string_invalid_ff", "CAST(X'FF' AS STRING)", STRING, b"\xff"),
        one("string_invalid_truncated", "CAST(X'61E282' AS STRING)", STRING, b"a\xe2\x82"),
        one("string_invalid_surrogate", "CAST(X'EDA080' AS STRING)", STRING, b"\xed\xa0\x80"),
        one("string_long_10000", "repeat('x', 10000)", STRING, "x" * 10000),
        one("string_collate_utf8_binary", "'Abc' COLLATE UTF8_BINARY", STRING, "Abc"),
        one("lcase_Abc", "'Abc' COLLATE UTF8_LCASE", LCASE, "Abc"),
        one("lcase_abc", "'abc' COLLATE UTF8_LCASE", LCASE, "abc"),
        one("lcase_empty", "'' COLLATE UTF8_LCASE", LCASE, ""),
        one("lcase_null", "CAST(NULL AS STRING) COLLATE UTF8_LCASE", LCASE, None),
        one("lcase_greek_sigmas", "'\u03a3\u03c3\u03c2' COLLATE UTF8_LCASE", LCASE, "\u03a3\u03c3\u03c2"),
        one("lcase_dotted_capital_i", "'\u0130stanbul' COLLATE UTF8_LCASE", LCASE, "\u0130stanbul"),
        one("lcase_capital_sharp_s", "'STRA\u1e9eE' COLLATE UTF8_LCASE", LCASE, "STRA\u1e9eE"),
        one("lcase_invalid_utf8", "CAST(X'41FF' AS STRING) COLLATE UTF8_LCASE", LCASE, b"A\xff"),
        one("lcase_array", "array('A' COLLATE UTF8_LCASE, 'b' COLLATE UTF8_LCASE)", arr(LCASE), ["A", "b"]),
    ]


def binary_and_time_vectors() -> list[Vector]:
    binary, date, ts, ntz = BinaryType(), DateType(), TimestampType(), TimestampNTZType()
    return [
        one("binary_empty", "X''", binary, b""),
        one("binary_00", "X'00'", binary, b"\x00"),
        one("binary_deadbeef", "X'DEADBEEF'", binary, bytes.fromhex("deadbeef")),
        one("binary_61", "X'61'", binary, b"a"),
        one("date_epoch", "DATE '1970-01-01'", date, 0),
        one("date_before_epoch", "DATE '1969-12-31'", date, -1),
        one("date_2024_02_29", "DATE '2024-02-29'", date, days(datetime.date(2024, 2, 29))),
        one("date_0001_01_01", "DATE '0001-01-01'", date, days(datetime.date(1, 1, 1))),
        one("date_9999_12_31", "DATE '9999-12-31'", date, days(datetime.date(9999, 12, 31))),
        one("timestamp_epoch", "TIMESTAMP '1970-01-01 00:00:00+00:00'", ts, 0),
        one("timestamp_before_epoch", "TIMESTAMP '1969-12-31 23:59:59.999999+00:00'", ts, -1),
        one(
            "timestamp_2024",
            "TIMESTAMP '2024-01-02 03:04:05.123456+00:00'",
            ts,
            micros(datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),
        ),
        one(
            "timestamp_with_offset",
            "TIMESTAMP '2024-01-02 08:34:05.123456+05:30'",
            ts,
            micros(datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),
        ),
        one("timestamp_ntz_epoch", "TIMESTAMP_NTZ '1970-01-01 00:00:00'", ntz, 0),
        one(
            "timestamp_ntz_2024",
            "TIMESTAMP_NTZ '2024-01-02 03:04:05.123456'",
            ntz,
            micros(datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)),
        ),
        one("timestamp_ntz_before_epoch", "TIMESTAMP_NTZ '1969-12-31 23:59:59.999999'", ntz, -1),
    ]


def interval_vectors() -> list[Vector]:
    day_second = DayTimeIntervalType(DayTimeIntervalType.DAY, DayTimeIntervalType.SECOND)
    ym = YearMonthIntervalType
    calendar = CalendarIntervalType()
    return [
        one(
            "interval_day_to_second",
            "INTERVAL '3 04:05:06.789' DAY TO SECOND",
            day_second,
            3 * DAY + 4 * HOUR + 5 * MINUTE + 6_789_000,
        ),
        one(
            "interval_second",
            "INTERVAL '5' SECOND",
            DayTimeIntervalType(DayTimeIntervalType.SECOND),
            5 * SECOND,
        ),
        one("interval_1_day", "INTERVAL '1' DAY", DayTimeIntervalType(DayTimeIntervalType.DAY), DAY),
        one("interval_24_hours", "INTERVAL '24' HOUR", DayTimeIntervalType(DayTimeIntervalType.HOUR), DAY),
        one(
            "interval_negative_day_to_hour",
            "INTERVAL '-1 02' DAY TO HOUR",
            DayTimeIntervalType(DayTimeIntervalType.DAY, DayTimeIntervalType.HOUR),
            -(DAY + 2 * HOUR),
        ),
        one(
            "interval_hour_to_minute",
            "INTERVAL '10:30' HOUR TO MINUTE",
            DayTimeIntervalType(DayTimeIntervalType.HOUR, DayTimeIntervalType.MINUTE),
            10 * HOUR + 30 * MINUTE,
        ),
        one("interval_year_to_month", "INTERVAL '1-2' YEAR TO MONTH", ym(ym.YEAR, ym.MONTH), 14),
        one("interval_14_months", "INTERVAL '14' MONTH", ym(ym.MONTH), 14),
        one("interval_minus_3_years", "INTERVAL '-3' YEAR", ym(ym.YEAR), -36),
        one(
            "calendar_interval_all_fields",
            "make_interval(1, 2, 3, 4, 5, 6, 7.000008)",
            calendar,
            (14, 25, 5 * HOUR + 6 * MINUTE + 7_000_008),
        ),
        one(
            "calendar_interval_negative",
            "make_interval(0, -1, 0, -2, 0, 0, -0.5)",
            calendar,
            (-1, -2, -500_000),
        ),
        one("calendar_interval_zero", "make_interval(0, 0, 0, 0, 0, 0, 0)", calendar, (0, 0, 0)),
    ]


def array_vectors() -> list[Vector]:
    return [
        one("array_empty", "array()", arr(NullType()), []),
        one("array_empty_int", "CAST(array() AS ARRAY<INT>)", arr(INT, True), []),
        one("array_of_null", "array(NULL)", arr(NullType(), True), [None]),
        one("array_int", "array(1, 2, 3)", arr(INT), [1, 2, 3]),
        one("array_int_with_null", "array(1, NULL, 3)", arr(INT, True), [1, None, 3]),
        one("array_nested_12_3", "array(array(1, 2), array(3))", arr(arr(INT)), [[1, 2], [3]]),
        one("array_nested_1_23", "array(array(1), array(2, 3))", arr(arr(INT)), [[1], [2, 3]]),
        one("array_string", "array('a', 'b')", arr(STRING), ["a", "b"]),
        one(
            "array_of_map",
            "array(map(1, 'a'), map(2, 'b', 3, 'c'))",
            arr(mp(INT, STRING)),
            [{1: "a"}, {2: "b", 3: "c"}],
        ),
        one(
            "array_of_struct",
            "array(named_struct('x', 1, 'y', 'a'), named_struct('x', 2, 'y', NULL))",
            arr(st(("x", INT, False), ("y", STRING, True))),
            [(1, "a"), (2, None)],
        ),
    ]


def map_vectors() -> list[Vector]:
    int_string = mp(INT, STRING)
    inner = mp(STRING, INT)
    return [
        one("map_empty", "map()", mp(NullType(), NullType()), []),
        one("map_12", "map(1, 'a', 2, 'b')", int_string, [(1, "a"), (2, "b")]),
        one("map_21", "map(2, 'b', 1, 'a')", int_string, [(2, "b"), (1, "a")]),
        one(
            "map_five_entries",
            "map('e', 5L, 'd', 4L, 'c', 3L, 'b', 2L, 'a', 1L)",
            mp(STRING, LONG),
            [("e", 5), ("d", 4), ("c", 3), ("b", 2), ("a", 1)],
        ),
        one("map_null_value", "map('k', NULL)", mp(STRING, NullType(), True), [("k", None)]),
        one(
            "map_null_int_value",
            "map('k', CAST(NULL AS INT), 'j', 1)",
            mp(STRING, INT, True),
            [("k", None), ("j", 1)],
        ),
        one(
            "map_nested_ab",
            "map('outer', map('a', 1, 'b', 2))",
            mp(STRING, inner),
            [("outer", [("a", 1), ("b", 2)])],
        ),
        one(
            "map_nested_ba",
            "map('outer', map('b', 2, 'a', 1))",
            mp(STRING, inner),
            [("outer", [("b", 2), ("a", 1)])],
        ),
        one(
            "map_struct_key",
            "map(named_struct('a', 1), 'v')",
            mp(st(("a", INT, False)), STRING),
            [((1,), "v")],
        ),
        one("map_array_value", "map(1, array(1, 2))", mp(INT, arr(INT)), [(1, [1, 2])]),
        one("map_double_key_zero", "map(0.0D, 'z')", mp(DOUBLE, STRING), [(0.0, "z")]),
        one("map_double_key_minus_zero", "map(-0.0D, 'z')", mp(DOUBLE, STRING), [(-0.0, "z")]),
    ]


def struct_vectors() -> list[Vector]:
    a_int_b_string = st(("a", INT, False), ("b", STRING, False))
    nullable_fields = st(("a", INT, True), ("b", STRING, True))
    return [
        one("struct_named", "named_struct('a', 1, 'b', 'x')", a_int_b_string, (1, "x")),
        one(
            "struct_unnamed",
            "struct(1, 'x')",
            st(("col1", INT, False), ("col2", STRING, False)),
            (1, "x"),
        ),
        one("struct_null", "CAST(NULL AS STRUCT<a: INT, b: STRING>)", nullable_fields, None),
        one(
            "struct_of_nulls",
            "named_struct('a', CAST(NULL AS INT), 'b', CAST(NULL AS STRING))",
            nullable_fields,
            (None, None),
        ),
        one(
            "struct_with_map",
            "named_struct('m', map('k', 1))",
            st(("m", mp(STRING, INT), False)),
            ([("k", 1)],),
        ),
        one(
            "struct_nested",
            "named_struct('s', named_struct('x', 1, 'y', array(2)))",
            st(("s", st(("x", INT, False), ("y", arr(INT), False)), False)),
            ((1, [2]),),
        ),
        one(
            "struct_empty_string_and_null_array",
            "named_struct('s', '', 'a', CAST(NULL AS ARRAY<INT>))",
            st(("s", STRING, False), ("a", arr(INT, True), True)),
            ("", None),
        ),
    ]


def record_vectors() -> list[Vector]:
    return [
        many(
            "worked_example",
            ("1", INT, 1),
            ("'a'", STRING, "a"),
            ("CAST(NULL AS STRING)", STRING, None),
        ),
        many("pair_ab_c", ("'ab'", STRING, "ab"), ("'c'", STRING, "c")),
        many("pair_a_bc", ("'a'", STRING, "a"), ("'bc'", STRING, "bc")),
        many("pair_a_null", ("'a'", STRING, "a"), ("CAST(NULL AS STRING)", STRING, None)),
        many("pair_null_a", ("CAST(NULL AS STRING)", STRING, None), ("'a'", STRING, "a")),
        many("pair_1_null", ("1", INT, 1), ("NULL", NullType(), None)),
        many("pair_1_2", ("1", INT, 1), ("2", INT, 2)),
        many("pair_2_1", ("2", INT, 2), ("1", INT, 1)),
        many("pair_null_null", ("NULL", NullType(), None), ("NULL", NullType(), None)),
        many(
            "pair_empty_strings",
            ("''", STRING, ""),
            ("''", STRING, ""),
        ),
        many(
            "record_every_kind",
            ("true", BooleanType(), True),
            ("7Y", ByteType(), 7),
            ("-2.5D", DOUBLE, -2.5),
            ("CAST(2.50 AS DECIMAL(5,2))", DecimalType(5, 2), decimal.Decimal("2.50")),
            ("'text'", STRING, "text"),
            ("X'0102'", BinaryType(), b"\x01\x02"),
            ("DATE '2000-01-01'", DateType(), days(datetime.date(2000, 1, 1))),
            ("TIMESTAMP '2000-01-01 00:00:00+00:00'", TimestampType(), 946_684_800 * SECOND),
            ("TIMESTAMP_NTZ '2000-01-01 00:00:00'", TimestampNTZType(), 946_684_800 * SECOND),
            ("INTERVAL '1' DAY", DayTimeIntervalType(DayTimeIntervalType.DAY), DAY),
            ("INTERVAL '1' MONTH", YearMonthIntervalType(YearMonthIntervalType.MONTH), 1),
            ("make_interval(0, 1, 0, 1, 0, 0, 1)", CalendarIntervalType(), (1, 1, SECOND)),
            ("array(1)", arr(INT), [1]),
            ("map('k', 'v')", mp(STRING, STRING), [("k", "v")]),
            ("named_struct('f', 1)", st(("f", INT, False)), (1,)),
            ("'Q' COLLATE UTF8_LCASE", LCASE, "Q"),
            ("NULL", NullType(), None),
        ),
    ]


def kind_vectors() -> list[Vector]:
    # The number one in every kind: equal payload bytes, so only the tags tell them apart.
    return [
        one("kind_int_1", "1", INT, 1),
        one("kind_double_1", "1.0D", DOUBLE, 1.0),
        one("kind_decimal_1", "1BD", DecimalType(1, 0), decimal.Decimal(1)),
        one("kind_string_1", "'1'", STRING, "1"),
        one("kind_binary_01", "X'01'", BinaryType(), b"\x01"),
        one("kind_date_1", "DATE '1970-01-02'", DateType(), 1),
        one("kind_timestamp_1", "TIMESTAMP '1970-01-01 00:00:00.000001+00:00'", TimestampType(), 1),
        one("kind_timestamp_ntz_1", "TIMESTAMP_NTZ '1970-01-01 00:00:00.000001'", TimestampNTZType(), 1),
        one(
            "kind_day_time_interval_1",
            "INTERVAL '0.000001' SECOND",
            DayTimeIntervalType(DayTimeIntervalType.SECOND),
            1,
        ),
        one("kind_year_month_interval_1", "INTERVAL '1' MONTH", YearMonthIntervalType(1), 1),
        one("kind_array_1", "array(1)", arr(INT), [1]),
        one("kind_struct_1", "struct(1)", st(("col1", INT, False)), (1,)),
    ]


def tail_length_vectors() -> list[Vector]:
    # RECORD('a' * n) is 10 + n bytes: n = 0..15 reaches every length modulo 16, then a few
    # lengths that end exactly on, or just past, a block boundary.
    lengths = list(range(16)) + [22, 23, 38, 54, 55]
    return [one(f"tail_string_{n:02d}", f"repeat('a', {n})", STRING, "a" * n) for n in lengths]


def all_vectors() -> list[Vector]:
    return (
        null_vectors()
        + scalar_vectors()
        + decimal_vectors()
        + string_vectors()
        + binary_and_time_vectors()
        + interval_vectors()
        + array_vectors()
        + map_vectors()
        + struct_vectors()
        + record_vectors()
        + kind_vectors()
        + tail_length_vectors()
    )


# ---------------------------------------------------------------------------------------------
# JSON rendering


def render(value: Any, dtype: DataType) -> Any:
    """The JSON rendering of a value, as described in the module docstring."""
    if value is None:
        return None
    if isinstance(dtype, (FloatType, DoubleType)):
        return _render_float(f32(value) if isinstance(dtype, FloatType) else float(value))
    if isinstance(dtype, DecimalType):
        with decimal.localcontext() as context:
            context.prec = 100  # the default 28 digits cannot quantize DECIMAL(38, s)
            exponent = decimal.Decimal(1).scaleb(-dtype.scale)
            return format(decimal.Decimal(value).quantize(exponent), "f")
    if isinstance(dtype, StringType):
        return _render_string(value)
    if isinstance(dtype, BinaryType):
        return bytes(value).hex()
    if isinstance(dtype, CalendarIntervalType):
        return list(value)
    if isinstance(dtype, ArrayType):
        return [render(element, dtype.elementType) for element in value]
    if isinstance(dtype, MapType):
        entries = value.items() if isinstance(value, dict) else value
        return [[render(k, dtype.keyType), render(v, dtype.valueType)] for k, v in entries]
    if isinstance(dtype, StructType):
        return [render(item, field.dataType) for item, field in zip(value, dtype.fields)]
    return value


def _render_float(number: float) -> Any:
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0.0 and math.copysign(1.0, number) < 0:
        return "-0.0"
    return number


def _render_string(value: Any) -> Any:
    if isinstance(value, str):
        return value
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return {"utf8_hex": bytes(value).hex()}


def to_json(vectors: list[Vector]) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "seed": SEED,
        "vectors": [
            {
                "name": vector.name,
                "args": [
                    {"sql": arg.sql, "type": arg.dtype.jsonValue(), "value": render(arg.value, arg.dtype)}
                    for arg in vector.args
                ],
                "hex": record_hash([a.value for a in vector.args], [a.dtype for a in vector.args]).hex(),
            }
            for vector in vectors
        ],
    }


# ---------------------------------------------------------------------------------------------
# Checks


def check_coverage(vectors: list[Vector]) -> None:
    names = [vector.name for vector in vectors]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SystemExit(f"duplicate vector names: {duplicates}")
    residues = {
        len(encode_record([a.value for a in v.args], [a.dtype for a in v.args])) % 16 for v in vectors
    }
    if residues != set(range(16)):
        raise SystemExit(f"record lengths miss residues modulo 16: {set(range(16)) - residues}")


def check_with_spark(vectors: list[Vector]) -> None:
    """Evaluates every expression with Spark: the type and the value must be the declared ones.

    Runs twice, under ANSI and non-ANSI mode with different session time zones, so that the
    expressions do not depend on either setting.
    """
    os.environ["TZ"] = "UTC"
    time.tzset()  # PySpark turns collected TIMESTAMPs into naive datetimes in the local zone.
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("FATAL")
    failures = []
    for ansi, zone in (("true", "UTC"), ("false", "America/Los_Angeles")):
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        spark.conf.set("spark.sql.session.timeZone", zone)
        for vector in vectors:
            for position, arg in enumerate(vector.args):
                try:
                    problem = _check_arg(spark, arg)
                except (PySparkException, Py4JJavaError) as error:  # report every failure
                    problem = f"{type(error).__name__}: {str(error).splitlines()[0]}"
                if problem:
                    failures.append(f"{vector.name}[{position}] ansi={ansi} tz={zone}: {problem}")
    spark.stop()
    if failures:
        raise SystemExit("Spark disagrees with the declared vectors:\n" + "\n".join(failures))


def _check_arg(spark: Any, arg: Arg) -> str | None:
    frame = spark.sql(f"SELECT c, {_probe(arg.dtype)} AS p FROM (SELECT {arg.sql} AS c)")
    actual_type = frame.schema["c"].dataType
    if actual_type != arg.dtype:
        return f"type {actual_type!r} != declared {arg.dtype!r}"
    row = frame.select("p").collect()[0]
    if arg.value is None:
        return None if row.p is None else f"value {row.p!r} is not NULL"
    expected = encode_value(arg.value, arg.dtype)
    actual = encode_value(_from_probe(row.p, arg.dtype), arg.dtype)
    if actual != expected:
        return f"value {row.p!r} != declared {arg.value!r}"
    if isinstance(arg.dtype, (FloatType, DoubleType)) and not _same_float(row.p, arg.value, arg.dtype):
        return f"float {row.p!r} != declared {arg.value!r} (sign or bits)"
    return None


def _probe(dtype: DataType) -> str:
    """An expression of ``c`` that PySpark collects without losing anything the hash sees."""
    if isinstance(dtype, StringType):
        return "hex(CAST(c AS BINARY))"
    if isinstance(dtype, TimestampType):
        return "unix_micros(c)"
    if isinstance(dtype, YearMonthIntervalType):
        # Only YEAR TO MONTH intervals have both fields to extract.
        return (
            "extract(YEAR FROM CAST(c AS INTERVAL YEAR TO MONTH)) * 12"
            " + extract(MONTH FROM CAST(c AS INTERVAL YEAR TO MONTH))"
        )
    if isinstance(dtype, CalendarIntervalType):
        return (
            "array(extract(YEAR FROM c) * 12 + extract(MONTH FROM c), extract(DAY FROM c), "
            "extract(HOUR FROM c) * 3600000000L + extract(MINUTE FROM c) * 60000000L "
            "+ CAST(extract(SECOND FROM c) * 1000000 AS BIGINT))"
        )
    return "c"


def _from_probe(collected: Any, dtype: DataType) -> Any:
    """Turns what PySpark collected for ``_probe(dtype)`` into a value for the reference."""
    if collected is None:
        return None
    if isinstance(dtype, StringType):
        return bytes.fromhex(collected)
    if isinstance(dtype, CalendarIntervalType):
        return tuple(int(part) for part in collected)
    if isinstance(dtype, YearMonthIntervalType):
        return int(collected)
    return _from_spark(collected, dtype)


def _from_spark(collected: Any, dtype: DataType) -> Any:
    if collected is None:
        return None
    if isinstance(dtype, TimestampType) and isinstance(collected, datetime.datetime):
        return collected.replace(tzinfo=UTC)
    if isinstance(dtype, BinaryType):
        return bytes(collected)
    if isinstance(dtype, ArrayType):
        return [_from_spark(element, dtype.elementType) for element in collected]
    if isinstance(dtype, MapType):
        return [
            (_from_spark(k, dtype.keyType), _from_spark(v, dtype.valueType)) for k, v in collected.items()
        ]
    if isinstance(dtype, StructType):
        return tuple(_from_spark(item, field.dataType) for item, field in zip(collected, dtype.fields))
    return collected


def _same_float(actual: float, expected: float, dtype: DataType) -> bool:
    if isinstance(dtype, FloatType):
        expected = f32(expected)
    if math.isnan(expected):
        return math.isnan(actual)
    return struct.pack("<d", actual) == struct.pack("<d", expected)


def compare_with_file(document: dict[str, Any] | str, path: Path) -> None:
    written = path.read_text(encoding="utf-8")
    # A JSON document is compared as JSON; a text document (the case table) byte for byte.
    frozen = written if isinstance(document, str) else json.loads(written)
    if frozen != document:
        raise SystemExit(f"{path} differs from what this script builds")


def freeze(
    argv: list[str] | None,
    description: str,
    default_output: Path,
    build: Callable[[], tuple[int, dict[str, Any] | str]],
    checked: str = "vectors agree with Spark and the reference",
) -> int:
    """The command line of every generator: build and check the vectors, then write them once, or ``--check``.

    ``build`` returns the number of entries and the document (a JSON value, or the file's text), after
    checking them; ``checked`` says what ``--check`` verified them against.
    """
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--output", type=Path, default=default_output)
    parser.add_argument(
        "--check", action="store_true", help="rebuild and verify the existing file; write nothing"
    )
    options = parser.parse_args(argv)
    if not options.check and options.output.exists():
        raise SystemExit(f"{options.output} exists and is frozen; refusing to overwrite it")
    count, document = build()
    if options.check:
        compare_with_file(document, options.output)
        print(f"{options.output}: {count} {checked}")
        return 0
    text = document if isinstance(document, str) else json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    with open(options.output, "x", encoding="utf-8") as out:
        out.write(text)
    print(f"wrote {count} entries to {options.output}")
    return 0


def _build() -> tuple[int, dict[str, Any]]:
    vectors = all_vectors()
    check_coverage(vectors)
    check_with_spark(vectors)
    return len(vectors), to_json(vectors)


def main(argv: list[str] | None = None) -> int:
    return freeze(argv, __doc__, OUTPUT, _build)


if __name__ == "__main__":
    sys.exit(main())
