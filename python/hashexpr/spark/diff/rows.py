"""The rows a diff reads: each side's key hash, row hash and bucket, as SQL over the side's columns.

Every query of a diff starts from :func:`keyed`: one side's key and compared columns (and its stored hashes),
with the key hash and the bucket, filtered to the rows a step needs. Row hashes and value structs are computed
after the filter, for the rows it keeps only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F

from hashexpr.diff_spec import BUCKET, DIGEST, KH, SIDE, H, Spec
from hashexpr.jar_sql import record_hash_sql
from hashexpr.names import quote
from hashexpr.spark.diff import hash_columns
from hashexpr.spark.diff.stored import key_hash_sql, null_key_sql, read_sql
from hashexpr.spark.diff.sums import same_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hashexpr.spark.diff.plan import BucketPass

# Up to this many differing buckets are filtered with an IN list (a hash set in the plan); more go through a
# broadcast semi-join with a list made in Spark from one string, passed as a row of data: the plan stays small,
# and there is no call per bucket between Python and the JVM.
MAX_IN_LIST = 64


def identity(spec: Spec) -> list[str]:
    """The columns of a keyed row that are equal exactly for the same key on both sides: the key columns when
    SQL's equality matches them as their hash does (``Spec.raw_keys``), else the key hash."""
    return [quote(k) for k in spec.key] if spec.buckets_by_key else [KH]


def hashes_sql(spec: Spec, i: int) -> dict[str, str]:
    """SQL of side ``i``'s per-row key hash (NULL when a key part is NULL), row hash, and bucket.

    The row hash is ``record_hash`` of the compared columns, or, when a side has stored hashes,
    ``record_hash_by_name`` as ``with_metadata`` stores it; a side with stored hashes reads them
    (:func:`~hashexpr.spark.diff.stored.read_sql`). The bucket is a hash of the key columns when ``buckets_by_key``,
    else of the key hash.
    """
    null_key = null_key_sql(spec)
    stored = spec.stored[i]
    if stored is not None:
        key_hash, row_hash = read_sql(spec, i, stored)
    else:
        key_hash = f"CASE WHEN NOT {null_key} THEN {key_hash_sql(spec)} END"
        hashed = (spec.key if spec.by_name and spec.with_key else ()) + spec.columns
        if spec.arrow:
            row_hash = hash_columns.row_hash_sql(spec)
        elif hashed:
            row_hash = record_hash_sql([quote(c) for c in hashed], by_name=spec.by_name, **spec.hashing)
        else:
            row_hash = "X''"
    keys = ", ".join(quote(k) for k in spec.key) if spec.buckets_by_key else key_hash
    # Bucket -1 holds the NULL-key rows, which are reported, never matched.
    bucket = f"CASE WHEN {null_key} THEN -1 ELSE pmod(hash({keys}), {spec.buckets}) END"
    return {KH: key_hash, H: row_hash, BUCKET: bucket}


def keyed(
    spec: Spec,
    i: int,
    plan: BucketPass | None,
    with_null_keys: bool = False,
    key_filter: Column | None = None,
    buckets: bool = True,
) -> DataFrame:
    """Side ``i``'s columns that diff reads, with the key hash (where it is needed) and the bucket; with a plan,
    only the rows of the differing buckets, with a key filter (:func:`~hashexpr.spark.diff.buckets.key_filter`) only
    the rows of the keys it holds, and the NULL-key rows with ``with_null_keys``. Without ``buckets`` (a pass
    that filters by none) the bucket column only tells NULL-key rows (-1) from the others (0).
    """
    stored = spec.stored[i]
    names = spec.key + spec.columns + ((stored.record_key, stored.record_hash) if stored else ())
    if spec.arrow:
        # The hashes the Arrow path computed, read by the expressions of hashes_sql downstream.
        names += hash_columns.carried(spec, i)
    hashes = hashes_sql(spec, i)
    bucket = (
        hashes[BUCKET]
        if buckets or plan is not None
        else f"CASE WHEN {null_key_sql(spec)} THEN -1 ELSE 0 END"
    )
    key_hash = [] if spec.buckets_by_key and key_filter is None else [f"{hashes[KH]} AS {KH}"]
    rows = spec.side(i).selectExpr(*map(quote, names), *key_hash, f"{bucket} AS {BUCKET}")
    if plan is not None:
        rows = bucket_filter(rows, plan, with_null_keys)
    if key_filter is not None:
        held = F.call_function("diff_key_filter_contains", key_filter, F.col(KH))
        rows = rows.where((F.col(BUCKET) < 0) | held if with_null_keys else held)
    return rows


