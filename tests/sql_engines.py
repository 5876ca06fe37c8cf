"""Values as SQL literals of each engine, and the engines that evaluate hashexpr.sql's expressions.

A value is a Python value in ``hashexpr.reference``'s conventions (ints for dates and timestamps, tuples for
structs, (key, value) pairs for maps); :func:`literal` writes it as a constant of exactly its Spark type in
PostgreSQL, DuckDB or Spark SQL. PostgreSQL has no anonymous struct type: :class:`PostgresTypes` creates a
composite type per struct type.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import math
from collections.abc import Sequence
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from hashexpr.sql.types import type_name

_EPOCH = datetime.datetime(1970, 1, 1)


def _float_text(value: float, nan: str, infinity: str) -> str:
    if math.isnan(value):
        return nan
    if math.isinf(value):
        return infinity if value > 0 else "-" + infinity
    return repr(value)


def _clock(micros: int) -> str:
    return (_EPOCH + datetime.timedelta(microseconds=micros)).isoformat(sep=" ", timespec="microseconds")


def _decimal_text(value: Any) -> str:
    return format(decimal.Decimal(value), "f")


def _utf8(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


class PostgresTypes:
    """PostgreSQL type names of Spark types; a composite type is created (once) for each struct type."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.created: dict[str, str] = {}

    def name(self, dtype: DataType) -> str:
        atomic = {
            ByteType: "smallint", ShortType: "smallint", IntegerType: "integer", LongType: "bigint",
            FloatType: "real", DoubleType: "double precision", StringType: "text", BinaryType: "bytea",
            BooleanType: "boolean", DateType: "date", TimestampType: "timestamp with time zone",
            TimestampNTZType: "timestamp without time zone", NullType: "text",
        }
        if type(dtype) in atomic:
            return atomic[type(dtype)]
        if isinstance(dtype, DecimalType):
            return f"numeric({dtype.precision}, {dtype.scale})"
        if isinstance(dtype, ArrayType):
            return f"{self.name(dtype.elementType)}[]"
        if isinstance(dtype, StructType):
            text = type_name(dtype)
            if text not in self.created:
                name = "hx_struct_" + hashlib.sha256(text.encode()).hexdigest()[:12]
                fields = ", ".join(f'"{f.name}" {self.name(f.dataType)}' for f in dtype.fields)
                self.connection.execute(f"DROP TYPE IF EXISTS {name} CASCADE")
                self.connection.execute(f"CREATE TYPE {name} AS ({fields})")
                self.created[text] = name
            return self.created[text]
        raise ValueError(f"no PostgreSQL type for {dtype}")


def duckdb_type(dtype: DataType) -> str:
    atomic = {
        ByteType: "TINYINT", ShortType: "SMALLINT", IntegerType: "INTEGER", LongType: "BIGINT",
        FloatType: "FLOAT", DoubleType: "DOUBLE", StringType: "VARCHAR", BinaryType: "BLOB",
        BooleanType: "BOOLEAN", DateType: "DATE", TimestampType: "TIMESTAMPTZ", TimestampNTZType: "TIMESTAMP",
        NullType: "VARCHAR",
    }
    if type(dtype) in atomic:
        return atomic[type(dtype)]
    if isinstance(dtype, DecimalType):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    if isinstance(dtype, ArrayType):
        return f"{duckdb_type(dtype.elementType)}[]"
    if isinstance(dtype, StructType):
        return "STRUCT(" + ", ".join(f'"{f.name}" {duckdb_type(f.dataType)}' for f in dtype.fields) + ")"
    if isinstance(dtype, MapType):
        return f"MAP({duckdb_type(dtype.keyType)}, {duckdb_type(dtype.valueType)})"
    raise ValueError(f"no DuckDB type for {dtype}")


def spark_type(dtype: DataType) -> str:
    return type_name(dtype)


