"""Records: the positional record, the by-name record, and the record of one row of a table.

The positional record of ``record_hash`` is ``docs/FORMAT.md`` section 3, the by-name record of
``record_hash_by_name`` section 6; the fingerprints hash every row of a table as a record (sections 5 and 11).
"""

from __future__ import annotations

import hashlib  # noqa: F401 (the examples use it)
from collections.abc import Mapping, Sequence
from typing import Any

from hashexpr.reference.algorithms import hashed
from hashexpr.reference.atomic import u32
from hashexpr.reference.tags import BY_NAME_END, BY_NAME_RECORD, FORMAT_VERSION, STRING
from hashexpr.reference.types import checked
from hashexpr.reference.values import encode, encode_argument
from hashexpr.types import (
    ByteType,  # noqa: F401 (the examples use it)
    DataType,
    DecimalType,  # noqa: F401 (the examples use it)
    DoubleType,  # noqa: F401 (the examples use it)
    IntegerType,  # noqa: F401 (the examples use it)
    LongType,  # noqa: F401 (the examples use it)
    StringType,  # noqa: F401 (the examples use it)
)


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
        The record's values, one per argument, in the Python conventions of this package.
    types : sequence of :class:`hashexpr.types.DataType` (or PySpark's)
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
    return hashed(lambda: encode_record(values, types), algorithm, key)


def encode_record(values: Sequence[Any], types: Sequence[DataType]) -> bytes:
    """
    Returns the byte stream that :func:`record_hash` hashes (``RECORD`` in the format spec).

    Parameters
    ----------
    values : sequence
        The record's values, one per argument.
    types : sequence of :class:`hashexpr.types.DataType` (or PySpark's)
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
    types = [checked(dtype) for dtype in types]
    return _encode_record(values, types, [f"argument {i}" for i in range(1, len(values) + 1)])


def _encode_record(values: list[Any], types: list[DataType], labels: Sequence[str]) -> bytes:
    """``RECORD`` of checked values and types; an error names the argument by its label."""
    parts = [bytes([FORMAT_VERSION]), u32(len(values))]
    parts.extend(encode_argument(value, dtype, label) for value, dtype, label in zip(values, types, labels))
    return b"".join(parts)


def encode_value(value: Any, dtype: DataType) -> bytes:
    """
    Returns the encoding of one value (``ENC(v, T)`` in the format spec): its tag and payload.

    Parameters
    ----------
    value : object
        The value, in the Python conventions of this package; ``None`` is ``NULL``.
    dtype : :class:`hashexpr.types.DataType` (or PySpark's)
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
    return encode(value, checked(dtype))


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
        Every argument's name and value, in the Python conventions of this package; ``None`` is
        ``NULL``. Pairs may repeat a name only to be rejected.
    types : mapping of str to :class:`hashexpr.types.DataType` (or PySpark's)
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
    return hashed(lambda: encode_record_by_name(values, types), algorithm, key)


def encode_record_by_name(
    values: Mapping[str, Any] | Sequence[tuple[str, Any]], types: Mapping[str, DataType]
) -> bytes:
    """
    Returns the byte stream that :func:`record_hash_by_name` hashes (``BYNAME`` in the format spec).

    Parameters
    ----------
    values : mapping of str to object, or sequence of (str, object) pairs
        Every argument's name and value; ``None`` is ``NULL``.
    types : mapping of str to :class:`hashexpr.types.DataType` (or PySpark's)
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
    parts = [bytes([BY_NAME_RECORD])]
    for name, value, dtype in _sorted_arguments(values, types):
        if value is not None:
            label = f"argument {name.decode('utf-8')!r}"
            parts.append(bytes([STRING]) + u32(len(name)) + name + encode_argument(value, dtype, label))
    parts.append(bytes([BY_NAME_END]))
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
    checked_types = {name: checked(types[name]) for name in names}
    arguments = [(_name_bytes(name), value, checked_types[name]) for name, value in pairs]
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


def encode_row(row: Sequence[Any], types: list[DataType], labels: list[str]) -> bytes:
    """``RECORD`` of one row of a table (checked types), its errors naming the column."""
    values = list(row)
    if len(values) != len(types):
        raise ValueError(f"a row has {len(values)} values but the table {len(types)} columns")
    return _encode_record(values, types, labels)
