"""Multisets of hashes compared in plain Spark SQL: sums of 32-bit lanes of 64-bit digests.

The values join compares a key's rows this way on every path. Without hashexpr's jar, the same sums stand in for
the jar's aggregates: ``diff_buckets`` (the bucket pass, :func:`bucket_pass`), ``diff_rows`` (the change types
per key, :func:`rows_per_key_sql`) and ``dataset_fingerprint`` (the keys compared one by one, :func:`same_sql`).
Exact sums of 32-bit values never overflow below 2^31 rows, so equal multisets always give equal sums, and
different ones equal sums only by chance (two 64-bit digests, as likely as two MurmurHash3 row hashes colliding).
With an algorithm chosen against adversaries (SHA-256, HMAC), a group's least and greatest row hash are compared
too, so that, as with ``diff_rows``, a key of one row a side is compared on its own row hashes (and one of two
rows too); their buffers are not of fixed width, which makes Spark aggregate by sorting, so MurmurHash3 row hashes
go without.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from hashexpr.diff_spec import BUCKET, SIDE
from hashexpr.spark.diff.plan import BucketPass

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def lanes(row_hash: str) -> list[str]:
    """SQL of four 32-bit lanes of two 64-bit digests of a row hash (or of several SQL values, comma-separated).

    Summed over a key's rows they compare the rows as a multiset: exact sums of 32-bit values never overflow
    (below 2^31 rows), so equal multisets always give equal sums, and different ones equal sums only by chance.
    """
    out = []
    for seed in (0, 1):
        digest = f"xxhash64({row_hash}, {seed})"
        out += [f"shiftrightunsigned({digest}, 32)", f"({digest} & {0xFFFFFFFF})"]
    return out


def _on(side: int, aggregate: str) -> str:
    return f"{aggregate} FILTER (WHERE {SIDE} = {side})"


def same_sql(row_hash: str, exact: bool) -> str:
    """SQL of an aggregate: whether a group's rows of side 0 (old) and side 1 (new) hold the same multiset of
    ``row_hash`` (a BINARY column): the same count and lane sums, and with ``exact`` the same least and
    greatest hash."""
    checks = [f"count_if({SIDE} = 0) = count_if({SIDE} = 1)"]
    extremes = (f"min({row_hash})", f"max({row_hash})") if exact else ()
    for aggregate in (*(f"sum({lane})" for lane in lanes(row_hash)), *extremes):
        checks.append(f"{_on(0, aggregate)} <=> {_on(1, aggregate)}")
    return "(" + " AND ".join(checks) + ")"


def rows_per_key_sql(row_hash: str, exact: bool) -> str:
    """SQL of an aggregate that gives what the jar's ``diff_rows`` does: a struct of each side's row count
    (``old_rows``, ``new_rows``) and whether both sides hold the same multiset of row hashes (``same``)."""
    return (
        f"named_struct('old_rows', count_if({SIDE} = 0), 'new_rows', count_if({SIDE} = 1), "
        f"'same', {same_sql(row_hash, exact)})"
    )


def bucket_pass(hashed: DataFrame, digest: list[str]) -> BucketPass:
    """What the jar's ``diff_buckets`` finds, from rows (side, bucket, ...) whose ``digest`` (SQL values: the
    key's identity and the row hash) are compared per bucket: one aggregate per bucket, then one row.

    Per bucket, each side's rows and the differences of their lane sums (old minus new, all zero exactly when
    the multisets match but by chance); bucket -1 holds the NULL-key rows, counted but never compared.
    """
    per_lane = [
        f"sum(IF({SIDE} = 0, {lane}, -{lane})) AS d{j}" for j, lane in enumerate(lanes(", ".join(digest)))
    ]
    counted = (f"count_if({SIDE} = 0) AS o", f"count_if({SIDE} = 1) AS n", *per_lane)
    per_bucket = hashed.groupBy(BUCKET).agg(*map(F.expr, counted))
    same = " AND ".join(["o = n", *(f"d{j} = 0" for j in range(len(per_lane)))])
    keyed = f"{BUCKET} >= 0"
    row = (
        per_bucket.selectExpr("*", f"{keyed} AND NOT ({same}) AS differs")
        .selectExpr(
            "coalesce(sum(o), 0) AS old_rows",
            "coalesce(sum(n), 0) AS new_rows",
            f"coalesce(sum(o) FILTER (WHERE NOT {keyed}), 0) AS unmatched_old",
            f"coalesce(sum(n) FILTER (WHERE NOT {keyed}), 0) AS unmatched_new",
            "coalesce(sum(o + n) FILTER (WHERE differs), 0) AS rows_to_compare",
            f"coalesce(sum(o) FILTER (WHERE {keyed} AND NOT differs), 0) AS unchanged_rows",
            f"sort_array(collect_list(IF(differs, {BUCKET}, NULL))) AS differing_buckets",
        )
        .collect()[0]
    )
    return BucketPass(
        differing_buckets=tuple(row["differing_buckets"]),
        old_rows=int(row["old_rows"]),
        new_rows=int(row["new_rows"]),
        rows_to_compare=int(row["rows_to_compare"]),
        null_key_rows=(int(row["unmatched_old"]), int(row["unmatched_new"])),
        unchanged_rows=int(row["unchanged_rows"]),
    )
