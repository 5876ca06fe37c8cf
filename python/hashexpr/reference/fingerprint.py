"""Dataset fingerprints: ``dataset_fingerprint`` and its lthash16 variant.

``docs/FORMAT.md`` section 5: the schema hash and the sum of the rows' MurmurHash3 hashes; section 11: the
LtHash16 of their SHA-256 (or HMAC-SHA-256) hashes, ``dataset_fingerprint_with('algorithm=lthash16', ...)``.
"""

from __future__ import annotations

import functools
import hashlib
import struct
from collections.abc import Iterable, Sequence
from typing import Any

from hashexpr.options import FINGERPRINT_ALGORITHMS, word
from hashexpr.reference.algorithms import hashed, murmur3
from hashexpr.reference.atomic import i64, u8, u32
from hashexpr.reference.record import encode_row, record_hash
from hashexpr.reference.tags import (
    FINGERPRINT_LABEL,
    FORMAT_VERSION,
    LTHASH_ELEMENT_LABEL,
    LTHASH_LABEL,
    LTHASH_LANES,
)
from hashexpr.reference.types import checked, spark_type_string
from hashexpr.types import (
    DataType,
    IntegerType,  # noqa: F401 (the examples use it)
    LongType,  # noqa: F401 (the examples use it)
    StringType,
)


def schema_hash(names: Sequence[str], types: Sequence[DataType], *, algorithm: str = "murmur3") -> bytes:
    """
    Returns ``SCHEMA`` of the fingerprint: the record hash of every column's name and type string.

    Parameters
    ----------
    names : sequence of str
        The column names (format section 6.1: in Spark, a column's name as its schema spells it, an alias, or the
        unqualified text of any other expression).
    types : sequence of :class:`hashexpr.types.DataType` (or PySpark's)
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
        strings += [name, spark_type_string(checked(dtype))]
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
        The rows, each a sequence of values in column order, in the Python conventions of this package.
    names : sequence of str
        The column names.
    types : sequence of :class:`hashexpr.types.DataType` (or PySpark's)
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
    types = [checked(t) for t in types]
    if algorithm == "lthash16":
        return _lthash_fingerprint(rows, names, types, key)
    schema = schema_hash(names, types)
    count = 0
    total = 0
    labels = [f"column {name!r}" for name in names]
    for row in rows:
        total += int.from_bytes(murmur3(encode_row(row, types, labels)), "little")
        count += 1
    digest = hashlib.sha256(
        FINGERPRINT_LABEL + u8(FORMAT_VERSION) + schema + i64(count) + (total % 2**128).to_bytes(16, "little")
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
        hashlib.sha256(LTHASH_ELEMENT_LABEL + element + u32(i)).digest() for i in range(LTHASH_LANES // 16)
    )
    return list(struct.unpack(f"<{LTHASH_LANES}H", expanded))


def _lthash_fingerprint(
    rows: Iterable[Sequence[Any]], names: list[str], types: list[DataType], key: bytes | str | None
) -> str:
    schema = schema_hash(names, types, algorithm="sha256")
    algorithm = "sha256" if key is None else "hmac-sha256"
    state = [0] * LTHASH_LANES
    count = 0
    labels = [f"column {name!r}" for name in names]
    for row in rows:
        lanes = lthash16_lanes(hashed(functools.partial(encode_row, row, types, labels), algorithm, key))
        state = [(a + b) & 0xFFFF for a, b in zip(state, lanes)]
        count += 1
    body = i64(count) + struct.pack(f"<{LTHASH_LANES}H", *state)
    digest = hashlib.sha256(LTHASH_LABEL + u8(FORMAT_VERSION) + schema + body).hexdigest()
    prefix = "lthash16" if key is None else "lthash16-hmac"
    return f"hx{FORMAT_VERSION}-{prefix}:{digest}"
