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
Beyond positional records (format sections 1 to 4), the module computes by-name records
(:func:`record_hash_by_name`, section 6), business keys (:func:`record_key`, section 9, with the
frozen Unicode 14.0.0 case mapping of :func:`case_map`) and dataset fingerprints
(:func:`dataset_fingerprint`, section 5), also of Arrow tables and pandas DataFrames
(:func:`fingerprint_arrow`, :func:`fingerprint_pandas`), which need :mod:`pyarrow` (and
:mod:`pandas`) only when called.

The examples use the ``pyspark.sql.types`` classes this module imports.

>>> record_hash([1, "a", None], [IntegerType(), StringType(), StringType()]).hex()
'914bafb12d9c5a010bfa6e9e20a248de'
"""

from __future__ import annotations

import contextvars
import datetime
import decimal
import functools
import hashlib
import hmac
import importlib.resources
import math
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import mmh3
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
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
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    UserDefinedType,
    VarcharType,
    YearMonthIntervalType,
)

from hashexpr.options import ALGORITHMS, CASES, FINGERPRINT_ALGORITHMS, KeyOptions, word
from hashexpr.spark_types import CalendarIntervalType

if TYPE_CHECKING:
    import pandas
    import pyarrow
    import pyarrow.parquet

__all__ = [
    "ALGORITHMS",
    "FORMAT_VERSION",
    "SEED",
    "case_map",
    "dataset_fingerprint",
    "encode_key",
    "encode_record",
    "encode_record_by_name",
    "encode_value",
    "fingerprint_arrow",
    "fingerprint_pandas",
    "record_hash",
    "record_hash_by_name",
    "record_key",
    "schema_hash",
    "spark_type_of_arrow",
    "spark_type_string",
    "spark_types_of_parquet",
]

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
_MAX_DECIMAL_PRECISION = 38
_LCASE_NAME = b"UTF8_LCASE"

# By-name records, docs/FORMAT.md section 6: the first byte and the end of the field list.
_BY_NAME_RECORD = 0x81
_BY_NAME_END = 0x00

# Business keys, docs/FORMAT.md section 9: the first byte.
_KEY_RECORD = 0x82

# Dataset fingerprints, docs/FORMAT.md section 5: the 20 ASCII bytes that start the digested stream.
_FINGERPRINT_LABEL = b"hashexpr-fingerprint"
# docs/FORMAT.md, section 11: the secure fingerprint.
_LTHASH_LANES = 1024
_LTHASH_ELEMENT_LABEL = b"hashexpr-lthash16"
_LTHASH_LABEL = b"hashexpr-fingerprint-lthash16"


# docs/FORMAT.md, section 10: how a map's entries are combined while one is encoded.
_SORTED_MAP_DIGESTS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "sorted_map_digests", default=False
)


def _hashed(encode: Callable[[], bytes], algorithm: str, key: bytes | str | None) -> bytes:
    """Hashes the encoding ``encode`` makes under ``algorithm`` (section 10 changes how maps are encoded)."""
    algorithm = word(algorithm, "algorithm", ALGORITHMS, "reference")
    if (algorithm == "hmac-sha256") != (key is not None):
        raise ValueError("key is needed with algorithm='hmac-sha256', and only with it")
    if algorithm == "murmur3":
        return _murmur3(encode())
    token = _SORTED_MAP_DIGESTS.set(True)
    try:
        data = encode()
    finally:
        _SORTED_MAP_DIGESTS.reset(token)
    if key is None:
        return hashlib.sha256(data).digest()
    # Spark's key is the UTF-8 value of the conf spark.hashexpr.secret.<name>.
    key_bytes = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    if not key_bytes:
        raise ValueError("an HMAC key needs at least one byte")
    return hmac.new(key_bytes, data, hashlib.sha256).digest()


def record_hash(
    values: Sequence[Any],
    types: Sequence[DataType],
    *,
    algorithm: str = "murmur3",
    key: bytes | str | None = None,
) -> bytes:
    """
    Returns the hash of a record, as ``record_hash(v1, ..., vn)`` computes it in Spark (or
    ``record_hash_with('algorithm=...', v1, ..., vn)`` for another algorithm).

    Parameters
    ----------
    values : sequence
        The record's values, one per argument, in the Python conventions of this module.
    types : sequence of :class:`pyspark.sql.types.DataType`
        The Spark SQL type of each argument.
    algorithm : {'murmur3', 'sha256', 'hmac-sha256'}, optional
        What the encoding is hashed with (format section 10).
    key : bytes or str, optional
        The HMAC key, with ``'hmac-sha256'`` only: the bytes of ``spark.hashexpr.secret.<name>`` (a
        ``str`` is taken as its UTF-8 bytes, as Spark takes the conf's value).

    Returns
    -------
    bytes
        The MurmurHash3 x64 128 digest (seed :data:`SEED`) of :func:`encode_record`, 16 bytes,
        in the order ``hex(record_hash(...))`` prints them; or the 32-byte SHA-256 or HMAC-SHA-256 of
        the same encoding (maps aside, section 10).

    Examples
    --------
    >>> record_hash([7], [ByteType()]) == record_hash([7], [LongType()])
    True
    >>> len(record_hash([], []))
    16
    >>> record_hash([1], [IntegerType()], algorithm="sha256") == hashlib.sha256(
    ...     encode_record([1], [IntegerType()])).digest()
    True
    """
    return _hashed(lambda: encode_record(values, types), algorithm, key)


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
    return _encode_record(values, types, [f"argument {i}" for i in range(1, len(values) + 1)])


def _encode_record(values: list[Any], types: list[DataType], labels: Sequence[str]) -> bytes:
    """``RECORD`` of checked values and types; an error names the argument by its label."""
    parts = [bytes([FORMAT_VERSION]), _u32(len(values))]
    parts.extend(_encode_argument(value, dtype, label) for value, dtype, label in zip(values, types, labels))
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


def record_hash_by_name(
    values: Mapping[str, Any] | Sequence[tuple[str, Any]],
    types: Mapping[str, DataType],
    *,
    algorithm: str = "murmur3",
    key: bytes | str | None = None,
) -> bytes:
    """
    Returns the 16-byte hash of a by-name record, as ``record_hash_by_name(c1, ..., cn)`` computes it.

    Each argument is identified by its name (in Spark, a column's name or the unqualified text of any other
    expression), so the order of the arguments does not matter, and a ``NULL`` argument hashes
    exactly like an argument that is not there.

    Parameters
    ----------
    values : mapping of str to object, or sequence of (str, object) pairs
        Every argument's name and value, in the Python conventions of this module; ``None`` is
        ``NULL``. Pairs may repeat a name only to be rejected.
    types : mapping of str to :class:`pyspark.sql.types.DataType`
        The Spark SQL type of every argument, by name: exactly the names of ``values``.
    algorithm, key
        As in :func:`record_hash` (``record_hash_by_name_with`` in Spark).

    Returns
    -------
    bytes
        The MurmurHash3 x64 128 digest (seed :data:`SEED`) of :func:`encode_record_by_name`, or its
        SHA-256 or HMAC-SHA-256.

    Raises
    ------
    ValueError
        If a name appears twice, if ``types`` does not name exactly the arguments, or if a value
        does not fit its type.

    Examples
    --------
    >>> types = {"a": IntegerType(), "b": StringType()}
    >>> by_name = record_hash_by_name({"a": 1, "b": "x"}, types)
    >>> by_name == record_hash_by_name([("b", "x"), ("a", 1)], types)
    True
    >>> record_hash_by_name({"a": 1, "b": None}, types) == record_hash_by_name({"a": 1}, {"a": ByteType()})
    True
    >>> record_hash_by_name([("a", 1), ("a", 2)], types)
    Traceback (most recent call last):
        ...
    ValueError: duplicate argument names ['a']: record_hash_by_name identifies arguments by name
    """
    return _hashed(lambda: encode_record_by_name(values, types), algorithm, key)


def encode_record_by_name(
    values: Mapping[str, Any] | Sequence[tuple[str, Any]], types: Mapping[str, DataType]
) -> bytes:
    """
    Returns the byte stream that :func:`record_hash_by_name` hashes (``BYNAME`` in the format spec).

    Parameters
    ----------
    values : mapping of str to object, or sequence of (str, object) pairs
        Every argument's name and value; ``None`` is ``NULL``.
    types : mapping of str to :class:`pyspark.sql.types.DataType`
        The Spark SQL type of every argument, by name.

    Returns
    -------
    bytes
        ``0x81``, then the name (as a STRING) and the value of every non-``NULL`` argument in
        ascending order of the names' UTF-8 bytes, then ``0x00``.

    Examples
    --------
    >>> encode_record_by_name({"b": None, "a": 1}, {"a": IntegerType(), "b": StringType()}).hex(" ")
    '81 05 01 00 00 00 61 02 01 00 00 00 00 00 00 00 00'
    >>> encode_record_by_name({"a": None}, {"a": StringType()}).hex(" ")
    '81 00'
    """
    parts = [bytes([_BY_NAME_RECORD])]
    for name, value, dtype in _sorted_arguments(values, types):
        if value is not None:
            label = f"argument {name.decode('utf-8')!r}"
            parts.append(bytes([_STRING]) + _u32(len(name)) + name + _encode_argument(value, dtype, label))
    parts.append(bytes([_BY_NAME_END]))
    return b"".join(parts)


def _sorted_arguments(
    values: Mapping[str, Any] | Sequence[tuple[str, Any]], types: Mapping[str, DataType]
) -> list[tuple[bytes, Any, DataType]]:
    """The arguments as (UTF-8 name, value, type), in ascending order of the names' bytes."""
    pairs = _named_pairs(values)
    names = [name for name, _ in pairs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(
            f"duplicate argument names {repeated}: record_hash_by_name identifies arguments by name"
        )
    if not isinstance(types, Mapping):
        raise TypeError(f"types must be a mapping of names to DataTypes, got {type(types).__name__}")
    untyped = [name for name in names if name not in types]
    absent = [name for name in types if name not in set(names)]
    if untyped or absent:
        raise ValueError(
            f"types must name exactly the arguments: no type for {untyped}, no value for {absent}"
        )
    for name in names:
        _check_type(types[name])
    arguments = [(_name_bytes(name), value, types[name]) for name, value in pairs]
    # bytes compare unsigned, byte by byte, which is the order the format prescribes.
    return sorted(arguments, key=lambda argument: argument[0])


def _named_pairs(values: Mapping[str, Any] | Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    if isinstance(values, Mapping):
        pairs = list(values.items())
    elif isinstance(values, (list, tuple)):
        pairs = list(values)
    else:
        raise TypeError(
            f"values must be a mapping or a sequence of (name, value) pairs, got {type(values).__name__}"
        )
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"expected a (name, value) pair, got {pair!r}")
        if not isinstance(pair[0], str):
            raise TypeError(f"argument names must be str, got {type(pair[0]).__name__}")
    return [(name, value) for name, value in pairs]


def _name_bytes(name: str) -> bytes:
    try:
        return name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"argument name {name!r} has a lone surrogate, which UTF-8 cannot encode") from None


# ---------------------------------------------------------------------------------------------
# Business keys, docs/FORMAT.md section 9


def record_key(
    values: Sequence[Any],
    types: Sequence[DataType],
    *,
    salt: str = "",
    trim: bool = False,
    case: str | None = None,
    empty_as_null: bool = False,
    null_key: str = "hash",
    algorithm: str = "murmur3",
    key: bytes | str | None = None,
) -> bytes | None:
    """
    Returns the hash of a business key, as ``record_key_with(options, k1, ..., kn)`` computes it.

    The options are those of ``hx.record_key``; with none of them this is ``record_key(k1, ..., kn)``.
    Normalisation (``trim``, then ``case``, then ``empty_as_null``) applies to top-level ``STRING``,
    ``CHAR`` and ``VARCHAR`` key parts only; ``case`` maps with the frozen Unicode 14.0.0 table, as
    :func:`case_map` does, whatever the Python version.

    Parameters
    ----------
    values : sequence
        The key parts, in the Python conventions of this module; at least one.
    types : sequence of :class:`pyspark.sql.types.DataType`
        The Spark SQL type of each key part.
    salt : str, optional
        The salt (``salt=<text>``); it cannot contain ``;`` nor start or end with the whitespace and
        control characters that ``record_key_with`` trims from its options.
    trim : bool, optional
        Remove U+0020 (space) from both ends of string key parts.
    case : {'upper', 'lower'}, optional
        Map string key parts to upper or lower case.
    empty_as_null : bool, optional
        An empty string key part (after ``trim`` and ``case``) counts as ``NULL``.
    null_key : {'hash', 'null', 'error'}, optional
        What a key whose parts are all ``NULL`` gives: its hash, ``None``, or :class:`ValueError`.
    algorithm, key
        As in :func:`record_hash` (options ``algorithm=`` and ``secret=`` in Spark).

    Returns
    -------
    bytes or None
        The MurmurHash3 x64 128 digest (seed :data:`SEED`) of :func:`encode_key` (or its SHA-256 or
        HMAC-SHA-256), or ``None`` for an all-``NULL`` key under ``null_key='null'``.

    Raises
    ------
    ValueError
        For an all-``NULL`` key under ``null_key='error'``, an option Spark does not accept, or a value
        that does not fit its type.

    Examples
    --------
    >>> types = [StringType(), IntegerType()]
    >>> key = record_key([" stra\\u00dfe ", 42], types, salt="hub", trim=True, case="upper")
    >>> key == record_key(["STRASSE", 42], types, salt="hub")
    True
    >>> key == record_key(["STRASSE", 42], types)
    False
    >>> record_key(["  "], [StringType()], trim=True, empty_as_null=True, null_key="null") is None
    True
    >>> record_key([None, None], [StringType(), IntegerType()], null_key="error")
    Traceback (most recent call last):
        ...
    ValueError: record_key: every key part is NULL. Filter such rows out, or choose what they get with null_key=hash (a hash of the NULL key) or null_key=null (NULL)
    """
    options = KeyOptions.of(salt, trim, case, empty_as_null, null_key)
    parts, types = _normalised_key(values, types, options)
    salt, null_key = options.salt, options.null_key
    if null_key != "hash" and all(part is None for part in parts):
        if null_key == "null":
            return None
        raise ValueError(
            "record_key: every key part is NULL. Filter such rows out, or choose what they get with "
            "null_key=hash (a hash of the NULL key) or null_key=null (NULL)"
        )
    return _hashed(lambda: _encode_key(parts, types, salt), algorithm, key)


def encode_key(
    values: Sequence[Any],
    types: Sequence[DataType],
    *,
    salt: str = "",
    trim: bool = False,
    case: str | None = None,
    empty_as_null: bool = False,
) -> bytes:
    """
    Returns the byte stream that :func:`record_key` hashes (``KEY`` in the format spec).

    Parameters
    ----------
    values : sequence
        The key parts; at least one.
    types : sequence of :class:`pyspark.sql.types.DataType`
        The Spark SQL type of each key part.
    salt, trim, case, empty_as_null
        As in :func:`record_key`.

    Returns
    -------
    bytes
        ``0x82``, the salt as a STRING, the number of key parts as ``u32``, then every key part, after
        normalisation, encoded as in :func:`encode_value`.

    Examples
    --------
    >>> encode_key(["C-042", None], [StringType(), IntegerType()], salt="hub").hex(" ")
    '82 05 03 00 00 00 68 75 62 02 00 00 00 05 05 00 00 00 43 2d 30 34 32 00'
    >>> encode_key([b"a\\xff"], [StringType()], case="upper").hex(" ")
    '82 05 00 00 00 00 01 00 00 00 05 02 00 00 00 41 ff'
    """
    options = KeyOptions.of(salt, trim, case, empty_as_null)
    return _encode_key(*_normalised_key(values, types, options), options.salt)


def case_map(text: str, case: str) -> str:
    """
    Returns ``text`` mapped to upper or lower case as ``record_key_with('case=upper|lower', ...)`` maps it.

    The mapping is CPython 3.11's :meth:`str.upper` and :meth:`str.lower`, the Unicode 14.0.0 full case
    mappings with CPython's Final_Sigma rule for U+03A3 (``docs/FORMAT.md``, section 9.1), read from the
    frozen table ``unicode_case_14_0_0.txt`` in this package, so the result does not depend on the
    Python version. Lone surrogates (the bytes that are not UTF-8, decoded with ``surrogateescape``)
    stay as they are and are neither Cased nor Case_Ignorable.

    Parameters
    ----------
    text : str
        The text.
    case : {'upper', 'lower'}
        The mapping.

    Returns
    -------
    str
        The mapped text.

    Examples
    --------
    >>> case_map("Stra\\u00dfe", "upper")
    'STRASSE'
    >>> case_map("\\u039f\\u0394\\u039f\\u03a3 \\u03a3\\u0391", "lower") == "\\u03bf\\u03b4\\u03bf\\u03c2 \\u03c3\\u03b1"
    True
    >>> case_map("\\u2c5f", "upper") == "\\u2c2f"
    True
    """
    if not isinstance(text, str):
        raise TypeError(f"case_map needs a str, got {type(text).__name__}")
    table = _case_table()
    if word(case, "case", CASES, "case_map") == "upper":
        return text.translate(table.upper)
    if _CAPITAL_SIGMA not in text:
        return text.translate(table.lower)
    pieces = text.split(_CAPITAL_SIGMA)
    out = [pieces[0].translate(table.lower)]
    position = len(pieces[0])
    for piece in pieces[1:]:
        out.append(_FINAL_SIGMA if _is_final_sigma(text, position, table) else _SMALL_SIGMA)
        out.append(piece.translate(table.lower))
        position += 1 + len(piece)
    return "".join(out)


_KEY_STRING_TYPES = (StringType, CharType, VarcharType)
_CASE_TABLE = "unicode_case_14_0_0.txt"
_CASE_UNICODE_VERSION = "14.0.0"
_CAPITAL_SIGMA, _SMALL_SIGMA, _FINAL_SIGMA = "\u03a3", "\u03c3", "\u03c2"


def _normalised_key(
    values: Sequence[Any], types: Sequence[DataType], options: KeyOptions
) -> tuple[list[Any], list[DataType]]:
    """The key parts after the normalisation ``options`` ask for, and their types."""
    values = list(values)
    types = list(types)
    if not values:
        raise ValueError("record_key needs at least one key part")
    if len(values) != len(types):
        raise ValueError(f"key has {len(values)} values but {len(types)} types")
    for dtype in types:
        _check_type(dtype)
    parts = [
        _normalise_key_string(_utf8_bytes(value, dtype), options.trim, options.case, options.empty_as_null)
        if options.normalizes and value is not None and isinstance(dtype, _KEY_STRING_TYPES)
        else value
        for value, dtype in zip(values, types)
    ]
    return parts, types


def _normalise_key_string(data: bytes, trim: bool, case: str | None, empty_as_null: bool) -> bytes | None:
    if trim:
        data = data.strip(b" ")
    if case is not None:
        # surrogateescape keeps every byte that is not UTF-8 as a lone surrogate, which the case table
        # leaves as it is, so such bytes come back unchanged.
        data = case_map(data.decode("utf-8", "surrogateescape"), case).encode("utf-8", "surrogateescape")
    return None if empty_as_null and not data else data


def _encode_key(parts: list[Any], types: list[DataType], salt: str) -> bytes:
    salt_bytes = salt.encode("utf-8")
    encoded = [bytes([_KEY_RECORD, _STRING]), _u32(len(salt_bytes)), salt_bytes, _u32(len(parts))]
    encoded.extend(
        _encode_argument(part, dtype, f"key part {i}") for i, (part, dtype) in enumerate(zip(parts, types), 1)
    )
    return b"".join(encoded)


class _CaseTable:
    """The frozen case table: mappings for :meth:`str.translate`, and the two Final_Sigma properties."""

    def __init__(self, text: str) -> None:
        self.upper: dict[int, str] = {}
        self.lower: dict[int, str] = {}
        self.cased: set[int] = set()
        self.ignorable: set[int] = set()
        lines = [line for line in text.splitlines() if line and not line.startswith("#")]
        if (
            not lines
            or lines[0] != f"unicode {_CASE_UNICODE_VERSION}"
            or lines[-1] != f"end {len(lines) - 2}"
        ):
            raise RuntimeError(f"{_CASE_TABLE} is damaged: reinstall hashexpr")
        for line in lines[1:-1]:
            kind, *fields = line.split()
            numbers = [int(field, 16) for field in fields]
            if kind in ("U", "L"):
                target = self.upper if kind == "U" else self.lower
                target[numbers[0]] = "".join(map(chr, numbers[1:]))
            elif kind in ("C", "I"):
                target_set = self.cased if kind == "C" else self.ignorable
                target_set.update(range(numbers[0], numbers[1] + 1))
            else:
                raise RuntimeError(f"{_CASE_TABLE} is damaged at {line!r}: reinstall hashexpr")


@functools.cache
def _case_table() -> _CaseTable:
    return _CaseTable(importlib.resources.files("hashexpr").joinpath(_CASE_TABLE).read_text(encoding="ascii"))


def _is_final_sigma(text: str, index: int, table: _CaseTable) -> bool:
    """CPython's Final_Sigma: a Cased code point before, none after, skipping Case_Ignorable ones."""
    before = index - 1
    while before >= 0 and ord(text[before]) in table.ignorable:
        before -= 1
    if before < 0 or ord(text[before]) not in table.cased:
        return False
    after = index + 1
    while after < len(text) and ord(text[after]) in table.ignorable:
        after += 1
    return after == len(text) or ord(text[after]) not in table.cased


def spark_type_string(dtype: DataType) -> str:
    """
    Returns the canonical string of a type, as the fingerprint's schema hashes it (format section 5).

    Nullability is left out; struct field names are written in backticks (a backtick doubled);
    a user-defined type is written as its SQL type; a string type as its values hash: ``CHAR(n)``,
    ``VARCHAR(n)`` and ``UTF8_BINARY`` strings as ``string``, other collations as
    ``string collate <name>``; every other type is Spark's ``simpleString``.

    Parameters
    ----------
    dtype : :class:`pyspark.sql.types.DataType`
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
    if not isinstance(dtype, DataType):
        raise TypeError(f"expected a pyspark.sql.types.DataType, got {type(dtype).__name__}")
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


def schema_hash(names: Sequence[str], types: Sequence[DataType], *, algorithm: str = "murmur3") -> bytes:
    """
    Returns ``SCHEMA`` of the fingerprint: the record hash of every column's name and type string.

    Parameters
    ----------
    names : sequence of str
        The column names (format section 6.1: in Spark, a column's name as its schema spells it, an alias, or the
        unqualified text of any other expression).
    types : sequence of :class:`pyspark.sql.types.DataType`
        The column types, one per name.
    algorithm : {'murmur3', 'sha256'}, optional
        What the record is hashed with: ``'sha256'`` for the lthash16 fingerprint (section 11).

    Returns
    -------
    bytes
        ``record_hash(name1, type1, ..., namen, typen)`` over ``2n`` STRING values (16 bytes, or 32 with
        SHA-256), the types written by :func:`spark_type_string`.

    Examples
    --------
    >>> schema_hash(["id"], [IntegerType()]) == record_hash(["id", "int"], [StringType(), StringType()])
    True
    >>> schema_hash(["id"], [IntegerType()]) == schema_hash(["id"], [LongType()])
    False
    """
    names = list(names)
    types = list(types)
    if len(names) != len(types):
        raise ValueError(f"{len(names)} names but {len(types)} types")
    strings: list[str] = []
    for name, dtype in zip(names, types):
        _check_type(dtype)
        strings += [name, spark_type_string(dtype)]
    return record_hash(strings, [StringType()] * len(strings), algorithm=algorithm)


def dataset_fingerprint(
    rows: Iterable[Sequence[Any]],
    names: Sequence[str],
    types: Sequence[DataType],
    *,
    algorithm: str = "murmur3",
    key: bytes | str | None = None,
) -> str:
    """
    Returns the fingerprint of a table, as the aggregate ``dataset_fingerprint(c1, ..., cn)`` does (or
    ``dataset_fingerprint_with('algorithm=lthash16', c1, ..., cn)``).

    The fingerprint does not depend on the order of the rows; it changes with every value, every
    row (duplicates included), the row count, a column's name and a column's type (format section 5).

    Parameters
    ----------
    rows : iterable of sequences
        The rows, each a sequence of values in column order, in the Python conventions of this module.
    names : sequence of str
        The column names.
    types : sequence of :class:`pyspark.sql.types.DataType`
        The column types, one per name.
    algorithm : {'murmur3', 'lthash16'}, optional
        The sum of the rows' MurmurHash3 hashes (section 5), or the LtHash16 of their SHA-256 hashes
        (section 11).
    key : bytes or str, optional
        With ``'lthash16'`` only: rows are hashed with HMAC-SHA-256 under this key, the bytes of
        ``spark.hashexpr.secret.<name>`` (``secret=<name>`` in Spark).

    Returns
    -------
    str
        ``'hx1:'`` (``'hx1-lthash16:'``, ``'hx1-lthash16-hmac:'``) and the 64 lowercase hex digits of the SHA-256
        digest.

    Examples
    --------
    >>> dataset_fingerprint([], ["id"], [LongType()])
    'hx1:13f2888eec11c90f5eb8b7bd9baed23c7bd05dc99306f4a632d24011fe48b1ef'
    >>> types = [IntegerType(), StringType()]
    >>> dataset_fingerprint([(1, "a"), (2, "b")], ["id", "s"], types) == dataset_fingerprint(
    ...     [(2, "b"), (1, "a")], ["id", "s"], types)
    True
    >>> dataset_fingerprint([(1, "a")], ["id", "s"], types) == dataset_fingerprint(
    ...     [(1, "a"), (1, "a")], ["id", "s"], types)
    False
    >>> dataset_fingerprint([], ["id"], [LongType()], algorithm="lthash16")
    'hx1-lthash16:a92a34e4dc0b7461bf7259827450afff30c62ed4b133e4272d0f3c8828f2203e'
    """
    names = list(names)
    if not names:
        raise ValueError("dataset_fingerprint needs at least one column, as Spark's dataset_fingerprint does")
    algorithm = word(algorithm, "algorithm", FINGERPRINT_ALGORITHMS, "dataset_fingerprint")
    if key is not None and algorithm != "lthash16":
        raise ValueError("key is only for algorithm='lthash16' (rows hashed with HMAC-SHA-256)")
    types = list(types)
    if algorithm == "lthash16":
        return _lthash_fingerprint(rows, names, types, key)
    schema = schema_hash(names, types)
    count = 0
    total = 0
    labels = [f"column {name!r}" for name in names]
    for row in rows:
        total += int.from_bytes(_murmur3(_encode_row(row, types, labels)), "little")
        count += 1
    digest = hashlib.sha256(
        _FINGERPRINT_LABEL
        + _u8(FORMAT_VERSION)
        + schema
        + _i64(count)
        + (total % 2**128).to_bytes(16, "little")
    )
    return f"hx{FORMAT_VERSION}:{digest.hexdigest()}"


def lthash16_lanes(element: bytes) -> list[int]:
    """
    Returns the 1024 16-bit lanes of LtHash16 for one element, a 32-byte row hash (format section 11).

    Examples
    --------
    >>> lanes = lthash16_lanes(bytes(32))
    >>> len(lanes), all(0 <= lane < 2**16 for lane in lanes)
    (1024, True)
    """
    if len(element) != 32:
        raise ValueError(f"an LtHash16 element is a 32-byte digest, not {len(element)} bytes")
    expanded = b"".join(
        hashlib.sha256(_LTHASH_ELEMENT_LABEL + element + _u32(i)).digest() for i in range(_LTHASH_LANES // 16)
    )
    return list(struct.unpack(f"<{_LTHASH_LANES}H", expanded))


def _lthash_fingerprint(
    rows: Iterable[Sequence[Any]], names: list[str], types: list[DataType], key: bytes | str | None
) -> str:
    schema = schema_hash(names, types, algorithm="sha256")
    algorithm = "sha256" if key is None else "hmac-sha256"
    state = [0] * _LTHASH_LANES
    count = 0
    labels = [f"column {name!r}" for name in names]
    for row in rows:
        lanes = lthash16_lanes(_hashed(functools.partial(_encode_row, row, types, labels), algorithm, key))
        state = [(a + b) & 0xFFFF for a, b in zip(state, lanes)]
        count += 1
    body = _i64(count) + struct.pack(f"<{_LTHASH_LANES}H", *state)
    digest = hashlib.sha256(_LTHASH_LABEL + _u8(FORMAT_VERSION) + schema + body).hexdigest()
    prefix = "lthash16" if key is None else "lthash16-hmac"
    return f"hx{FORMAT_VERSION}-{prefix}:{digest}"


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


def _encode_row(row: Sequence[Any], types: list[DataType], labels: list[str]) -> bytes:
    """``RECORD`` of one row of a table (checked types), its errors naming the column."""
    values = list(row)
    if len(values) != len(types):
        raise ValueError(f"a row has {len(values)} values but the table {len(types)} columns")
    return _encode_record(values, types, labels)


def _encode_argument(value: Any, dtype: DataType, label: str) -> bytes:
    """``ENC(value, dtype)`` of a top-level argument; a TypeError or ValueError names it by ``label``."""
    try:
        return _encode(value, dtype)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{label} ({_type_name(dtype)}): {error}") from None


def _plain(value: Any) -> Any:
    """A NumPy scalar (``numpy.int64(7)``, ``numpy.float32(0.5)``, ``numpy.bool_(True)``) as the Python
    value it holds; a NumPy date or duration is refused, since its unit is not the format's."""
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind is None or getattr(value, "shape", None) != () or not hasattr(value, "item"):
        return value
    if kind in "biuf":
        return value.item()
    if kind in "mM":
        raise TypeError(
            f"got a NumPy {value.dtype}, whose unit this module does not guess: pass a datetime, a timedelta "
            "or int microseconds (e.g. value.astype('datetime64[us]').item())"
        )
    return value


def _encode(value: Any, dtype: DataType) -> bytes:
    value = _plain(value)
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
    if isinstance(value, float):
        raise TypeError(
            f"{_type_name(dtype)} value must be an int, got float {value!r} (pandas makes an integer column "
            "with missing values float64: use the nullable Int64 dtype, or None for NULL)"
        )
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
    if _SORTED_MAP_DIGESTS.get():
        # Section 10: the entries' SHA-256 digests in ascending order; a sum could be forged.
        digests = []
        for key, item in entries:
            if key is None:
                raise ValueError(f"{_type_name(dtype)} keys cannot be NULL")
            digests.append(
                hashlib.sha256(_encode(key, dtype.keyType) + _encode(item, dtype.valueType)).digest()
            )
        return bytes([_MAP]) + _u32(len(entries)) + b"".join(sorted(digests))
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


# ---------------------------------------------------------------------------------------------
# Arrow and pandas


def fingerprint_arrow(
    table: pyarrow.Table,
    types: Sequence[DataType] | None = None,
    *,
    parquet_schema: pyarrow.parquet.ParquetSchema | None = None,
) -> str:
    """
    Returns the fingerprint of an Arrow table, as Spark's ``dataset_fingerprint(*)`` computes it
    once the table is loaded into Spark.

    By default every column gets the type Spark 4 gives it when reading the Parquet file that
    :func:`pyarrow.parquet.write_table` writes (see :func:`spark_type_of_arrow`), so the result equals
    ``spark.read.parquet(path).agg(dataset_fingerprint(*))``. Column names are taken as they are.
    For a table read from a Parquet file, pass the file's ``parquet_schema``: the Arrow types alone
    do not tell an ``INT96`` timestamp (Spark: ``TIMESTAMP``) from one without a time zone
    (``TIMESTAMP_NTZ``), since pyarrow reads both as ``timestamp`` without one.

    Timestamps are taken as microseconds, the unit Spark keeps: seconds and milliseconds are
    converted exactly; nanoseconds (which Spark does not read from Parquet) are accepted only when
    every value is a whole number of microseconds, the data ``write_table(...,
    coerce_timestamps="us")`` writes. Dictionary-encoded columns are fingerprinted by their values.

    Parameters
    ----------
    table : :class:`pyarrow.Table`
        The data.
    types : sequence of :class:`pyspark.sql.types.DataType`, optional
        The Spark type of every column once loaded, when it differs from the Parquet mapping (for
        example a schema given to the reader). Values must fit them in the conventions of this
        module: timestamps and dates arrive as ``int`` microseconds and days, structs as tuples.
    parquet_schema : :class:`pyarrow.parquet.ParquetSchema`, optional
        The schema of the Parquet file the table was read from (``pq.ParquetFile(path).schema``):
        the types are then :func:`spark_types_of_parquet` of it. Not together with ``types``.

    Returns
    -------
    str
        ``'hx1:'`` and 64 lowercase hex digits.

    Raises
    ------
    ValueError
        If the table has no columns (Spark's ``dataset_fingerprint`` needs one), if a column's
        Arrow type has no Spark counterpart (naming the column), if a nanosecond timestamp is not a
        whole number of microseconds, if a value does not fit its type, or if ``parquet_schema`` is
        not the schema of the table.

    Examples
    --------
    >>> import pyarrow as pa
    >>> table = pa.table({"id": pa.array([1, 2], pa.int32()), "s": ["a", None]})
    >>> fingerprint_arrow(table) == dataset_fingerprint([(2, None), (1, "a")], ["id", "s"],
    ...                                                 [IntegerType(), StringType()])
    True
    >>> fingerprint_arrow(pa.table({"t": pa.array([1], pa.time32("s"))}))
    Traceback (most recent call last):
        ...
    ValueError: column 't': Spark has no type for the Arrow type time32[s]
    """
    names = [str(name) for name in table.column_names]
    if not names:
        raise ValueError(
            "fingerprint_arrow: the table has no columns, and Spark's dataset_fingerprint needs at "
            "least one; fingerprint a table with columns"
        )
    arrow_types = [field.type for field in table.schema]
    if parquet_schema is not None:
        if types is not None:
            raise ValueError("pass types or parquet_schema, not both: parquet_schema gives the types")
        if parquet_schema.to_arrow_schema().names != names:
            raise ValueError(
                f"parquet_schema has the columns {parquet_schema.to_arrow_schema().names}, the table "
                f"{names}: pass the schema of the file the table was read from"
            )
        types = spark_types_of_parquet(parquet_schema)
    if types is None:
        types = [_column_type(name, arrow_type) for name, arrow_type in zip(names, arrow_types)]
    else:
        types = list(types)
        if len(types) != len(names):
            raise ValueError(f"the table has {len(names)} columns but {len(types)} types were given")
        for name, arrow_type in zip(names, arrow_types):
            _column_type(name, arrow_type)
    columns = [_column_values(name, table.column(i)) for i, name in enumerate(names)]
    return dataset_fingerprint(zip(*columns), names, types)


def fingerprint_pandas(df: pandas.DataFrame, types: Sequence[DataType] | None = None) -> str:
    """
    Returns the fingerprint of a pandas DataFrame, as Spark's ``dataset_fingerprint(*)`` computes it
    over ``df.to_parquet(path, index=False, coerce_timestamps="us")`` read back with
    ``spark.read.parquet(path)`` (Spark reads no nanosecond timestamps, which pandas writes by default).

    The frame is converted with :meth:`pyarrow.Table.from_pandas` without its index, as
    ``to_parquet`` does, and fingerprinted with :func:`fingerprint_arrow`: so ``NaN`` in a float
    column and ``None``/``NaT`` are ``NULL``, a categorical column is its values' type, and an
    object column holding only ``None`` is an all-``NULL`` ``INT`` column, as Spark reads it.
    ``spark.createDataFrame(df)`` can infer other types (it makes naive ``datetime64`` columns
    ``TIMESTAMP`` rather than ``TIMESTAMP_NTZ``); pass ``types`` to fingerprint such a frame.

    Parameters
    ----------
    df : :class:`pandas.DataFrame`
        The data; column names become strings.
    types : sequence of :class:`pyspark.sql.types.DataType`, optional
        The Spark type of every column, as in :func:`fingerprint_arrow`.

    Returns
    -------
    str
        ``'hx1:'`` and 64 lowercase hex digits.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [1, 2], "x": [0.5, float("nan")]})
    >>> fingerprint_pandas(df) == dataset_fingerprint([(1, 0.5), (2, None)], ["id", "x"],
    ...                                               [LongType(), DoubleType()])
    True
    """
    import pyarrow as pa

    return fingerprint_arrow(pa.Table.from_pandas(df, preserve_index=False), types)


def spark_type_of_arrow(arrow_type: pyarrow.DataType) -> DataType:
    """
    Returns the Spark type Spark 4 reads from Parquet that pyarrow wrote from a column of this type.

    ``int8``..``int64``: ``TINYINT``..``BIGINT``; ``uint8``, ``uint16``, ``uint32``: ``SMALLINT``,
    ``INT``, ``BIGINT``; ``uint64``: ``DECIMAL(20,0)``; ``float32``, ``float64``: ``FLOAT``,
    ``DOUBLE``; ``bool``: ``BOOLEAN``; decimals up to precision 38: ``DECIMAL(p,s)``; every
    string type: ``STRING``; every binary type: ``BINARY``; ``date32``, ``date64``: ``DATE``;
    a timestamp with a time zone: ``TIMESTAMP``; a timestamp without one: ``TIMESTAMP_NTZ`` (Parquet
    ``isAdjustedToUTC = false``, which Spark infers as ``TIMESTAMP_NTZ`` by default); every list
    type (list views too): ``ARRAY``; ``struct``: ``STRUCT``; ``map``: ``MAP``; a dictionary: its values' type;
    ``null``: ``INT`` (Spark reads an all-``NULL`` Parquet column as ``INT``). Nullability is
    carried over. Other types (``float16``, ``time32``, ``time64``, ``duration``, intervals,
    unions, extension types, decimals above precision 38) raise :class:`ValueError`.

    pyarrow reads a Parquet ``INT96`` timestamp (Spark's ``spark.sql.parquet.outputTimestampType=INT96``,
    Hive, Impala) as ``timestamp[ns]`` without a time zone, which this function maps to
    ``TIMESTAMP_NTZ``; Spark reads it as ``TIMESTAMP``. For a table read from a Parquet file, take the
    types from the file's schema with :func:`spark_types_of_parquet`.

    Parameters
    ----------
    arrow_type : :class:`pyarrow.DataType`
        The Arrow type.

    Returns
    -------
    :class:`pyspark.sql.types.DataType`
        The Spark type.

    Examples
    --------
    >>> import pyarrow as pa
    >>> spark_type_of_arrow(pa.list_(pa.timestamp("ms"))).simpleString()
    'array<timestamp_ntz>'
    >>> spark_type_of_arrow(pa.map_(pa.string(), pa.timestamp("us", tz="UTC"))).simpleString()
    'map<string,timestamp>'
    >>> spark_type_of_arrow(pa.uint64())
    DecimalType(20,0)
    """
    return _spark_type(arrow_type, None)


def spark_types_of_parquet(schema: pyarrow.parquet.ParquetSchema) -> list[DataType]:
    """
    Returns the Spark type of every column Spark 4 reads from a Parquet file of this schema.

    Each column's type is :func:`spark_type_of_arrow` of the Arrow type pyarrow reads, except that
    timestamps stored as ``INT96`` are ``TIMESTAMP``, as Spark reads them (pyarrow reads them as
    ``timestamp[ns]`` without a time zone, which alone would say ``TIMESTAMP_NTZ``), at any depth.

    Parameters
    ----------
    schema : :class:`pyarrow.parquet.ParquetSchema`
        The file's schema, e.g. ``pyarrow.parquet.ParquetFile(path).schema``.

    Returns
    -------
    list of :class:`pyspark.sql.types.DataType`
        One type per top-level column, in order.

    Examples
    --------
    >>> import io
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> table = pa.table({"at": pa.array([0], pa.timestamp("us")),
    ...                   "ats": pa.array([[0]], pa.list_(pa.timestamp("us")))})
    >>> buffer = io.BytesIO()
    >>> pq.write_table(table, buffer, use_deprecated_int96_timestamps=True)
    >>> [t.simpleString() for t in spark_types_of_parquet(pq.ParquetFile(buffer).schema)]
    ['timestamp', 'array<timestamp>']
    >>> [spark_type_of_arrow(f.type).simpleString() for f in pq.read_table(buffer).schema]
    ['timestamp_ntz', 'array<timestamp_ntz>']
    """
    # pyarrow lists a Parquet schema's leaf columns depth first, the order of the Arrow type's leaves.
    leaves = iter([schema.column(i).physical_type for i in range(len(schema))])
    types = []
    for field in schema.to_arrow_schema():
        try:
            types.append(_spark_type(field.type, leaves))
        except ValueError as error:
            raise ValueError(f"column {field.name!r}: {error}") from None
    return types


def _spark_type(arrow_type: pyarrow.DataType, leaves: Iterator[str] | None) -> DataType:
    """The Spark type of ``arrow_type``; ``leaves`` yields the Parquet physical type of each leaf, if known."""
    import pyarrow as pa

    types = pa.types
    if types.is_dictionary(arrow_type):
        return _spark_type(arrow_type.value_type, leaves)
    if _is_list_type(arrow_type, types):
        field = arrow_type.value_field
        return ArrayType(_spark_type(field.type, leaves), field.nullable)
    if types.is_map(arrow_type):
        key = _spark_type(arrow_type.key_type, leaves)
        return MapType(key, _spark_type(arrow_type.item_type, leaves), arrow_type.item_field.nullable)
    if types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        return StructType([StructField(f.name, _spark_type(f.type, leaves), f.nullable) for f in fields])
    if leaves is not None and next(leaves) == "INT96" and types.is_timestamp(arrow_type):
        return TimestampType()
    for predicate, spark_type in _arrow_atomic_types(pa):
        if predicate(arrow_type):
            return spark_type
    if types.is_decimal(arrow_type) and arrow_type.precision <= _MAX_DECIMAL_PRECISION:
        return DecimalType(arrow_type.precision, arrow_type.scale)
    if types.is_timestamp(arrow_type):
        return TimestampNTZType() if arrow_type.tz is None else TimestampType()
    raise ValueError(f"Spark has no type for the Arrow type {arrow_type}")


def _is_list_type(arrow_type: pyarrow.DataType, types: Any) -> bool:
    """Every Arrow list type: list, large list, fixed-size list, and the views (pyarrow writes them as Parquet LIST)."""
    return (
        types.is_list(arrow_type)
        or types.is_large_list(arrow_type)
        or types.is_fixed_size_list(arrow_type)
        or types.is_list_view(arrow_type)
        or types.is_large_list_view(arrow_type)
    )


def _arrow_atomic_types(pa: Any) -> list[tuple[Callable[[Any], bool], DataType]]:
    types = pa.types
    return [
        (types.is_null, IntegerType()),
        (types.is_boolean, BooleanType()),
        (types.is_int8, ByteType()),
        (types.is_int16, ShortType()),
        (types.is_int32, IntegerType()),
        (types.is_int64, LongType()),
        (types.is_uint8, ShortType()),
        (types.is_uint16, IntegerType()),
        (types.is_uint32, LongType()),
        (types.is_uint64, DecimalType(20, 0)),
        (types.is_float32, FloatType()),
        (types.is_float64, DoubleType()),
        (lambda t: types.is_string(t) or types.is_large_string(t) or types.is_string_view(t), StringType()),
        (
            lambda t: (
                types.is_binary(t)
                or types.is_large_binary(t)
                or types.is_binary_view(t)
                or types.is_fixed_size_binary(t)
            ),
            BinaryType(),
        ),
        (lambda t: types.is_date32(t) or types.is_date64(t), DateType()),
    ]


def _column_type(name: str, arrow_type: pyarrow.DataType) -> DataType:
    try:
        return spark_type_of_arrow(arrow_type)
    except ValueError as error:
        raise ValueError(f"column {name!r}: {error}") from None


def _column_values(name: str, column: pyarrow.ChunkedArray) -> list[Any]:
    """A column's values in the conventions of this module: timestamps and dates as ``int``."""
    import pyarrow as pa

    micros_type = _plain_type(column.type, pa, micros=True)
    try:
        if micros_type != column.type:
            column = column.cast(micros_type, safe=True)
        plain_type = _plain_type(micros_type, pa, micros=False)
        if plain_type != micros_type:
            column = column.cast(plain_type, safe=True)
    except pa.ArrowInvalid as error:
        raise ValueError(f"column {name!r}: {error}") from None
    values = column.to_pylist()
    if pa.types.is_nested(column.type):
        return [_positional(value, column.type, pa) for value in values]
    return values


def _plain_type(arrow_type: pyarrow.DataType, pa: Any, micros: bool, nulls: bool = True) -> pyarrow.DataType:
    """
    With ``micros``, every timestamp in microseconds and every date a ``date32``; without, every
    timestamp an ``int64`` and every date an ``int32``. Dictionaries are replaced by their values; with
    ``nulls``, the null type by ``int8`` (all NULL).
    """
    types = pa.types
    if types.is_null(arrow_type) and nulls:
        # pyarrow (26 at least) casts a null child of a list or map to the null type as an array as long as
        # its parent, which breaks the offsets; an all-NULL int8 child reads back as the same Nones.
        return pa.int8()
    if types.is_timestamp(arrow_type):
        return pa.timestamp("us", arrow_type.tz) if micros else pa.int64()
    if types.is_date(arrow_type):
        return pa.date32() if micros else pa.int32()
    if types.is_dictionary(arrow_type):
        return _plain_type(arrow_type.value_type, pa, micros, nulls)
    if types.is_list_view(arrow_type) or types.is_large_list_view(arrow_type):
        # pyarrow casts no list view to a list, nor a view of nulls to a view of int8: a view keeps its kind,
        # which to_pylist reads alike.
        plain = arrow_type.value_field.with_type(_plain_type(arrow_type.value_type, pa, micros, nulls=False))
        return arrow_type if plain.type == arrow_type.value_type else pa.list_view(plain)
    if _is_list_type(arrow_type, types):
        return pa.list_(arrow_type.value_field.with_type(_plain_type(arrow_type.value_type, pa, micros, nulls)))
    if types.is_map(arrow_type):
        return pa.map_(
            arrow_type.key_field.with_type(_plain_type(arrow_type.key_type, pa, micros, nulls)),
            arrow_type.item_field.with_type(_plain_type(arrow_type.item_type, pa, micros, nulls)),
        )
    if types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        return pa.struct([f.with_type(_plain_type(f.type, pa, micros, nulls)) for f in fields])
    return arrow_type


def _positional(value: Any, arrow_type: pyarrow.DataType, pa: Any) -> Any:
    """Structs as tuples (in field order), maps as (key, value) pairs, recursively."""
    if value is None:
        return None
    types = pa.types
    if types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        return tuple(_positional(value[f.name], f.type, pa) for f in fields)
    if types.is_map(arrow_type):
        return [
            (_positional(k, arrow_type.key_type, pa), _positional(v, arrow_type.item_type, pa))
            for k, v in value
        ]
    if _is_list_type(arrow_type, types):
        return [_positional(element, arrow_type.value_type, pa) for element in value]
    return value
