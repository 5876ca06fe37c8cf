"""Spark SQL types that not every supported pyspark has as a Python class."""

from __future__ import annotations

from pyspark.sql.types import DataType

try:
    from pyspark.sql.types import CalendarIntervalType
except ImportError:  # pyspark 3.5: CALENDAR INTERVAL has a Python class from 4.0 on

    class CalendarIntervalType(DataType):  # type: ignore[no-redef]
        """CALENDAR INTERVAL, as pyspark 4 names it, so the reference can describe such values on pyspark 3.5."""

        def simpleString(self) -> str:
            return "interval"


__all__ = ["CalendarIntervalType"]
