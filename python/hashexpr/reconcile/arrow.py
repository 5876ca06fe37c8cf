"""Parquet files and Arrow data as one side of a comparison: hashed by the Rust engine (``hashexpr.arrow``).

Parquet files and Arrow data are read through :mod:`hashexpr.arrow.inputs`, as ``hashexpr.arrow`` reads them:
every column as Spark reads the same data (INT96 timestamps, a file's Spark schema, partition directories, pandas
indexes), and what the engine cannot be sure of refused. The rows are read as record batches, one at a time (a
Parquet file a column chunk at a time), and the engine computes each batch's key hashes and row hashes with
SHA-256 on every core (against PostgreSQL, the digests of the rows' texts as the server prints them:
:mod:`hashexpr.reconcile.texts`); the segments' counts and sums are added up with numpy. A source whose rows
come back in the same order on every read (Parquet files, an Arrow table) keeps each row's first four key-hash
bytes from the first pass (4 bytes a row), so later passes hash only the rows of the segments they ask for.
:class:`ArrowEngine` is also how DuckDB's rows are hashed (:mod:`hashexpr.reconcile.duckdb`): DuckDB hands its
rows over as Arrow within the process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hashexpr.arrow import record_hash, record_key, spark_types
from hashexpr.arrow.plain import plain, plain_batch, plain_type
from hashexpr.arrow.plan import Input
from hashexpr.arrow.uuids import is_uuid, uuid_text
from hashexpr.reconcile import texts
from hashexpr.reconcile.catalog import SideColumn
from hashexpr.reconcile.columns import SidePlan
from hashexpr.reconcile.segments import NULL_SEGMENT, Accumulator, Aggregates, key_prefix, lanes, segment_of
from hashexpr.reconcile.sources import (
    COLUMN_HASH_BYTES,
    COLUMN_HASHES,
    KEY_HASH,
    NULL_KEY,
    ROW_HASH,
    Source,
    empty_fetch,
    key_column,
    value_column,
)
from hashexpr.sql.types import parse_type
from hashexpr.types import NullType, StringType

_SHA = "sha256"
#: Rows per batch read from a stream.
BATCH_ROWS = 65_536
#: How errors name the data they are about.
FUNCTION = "reconcile"


def _matrix(hashes: pa.Array) -> np.ndarray:
    """A FixedSizeBinary(32) array of hashes (no NULLs) as an ``(n, 32)`` uint8 array."""
    width = hashes.type.byte_width
    data = np.frombuffer(hashes.buffers()[1], np.uint8)
    return data[hashes.offset * width : (hashes.offset + len(hashes)) * width].reshape(-1, width)


def _binary(matrix: np.ndarray) -> pa.Array:
    """Rows of a uint8 matrix as a binary array."""
    n, width = matrix.shape
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), n, [None, pa.py_buffer(np.ascontiguousarray(matrix).tobytes())]
    )
    return fixed.cast(pa.binary())


class ArrowEngine(Source):
    """A source whose rows are Arrow record batches, hashed by the Rust engine. Subclasses give the batches."""

    #: Whether every read gives the rows in the same order (the key-hash prefixes of the first pass are kept).
    stable_order = False

    def __init__(self) -> None:
        super().__init__()
        self._prefix: np.ndarray | None = None
        self._null: np.ndarray | None = None
        self._kinds: list[str] | None = None
        self._done, self._began = 0, time.perf_counter()

    def _batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """The rows, with these columns (exact names), batch by batch."""
        raise NotImplementedError

    def _check_unchanged(self) -> None:
        """Raise when the data changed since the source was opened."""

    def _close(self) -> None:
        self._prefix = self._null = None
        self._kinds = None

    # --- PostgreSQL's row texts in place of the hashes (texts.py) -------------------------------------------

    def prints_postgres_texts(self, plan: SidePlan, kinds: list[str]) -> bool:
        schema = self._schema()
        names = [n for n, _ in plan.hashed]
        if any(schema.get_field_index(n) < 0 for n in names):
            return False
        positions = [schema.get_field_index(n) for n in names]
        return texts.printable(schema, positions, kinds, len(plan.key))

    def use_postgres_texts(self, kinds: list[str]) -> None:
        self._kinds = list(kinds)

    def _texts(self, batch: pa.RecordBatch, plan: SidePlan) -> tuple[np.ndarray, np.ndarray]:
        """Each row's key-text prefix and row-text digest (texts.row_digests) of a batch of ``_read``."""
        positions = [batch.schema.get_field_index(n) for n, _ in plan.hashed]
        return texts.row_digests(batch, positions, self._kinds, len(plan.key))

    # --- hashing ------------------------------------------------------------------------------------------

    @staticmethod
    def _null_keys(batch: pa.RecordBatch, names: Sequence[str]) -> np.ndarray:
        null = np.zeros(batch.num_rows, bool)
        for name in names:
            column = batch.column(batch.schema.get_field_index(name))
            if column.null_count:
                null |= pc.is_null(column).to_numpy(zero_copy_only=False)
        return null

    def _keyed(self, batch: pa.RecordBatch, plan: SidePlan, start: int) -> tuple[np.ndarray, np.ndarray]:
        """Each row's first four key-hash bytes and NULL-key flag: kept from the first pass, or computed."""
        n = batch.num_rows
        if self._prefix is not None:
            return self._prefix[start : start + n], self._null[start : start + n]
        names = [name for name, _ in plan.key]
        if self._kinds is not None:
            # The key's text alone: its hash is the same whatever columns follow the key.
            positions = [batch.schema.get_field_index(n) for n in names]
            prefix, _ = texts.row_digests(batch, positions, self._kinds[: len(names)], len(names))
            return prefix, self._null_keys(batch, names)
        keys = _matrix(record_key(batch, names, algorithm=_SHA))
        return key_prefix(keys), self._null_keys(batch, names)

    def _read(self, plan: SidePlan, columns: Sequence[str]) -> Iterator[tuple[int, pa.RecordBatch]]:
        self._check_unchanged()
        self._done, self._began = 0, time.perf_counter()
        start = 0
        for batch in self._batches(columns):
            yield start, batch
            start += batch.num_rows
            self._done = start

    def progress(self) -> str | None:
        done, seconds = self._done, time.perf_counter() - self._began
        rate = f", {done / seconds:,.0f} rows/s" if seconds > 0 and done else ""
        return f"{done:,} rows read{rate}"

    def _aggregate(self, plan: SidePlan, bits: int, within: tuple[int, np.ndarray] | None) -> Aggregates:
        names = _unique([n for n, _ in plan.key] + [n for n, _ in plan.hashed])
        hashed = [n for n, _ in plan.hashed]
        total = Accumulator(bits)
        keep = within is None and self.stable_order
        prefixes, nulls = [], []
        key_names = [n for n, _ in plan.key]
        for start, batch in self._read(plan, names):
            if self._kinds is not None:
                # Both digests come from one print of the row; a refinement keeps the rows it asks for.
                prefix, digests = self._texts(batch, plan)
                null = self._null_keys(batch, key_names)
                if keep:
                    prefixes.append(prefix)
                    nulls.append(null)
                if within is not None:
                    bits0, segments = within
                    mask = ~null & np.isin(segment_of(prefix, bits0), segments)
                    prefix, null, digests = prefix[mask], null[mask], digests[mask]
                segment = np.where(null, NULL_SEGMENT, segment_of(prefix, bits))
                total.add(segment, lanes(digests))
                continue
            if within is None:
                keys = _matrix(record_key(batch, key_names, algorithm=_SHA))
                prefix, null = key_prefix(keys), self._null_keys(batch, key_names)
                if keep:
                    prefixes.append(prefix)
                    nulls.append(null)
                rows = batch
            else:
                prefix, null = self._keyed(batch, plan, start)
                bits0, segments = within
                mask = ~null & np.isin(segment_of(prefix, bits0), segments)
                if not mask.any():
                    continue
                rows = _filter(batch, mask)
                prefix, null = prefix[mask], null[mask]
            segment = np.where(null, NULL_SEGMENT, segment_of(prefix, bits))
            total.add(segment, lanes(_matrix(record_hash(rows, hashed, algorithm=_SHA))))
        if keep:
            self._prefix = np.concatenate(prefixes) if prefixes else np.zeros(0, np.uint32)
            self._null = np.concatenate(nulls) if nulls else np.zeros(0, bool)
        return total.result()

    def _fetch(self, plan: SidePlan, bits: int, segments: np.ndarray, values: bool) -> pa.Table:
        key_names = [n for n, _ in plan.key]
        compared = [n for n, _ in plan.compared]
        names = _unique(key_names + [n for n, _ in plan.hashed])
        wanted = np.asarray(segments, np.int64)
        parts = []
        for start, batch in self._read(plan, names):
            prefix, null = self._keyed(batch, plan, start)
            segment = np.where(null, NULL_SEGMENT, segment_of(prefix, bits))
            mask = np.isin(segment, wanted)
            if not mask.any():
                continue
            rows = _filter(batch, mask)
            keys = record_key(rows, key_names, algorithm=_SHA)
            row_hashes = record_hash(rows, [n for n, _ in plan.hashed], algorithm=_SHA)
            if compared:
                column_hashes = np.hstack(
                    [_matrix(record_hash(rows, [c], algorithm=_SHA))[:, :COLUMN_HASH_BYTES] for c in compared]
                )
            else:
                column_hashes = np.zeros((rows.num_rows, 0), np.uint8)
            columns = {
                key_column(i): plain(rows.column(rows.schema.get_field_index(n))) for i, n in enumerate(key_names)
            }
            columns[KEY_HASH] = keys.cast(pa.binary())
            columns[ROW_HASH] = row_hashes.cast(pa.binary())
            columns[COLUMN_HASHES] = _binary(column_hashes)
            columns[NULL_KEY] = pa.array(null[mask])
            if values:
                for i, n in enumerate(compared):
                    columns[value_column(i)] = plain(rows.column(rows.schema.get_field_index(n)))
            parts.append(pa.table(columns))
        if not parts:
            schema = self._schema()
            value_types = [plain_type(schema.field(n).type) for n in compared] if values else None
            return empty_fetch([plain_type(schema.field(n).type) for n in key_names], value_types)
        table = pa.concat_tables(parts)
        self.stats.result_bytes += table.nbytes
        return table

    def _schema(self) -> pa.Schema:
        raise NotImplementedError

    def row_estimate(self) -> int:
        raise NotImplementedError


