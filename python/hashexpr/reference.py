"""Pure-Python reference implementation of the hashexpr hash format, version 1.

This module follows ``docs/FORMAT.md`` and nothing else: it is the independent oracle the
Catalyst expression is checked against, and it generated the frozen golden vectors in
``spec/vectors-v1.json``. It needs :mod:`mmh3` and uses :mod:`pyspark.sql.types` only as type
descriptors, so it runs without a JVM.

Values are passed as plain Python objects together with their Spark SQL types:

* ``None`` is ``NULL``, for every type; it is the only value of ``NullType`` (``VOID``).
* ``BooleanType``: ``bool``.
* ``ByteType``, ``ShortType``, ``IntegerType``, ``LongType``: ``int``, range-checked against
  the type (``bool`` is rejected).
* ``FloatType``: ``float`` or ``int``, first rounded to the nearest float32 (a Spark ``FLOAT``
  is a float32) and then widened exactly. ``DoubleType``: ``float`` or ``int``.
* ``DecimalType(p, s)``: ``decimal.Decimal``, ``int`` or ``str``; the value must fit
  ``DECIMAL(p, s)`` exactly (it is never rounded).
* ``StringType``, ``CharType``, ``VarcharType``: ``str``, or ``bytes`` holding the UTF-8 bytes
  exactly as Spark stores them (possibly invalid UTF-8). ``CHAR`` values must already be padded
  the way Spark presents them.
* ``BinaryType``: ``bytes``, ``bytearray`` or ``memoryview``.
* ``DateType``: ``datetime.date`` or ``int`` days since 1970-01-01.
* ``TimestampType``: timezone-aware ``datetime.datetime`` or ``int`` microseconds since the
  epoch. A naive ``datetime`` is rejected: it names no instant.
* ``TimestampNTZType``: naive ``datetime.datetime`` or ``int`` microseconds (wall clock).
* ``DayTimeIntervalType``: ``datetime.timedelta`` or ``int`` microseconds.
* ``YearMonthIntervalType``: ``int`` months.
* ``CalendarIntervalType``: a ``(months, days, microseconds)`` tuple of ``int``.
* ``ArrayType``: ``list`` or ``tuple``.
* ``MapType``: ``dict``, or a sequence of ``(key, value)`` pairs (for keys Python cannot hash).
  Entries are hashed as given; keys cannot be ``None``.
* ``StructType``: ``tuple`` or ``list`` (positional), ``dict`` keyed by field name, or a
  ``pyspark.sql.Row`` (by field name when it has names).
* ``UserDefinedType``: the value in its SQL form, encoded with the UDT's ``sqlType()``.

Collated strings: ``UTF8_BINARY`` (the default) hashes as an ordinary string. ``UTF8_LCASE``
hashes with the collation key Spark uses: the string is decoded as UTF-8 (invalid sequences
become U+FFFD, maximal subpart by maximal subpart, as Spark's ``UTF8String.makeValid`` does),
then lower-cased one code point at a time without context: U+0130 (capital I with dot above)
becomes ``i`` followed by U+0307, the final sigma U+03C2 becomes U+03C3, and every other code
point takes its simple lower-case mapping. This matches Spark's ``CollationFactory`` key for
ordinary text and for invalid UTF-8. Code points whose case mapping is newer than the Unicode
version of this Python (:data:`unicodedata.unidata_version`) can differ from the ICU that Spark
bundles: under Python 3.11 (Unicode 14.0) against Spark 4.3.0 (ICU 78) these are 55 code points
of case pairs added in Unicode 16 and 17, such as U+1C89, U+A7CB and U+10D50..U+10D65.
Other collations (ICU collations such as ``UNICODE_CI``, and every ``*_RTRIM`` collation) raise
:class:`NotImplementedError` when a non-NULL value needs a key.

Errors: a Python value of the wrong kind raises :class:`TypeError`; a value that cannot be a
value of the Spark type (out of range, naive timestamp, too many decimal digits, ...) raises
:class:`ValueError`; a type the format rejects (``VARIANT``, ``TIME``, ``GEOMETRY``, ...) raises
:class:`ValueError` naming the type, even for a ``NULL`` value.

Examples
--------
The examples use the ``pyspark.sql.types`` classes this module imports.

>>> record_hash([1, "a", None], [IntegerType(), StringType(), StringType()]).hex()
'914bafb12d9c5a010bfa6e9e20a248de'
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections.abc import Callable, Sequence
from typing import Any

import mmh3
from pyspark.sql.types import (
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
    Row,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
    UserDefinedType,
    VarcharType,
    YearMonthIntervalType,
)

__all__ = ["FORMAT_VERSION", "SEED", "encode_record", "encode_value", "record_hash"]

SEED = 0x68617368
"""MurmurHash3 seed: the ASCII bytes ``hash`` (1751217000)."""

FORMAT_VERSION = 1
"""Version byte written at the start of every record."""

# Tags, docs/FORMAT.md section 4.
_NULL = 0x00
_BOOLEAN = 0x01
_INTEGRAL = 0x02
_FLOATING = 0x03
_DECIMAL = 0x04
_STRING = 0x05
_BINARY = 0x06
_DATE = 0x07
_TIMESTAMP = 0x08
_TIMESTAMP_NTZ = 0x09
_DAY_TIME_INTERVAL = 0x0A
_YEAR_MONTH_INTERVAL = 0x0B
_CALENDAR_INTERVAL = 0x0C
_COLLATED_STRING = 0x0D
_ARRAY = 0x10
_MAP = 0x11
_STRUCT = 0x12

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


def record_hash(values: Sequence[Any], types: Sequence[DataType]) -> bytes:
    """
    Returns the 16-byte hash of a record, as ``record_hash(v1, ..., vn)`` computes it in Spark.

    Parameters
    ----------
    values : sequence
        The record's values, one per argument, in the Python conventions of this module.
    types : sequence of :class:`pyspark.sql.types.DataType`
        The Spark SQL type of each argument.

    Returns
    -------
    bytes
        The MurmurHash3 x64 128 digest (seed :data:`SEED`) of :func:`encode_record`, 16 bytes,
        in the order ``hex(record_hash(...))`` prints them.

    Examples
    --------
    >>> record_hash([7], [ByteType()]) == record_hash([7], [LongType()])
    True
    >>> len(record_hash([], []))
    16
    """
    return _murmur3(encode_record(values, types))


def encode_record(values: Sequence[Any], types: Sequence[DataType]) -> bytes:
    """
    Returns the byte stream that :func:`record_hash` hashes (``RECORD`` in the format spec).

    Parameters
    ----------
    values : sequence
        The record's values, one per argument.
    types : sequence of :class:`pyspark.sql.types.DataType`
        The Spark SQL type of each argument; as many as there are values.

    Returns
    -------
    bytes
        The version byte, the argument count as ``u32`` and the encoding of every argument.

    Examples
    --------
    The worked example of the format spec, ``record_hash(1, 'a', NULL)``:

    >>> encode_record([1, "a", None], [IntegerType(), StringType(), StringType()]).hex(" ")
    '01 03 00 00 00 02 01 00 00 00 00 00 00 00 05 01 00 00 00 61 00'
    """
    values = list(values)
    types = list(types)
    if len(values) != len(types):
        raise ValueError(f"record has {len(values)} values but {len(types)} types")
    for dtype in types:
        _check_type(dtype)
    parts = [bytes([FORMAT_VERSION]), _u32(len(values))]
    parts.extend(_encode(value, dtype) for value, dtype in zip(values, types))
    return b"".join(parts)


def encode_value(value: Any, dtype: DataType) -> bytes:
    """
    Returns the encoding of one value (``ENC(v, T)`` in the format spec): its tag and payload.

    Parameters
    ----------
    value : object
        The value, in the Python conventions of this module; ``None`` is ``NULL``.
    dtype : :class:`pyspark.sql.types.DataType`
        The value's Spark SQL type.

    Returns
    -------
    bytes
        The self-delimiting encoding of the value.

    Examples
    --------
    >>> from decimal import Decimal
    >>> encode_value(Decimal("-1.50"), DecimalType(10, 2)).hex(" ")
    '04 01 00 00 00 01 f1'
    >>> encode_value(-0.0, DoubleType()) == encode_value(0.0, DoubleType())
    True
    >>> encode_value(None, StringType()).hex()
    '00'
    >>> encode_value("Abc", StringType("UTF8_LCASE"))
    b'\\r\\n\\x00\\x00\\x00UTF8_LCASE\\x03\\x00\\x00\\x00abc'
    """
    _check_type(dtype)
    return _encode(value, dtype)


def _murmur3(data: bytes) -> bytes:
    # mmh3 is only ever given bytes: it would encode a str itself, and crashes on lone surrogates.
    return mmh3.mmh3_x64_128_digest(bytes(data), SEED)


# ---------------------------------------------------------------------------------------------
# Types


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


def _type_name(dtype: DataType) -> str:
    return dtype.simpleString()


def _unsupported(dtype: DataType) -> ValueError:
    return ValueError(f"record_hash format v1 does not support type {_type_name(dtype)}")


def _check_type(dtype: DataType) -> None:
    """Rejects, before any value is looked at, the types that format v1 does not define."""
    if not isinstance(dtype, DataType):
        raise TypeError(f"expected a pyspark.sql.types.DataType, got {type(dtype).__name__}")
    if isinstance(dtype, UserDefinedType):
        _check_type(dtype.sqlType())
    elif isinstance(dtype, ArrayType):
        _check_type(dtype.elementType)
    elif isinstance(dtype, MapType):
        _check_type(dtype.keyType)
        _check_type(dtype.valueType)
    elif isinstance(dtype, StructType):
        for field in dtype.fields:
            _check_type(field.dataType)
    elif not isinstance(dtype, _ATOMIC_TYPES):
        raise _unsupported(dtype)


# ---------------------------------------------------------------------------------------------
# Values


def _encode(value: Any, dtype: DataType) -> bytes:
    if isinstance(dtype, UserDefinedType):
        return _encode(value, dtype.sqlType())
    if value is None:
        return bytes([_NULL])
    for type_class, encoder in _ENCODERS:
        if isinstance(dtype, type_class):
            return encoder(value, dtype)
    raise _unsupported(dtype)


def _u8(x: int) -> bytes:
    return struct.pack("<B", x)


def _u32(x: int) -> bytes:
    return struct.pack("<I", x)


def _i32(x: int) -> bytes:
    return struct.pack("<i", x)


def _i64(x: int) -> bytes:
    return struct.pack("<q", x)


def _expect(value: Any, kinds: tuple[type, ...], dtype: DataType, described: str) -> None:
    # bool is an int subclass, but True is not a number of any Spark type but BOOLEAN.
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise TypeError(f"{_type_name(dtype)} value must be {described}, got {type(value).__name__}")


def _check_range(value: int, bounds: tuple[int, int], dtype: DataType, unit: str = "") -> int:
    low, high = bounds
    if not low <= value <= high:
        raise ValueError(f"{value}{unit} is out of range for {_type_name(dtype)} (allowed {low}..{high})")
    return value


def _encode_null_type(value: Any, dtype: DataType) -> bytes:
    raise ValueError(f"the only value of {_type_name(dtype)} is None, got {value!r}")


def _encode_boolean(value: Any, dtype: DataType) -> bytes:
    _expect(value, (bool,), dtype, "a bool")
    return bytes([_BOOLEAN]) + _u8(1 if value else 0)


def _encode_integral(value: Any, dtype: DataType) -> bytes:
    _expect(value, (int,), dtype, "an int")
    _check_range(value, _INTEGRAL_RANGES[type(dtype)], dtype)
    return bytes([_INTEGRAL]) + _i64(value)


def _encode_floating(value: Any, dtype: DataType) -> bytes:
    _expect(value, (float, int), dtype, "a float")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{value} is out of range for {_type_name(dtype)}") from None
    if isinstance(dtype, FloatType):
        number = _to_float32(number, dtype)
    return bytes([_FLOATING]) + _double_bits(number)


def _to_float32(number: float, dtype: DataType) -> float:
    # A Spark FLOAT holds a float32; widening it back to a double is exact, like Java's (double) f.
    try:
        return struct.unpack("<f", struct.pack("<f", number))[0]
    except OverflowError:
        raise ValueError(f"{number} is out of range for {_type_name(dtype)}") from None


def _double_bits(number: float) -> bytes:
    if math.isnan(number):
        return _CANONICAL_NAN
    # -0.0 == 0.0, so this folds the negative zero onto the positive one.
    if number == 0.0:
        number = 0.0
    return struct.pack("<d", number)


def _encode_decimal(value: Any, dtype: DecimalType) -> bytes:
    _expect(value, (decimal.Decimal, int, str), dtype, "a decimal.Decimal, int or str")
    try:
        number = decimal.Decimal(value)
    except decimal.InvalidOperation:
        raise ValueError(f"{value!r} is not a number for {_type_name(dtype)}") from None
    unscaled = _unscaled(number, dtype)
    unscaled, scale = _normalise_decimal(unscaled, dtype.scale)
    size = _twos_complement_size(unscaled)
    return bytes([_DECIMAL]) + _i32(scale) + _u8(size) + unscaled.to_bytes(size, "little", signed=True)


def _unscaled(number: decimal.Decimal, dtype: DecimalType) -> int:
    """The unscaled integer of ``number`` at the type's scale; it must be exact and fit."""
    if not number.is_finite():
        raise ValueError(f"{number} is not a value of {_type_name(dtype)}")
    sign, digits, exponent = number.as_tuple()
    coefficient = int("".join(map(str, digits)))
    shift = exponent + dtype.scale
    if shift >= 0:
        unscaled = coefficient * 10**shift
    else:
        unscaled, remainder = divmod(coefficient, 10**-shift)
        if remainder:
            raise ValueError(
                f"{number} has more than {dtype.scale} fractional digits for {_type_name(dtype)}"
            )
    if len(str(unscaled)) > dtype.precision:
        raise ValueError(f"{number} does not fit {_type_name(dtype)}")
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
    data = _utf8_bytes(value, dtype)
    collation = _collation(dtype)
    if collation == "UTF8_BINARY":
        return bytes([_STRING]) + _u32(len(data)) + data
    if collation == "UTF8_LCASE":
        key = _utf8_lcase_key(data)
        return bytes([_COLLATED_STRING]) + _u32(len(_LCASE_NAME)) + _LCASE_NAME + _u32(len(key)) + key
    raise NotImplementedError(
        f"the Python reference does not compute collation keys for {collation}; "
        "only UTF8_BINARY and UTF8_LCASE are supported"
    )


