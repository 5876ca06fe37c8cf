"""Key-based diff of two snapshots of a table: inserts, updates (with the changed columns) and deletes.

Rows are matched by the hash of their key (:func:`record_key`) and compared by the hash of their other columns
(:func:`record_hash`), so NULLs, map entry order, ``-0.0`` and NaN follow the hash semantics of
``docs/FORMAT.md``. A first Spark job compares the two sides key by key on hashes only and finds the buckets
(a hash of the key) that hold changes; the rows of those buckets alone are joined with their values. See
``docs/DIFF.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import TYPE_CHECKING

from pyspark.sql import Column, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    ByteType,
    CharType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    UserDefinedType,
    VarcharType,
)

from hashexpr.functions import record_hash, record_key

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Every value of the ``change`` column, in the order :func:`summarize` reports them.
CHANGE_TYPES = ("insert", "update", "delete", "unchanged", "duplicate_key", "null_key")

#: Buckets used when ``buckets`` is not given. Empty buckets cost nothing (they never exist in the
#: aggregation), so the count only bounds the list of differing bucket ids the driver receives (4 MB at most).
DEFAULT_BUCKETS = 1 << 20

# Up to this many differing buckets are filtered with an IN list (a hash set in the plan); more go through a
# broadcast semi-join, which keeps the query plan small.
_MAX_IN_LIST = 10_000

# The output columns besides the key; a key column may not take one of these names.
_OUTPUT_COLUMNS = ("change", "side", "changed_columns", "old", "new")

# Internal column names; the prefix keeps them apart from any user column.
_P = "__hx_diff_"
_SIDE, _KH, _H, _BUCKET, _N, _RN, _V = (f"{_P}{n}" for n in ("side", "kh", "h", "bucket", "n", "rn", "v"))

KeySpec = str | Sequence[str]


@dataclass(frozen=True)
class DiffPlan:
    """What the first, hash-only pass of :func:`diff` found.

    Attributes
    ----------
    buckets : int
        The number of key-hash buckets.
    differing_buckets : tuple of int
        The buckets that hold at least one insert, update, delete or duplicate key, ascending; only their rows
        are joined with their values.
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


@dataclass(frozen=True)
class _Spec:
    """The validated inputs of a diff."""

    old: DataFrame
    new: DataFrame
    key: tuple[str, ...]
    columns: tuple[str, ...]
    buckets: int


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _col(name: str) -> Column:
    # Backticks so that names with dots or spaces are taken literally.
    return F.col(_quote(name))


def _type_name(dt: DataType, widen: bool) -> str:
    """The type without nullability; with ``widen``, types whose values hash alike share one name."""
    if isinstance(dt, ArrayType):
        return f"array<{_type_name(dt.elementType, widen)}>"
    if isinstance(dt, MapType):
        return f"map<{_type_name(dt.keyType, widen)},{_type_name(dt.valueType, widen)}>"
    if isinstance(dt, StructType):
        return "struct<" + ",".join(f"{f.name}:{_type_name(f.dataType, widen)}" for f in dt.fields) + ">"
    if isinstance(dt, UserDefinedType):
        return _type_name(dt.sqlType(), widen)
    if widen:
        # The widening groups of docs/FORMAT.md, section 4: one tag per group.
        if isinstance(dt, (ByteType, ShortType, IntegerType, LongType)):
            return "integral"
        if isinstance(dt, (FloatType, DoubleType)):
            return "floating"
        if isinstance(dt, DecimalType):
            return "decimal"
        if isinstance(dt, (CharType, VarcharType)):
            return "string"
        if isinstance(dt, StringType) and dt.simpleString() == "string":
            return "string"
    return dt.simpleString()


def _types(df: DataFrame) -> dict[str, DataType]:
    return {f.name: f.dataType for f in df.schema.fields}


def _check_names(names: Sequence[str], what: str, old: dict, new: dict) -> None:
    if len(set(names)) != len(names):
        raise ValueError(f"{what} lists a column more than once: {list(names)}")
    missing = [
        f"{n!r} (missing in {' and '.join(s for s, t in (('old', old), ('new', new)) if n not in t)})"
        for n in names
        if n not in old or n not in new
    ]
    if missing:
        raise ValueError(f"{what} columns must exist on both sides: {', '.join(missing)}")


