"""Spark types and the vectors' values as Arrow data: the Arrow type Spark reads back as each Spark type."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
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

_ATOMIC = {
    NullType: pa.null(),
    BooleanType: pa.bool_(),
    ByteType: pa.int8(),
    ShortType: pa.int16(),
    IntegerType: pa.int32(),
    LongType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    BinaryType: pa.binary(),
    DateType: pa.date32(),
    TimestampType: pa.timestamp("us", tz="UTC"),
    TimestampNTZType: pa.timestamp("us"),
}


def arrow_type(dtype: DataType, strings_as_binary: bool = False) -> pa.DataType | None:
    """The Arrow type of ``dtype``, or ``None`` when Spark reads no Arrow type as it (intervals, collations)."""
    if type(dtype) in _ATOMIC:
        return _ATOMIC[type(dtype)]
    if isinstance(dtype, StringType):
        if (
            str(getattr(dtype, "collation", "UTF8_BINARY")).upper() != "UTF8_BINARY"
            or type(dtype) is not StringType
        ):
            return None
        return pa.binary() if strings_as_binary else pa.string()
    if isinstance(dtype, DecimalType):
        return pa.decimal128(dtype.precision, dtype.scale)
    if isinstance(dtype, ArrayType):
        element = arrow_type(dtype.elementType, strings_as_binary)
        return None if element is None else pa.list_(element)
    if isinstance(dtype, MapType):
        key, value = (
            arrow_type(dtype.keyType, strings_as_binary),
            arrow_type(dtype.valueType, strings_as_binary),
        )
        # pyarrow refuses a map whose keys are of the null type (keys are never NULL).
        return None if key in (None, pa.null()) or value is None else pa.map_(key, value)
    if isinstance(dtype, StructType):
        fields = [(f.name, arrow_type(f.dataType, strings_as_binary)) for f in dtype.fields]
        return None if any(t is None for _, t in fields) else pa.struct(fields)
    return None


def _binary_strings(value: Any, dtype: DataType) -> Any:
    """A value with its strings as UTF-8 bytes, for an array whose strings are binary until viewed."""
    if value is None:
        return None
    if isinstance(dtype, StringType):
        return value.encode("utf-8") if isinstance(value, str) else value
    if isinstance(dtype, ArrayType):
        return [_binary_strings(v, dtype.elementType) for v in value]
    if isinstance(dtype, MapType):
        return [(_binary_strings(k, dtype.keyType), _binary_strings(v, dtype.valueType)) for k, v in value]
    if isinstance(dtype, StructType):
        return {f.name: _binary_strings(v, f.dataType) for v, f in zip(value, dtype.fields)}
    return value


def arrow_column(values: list[Any], dtype: DataType) -> pa.Array:
    """An Arrow array of ``values`` (the reference's Python conventions) of type ``arrow_type(dtype)``.

    Strings are built as binary and then viewed as strings, so that bytes that are not UTF-8 (which Spark
    strings can hold) reach the engine as they are.
    """
    binary = arrow_type(dtype, strings_as_binary=True)
    array = pa.array([_binary_strings(v, dtype) for v in values], binary)
    return array.view(arrow_type(dtype))
