"""The Spark type each MySQL and MariaDB column type is hashed as, and how a column is read for it.

The types are those Spark's JDBC reader gives a MySQL table (``TINYINT(1)`` a boolean, unsigned integers one size
up, ``BIGINT UNSIGNED`` a ``DECIMAL(20,0)``, ``DATETIME`` a wall clock, ``TIMESTAMP`` an instant), so that a
table compares with its copy in a lake. A ``CHAR(n)`` is read padded to n characters, as PostgreSQL's
``character(n)`` is and Spark's ``CHAR(n)`` reads. A type without an exact counterpart is refused, saying what to
do instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hashexpr.reconcile.catalog import CAST_IT, Refused
from hashexpr.types import (
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
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
)


@dataclass(frozen=True)
class MySQLColumn:
    """A column as ``information_schema.COLUMNS`` describes it."""

    name: str
    column_type: str  # tinyint(1) unsigned, decimal(18,2), enum('a','b'), ...
    data_type: str  # tinyint, decimal, enum, ...
    charset: str | None
    length: int | None  # characters, for CHAR(n)


#: Signed and unsigned integers: the Spark type that holds every value.
_INTEGERS: dict[str, tuple[DataType, DataType]] = {
    "tinyint": (ByteType(), ShortType()),
    "smallint": (ShortType(), IntegerType()),
    "mediumint": (IntegerType(), IntegerType()),
    "int": (IntegerType(), LongType()),
    "integer": (IntegerType(), LongType()),
    "bigint": (LongType(), DecimalType(20, 0)),
}

#: Types read as their text: an ENUM's or SET's value, a JSON document's text (MySQL's normal form; MariaDB's as
#: stored), MariaDB's UUID and INET types in their canonical form.
_AS_TEXT = {"enum", "set", "json", "uuid", "inet4", "inet6"}

_TEXTS = {"varchar", "tinytext", "text", "mediumtext", "longtext", "char"}
_BINARIES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}

_WHY = {
    "time": "TIME is a duration of up to 838 hours, which no Spark type holds",
    "geometry": "spatial types have no Spark type",
    "vector": "VECTOR has no Spark type",
}
_SPATIAL = {"point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection",
            "geomcollection"}  # fmt: skip


def mysql_spark_type(column: MySQLColumn) -> DataType:
    """The Spark type a column hashes as; :class:`~hashexpr.reconcile.catalog.Refused` where none is exact.

    Examples
    --------
    >>> mysql_spark_type(MySQLColumn("flag", "tinyint(1)", "tinyint", None, None))
    BooleanType()
    >>> mysql_spark_type(MySQLColumn("n", "bigint unsigned", "bigint", None, None))
    DecimalType(20,0)
    >>> mysql_spark_type(MySQLColumn("t", "time(3)", "time", None, None))
    Traceback (most recent call last):
        ...
    hashexpr.reconcile.catalog.Refused: TIME is a duration of up to 838 hours, which no Spark type holds; cast it in a view (to text, or to a type in docs/SQL.md's table)
    """
    kind = column.data_type.lower()
    shown = column.column_type.lower()
    unsigned = " unsigned" in shown
    if kind == "tinyint" and re.match(r"tinyint\(1\)", shown):
        # MySQL's BOOLEAN; a value other than 0 and 1 is refused where it is read.
        return BooleanType()
    if kind in _INTEGERS:
        return _INTEGERS[kind][1 if unsigned else 0]
    if kind in ("decimal", "numeric"):
        match = re.match(r"(?:decimal|numeric)\((\d+)(?:,(\d+))?\)", shown)
        precision, scale = (int(match.group(1)), int(match.group(2) or 0)) if match else (10, 0)
        if precision > 38:
            raise Refused(
                f"DECIMAL({precision},{scale}) has more digits than a Spark decimal's 38; {CAST_IT}, e.g. "
                f"DECIMAL(38,{min(scale, 38)}) where its values fit"
            )
        return DecimalType(precision, scale)
    if kind == "float":
        return FloatType()
    if kind in ("double", "real", "double precision"):
        return DoubleType()
    if kind == "bit":
        width = int(re.match(r"bit\((\d+)\)", shown).group(1)) if "(" in shown else 1
        return BooleanType() if width == 1 else (LongType() if width < 64 else DecimalType(20, 0))
    if kind == "year":
        return IntegerType()
    if kind == "date":
        return DateType()
    if kind == "datetime":
        return TimestampNTZType()
    if kind == "timestamp":
        return TimestampType()
    if kind in _TEXTS:
        return BinaryType() if column.charset == "binary" else StringType()
    if kind in _BINARIES:
        return BinaryType()
    if kind in _AS_TEXT:
        return StringType()
    why = _WHY.get("geometry" if kind in _SPATIAL else kind, f"MySQL's {kind.upper()} has no Spark type hashexpr knows")
    raise Refused(f"{why}; {CAST_IT}")


def mysql_projection(column: MySQLColumn, dtype: DataType) -> str | None:
    """How the column is read for its Spark type (``{0}`` is the quoted column), or None to read it as it is."""
    kind = column.data_type.lower()
    if kind == "char" and isinstance(dtype, StringType) and column.length:
        # CHAR values are stored padded and read with the padding removed: padded again, as Spark reads CHAR(n).
        return f"RPAD({{0}}, {column.length}, ' ')"
    if kind == "bit" or kind == "year":
        return "({0} + 0)"
    if kind in _AS_TEXT:
        return "CONVERT({0} USING utf8mb4)"
    return None