def _check_compatible(names: Sequence[str], what: str, old: dict, new: dict) -> None:
    """Named columns may change type only within a widening group, where equal values keep their hash."""
    bad = [
        f"{n!r} ({old[n].simpleString()} -> {new[n].simpleString()})"
        for n in names
        if _type_name(old[n], widen=True) != _type_name(new[n], widen=True)
    ]
    if bad:
        raise ValueError(
            f"{what} columns have types whose values never compare equal: {', '.join(bad)}; "
            "cast one side to the other's type first"
        )


def _default_columns(key: Sequence[str], old: dict, new: dict) -> tuple[str, ...]:
    """Every non-key column, when both sides have the same ones with the same types; otherwise a ValueError.

    An implicit choice of columns must not hide a schema change, so every difference is reported at once.
    """
    only_old = [n for n in old if n not in new]
    only_new = [n for n in new if n not in old]
    changed = [
        f"{n!r} ({old[n].simpleString()} -> {new[n].simpleString()})"
        for n in old
        if n in new and n not in key and _type_name(old[n], widen=False) != _type_name(new[n], widen=False)
    ]
    problems = (
        ([f"only in old: {only_old}"] if only_old else [])
        + ([f"only in new: {only_new}"] if only_new else [])
        + ([f"type changed: {', '.join(changed)}"] if changed else [])
    )
    if problems:
        raise ValueError(
            "the schemas of old and new differ: "
            + "; ".join(problems)
            + ". Pass columns=[...] to compare chosen columns (present on both sides) anyway."
        )
    return tuple(n for n in old if n not in key)


def _spec(
    old: DataFrame, new: DataFrame, key: KeySpec, columns: Sequence[str] | None, buckets: int | None
) -> _Spec:
    keys = (key,) if isinstance(key, str) else tuple(key)
    if not keys:
        raise ValueError("diff needs at least one key column")
    if buckets is None:
        buckets = DEFAULT_BUCKETS
    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= 2**31 - 1:
        raise ValueError(f"buckets must be a positive int below 2^31, got {buckets!r}")
    clash = [k for k in keys if k in _OUTPUT_COLUMNS or k.startswith(_P)]
    if clash:
        raise ValueError(
            f"key columns may not be named {clash}: diff's output has columns {list(_OUTPUT_COLUMNS)}"
        )
    old_types, new_types = _types(old), _types(new)
    _check_names(keys, "key", old_types, new_types)
    _check_compatible(keys, "key", old_types, new_types)
    if columns is None:
        compared = _default_columns(keys, old_types, new_types)
    else:
        compared = (columns,) if isinstance(columns, str) else tuple(columns)
        _check_names(compared, "columns", old_types, new_types)
        overlap = [c for c in compared if c in keys]
        if overlap:
            raise ValueError(f"columns may not include key columns: {overlap}")
        _check_compatible(compared, "compared", old_types, new_types)
    return _Spec(old, new, keys, compared, buckets)


def _null_key(spec: _Spec) -> Column:
    """True when a key part is NULL (a NULL nested inside a key value does not count)."""
    return reduce(lambda a, b: a | b, (_col(k).isNull() for k in spec.key))


def _hashes(spec: _Spec) -> dict[str, Column]:
    """Per-row key hash (NULL when a key part is NULL), row hash of the compared columns, and bucket."""
    null_key = _null_key(spec)
    key_hash = F.when(~null_key, record_key(*(_col(k) for k in spec.key)))
    row_hash = record_hash(*(_col(c) for c in spec.columns)) if spec.columns else F.lit(bytearray())
    # Bucket -1 holds the NULL-key rows, which are reported, never matched.
    bucket = F.when(null_key, F.lit(-1)).otherwise(F.pmod(F.hash(key_hash), F.lit(spec.buckets)))
    return {_KH: key_hash, _H: row_hash, _BUCKET: bucket}


