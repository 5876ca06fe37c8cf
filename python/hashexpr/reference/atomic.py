"""The encodings of atomic values, and the little-endian writers every encoding is made of.

``docs/FORMAT.md`` section 4: booleans, integral numbers (section 4.1), floating point (4.2), decimals (4.3),
strings and binary (4.4), collated strings (4.5), dates, timestamps and intervals; the writers ``u8``,
``u32``, ``i32`` and ``i64`` of section 2; and :data:`ATOMIC_ENCODERS`, the encoder of each atomic type.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections.abc import Callable
from typing import Any

from hashexpr.reference.tags import (
    BINARY,
    BOOLEAN,
    CALENDAR_INTERVAL,
    COLLATED_STRING,
    DATE,
    DAY_TIME_INTERVAL,
    DECIMAL,
    FLOATING,
    INTEGRAL,
    STRING,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    YEAR_MONTH_INTERVAL,
)
from hashexpr.reference.types import type_name
from hashexpr.types import (
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
    NullType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
    YearMonthIntervalType,
)

_INT32_RANGE = (-(2**31), 2**31 - 1)
_INT64_RANGE = (-(2**63), 2**63 - 1)
_INTEGRAL_RANGES: dict[type, tuple[int, int]] = {
    ByteType: (-(2**7), 2**7 - 1),
    ShortType: (-(2**15), 2**15 - 1),
    IntegerType: _INT32_RANGE,
    LongType: _INT64_RANGE,
}

# The canonical quiet NaN 0x7FF8000000000000, as i64 bytes.
_CANONICAL_NAN = struct.pack("<Q", 0x7FF8000000000000)

_EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_NTZ = datetime.datetime(1970, 1, 1)

_MAX_DECIMAL_BYTES = 17
_LCASE_NAME = b"UTF8_LCASE"


def u8(x: int) -> bytes:
    return struct.pack("<B", x)


def u32(x: int) -> bytes:
    return struct.pack("<I", x)


def _i32(x: int) -> bytes:
    return struct.pack("<i", x)


def i64(x: int) -> bytes:
    return struct.pack("<q", x)


def expect(value: Any, kinds: tuple[type, ...], dtype: DataType, described: str) -> None:
    # bool is an int subclass, but True is not a number of any Spark type but BOOLEAN.
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise TypeError(f"{type_name(dtype)} value must be {described}, got {type(value).__name__}")


def _check_range(value: int, bounds: tuple[int, int], dtype: DataType, unit: str = "") -> int:
    low, high = bounds
    if not low <= value <= high:
        raise ValueError(f"{value}{unit} is out of range for {type_name(dtype)} (allowed {low}..{high})")
    return value


def _encode_null_type(value: Any, dtype: DataType) -> bytes:
    raise ValueError(f"the only value of {type_name(dtype)} is None, got {value!r}")


def _encode_boolean(value: Any, dtype: DataType) -> bytes:
    expect(value, (bool,), dtype, "a bool")
    return bytes([BOOLEAN]) + u8(1 if value else 0)


def _encode_integral(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, float):
        raise TypeError(
            f"{type_name(dtype)} value must be an int, got float {value!r} (pandas makes an integer column "
            "with missing values float64: use the nullable Int64 dtype, or None for NULL)"
        )
    expect(value, (int,), dtype, "an int")
    _check_range(value, _INTEGRAL_RANGES[type(dtype)], dtype)
    return bytes([INTEGRAL]) + i64(value)


def _encode_floating(value: Any, dtype: DataType) -> bytes:
    expect(value, (float, int), dtype, "a float")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{value} is out of range for {type_name(dtype)}") from None
    if isinstance(dtype, FloatType):
        number = _to_float32(number, dtype)
    return bytes([FLOATING]) + _double_bits(number)


def _to_float32(number: float, dtype: DataType) -> float:
    # A Spark FLOAT holds a float32; widening it back to a double is exact, like Java's (double) f.
    try:
        return struct.unpack("<f", struct.pack("<f", number))[0]
    except OverflowError:
        raise ValueError(f"{number} is out of range for {type_name(dtype)}") from None


def _double_bits(number: float) -> bytes:
    if math.isnan(number):
        return _CANONICAL_NAN
    # -0.0 == 0.0, so this folds the negative zero onto the positive one.
    if number == 0.0:
        number = 0.0
    return struct.pack("<d", number)


def _encode_decimal(value: Any, dtype: DecimalType) -> bytes:
    expect(value, (decimal.Decimal, int, str), dtype, "a decimal.Decimal, int or str")
    try:
        number = decimal.Decimal(value)
    except decimal.InvalidOperation:
        raise ValueError(f"{value!r} is not a number for {type_name(dtype)}") from None
    unscaled = _unscaled(number, dtype)
    unscaled, scale = _normalise_decimal(unscaled, dtype.scale)
    size = _twos_complement_size(unscaled)
    return bytes([DECIMAL]) + _i32(scale) + u8(size) + unscaled.to_bytes(size, "little", signed=True)


def _unscaled(number: decimal.Decimal, dtype: DecimalType) -> int:
    """The unscaled integer of ``number`` at the type's scale; it must be exact and fit."""
    if not number.is_finite():
        raise ValueError(f"{number} is not a value of {type_name(dtype)}")
    sign, digits, exponent = number.as_tuple()
    coefficient = int("".join(map(str, digits)))
    shift = exponent + dtype.scale
    if shift >= 0:
        unscaled = coefficient * 10**shift
    else:
        unscaled, remainder = divmod(coefficient, 10**-shift)
        if remainder:
            raise ValueError(f"{number} has more than {dtype.scale} fractional digits for {type_name(dtype)}")
    if len(str(unscaled)) > dtype.precision:
        raise ValueError(f"{number} does not fit {type_name(dtype)}")
    return -unscaled if sign else unscaled


