"""The Arrow type that holds values of a Spark type as Spark writes them to Parquet (key values in results)."""

from __future__ import annotations

import pyarrow as pa

from hashexpr.types import (
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
    VarcharType,
    of,
)

_ATOMIC = {
    ByteType: pa.int8(),
    ShortType: pa.int16(),
    IntegerType: pa.int32(),
    LongType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    StringType: pa.string(),
    VarcharType: pa.string(),
    BinaryType: pa.binary(),
    BooleanType: pa.bool_(),
    DateType: pa.date32(),
    TimestampType: pa.timestamp("us", tz="UTC"),
    TimestampNTZType: pa.timestamp("us"),
    NullType: pa.null(),
}


def arrow_type(dtype: DataType) -> pa.DataType:
    """The Arrow type of ``dtype``: ``decimal(p,s)`` as ``decimal128(p, s)``, ``timestamp`` as microseconds in
    UTC, ``timestamp_ntz`` as microseconds without a time zone, arrays, structs and maps likewise.

    Examples
    --------
    >>> from hashexpr.types import DecimalType, ArrayType, TimestampType
    >>> arrow_type(ArrayType(DecimalType(12, 4)))
    ListType(list<item: decimal128(12, 4)>)
    >>> arrow_type(TimestampType())
    TimestampType(timestamp[us, tz=UTC])
    """
    dtype = of(dtype)
    for spark, arrow in _ATOMIC.items():
        if type(dtype) is spark:
            return arrow
    if isinstance(dtype, DecimalType):
        return pa.decimal128(dtype.precision, dtype.scale)
    if isinstance(dtype, ArrayType):
        return pa.list_(arrow_type(dtype.elementType))
    if isinstance(dtype, StructType):
        return pa.struct([pa.field(f.name, arrow_type(f.dataType)) for f in dtype.fields])
    if isinstance(dtype, MapType):
        return pa.map_(arrow_type(dtype.keyType), arrow_type(dtype.valueType))
    raise ValueError(f"no Arrow type holds Spark's {dtype.simpleString()}")
