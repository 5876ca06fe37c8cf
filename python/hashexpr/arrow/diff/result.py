"""``hx.diff``'s result over Arrow data: :func:`diff` (the rows) and :func:`diff_counts` (the counts), from two
snapshots read twice, for their hashes and then for the values of the changed rows."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from hashexpr.arrow.diff.compare import (
    Algorithm,
    Hashes,
    changed_columns,
    compare,
    hash_rows,
    row_positions,
    take,
)
from hashexpr.arrow.diff.spec import Spec, Unsupported, checked, key_type
from hashexpr.arrow.inputs import read
from hashexpr.arrow.plan import Input

#: A snapshot: anything :func:`hashexpr.arrow.record_hash` takes — a path of Parquet files (read as
#: ``spark.read.parquet`` reads it), a pyarrow Table, dataset or ``ParquetFile``, a pandas or Polars DataFrame, a
#: DuckDB relation — or a function of the column names to read (``None``: every column) that returns such data
#: (a RecordBatchReader, ...) of the same rows in the same order on every call. :func:`diff` reads it twice.
Snapshot = Any

# Data read again by reading the same object: a stream is read once, and read again by asking for it again.
_REREAD = (pa.Table, pa.RecordBatch, str, os.PathLike, pq.ParquetFile, ds.Dataset, Input)


class _Side:
    """A snapshot as the diff reads it, through ``hashexpr.arrow``'s inputs: its schema (each column's Arrow type
    as the engine hashes it) and its columns, read as often as the diff needs them."""

    def __init__(self, snapshot: Snapshot, name: str, reads: int) -> None:
        if reads > 1 and isinstance(snapshot, pa.RecordBatchReader):
            raise TypeError(
                f"diff reads each snapshot twice (its hashes, then the values of the changed rows), and {name} is "
                "a RecordBatchReader, which reads once: pass a Table, a dataset, the path of its files, or a "
                "function that reads it"
            )
        self.snapshot = snapshot
        self.name = name
        self.function = callable(snapshot) and not isinstance(snapshot, _REREAD)
        # A table, a path or a dataset reads again from its first reading; a stream is asked for again.
        self.again = isinstance(snapshot, _REREAD) or type(snapshot).__module__.split(".")[0] == "pandas"
        self._first: Input | None = self._input(None)
        self.schema = self._first.schema.remove_metadata()

    def _input(self, columns: Sequence[str] | None) -> Input:
        data = self.snapshot
        if self.function:
            data = data(None if columns is None else list(columns))
        return read(data, "diff")

    def read(self, columns: Sequence[str], plain: bool = False) -> pa.RecordBatchReader:
        """The columns named, in this order, as the engine hashes them; with ``plain``, view types (Polars'
        strings) as their plain types, which pyarrow's ``take`` has kernels for."""
        if self.function or self._first is None:
            found = self._input(columns)
        else:
            found = self._first
            if not self.again:
                self._first = None
        names = found.schema.names
        missing = [c for c in columns if c not in names]
        if missing:
            raise ValueError(
                f"diff: {self.name} gave other columns when read again (no {missing[0]!r}); a snapshot must give "
                "the same rows in the same order on every read"
            )
        reader = found.columns([names.index(c) for c in columns], "diff")
        if not plain:
            return reader
        schema = pa.schema([f.with_type(_plain(f.type)) for f in reader.schema])
        if schema == reader.schema:
            return reader
        return pa.RecordBatchReader.from_batches(
            schema,
            (
                pa.RecordBatch.from_arrays([c.cast(f.type) for c, f in zip(b.columns, schema)], schema=schema)
                for b in reader
            ),
        )