def _filter(batch: pa.RecordBatch, mask: np.ndarray) -> pa.RecordBatch:
    """The rows of ``mask``; view types, which pyarrow cannot filter at every depth (Polars' strings), as their
    plain large types (the engine hashes both alike)."""
    try:
        return batch.filter(pa.array(mask))
    except pa.ArrowNotImplementedError:
        return plain_batch(batch).filter(pa.array(mask))


def _unique(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


def arrow_columns(schema: pa.Schema) -> list[SideColumn]:
    """Each field of ``schema`` with the Spark type the Rust engine hashes it as, or why it cannot."""
    return [_arrow_column(field.name, field.type, str(field.type)) for field in schema]


def _arrow_column(name: str, t: pa.DataType, shown: str) -> SideColumn:
    if pa.types.is_null(t):
        # A column without a value (pyarrow infers type null for one): NULLs of any type hash alike.
        return SideColumn(name, shown, NullType())
    if is_uuid(t):
        # Compared by its canonical text, as PostgreSQL's and DuckDB's UUIDs are (InputSource reads it so).
        return SideColumn(name, shown, StringType())
    try:
        ((_, spark),) = spark_types(pa.schema([pa.field(name, t)]))
    except ValueError as why:
        return SideColumn(name, shown, None, str(why).split(": ", 1)[-1])
    return SideColumn(name, shown, parse_type(spark))


def input_columns(found: Input) -> list[SideColumn]:
    """Each column of an input of :mod:`hashexpr.arrow.inputs` as Spark reads it: the type the engine is given
    (an INT96 timestamp as ``TIMESTAMP``, a partition directory's column as Spark infers it, ...), or why the
    engine cannot hash it as Spark does (:mod:`hashexpr.arrow.plan`)."""
    columns = []
    for field, plan in zip(found.schema, found.plans):
        if plan.refusal is not None and not is_uuid(field.type):
            columns.append(SideColumn(plan.name, str(plan.source), None, plan.refusal))
        else:
            columns.append(_arrow_column(plan.name, field.type, str(plan.source)))
    return columns


class InputSource(ArrowEngine):
    """Data read through :mod:`hashexpr.arrow.inputs`, as ``hashexpr.arrow`` reads it: every column as Spark
    reads the same data. Subclasses set ``_found`` when they open."""

    stable_order = True

    def __init__(self) -> None:
        super().__init__()
        self._found: Input | None = None

    def _schema(self) -> pa.Schema:
        schema = self._found.schema
        for i in self._uuids():
            schema = schema.set(i, schema.field(i).with_type(pa.string()))
        return schema

    def _uuids(self) -> set[int]:
        """The positions of the UUID columns, which are read as their text."""
        return {i for i, f in enumerate(self._found.schema) if is_uuid(f.type)}

    def columns(self) -> list[SideColumn]:
        return input_columns(self._found)

    def _batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        positions = [self._found.schema.get_field_index(name) for name in columns]
        for batch in self._found.columns(positions, FUNCTION, allowed=self._uuids()):
            # The engine hashes a column by its type once the schema's metadata is gone (Input.columns).
            yield from _rechunk(_uuids_as_text(batch))


def _uuids_as_text(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with each UUID column as its canonical text."""
    if not any(is_uuid(t) for t in batch.schema.types):
        return batch
    columns = [uuid_text(c) if is_uuid(c.type) else c for c in batch.columns]
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def _rechunk(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    if batch.num_rows <= BATCH_ROWS:
        yield batch
        return
    for start in range(0, batch.num_rows, BATCH_ROWS):
        yield batch.slice(start, BATCH_ROWS)


class ParquetSource(InputSource):
    """Parquet files: a file, a directory (partitioned or not) or a ``pyarrow.dataset`` of files, read as
    ``spark.read.parquet`` reads them (see :func:`hashexpr.reconcile.parquet`)."""

    system = "Parquet"

    def __init__(self, path: Any) -> None:
        super().__init__()
        import pyarrow.dataset as ds

        if isinstance(path, ds.FileSystemDataset):
            self._data: Any = path
            files = list(path.files)
            self.path = ", ".join(files[:3]) + (" ..." if len(files) > 3 else "")
        else:
            self._data = self.path = os.fspath(path)
            if not os.path.exists(self.path):
                raise FileNotFoundError(f"{FUNCTION}: no such file or directory: {self.path}")
        self._stamps: dict[str, tuple[int, int]] = {}
        self._rows = 0

    @property
    def label(self) -> str:
        return f"Parquet {self.path}"

    def _open(self, statement_timeout: float | None) -> None:
        import pyarrow.dataset as ds

        from hashexpr.arrow.inputs import read
        from hashexpr.arrow.paths import list_files

        try:
            if isinstance(self._data, ds.FileSystemDataset):
                files = list(self._data.files)
            else:
                listing = list_files(self._data)
                files = list(listing.data) + ([listing.summary] if listing.summary else [])
            self._stamps = {f: _stamp(f) for f in files}
            self._found = read(self._data, FUNCTION)
        except (ValueError, FileNotFoundError) as error:
            message = str(error).removeprefix(f"{FUNCTION}: ")
            for said in ("hash it with Spark", "hash this data with Spark"):
                message = message.replace(said, "compare it through rc.spark")
            raise type(error)(f"{FUNCTION}: {message}") from None
        except (pa.ArrowException, OSError) as error:
            raise ValueError(f"{FUNCTION}: {self.path} cannot be read as Parquet: {error}") from None
        rows = self._found.rows
        self._rows = rows if rows is not None else self._data.count_rows()

    def _check_unchanged(self) -> None:
        if any(_stamp(f) != stamp for f, stamp in self._stamps.items()):
            raise ValueError(f"{FUNCTION}: {self.path} changed while it was compared; compare it again")

    def _close(self) -> None:
        super()._close()
        self._found = None

    def row_estimate(self) -> int:
        return self._rows


def _stamp(path: str) -> tuple[int, int]:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return -1, -1
    return status.st_size, status.st_mtime_ns


class ArrowDataSource(InputSource):
    """Arrow data (see :func:`hashexpr.reconcile.arrow`): a stream is read once, into memory, when it is opened."""

    system = "Arrow"

    def __init__(self, data: Any) -> None:
        super().__init__()
        from hashexpr.arrow.inputs import read

        self._kind = type(data).__name__
        self._count = data.count_rows if hasattr(data, "count_rows") and hasattr(data, "scanner") else None
        self._found = read(data, FUNCTION)
        self._rereadable = _rereadable(data)
        self._table: pa.Table | None = None

    @property
    def label(self) -> str:
        rows = f", {self._found.rows:,} rows" if self._found.rows is not None else ""
        return f"Arrow data ({self._kind}{rows})"

    def _open(self, statement_timeout: float | None) -> None:
        if not self._rereadable and self._table is None:
            # The comparison reads the rows more than once: the columns the engine can hash, as it hashes them.
            uuids = self._uuids()
            positions = [i for i, p in enumerate(self._found.plans) if p.refusal is None or i in uuids]
            batches = self._found.columns(positions, FUNCTION, allowed=uuids)
            schema = pa.schema([f.with_type(pa.string()) if is_uuid(f.type) else f for f in batches.schema])
            self._table = pa.Table.from_batches([_uuids_as_text(b) for b in batches], schema=schema)

    def row_estimate(self) -> int:
        if self._table is not None:
            return self._table.num_rows
        if self._found.rows is not None:
            return self._found.rows
        return self._count() if self._count is not None else 0

    def _batches(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        if self._table is None:
            yield from super()._batches(columns)
            return
        yield from self._table.select(list(columns)).to_batches(max_chunksize=BATCH_ROWS)


def _rereadable(data: Any) -> bool:
    """Whether :func:`hashexpr.arrow.inputs.read` gives data that can be read again (not a one-time stream)."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    if isinstance(data, (pa.Table, pa.RecordBatch, ds.Dataset, pq.ParquetFile, str, os.PathLike)):
        return True
    return type(data).__module__.split(".")[0] == "pandas"
