"""What ``hashexpr.arrow`` takes as data: anything that exports Arrow, or Parquet files, as a stream of batches.

Every input becomes an :class:`~hashexpr.arrow.plan.Input`: its batches and each column's plan, so that every
column hashes as Spark reads the same data from Parquet (``docs/ARROW.md``). Parquet files, pyarrow datasets,
``ParquetFile`` and scanners show the engine their Parquet types (:mod:`hashexpr.arrow.paths`,
:mod:`hashexpr.arrow.parquet`); other data
shows its Arrow types and, when it was read from a file Spark wrote, Spark's schema in its metadata.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hashexpr.arrow.plan import Input
from hashexpr.names import Resolver


def read(data: Any, function: str) -> Input:
    """Return ``data`` as the engine's input.

    A path (``str`` or ``os.PathLike``) is a Parquet file or a directory of them, read as ``spark.read.parquet``
    reads it; a ``pyarrow.parquet.ParquetFile``, a pyarrow dataset or scanner is read with its Parquet types; a
    pyarrow Table keeps its chunks; a pandas DataFrame goes through :meth:`pyarrow.Table.from_pandas` as
    ``DataFrame.to_parquet`` writes it (a ``RangeIndex`` is not written, any other index is, as columns after
    the others); a DuckDB relation and anything with ``__arrow_c_stream__`` (Polars, ...) is read batch by batch.
    """
    if isinstance(data, Input):
        return data
    if isinstance(data, pa.Table):
        return Input.of(data.schema, data.to_batches(), data.num_rows, "the data")
    if isinstance(data, pa.RecordBatch):
        return Input.of(data.schema, [data], data.num_rows, "the data")
    if isinstance(data, pa.RecordBatchReader):
        return Input.of(data.schema, data, None, "the data")
    # pyarrow.dataset imports pandas where it is installed (a third of a second): only for data that needs it.
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    if isinstance(data, (str, os.PathLike, pq.ParquetFile, ds.Dataset, ds.Scanner)):
        try:
            return _parquet(data, function)
        except (ValueError, FileNotFoundError) as error:
            if str(error).startswith(f"{function}:"):
                raise
            raise type(error)(f"{function}: {error}") from None
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        # preserve_index=None is DataFrame.to_parquet's: a RangeIndex is metadata only, any other index columns.
        table = pa.Table.from_pandas(data, preserve_index=None)
        return Input.of(table.schema, table.to_batches(), table.num_rows, "the DataFrame")
    if module == "polars":
        _check_polars(data, function)
        if hasattr(data, "collect"):
            data = data.collect()
    if hasattr(data, "scanner") and hasattr(data, "count_rows"):
        batches = data.scanner().to_reader()
    elif hasattr(data, "to_reader"):
        batches = data.to_reader()
    elif hasattr(data, "to_arrow_reader"):
        batches = data.to_arrow_reader()
    elif hasattr(data, "fetch_record_batch"):
        batches = data.fetch_record_batch()
    elif hasattr(data, "__arrow_c_stream__"):
        batches = pa.RecordBatchReader.from_stream(data)
    elif hasattr(data, "__arrow_c_array__"):
        batch = pa.record_batch(data)
        return Input.of(batch.schema, [batch], batch.num_rows, "the data")
    else:
        raise TypeError(
            f"{function}: expected Arrow data (a pyarrow Table, RecordBatch, RecordBatchReader, dataset or scanner, "
            "a pandas or Polars DataFrame, a DuckDB relation, anything with __arrow_c_stream__) or the path of "
            f"Parquet files, got {type(data).__name__}"
        )
    return Input.of(batches.schema, batches, None, "the data")


def _parquet(data: Any, function: str) -> Input:
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from hashexpr.arrow import parquet, paths

    if isinstance(data, pq.ParquetFile):
        return parquet.from_parquet_file(data)
    if isinstance(data, ds.Dataset):
        return parquet.from_dataset(data, function)
    if isinstance(data, ds.Scanner):
        return parquet.from_scanner(data, function)
    return paths.from_path(data)


def reader(data: Any, function: str) -> tuple[pa.RecordBatchReader, int | None]:
    """Return ``data`` as a record batch reader as the engine takes it, and its row count when known without
    reading it; a column the engine cannot hash as Spark keeps its Arrow type (the engine refuses it)."""
    found = read(data, function)
    return found.unchecked(), found.rows


_POLARS_REFUSED = {
    "Int128": "Polars writes no Parquet for it and Spark has no 128-bit integer; cast it to pl.Decimal(38, 0)",
    "UInt128": "Polars writes no Parquet for it and Spark has no 128-bit integer; cast it to pl.Decimal(38, 0)",
    "Object": "it holds Python objects, which have no Arrow form; cast it to a Polars type",
}


def _check_polars(frame: Any, function: str) -> None:
    """Polars types that Arrow cannot take, refused naming the column (Polars' own error names none)."""
    schema = frame.collect_schema() if hasattr(frame, "collect_schema") else frame.schema
    for name, dtype in schema.items():
        for kind, fix in _POLARS_REFUSED.items():
            if _has_polars_type(dtype, kind):
                raise ValueError(f"{function}: column {name!r} is of the Polars type {dtype}: {fix}")


def _has_polars_type(dtype: Any, kind: str) -> bool:
    if type(dtype).__name__ == kind or str(dtype) == kind:
        return True
    inner = getattr(dtype, "inner", None)
    if inner is not None and _has_polars_type(inner, kind):
        return True
    return any(_has_polars_type(f.dtype, kind) for f in getattr(dtype, "fields", None) or [])


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