def _per_key_status(spec: _Spec) -> DataFrame:
    """One row per key hash (and one for all NULL-key rows): how many rows each side has, and their hashes."""
    sides = [
        df.select(F.lit(i).alias(_SIDE), *(c.alias(n) for n, c in _hashes(spec).items()))
        for i, df in enumerate((spec.old, spec.new))
    ]
    side = F.col(_SIDE)
    # The 16-byte row hash travels as two 64-bit digests of it: an aggregation buffer of fixed-width values
    # stays in Spark's hash aggregate, where a BINARY max would fall back to a sort-based one.
    digests = [F.xxhash64(F.col(_H)), F.xxhash64(F.col(_H), F.lit(1))]
    return (
        sides[0]
        .unionByName(sides[1])
        .groupBy(_BUCKET, _KH)
        .agg(
            F.count_if(side == 0).alias("n_old"),
            F.count_if(side == 1).alias("n_new"),
            # With one row per side (the only case where they are compared) max is that row's digest.
            *(F.max(F.when(side == i, d)).alias(f"h{i}_{j}") for i in (0, 1) for j, d in enumerate(digests)),
        )
    )


def _status_rows() -> dict[str, Column]:
    """Output rows per change type contributed by one per-key row of :func:`_per_key_status`."""
    n_old, n_new, keyed = F.col("n_old"), F.col("n_new"), F.col(_BUCKET) >= 0
    single = keyed & (n_old <= 1) & (n_new <= 1)
    pair = single & (n_old == 1) & (n_new == 1)
    same = (F.col("h0_0") == F.col("h1_0")) & (F.col("h0_1") == F.col("h1_1"))
    one = F.lit(1)
    zero = F.lit(0)
    return {
        "insert": F.when(single & (n_old == 0), one).otherwise(zero),
        "update": F.when(pair & ~same, one).otherwise(zero),
        "delete": F.when(single & (n_new == 0), one).otherwise(zero),
        "unchanged": F.when(pair & same, one).otherwise(zero),
        "duplicate_key": F.when(keyed & ~single, n_old + n_new).otherwise(zero),
        "null_key": F.when(~keyed, n_old + n_new).otherwise(zero),
    }


def _plan(spec: _Spec) -> DiffPlan:
    """Run the hash-only pass: one query, three aggregations (per key, per bucket, overall), one result row."""
    status = _status_rows()
    per_key = _per_key_status(spec).select(
        _BUCKET, "n_old", "n_new", *(c.alias(n) for n, c in status.items())
    )
    per_bucket = per_key.groupBy(_BUCKET).agg(
        F.sum("n_old").alias("n_old"),
        F.sum("n_new").alias("n_new"),
        *(F.sum(n).alias(n) for n in CHANGE_TYPES),
    )
    differs = (F.col(_BUCKET) >= 0) & (
        (F.col("insert") + F.col("update") + F.col("delete") + F.col("duplicate_key")) > 0
    )
    row = per_bucket.agg(
        F.coalesce(F.sum("n_old"), F.lit(0)).alias("old_rows"),
        F.coalesce(F.sum("n_new"), F.lit(0)).alias("new_rows"),
        F.coalesce(F.sum(F.when(differs, F.col("n_old") + F.col("n_new"))), F.lit(0)).alias(
            "rows_to_compare"
        ),
        F.collect_list(F.when(differs, F.col(_BUCKET))).alias("differing"),
        *(F.coalesce(F.sum(n), F.lit(0)).alias(n) for n in CHANGE_TYPES),
    ).first()
    return DiffPlan(
        buckets=spec.buckets,
        differing_buckets=tuple(sorted(row["differing"])),
        old_rows=int(row["old_rows"]),
        new_rows=int(row["new_rows"]),
        rows_to_compare=int(row["rows_to_compare"]),
        counts={n: int(row[n]) for n in CHANGE_TYPES},
    )


def _bucket_filter(df: DataFrame, plan: DiffPlan | None) -> DataFrame:
    """Keep the rows of the differing buckets (all keyed rows without a plan, i.e. with unchanged rows)."""
    keyed = df.where(F.col(_BUCKET) >= 0)
    if plan is None:
        return keyed
    ids = plan.differing_buckets
    if not ids:
        # A constant false filter: Spark prunes the scan of this branch entirely.
        return df.where(F.lit(False))
    if plan.rows_to_compare * 2 >= plan.old_rows + plan.new_rows:
        return keyed  # most rows differ: filtering would cost more than it saves
    if len(ids) <= _MAX_IN_LIST:
        return df.where(F.col(_BUCKET).isin(list(ids)))
    chosen = df.sparkSession.createDataFrame([(i,) for i in ids], f"{_BUCKET} INT")
    return df.join(F.broadcast(chosen), on=_BUCKET, how="left_semi")


