"""hashexpr's format v1 outside Spark: record hashes, keys and fingerprints of Arrow data, in Rust.

The same bytes as Spark's ``record_hash``, ``record_key_with``, ``dataset_fingerprint`` and ``fingerprints_by``
for pyarrow, pandas, Polars and DuckDB data, with no JVM (``docs/ARROW.md``).

>>> import pyarrow as pa
>>> from hashexpr import arrow as hxa
>>> hxa.dataset_fingerprint(pa.table({"id": pa.array([], pa.int64())}))
'hx1:13f2888eec11c90f5eb8b7bd9baed23c7bd05dc99306f4a632d24011fe48b1ef'
"""

from __future__ import annotations

from hashexpr.arrow.duckdb import register
from hashexpr.arrow.functions import (
    FINGERPRINT_COLUMN,
    dataset_fingerprint,
    fingerprint_state,
    fingerprints_by,
    record_hash,
    record_key,
    spark_types,
)

__all__ = [
    "FINGERPRINT_COLUMN",
    "dataset_fingerprint",
    "fingerprint_state",
    "fingerprints_by",
    "record_hash",
    "record_key",
    "register",
    "spark_types",
]
