"""The hash passes of a diff: buckets of keys compared on hashes, then keys compared one by one.

The bucket pass (:func:`bucket_pass`) is one aggregate, ``diff_buckets``, over both sides: each task counts its
rows and sums their digests into an array indexed by bucket, so no row is shuffled. When most buckets differ,
:func:`key_filter` compares the keys of those buckets on their hashes and sets a bit per changed key, so that
the values join reads the rows of changed keys only. :func:`counts` gives every change type's count from hashes.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from hashexpr.diff_spec import BUCKET, CHANGE_TYPES, DIGEST, KH, SIDE, Spec
from hashexpr.spark.diff.plan import BucketPass
from hashexpr.spark.diff.rows import compare_groups, hashed_sides, identity
from hashexpr.spark.diff.stored import key_hash_sql, refusals
from hashexpr.spark.diff.sums import bucket_pass as summed_buckets

# Bits of the filter of changed keys (see key_filter): per row the bucket pass counted, so that at most one
# unchanged row in eight passes it, and at most 8 MiB, which every task reading a side receives once.
KEY_FILTER_BITS_PER_ROW = 8
KEY_FILTER_MAX_BITS = 1 << 26


def bucket_pass(spec: Spec) -> BucketPass:
    """Run the bucket pass: one aggregate (``diff_buckets``) over both sides, without grouping.

    Each task counts its rows and sums their digests into an array indexed by bucket, so the only shuffle is
    one buffer per task; no bucket is grouped, and no row is shuffled. Without the jar, plain SQL groups the
    rows by bucket instead (:func:`hashexpr.spark.diff.sums.bucket_pass`): the same buckets, one row per bucket each
    task saw shuffled.
    """
    if spec.arrow:
        with refusals():
            return summed_buckets(hashed_sides(spec), [*identity(spec), DIGEST])
    found = f"diff_buckets({SIDE}, {BUCKET}, {spec.buckets}, {DIGEST}) AS found"
    with refusals():
        # collect, not first: a LIMIT on top of the aggregate would cost another job.
        row = hashed_sides(spec).selectExpr(found).collect()[0]["found"]
    return BucketPass(
        differing_buckets=tuple(row["differing_buckets"]),
        old_rows=int(row["old_rows"]),
        new_rows=int(row["new_rows"]),
        rows_to_compare=int(row["rows_to_compare"]),
        null_key_rows=(int(row["unmatched_old"]), int(row["unmatched_new"])),
        unchanged_rows=int(row["unchanged_rows"]),
    )


def counts(spec: Spec, plan: BucketPass) -> dict[str, int]:
    """Exact output rows per change type: the keys of the differing buckets are compared one by one."""
    per_key = compare_groups(spec, hashed_sides(spec, plan), identity(spec))
    n_old, n_new, same = F.col("n_old"), F.col("n_new"), F.col("same")
    single = (n_old <= 1) & (n_new <= 1)
    zero = F.lit(0)
    with refusals():
        row = per_key.agg(
            *(
                F.coalesce(F.sum(value), zero).alias(name)
                for name, value in (
                    ("insert", F.when(single & (n_old == 0), 1)),
                    ("update", F.when(single & (n_old == 1) & (n_new == 1) & ~same, 1)),
                    ("delete", F.when(single & (n_new == 0), 1)),
                    ("unchanged", F.when(same, n_old)),
                    ("duplicate_key", F.when(~single & ~same, n_old + n_new)),
                )
            )
        ).first()
    found = {name: int(row[name]) for name in ("insert", "update", "delete", "unchanged", "duplicate_key")}
    found["unchanged"] += plan.unchanged_rows
    found["null_key"] = sum(plan.null_key_rows)
    return {t: found[t] for t in CHANGE_TYPES}


def key_filter(spec: Spec, plan: BucketPass | None) -> Column | None:
    """A filter of the keys whose rows differ, when the bucket pass found changes in so many buckets that the
    join would read every row; None otherwise.

    Buckets hold several keys each on large inputs (2^20 buckets, 8 keys at 8 million rows a side), so at high
    change rates most buckets differ and the join would carry every row's values through its shuffle. Instead,
    the keys of the differing buckets are compared one by one on their hashes (a shuffle of two hashes per
    row), and the keys that differ set bits in a bitmap (``diff_key_filter``), a scalar subquery that Spark
    runs once; the join then reads the rows of those keys, and of the unchanged keys only the few that share a
    bit. This reads the inputs a third time. Needs ``DataFrame.scalar`` (PySpark 4.0 and later) and the jar;
    without them, every row is joined.
    """
    # Looked up on the class: a DataFrame answers an unknown attribute with a column of that name.
    scalar = callable(getattr(type(spec.old), "scalar", None))
    if plan is None or not plan.joins_everything or not scalar or spec.arrow:
        return None
    wanted = KEY_FILTER_BITS_PER_ROW * max(plan.rows_to_compare, 1)
    bits = min(KEY_FILTER_MAX_BITS, max(1024, 1 << (wanted - 1).bit_length()))
    per_key = compare_groups(spec, hashed_sides(spec, plan), identity(spec))
    # The bitmap holds key hashes, which the rows of the values join are tested with.
    key_hash = key_hash_sql(spec) if spec.buckets_by_key else KH
    changed = per_key.where(~F.col("same")).selectExpr(f"diff_key_filter({key_hash}, {bits})")
    return changed.scalar()
