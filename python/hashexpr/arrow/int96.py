"""Parquet ``INT96`` timestamps that pyarrow misreads: the years it cannot read as Spark does.

An ``INT96`` value is a Julian day (a signed 32-bit integer) and the nanoseconds of that day (a signed 64-bit
integer). Spark writes it from microseconds with 64-bit arithmetic that wraps (``toJulianDay``) and reads it back
the same way, so every instant it holds round-trips, years -290308 to 294247. pyarrow reads the day as unsigned
and the nanoseconds as unsigned too, and in microseconds its arithmetic wraps: past year 287,566 (where Spark's own
arithmetic wrapped) and before year 1 it gives another instant (a year-290000 value comes back some 225,000 years
BC). Within those years it reads exactly what Spark reads.

In seconds pyarrow never overflows, and every value it misreads falls outside those years even then (a negative
day read as unsigned lies past year 5,800,000; negative nanoseconds, which Spark writes only for the day before
Julian day 0, before year -4000). :func:`outside` reads a file's ``INT96`` columns so and says which hold a value
outside them; the engine refuses those columns rather than hash another instant.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

#: 0001-01-01 00:00:00 UTC and the last second Spark writes without wrapping (year 287,566), in seconds.
FIRST_SECOND = -62_135_596_800
LAST_SECOND = (2**63 - 1 - 2_440_588 * 86_400_000_000) // 1_000_000

#: Why an INT96 column of a ``pq.ParquetFile`` is refused: its file cannot be read again to be checked.
UNCHECKED = (
    "it is a Parquet INT96 timestamp, which pyarrow reads as another instant before year 1 and after year "
    "287,566, and a ParquetFile cannot be read again to check it: pass the file's path or a pyarrow dataset"
)

#: Why such a column is refused.
REFUSAL = (
    "it holds a Parquet INT96 timestamp before year 1 or after year 287,566, which pyarrow reads as another "
    "instant (Spark reads it exactly); hash it with Spark"
)


def outside(path: str, columns: Iterable[str], filesystem: Any = None) -> set[str]:
    """The columns among ``columns`` (top-level names with ``INT96`` leaves) of the Parquet file at ``path`` that
    hold a value outside the years pyarrow reads exactly."""
    names = list(columns)
    if not names:
        return set()
    source = filesystem.open_input_file(path) if filesystem is not None else path
    reader = pq.ParquetFile(source, coerce_int96_timestamp_unit="s", pre_buffer=False)
    try:
        found = set()
        for group in range(reader.num_row_groups):
            table = reader.read_row_group(group, columns=[n for n in names if n not in found], use_threads=False)
            for name, column in zip(table.column_names, table.columns):
                if any(_beyond(leaf) for chunk in column.chunks for leaf in _timestamps(chunk)):
                    found.add(name)
            if len(found) == len(names):
                break
        return found
    finally:
        reader.close()


def _beyond(seconds: pa.Array) -> bool:
    if len(seconds) == seconds.null_count:
        return False
    bounds = pc.min_max(seconds.cast(pa.int64()))
    return bounds["min"].as_py() < FIRST_SECOND or bounds["max"].as_py() > LAST_SECOND


def _timestamps(array: pa.Array) -> Iterator[pa.Array]:
    """The timestamp arrays at any depth of ``array`` (the values of lists and maps, the fields of structs)."""
    t = array.type
    if pa.types.is_timestamp(t):
        yield array
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _timestamps(array.field(i))
    elif pa.types.is_map(t):
        yield from _timestamps(array.keys)
        yield from _timestamps(array.items)
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        yield from _timestamps(array.values)
