"""What a MySQL or MariaDB side of a comparison hands back and refuses, value by value: the rows it fetches as Arrow
arrays of the Spark types they hash as, and the values no Spark type holds, found by column and key after a pass
failed on one.

Dates and timestamps come as day and microsecond counts and doubles as their IEEE bits: the text the server would
send for a FLOAT has 6 digits on MySQL, and no count depends on the connection's time zone.
"""

from __future__ import annotations

import decimal
import struct
from typing import Any

import pyarrow as pa

from hashexpr.arrow.arrow_types import arrow_type
from hashexpr.sql.mysql import MySQL, calendar_day
from hashexpr.types import (
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    TimestampNTZType,
    TimestampType,
)

DIALECT = MySQL()


def selected(value: str, dtype: DataType) -> str:
    """SQL that fetches a value of ``dtype`` for :func:`arrow_values`."""
    if isinstance(dtype, DateType):
        return DIALECT.days(value)
    if isinstance(dtype, TimestampType):
        return DIALECT.instant_micros(value)
    if isinstance(dtype, TimestampNTZType):
        return DIALECT.clock_micros(value)
    if isinstance(dtype, (FloatType, DoubleType)):
        return f"LPAD(HEX({DIALECT.double_bits(value, isinstance(dtype, FloatType))}), 16, '0')"
    return value


def arrow_values(values: list[Any], dtype: DataType) -> pa.Array:
    """The values the driver read for a column of ``dtype`` (as :func:`selected` selects them)."""
    target = arrow_type(dtype)
    if isinstance(dtype, DateType):
        return pa.array(values, pa.int32()).cast(target)
    if isinstance(dtype, (TimestampType, TimestampNTZType)):
        return pa.array(values, pa.int64()).cast(target)
    if isinstance(dtype, (FloatType, DoubleType)):
        doubles = [None if v is None else struct.unpack(">d", bytes.fromhex(v))[0] for v in values]
        # A FLOAT's double is its exact widening: back to 4 bytes without rounding.
        return pa.array(doubles, pa.float64()).cast(target)
    if isinstance(dtype, BooleanType):
        return pa.array([None if v is None else bool(v) for v in values], target)
    if isinstance(dtype, DecimalType):
        return pa.array([None if v is None else decimal.Decimal(v) for v in values], target)
    return pa.array(values, target)


#: What a DATE or DATETIME that is no calendar day is, in a refusal.
NO_DAY_TEXT = "a zero or invalid date (a year, month or day of 0, or a day past its month's end)"


def problems(column: str, dtype: DataType) -> list[tuple[str, str]]:
    """Predicates that find a value of ``column`` that no Spark type holds, each with what it is."""
    if isinstance(dtype, (DateType, TimestampNTZType)):
        return [(f"{column} IS NOT NULL AND NOT {calendar_day(column)}", NO_DAY_TEXT)]
    if isinstance(dtype, TimestampType):
        return [
            (
                f"{column} IS NOT NULL AND (UNIX_TIMESTAMP({column}) = 0 OR UNIX_TIMESTAMP({column}) IS NULL)",
                "a zero TIMESTAMP, which no instant is",
            )
        ]
    if isinstance(dtype, BooleanType):
        return [(f"{column} NOT IN (0, 1)", "a boolean (TINYINT(1) or BIT(1)) neither 0 nor 1")]
    return []