def _normalise_decimal(unscaled: int, scale: int) -> tuple[int, int]:
    # Strip trailing zeros so that the same number hashes the same at every precision and scale.
    if unscaled == 0:
        return 0, 0
    while unscaled % 10 == 0:
        unscaled //= 10
        scale -= 1
    return unscaled, scale


def _twos_complement_size(number: int) -> int:
    magnitude = number if number >= 0 else ~number
    size = magnitude.bit_length() // 8 + 1
    if size > _MAX_DECIMAL_BYTES:
        raise ValueError(f"decimal unscaled value {number} needs more than 17 bytes")
    return size


def _encode_string(value: Any, dtype: DataType) -> bytes:
    data = utf8_bytes(value, dtype)
    collation = _collation(dtype)
    if collation == "UTF8_BINARY":
        return bytes([STRING]) + u32(len(data)) + data
    if collation == "UTF8_LCASE":
        key = _utf8_lcase_key(data)
        return bytes([COLLATED_STRING]) + u32(len(_LCASE_NAME)) + _LCASE_NAME + u32(len(key)) + key
    raise NotImplementedError(
        f"the Python reference does not compute collation keys for {collation}; "
        "only UTF8_BINARY and UTF8_LCASE are supported"
    )


def _collation(dtype: DataType) -> str:
    # CHAR and VARCHAR carry no collation; Spark collation names are case-insensitive.
    return str(getattr(dtype, "collation", "UTF8_BINARY")).upper()


def utf8_bytes(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    expect(value, (str,), dtype, "a str or bytes")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"{type_name(dtype)} value contains a lone surrogate, which UTF-8 cannot encode; "
            "pass the exact bytes as bytes instead"
        ) from None


def _utf8_lcase_key(data: bytes) -> bytes:
    # errors="replace" substitutes U+FFFD per maximal subpart, as Spark's UTF8String.makeValid.
    text = data.decode("utf-8", errors="replace")
    return "".join(map(_lower_code_point, text)).encode("utf-8")


def _lower_code_point(char: str) -> str:
    # Spark lower-cases without context: no final-sigma rule, and both sigmas compare equal.
    if char == "\u0130":
        return "i\u0307"
    if char == "\u03c2":
        return "\u03c3"
    return char.lower()


