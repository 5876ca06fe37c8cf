"""The checked inputs of a diff: key and compared columns on both sides, buckets, algorithm, stored hashes.

Shared by the diff on Spark (:mod:`hashexpr.spark.diff`) and on the Arrow engine (:mod:`hashexpr.arrow.diff`), so it
imports no PySpark: a side's types are :mod:`hashexpr.types` (PySpark's converted). Everything a diff is asked is
checked here, before any Spark job: names are resolved on each side as Spark
resolves them (ignoring case unless ``spark.sql.caseSensitive``), schemas are compared, and the stored hashes a
side lends are found and checked (:mod:`hashexpr.spark.diff.stored`). Downstream, every column goes by one name on
both sides, its *canonical* name: a side that spells a name otherwise is read through a projection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hashexpr.errors import SchemaMismatchError
from hashexpr.names import Resolver, quote
from hashexpr.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CharType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
    UserDefinedType,
    VarcharType,
    YearMonthIntervalType,
    of,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Every value of the ``change`` column, in the order :func:`~hashexpr.spark.diff.summarize` reports them.
CHANGE_TYPES = ("insert", "update", "delete", "unchanged", "duplicate_key", "null_key")

#: Buckets used when ``buckets`` is not given. Each task of the bucket pass keeps 32 bytes per bucket it sees
#: (at most 32 MiB); more buckets put fewer rows next to a change into the join.
DEFAULT_BUCKETS = 1 << 20

#: The most buckets ``diff`` takes (32 MiB of counts per task).
MAX_BUCKETS = 1 << 20

# The output columns besides the key; a key column may not take one of these names.
OUTPUT_COLUMNS = ("change", "side", "changed_columns", "old", "new")

# Internal column names; the prefix keeps them apart from any user column.
P = "__hx_diff_"
SIDE, KH, H, DIGEST, BUCKET, N, RN, V, FP, PART = (
    f"{P}{n}" for n in ("side", "kh", "h", "digest", "bucket", "n", "rn", "v", "fp", "part")
)
# Without the jar, the hashes the Arrow path computes as columns of a side (hashexpr.spark.diff.hash_columns): the
# record key of the key columns, the row hash, each compared column's hash (HC + its position), and the array of
# those a values join carries (C).
HK, HR, HC, C = (f"{P}{n}" for n in ("hk", "hr", "hc", "c"))

KeySpec = str | Sequence[str]
SIDES = ("old", "new")


@dataclass(frozen=True)
class Stored:
    """The stored hash columns of one side, whether its row hash covers the key columns too, and which of
    the two must be checked row by row (a column that records no definition: nothing says it is the hash diff
    compares, so each row's is computed again and compared, and the first that differs fails the query)."""

    record_key: str
    record_hash: str
    with_key: bool
    verify_key: bool = False
    verify_hash: bool = False


@dataclass(frozen=True)
class Spec:
    """The validated inputs of a diff, every column by its canonical name on both sides."""

    old: DataFrame
    new: DataFrame
    key: tuple[str, ...]
    columns: tuple[str, ...]
    buckets: int
    # Stored hashes per side (old, new); with any, both sides compare record_hash_by_name.
    stored: tuple[Stored | None, Stored | None] = (None, None)
    # The hash algorithm of keys, rows and columns, and the HMAC secret's name (docs/SECURITY.md).
    algorithm: str = "murmur3"
    secret: str | None = None
    # Whether the key columns themselves tell keys apart exactly as their hash does (raw_key_types): then rows
    # are matched on them, and hashed into buckets by them unless a side lends a stored key hash.
    raw_keys: bool = False
    # Whether the session hashes without the jar: then the sides carry their hashes as columns (HK, HR) that
    # the Arrow path computed, and plain SQL stands in for the jar's aggregates.
    arrow: bool = False

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

    @property
    def buckets_by_key(self) -> bool:
        """Whether buckets and digests come from the key columns, so that no key hash is computed for them;
        otherwise from the key hash, which a side with stored hashes lends."""
        return self.raw_keys and not self.by_name

    def side(self, i: int) -> DataFrame:
        return (self.old, self.new)[i]


# Types whose values SQL's equality tells apart exactly as their hash does, when both sides have the same type:
# integers of one width, decimals of one precision and scale, strings of the binary collation, bytes, booleans,
# dates, timestamps and intervals. Floating point (NaN, -0.0), mixed widths, collations and nested types go by
# their hash.
_RAW_KEY_TYPES = (
    BooleanType,
    ByteType,
    ShortType,
    IntegerType,
    LongType,
    DecimalType,
    BinaryType,
    DateType,
    TimestampType,
    TimestampNTZType,
    DayTimeIntervalType,
    YearMonthIntervalType,
)


def raw_key_type(old: DataType, new: DataType) -> bool:
    """Whether key values of these types (old's, new's) can be matched by SQL equality instead of their hash."""
    if type_name(old, widen=False) != type_name(new, widen=False):
        return False
    if isinstance(old, StringType):
        return old.simpleString() == "string" and type(old) is StringType
    return isinstance(old, _RAW_KEY_TYPES)


def type_name(dt: DataType, widen: bool) -> str:
    """The type without nullability; with ``widen``, types whose values hash alike share one name."""
    if isinstance(dt, ArrayType):
        return f"array<{type_name(dt.elementType, widen)}>"
    if isinstance(dt, MapType):
        return f"map<{type_name(dt.keyType, widen)},{type_name(dt.valueType, widen)}>"
    if isinstance(dt, StructType):
        return "struct<" + ",".join(f"{f.name}:{type_name(f.dataType, widen)}" for f in dt.fields) + ">"
    if isinstance(dt, UserDefinedType):
        return type_name(dt.sqlType(), widen)
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


@dataclass
class Side:
    """One input's data columns (its metadata columns left out), matched by name as Spark matches them.

    ``everything`` resolves over every column, metadata included, for the messages about names that are
    metadata columns.
    """

    df: DataFrame
    name: str
    columns: list[str]
    resolver: Resolver
    everything: Resolver

    @property
    def types(self) -> dict[str, DataType]:
        data = set(self.columns)
        return {f.name: of(f.dataType) for f in self.df.schema.fields if f.name in data}


def _missing(name: str, sides: Sequence[Side]) -> str:
    """``'x' (missing in old and new; did you mean 'y'?)``, or why a metadata column is not data."""
    lacking = [s for s in sides if s.resolver.find(name) is None]
    metadata = [s.name for s in lacking if s.everything.find(name) is not None]
    if metadata:
        return f"{name!r} (a metadata column of {' and '.join(metadata)}, not data)"
    hints = {s.resolver.nearest(name) for s in lacking} - {None}
    hint = f"; did you mean {', '.join(map(repr, sorted(hints)))}?" if hints else ""
    return f"{name!r} (missing in {' and '.join(s.name for s in lacking)}{hint})"


def resolve_on_both(sides: Sequence[Side], names: Sequence[str], what: str) -> list[tuple[str, str]]:
    """Each name as (old's spelling, new's spelling); a ValueError listing every name a side lacks."""
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise ValueError(f"diff: {what} must be column names (non-empty strings), got {bad[0]!r}")
    found = [tuple(s.resolver.find(n) for s in sides) for n in names]
    missing = [_missing(n, sides) for n, pair in zip(names, found) if None in pair]
    if missing:
        raise ValueError(f"diff: {what}= must name columns of both old and new: {', '.join(missing)}")
    if len({pair[0] for pair in found}) != len(found):
        raise ValueError(f"diff: {what}= names a column more than once: {list(names)}")
    return [(pair[0], pair[1]) for pair in found]  # type: ignore[misc]


def check_compatible(pairs: Sequence[tuple[str, str]], what: str, sides: Sequence[Side]) -> None:
    """Named columns may change type only within a widening group, where equal values keep their hash."""
    old, new = (s.types for s in sides)
    bad = [
        f"{o!r} ({old[o].simpleString()} -> {new[n].simpleString()})"
        for o, n in pairs
        if type_name(old[o], widen=True) != type_name(new[n], widen=True)
    ]
    if bad:
        raise ValueError(
            f"diff: {what} columns have types whose values never compare equal: {', '.join(bad)}; "
            "cast one side to the other's type first"
        )


def default_columns(key: Sequence[tuple[str, str]], sides: Sequence[Side]) -> list[tuple[str, str]]:
    """Every non-key column, when both sides have the same ones with the same types; otherwise a
    SchemaMismatchError. An implicit choice of columns must not hide a schema change, so every difference
    is reported at once."""
    old, new = sides
    keys = {o for o, _ in key} | {n for _, n in key}
    matched = [(o, new.resolver.find(o)) for o in old.columns if o not in keys]
    only_old = [o for o, n in matched if n is None]
    present_new = {n for _, n in matched if n is not None} | keys
    only_new = [n for n in new.columns if n not in present_new]
    old_types, new_types = old.types, new.types
    changed = [
        f"{o!r} ({old_types[o].simpleString()} -> {new_types[n].simpleString()})"
        for o, n in matched
        if n is not None and type_name(old_types[o], widen=False) != type_name(new_types[n], widen=False)
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
    return [(o, n) for o, n in matched if n is not None]


def projected(df: DataFrame, names: Sequence[tuple[str, str]]) -> DataFrame:
    """``df`` with each (canonical, own spelling) column read under its canonical name, when any differs."""
    if all(c == own for c, own in names):
        return df
    return df.selectExpr(*(quote(own) if c == own else f"{quote(own)} AS {quote(c)}" for c, own in names))
