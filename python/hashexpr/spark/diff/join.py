"""The values join of a diff: the rows near a change, matched by key hash, with their changed columns.

Each side's rows to compare (those of the differing buckets, or of the changed keys, and the NULL-key rows) are
shuffled once by key hash; within a key they are numbered in row-hash order and paired by number, so duplicate
keys pair up one to one and a key with the same rows on both sides pairs each row with an equal one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F

from hashexpr.diff_spec import BUCKET, FP, KH, PART, RN, C, H, N, Spec, V
from hashexpr.jar_sql import record_hash_sql, string
from hashexpr.names import quote
from hashexpr.spark.diff import hash_columns
from hashexpr.spark.diff.buckets import key_filter
from hashexpr.spark.diff.plan import BucketPass
from hashexpr.spark.diff.rows import hashes_sql, keyed
from hashexpr.spark.diff.sums import lanes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# Rows (both sides together) per task of the values join at most, when Spark's configured shuffle partitions
# would put more into each: a compared row carries its values, and at this count the sorts of the window and
# the join stay within the execution memory of a 1g executor instead of spilling.
ROWS_PER_TASK = 200_000


def values_sql(spec: Spec) -> str:
    """SQL of the struct of the compared columns' values, its fields named as the columns."""
    return f"struct({', '.join(quote(c) for c in spec.columns)})"


