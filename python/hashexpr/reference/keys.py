"""Business keys: ``record_key``, its byte stream ``KEY``, and the normalisation of string key parts.

``docs/FORMAT.md`` section 9; ``trim``, ``case`` (with :func:`~hashexpr.reference.case_mapping.case_map`,
section 9.1) and ``empty_as_null`` apply to top-level string key parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hashexpr.options import KeyOptions
from hashexpr.reference.algorithms import hashed
from hashexpr.reference.atomic import u32, utf8_bytes
from hashexpr.reference.case_mapping import case_map
from hashexpr.reference.tags import KEY_RECORD, STRING
from hashexpr.reference.types import checked
from hashexpr.reference.values import encode_argument
from hashexpr.types import (
    CharType,
    DataType,
    IntegerType,  # noqa: F401 (the examples use it)
    StringType,
    VarcharType,
)


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
        The key parts, in the Python conventions of this package; at least one.
    types : sequence of :class:`hashexpr.types.DataType` (or PySpark's)
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
    return hashed(lambda: _encode_key(parts, types, salt), algorithm, key)


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
    types : sequence of :class:`hashexpr.types.DataType` (or PySpark's)
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


_KEY_STRING_TYPES = (StringType, CharType, VarcharType)


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
    types = [checked(dtype) for dtype in types]
    parts = [
        _normalise_key_string(utf8_bytes(value, dtype), options.trim, options.case, options.empty_as_null)
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
    encoded = [bytes([KEY_RECORD, STRING]), u32(len(salt_bytes)), salt_bytes, u32(len(parts))]
    encoded.extend(
        encode_argument(part, dtype, f"key part {i}") for i, (part, dtype) in enumerate(zip(parts, types), 1)
    )
    return b"".join(encoded)
