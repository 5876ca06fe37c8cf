"""Spark SQL's data types, without PySpark: what the format, the SQL writers, the Arrow engine and reconcile
describe values with.

The classes mirror :mod:`pyspark.sql.types` (the same names, constructors, attributes, ``simpleString`` and
``typeName``), so that code reads the same either way; :func:`of` takes a PySpark type (by its class and
attributes, without importing PySpark) and gives this module's. hashexpr's Spark modules convert back
(:func:`hashexpr.spark.types.to_spark`) where PySpark itself needs a type.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ArrayType",
    "BinaryType",
    "BooleanType",
    "ByteType",
    "CalendarIntervalType",
    "CharType",
    "DataType",
    "DateType",
    "DayTimeIntervalType",
    "DecimalType",
    "DoubleType",
    "FloatType",
    "IntegerType",
    "LongType",
    "MapType",
    "NullType",
    "OtherType",
    "ShortType",
    "StringType",
    "StructField",
    "StructType",
    "TimestampNTZType",
    "TimestampType",
    "UserDefinedType",
    "VarcharType",
    "VariantType",
    "YearMonthIntervalType",
    "of",
]


class DataType:
    """A Spark SQL type. Two types are equal when they are of one class with equal attributes; a PySpark type
    equals the type :func:`of` gives for it."""

    #: Spark's name of the type's kind (``typeName``) and its SQL text (``simpleString``) where they are fixed.
    _name = ""
    _sql = ""

    def simpleString(self) -> str:
        return self._sql

    def typeName(self) -> str:
        return self._name

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DataType) and _is_spark_type(other):
            other = of(other)
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _atomic(name: str, type_name: str, sql: str, doc: str) -> type[DataType]:
    return type(name, (DataType,), {"_name": type_name, "_sql": sql, "__doc__": doc, "__module__": __name__})


NullType = _atomic("NullType", "void", "void", "VOID: the type of NULL alone.")
BooleanType = _atomic("BooleanType", "boolean", "boolean", "BOOLEAN.")
ByteType = _atomic("ByteType", "byte", "tinyint", "TINYINT, 8 bits.")
ShortType = _atomic("ShortType", "short", "smallint", "SMALLINT, 16 bits.")
IntegerType = _atomic("IntegerType", "integer", "int", "INT, 32 bits.")
LongType = _atomic("LongType", "long", "bigint", "BIGINT, 64 bits.")
FloatType = _atomic("FloatType", "float", "float", "FLOAT, a 32-bit float.")
DoubleType = _atomic("DoubleType", "double", "double", "DOUBLE, a 64-bit float.")
BinaryType = _atomic("BinaryType", "binary", "binary", "BINARY.")
DateType = _atomic("DateType", "date", "date", "DATE: days since 1970-01-01.")
TimestampType = _atomic("TimestampType", "timestamp", "timestamp", "TIMESTAMP: an instant, microseconds.")
TimestampNTZType = _atomic(
    "TimestampNTZType", "timestamp_ntz", "timestamp_ntz", "TIMESTAMP_NTZ: a wall clock, microseconds."
)
CalendarIntervalType = _atomic("CalendarIntervalType", "interval", "interval", "CALENDAR INTERVAL.")
VariantType = _atomic("VariantType", "variant", "variant", "VARIANT.")


class DecimalType(DataType):
    """DECIMAL(precision, scale)."""

    _name = "decimal"

    def __init__(self, precision: int = 10, scale: int = 0) -> None:
        self.precision = precision
        self.scale = scale

    def simpleString(self) -> str:
        return f"decimal({self.precision},{self.scale})"

    def __repr__(self) -> str:
        return f"DecimalType({self.precision},{self.scale})"


class StringType(DataType):
    """STRING, with a collation (``UTF8_BINARY``, bytes compared as they are, unless said)."""

    _name = "string"

    def __init__(self, collation: str = "UTF8_BINARY") -> None:
        self.collation = collation

    def simpleString(self) -> str:
        return "string" if self.collation == "UTF8_BINARY" else f"string collate {self.collation}"

    def __repr__(self) -> str:
        return "StringType()" if self.collation == "UTF8_BINARY" else f"StringType({self.collation!r})"


class CharType(DataType):
    """CHAR(n): a string padded to n characters."""

    _name = "char"

    def __init__(self, length: int) -> None:
        self.length = length

    def simpleString(self) -> str:
        return f"char({self.length})"

    def __repr__(self) -> str:
        return f"CharType({self.length})"


class VarcharType(DataType):
    """VARCHAR(n): a string of at most n characters."""

    _name = "varchar"

    def __init__(self, length: int) -> None:
        self.length = length

    def simpleString(self) -> str:
        return f"varchar({self.length})"

    def __repr__(self) -> str:
        return f"VarcharType({self.length})"


class _AnsiInterval(DataType):
    _fields: tuple[str, ...] = ()
    _name = ""

    def __init__(self, startField: int | None = None, endField: int | None = None) -> None:
        start = 0 if startField is None else startField
        end = (len(self._fields) - 1 if startField is None else start) if endField is None else endField
        self.startField, self.endField = start, end

    def simpleString(self) -> str:
        first, last = self._fields[self.startField], self._fields[self.endField]
        return f"interval {first}" if first == last else f"interval {first} to {last}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.startField}, {self.endField})"


class DayTimeIntervalType(_AnsiInterval):
    """INTERVAL DAY TO SECOND (and its narrower field ranges)."""

    DAY, HOUR, MINUTE, SECOND = 0, 1, 2, 3
    _fields = ("day", "hour", "minute", "second")
    _name = "daytimeinterval"


class YearMonthIntervalType(_AnsiInterval):
    """INTERVAL YEAR TO MONTH (and its narrower field ranges)."""

    YEAR, MONTH = 0, 1
    _fields = ("year", "month")
    _name = "yearmonthinterval"


class ArrayType(DataType):
    """ARRAY<element>."""

    _name = "array"

    def __init__(self, elementType: DataType, containsNull: bool = True) -> None:
        self.elementType = elementType
        self.containsNull = containsNull

    def simpleString(self) -> str:
        return f"array<{self.elementType.simpleString()}>"

    def __repr__(self) -> str:
        return f"ArrayType({self.elementType!r}, {self.containsNull})"


class MapType(DataType):
    """MAP<key, value>."""

    _name = "map"

    def __init__(self, keyType: DataType, valueType: DataType, valueContainsNull: bool = True) -> None:
        self.keyType = keyType
        self.valueType = valueType
        self.valueContainsNull = valueContainsNull

    def simpleString(self) -> str:
        return f"map<{self.keyType.simpleString()},{self.valueType.simpleString()}>"

    def __repr__(self) -> str:
        return f"MapType({self.keyType!r}, {self.valueType!r}, {self.valueContainsNull})"


class StructField(DataType):
    """A field of a struct: its name, type and whether it may be NULL."""

    def __init__(
        self, name: str, dataType: DataType, nullable: bool = True, metadata: dict[str, Any] | None = None
    ) -> None:
        self.name = name
        self.dataType = dataType
        self.nullable = nullable
        self.metadata = metadata or {}

    def simpleString(self) -> str:
        return f"{self.name}:{self.dataType.simpleString()}"

    def __repr__(self) -> str:
        return f"StructField({self.name!r}, {self.dataType!r}, {self.nullable})"


class StructType(DataType):
    """STRUCT<name: type, ...>."""

    _name = "struct"

    def __init__(self, fields: list[StructField] | None = None) -> None:
        self.fields = list(fields or [])

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def fieldNames(self) -> list[str]:
        return self.names

    def simpleString(self) -> str:
        return f"struct<{','.join(f.simpleString() for f in self.fields)}>"

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, key: int | str) -> StructField:
        if isinstance(key, int):
            return self.fields[key]
        for f in self.fields:
            if f.name == key:
                return f
        raise KeyError(f"no field named {key!r}")

    def __repr__(self) -> str:
        return f"StructType([{', '.join(map(repr, self.fields))}])"


class UserDefinedType(DataType):
    """A user-defined type: hashed as its SQL type, its values given in their SQL form."""

    _name = "udt"

    def __init__(self, sql_type: DataType, name: str = "udt") -> None:
        self._sql_type = sql_type
        self._udt_name = name

    def sqlType(self) -> DataType:
        return self._sql_type

    def simpleString(self) -> str:
        return self._udt_name

    def __repr__(self) -> str:
        return f"UserDefinedType({self._sql_type!r}, {self._udt_name!r})"


class OtherType(DataType):
    """A type Spark has and format v1 does not define (``time``, ``geometry``, ...), by its SQL text: it is
    named in refusals, never hashed."""

    def __init__(self, sql: str) -> None:
        self.sql = sql

    def simpleString(self) -> str:
        return self.sql

    def typeName(self) -> str:
        return self.sql.split("(")[0]

    def __repr__(self) -> str:
        return f"OtherType({self.sql!r})"


_ATOMIC_BY_NAME: dict[str, type[DataType]] = {
    cls.__name__: cls
    for cls in (
        NullType,
        BooleanType,
        ByteType,
        ShortType,
        IntegerType,
        LongType,
        FloatType,
        DoubleType,
        BinaryType,
        DateType,
        TimestampType,
        TimestampNTZType,
        CalendarIntervalType,
        VariantType,
    )
}


def _is_spark_type(value: object) -> bool:
    return any(k.__name__ == "DataType" for k in type(value).__mro__)


def of(dtype: Any) -> DataType:
    """``dtype`` as this module's type: itself, or a :mod:`pyspark.sql.types` type converted by its class and
    attributes (PySpark is not imported: a type that exists came with it).

    Examples
    --------
    >>> of(ArrayType(DecimalType(12, 4)))
    ArrayType(DecimalType(12,4), True)
    """
    if isinstance(dtype, DataType):
        return dtype
    kinds = [k.__name__ for k in type(dtype).__mro__]
    if not _is_spark_type(dtype):
        raise TypeError(
            f"expected a Spark SQL type (a DataType of hashexpr.types or pyspark.sql.types), got {type(dtype).__name__}"
        )
    name = type(dtype).__name__
    if "UserDefinedType" in kinds:
        return UserDefinedType(of(dtype.sqlType()), dtype.simpleString())
    if name in _ATOMIC_BY_NAME:
        return _ATOMIC_BY_NAME[name]()
    if name == "DecimalType":
        return DecimalType(dtype.precision, dtype.scale)
    if name == "StringType":
        return StringType(getattr(dtype, "collation", "UTF8_BINARY") or "UTF8_BINARY")
    if name in ("CharType", "VarcharType"):
        return (CharType if name == "CharType" else VarcharType)(dtype.length)
    if name == "DayTimeIntervalType":
        return DayTimeIntervalType(dtype.startField, dtype.endField)
    if name == "YearMonthIntervalType":
        return YearMonthIntervalType(dtype.startField, dtype.endField)
    if name == "ArrayType":
        return ArrayType(of(dtype.elementType), dtype.containsNull)
    if name == "MapType":
        return MapType(of(dtype.keyType), of(dtype.valueType), dtype.valueContainsNull)
    if name == "StructType":
        return StructType([StructField(f.name, of(f.dataType), f.nullable, dict(f.metadata or {})) for f in dtype.fields])
    return OtherType(dtype.simpleString())
