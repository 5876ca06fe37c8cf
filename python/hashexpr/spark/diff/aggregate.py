"""The change types of a diff without changed columns: one aggregate per key over both sides' row hashes.

With keys that SQL's equality matches exactly (``Spec.raw_keys``) and no values to return, a key's output rows
follow from its rows' count on each side and whether both sides hold the same multiset of row hashes: every
row of a key has the same key value, so nothing else of a row is needed. The jar's ``diff_rows`` computes those
per key in one hash aggregate, over the one shuffle of (key, side, row hash) that a join on the key would make,
without sorting rows or numbering them within a key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from hashexpr.diff_spec import PART, SIDE, H, P, Spec
from hashexpr.names import quote
from hashexpr.spark.diff.rows import hashes_sql
from hashexpr.spark.diff.stored import null_key_sql
from hashexpr.spark.diff.sums import rows_per_key_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

R = f"{P}rows"


def aggregated(spec: Spec, include_values: bool) -> bool:
    """Whether :func:`change_types` computes this diff: raw keys (a key's rows share one key value, so the
    output needs no row of its own) and no values to return."""
    return spec.raw_keys and not include_values


def row_hash_width(spec: Spec) -> int:
    """The bytes of a row hash under the diff's algorithm: 16 with MurmurHash3, 32 with (HMAC-)SHA-256."""
    return 16 if spec.algorithm == "murmur3" else 32


def change_types(spec: Spec, include_unchanged: bool) -> DataFrame:
    """The diff's rows (key columns, ``change``, ``side``) from one aggregate per key (see the module).

    Per key, ``diff_rows`` gives each side's row count and whether both sides hold the same multiset of row
    hashes (without the jar, plain SQL gives the same: :func:`~hashexpr.spark.diff.sums.rows_per_key_sql`); one output
    row per input row (a matched pair in one) is then made from those alone."""
    width = row_hash_width(spec)
    keys = [quote(k) for k in spec.key]
    null_key = null_key_sql(spec)
    # NULL-key rows are never matched: each is a group of its own, so that many of them do not make one group.
    alone = f"CASE WHEN {null_key} THEN monotonically_increasing_id() END AS {PART}"
    sides = []
    for i in (0, 1):
        row_hash = hashes_sql(spec, i)[H]
        # Without compared columns every row's values are equal: one constant hash of the width stands for them.
        row_hash = f"X'{'00' * width}'" if row_hash == "X''" else row_hash
        sides.append(spec.side(i).selectExpr(*keys, alone, f"{i} AS {SIDE}", f"{row_hash} AS {H}"))
    group = [F.col(k) for k in [*keys, PART]]
    per_key_sql = (
        rows_per_key_sql(H, spec.algorithm != "murmur3") if spec.arrow else f"diff_rows({SIDE}, {H}, {width})"
    )
    # Shuffled by key first: the aggregate then runs once, after the shuffle (Spark combines its partial and
    # final steps where no shuffle parts them), instead of a partial aggregate over keys that are nearly all
    # distinct before it, which only made the shuffled rows into buffers of the same size.
    per_key = (
        sides[0]
        .unionByName(sides[1])
        .repartition(*group)
        .groupBy(*group)
        .agg(F.expr(f"{per_key_sql} AS {R}"))
    )
    o, n, same = f"{R}.old_rows", f"{R}.new_rows", f"{R}.same"
    # A key whose rows differ and that has several on a side: each row is reported on its own.
    duplicate = f"(greatest({o}, {n}) > 1 AND NOT {same})"
    if not include_unchanged:
        per_key = per_key.where(f"NOT {same} OR {null_key}")
    each = f"concat(array_repeat('old', CAST({o} AS INT)), array_repeat('new', CAST({n} AS INT)))"
    side = (
        f"CASE WHEN {null_key} OR {duplicate} THEN {each} "
        f"WHEN {same} THEN array_repeat('both', CAST({o} AS INT)) "
        f"WHEN {o} = 0 THEN array('new') WHEN {n} = 0 THEN array('old') ELSE array('both') END"
    )
    change = (
        f"CASE WHEN {null_key} THEN 'null_key' WHEN {duplicate} THEN 'duplicate_key' "
        f"WHEN {same} THEN 'unchanged' WHEN {o} = 0 THEN 'insert' WHEN {n} = 0 THEN 'delete' ELSE 'update' END"
    )
    return per_key.selectExpr(*keys, f"{change} AS `change`", f"explode({side}) AS `side`")
