"""Key-based diff of two snapshots of Arrow data, outside Spark: ``hx.diff``'s rows from the Rust engine's hashes.

A diff compares two snapshots row by row, matched by key (``docs/DIFF.md``). Here it runs in three steps, each
usable on its own (a reconciliation compares hashes that another system computed the same way):

1. :func:`hash_rows` reads a side once, batch by batch, and keeps per row its key hash (``record_key`` of the
   key columns; NULL when a key part is NULL) and its row hash (``record_hash`` of the compared columns):
   memory holds hashes, never values.
2. :func:`compare` matches the two sides' hashes by key, as ``hx.diff`` does, and lists each change with the
   positions of its rows: a key only in new is an ``insert``, only in old a ``delete``, one row on each side
   with different hashes an ``update``; a key with several rows on a side whose rows differ (as a multiset)
   between the sides is a ``duplicate_key``, every one of its rows reported; a row with a NULL key part is a
   ``null_key``, never matched.
3. :func:`take` reads the values of the changed rows only, and :func:`changed_columns` names the columns whose
   values differ, by each column's hash, as ``hx.diff`` names them.

:func:`diff` and :func:`diff_counts` do all of it with ``hx.diff``'s checks and messages (names matched as Spark
matches them, ignoring case; the schemas' differences listed; types that widen alike): the rows of
``hx.diff(old, new, key, include_values=..., changed_columns=...)`` and the counts of its change types. The
columns that ``with_metadata`` writes (``_hx_record_key``, ...) are left out of the comparison and never read
as stored hashes, as with ``hx.diff(..., old_hashes=False, new_hashes=False)``.
"""

from __future__ import annotations

from hashexpr.arrow.diff.compare import (
    CHANGE_TYPES,
    Changes,
    Hashes,
    changed_columns,
    compare,
    hash_rows,
    take,
)
from hashexpr.arrow.diff.result import Snapshot, diff, diff_counts
from hashexpr.arrow.diff.spec import Unsupported

__all__ = [
    "CHANGE_TYPES",
    "Changes",
    "Hashes",
    "Snapshot",
    "Unsupported",
    "changed_columns",
    "compare",
    "diff",
    "diff_counts",
    "hash_rows",
    "take",
]
