"""PostgreSQL's row texts, printed from Arrow data: the cheap digests of a PostgreSQL table against DuckDB,
Parquet or Arrow data.

A PostgreSQL server computes ``sha256(convert_to(CAST(ROW(c1, ..., cn) AS text), 'UTF8'))`` and ``hashtextextended`` of the key's row
text far faster than the SHA-256 record hashes of format v1. When every hashed column of the PostgreSQL side has
a type whose text the Rust engine prints as the server does (:func:`postgres_kinds`) and the other side's Arrow
types can be printed so, both aggregate passes compare those digests instead: the engine prints each row's text
from the Arrow data (``hashexpr._native.postgres_row_digests``). Every printer is lossless, so equal texts are
equal values; a value printed otherwise than the server prints it (a float whose shortest digits tie, a
timestamp past PostgreSQL's range) only puts its segment among those that differ, whose rows are then settled
by their record hashes, as ever.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from hashexpr._native import postgres_row_digests
from hashexpr.reconcile.columns import SidePlan
from hashexpr.sql.postgres import UnconstrainedNumeric
from hashexpr.types import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

#: A row whose text's ``hashtextextended(..., 0)`` the server must agree on before the texts are relied on (a
#: server of another byte order hashes otherwise): ``(hashexpr,"v 1")``, a full block of 12 bytes and a tail.
PROBE = ("hashexpr", "v 1")

_KINDS: dict[type, str] = {
    ShortType: "integer",
    IntegerType: "integer",
    LongType: "integer",
    FloatType: "real",
    DoubleType: "double",
    StringType: "text",
    BinaryType: "bytea",
    BooleanType: "boolean",
    DateType: "date",
    TimestampType: "timestamptz",
    TimestampNTZType: "timestamp",
}


def postgres_kind(dtype: DataType) -> str | None:
    """How a PostgreSQL column hashed as ``dtype`` prints its values; None for arrays, composites and numerics
    without a declared scale (which print each value's own scale)."""
    if isinstance(dtype, UnconstrainedNumeric):
        return None
    if isinstance(dtype, DecimalType):
        return f"numeric:{dtype.scale}"
    return _KINDS.get(type(dtype))


def postgres_kinds(plan: SidePlan) -> list[str] | None:
    """The kind of each hashed column of a PostgreSQL side, or None when one has no printer."""
    kinds = [postgres_kind(dtype) for _, dtype in plan.hashed]
    return None if None in kinds else kinds  # type: ignore[return-value]


def probe_hash() -> int:
    """``hashtextextended(CAST(ROW(PROBE) AS text), 0)`` as the engine computes it."""
    batch = pa.record_batch([pa.array([v]) for v in PROBE], names=["a", "b"])
    keys, _ = postgres_row_digests(batch, [0, 1], ["text", "text"], 2)
    return int(np.frombuffer(keys, "<i8")[0])


def _plain(column: pa.Array) -> pa.Array:
    return column.dictionary_decode() if pa.types.is_dictionary(column.type) else column


def row_digests(
    batch: pa.RecordBatch, positions: Sequence[int], kinds: Sequence[str], key_count: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``batch``: the first 32 bits of its key text's hash (uint32, the segment's bits, as
    PostgreSQL's ``(h >> 32) & 4294967295``) and the first 16 bytes of its row text's SHA-256 (an ``(n, 16)`` uint8
    array)."""
    columns = [_plain(batch.column(i)) for i in positions]
    plain = pa.RecordBatch.from_arrays(columns, names=[f"c{i}" for i in range(len(columns))])
    keys, rows = postgres_row_digests(plain, list(range(len(columns))), list(kinds), key_count)
    prefix = (np.frombuffer(keys, "<u8") >> np.uint64(32)).astype(np.uint32)
    return prefix, np.frombuffer(rows, np.uint8).reshape(-1, 16)


def printable(schema: pa.Schema, positions: Sequence[int], kinds: Sequence[str], key_count: int) -> bool:
    """Whether the columns of ``schema`` at ``positions`` can be printed as ``kinds``."""
    fields = [schema.field(i) for i in positions]
    types = [f.type.value_type if pa.types.is_dictionary(f.type) else f.type for f in fields]
    empty = pa.RecordBatch.from_arrays(
        [pa.array([], t) for t in types], names=[f"c{i}" for i in range(len(types))]
    )
    try:
        postgres_row_digests(empty, list(range(len(types))), list(kinds), key_count)
    except ValueError:
        return False
    return True