def _encode_binary(value: Any, dtype: DataType) -> bytes:
    expect(value, (bytes, bytearray, memoryview), dtype, "bytes")
    data = bytes(value)
    return bytes([BINARY]) + u32(len(data)) + data


def _encode_date(value: Any, dtype: DataType) -> bytes:
    # datetime is a date subclass; accepting it would silently drop its time of day.
    if isinstance(value, datetime.datetime):
        raise TypeError(f"{type_name(dtype)} value must be a datetime.date, got datetime")
    if isinstance(value, datetime.date):
        days = value.toordinal() - _EPOCH_DAY
    else:
        expect(value, (int,), dtype, "a datetime.date or int days")
        days = value
    return bytes([DATE]) + _i32(_check_range(days, _INT32_RANGE, dtype, " days"))


def _micros(delta: datetime.timedelta) -> int:
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _encode_timestamp(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, datetime.datetime):
        if value.utcoffset() is None:
            raise ValueError(
                f"{type_name(dtype)} needs a timezone-aware datetime (or int microseconds); "
                f"a naive datetime names no instant: {value!r}"
            )
        micros = _micros(value - _EPOCH_UTC)
    else:
        expect(value, (int,), dtype, "a timezone-aware datetime or int microseconds")
        micros = value
    return bytes([TIMESTAMP]) + i64(_check_range(micros, _INT64_RANGE, dtype, " us"))


def _encode_timestamp_ntz(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, datetime.datetime):
        if value.utcoffset() is not None:
            raise ValueError(f"{type_name(dtype)} needs a naive datetime (wall clock), got {value!r}")
        micros = _micros(value - _EPOCH_NTZ)
    else:
        expect(value, (int,), dtype, "a naive datetime or int microseconds")
        micros = value
    return bytes([TIMESTAMP_NTZ]) + i64(_check_range(micros, _INT64_RANGE, dtype, " us"))


def _encode_day_time_interval(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, datetime.timedelta):
        micros = _micros(value)
    else:
        expect(value, (int,), dtype, "a datetime.timedelta or int microseconds")
        micros = value
    return bytes([DAY_TIME_INTERVAL]) + i64(_check_range(micros, _INT64_RANGE, dtype, " us"))


def _encode_year_month_interval(value: Any, dtype: DataType) -> bytes:
    expect(value, (int,), dtype, "an int number of months")
    months = _check_range(value, _INT32_RANGE, dtype, " months")
    return bytes([YEAR_MONTH_INTERVAL]) + _i32(months)


def _encode_calendar_interval(value: Any, dtype: DataType) -> bytes:
    expect(value, (tuple, list), dtype, "a (months, days, microseconds) tuple")
    if len(value) != 3:
        raise ValueError(f"{type_name(dtype)} value must be (months, days, microseconds), got {value!r}")
    months, days, micros = value
    for part in value:
        expect(part, (int,), dtype, "a tuple of three ints")
    return (
        bytes([CALENDAR_INTERVAL])
        + _i32(_check_range(months, _INT32_RANGE, dtype, " months"))
        + _i32(_check_range(days, _INT32_RANGE, dtype, " days"))
        + i64(_check_range(micros, _INT64_RANGE, dtype, " us"))
    )


# The encoder of every atomic type, in the order the type is looked up.
ATOMIC_ENCODERS: tuple[tuple[Any, Callable[[Any, Any], bytes]], ...] = (
    (NullType, _encode_null_type),
    (BooleanType, _encode_boolean),
    ((ByteType, ShortType, IntegerType, LongType), _encode_integral),
    ((FloatType, DoubleType), _encode_floating),
    (DecimalType, _encode_decimal),
    ((StringType, CharType, VarcharType), _encode_string),
    (BinaryType, _encode_binary),
    (DateType, _encode_date),
    (TimestampType, _encode_timestamp),
    (TimestampNTZType, _encode_timestamp_ntz),
    (DayTimeIntervalType, _encode_day_time_interval),
    (YearMonthIntervalType, _encode_year_month_interval),
    (CalendarIntervalType, _encode_calendar_interval),
)
