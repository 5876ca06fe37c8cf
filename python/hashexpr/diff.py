"""Key-based diff of two snapshots of a table: inserts, updates (with the changed columns) and deletes.

Rows are matched by the hash of their key (:func:`record_key`) and compared by the hash of their other columns
(:func:`record_hash`), so NULLs, map entry order, ``-0.0`` and NaN follow the hash semantics of
``docs/FORMAT.md``. A first Spark job compares the two sides bucket by bucket (a hash of the key) on hashes
only and finds the buckets that hold changes; the rows of those buckets alone are joined with their values
(or, when most buckets differ, the rows of the keys that a comparison of key and row hashes finds changed).
A side written by :func:`~hashexpr.metadata.with_metadata` lends its stored key and row hashes to the first
job, which then reads only those two columns of it. See ``docs/DIFF.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
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

from hashexpr.errors import SchemaMismatchError
from hashexpr.functions import _require
from hashexpr.metadata import DEFAULT_NAMES
from hashexpr.names import quote
from hashexpr.options import Algorithm, hash_options
from hashexpr.sql_text import record_hash_sql, record_key_sql, string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Every value of the ``change`` column, in the order :func:`summarize` reports them.
CHANGE_TYPES = ("insert", "update", "delete", "unchanged", "duplicate_key", "null_key")

#: Buckets used when ``buckets`` is not given. Each task of the bucket pass keeps 32 bytes per bucket it sees
#: (at most 32 MiB); more buckets put fewer rows next to a change into the join.
DEFAULT_BUCKETS = 1 << 20

#: The most buckets ``diff`` takes (32 MiB of counts per task).
MAX_BUCKETS = 1 << 20

# Up to this many differing buckets are filtered with an IN list (a hash set in the plan); more go through a
# broadcast semi-join with a list made in Spark from one string, passed as a row of data: the plan stays small,
# and there is no call per bucket between Python and the JVM.
_MAX_IN_LIST = 64

# Rows (both sides together) per task of the values join at most, when Spark's configured shuffle partitions
# would put more into each: a compared row carries its values, and at this count the sorts of the window and
# the join stay within the execution memory of a 1g executor instead of spilling.
_ROWS_PER_TASK = 200_000

# Bits of the filter of changed keys (see _key_filter): per row the bucket pass counted, so that at most one
# unchanged row in eight passes it, and at most 8 MiB, which every task reading a side receives once.
_KEY_FILTER_BITS_PER_ROW = 8
_KEY_FILTER_MAX_BITS = 1 << 26

# Rows of a side with stored hashes that are hashed again to check that the stored hashes are the ones diff
# compares (same columns, same mode).
_CHECKED_ROWS = 100

# The output columns besides the key; a key column may not take one of these names.
_OUTPUT_COLUMNS = ("change", "side", "changed_columns", "old", "new")

# Internal column names; the prefix keeps them apart from any user column.
_P = "__hx_diff_"
_SIDE, _KH, _H, _DIGEST, _BUCKET, _N, _RN, _V, _FP, _PART = (
    f"{_P}{n}" for n in ("side", "kh", "h", "digest", "bucket", "n", "rn", "v", "fp", "part")
)

KeySpec = str | Sequence[str]


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


@dataclass(frozen=True)
class _BucketPass:
    """What the first pass found: per-side row counts and the buckets whose multisets of hashes differ."""

    differing_buckets: tuple[int, ...]
    old_rows: int
    new_rows: int
    rows_to_compare: int
    null_key_rows: tuple[int, int]
    # Rows of the buckets that are the same on both sides: each is an unchanged (old, new) pair.
    unchanged_rows: int

    @property
    def joins_everything(self) -> bool:
        """True when the differing buckets hold half the rows or more: then filtering costs more than it saves."""
        return self.rows_to_compare * 2 >= self.old_rows + self.new_rows

    @property
    def rows_joined(self) -> int:
        """The keyed rows of both sides that the values join reads: every one when it joins everything."""
        return self.old_rows + self.new_rows if self.joins_everything else self.rows_to_compare


@dataclass(frozen=True)
class _Stored:
    """The stored hash columns of one side, and whether its row hash covers the key columns too."""

    record_key: str
    record_hash: str
    with_key: bool


@dataclass(frozen=True)
class _Spec:
    """The validated inputs of a diff."""

    old: DataFrame
    new: DataFrame
    key: tuple[str, ...]
    columns: tuple[str, ...]
    buckets: int
    # Stored hashes per side (old, new); with any, both sides compare record_hash_by_name.
    stored: tuple[_Stored | None, _Stored | None] = (None, None)
    # The hash algorithm of keys, rows and columns, and the HMAC secret's name (docs/SECURITY.md).
    algorithm: str = "murmur3"
    secret: str | None = None

    @property
    def hashing(self) -> dict[str, Any]:
        """The keyword arguments that choose the algorithm of record_key and record_hash."""
        return {"algorithm": self.algorithm, "secret": self.secret}

    @property
    def by_name(self) -> bool:
        return any(self.stored)

    @property
    def with_key(self) -> bool:
        """Whether the row hash covers the key columns (as with_metadata's does by default)."""
        return next((s.with_key for s in self.stored if s is not None), False)

    def side(self, i: int) -> DataFrame:
        return (self.old, self.new)[i]


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
        raise SchemaMismatchError(
            problems, "Pass columns=[...] to compare chosen columns (present on both sides) anyway."
        )
    return tuple(n for n in old if n not in key)


HashesSpec = bool | Sequence[str] | None


def _stored_names(df: DataFrame, hashes: HashesSpec, side: str) -> tuple[str, str] | None:
    """The (record key, record hash) columns to read on one side, or None to hash the side's values."""
    if hashes is False:
        return None
    if hashes is None or hashes is True:
        names = (DEFAULT_NAMES["record_key"], DEFAULT_NAMES["record_hash"])
        present = [n for n in names if n in df.columns]
        if hashes is None and len(present) < 2:
            return None
        if len(present) < 2:
            raise ValueError(
                f"{side}_hashes=True, but {side} lacks {[n for n in names if n not in present]}: "
                "write it with hashexpr.with_metadata, or name the columns as "
                f"{side}_hashes=('<record key column>', '<record hash column>')"
            )
        return names
    if isinstance(hashes, str) or len(hashes) != 2:
        raise ValueError(
            f"{side}_hashes must be True, False, None or a pair of column names "
            f"(record key, record hash), got {hashes!r}"
        )
    missing = [n for n in hashes if n not in df.columns]
    if missing:
        raise ValueError(f"{side}_hashes names columns that {side} does not have: {missing}")
    return (hashes[0], hashes[1])


def _spec(
    old: DataFrame,
    new: DataFrame,
    key: KeySpec,
    columns: Sequence[str] | None,
    buckets: int | None,
    old_hashes: HashesSpec = False,
    new_hashes: HashesSpec = False,
    algorithm: str = "murmur3",
    secret: str | None = None,
) -> _Spec:
    hash_options(algorithm, secret)
    # Checked once here: diff's queries call hashexpr's functions in SQL text.
    _require("record_hash")
    keys = (key,) if isinstance(key, str) else tuple(key)
    if not keys:
        raise ValueError("diff needs at least one key column")
    if buckets is None:
        buckets = DEFAULT_BUCKETS
    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= MAX_BUCKETS:
        raise ValueError(f"buckets must be an int from 1 to {MAX_BUCKETS:,} (2^20), got {buckets!r}")
    clash = [k for k in keys if k in _OUTPUT_COLUMNS or k.startswith(_P)]
    if clash:
        raise ValueError(
            f"key columns may not be named {clash}: diff's output has columns {list(_OUTPUT_COLUMNS)}"
        )
    stored_names = (_stored_names(old, old_hashes, "old"), _stored_names(new, new_hashes, "new"))
    old_types, new_types = _types(old), _types(new)
    if any(stored_names):
        # Metadata columns are not data: they are neither compared nor part of the schema check.
        meta = set(DEFAULT_NAMES.values()).union(*(n for n in stored_names if n))
        old_types = {n: t for n, t in old_types.items() if n not in meta}
        new_types = {n: t for n, t in new_types.items() if n not in meta}
        clash = [k for k in keys if k in meta]
        if clash:
            raise ValueError(f"key columns {clash} are stored hash or metadata columns")
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
    spec = _Spec(old, new, keys, compared, buckets, algorithm=algorithm, secret=secret)
    if not any(stored_names):
        return spec
    checked = [_check_stored(spec, i, names) for i, names in enumerate(stored_names) if names]
    if len({s.with_key for s in checked}) > 1:
        raise ValueError(
            "the stored record hashes of old and new cover different columns (one includes the key columns, "
            "the other does not); pass old_hashes=False or new_hashes=False to hash that side again"
        )
    stored = iter(checked)
    return replace(spec, stored=tuple(next(stored) if n else None for n in stored_names))


def _check_stored(spec: _Spec, i: int, names: tuple[str, str]) -> _Stored:
    """Hash the first rows of a side again and check that its stored hashes are the ones diff compares.

    The stored row hash must be ``record_hash_by_name`` of the compared columns, with or without the key
    columns (``with_metadata`` covers every column by default), and the stored key ``record_key`` of the key
    columns without options; anything else would compare different things on the two sides.
    """
    side, (key_col, hash_col) = ("old", "new")[i], names
    df = spec.side(i)
    types = _types(df)
    bad = [n for n in names if not isinstance(types[n], BinaryType)]
    if bad:
        raise ValueError(f"{side}'s stored hash columns must be BINARY: {bad}")
    null_key, stored_key, stored_hash = _null_key(spec), quote(key_col), quote(hash_col)
    covered = {with_key: (spec.key if with_key else ()) + spec.columns for with_key in (True, False)}
    by_name = {
        with_key: record_hash_sql([quote(c) for c in cols], by_name=True, **spec.hashing) if cols else "X''"
        for with_key, cols in covered.items()
    }
    key_hash = _key_hash(spec)
    row = (
        df.limit(_CHECKED_ROWS)
        .selectExpr(
            "count(1) AS n",
            f"count_if({stored_hash} IS NULL OR (NOT {null_key} AND {stored_key} IS NULL)) AS n_null",
            f"count_if(NOT {null_key} AND NOT ({stored_key} <=> {key_hash})) AS k",
            *(f"count_if(NOT ({stored_hash} <=> {h})) AS h{int(w)}" for w, h in by_name.items()),
        )
        .first()
    )
    problems = []
    if row["n_null"]:
        problems.append(f"{row['n_null']} of the first {row['n']} rows have no stored hash (NULL)")
    elif row["k"]:
        problems.append(
            f"{quote(key_col)} is not record_key({', '.join(spec.key)}) in {row['k']} of the first {row['n']} "
            f"rows (written with other key columns, key options such as salt, trim or case, or an algorithm "
            f"other than {spec.algorithm}?)"
        )
    with_key = row["h1"] == 0
    if not with_key and row["h0"] and not row["n_null"]:
        problems.append(
            f"{quote(hash_col)} is not record_hash_by_name of the compared columns {list(spec.columns)}, with "
            f"or without the key columns, in {min(row['h0'], row['h1'])} of the first {row['n']} rows (written "
            "over other columns, e.g. with hash_columns=, or in another mode?): pass columns= naming the "
            "columns it covers"
        )
    if problems:
        raise ValueError(
            f"diff cannot use the stored hashes of {side}: {'; '.join(problems)}; or pass {side}_hashes=False "
            "to hash its values instead"
        )
    return _Stored(key_col, hash_col, with_key)


def _null_key(spec: _Spec) -> str:
    """SQL: true when a key part is NULL (a NULL nested inside a key value does not count)."""
    return "(" + " OR ".join(f"{quote(k)} IS NULL" for k in spec.key) + ")"


def _key_hash(spec: _Spec) -> str:
    """SQL: ``record_key`` of the key columns, as diff computes it and ``with_metadata`` stores it."""
    return record_key_sql([quote(k) for k in spec.key], **spec.hashing)


def _hashes(spec: _Spec, i: int) -> dict[str, str]:
    """SQL of side ``i``'s per-row key hash (NULL when a key part is NULL), row hash, and bucket.

    The row hash is ``record_hash`` of the compared columns, or, when a side has stored hashes,
    ``record_hash_by_name`` as ``with_metadata`` stores it; a side with stored hashes reads them.
    """
    null_key = _null_key(spec)
    stored = spec.stored[i]
    side = ("old", "new")[i]
    if stored is not None:
        # A stored hash must be there for every row: a NULL would compare as a change that is not one.
        message = (
            f"diff: a row of {side} has a NULL {stored.record_key} or {stored.record_hash}; "
            f"pass {side}_hashes=False to hash its values instead"
        )
        missing = f"CAST(raise_error({string(message)}) AS BINARY)"
        key_hash = (
            f"CASE WHEN {null_key} THEN CAST(NULL AS BINARY) "
            f"ELSE coalesce({quote(stored.record_key)}, {missing}) END"
        )
        row_hash = f"coalesce({quote(stored.record_hash)}, {missing})"
    else:
        key_hash = f"CASE WHEN NOT {null_key} THEN {_key_hash(spec)} END"
        hashed = (spec.key if spec.by_name and spec.with_key else ()) + spec.columns
        row_hash = (
            record_hash_sql([quote(c) for c in hashed], by_name=spec.by_name, **spec.hashing)
            if hashed
            else "X''"
        )
    # Bucket -1 holds the NULL-key rows, which are reported, never matched.
    bucket = f"CASE WHEN {null_key} THEN -1 ELSE pmod(hash({key_hash}), {spec.buckets}) END"
    return {_KH: key_hash, _H: row_hash, _BUCKET: bucket}


def _keyed(
    spec: _Spec,
    i: int,
    plan: _BucketPass | None,
    with_null_keys: bool = False,
    key_filter: Column | None = None,
) -> DataFrame:
    """Side ``i``'s columns that diff reads, with the key hash and the bucket; with a plan, only the rows of the
    differing buckets, with a key filter (:func:`_key_filter`) only the rows of the keys it holds, and the
    NULL-key rows with ``with_null_keys``.

    Row hashes and value structs are computed on this result, after the filter: for the rows it keeps only.
    """
    stored = spec.stored[i]
    names = spec.key + spec.columns + ((stored.record_key, stored.record_hash) if stored else ())
    hashes = _hashes(spec, i)
    keyed = spec.side(i).selectExpr(
        *map(quote, names), f"{hashes[_KH]} AS {_KH}", f"{hashes[_BUCKET]} AS {_BUCKET}"
    )
    if plan is not None:
        keyed = _bucket_filter(keyed, plan, with_null_keys)
    if key_filter is not None:
        held = F.call_function("diff_key_filter_contains", key_filter, F.col(_KH))
        keyed = keyed.where((F.col(_BUCKET) < 0) | held if with_null_keys else held)
    return keyed


def _hashed_sides(spec: _Spec, plan: _BucketPass | None = None) -> DataFrame:
    """Both sides as (side: 0 old, 1 new, bucket, key hash, digest); only the differing buckets with a plan.

    The digest is the record hash of the key hash and the row hash: equal values hash alike also when a
    column's type differs between the sides within a widening group, and a changed key changes the digest.
    A side with stored hashes is read for its key columns and those two hashes alone. With a plan the
    differing buckets are kept however many rows they hold: a row of the other buckets would only be
    shuffled and compared to be found unchanged.
    """
    sides = [
        _keyed(spec, i, plan).selectExpr(
            f"{i} AS {_SIDE}", _BUCKET, _KH, f"record_hash({_KH}, {_hashes(spec, i)[_H]}) AS {_DIGEST}"
        )
        for i in (0, 1)
    ]
    return sides[0].unionByName(sides[1])


def _fingerprint(*cols: str, side: int) -> str:
    """SQL of the dataset_fingerprint of ``cols`` over one side's rows.

    The fingerprint is order-independent and duplicate-sensitive: equal exactly for equal multisets of rows.
    """
    args = ", ".join(quote(c) for c in cols)
    return f"dataset_fingerprint({args}) FILTER (WHERE {quote(_SIDE)} = {side})"


def _lanes(row_hash: str) -> list[str]:
    """SQL of four 32-bit lanes of two 64-bit digests of a row hash.

    Summed over a key's rows they compare the rows as a multiset: exact sums of 32-bit values never overflow
    (below 2^31 rows), so equal multisets always give equal sums, and different ones equal sums only by chance.
    """
    out = []
    for seed in (0, 1):
        digest = f"xxhash64({row_hash}, {seed})"
        out += [f"shiftrightunsigned({digest}, 32)", f"({digest} & {0xFFFFFFFF})"]
    return out


def _compare_groups(hashed: DataFrame, group: str) -> DataFrame:
    """Per group: each side's row count, and whether both sides hold the same multiset of rows.

    Every aggregate has a fixed-width buffer, so Spark runs one hash aggregate that folds each task's rows
    into at most one row per group before the shuffle.
    """
    rows = [c for c in hashed.columns if c not in (_SIDE, _BUCKET)]
    return hashed.groupBy(group).agg(
        F.expr(f"count_if({_SIDE} = 0) AS n_old"),
        F.expr(f"count_if({_SIDE} = 1) AS n_new"),
        F.expr(f"{_fingerprint(*rows, side=0)} = {_fingerprint(*rows, side=1)} AS same"),
    )


def _bucket_pass(spec: _Spec) -> _BucketPass:
    """Run the bucket pass: one aggregate (``diff_buckets``) over both sides, without grouping.

    Each task counts its rows and sums their digests into an array indexed by bucket, so the only shuffle is
    one buffer per task; no bucket is grouped, and no row is shuffled.
    """
    found = f"diff_buckets({_SIDE}, {_BUCKET}, {spec.buckets}, {_DIGEST}) AS found"
    # collect, not first: a LIMIT on top of the aggregate would cost another job.
    row = _hashed_sides(spec).selectExpr(found).collect()[0]["found"]
    return _BucketPass(
        differing_buckets=tuple(row["differing_buckets"]),
        old_rows=int(row["old_rows"]),
        new_rows=int(row["new_rows"]),
        rows_to_compare=int(row["rows_to_compare"]),
        null_key_rows=(int(row["unmatched_old"]), int(row["unmatched_new"])),
        unchanged_rows=int(row["unchanged_rows"]),
    )


def _counts(spec: _Spec, plan: _BucketPass) -> dict[str, int]:
    """Exact output rows per change type: the keys of the differing buckets are compared one by one."""
    per_key = _compare_groups(_hashed_sides(spec, plan), _KH)
    n_old, n_new, same = F.col("n_old"), F.col("n_new"), F.col("same")
    single = (n_old <= 1) & (n_new <= 1)
    zero = F.lit(0)
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
    counts = {name: int(row[name]) for name in ("insert", "update", "delete", "unchanged", "duplicate_key")}
    counts["unchanged"] += plan.unchanged_rows
    counts["null_key"] = sum(plan.null_key_rows)
    return {t: counts[t] for t in CHANGE_TYPES}


def _bucket_filter(df: DataFrame, plan: _BucketPass | None, with_null_keys: bool = False) -> DataFrame:
    """Keep the rows of the differing buckets (every keyed row without a plan, i.e. with unchanged rows), and
    with ``with_null_keys`` the NULL-key rows (bucket -1) too."""
    if plan is None:
        return df if with_null_keys else df.where(f"{_BUCKET} >= 0")
    ids = list(plan.differing_buckets)
    if with_null_keys and sum(plan.null_key_rows):
        ids.append(-1)
    if not ids:
        # A constant false filter: Spark prunes the scan of this branch entirely.
        return df.where("false")
    listed = ",".join(map(str, ids))
    if len(ids) <= _MAX_IN_LIST:
        return df.where(f"{_BUCKET} IN ({listed})")
    # The list goes into Spark as a row of data, not as a literal: with 10^5 buckets a literal made the plan
    # megabytes long, and Spark keeps a copy of every query's plan for its UI.
    chosen = df.sparkSession.createDataFrame([(listed,)], "ids STRING").selectExpr(
        f"explode(CAST(split(ids, ',') AS array<int>)) AS {_BUCKET}"
    )
    return df.join(F.broadcast(chosen), on=_BUCKET, how="left_semi")


def _key_filter(spec: _Spec, plan: _BucketPass | None) -> Column | None:
    """A filter of the keys whose rows differ, when the bucket pass found changes in so many buckets that the
    join would read every row; None otherwise.

    Buckets hold several keys each on large inputs (2^20 buckets, 8 keys at 8 million rows a side), so at high
    change rates most buckets differ and the join would carry every row's values through its shuffle. Instead,
    the keys of the differing buckets are compared one by one on their hashes (a shuffle of two hashes per
    row), and the keys that differ set bits in a bitmap (``diff_key_filter``), a scalar subquery that Spark
    runs once; the join then reads the rows of those keys, and of the unchanged keys only the few that share a
    bit. This reads the inputs a third time. Needs ``DataFrame.scalar`` (PySpark 4.0 and later); without it,
    every row is joined.
    """
    # Looked up on the class: a DataFrame answers an unknown attribute with a column of that name.
    if plan is None or not plan.joins_everything or not callable(getattr(type(spec.old), "scalar", None)):
        return None
    wanted = _KEY_FILTER_BITS_PER_ROW * max(plan.rows_to_compare, 1)
    bits = min(_KEY_FILTER_MAX_BITS, max(1024, 1 << (wanted - 1).bit_length()))
    per_key = _compare_groups(_hashed_sides(spec, plan), _KH)
    changed = per_key.where(~F.col("same")).select(
        F.call_function("diff_key_filter", F.col(_KH), F.lit(bits))
    )
    return changed.scalar()


def _values(spec: _Spec) -> str:
    """SQL of the struct of the compared columns' values, its fields named as the columns."""
    return f"struct({', '.join(quote(c) for c in spec.columns)})"


def _join_partitions(spec: _Spec, plan: _BucketPass | None, key_filter: Column | None) -> int | None:
    """The partitions of the values join when Spark's ``spark.sql.shuffle.partitions`` would give a task more
    than :data:`_ROWS_PER_TASK` of the rows the bucket pass counted; None leaves the number to Spark (and AQE).

    With a key filter the join reads the rows of the differing buckets at most, not every row."""
    if plan is None:
        return None
    rows = plan.rows_to_compare if key_filter is not None else plan.rows_joined
    needed = -(-rows // _ROWS_PER_TASK)
    configured = str(spec.old.sparkSession.conf.get("spark.sql.shuffle.partitions")).strip()
    # A value other than a number (managed runtimes take "auto") leaves the choice to the runtime.
    return needed if configured.isdigit() and needed > int(configured) else None


def _side_rows(
    spec: _Spec,
    i: int,
    plan: _BucketPass | None,
    partitions: int | None = None,
    key_filter: Column | None = None,
) -> DataFrame:
    """Side ``i``'s rows to compare (and its NULL-key rows), with their key's row count, row number and the
    sums of :func:`_lanes` over the key's rows; shuffled into ``partitions`` partitions when given."""
    prefix = "on"[i]
    # When the differing buckets hold most rows, a filter by bucket costs more than it saves: the rows go on
    # into the key filter, or are all joined.
    by_bucket = None if plan is None or plan.joins_everything else plan
    hashed = _keyed(spec, i, by_bucket, with_null_keys=True, key_filter=key_filter).selectExpr(
        *(f"{quote(k)} AS {prefix}k{j}" for j, k in enumerate(spec.key)),
        f"{_values(spec)} AS {prefix}{_V}",
        _KH,
        f"{_hashes(spec, i)[_H]} AS {_H}",
        _BUCKET,
    )
    # Rows are partitioned by key hash, NULL-key rows by their row hash (they are never matched, and this
    # keeps them off a single task); the join below uses the same column, so each side is shuffled once.
    kept = hashed.selectExpr("*", f"coalesce({_KH}, {_H}) AS {prefix}{_PART}")
    if partitions is not None:
        # Both sides get the same number, so the window's partitioning still serves the join.
        kept = kept.repartition(partitions, prefix + _PART)
    # One ordering for all window functions: Spark then computes them in one Window operator over one sort.
    ordered = f"PARTITION BY {prefix}{_PART} ORDER BY {_H}"
    by_key = f"{ordered} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
    return kept.selectExpr(
        *(f"{prefix}k{j}" for j in range(len(spec.key))),
        prefix + _V,
        f"{_BUCKET} AS {prefix}{_BUCKET}",
        prefix + _PART,
        f"{_KH} AS {prefix}{_KH}",
        f"{_H} AS {prefix}{_H}",
        f"count(1) OVER ({by_key}) AS {prefix}{_N}",
        *(f"sum({lane}) OVER ({by_key}) AS {prefix}{_FP}{n}" for n, lane in enumerate(_lanes(_H))),
        # Numbering the rows of a key pairs duplicates one to one, so the join never multiplies them.
        f"row_number() OVER ({ordered}) AS {prefix}{_RN}",
    )


def _changed_columns(spec: _Spec) -> str:
    """SQL of ``changed_columns`` from the value structs of both sides and the ``change`` column."""
    empty = "CAST(array() AS array<string>)"
    if not spec.columns:
        return f"CASE WHEN `change` = 'unchanged' THEN {empty} END"
    # Per-column hashes, so that a column counts as changed exactly when the row hash says so.
    differing = ", ".join(
        f"CASE WHEN {record_hash_sql([f'o{_V}.{quote(c)}'], **spec.hashing)} "
        f"!= {record_hash_sql([f'n{_V}.{quote(c)}'], **spec.hashing)} THEN {string(c)} END"
        for c in spec.columns
    )
    return (
        f"CASE WHEN `change` = 'update' THEN array_compact(array({differing})) "
        f"WHEN `change` = 'unchanged' THEN {empty} END"
    )


def _compared(spec: _Spec, plan: _BucketPass | None, include_values: bool) -> DataFrame:
    """The rows, matched by key hash: every input row in exactly one output row (a matched pair in one)."""
    key_filter = _key_filter(spec, plan)
    partitions = _join_partitions(spec, plan, key_filter)
    o, n = (_side_rows(spec, i, plan, partitions, key_filter) for i in (0, 1))
    # Rows pair up by (key hash, row number); NULL-key rows (bucket -1) never pair up. Only the partition
    # column is an equality, so Spark keeps the window's partitioning for the join instead of shuffling again.
    joined = o.join(
        n,
        F.expr(f"o{_PART} = n{_PART} AND (o{_RN} - n{_RN}) = 0 AND o{_BUCKET} >= 0 AND n{_BUCKET} >= 0"),
        "full_outer",
    )
    has_old, has_new = f"o{_BUCKET} IS NOT NULL", f"n{_BUCKET} IS NOT NULL"
    null_key = f"coalesce(o{_BUCKET}, n{_BUCKET}) < 0"
    # A key whose rows are the same multiset on both sides is unchanged, however many rows it has: rows are
    # numbered in row-hash order, so its rows pair up with equal rows.
    same_rows = " AND ".join(
        [has_old, has_new, f"o{_N} = n{_N}", *(f"o{_FP}{i} = n{_FP}{i}" for i in range(4))]
    )
    several = f"greatest(coalesce(o{_N}, 0), coalesce(n{_N}, 0)) > 1"
    duplicate = f"({several} AND NOT ({same_rows}))"
    sides = (
        f"CASE WHEN {duplicate} "
        f"THEN array_compact(array(CASE WHEN {has_old} THEN 'old' END, CASE WHEN {has_new} THEN 'new' END)) "
        f"WHEN {has_old} AND {has_new} THEN array('both') WHEN {has_old} THEN array('old') ELSE array('new') END"
    )
    change = (
        f"CASE WHEN {null_key} THEN 'null_key' WHEN {duplicate} THEN 'duplicate_key' "
        "WHEN `side` = 'new' THEN 'insert' WHEN `side` = 'old' THEN 'delete' "
        f"WHEN o{_H} != n{_H} THEN 'update' ELSE 'unchanged' END"
    )
    exploded = joined.selectExpr("*", f"explode({sides}) AS `side`").selectExpr("*", f"{change} AS `change`")
    values = [
        f"CASE WHEN `side` != 'new' THEN o{_V} END AS `old`",
        f"CASE WHEN `side` != 'old' THEN n{_V} END AS `new`",
    ]
    return exploded.selectExpr(
        *(
            f"CASE WHEN `side` = 'old' THEN ok{i} ELSE nk{i} END AS {quote(k)}"
            for i, k in enumerate(spec.key)
        ),
        "`change`",
        "`side`",
        f"{_changed_columns(spec)} AS changed_columns",
        *(values if include_values else []),
    )


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
    unchanged rows, duplicate-key rows and NULL-key rows. Only hashes are shuffled, never the rows.

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
    >>> from hashexpr.diff import diff, diff_plan, summarize
    >>> old = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id INT, v STRING")
    >>> new = spark.createDataFrame([(1, "a"), (2, "B"), (4, "d")], "id INT, v STRING")
    >>> plan = diff_plan(old, new, "id")
    >>> plan.counts["update"], plan.counts["unchanged"], len(plan.differing_buckets), plan.rows_to_compare
    (1, 1, 3, 4)
    """
    spec = _spec(old, new, key, columns, buckets, old_hashes, new_hashes)
    found = _bucket_pass(spec)
    return DiffPlan(
        buckets=spec.buckets,
        differing_buckets=found.differing_buckets,
        old_rows=found.old_rows,
        new_rows=found.new_rows,
        rows_to_compare=found.rows_to_compare,
        counts=_counts(spec, found),
    )


def diff(
    old: DataFrame,
    new: DataFrame,
    key: KeySpec,
    *,
    columns: Sequence[str] | None = None,
    include_unchanged: bool = False,
    include_values: bool = False,
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
        The number of key-hash buckets of the pre-filter (default :data:`DEFAULT_BUCKETS`, at most
        :data:`MAX_BUCKETS`).
    old_hashes, new_hashes : bool or (str, str), optional
        Stored hashes of a side, as :func:`~hashexpr.metadata.with_metadata` writes them: the record key and
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
        joined. Rows of a key that occurs more than once are compared as a multiset by sums of 64-bit hashes
        of their row hashes, which guards against accidents only.
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
    spec = _spec(old, new, key, columns, buckets, old_hashes, new_hashes, algorithm, secret)
    # The bucket pass compares sums of hashes, which only guards against accidents: with an algorithm chosen
    # against adversaries, every row is joined and compared on its own hashes.
    plan = None if include_unchanged or algorithm != "murmur3" else _bucket_pass(spec)
    compared = _compared(spec, plan, include_values)
    return compared if include_unchanged else compared.where("`change` != 'unchanged'")


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
