"""Key-based diff of two snapshots of a table: inserts, updates (with the changed columns) and deletes.

Rows are matched by the hash of their key (:func:`record_key`) and compared by the hash of their other columns
(:func:`record_hash`), so NULLs, map entry order, ``-0.0`` and NaN follow the hash semantics of
``docs/FORMAT.md``. A first Spark job compares the two sides bucket by bucket (a hash of the key) on hashes
only and finds the buckets that hold changes; the rows of those buckets alone are joined with their values
(or, when most buckets differ, the rows of the keys that a comparison of key and row hashes finds changed).
A side written by :func:`~hashexpr.spark.metadata.with_metadata` lends its stored key and row hashes to the first
job, which then reads only those two columns of it. In a session without hashexpr's jar, the hashes are computed
by the Rust engine in PySpark's Arrow routes (:mod:`hashexpr.spark.diff.hash_columns`) and plain SQL compares them
(:mod:`hashexpr.spark.diff.sums`), with the same results. See ``docs/DIFF.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hashexpr.diff_spec import CHANGE_TYPES, DEFAULT_BUCKETS, MAX_BUCKETS, KeySpec
from hashexpr.options import Algorithm, flag
from hashexpr.spark.diff.aggregate import aggregated, change_types
from hashexpr.spark.diff.buckets import bucket_pass, counts
from hashexpr.spark.diff.hash_columns import check_columns
from hashexpr.spark.diff.inputs import checked
from hashexpr.spark.diff.join import compared
from hashexpr.spark.diff.stored import HashesSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["CHANGE_TYPES", "DEFAULT_BUCKETS", "MAX_BUCKETS", "DiffPlan", "diff", "diff_plan", "summarize"]


@dataclass(frozen=True)
class DiffPlan:
    """What the hash passes of :func:`diff` found (see :func:`diff_plan`).

    Attributes
    ----------
    buckets : int
        The number of key-hash buckets.
    differing_buckets : tuple of int
        The buckets whose rows differ between the sides (ascending): only their rows are joined with their
        values.
    old_rows, new_rows : int
        The rows of each side.
    rows_to_compare : int
        The rows of both sides in the differing buckets (NULL-key rows are not compared and not counted).
    counts : dict of str to int
        The number of output rows of each change type (every key of :data:`CHANGE_TYPES`), as :func:`diff` with
        ``include_unchanged=True`` would return them.
    """

    buckets: int
    differing_buckets: tuple[int, ...]
    old_rows: int
    new_rows: int
    rows_to_compare: int
    counts: dict[str, int] = field(hash=False)


def diff_plan(
    old: DataFrame,
    new: DataFrame,
    key: KeySpec,
    *,
    columns: Sequence[str] | None = None,
    buckets: int | None = None,
    old_hashes: HashesSpec = None,
    new_hashes: HashesSpec = None,
) -> DiffPlan:
    """Run the hash passes of :func:`diff` and count the changes, without joining any values.

    The first Spark query is the one :func:`diff` runs: it counts each side's rows per bucket, sums their
    digests (hashes of key hash and compared values) and finds the buckets that differ. A second query
    compares the keys of those buckets one by one, which gives the exact number of inserts, updates, deletes,
    unchanged rows, duplicate-key rows and NULL-key rows. Only hashes are shuffled, never the rows. Like
    :func:`diff`, it runs without hashexpr's jar too, with the same counts.

    Parameters
    ----------
    old, new : :class:`~pyspark.sql.DataFrame`
        The two snapshots.
    key : str or list of str
        The key column(s), present on both sides.
    columns : list of str, optional
        The columns to compare; see :func:`diff`.
    buckets : int, optional
        The number of key-hash buckets (default :data:`DEFAULT_BUCKETS`, at most :data:`MAX_BUCKETS`).
    old_hashes, new_hashes : bool or (str, str), optional
        Stored hashes to read; see :func:`diff`.

    Returns
    -------
    :class:`DiffPlan`

    Examples
    --------
    >>> from hashexpr.spark.diff import diff, diff_plan, summarize
    >>> old = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id INT, v STRING")
    >>> new = spark.createDataFrame([(1, "a"), (2, "B"), (4, "d")], "id INT, v STRING")
    >>> plan = diff_plan(old, new, "id")
    >>> plan.counts["update"], plan.counts["unchanged"], len(plan.differing_buckets), plan.rows_to_compare
    (1, 1, 3, 4)
    """
    spec = checked(old, new, key, columns, buckets, old_hashes, new_hashes)
    found = bucket_pass(spec)
    return DiffPlan(
        buckets=spec.buckets,
        differing_buckets=found.differing_buckets,
        old_rows=found.old_rows,
        new_rows=found.new_rows,
        rows_to_compare=found.rows_to_compare,
        counts=counts(spec, found),
    )


def diff(
    old: DataFrame,
    new: DataFrame,
    key: KeySpec,
    *,
    columns: Sequence[str] | None = None,
    include_unchanged: bool = False,
    include_values: bool = False,
    changed_columns: bool = True,
    buckets: int | None = None,
    old_hashes: HashesSpec = None,
    new_hashes: HashesSpec = None,
    algorithm: Algorithm = "murmur3",
    secret: str | None = None,
) -> DataFrame:
    """Return the rows that differ between two snapshots, matched by key: inserts, updates and deletes.

    Values compare as their hashes do (``docs/FORMAT.md``): NULL equals NULL, ``-0.0`` equals ``0.0``, NaN
    equals NaN, maps equal regardless of entry order, and ``1`` as INT equals ``1`` as BIGINT. Key columns
    match the same way, NULL-safely, except that a row with a NULL key part is never matched.

    Duplicate and NULL keys are reported, never merged: a key's rows are compared as a whole, and when a key
    that occurs more than once on either side has changed (its rows are not the same multiset on both
    sides), every one of its rows comes out as ``duplicate_key`` (with the ``side`` it comes from); every row
    with a NULL key part comes out as ``null_key``. So every input row is in the output, except unchanged
    rows when ``include_unchanged`` is false (a key with the same rows on both sides is unchanged, also when
    it has several).

    Unless ``include_unchanged`` is set, a first Spark job compares both sides per bucket of keys on hashes
    only, and the returned DataFrame joins only the rows of the buckets that differ; when those hold most rows,
    it first compares the keys on their hashes and joins the rows of the changed keys.
    The inputs are read two or three times, so they must give the same rows each time (a table or files, not a
    non-deterministic query; cache such a query first).

    It runs without hashexpr's jar too (Databricks serverless, Spark Connect services that load no jar, or
    ``HASHEXPR_ENGINE=arrow``), with the same output: the Rust engine of hashexpr's wheel computes each side's
    hashes in PySpark's Arrow routes (Arrow UDFs on PySpark 4.1 and later, ``mapInArrow`` on 3.5 and 4.0) and
    plain Spark SQL compares them; when most buckets differ, every row is joined (there is no filter of the
    changed keys). A column the diff hashes, of a type the Arrow path cannot hash as the jar does (a collated
    string, an interval, ``VARIANT``), is refused before any job with an error naming the column; load the jar
    or cast it.

    Parameters
    ----------
    old, new : :class:`~pyspark.sql.DataFrame`
        The two snapshots.
    key : str or list of str
        The key column(s). They must exist on both sides with types whose values hash alike (e.g. INT and
        BIGINT); none may be named like an output column.
    columns : list of str, optional
        The columns to compare. By default every non-key column, which requires both sides to have the same
        columns with the same types (a ValueError lists every difference); naming columns compares them
        anyway, provided each is on both sides with a type of the same hash kind.
    include_unchanged : bool, optional
        Also return the matched rows that did not change (``change = 'unchanged'``); this joins every row.
    include_values : bool, optional
        Add the struct columns ``old`` and ``new`` holding the compared columns' values on each side (NULL
        for a side the row does not come from).
    changed_columns : bool, optional
        Name the columns that changed in an update (default). With ``False`` the result has no
        ``changed_columns`` column, and the diff reads no values (unless ``include_values``): one pass over the
        sides' key and row hashes, matched by key, gives every change type.
    buckets : int, optional
        The number of key-hash buckets of the pre-filter (default :data:`DEFAULT_BUCKETS`, at most
        :data:`MAX_BUCKETS`).
    old_hashes, new_hashes : bool or (str, str), optional
        Stored hashes of a side, as :func:`~hashexpr.spark.metadata.with_metadata` writes them: the record key and
        record hash columns. By default (``None``) a side's ``_hx_record_key`` and ``_hx_record_hash`` are
        used when it has both; ``True`` requires them, a pair names other columns, ``False`` hashes the
        side's values. The first pass then reads only the key columns and the two hashes of that side, and
        every metadata column (``_hx_*`` and the pair) is left out of the compared columns. The row hashes
        then compared on both sides are ``record_hash_by_name``, as stored, of the compared columns (and of
        the key columns when the stored hash covers them); the first rows of the side are hashed again to
        check this, and a ValueError says what differs (other columns, another mode, key options).
    algorithm : {'murmur3', 'sha256', 'hmac-sha256'}, optional
        The hash of keys, rows and columns (see :func:`~hashexpr.record_hash`; stored hashes must have been
        written with the same). With ``'sha256'`` or ``'hmac-sha256'`` nobody can craft a changed row whose
        hash stays the same; there is no bucket pre-filter then (it compares sums of hashes), so every row is
        joined. Rows of a key that occurs more than once are compared as a multiset by sums of their row hashes
        (or of 64-bit hashes of them), which guards against accidents only.
    secret : str, optional
        With ``'hmac-sha256'``: the name of the Spark conf ``spark.hashexpr.secret.<name>`` holding the key.

    Returns
    -------
    :class:`~pyspark.sql.DataFrame`
        The key columns, then ``change`` (``'insert'``, ``'update'``, ``'delete'``, ``'unchanged'``,
        ``'duplicate_key'`` or ``'null_key'``), ``side`` (``'old'``, ``'new'`` or ``'both'``: the input(s)
        the row comes from), ``changed_columns`` (``array<string>``: the compared columns whose values differ
        for an update, empty when unchanged, NULL otherwise) and, with ``include_values``, ``old`` and ``new``.
        Key columns take the value from ``new`` when both sides have the row.

    Examples
    --------
    >>> from hashexpr.spark.diff import diff, diff_plan, summarize
    >>> old = spark.createDataFrame([(1, "a", 1.0), (2, "b", 2.0), (3, "c", None)], "id INT, s STRING, x DOUBLE")
    >>> new = spark.createDataFrame([(1, "a", 1.0), (2, "b", 2.5), (4, "d", 4.0)], "id INT, s STRING, x DOUBLE")
    >>> for r in diff(old, new, "id").orderBy("id").collect():
    ...     print(r.id, r.change, r.side, r.changed_columns)
    2 update both ['x']
    3 delete old None
    4 insert new None

    Duplicate and NULL keys, with values:

    >>> old = spark.createDataFrame([(1, "a"), (1, "b"), (None, "c")], "id INT, s STRING")
    >>> new = spark.createDataFrame([(1, "a")], "id INT, s STRING")
    >>> rows = diff(old, new, "id", include_values=True).orderBy("change", "side", "old.s").collect()
    >>> [(r.id, r.change, r.side, r.old and r.old.s, r.new and r.new.s) for r in rows]
    [(1, 'duplicate_key', 'new', None, 'a'), (1, 'duplicate_key', 'old', 'a', None), \
(1, 'duplicate_key', 'old', 'b', None), (None, 'null_key', 'old', 'c', None)]
    """
    spec = checked(old, new, key, columns, buckets, old_hashes, new_hashes, algorithm, secret)
    # The bucket pass compares sums of hashes, which only guards against accidents: with an algorithm chosen
    # against adversaries, every row is joined and compared on its own hashes.
    include_unchanged = flag(include_unchanged, "include_unchanged", "diff")
    include_values = flag(include_values, "include_values", "diff")
    changed_columns = flag(changed_columns, "changed_columns", "diff")
    # Without changed columns nothing needs the values of the rows near a change, so one pass over the hashes
    # finds every change at the cost of a shuffle by key (an aggregate per key where the key columns are matched
    # themselves, else a join); the bucket pass pays for itself only where it spares the values join most rows.
    if not changed_columns and aggregated(spec, include_values):
        return change_types(spec, include_unchanged)
    if spec.arrow and changed_columns:
        # Refused before the bucket pass runs, not when the values join is planned after it.
        check_columns(spec)
    one_pass = include_unchanged or not (changed_columns or include_values) or spec.algorithm != "murmur3"
    plan = None if one_pass else bucket_pass(spec)
    return compared(spec, plan, include_values, changed_columns, include_unchanged)


def summarize(diff_df: DataFrame) -> dict[str, int]:
    """Count the rows of a :func:`diff` result per change type (one Spark job).

    Parameters
    ----------
    diff_df : :class:`~pyspark.sql.DataFrame`
        A result of :func:`diff`.

    Returns
    -------
    dict of str to int
        ``insert``, ``update``, ``delete``, ``duplicate_key`` and ``null_key`` (0 when absent), and
        ``unchanged`` when the result has unchanged rows, in the order of :data:`CHANGE_TYPES`.

    Examples
    --------
    >>> from hashexpr.spark.diff import diff, diff_plan, summarize
    >>> old = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, s STRING")
    >>> new = spark.createDataFrame([(2, "c"), (3, "d"), (None, "e")], "id INT, s STRING")
    >>> summarize(diff(old, new, "id"))
    {'insert': 1, 'update': 1, 'delete': 1, 'duplicate_key': 0, 'null_key': 1}
    """
    found = {r["change"]: int(r["count"]) for r in diff_df.groupBy("change").count().collect()}
    return {t: found.get(t, 0) for t in CHANGE_TYPES if t != "unchanged" or t in found}
