"""Spark SQL types and classes that differ between the supported pyspark versions."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql.types import DataType


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

    class CalendarIntervalType(DataType):  # type: ignore[no-redef]
        """CALENDAR INTERVAL, as pyspark 4 names it, so the reference can describe such values on pyspark 3.5."""

        def simpleString(self) -> str:
            return "interval"


__all__ = ["CalendarIntervalType", "is_column"]