def join_partitions(spec: Spec, plan: BucketPass | None, changed_keys: Column | None) -> int | None:
    """The partitions of the values join when Spark's ``spark.sql.shuffle.partitions`` would give a task more
    than :data:`ROWS_PER_TASK` of the rows the bucket pass counted; None leaves the number to Spark (and AQE).

    With a key filter the join reads the rows of the differing buckets at most, not every row."""
    if plan is None:
        return None
    rows = plan.rows_to_compare if changed_keys is not None else plan.rows_joined
    needed = -(-rows // ROWS_PER_TASK)
    configured = str(spec.old.sparkSession.conf.get("spark.sql.shuffle.partitions")).strip()
    # A value other than a number (managed runtimes take "auto") leaves the choice to the runtime.
    return needed if configured.isdigit() and needed > int(configured) else None


def side_rows(
    spec: Spec,
    i: int,
    plan: BucketPass | None,
    partitions: int | None = None,
    changed_keys: Column | None = None,
    with_values: bool = True,
    with_column_hashes: bool = False,
) -> DataFrame:
    """Side ``i``'s rows to compare (and its NULL-key rows), with their key's row count, row number and the
    sums of :func:`~hashexpr.spark.diff.sums.lanes` over the key's rows; shuffled into ``partitions`` partitions when
    given; with ``with_values``, the struct of their compared values; with ``with_column_hashes`` (without the
    jar), the array of their compared columns' hashes, computed by the Arrow path for these rows only.

    Rows are partitioned by their key: the key columns when SQL's equality matches them exactly
    (``Spec.raw_keys``), else the key hash; NULL-key rows, never matched, are spread by their row hash."""
    prefix = "on"[i]
    # When the differing buckets hold most rows, a filter by bucket costs more than it saves: the rows go on
    # into the key filter, or are all joined.
    by_bucket = None if plan is None or plan.joins_everything else plan
    rows = keyed(spec, i, by_bucket, with_null_keys=True, key_filter=changed_keys, buckets=False)
    keys = [f"{prefix}k{j}" for j in range(len(spec.key))]
    if with_column_hashes:
        rows = hash_columns.column_hashes(spec, rows)
    hashed = rows.selectExpr(
        *(f"{quote(k)} AS {key}" for k, key in zip(spec.key, keys)),
        *([f"{values_sql(spec)} AS {prefix}{V}"] if with_values else []),
        *([f"{hash_columns.column_hashes_sql(spec)} AS {prefix}{C}"] if with_column_hashes else []),
        *([] if spec.raw_keys else [KH]),
        f"{hashes_sql(spec, i)[H]} AS {H}",
        BUCKET,
    )
    # The key hash, or for raw keys only what spreads the NULL-key rows (the key columns are the rest).
    part = f"CASE WHEN {BUCKET} < 0 THEN {H} ELSE X'' END" if spec.raw_keys else f"coalesce({KH}, {H})"
    kept = hashed.selectExpr("*", f"{part} AS {prefix}{PART}")
    by = [*keys, prefix + PART] if spec.raw_keys else [prefix + PART]
    # Shuffled before the window's inputs are computed, so that the fingerprint lanes are not shuffled with the
    # rows; both sides get the same number of partitions, so the window's partitioning still serves the join.
    kept = kept.repartition(*by) if partitions is None else kept.repartition(partitions, *by)
    # One ordering for all window functions: Spark then computes them in one Window operator over one sort.
    ordered = f"PARTITION BY {', '.join(by)} ORDER BY {H}"
    whole = f"{ordered} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
    return kept.selectExpr(
        *keys,
        *([prefix + V] if with_values else []),
        *([prefix + C] if with_column_hashes else []),
        f"{BUCKET} AS {prefix}{BUCKET}",
        prefix + PART,
        f"{H} AS {prefix}{H}",
        f"count(1) OVER ({whole}) AS {prefix}{N}",
        *(f"sum({lane}) OVER ({whole}) AS {prefix}{FP}{n}" for n, lane in enumerate(lanes(H))),
        # Numbering the rows of a key pairs duplicates one to one, so the join never multiplies them.
        f"row_number() OVER ({ordered}) AS {prefix}{RN}",
    )


def changed_columns_sql(spec: Spec) -> str:
    """SQL of ``changed_columns`` from the value structs of both sides and the ``change`` column."""
    empty = "CAST(array() AS array<string>)"
    if not spec.columns:
        return f"CASE WHEN `change` = 'unchanged' THEN {empty} END"
    # Per-column hashes, so that a column counts as changed exactly when the row hash says so; without the jar,
    # those the Arrow path computed for each side's joined rows.
    if spec.arrow:
        differing = ", ".join(
            f"CASE WHEN o{C}[{j}] != n{C}[{j}] THEN {string(c)} END" for j, c in enumerate(spec.columns)
        )
    else:
        differing = ", ".join(
            f"CASE WHEN {record_hash_sql([f'o{V}.{quote(c)}'], **spec.hashing)} "
            f"!= {record_hash_sql([f'n{V}.{quote(c)}'], **spec.hashing)} THEN {string(c)} END"
            for c in spec.columns
        )
    return (
        f"CASE WHEN `change` = 'update' THEN array_compact(array({differing})) "
        f"WHEN `change` = 'unchanged' THEN {empty} END"
    )


def compared(
    spec: Spec,
    plan: BucketPass | None,
    include_values: bool,
    changed_columns: bool = True,
    include_unchanged: bool = True,
) -> DataFrame:
    """The rows, matched by key: every input row in exactly one output row (a matched pair in one). Without
    ``changed_columns`` no values are read, and the output has no ``changed_columns`` column; without
    ``include_unchanged`` the pairs of equal rows are dropped as soon as they are joined."""
    changed_keys = key_filter(spec, plan)
    partitions = join_partitions(spec, plan, changed_keys)
    # Without the jar, changed columns come from per-column hashes the Arrow path computes, not from the values.
    with_values = include_values or (changed_columns and not spec.arrow)
    column_hashes = changed_columns and spec.arrow and bool(spec.columns)
    o, n = (side_rows(spec, i, plan, partitions, changed_keys, with_values, column_hashes) for i in (0, 1))
    # Rows pair up by (key, row number); NULL-key rows (bucket -1) never pair up. Only the partition columns
    # are equalities, so Spark keeps the window's partitioning for the join instead of shuffling again.
    same_key = [f"o{PART} = n{PART}", *(f"ok{j} = nk{j}" for j in range(len(spec.key)) if spec.raw_keys)]
    joined = o.join(
        n,
        F.expr(" AND ".join([*same_key, f"(o{RN} - n{RN}) = 0", f"o{BUCKET} >= 0", f"n{BUCKET} >= 0"])),
        "full_outer",
    )
    has_old, has_new = f"o{BUCKET} IS NOT NULL", f"n{BUCKET} IS NOT NULL"
    null_key = f"coalesce(o{BUCKET}, n{BUCKET}) < 0"
    # A key whose rows are the same multiset on both sides is unchanged, however many rows it has: rows are
    # numbered in row-hash order, so its rows pair up with equal rows.
    same_rows = " AND ".join([has_old, has_new, f"o{N} = n{N}", *(f"o{FP}{i} = n{FP}{i}" for i in range(4))])
    several = f"greatest(coalesce(o{N}, 0), coalesce(n{N}, 0)) > 1"
    duplicate = f"({several} AND NOT ({same_rows}))"
    sides = (
        f"CASE WHEN {duplicate} "
        f"THEN array_compact(array(CASE WHEN {has_old} THEN 'old' END, CASE WHEN {has_new} THEN 'new' END)) "
        f"WHEN {has_old} AND {has_new} THEN array('both') WHEN {has_old} THEN array('old') ELSE array('new') END"
    )
    change = (
        f"CASE WHEN {null_key} THEN 'null_key' WHEN {duplicate} THEN 'duplicate_key' "
        "WHEN `side` = 'new' THEN 'insert' WHEN `side` = 'old' THEN 'delete' "
        f"WHEN o{H} != n{H} THEN 'update' ELSE 'unchanged' END"
    )
    if not include_unchanged:
        # Most pairs are equal rows: dropped here, they never reach the explode and the output's expressions.
        joined = joined.where(f"NOT ({has_old} AND {has_new} AND o{H} = n{H} AND NOT {duplicate})")
    exploded = joined.selectExpr("*", f"explode({sides}) AS `side`").selectExpr("*", f"{change} AS `change`")
    values = [
        f"CASE WHEN `side` != 'new' THEN o{V} END AS `old`",
        f"CASE WHEN `side` != 'old' THEN n{V} END AS `new`",
    ]
    return exploded.selectExpr(
        *(
            f"CASE WHEN `side` = 'old' THEN ok{i} ELSE nk{i} END AS {quote(k)}"
            for i, k in enumerate(spec.key)
        ),
        "`change`",
        "`side`",
        *([f"{changed_columns_sql(spec)} AS changed_columns"] if changed_columns else []),
        *(values if include_values else []),
    )
