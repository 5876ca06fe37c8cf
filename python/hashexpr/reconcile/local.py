"""The rows of the differing segments, compared here: by key hash, as :func:`hashexpr.diff.diff` compares them.

Each side's fetched rows carry their key values, key hash, row hash and compared columns' hashes. Rows match
when their key hashes are equal (their keys' encodings are); a key with one row on each side is unchanged or an
update (its changed columns are those whose hashes differ), one row on one side is an insert or a delete, and a
key with more rows on a side is unchanged when both sides hold the same rows (as a multiset), else every row of
it, on both sides, is a ``duplicate_key``. A row with a NULL key column is a ``null_key`` and is not compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from hashexpr.reconcile.sources import (
    COLUMN_HASH_BYTES,
    COLUMN_HASHES,
    KEY_HASH,
    NULL_KEY,
    ROW_HASH,
    key_column,
)

#: The change types in the order the changes are listed.
CHANGES = ("insert", "delete", "update", "duplicate_key", "null_key")


@dataclass
class Found:
    """What the local comparison found: per side, the rows reported (their index, change, side label and changed
    columns), and the counts."""

    rows: tuple[
        list[tuple[int, str, str, list[str] | None]], list[tuple[int, str, str, list[str] | None]]
    ] = field(default_factory=lambda: ([], []))
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
                found.rows[s].append((i, "null_key", labels[s], None))
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
                    found.rows[1].append((b[0], "update", "both", changed))
                    found.counts["updated"] += 1
            elif a:
                found.rows[0].append((a[0], "delete", "source", None))
                found.counts["deleted"] += 1
            else:
                found.rows[1].append((b[0], "insert", "target", None))
                found.counts["inserted"] += 1
        elif sorted(hashes_a) == sorted(hashes_b):
            found.counts["unchanged"] += len(a)
        else:
            for s, indices in enumerate((a, b)):
                for i in indices:
                    found.rows[s].append((i, "duplicate_key", labels[s], None))
                    found.counts["duplicate_key"] += 1
    return found


def changes_table(source: pa.Table, target: pa.Table, found: Found, key_names: Sequence[str]) -> pa.Table:
    """The reported rows: the key columns (named ``key_names``), ``change``, ``side`` and ``changed_columns``,
    ordered by change type, then key hash."""
    parts = []
    for table, rows in zip((source, target), found.rows):
        indices = pa.array([r[0] for r in rows], pa.int64())
        taken = table.take(indices)
        columns = {name: taken.column(key_column(i)) for i, name in enumerate(key_names)}
        columns["change"] = pa.array([r[1] for r in rows], pa.string())
        columns["side"] = pa.array([r[2] for r in rows], pa.string())
        columns["changed_columns"] = pa.array([r[3] for r in rows], pa.list_(pa.string()))
        columns["hx_order"] = taken.column(KEY_HASH)
        parts.append(pa.table(columns))
    table = _concat(parts, key_names)
    rank = pc.index_in(table.column("change"), value_set=pa.array(CHANGES, pa.string()))
    table = table.append_column("hx_rank", rank)
    table = table.sort_by([("hx_rank", "ascending"), ("hx_order", "ascending")])
    return table.drop_columns(["hx_rank", "hx_order"])


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
