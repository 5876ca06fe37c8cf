"""A diff's comparison of hashes: each side's key and row hashes (:func:`hash_rows`), their comparison by key
(:func:`compare`), and the values of the changed rows read again (:func:`take`, :func:`changed_columns`)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc

from hashexpr.arrow.functions import record_hash, record_key
from hashexpr.diff_spec import CHANGE_TYPES

__all__ = ["CHANGE_TYPES", "Changes", "Hashes", "changed_columns", "compare", "hash_rows", "take"]

Algorithm = Literal["murmur3", "sha256", "hmac-sha256"]


@dataclass(frozen=True)
class Hashes:
    """One side's rows as :func:`compare` sees them, in the side's order: a key hash and a row hash per row.

    Attributes
    ----------
    key_hash : :class:`pyarrow.ChunkedArray` or :class:`pyarrow.FixedSizeBinaryArray`
        ``record_key`` of the key columns; NULL where a key part is NULL (such a row is never matched).
    row_hash : :class:`pyarrow.ChunkedArray` or :class:`pyarrow.FixedSizeBinaryArray`
        The hash of the compared values: equal exactly for rows that compare equal; as wide as ``key_hash``.
    """

    key_hash: pa.Array
    row_hash: pa.Array

    def __len__(self) -> int:
        return len(self.key_hash)


@dataclass(frozen=True)
class Changes:
    """What :func:`compare` found.

    Attributes
    ----------
    counts : dict of str to int
        The output rows of each change type, every key of :data:`CHANGE_TYPES` (``unchanged``: the pairs of
        equal rows), as ``hx.diff(..., include_unchanged=True)`` would return them.
    rows : :class:`pyarrow.Table`
        One row per difference: ``change`` and ``side`` as ``hx.diff`` gives them, and ``old_row`` and
        ``new_row``, the positions of its rows in each side (NULL for a side it does not come from). Unchanged
        pairs are left out; the order is unspecified.
    """

    counts: dict[str, int]
    rows: pa.Table


def hash_rows(
    batches: Iterable[pa.RecordBatch],
    key: Sequence[str],
    columns: Sequence[str],
    *,
    algorithm: Algorithm = "murmur3",
    hmac_key: bytes | str | None = None,
    threads: int | None = None,
) -> Hashes:
    """Return the key hash and the row hash of every row of a side, read once, batch by batch.

    Parameters
    ----------
    batches : iterable of :class:`pyarrow.RecordBatch`
        The side's rows, e.g. a RecordBatchReader; only ``key`` and ``columns`` are read from them.
    key : sequence of str
        The key columns: ``record_key`` of them, NULL when any is NULL.
    columns : sequence of str
        The compared columns: ``record_hash`` of them, in this order (widened types hash alike, so an INT
        column and a BIGINT one with equal values give equal hashes).
    algorithm, hmac_key, threads
        As for :func:`hashexpr.arrow.record_hash`.

    Returns
    -------
    :class:`Hashes`

    Examples
    --------
    >>> import pyarrow as pa
    >>> side = pa.table({"id": [1, None], "v": ["a", "b"]})
    >>> hashes = hash_rows(side.to_batches(), ["id"], ["v"])
    >>> len(hashes), hashes.key_hash.null_count, hashes.row_hash.type
    (2, 1, FixedSizeBinaryType(fixed_size_binary[16]))
    """
    width = 32 if algorithm.lower() != "murmur3" else 16
    keys, rows = [], []
    options = {"algorithm": algorithm, "hmac_key": hmac_key, "threads": threads}
    for batch in batches:
        if not batch.num_rows:
            continue
        key_hash = record_key(batch, list(key), **options)
        parts = [pc.is_null(batch.column(k)) for k in key]
        null_key = parts[0]
        for part in parts[1:]:
            null_key = pc.or_(null_key, part)
        keys.append(pc.if_else(null_key, pa.scalar(None, key_hash.type), key_hash))
        if columns:
            rows.append(record_hash(batch, list(columns), **options))
        else:
            # No compared column: every row hashes alike, as the empty row hash of hx.diff.
            rows.append(pa.repeat(pa.scalar(bytes(width), pa.binary(width)), batch.num_rows))
    # Kept in the batches' chunks: concatenating them would hold every hash twice for a moment.
    return Hashes(pa.chunked_array(keys, pa.binary(width)), pa.chunked_array(rows, pa.binary(width)))


def compare(old: Hashes, new: Hashes) -> Changes:
    """Match two sides' rows by key hash and list the differences, as ``hx.diff`` does.

    A key's rows are compared as a whole: when they are the same multiset of row hashes on both sides the key
    is unchanged (its rows pair up); otherwise one row a side is an ``update``, a row on one side only an
    ``insert`` or a ``delete``, and anything else a ``duplicate_key`` with every row of the key on either
    side. A row whose key hash is NULL is a ``null_key``. Memory: a hash of each (key hash, row hash) pair and a
    table of them, about 70 bytes a row of both sides (more with 32-byte hashes), besides the hashes.

    Parameters
    ----------
    old, new : :class:`Hashes`
        The two sides' hashes (:func:`hash_rows`, or hashes computed elsewhere the same way), fixed-size binary
        of one type on both sides.

    Returns
    -------
    :class:`Changes`

    Examples
    --------
    >>> import pyarrow as pa
    >>> old = pa.table({"id": [1, 2, 3, None], "v": ["a", "b", "c", "d"]})
    >>> new = pa.table({"id": [1, 2, 4], "v": ["a", "B", "e"]})
    >>> found = compare(*(hash_rows(t.to_batches(), ["id"], ["v"]) for t in (old, new)))
    >>> found.counts
    {'insert': 1, 'update': 1, 'delete': 1, 'unchanged': 1, 'duplicate_key': 0, 'null_key': 1}
    >>> sorted(found.rows.to_pylist(), key=lambda r: r["change"])[0]
    {'change': 'delete', 'side': 'old', 'old_row': 2, 'new_row': None}
    """
    sides = (old, new)
    types = {(h.key_hash.type, h.row_hash.type) for h in sides}
    if len(types) > 1 or not all(pa.types.is_fixed_size_binary(t) for t in next(iter(types))):
        raise TypeError(
            "compare: the key and row hashes must be fixed-size binary, of one type on both sides (16 bytes, or "
            "32 with SHA-256); cast hashes stored as BINARY with .cast(pyarrow.binary(32))"
        )
    changed_keys = _changed_keys(sides)
    changed_rows, null_rows = [], []
    for side, hashes in enumerate(sides):
        # Only the rows of changed keys, and the NULL-key rows, are taken any further: by their positions.
        held = pc.indices_nonzero(pc.is_in(hashes.key_hash, value_set=changed_keys)).cast(pa.int64())
        count = len(held)
        changed_rows.append(
            pa.table(
                {
                    "kh": hashes.key_hash.take(held),
                    "side": pa.repeat(pa.scalar(side, pa.int64()), count),
                    "row": held,
                }
            )
        )
        null_rows.append(pc.indices_nonzero(pc.is_null(hashes.key_hash)).cast(pa.int64()))
    changed_rows = pa.concat_tables(changed_rows)
    matched = sum(len(h) for h in sides) - sum(len(r) for r in null_rows)
    # The changed keys are few: only their rows are grouped by key.
    per_key = changed_rows.group_by("kh").aggregate([("side", "sum"), ("side", "count")])
    n = per_key["side_sum"]
    o = pc.subtract(per_key["side_count"], n)
    one_old, one_new = pc.equal(o, 1), pc.equal(n, 1)
    no_old, no_new = pc.equal(o, 0), pc.equal(n, 0)
    kind = pc.case_when(
        pc.make_struct(
            pc.and_(one_old, no_new),
            pc.and_(no_old, one_new),
            pc.and_(one_old, one_new),
            field_names=["delete", "insert", "update"],
        ),
        "delete",
        "insert",
        "update",
        "duplicate_key",
    )
    changed = pa.table({"kh": per_key["kh"], "change": kind, "rows": per_key["side_count"]})
    counts = {t: 0 for t in CHANGE_TYPES}
    for entry in changed.group_by("change").aggregate([("rows", "sum"), ("rows", "count")]).to_pylist():
        counts[entry["change"]] = entry["rows_sum" if entry["change"] == "duplicate_key" else "rows_count"]
    # Every other key has as many rows on each side, which pair up.
    counts["unchanged"] = (matched - changed_rows.num_rows) // 2
    counts["null_key"] = sum(len(r) for r in null_rows)
    return Changes(counts, _difference_rows(changed_rows, changed, null_rows))


def _changed_keys(sides: tuple[Hashes, Hashes]) -> pa.Array:
    """The key hashes whose rows differ between the sides: a key is unchanged exactly when each of its (key
    hash, row hash) pairs is as frequent on both sides. The pairs are counted by a hash of the pair (one
    column groups faster than two), of the width and kind of the hashes themselves; a NULL key hash hashes as
    NULL, and such rows (never matched) fall out when the keys are taken."""
    widths = (sides[0].key_hash.type.byte_width, sides[0].row_hash.type.byte_width)
    algorithm = "murmur3" if max(widths) <= 16 else "sha256"
    pairs = [record_hash(pa.table({"kh": h.key_hash, "rh": h.row_hash}), algorithm=algorithm) for h in sides]
    counted = pa.table(
        {
            "pair": pa.chunked_array(pairs),
            "side": pa.chunked_array(
                [pa.repeat(pa.scalar(i, pa.int8()), len(p)) for i, p in enumerate(pairs)]
            ),
        }
    )
    # One thread: nearly every pair is a group of its own, and merging threads' tables costs more than it saves.
    counted = counted.group_by("pair", use_threads=False).aggregate([("side", "sum"), ("side", "count")])
    uneven = counted["pair"].filter(pc.not_equal(counted["side_count"], pc.multiply(counted["side_sum"], 2)))
    keys = [h.key_hash.filter(pc.is_in(p, value_set=uneven)) for h, p in zip(sides, pairs)]
    chunks = [c for k in keys for c in (k.chunks if isinstance(k, pa.ChunkedArray) else [k])]
    return pa.chunked_array(chunks, sides[0].key_hash.type).drop_null().unique()


def row_positions(n: int) -> pa.Array:
    """0, 1, ..., n - 1 as int64."""
    if not n:
        return pa.array([], pa.int64())
    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n)), 1)


def _difference_rows(rows: pa.Table, changed: pa.Table, null_rows: list[pa.Array]) -> pa.Table:
    """One row per difference: change, side, and the positions of its old and new rows (``rows``: those of the
    changed keys)."""
    joined = rows.select(["kh", "side", "row"]).join(
        changed.select(["kh", "change"]), "kh", join_type="inner"
    )
    updates = joined.filter(pc.equal(joined["change"], "update"))
    sides = [updates.filter(pc.equal(updates["side"], s)) for s in (0, 1)]
    pairs = (
        sides[0]
        .select(["kh", "row"])
        .rename_columns(["kh", "old_row"])
        .join(sides[1].select(["kh", "row"]).rename_columns(["kh", "new_row"]), "kh", join_type="inner")
    )
    others = joined.filter(pc.not_equal(joined["change"], "update"))
    is_old = pc.equal(others["side"], 0)
    none = pa.scalar(None, pa.int64())
    parts = [
        pa.table(
            {
                "change": pa.repeat(pa.scalar("update"), pairs.num_rows),
                "side": pa.repeat(pa.scalar("both"), pairs.num_rows),
                "old_row": pairs["old_row"],
                "new_row": pairs["new_row"],
            }
        ),
        pa.table(
            {
                "change": others["change"],
                "side": pc.if_else(is_old, "old", "new"),
                "old_row": pc.if_else(is_old, others["row"], none),
                "new_row": pc.if_else(is_old, none, others["row"]),
            }
        ),
    ]
    for side, found in zip(("old", "new"), null_rows):
        missing = pa.repeat(none, len(found))
        parts.append(
            pa.table(
                {
                    "change": pa.repeat(pa.scalar("null_key"), len(found)),
                    "side": pa.repeat(pa.scalar(side), len(found)),
                    "old_row": found if side == "old" else missing,
                    "new_row": missing if side == "old" else found,
                }
            )
        )
    return pa.concat_tables([p.cast(_ROWS_SCHEMA) for p in parts])


_ROWS_SCHEMA = pa.schema(
    [("change", pa.string()), ("side", pa.string()), ("old_row", pa.int64()), ("new_row", pa.int64())]
)


def take(batches: Iterable[pa.RecordBatch], positions: pa.Array, schema: pa.Schema) -> pa.Table:
    """Return the rows at ``positions`` of a side read again, in the order of ``positions``.

    Only the batches up to the last position are read, and only the rows asked for are kept.

    Parameters
    ----------
    batches : iterable of :class:`pyarrow.RecordBatch`
        The side's rows, in the order :func:`hash_rows` read them.
    positions : :class:`pyarrow.Array` of int64
        Row positions, 0-based, each at most once; no NULLs.
    schema : :class:`pyarrow.Schema`
        The batches' schema.

    Examples
    --------
    >>> import pyarrow as pa
    >>> side = pa.table({"v": ["a", "b", "c", "d"]})
    >>> take(side.to_batches(max_chunksize=2), pa.array([3, 0]), side.schema)["v"].to_pylist()
    ['d', 'a']
    """
    order = pc.sort_indices(positions)
    wanted = positions.take(order).to_pylist()
    found, offset, done = [], 0, 0
    for batch in batches:
        if done == len(wanted):
            break
        end = offset + batch.num_rows
        upto = bisect.bisect_left(wanted, end, done)
        if upto > done:
            found.append(batch.take(pc.subtract(pa.array(wanted[done:upto], pa.int64()), offset)))
        done, offset = upto, end
    if done < len(wanted):
        raise ValueError(f"take: the side has {offset} rows, fewer than position {wanted[done]} needs")
    table = pa.Table.from_batches(found, schema)
    return table.take(pc.sort_indices(order))


def changed_columns(
    old_values: pa.Table,
    new_values: pa.Table,
    *,
    algorithm: Algorithm = "murmur3",
    hmac_key: bytes | str | None = None,
) -> pa.ListArray:
    """For each pair of rows, the names of the columns whose values differ, in column order.

    Two values differ when their hashes (``record_hash`` of the value alone) differ, so a column counts as
    changed exactly when the row hash says so: NULL equals NULL, ``-0.0`` equals ``0.0``, NaN equals NaN, maps
    in any entry order are equal, an INT and a BIGINT of one value are equal.

    Parameters
    ----------
    old_values, new_values : :class:`pyarrow.Table`
        The rows of each side, pair by pair; the same column names (the compared columns) on both.
    algorithm, hmac_key
        As for :func:`hashexpr.arrow.record_hash`.

    Returns
    -------
    :class:`pyarrow.ListArray` of string

    Examples
    --------
    >>> import pyarrow as pa
    >>> old = pa.table({"a": [1, 2], "b": [0.0, None]})
    >>> new = pa.table({"a": [1, 3], "b": [-0.0, 1.5]})
    >>> changed_columns(old, new).to_pylist()
    [[], ['a', 'b']]
    """
    names = old_values.column_names
    if names != new_values.column_names or old_values.num_rows != new_values.num_rows:
        raise ValueError("changed_columns: old_values and new_values need the same columns and as many rows")
    rows = old_values.num_rows
    options = {"algorithm": algorithm, "hmac_key": hmac_key}
    masks = [
        pc.not_equal(record_hash(old_values, [c], **options), record_hash(new_values, [c], **options))
        if rows
        else pa.array([], pa.bool_())
        for c in names
    ]
    counts = pa.repeat(pa.scalar(0, pa.int64()), rows)
    for mask in masks:
        counts = pc.add(counts, pc.cast(mask, pa.int64()))
    offsets = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(counts)]) if rows else None
    # The changed (row, column) cells in row-major order: row * width + column, sorted.
    width = len(names)
    cells = [
        pc.add(pc.multiply(pc.indices_nonzero(mask).cast(pa.int64()), width), j)
        for j, mask in enumerate(masks)
    ]
    flat = pa.concat_arrays(cells) if cells else pa.array([], pa.int64())
    flat = flat.take(pc.sort_indices(flat))
    column = pc.subtract(flat, pc.multiply(pc.divide(flat, width), width)) if width else flat
    values = pa.array(names, pa.string()).take(column)
    if offsets is None:
        return pa.array([], pa.list_(pa.string()))
    return pa.ListArray.from_arrays(pc.cast(offsets, pa.int32()), values)
