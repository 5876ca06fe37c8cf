"""What a PostgreSQL side of a comparison hands back and refuses, value by value: the rows it fetches as Arrow
arrays of the Spark types they hash as, and the values no Spark type holds, found by column and key after a pass
failed on one.

Dates and timestamps come as day and microsecond counts, which hold ``infinity`` and ``-infinity`` as DuckDB
holds them (the largest and smallest counts; no Python ``datetime`` holds them); a numeric without a declared
scale comes as a decimal wide enough for the values fetched, or as text where none is.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pyarrow as pa

from hashexpr.arrow.arrow_types import arrow_type
from hashexpr.reconcile.columns import SidePlan
from hashexpr.sql.postgres import NUMERIC_INFINITY, NUMERIC_NAN, Postgres, UnconstrainedNumeric
from hashexpr.types import (
    ArrayType,
    DataType,
    DateType,
    DecimalType,
    StructType,
    TimestampNTZType,
    TimestampType,
)


class Dialect(Postgres):
    """The ``postgres`` dialect as a comparison writes it: ``infinity`` and ``-infinity`` dates and timestamps hash
    as DuckDB holds them, so that they compare exactly against DuckDB (and the Parquet files it writes)."""

    infinite = True


DIALECT = Dialect()


def has_struct(dtype: DataType) -> bool:
    if isinstance(dtype, StructType):
        return True
    return isinstance(dtype, ArrayType) and has_struct(dtype.elementType)


def counted(value: str, dtype: DataType) -> str:
    """A date's day count or a timestamp's microsecond count (infinity as DuckDB holds it)."""
    if isinstance(dtype, DateType):
        return DIALECT.days(value)
    return DIALECT.micros(value, isinstance(dtype, TimestampType))


def arrow_values(values: list[Any], dtype: DataType) -> pa.Array:
    """The values psycopg read for a column of ``dtype`` (as :meth:`PostgresSource._key_value` selects it)."""
    if has_struct(dtype):
        return pa.array(values, pa.string())
    if isinstance(dtype, UnconstrainedNumeric):
        return any_decimals(values)
    target = arrow_type(dtype)
    counted = dtype.elementType if isinstance(dtype, ArrayType) else dtype
    if isinstance(counted, (DateType, TimestampType, TimestampNTZType)):
        width = pa.int32() if isinstance(counted, DateType) else pa.int64()
        shape = pa.list_(width) if isinstance(dtype, ArrayType) else width
        return pa.array(values, shape).cast(target)
    if pa.types.is_timestamp(target) and target.tz is not None:
        values = [v.astimezone(datetime.timezone.utc) if v is not None else None for v in values]
    if pa.types.is_decimal(target):
        values = [decimal.Decimal(v) if v is not None else None for v in values]
    return pa.array(values, target)


def any_decimals(values: list[Any]) -> pa.Array:
    """Values of a numeric without a declared scale: a decimal128 wide enough for all of them, or their text
    where no decimal128 holds them."""
    numbers = [decimal.Decimal(v) for v in values if v is not None]
    finite = [v for v in numbers if v.is_finite()]
    if len(finite) == len(numbers):
        scale = max((max(0, -v.as_tuple().exponent) for v in finite), default=0)
        whole = max((len(str(abs(int(v)))) if abs(v) >= 1 else 1 for v in finite), default=1)
        if whole + scale <= 38:
            return pa.array(
                [None if v is None else decimal.Decimal(v) for v in values], pa.decimal128(whole + scale, scale)
            )
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def problems(column: str, dtype: DataType) -> list[tuple[str, str]]:
    """Predicates that find a value of ``column`` that no Spark type holds, each with what it is."""
    if isinstance(dtype, DecimalType):
        found = [(f"{column} = CAST('NaN' AS numeric)", NUMERIC_NAN.removeprefix("hashexpr: "))]
        if isinstance(dtype, UnconstrainedNumeric):
            found += [
                (f"CAST({column} AS text) IN ('Infinity', '-Infinity')", NUMERIC_INFINITY.removeprefix("hashexpr: ")),
                (too_wide(column), "a value of more than 38 digits, which no Spark decimal holds"),
            ]
        return found
    if isinstance(dtype, (TimestampType, TimestampNTZType)):
        # Spark's last microsecond: PostgreSQL holds 30 years more, whose microseconds overflow 64 bits.
        last = "294247-01-10 04:00:54.775807" + ("+00" if isinstance(dtype, TimestampType) else "")
        kind = "timestamp with time zone" if isinstance(dtype, TimestampType) else "timestamp without time zone"
        return [
            (
                f"{column} > CAST('{last}' AS {kind}) AND {column} <> CAST('infinity' AS {kind})",
                "a timestamp after 294247-01-10 04:00:54.775807, which no Spark timestamp holds",
            )
        ]
    if isinstance(dtype, ArrayType):
        found = [(f"array_ndims({column}) > 1", "a multi-dimensional array, which no Spark array is")]
        if isinstance(dtype.elementType, DecimalType):
            found.append(
                (
                    f"EXISTS (SELECT 1 FROM unnest({column}) AS hx_e(v) WHERE v = CAST('NaN' AS numeric))",
                    "an array holding a numeric NaN, which no Spark decimal holds",
                )
            )
        return found
    return []


def too_wide(column: str) -> str:
    """Whether a finite numeric has more than 38 digits in all (those before the point and the scale it needs),
    which no Spark decimal holds."""
    whole = f"CASE WHEN trunc(abs({column})) = 0 THEN 0 ELSE length(CAST(trunc(abs({column})) AS text)) END"
    return (
        f"(CAST({column} AS text) NOT IN ('NaN', 'Infinity', '-Infinity') AND "
        f"{whole} + scale(trim_scale({column})) > 38)"
    )


def key_text(plan: SidePlan, values: tuple[Any, ...]) -> str:
    """``key id=2``, or ``key (a=1, b='x')``, from the key columns' texts."""
    parts = [f"{name}=" + _key_value(v, t) for (name, t), v in zip(plan.key, values)]
    return "key " + (parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")")


def _key_value(value: Any, dtype: DataType) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, datetime.datetime):
        return repr(value.isoformat(sep=" "))
    if isinstance(value, (datetime.date, datetime.time)):
        return repr(value.isoformat())
    return repr(value) if _texts_quoted(dtype) else str(value)


def _texts_quoted(dtype: DataType) -> bool:
    return not isinstance(dtype, (DecimalType,)) and dtype.typeName() not in (
        "byte", "short", "integer", "long", "float", "double", "boolean",
    )
