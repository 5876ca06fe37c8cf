"""What ``hashexpr.arrow`` takes as data: anything that exports Arrow, as a stream of record batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hashexpr.names import Resolver


def reader(data: Any, function: str) -> tuple[pa.RecordBatchReader, int | None]:
    """Return ``data`` as a record batch reader, and its row count when known without reading it.

    A pyarrow Table keeps its chunks; a pandas DataFrame goes through :meth:`pyarrow.Table.from_pandas` without
    its index, as ``DataFrame.to_parquet`` writes it; a pyarrow dataset or scanner, a DuckDB relation and
    anything with ``__arrow_c_stream__`` (Polars, ...) is read batch by batch.
    """
    if isinstance(data, pa.Table):
        return data.to_reader(), data.num_rows
    if isinstance(data, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(data.schema, [data]), data.num_rows
    if isinstance(data, pa.RecordBatchReader):
        return data, None
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        table = pa.Table.from_pandas(data, preserve_index=False)
        return table.to_reader(), table.num_rows
    if module == "polars" and hasattr(data, "collect"):
        data = data.collect()
    if hasattr(data, "scanner") and hasattr(data, "count_rows"):
        return data.scanner().to_reader(), None
    if hasattr(data, "to_reader"):
        return data.to_reader(), None
    if hasattr(data, "to_arrow_reader"):
        return data.to_arrow_reader(), None
    if hasattr(data, "fetch_record_batch"):
        return data.fetch_record_batch(), None
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data), None
    if hasattr(data, "__arrow_c_array__"):
        batch = pa.record_batch(data)
        return pa.RecordBatchReader.from_batches(batch.schema, [batch]), batch.num_rows
    raise TypeError(
        f"{function}: expected Arrow data (a pyarrow Table, RecordBatch, RecordBatchReader or dataset, a pandas "
        f"or Polars DataFrame, a DuckDB relation, or anything with __arrow_c_stream__), got {type(data).__name__}"
    )


def resolve(
    schema: pa.Schema, requested: Sequence[str] | str | None, function: str, what: str = "column"
) -> list[int]:
    """Return the positions of the ``requested`` columns (every column for ``None``), as Spark resolves names.

    A name matches a column exactly, or else the one column whose name equals it ignoring case.
    """
    names = list(schema.names)
    if requested is None:
        return list(range(len(names)))
    if isinstance(requested, str):
        requested = [requested]
    positions = []
    for name in requested:
        if not isinstance(name, str):
            raise TypeError(f"{function}: {what} names must be str, got {type(name).__name__}: {name!r}")
        exact = [i for i, n in enumerate(names) if n == name]
        folded = [i for i, n in enumerate(names) if n.lower() == name.lower()]
        found = exact or folded
        if len(found) != 1:
            problem = "is ambiguous" if found else f"is unknown{Resolver(names, lambda: False).hint(name)}"
            shown = ", ".join(names[:50]) + (f", ... ({len(names) - 50} more)" if len(names) > 50 else "")
            raise ValueError(f"{function}: {what} {name!r} {problem}; available columns: {shown}")
        positions.append(found[0])
    return positions
