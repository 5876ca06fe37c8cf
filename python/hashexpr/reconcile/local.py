"""The rows of the differing segments, compared here: by key hash, as :func:`hashexpr.spark.diff.diff` compares them.

Each side's fetched rows carry their key values, key hash, row hash and compared columns' hashes (and, when
asked for, the compared columns' values). Rows match when their key hashes are equal (their keys' encodings
are); a key with one row on each side is unchanged or an update (its changed columns are those whose hashes
differ), one row on one side is an insert or a delete, and a key with more rows on a side is unchanged when both
sides hold the same rows (as a multiset), else every row of it, on both sides, is a ``duplicate_key``. A row with
a NULL key column is a ``null_key`` and is not compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from hashexpr.arrow.plain import plain, plain_batch
from hashexpr.reconcile.sources import (
    COLUMN_HASH_BYTES,
    COLUMN_HASHES,
    KEY_HASH,
    NULL_KEY,
    ROW_HASH,
    key_column,
    value_column,
)

#: The change types in the order the changes are listed.
CHANGES = ("insert", "delete", "update", "duplicate_key", "null_key")

#: The columns :func:`changes_table` adds to the key columns, by their usual names.
OUTPUT = ("change", "side", "changed_columns", "source", "target")


def output_columns(key_names: Sequence[str]) -> dict[str, str]:
    """The names of the columns :func:`changes_table` adds to the key columns: ``change``, ``side``,
    ``changed_columns`` and the value structs ``source`` and ``target``; each ``hx_``-prefixed where a key column
    has one of these names (in any case), or a name a CSV output would flatten a struct's field to.

    Examples
    --------
    >>> output_columns(["id"])["change"], output_columns(["Change"])["change"], output_columns(["source.v"])["side"]
    ('change', 'hx_change', 'hx_side')
    """
    taken = {k.lower() for k in key_names}
    clash = taken & set(OUTPUT) or any(k.startswith(("source.", "target.")) for k in taken)
    return {name: f"hx_{name}" if clash else name for name in OUTPUT}


@dataclass(frozen=True)
class Reported:
    """A reported row: the row of ``side`` (0 source, 1 target) at ``index``, and for an update the source's row
    ``other`` that it pairs with."""

    side: int
    index: int
    change: str
    label: str
    changed: list[str] | None = None
    other: int | None = None


@dataclass
class Found:
    """What the local comparison found: the rows reported, and the counts."""

    rows: list[Reported] = field(default_factory=list)
    counts: dict[str, int] = field(
        default_factory=lambda: {
            "inserted": 0,
            "deleted": 0,
            "updated": 0,
            "unchanged": 0,
            "duplicate_key": 0,
            "null_key": 0,
        }
    )


def _changed(a: bytes, b: bytes, names: Sequence[str]) -> list[str]:
    width = COLUMN_HASH_BYTES
    return [
        n for i, n in enumerate(names) if a[i * width : (i + 1) * width] != b[i * width : (i + 1) * width]
    ]


def compare_rows(source: pa.Table, target: pa.Table, compared: Sequence[str]) -> Found:
    """Compare the fetched rows of both sides (see the module's description)."""
    found = Found()
    sides = (source, target)
    columns = [
        (t.column(KEY_HASH).to_pylist(), t.column(ROW_HASH).to_pylist(), t.column(COLUMN_HASHES).to_pylist(),
         t.column(NULL_KEY).to_pylist())
        for t in sides
    ]  # fmt: skip
    labels = ("source", "target")
    by_key: dict[bytes, tuple[list[int], list[int]]] = {}
    for s, (keys, _, _, nulls) in enumerate(columns):
        for i, (k, null) in enumerate(zip(keys, nulls)):
            if null:
                found.rows.append(Reported(s, i, "null_key", labels[s]))
                found.counts["null_key"] += 1
                continue
            by_key.setdefault(k, ([], []))[s].append(i)
    for a, b in by_key.values():
        hashes_a = [columns[0][1][i] for i in a]
        hashes_b = [columns[1][1][i] for i in b]
        if len(a) <= 1 and len(b) <= 1:
            if a and b:
                if hashes_a[0] == hashes_b[0]:
                    found.counts["unchanged"] += 1
                else:
                    changed = _changed(columns[0][2][a[0]], columns[1][2][b[0]], compared)
                    found.rows.append(Reported(1, b[0], "update", "both", changed, a[0]))
                    found.counts["updated"] += 1
            elif a:
                found.rows.append(Reported(0, a[0], "delete", "source"))
                found.counts["deleted"] += 1
            else:
                found.rows.append(Reported(1, b[0], "insert", "target"))
                found.counts["inserted"] += 1
        elif sorted(hashes_a) == sorted(hashes_b):
            found.counts["unchanged"] += len(a)
        else:
            for s, indices in enumerate((a, b)):
                for i in indices:
                    found.rows.append(Reported(s, i, "duplicate_key", labels[s]))
                    found.counts["duplicate_key"] += 1
    return found


def changes_table(
    source: pa.Table,
    target: pa.Table,
    found: Found,
    key_names: Sequence[str],
    compared: Sequence[str] | None = None,
) -> pa.Table:
    """The reported rows: the key columns (named ``key_names``), ``change``, ``side`` and ``changed_columns``,
    ordered by change type, then key hash; with ``compared`` (when the fetched rows hold the values), the structs
    ``source`` and ``target`` of the compared columns' values on each side (NULL for a side the row is not on).
    The added columns are named by :func:`output_columns`."""
    names = output_columns(key_names)
    tables = (plain_batch(source), plain_batch(target))
    parts = []
    for s, table in enumerate(tables):
        rows = [r for r in found.rows if r.side == s]
        taken = table.take(pa.array([r.index for r in rows], pa.int64()))
        columns = {name: taken.column(key_column(i)) for i, name in enumerate(key_names)}
        columns[names["change"]] = pa.array([r.change for r in rows], pa.string())
        columns[names["side"]] = pa.array([r.label for r in rows], pa.string())
        columns[names["changed_columns"]] = pa.array([r.changed for r in rows], pa.list_(pa.string()))
        if compared is not None:
            own = [r.index for r in rows]
            other = [r.other for r in rows]
            source_rows, target_rows = (own, [None] * len(rows)) if s == 0 else (other, own)
            columns[names["source"]] = _values(tables[0], source_rows, compared)
            columns[names["target"]] = _values(tables[1], target_rows, compared)
        columns["hx_order"] = taken.column(KEY_HASH)
        parts.append(pa.table(columns))
    table = _concat(parts, key_names)
    rank = pc.index_in(table.column(names["change"]), value_set=pa.array(CHANGES, pa.string()))
    table = table.append_column("hx_rank", rank)
    table = table.sort_by([("hx_rank", "ascending"), ("hx_order", "ascending")])
    return table.drop_columns(["hx_rank", "hx_order"])


def _values(table: pa.Table, rows: list[int | None], compared: Sequence[str]) -> pa.Array:
    """The struct of the compared columns' values of ``table``'s rows (NULL where a row is None)."""
    indices = pa.array(rows, pa.int64())
    arrays = [plain(pc.take(table.column(value_column(i)), indices)).combine_chunks() for i in range(len(compared))]
    mask = pc.is_null(indices)
    if not arrays:
        return pa.StructArray.from_arrays([], fields=[], mask=mask) if len(rows) else pa.nulls(0, pa.struct([]))
    return pa.StructArray.from_arrays(arrays, names=list(compared), mask=mask)


def _concat(parts: list[pa.Table], key_names: Sequence[str]) -> pa.Table:
    """The two sides' rows in one table: key columns whose types differ (INT and BIGINT) take the wider type,
    or, when Arrow has no common type, their text."""
    try:
        return pa.concat_tables(parts, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        pass
    fixed = []
    for part in parts:
        for name in key_names:
            at = part.schema.get_field_index(name)
            part = part.set_column(at, name, pc.cast(part.column(name), pa.string()))
        fixed.append(part)
    return pa.concat_tables(fixed, promote_options="permissive")