def _plain(t: pa.DataType) -> pa.DataType:
    """``t`` with ``string_view`` and ``binary_view`` as ``string`` and ``binary``, at any depth."""
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_plain(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_plain(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_plain(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_plain(t.value_type)), t.list_size)
    if pa.types.is_map(t):
        key, item = t.key_field, t.item_field
        return pa.map_(key.with_type(_plain(key.type)), item.with_type(_plain(item.type)), t.keys_sorted)
    return t


def _hashes(spec: Spec, sides: tuple[_Side, _Side], threads: int | None) -> tuple[Hashes, Hashes]:
    options = {"algorithm": spec.algorithm, "hmac_key": spec.hmac_key, "threads": threads}
    return tuple(  # type: ignore[return-value]
        hash_rows(
            side.read(spec.names(i)),
            [pair[i] for pair in spec.key],
            [pair[i] for pair in spec.columns],
            **options,
        )
        for i, side in enumerate(sides)
    )


def diff_counts(
    old: Snapshot,
    new: Snapshot,
    key: str | Sequence[str],
    *,
    columns: Sequence[str] | None = None,
    algorithm: Algorithm = "murmur3",
    hmac_key: bytes | str | None = None,
    threads: int | None = None,
) -> dict[str, int]:
    """Return the number of rows of each change type, as ``hx.diff_plan(...).counts`` gives them.

    Each side is read once, for its key and compared columns; nothing but hashes is kept.

    Parameters
    ----------
    old, new : :data:`Snapshot`
        The two snapshots: paths, pyarrow Tables or datasets, DataFrames, ..., or functions that read them (see
        :data:`Snapshot`); each is read as :func:`hashexpr.arrow.record_hash` reads it.
    key, columns
        As for ``hx.diff``: the key column(s), and the columns to compare (default: every non-key column,
        which requires both sides to have the same columns and types).
    algorithm, hmac_key, threads
        As for :func:`hashexpr.arrow.record_hash`.

    Returns
    -------
    dict of str to int
        Every key of :data:`CHANGE_TYPES`.

    Examples
    --------
    >>> import pyarrow as pa
    >>> old = pa.table({"id": [1, 2, 2], "v": ["a", "b", "c"]})
    >>> new = pa.table({"ID": [1, 2], "v": ["a", "b"]})
    >>> diff_counts(old, new, "id")
    {'insert': 0, 'update': 0, 'delete': 0, 'unchanged': 1, 'duplicate_key': 3, 'null_key': 0}
    """
    sides = (_Side(old, "old", 1), _Side(new, "new", 1))
    spec = checked((sides[0].schema, sides[1].schema), key, columns, algorithm, hmac_key)
    return compare(*_hashes(spec, sides, threads)).counts


def diff(
    old: Snapshot,
    new: Snapshot,
    key: str | Sequence[str],
    *,
    columns: Sequence[str] | None = None,
    include_values: bool = False,
    changed_columns: bool = True,
    algorithm: Algorithm = "murmur3",
    hmac_key: bytes | str | None = None,
    threads: int | None = None,
) -> pa.Table:
    """Return the rows that differ between two snapshots: ``hx.diff``'s result, computed without Spark.

    The same rows, columns and values as ``hx.diff(old, new, key, columns=..., include_values=...,
    changed_columns=...)`` over the same data in Spark: the key columns (the old side's spelling; a type that
    differs between the sides widened as Spark widens it, e.g. INT and BIGINT to BIGINT), ``change``,
    ``side``, ``changed_columns`` and, with ``include_values``, the structs ``old`` and ``new`` of the
    compared values. Each side is read once for its hashes (:func:`hash_rows`), and once more for the values of
    the changed rows only, which are checked against their hashes: a snapshot that gives other rows on its
    second read fails with a ValueError instead of a wrong result.

    Parameters
    ----------
    old, new : :data:`Snapshot`
        The two snapshots: paths, pyarrow Tables or datasets, DataFrames, ..., or functions that read them (see
        :data:`Snapshot`); each is read as :func:`hashexpr.arrow.record_hash` reads it.
    key, columns, include_values, changed_columns
        As for ``hx.diff`` (no ``include_unchanged``: unchanged rows are never read again).
    algorithm, hmac_key, threads
        As for :func:`hashexpr.arrow.record_hash`.

    Returns
    -------
    :class:`pyarrow.Table`
        One row per difference, in no particular order.

    Raises
    ------
    ValueError
        With ``hx.diff``'s message, for names, schemas and types it refuses.
    Unsupported
        Before anything is read, when the rows cannot be given as Spark gives them: key types that differ
        between the sides in a way other than atomic widening, or no compared column with ``include_values``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> old = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "s": ["a", "b", "c"], "x": [1.0, 2.0, None]})
    >>> new = pa.table({"id": pa.array([1, 2, 4], pa.int32()), "s": ["a", "b", "d"], "x": [1.0, 2.5, 4.0]})
    >>> for row in sorted(diff(old, new, "id").to_pylist(), key=lambda r: r["id"]):
    ...     print(row)
    {'id': 2, 'change': 'update', 'side': 'both', 'changed_columns': ['x']}
    {'id': 3, 'change': 'delete', 'side': 'old', 'changed_columns': None}
    {'id': 4, 'change': 'insert', 'side': 'new', 'changed_columns': None}
    """
    sides = (_Side(old, "old", 2), _Side(new, "new", 2))
    spec = checked((sides[0].schema, sides[1].schema), key, columns, algorithm, hmac_key)
    key_types = [key_type(spec, pair) for pair in spec.key]
    if include_values and not spec.columns:
        raise Unsupported("there is no column to compare, and the structs old and new would have no field")
    hashes = _hashes(spec, sides, threads)
    found = compare(*hashes).rows
    values = [
        _values(spec, i, sides[i], found["old_row" if i == 0 else "new_row"], hashes[i], threads)
        for i in (0, 1)
    ]
    side = _array(found["side"])
    from_old = pc.equal(side, "old")
    n = found.num_rows
    # Key values: the old row's for a row from old alone, else the new row's.
    pick = pc.if_else(from_old, row_positions(n), pc.add(row_positions(n), n))
    output: dict[str, Any] = {}
    for j, (pair, arrow_type) in enumerate(zip(spec.key, key_types)):
        both = pa.concat_arrays([_array(values[i].column(j)).cast(arrow_type) for i in (0, 1)])
        output[pair[0]] = both.take(pick)
    output["change"] = found["change"]
    output["side"] = side
    canonical = [o for o, _ in spec.columns]
    compared = [v.select(range(len(spec.key), v.num_columns)).rename_columns(canonical) for v in values]
    if changed_columns:
        output["changed_columns"] = _changed_columns(spec, found, compared)
    if include_values:
        for i, name in enumerate(("old", "new")):
            missing = pc.equal(side, "new" if i == 0 else "old")
            arrays = [_array(c) for c in compared[i].columns]
            output[name] = pa.StructArray.from_arrays(arrays, names=canonical, mask=missing)
    return pa.table(output)


def _array(column: pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _values(
    spec: Spec, i: int, side: _Side, positions: pa.ChunkedArray, hashes: Hashes, threads: int | None
) -> pa.Table:
    """Side ``i``'s key and compared columns at ``positions`` (NULL rows where a position is NULL), read
    again and checked against the hashes of the first read."""
    positions = _array(positions)
    valid = pc.is_valid(positions)
    wanted = positions.filter(valid)
    reader = side.read(spec.names(i), plain=True)
    try:
        rows = take(reader, wanted, reader.schema)
    except ValueError as error:
        if not str(error).startswith("take:"):
            raise
        raise ValueError(
            f"diff: {side.name} gave fewer rows when read a second time ({error}); a snapshot must give the same "
            "rows in the same order on every read"
        ) from None
    again = hash_rows(
        rows.to_batches(),
        [pair[i] for pair in spec.key],
        [pair[i] for pair in spec.columns],
        algorithm=spec.algorithm,  # type: ignore[arg-type]
        hmac_key=spec.hmac_key,
        threads=threads,
    )
    first = [hashes.key_hash.take(wanted), hashes.row_hash.take(wanted)]
    if len(wanted) and not (again.key_hash.equals(first[0]) and again.row_hash.equals(first[1])):
        raise ValueError(
            f"diff: {side.name} gave other rows when read a second time; a snapshot must give the same rows in the "
            "same order on every read (were its files being written?)"
        )
    index = pc.subtract(pc.cumulative_sum(pc.cast(valid, pa.int64())), 1) if len(positions) else positions
    return rows.take(pc.if_else(valid, index, pa.scalar(None, pa.int64())))


def _changed_columns(spec: Spec, found: pa.Table, compared: list[pa.Table]) -> pa.Array:
    """``changed_columns``: the compared columns that differ for an update, NULL for any other change."""
    if not found.num_rows:
        return pa.array([], pa.list_(pa.string()))
    update = pc.equal(found["change"], "update")
    indices = pc.indices_nonzero(update)
    names = changed_columns(
        compared[0].take(indices),
        compared[1].take(indices),
        algorithm=spec.algorithm,  # type: ignore[arg-type]
        hmac_key=spec.hmac_key,
    )
    index = pc.subtract(pc.cumulative_sum(pc.cast(update, pa.int64())), 1)
    return names.take(pc.if_else(update, index, pa.scalar(None, pa.int64())))