def literal(value: Any, dtype: DataType, dialect: str, pg_types: PostgresTypes | None = None) -> str:
    """``value`` as a constant of Spark type ``dtype`` (PySpark's, or hashexpr.types') in ``dialect``."""
    from hashexpr.spark.types import to_spark

    dtype = to_spark(dtype)
    if dialect == "postgres":
        assert pg_types is not None
        return _postgres(value, dtype, pg_types)
    if dialect == "duckdb":
        return _duckdb(value, dtype)
    if dialect == "mysql":
        return _mysql(value, dtype)
    return _spark(value, dtype)


def _postgres(value: Any, dtype: DataType, types: PostgresTypes) -> str:
    name = types.name(dtype)
    if value is None or isinstance(dtype, NullType):
        return f"CAST(NULL AS {name})"
    if isinstance(dtype, (ByteType, ShortType, IntegerType, LongType)):
        return f"CAST({value} AS {name})"
    if isinstance(dtype, (FloatType, DoubleType)):
        return f"CAST('{_float_text(value, 'NaN', 'Infinity')}' AS {name})"
    if isinstance(dtype, DecimalType):
        return f"CAST('{_decimal_text(value)}' AS {name})"
    if isinstance(dtype, StringType):
        return f"convert_from(decode('{_utf8(value).hex()}', 'hex'), 'UTF8')"
    if isinstance(dtype, BinaryType):
        return f"decode('{bytes(value).hex()}', 'hex')"
    if isinstance(dtype, BooleanType):
        return "TRUE" if value else "FALSE"
    if isinstance(dtype, DateType):
        return f"(DATE '1970-01-01' + {value})"
    # As text: PostgreSQL multiplies an interval in floating point, which rounds far microseconds.
    if isinstance(dtype, TimestampType):
        return f"TIMESTAMPTZ '{_clock(value)}+00'"
    if isinstance(dtype, TimestampNTZType):
        return f"TIMESTAMP '{_clock(value)}'"
    if isinstance(dtype, ArrayType):
        items = ", ".join(_postgres(v, dtype.elementType, types) for v in value)
        return f"CAST(ARRAY[{items}]::{types.name(dtype.elementType)}[] AS {name})"
    if isinstance(dtype, StructType):
        items = ", ".join(_postgres(v, f.dataType, types) for v, f in zip(value, dtype.fields))
        return f"CAST(ROW({items}) AS {name})"
    raise ValueError(f"no PostgreSQL literal for {dtype}")


def _duckdb(value: Any, dtype: DataType) -> str:
    name = duckdb_type(dtype)
    if value is None or isinstance(dtype, NullType):
        return f"CAST(NULL AS {name})"
    if isinstance(dtype, (ByteType, ShortType, IntegerType, LongType)):
        return f"CAST({value} AS {name})"
    if isinstance(dtype, (FloatType, DoubleType)):
        return f"CAST('{_float_text(value, 'nan', 'inf')}' AS {name})"
    if isinstance(dtype, DecimalType):
        return f"CAST('{_decimal_text(value)}' AS {name})"
    if isinstance(dtype, StringType):
        return f"decode(from_hex('{_utf8(value).hex()}'))"
    if isinstance(dtype, BinaryType):
        return f"from_hex('{bytes(value).hex()}')"
    if isinstance(dtype, BooleanType):
        return "TRUE" if value else "FALSE"
    if isinstance(dtype, DateType):
        return f"CAST(DATE '1970-01-01' + {value} AS DATE)"
    if isinstance(dtype, TimestampType):
        return f"(TIMESTAMPTZ '1970-01-01 00:00:00+00' + to_microseconds({value}))"
    if isinstance(dtype, TimestampNTZType):
        return f"make_timestamp({value})"
    if isinstance(dtype, ArrayType):
        return f"CAST([{', '.join(_duckdb(v, dtype.elementType) for v in value)}] AS {name})"
    if isinstance(dtype, StructType):
        items = ", ".join(f"'{f.name}': {_duckdb(v, f.dataType)}" for v, f in zip(value, dtype.fields))
        return f"CAST({{{items}}} AS {name})"
    if isinstance(dtype, MapType):
        keys = ", ".join(_duckdb(k, dtype.keyType) for k, _ in value)
        items = ", ".join(_duckdb(v, dtype.valueType) for _, v in value)
        return f"CAST(MAP([{keys}], [{items}]) AS {name})"
    raise ValueError(f"no DuckDB literal for {dtype}")