def _values(spec: _Spec) -> Column:
    return F.struct(*(_col(c) for c in spec.columns))


def _side_rows(df: DataFrame, spec: _Spec, prefix: str, plan: DiffPlan | None) -> DataFrame:
    """One side's keyed rows to compare, with their key's row count and a row number within the key."""
    hashed = df.select(
        *(_col(k).alias(f"{prefix}k{i}") for i, k in enumerate(spec.key)),
        _values(spec).alias(prefix + _V),
        *(c.alias(n) for n, c in _hashes(spec).items()),
    )
    by_key = Window.partitionBy(_KH)
    return _bucket_filter(hashed, plan).select(
        *(F.col(f"{prefix}k{i}") for i in range(len(spec.key))),
        F.col(prefix + _V),
        F.col(_KH).alias(prefix + _KH),
        F.col(_H).alias(prefix + _H),
        F.count(F.lit(1)).over(by_key).alias(prefix + _N),
        # Numbering the rows of a key pairs duplicates one to one, so the join never multiplies them.
        F.row_number().over(by_key.orderBy(_H)).alias(prefix + _RN),
    )


def _changed_columns(spec: _Spec, change: Column) -> Column:
    old_v, new_v = F.col("o" + _V), F.col("n" + _V)
    empty = F.array().cast("array<string>")
    if not spec.columns:
        return F.when(change == "unchanged", empty).otherwise(F.lit(None).cast("array<string>"))
    # Per-column hashes, so that a column counts as changed exactly when the row hash says so.
    differing = [
        F.when(record_hash(old_v.getField(c)) != record_hash(new_v.getField(c)), F.lit(c))
        for c in spec.columns
    ]
    return (
        F.when(change == "update", F.array_compact(F.array(*differing)))
        .when(change == "unchanged", empty)
        .otherwise(F.lit(None).cast("array<string>"))
    )


def _compared(spec: _Spec, plan: DiffPlan | None, include_values: bool) -> DataFrame:
    """The keyed rows, matched by key hash: every input row in exactly one output row (two for duplicates)."""
    o, n = _side_rows(spec.old, spec, "o", plan), _side_rows(spec.new, spec, "n", plan)
    joined = o.join(n, (o["o" + _KH] == n["n" + _KH]) & (o["o" + _RN] == n["n" + _RN]), "full_outer")
    has_old, has_new = F.col("o" + _KH).isNotNull(), F.col("n" + _KH).isNotNull()
    duplicate = F.greatest(F.coalesce(F.col("o" + _N), F.lit(0)), F.coalesce(F.col("n" + _N), F.lit(0))) > 1
    sides = (
        F.when(
            duplicate, F.array_compact(F.array(F.when(has_old, F.lit("old")), F.when(has_new, F.lit("new"))))
        )
        .when(has_old & has_new, F.array(F.lit("both")))
        .when(has_old, F.array(F.lit("old")))
        .otherwise(F.array(F.lit("new")))
    )
    side = F.col("side")
    change = (
        F.when(duplicate, F.lit("duplicate_key"))
        .when(side == "new", F.lit("insert"))
        .when(side == "old", F.lit("delete"))
        .when(F.col("o" + _H) != F.col("n" + _H), F.lit("update"))
        .otherwise(F.lit("unchanged"))
    )
    exploded = joined.select("*", F.explode(sides).alias("side")).withColumn("change", change)
    values = [
        F.when(side != "new", F.col("o" + _V)).alias("old"),
        F.when(side != "old", F.col("n" + _V)).alias("new"),
    ]
    return exploded.select(
        *(
            F.when(side == "old", F.col(f"ok{i}")).otherwise(F.col(f"nk{i}")).alias(k)
            for i, k in enumerate(spec.key)
        ),
        F.col("change"),
        side,
        _changed_columns(spec, F.col("change")).alias("changed_columns"),
        *(values if include_values else []),
    )


def _null_key_rows(
    df: DataFrame, spec: _Spec, side: str, schema: StructType, include_values: bool
) -> DataFrame:
    """One side's rows with a NULL key part, typed like the compared rows so that they can be unioned."""
    types = {f.name: f.dataType for f in schema.fields}
    own = _values(spec)
    values = [
        (own if side == name else F.lit(None)).cast(types[name]).alias(name)
        for name in (("old", "new") if include_values else ())
    ]
    return df.where(_null_key(spec)).select(
        *(_col(k).cast(types[k]).alias(k) for k in spec.key),
        F.lit("null_key").alias("change"),
        F.lit(side).alias("side"),
        F.lit(None).cast("array<string>").alias("changed_columns"),
        *values,
    )


