"""Pure-Python reference implementation of the hashexpr hash format, version 1.

This package follows ``docs/FORMAT.md`` and nothing else: it is the independent oracle the
Catalyst expression is checked against, and it generated the frozen golden vectors in
``spec/vectors-v1.json``. It needs :mod:`mmh3` alone: types are :mod:`hashexpr.types` (Spark SQL's types
without PySpark; PySpark's own :mod:`pyspark.sql.types` are taken too), so it runs without Spark.

Its modules follow the sections of the format, each importing only those above it:

* :mod:`~hashexpr.reference.tags`: the seed, the version, the tags and the first bytes and labels
  (sections 1, 3, 4, 5, 6, 9 and 11).
* :mod:`~hashexpr.reference.algorithms`: MurmurHash3, SHA-256 and HMAC-SHA-256 (sections 1 and 10).
* :mod:`~hashexpr.reference.types`: the types the format defines and rejects (sections 4 and 4.8), and
  the type strings of the fingerprint's schema (section 5).
* :mod:`~hashexpr.reference.atomic`: atomic values (sections 4.1 to 4.5) and the writers of section 2.
* :mod:`~hashexpr.reference.nested`: arrays, maps and structs (sections 4 and 4.6, section 10's maps).
* :mod:`~hashexpr.reference.values`: ``ENC(v, T)`` of any value, user-defined types (section 4.7).
* :mod:`~hashexpr.reference.record`: records and by-name records (sections 3 and 6).
* :mod:`~hashexpr.reference.case_mapping` and :mod:`~hashexpr.reference.keys`: business keys and
  their case mapping (sections 9 and 9.1).
* :mod:`~hashexpr.reference.fingerprint`: dataset fingerprints (sections 5 and 11).
* :mod:`~hashexpr.reference.arrow`: fingerprints and Spark types of Arrow tables and pandas DataFrames.

The functions and constants below are importable from ``hashexpr.reference`` itself.

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
Beyond positional records (format sections 1 to 4), the package computes by-name records
(:func:`record_hash_by_name`, section 6), business keys (:func:`record_key`, section 9, with the
frozen Unicode 14.0.0 case mapping of :func:`case_map`) and dataset fingerprints
(:func:`dataset_fingerprint`, section 5), also of Arrow tables and pandas DataFrames
(:func:`fingerprint_arrow`, :func:`fingerprint_pandas`), which need :mod:`pyarrow` (and
:mod:`pandas`) only when called.

The examples use the :mod:`hashexpr.types` classes this package imports.

>>> record_hash([1, "a", None], [IntegerType(), StringType(), StringType()]).hex()
'914bafb12d9c5a010bfa6e9e20a248de'
"""

from __future__ import annotations

from hashexpr.options import ALGORITHMS

# The tests and the benchmark of hashexpr.arrow take an Arrow column's values with it.
from hashexpr.reference.arrow import _column_values as _column_values
from hashexpr.reference.arrow import (
    fingerprint_arrow,
    fingerprint_pandas,
    spark_type_of_arrow,
    spark_types_of_parquet,
)
from hashexpr.reference.case_mapping import case_map
from hashexpr.reference.fingerprint import dataset_fingerprint, schema_hash
from hashexpr.reference.fingerprint import lthash16_lanes as lthash16_lanes
from hashexpr.reference.keys import encode_key, record_key
from hashexpr.reference.record import (
    encode_record,
    encode_record_by_name,
    encode_value,
    record_hash,
    record_hash_by_name,
)
from hashexpr.reference.tags import FORMAT_VERSION, SEED
from hashexpr.reference.types import spark_type_string

# The types of hashexpr.types, for the examples (PySpark's types are taken alike).
from hashexpr.types import ArrayType as ArrayType
from hashexpr.types import BinaryType as BinaryType
from hashexpr.types import BooleanType as BooleanType
from hashexpr.types import ByteType as ByteType
from hashexpr.types import CalendarIntervalType as CalendarIntervalType
from hashexpr.types import CharType as CharType
from hashexpr.types import DataType as DataType
from hashexpr.types import DateType as DateType
from hashexpr.types import DayTimeIntervalType as DayTimeIntervalType
from hashexpr.types import DecimalType as DecimalType
from hashexpr.types import DoubleType as DoubleType
from hashexpr.types import FloatType as FloatType
from hashexpr.types import IntegerType as IntegerType
from hashexpr.types import LongType as LongType
from hashexpr.types import MapType as MapType
from hashexpr.types import NullType as NullType
from hashexpr.types import ShortType as ShortType
from hashexpr.types import StringType as StringType
from hashexpr.types import StructField as StructField
from hashexpr.types import StructType as StructType
from hashexpr.types import TimestampNTZType as TimestampNTZType
from hashexpr.types import TimestampType as TimestampType
from hashexpr.types import UserDefinedType as UserDefinedType
from hashexpr.types import VarcharType as VarcharType
from hashexpr.types import YearMonthIntervalType as YearMonthIntervalType

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