#: The session time zone of the MySQL/MariaDB tests: an offset (named zones need the server's zone tables).
MYSQL_TIME_ZONE = "+05:30"
_MYSQL_OFFSET = datetime.timedelta(hours=5, minutes=30)


def mysql_holds(value: Any, dtype: DataType) -> bool:
    """Whether MySQL/MariaDB holds the value: no array, struct or map, no NaN or infinity, dates of years 1 to
    9999, instants inside TIMESTAMP's range (UNIX_TIMESTAMP's), strings that are UTF-8."""
    if isinstance(dtype, (ArrayType, StructType, MapType)):
        return False
    if value is None:
        return True
    if isinstance(dtype, (FloatType, DoubleType)):
        return math.isfinite(value)
    if isinstance(dtype, StringType):
        return isinstance(value, str)
    if isinstance(dtype, DateType):
        return datetime.date(1, 1, 1).toordinal() <= value + _EPOCH.toordinal() <= datetime.date(9999, 12, 31).toordinal()
    if isinstance(dtype, TimestampNTZType):
        return -62135596800 * 10**6 <= value < 253402300800 * 10**6
    if isinstance(dtype, TimestampType):
        return 10**6 <= value < 2**31 * 10**6
    return True


def _mysql(value: Any, dtype: DataType) -> str:
    if isinstance(dtype, NullType):
        return "NULL"
    if isinstance(dtype, (ByteType, ShortType, IntegerType, LongType)):
        return "CAST(NULL AS SIGNED)" if value is None else f"CAST({value} AS SIGNED)"
    if isinstance(dtype, (FloatType, DoubleType)):
        kind = "FLOAT" if isinstance(dtype, FloatType) else "DOUBLE"
        return f"CAST(NULL AS {kind})" if value is None else f"CAST('{_float_text(value, '', '')}' AS {kind})"
    if isinstance(dtype, DecimalType):
        kind = f"DECIMAL({dtype.precision}, {dtype.scale})"
        return f"CAST(NULL AS {kind})" if value is None else f"CAST('{_decimal_text(value)}' AS {kind})"
    if isinstance(dtype, StringType):
        return "CAST(NULL AS CHAR)" if value is None else f"CONVERT(X'{_utf8(value).hex()}' USING utf8mb4)"
    if isinstance(dtype, BinaryType):
        return "CAST(NULL AS BINARY)" if value is None else f"X'{bytes(value).hex()}'"
    if isinstance(dtype, BooleanType):
        return "CAST(NULL AS SIGNED)" if value is None else ("TRUE" if value else "FALSE")
    if isinstance(dtype, DateType):
        if value is None:
            return "CAST(NULL AS DATE)"
        return f"CAST('{(_EPOCH + datetime.timedelta(days=value)).date().isoformat()}' AS DATE)"
    if isinstance(dtype, TimestampNTZType):
        return "CAST(NULL AS DATETIME(6))" if value is None else f"CAST('{_clock(value)}' AS DATETIME(6))"
    if isinstance(dtype, TimestampType):
        # A DATETIME, read as an instant in the session's time zone: the wall clock there.
        if value is None:
            return "CAST(NULL AS DATETIME(6))"
        clock = _EPOCH + _MYSQL_OFFSET + datetime.timedelta(microseconds=value)
        return f"CAST('{clock.isoformat(sep=' ', timespec='microseconds')}' AS DATETIME(6))"
    raise ValueError(f"no MySQL literal for {dtype}")


