"""Spark SQL types and classes that differ between the supported pyspark versions, and :mod:`hashexpr.types`
given to PySpark."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import types as T

from hashexpr import types as H


def is_column(value: object) -> bool:
    """Whether ``value`` is a column expression, classic or Spark Connect.

    pyspark 3.5's Spark Connect column is not a :class:`pyspark.sql.Column` (from 4.0 on it is); it is told by
    its class rather than imported, since importing Connect modules without their dependencies may exit.
    """
    return isinstance(value, Column) or any(
        k.__name__ == "Column" and k.__module__ == "pyspark.sql.connect.column" for k in type(value).__mro__
    )


try:
    from pyspark.sql.types import CalendarIntervalType
except ImportError:  # pyspark 3.5: CALENDAR INTERVAL has a Python class from 4.0 on

    class CalendarIntervalType(T.DataType):  # type: ignore[no-redef]
        """CALENDAR INTERVAL, as pyspark 4 names it, so the reference can describe such values on pyspark 3.5."""

        def simpleString(self) -> str:
            return "interval"


def to_spark(dtype: Any) -> T.DataType:
    """A :mod:`hashexpr.types` type as PySpark's (a PySpark type as it is).

    Examples
    --------
    >>> to_spark(H.ArrayType(H.DecimalType(12, 4)))
    ArrayType(DecimalType(12,4), True)
    """
    if isinstance(dtype, T.DataType):
        return dtype
    if isinstance(dtype, H.DecimalType):
        return T.DecimalType(dtype.precision, dtype.scale)
    if isinstance(dtype, H.StringType):
        return T.StringType() if dtype.collation == "UTF8_BINARY" else T.StringType(dtype.collation)
    if isinstance(dtype, (H.CharType, H.VarcharType)):
        return getattr(T, type(dtype).__name__)(dtype.length)
    if isinstance(dtype, (H.DayTimeIntervalType, H.YearMonthIntervalType)):
        return getattr(T, type(dtype).__name__)(dtype.startField, dtype.endField)
    if isinstance(dtype, H.ArrayType):
        return T.ArrayType(to_spark(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, H.MapType):
        return T.MapType(to_spark(dtype.keyType), to_spark(dtype.valueType), dtype.valueContainsNull)
    if isinstance(dtype, H.StructType):
        return T.StructType([T.StructField(f.name, to_spark(f.dataType), f.nullable, f.metadata) for f in dtype.fields])
    if isinstance(dtype, H.CalendarIntervalType):
        return CalendarIntervalType()
    atomic = getattr(T, type(dtype).__name__, None)
    if isinstance(dtype, H.DataType) and atomic is not None and not isinstance(dtype, (H.OtherType, H.UserDefinedType)):
        return atomic()
    raise ValueError(f"PySpark has no type for {dtype.simpleString()}")


__all__ = ["CalendarIntervalType", "is_column", "to_spark"]