def bucket_filter(df: DataFrame, plan: BucketPass | None, with_null_keys: bool = False) -> DataFrame:
    """Keep the rows of the differing buckets (every keyed row without a plan, i.e. with unchanged rows), and
    with ``with_null_keys`` the NULL-key rows (bucket -1) too."""
    if plan is None:
        return df if with_null_keys else df.where(f"{BUCKET} >= 0")
    ids = list(plan.differing_buckets)
    if with_null_keys and sum(plan.null_key_rows):
        ids.append(-1)
    if not ids:
        # A constant false filter: Spark prunes the scan of this branch entirely.
        return df.where("false")
    listed = ",".join(map(str, ids))
    if len(ids) <= MAX_IN_LIST:
        return df.where(f"{BUCKET} IN ({listed})")
    # The list goes into Spark as a row of data, not as a literal: with 10^5 buckets a literal made the plan
    # megabytes long, and Spark keeps a copy of every query's plan for its UI.
    chosen = df.sparkSession.createDataFrame([(listed,)], "ids STRING").selectExpr(
        f"explode(CAST(split(ids, ',') AS array<int>)) AS {BUCKET}"
    )
    return df.join(F.broadcast(chosen), on=BUCKET, how="left_semi")


def hashed_sides(spec: Spec, plan: BucketPass | None = None) -> DataFrame:
    """Both sides as (side: 0 old, 1 new, bucket, key hash, digest); only the differing buckets with a plan.

    The digest is the record hash of the key hash and the row hash: equal values hash alike also when a
    column's type differs between the sides within a widening group, and a changed key changes the digest.
    Without the jar the digest is the row hash, compared together with the key (:mod:`~hashexpr.spark.diff.sums`).
    A side with recorded stored hashes is read for its key columns and those two hashes alone. With a plan the
    differing buckets are kept however many rows they hold: a row of the other buckets would only be
    shuffled and compared to be found unchanged.
    """
    key = identity(spec)
    sides = [
        keyed(spec, i, plan).selectExpr(
            f"{i} AS {SIDE}",
            BUCKET,
            *key,
            f"{hashes_sql(spec, i)[H]} AS {DIGEST}"
            if spec.arrow
            else f"record_hash({', '.join(key)}, {hashes_sql(spec, i)[H]}) AS {DIGEST}",
        )
        for i in (0, 1)
    ]
    return sides[0].unionByName(sides[1])


def compare_groups(spec: Spec, hashed: DataFrame, group: list[str]) -> DataFrame:
    """Per group: each side's row count, and whether both sides hold the same multiset of digests.

    With the jar, ``diff_rows`` (the change-types aggregate's: equal counts and equal 128-bit sums) runs once,
    after a shuffle by group: before it the groups are keys, nearly all distinct, and a partial aggregate would
    only turn each row into a buffer of the same size. Without it, plain SQL compares sums of the digests
    (:func:`~hashexpr.spark.diff.sums.same_sql`: a group is one key).
    """
    if spec.arrow:
        return hashed.groupBy(*group).agg(
            F.expr(f"count_if({SIDE} = 0) AS n_old"),
            F.expr(f"count_if({SIDE} = 1) AS n_new"),
            F.expr(f"{same_sql(DIGEST, spec.algorithm != 'murmur3')} AS same"),
        )
    # A digest is a record_hash: 16 bytes.
    per_group = (
        hashed.repartition(*group).groupBy(*group).agg(F.expr(f"diff_rows({SIDE}, {DIGEST}, 16) AS r"))
    )
    return per_group.selectExpr(*group, "r.old_rows AS n_old", "r.new_rows AS n_new", "r.same AS same")