def _collation(dtype: DataType) -> str:
    # CHAR and VARCHAR carry no collation; Spark collation names are case-insensitive.
    return str(getattr(dtype, "collation", "UTF8_BINARY")).upper()


def _utf8_bytes(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    _expect(value, (str,), dtype, "a str or bytes")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"{_type_name(dtype)} value contains a lone surrogate, which UTF-8 cannot encode; "
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
    _expect(value, (bytes, bytearray, memoryview), dtype, "bytes")
    data = bytes(value)
    return bytes([_BINARY]) + _u32(len(data)) + data


def _encode_date(value: Any, dtype: DataType) -> bytes:
    # datetime is a date subclass; accepting it would silently drop its time of day.
    if isinstance(value, datetime.datetime):
        raise TypeError(f"{_type_name(dtype)} value must be a datetime.date, got datetime")
    if isinstance(value, datetime.date):
        days = value.toordinal() - _EPOCH_DAY
    else:
        _expect(value, (int,), dtype, "a datetime.date or int days")
        days = value
    return bytes([_DATE]) + _i32(_check_range(days, _INT32_RANGE, dtype, " days"))


def _micros(delta: datetime.timedelta) -> int:
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _encode_timestamp(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, datetime.datetime):
        if value.utcoffset() is None:
            raise ValueError(
                f"{_type_name(dtype)} needs a timezone-aware datetime (or int microseconds); "
                f"a naive datetime names no instant: {value!r}"
            )
        micros = _micros(value - _EPOCH_UTC)
    else:
        _expect(value, (int,), dtype, "a timezone-aware datetime or int microseconds")
        micros = value
    return bytes([_TIMESTAMP]) + _i64(_check_range(micros, _INT64_RANGE, dtype, " us"))


def _encode_timestamp_ntz(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, datetime.datetime):
        if value.utcoffset() is not None:
            raise ValueError(f"{_type_name(dtype)} needs a naive datetime (wall clock), got {value!r}")
        micros = _micros(value - _EPOCH_NTZ)
    else:
        _expect(value, (int,), dtype, "a naive datetime or int microseconds")
        micros = value
    return bytes([_TIMESTAMP_NTZ]) + _i64(_check_range(micros, _INT64_RANGE, dtype, " us"))


def _encode_day_time_interval(value: Any, dtype: DataType) -> bytes:
    if isinstance(value, datetime.timedelta):
        micros = _micros(value)
    else:
        _expect(value, (int,), dtype, "a datetime.timedelta or int microseconds")
        micros = value
    return bytes([_DAY_TIME_INTERVAL]) + _i64(_check_range(micros, _INT64_RANGE, dtype, " us"))


def _encode_year_month_interval(value: Any, dtype: DataType) -> bytes:
    _expect(value, (int,), dtype, "an int number of months")
    months = _check_range(value, _INT32_RANGE, dtype, " months")
    return bytes([_YEAR_MONTH_INTERVAL]) + _i32(months)


def _encode_calendar_interval(value: Any, dtype: DataType) -> bytes:
    _expect(value, (tuple, list), dtype, "a (months, days, microseconds) tuple")
    if len(value) != 3:
        raise ValueError(f"{_type_name(dtype)} value must be (months, days, microseconds), got {value!r}")
    months, days, micros = value
    for part in value:
        _expect(part, (int,), dtype, "a tuple of three ints")
    return (
        bytes([_CALENDAR_INTERVAL])
        + _i32(_check_range(months, _INT32_RANGE, dtype, " months"))
        + _i32(_check_range(days, _INT32_RANGE, dtype, " days"))
        + _i64(_check_range(micros, _INT64_RANGE, dtype, " us"))
    )


def _encode_array(value: Any, dtype: ArrayType) -> bytes:
    _expect(value, (list, tuple), dtype, "a list or tuple")
    parts = [bytes([_ARRAY]), _u32(len(value))]
    parts.extend(_encode(element, dtype.elementType) for element in value)
    return b"".join(parts)


def _encode_map(value: Any, dtype: MapType) -> bytes:
    entries = _map_entries(value, dtype)
    total = 0
    for key, item in entries:
        if key is None:
            raise ValueError(f"{_type_name(dtype)} keys cannot be NULL")
        digest = _murmur3(_encode(key, dtype.keyType) + _encode(item, dtype.valueType))
        total += int.from_bytes(digest, "little")
    # Addition, not XOR, so that equal entries accumulate instead of cancelling.
    return bytes([_MAP]) + _u32(len(entries)) + (total % 2**128).to_bytes(16, "little")


def _map_entries(value: Any, dtype: MapType) -> list[tuple[Any, Any]]:
    if isinstance(value, dict):
        return list(value.items())
    _expect(value, (list, tuple), dtype, "a dict or a sequence of (key, value) pairs")
    entries = []
    for entry in value:
        if not isinstance(entry, (list, tuple)) or len(entry) != 2:
            raise ValueError(f"{_type_name(dtype)} entry must be a (key, value) pair: {entry!r}")
        entries.append((entry[0], entry[1]))
    return entries


def _encode_struct(value: Any, dtype: StructType) -> bytes:
    fields = _struct_values(value, dtype)
    parts = [bytes([_STRUCT]), _u32(len(fields))]
    parts.extend(_encode(item, field.dataType) for item, field in zip(fields, dtype.fields))
    return b"".join(parts)


def _struct_values(value: Any, dtype: StructType) -> list[Any]:
    if isinstance(value, Row) and hasattr(value, "__fields__"):
        names = list(value.__fields__)
        if len(set(names)) != len(names):
            raise ValueError(f"Row has duplicate field names {names}; pass a tuple instead")
        value = dict(zip(names, value))
    if isinstance(value, dict):
        return _struct_values_by_name(value, dtype)
    _expect(value, (tuple, list), dtype, "a tuple, list, dict or Row")
    if len(value) != len(dtype.fields):
        raise ValueError(f"{_type_name(dtype)} has {len(dtype.fields)} fields, got {len(value)} values")
    return list(value)


def _struct_values_by_name(value: dict[str, Any], dtype: StructType) -> list[Any]:
    names = dtype.names
    if len(set(names)) != len(names):
        raise ValueError(f"{_type_name(dtype)} has duplicate field names; pass a tuple instead")
    missing = [name for name in names if name not in value]
    unexpected = [name for name in value if name not in names]
    if missing or unexpected:
        raise ValueError(
            f"{_type_name(dtype)} value does not match its fields: missing {missing}, unexpected {unexpected}"
        )
    return [value[name] for name in names]


_ENCODERS: tuple[tuple[Any, Callable[[Any, Any], bytes]], ...] = (
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
    (ArrayType, _encode_array),
    (MapType, _encode_map),
    (StructType, _encode_struct),
)