def _spark(value: Any, dtype: DataType) -> str:
    name = spark_type(dtype)
    if value is None or isinstance(dtype, NullType):
        return f"CAST(NULL AS {name})"
    if isinstance(dtype, (ByteType, ShortType, IntegerType, LongType)):
        return f"CAST({value} AS {name})"
    if isinstance(dtype, (FloatType, DoubleType)):
        return f"CAST('{_float_text(value, 'NaN', 'Infinity')}' AS {name})"
    if isinstance(dtype, DecimalType):
        return f"CAST('{_decimal_text(value)}' AS {name})"
    if isinstance(dtype, StringType):
        return f"CAST(X'{_utf8(value).hex()}' AS STRING)"
    if isinstance(dtype, BinaryType):
        return f"X'{bytes(value).hex()}'"
    if isinstance(dtype, BooleanType):
        return "TRUE" if value else "FALSE"
    if isinstance(dtype, DateType):
        return f"date_from_unix_date({value})"
    if isinstance(dtype, TimestampType):
        return f"timestamp_micros({value})"
    if isinstance(dtype, TimestampNTZType):
        clock = _EPOCH + datetime.timedelta(microseconds=value)
        seconds = decimal.Decimal(clock.second) + decimal.Decimal(clock.microsecond) / 1000000
        return (
            f"make_timestamp_ntz({clock.year}, {clock.month}, {clock.day}, {clock.hour}, {clock.minute}, "
            f"CAST('{seconds:.6f}' AS DECIMAL(8, 6)))"
        )
    if isinstance(dtype, ArrayType):
        return f"CAST(array({', '.join(_spark(v, dtype.elementType) for v in value)}) AS {name})"
    if isinstance(dtype, StructType):
        items = ", ".join(f"'{f.name}', {_spark(v, f.dataType)}" for v, f in zip(value, dtype.fields))
        return f"CAST(named_struct({items}) AS {name})"
    if isinstance(dtype, MapType):
        items = ", ".join(f"{_spark(k, dtype.keyType)}, {_spark(v, dtype.valueType)}" for k, v in value)
        return f"CAST(map({items}) AS {name})"
    raise ValueError(f"no Spark literal for {dtype}")


def column_names(count: int) -> list[str]:
    """Column names that need quoting in every dialect: mixed case, a space, a dot, both quote characters."""
    return [f'Col {i}.x"`' for i in range(count)]


def rows_query(dialect: str, names: Sequence[str], rows: Sequence[Sequence[str]], expressions: Sequence[str]) -> str:
    """``SELECT expressions FROM`` rows of literals whose columns are ``names`` (one query for every row).

    PostgreSQL would inline literals into the expressions (and fold them); OFFSET 0 keeps them values. Spark
    reads the rows as an inline table, a local relation that its optimizer projects in one interpreted pass;
    rows of a UNION ALL would each compile the expressions, with their literals inlined, as generated code
    (tens of seconds for a batch; test_sql_plain_spark runs the projection as generated code).
    """
    from hashexpr.sql import dialect as sql_dialect

    quote = sql_dialect(dialect).quote
    if dialect == "spark":
        values = ", ".join("(" + ", ".join([str(i), *row]) + ")" for i, row in enumerate(rows))
        columns = ", ".join(["hx_row", *map(quote, names)])
        return f"SELECT {', '.join(expressions)} FROM VALUES {values} AS hx_rows({columns}) ORDER BY hx_row"
    selects = [
        f"SELECT {i} AS hx_row" + "".join(f", {value} AS {quote(name)}" for value, name in zip(row, names))
        for i, row in enumerate(rows)
    ]
    source = " UNION ALL ".join(selects)
    fence = " OFFSET 0" if dialect == "postgres" else ""
    return f"SELECT {', '.join(expressions)} FROM ({source}{fence}) AS hx_rows ORDER BY hx_row"