def diff_plan(
    old: DataFrame,
    new: DataFrame,
    key: KeySpec,
    *,
    columns: Sequence[str] | None = None,
    buckets: int | None = None,
) -> DiffPlan:
    """Run the hash-only pass of :func:`diff` and return its findings, without joining any values.

    One Spark query over both inputs computes, for every key, each side's row count and row hash, and from
    them the exact number of inserts, updates, deletes, unchanged rows, duplicate-key rows and NULL-key rows,
    and the buckets :func:`diff` has to join. Only hashes (32 bytes a row) are shuffled, never the rows.

    Parameters
    ----------
    old, new : :class:`~pyspark.sql.DataFrame`
        The two snapshots.
    key : str or list of str
        The key column(s), present on both sides.
    columns : list of str, optional
        The columns to compare; see :func:`diff`.
    buckets : int, optional
        The number of key-hash buckets (default :data:`DEFAULT_BUCKETS`).

    Returns
    -------
    :class:`DiffPlan`

    Examples
    --------
    >>> from hashexpr.diff import diff, diff_plan, summarize
    >>> old = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id INT, v STRING")
    >>> new = spark.createDataFrame([(1, "a"), (2, "B"), (4, "d")], "id INT, v STRING")
    >>> plan = diff_plan(old, new, "id")
    >>> plan.counts["update"], plan.counts["unchanged"], len(plan.differing_buckets), plan.rows_to_compare
    (1, 1, 3, 4)
    """
    return _plan(_spec(old, new, key, columns, buckets))


def diff(
    old: DataFrame,
    new: DataFrame,
    key: KeySpec,
    *,
    columns: Sequence[str] | None = None,
    include_unchanged: bool = False,
    include_values: bool = False,
    buckets: int | None = None,
) -> DataFrame:
    """Return the rows that differ between two snapshots, matched by key: inserts, updates and deletes.

    Values compare as their hashes do (``docs/FORMAT.md``): NULL equals NULL, ``-0.0`` equals ``0.0``, NaN
    equals NaN, maps equal regardless of entry order, and ``1`` as INT equals ``1`` as BIGINT. Key columns
    match the same way, NULL-safely, except that a row with a NULL key part is never matched.

    Duplicate and NULL keys are reported, never merged: every row of a key that occurs more than once on
    either side comes out as ``duplicate_key`` (with the ``side`` it comes from), and every row with a NULL
    key part as ``null_key``. So every input row is in the output, except unchanged rows when
    ``include_unchanged`` is false.

    Unless ``include_unchanged`` is set, a first Spark job compares both sides on hashes only (see
    :func:`diff_plan`) and the returned DataFrame joins only the rows of the buckets that hold a change.
    The inputs are read twice, so they must give the same rows each time (a table or files, not a
    non-deterministic query; cache such a query first).

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
    buckets : int, optional
        The number of key-hash buckets of the pre-filter (default :data:`DEFAULT_BUCKETS`).

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
    >>> from hashexpr.diff import diff, diff_plan, summarize
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
    spec = _spec(old, new, key, columns, buckets)
    plan = None if include_unchanged else _plan(spec)
    compared = _compared(spec, plan, include_values)
    if not include_unchanged:
        compared = compared.where(F.col("change") != "unchanged")
    schema = compared.schema
    return compared.unionByName(_null_key_rows(spec.old, spec, "old", schema, include_values)).unionByName(
        _null_key_rows(spec.new, spec, "new", schema, include_values)
    )


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
    >>> from hashexpr.diff import diff, diff_plan, summarize
    >>> old = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, s STRING")
    >>> new = spark.createDataFrame([(2, "c"), (3, "d"), (None, "e")], "id INT, s STRING")
    >>> summarize(diff(old, new, "id"))
    {'insert': 1, 'update': 1, 'delete': 1, 'duplicate_key': 0, 'null_key': 1}
    """
    found = {r["change"]: int(r["count"]) for r in diff_df.groupBy("change").count().collect()}
    return {t: found.get(t, 0) for t in CHANGE_TYPES if t != "unchanged" or t in found}
