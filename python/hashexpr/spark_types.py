"""Spark SQL types and classes that differ between the supported pyspark versions."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql.types import DataType


def _column_classes() -> tuple[type, ...]:
    """pyspark 3.5's Spark Connect column is not a :class:`pyspark.sql.Column` (from 4.0 on it is)."""
    try:
        from pyspark.sql.connect.column import Column as ConnectColumn
    except ImportError:  # the Connect client's dependencies (grpcio, ...) are not installed
        return (Column,)
    return (Column,) if issubclass(ConnectColumn, Column) else (Column, ConnectColumn)


#: The classes of a column expression, classic or Spark Connect, for ``isinstance``.
COLUMN_CLASSES: tuple[type, ...] = _column_classes()

try:
    from pyspark.sql.types import CalendarIntervalType
except ImportError:  # pyspark 3.5: CALENDAR INTERVAL has a Python class from 4.0 on

    class CalendarIntervalType(DataType):  # type: ignore[no-redef]
        """CALENDAR INTERVAL, as pyspark 4 names it, so the reference can describe such values on pyspark 3.5."""

        def simpleString(self) -> str:
            return "interval"


__all__ = ["COLUMN_CLASSES", "CalendarIntervalType"]
