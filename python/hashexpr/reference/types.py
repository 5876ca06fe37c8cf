"""The type walk: the Spark SQL types format v1 defines, their names, and their text in a fingerprint.

The types are those of ``docs/FORMAT.md`` section 4; they are checked before any value is looked at, so that
every other type is rejected even for a ``NULL`` value (section 4.8). :func:`spark_type_string` writes a type
as the fingerprint's schema hashes it (section 5).
"""

from __future__ import annotations

from typing import Any

from hashexpr.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CalendarIntervalType,
    CharType,
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
    StructField,  # noqa: F401 (the examples use it)
    StructType,
    TimestampNTZType,
    TimestampType,
    UserDefinedType,
    VarcharType,
    YearMonthIntervalType,
    of,
)


def spark_type_string(dtype: DataType) -> str:
    """
    Returns the canonical string of a type, as the fingerprint's schema hashes it (format section 5).

    Nullability is left out; struct field names are written in backticks (a backtick doubled);
    a user-defined type is written as its SQL type; a string type as its values hash: ``CHAR(n)``,
    ``VARCHAR(n)`` and ``UTF8_BINARY`` strings as ``string``, other collations as
    ``string collate <name>``; every other type is Spark's ``simpleString``.

    Parameters
    ----------
    dtype : :class:`hashexpr.types.DataType` or :class:`pyspark.sql.types.DataType`
        The type.

    Returns
    -------
    str
        The type string, e.g. ``'array<int>'`` or ``'struct<`a`:decimal(10,2)>'``.

    Examples
    --------
    >>> spark_type_string(ArrayType(IntegerType(), containsNull=False))
    'array<int>'
    >>> spark_type_string(MapType(StringType(), LongType()))
    'map<string,bigint>'
    >>> spark_type_string(StructType([StructField("a`b", DecimalType(10, 2)), StructField("c", ByteType())]))
    'struct<`a``b`:decimal(10,2),`c`:tinyint>'
    >>> spark_type_string(DayTimeIntervalType())
    'interval day to second'
    >>> spark_type_string(CharType(3)), spark_type_string(StringType("UTF8_BINARY"))
    ('string', 'string')
    """
    dtype = of(dtype)
    if isinstance(dtype, UserDefinedType):
        return spark_type_string(dtype.sqlType())
    if isinstance(dtype, ArrayType):
        return f"array<{spark_type_string(dtype.elementType)}>"
    if isinstance(dtype, MapType):
        return f"map<{spark_type_string(dtype.keyType)},{spark_type_string(dtype.valueType)}>"
    if isinstance(dtype, StructType):
        fields = (f"`{f.name.replace('`', '``')}`:{spark_type_string(f.dataType)}" for f in dtype.fields)
        return f"struct<{','.join(fields)}>"
    if isinstance(dtype, (CharType, VarcharType)):
        return "string"
    return dtype.simpleString()


_ATOMIC_TYPES = (
    NullType,
    BooleanType,
    ByteType,
    ShortType,
    IntegerType,
    LongType,
    FloatType,
    DoubleType,
    DecimalType,
    StringType,
    CharType,
    VarcharType,
    BinaryType,
    DateType,
    TimestampType,
    TimestampNTZType,
    DayTimeIntervalType,
    YearMonthIntervalType,
    CalendarIntervalType,
)


def type_name(dtype: DataType) -> str:
    return dtype.simpleString()


def unsupported(dtype: DataType) -> ValueError:
    return ValueError(f"record_hash format v1 does not support type {type_name(dtype)}")


def checked(dtype: Any) -> DataType:
    """``dtype`` as a :mod:`hashexpr.types` type (a PySpark type converted), checked by :func:`check_type`."""
    dtype = of(dtype)
    check_type(dtype)
    return dtype


def check_type(dtype: DataType) -> None:
    """Rejects, before any value is looked at, the types that format v1 does not define."""
    if not isinstance(dtype, DataType):
        raise TypeError(f"expected a Spark SQL type, got {type(dtype).__name__}")
    if isinstance(dtype, UserDefinedType):
        check_type(dtype.sqlType())
    elif isinstance(dtype, ArrayType):
        check_type(dtype.elementType)
    elif isinstance(dtype, MapType):
        check_type(dtype.keyType)
        check_type(dtype.valueType)
    elif isinstance(dtype, StructType):
        for field in dtype.fields:
            check_type(field.dataType)
    elif not isinstance(dtype, _ATOMIC_TYPES):
        raise unsupported(dtype)
