"""Each column as Spark reads it: the Arrow type the engine is given, or why the engine cannot hash it as Spark.

The engine hashes an Arrow type as the Spark type Spark gives the Parquet column pyarrow writes from it
(``docs/ARROW.md``). Where the data came from Parquet, what pyarrow read can say less than Spark reads, and a
:class:`ColumnPlan` puts that right before any value is hashed:

- a Parquet ``INT96`` timestamp is a ``TIMESTAMP`` (an instant) in Spark; pyarrow reads it without a time zone,
  which alone says ``TIMESTAMP_NTZ``, and in nanoseconds, which wrap outside 1677-2262. It is given to the
  engine as ``timestamp[us, UTC]`` when read in microseconds, and refused in any other unit;
- a naive ``timestamp[ns]`` whose origin is unknown is refused: pandas, Polars and pyarrow make it from wall-clock
  times and from ``INT96`` instants alike, and Spark cannot read the Parquet ``TIMESTAMP(NANOS)`` it is written as;
- ``TIMESTAMP(NANOS)`` columns of a Parquet file are refused, as Spark refuses them;
- ``duration`` is the ``BIGINT`` Spark reads from the ``INT64`` pyarrow and Polars write; the ``arrow.json``
  extension the ``STRING`` Spark reads from the Parquet ``JSON`` type;
- a file's Spark schema (:mod:`hashexpr.arrow.spark_schema`) says ``TIMESTAMP`` or ``TIMESTAMP_NTZ`` where the
  Arrow type cannot, pads ``CHAR(n)`` values as Spark does on read, and refuses the types the engine cannot
  hash as Spark (collated strings, ``VARIANT``, intervals, user-defined types) and any type it contradicts;
- dates and timestamps that Spark rebases from the hybrid Julian calendar (files written by Spark before 3.0/3.1
  or in its ``LEGACY`` mode) are refused when they are old enough for the rebase to change them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from hashexpr.arrow import spark_schema
from hashexpr.arrow.engine import native
from hashexpr.arrow.spark_schema import Footer, SparkType

#: Before these, Spark's rebase from the hybrid calendar changes a value: 1582-10-15 and 1900-01-01T00:00:00Z.
_FIRST_UNCHANGED_DAY = -141427
_FIRST_UNCHANGED_SECOND = -2208988800
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}

# Parquet logical types that Spark refuses or reads as a type the engine cannot hash, whatever pyarrow makes of
# them (FLOAT16 and TIME are refused by their Arrow types, TIMESTAMP(NANOS) below).
_UNREADABLE = {
    "UUID": "cannot read (PARQUET_TYPE_ILLEGAL)",
    "Interval": "cannot read (PARQUET_TYPE_ILLEGAL)",
    "Geometry": "reads as GEOMETRY, which the format rejects",
    "Geography": "reads as GEOGRAPHY, which the format rejects",
    "Variant": "reads as VARIANT, which the format rejects",
}
_NAIVE_NANOS = (
    "it is a timestamp[ns] without a time zone, whose Spark type the data does not say: pandas, Polars and "
    "pyarrow make it from wall-clock times (TIMESTAMP_NTZ) and from Parquet INT96 timestamps (Spark's TIMESTAMP, "
    "an instant) alike, and Spark cannot read the Parquet TIMESTAMP(NANOS) it is written as. For wall-clock times "
    "cast it to microseconds (pandas: .astype('datetime64[us]'); Polars: .cast(pl.Datetime('us')); pyarrow: "
    ".cast(pa.timestamp('us'))); for instants give it a time zone (pandas: .dt.tz_localize('UTC'); pyarrow: "
    "pa.timestamp('ns', 'UTC')); for a Parquet file, pass its path or a pyarrow dataset"
)
_INT96_UNIT = (
    "it is a Parquet INT96 timestamp (Spark's TIMESTAMP) that pyarrow read in {unit}, which {why}; pass the path, "
    "or read it in microseconds as a dataset "
    "(ds.dataset(path, format=ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit='us'))))"
)
_NANOS_FILE = (
    "its Parquet type is TIMESTAMP(NANOS), which Spark cannot read (PARQUET_TYPE_ILLEGAL); write it in "
    "microseconds (pq.write_table(..., coerce_timestamps='us'), df.to_parquet(..., coerce_timestamps='us'))"
)


@dataclass(frozen=True)
class Leaf:
    """What Spark reads differently from pyarrow in a Parquet leaf column: INT96, or a TIMESTAMP/DATE type."""

    int96: bool = False
    timestamp_unit: str | None = None  # "milliseconds", "microseconds" or "nanoseconds"
    adjusted: bool = False
    date: bool = False
    logical: str | None = None  # the Parquet logical type's name


def parquet_leaves(parquet_schema: object, arrow_schema: pa.Schema) -> dict[str, list[Leaf]]:
    """Each top-level column's Parquet leaves (depth first, the order of its Arrow type's leaves), by name."""
    described = []
    for i in range(len(parquet_schema)):
        column = parquet_schema.column(i)
        logical = json.loads(column.logical_type.to_json()) if column.logical_type is not None else {}
        kind = logical.get("Type")
        described.append(
            Leaf(
                int96=column.physical_type == "INT96",
                timestamp_unit=logical.get("timeUnit") if kind == "Timestamp" else None,
                adjusted=bool(logical.get("isAdjustedToUTC")),
                date=kind == "Date",
                logical=kind,
            )
        )
    leaves: dict[str, list[Leaf]] = {}
    position = 0
    for arrow_field in arrow_schema:
        count = leaf_count(arrow_field.type)
        leaves[arrow_field.name] = described[position : position + count]
        position += count
    if position != len(described):
        return {}
    return leaves


def leaf_count(t: pa.DataType) -> int:
    if isinstance(t, pa.BaseExtensionType):
        return leaf_count(t.storage_type)
    if pa.types.is_dictionary(t):
        return leaf_count(t.value_type)
    if pa.types.is_map(t):
        return leaf_count(t.key_type) + leaf_count(t.item_type)
    if pa.types.is_struct(t):
        return sum(leaf_count(t.field(i).type) for i in range(t.num_fields))
    if _is_list(t):
        return leaf_count(t.value_type)
    return 1


@dataclass
class ColumnPlan:
    """How one column is given to the engine: ``target`` (a zero-copy view of the data's type), ``pad`` for
    ``CHAR(n)``, the leaves to check for calendar rebasing, or ``refusal``: why it cannot be hashed."""

    name: str
    source: pa.DataType
    target: pa.DataType
    refusal: str | None = None
    pad: int | None = None
    rebased: tuple[tuple[int, str], ...] = ()  # (leaf index, "date" or "timestamp")
    spark: str | None = None  # the engine's type text, where the data has a footer schema or Parquet types
    rebase_note: str = field(default="", compare=False)


class _Refused(Exception):
    pass


def plan_column(arrow_field: pa.Field, footer: Footer, leaves: list[Leaf] | None, where: str) -> ColumnPlan:
    """Plan one column of ``where`` (a file, or the data): its Arrow field, the footer's Spark schema and the
    file's Parquet leaves for it (``None`` when the data shows none)."""
    name = arrow_field.name
    spark = footer.columns.get(name) if footer.columns else None
    plan = ColumnPlan(name, arrow_field.type, arrow_field.type)
    if spark is None and leaves is None and not _planned(arrow_field.type):
        return plan
    if leaves is not None and len(leaves) != leaf_count(arrow_field.type):
        leaves = None
    try:
        if spark is not None and spark.unknown() is not None:
            raise _Refused(
                f"Spark reads it as {spark.unknown()} (so says the Spark schema of {where}), which the engine "
                "cannot hash as Spark does: hash it with Spark"
            )
        rebased: list[tuple[int, str]] = []
        walk = _Walk(iter(leaves) if leaves is not None else None, footer, rebased)
        plan.target = walk.type(arrow_field.type, spark)
        plan.rebased = tuple(rebased)
        if rebased:
            plan.rebase_note = (
                f"{where} was written by Spark {footer.version} in the hybrid Julian calendar, and Spark rebases "
                "its dates before 1582-10-15 and timestamps before 1900-01-01 as it reads them, which the engine "
                "does not: hash it with Spark"
            )
        if spark is not None or leaves is not None:
            # Compared with the footer's, or between the files of one input.
            plan.spark = engine_type(name, plan.target)
        if spark is not None:
            if spark.char is not None:
                if not _is_string(plan.target):
                    raise _Refused(f"Spark reads it as CHAR({spark.char}), but the data is {plan.target}")
                plan.pad = spark.char
            if plan.spark is not None and plan.spark != spark.text():
                raise _Refused(
                    f"Spark reads it as {spark.text()} (so says the Spark schema of {where}), but the engine would "
                    f"hash its Arrow type {arrow_field.type} as {plan.spark}; if the data is no longer what Spark "
                    "wrote, drop that schema (table.replace_schema_metadata())"
                )
    except _Refused as refused:
        plan.refusal = str(refused)
        plan.target = arrow_field.type
    return plan


def _planned(t: pa.DataType) -> bool:
    """Whether a type holds one that a plan may change or refuse: a timestamp, a duration, an extension type."""
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or isinstance(t, pa.BaseExtensionType):
        return True
    if pa.types.is_dictionary(t):
        return _planned(t.value_type)
    return any(_planned(t.field(i).type) for i in range(t.num_fields))


def engine_type(name: str, t: pa.DataType) -> str | None:
    """The engine's Spark type text of ``t``, ``None`` where it has none."""
    try:
        return native().spark_types(pa.schema([pa.field(name, t)]))[0][1]
    except ValueError:
        return None  # the engine refuses it with its own error, if the column is hashed


class _Walk:
    """The target type of a column, leaf by leaf (depth first), with its Parquet leaves and Spark type."""

    def __init__(self, leaves: Iterator[Leaf] | None, footer: Footer, rebased: list[tuple[int, str]]) -> None:
        self.leaves = leaves
        self.footer = footer
        self.rebased = rebased
        self.position = 0

    def type(self, t: pa.DataType, spark: SparkType | None) -> pa.DataType:
        if isinstance(t, pa.BaseExtensionType):
            if t.extension_name == "arrow.json":
                return self.type(t.storage_type, spark)
            for _ in range(leaf_count(t.storage_type)):
                self._next()
            return t  # the engine refuses it, naming the extension
        if pa.types.is_dictionary(t):
            return pa.dictionary(t.index_type, self.type(t.value_type, spark), t.ordered)
        if _is_list(t):
            child = _child(spark, "array", 0)
            value = t.value_field.with_type(self.type(t.value_type, child))
            if pa.types.is_large_list(t):
                return pa.large_list(value)
            if pa.types.is_fixed_size_list(t):
                return pa.list_(value, t.list_size)
            if pa.types.is_list_view(t):
                return pa.list_view(value)
            if pa.types.is_large_list_view(t):
                return pa.large_list_view(value)
            return pa.list_(value)
        if pa.types.is_map(t):
            key = t.key_field.with_type(self.type(t.key_type, _child(spark, "map", 0)))
            item = t.item_field.with_type(self.type(t.item_type, _child(spark, "map", 1)))
            return pa.map_(key, item, t.keys_sorted)
        if pa.types.is_struct(t):
            fields = []
            for i in range(t.num_fields):
                f = t.field(i)
                child = None
                if (
                    spark is not None
                    and spark.kind == "struct"
                    and i < len(spark.names)
                    and spark.names[i] == f.name
                ):
                    child = spark.children[i]
                fields.append(f.with_type(self.type(f.type, child)))
            return pa.struct(fields)
        return self._atomic(t, spark)

    def _next(self) -> Leaf | None:
        self.position += 1
        return next(self.leaves, None) if self.leaves is not None else None

    def _atomic(self, t: pa.DataType, spark: SparkType | None) -> pa.DataType:
        index = self.position
        leaf = self._next()
        if leaf is not None and leaf.logical in _UNREADABLE:
            raise _Refused(
                f"its Parquet type is {leaf.logical.upper()}, which Spark 4.3 {_UNREADABLE[leaf.logical]}, while "
                f"pyarrow reads it as {t}: hash it with Spark"
            )
        said = spark.name if spark is not None and spark.kind == "atomic" else None
        if pa.types.is_date(t):
            if self._rebases(leaf, said, "date"):
                self.rebased.append((index, "date"))
            return t
        if pa.types.is_duration(t):
            return pa.int64()
        if not pa.types.is_timestamp(t):
            return t
        if leaf is not None and leaf.timestamp_unit == "nanoseconds":
            raise _Refused(_NANOS_FILE)
        # INT96 and INT64 timestamps adjusted to UTC are instants, whatever time zone the Arrow type has.
        instant = (
            (leaf.int96 or (leaf.timestamp_unit is not None and leaf.adjusted))
            if leaf
            else said == "timestamp"
        )
        if self._rebases(leaf, said, "timestamp"):
            self.rebased.append((index, "timestamp"))
        if t.tz is not None:
            return t
        if instant:
            if t.unit != "us" and (leaf is None or leaf.int96):
                why = "wraps dates outside 1677-2262" if t.unit == "ns" else "drops its microseconds"
                raise _Refused(_INT96_UNIT.format(unit={"ns": "nanoseconds"}.get(t.unit, t.unit), why=why))
            return pa.timestamp(t.unit, "UTC")
        if leaf is None and said is None and t.unit == "ns":
            raise _Refused(_NAIVE_NANOS)
        return t

    def _rebases(self, leaf: Leaf | None, said: str | None, kind: str) -> bool:
        footer = self.footer
        if leaf is not None:
            if leaf.int96:
                return footer.rebases_int96
            return footer.rebases_datetime and (
                leaf.date or (leaf.timestamp_unit is not None and leaf.adjusted)
            )
        if kind == "date":
            return footer.rebases_datetime and said == "date"
        return (footer.rebases_datetime or footer.rebases_int96) and said == "timestamp"


def _child(spark: SparkType | None, kind: str, i: int) -> SparkType | None:
    return spark.children[i] if spark is not None and spark.kind == kind else None


def _is_list(t: pa.DataType) -> bool:
    types = pa.types
    return (
        types.is_list(t)
        or types.is_large_list(t)
        or types.is_fixed_size_list(t)
        or types.is_list_view(t)
        or types.is_large_list_view(t)
    )


def _is_string(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return _is_string(t.value_type)
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


# --- applying plans to batches -------------------------------------------------------------------------------


def adapt(
    batch: pa.RecordBatch, plans: Sequence[ColumnPlan], schema: pa.Schema, checked: set[int]
) -> pa.RecordBatch:
    """``batch`` as the engine takes it (``schema``): each planned column viewed as its target type, CHAR values
    padded, and the columns in ``checked`` checked for values Spark's calendar rebase changes."""
    columns = list(batch.columns)
    changed = False
    for i, plan in enumerate(plans):
        column = columns[i]
        if plan.refusal is not None:
            # Never hashed (the engine's functions refuse it first), but the batch must have the schema.
            if column.type != schema.field(i).type:
                try:
                    columns[i] = column.cast(schema.field(i).type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    columns[i] = pa.nulls(len(column), schema.field(i).type)
                changed = True
            continue
        if i in checked and plan.rebased:
            _check_rebase(column, plan)
        if column.type != plan.target:
            column = column.view(plan.target)
        if plan.pad is not None:
            column = _pad(column, plan.pad)
        if column.type != schema.field(i).type:
            column = column.cast(schema.field(i).type)
        if column is not columns[i]:
            columns[i] = column
            changed = True
    return pa.RecordBatch.from_arrays(columns, schema=schema) if changed else batch


def _pad(column: pa.Array, width: int) -> pa.Array:
    """Spark's read-side padding of ``CHAR(width)``: spaces up to ``width`` characters."""
    if pa.types.is_dictionary(column.type):
        return pa.DictionaryArray.from_arrays(column.indices, _pad(column.dictionary, width))
    if pa.types.is_string_view(column.type):
        column = column.cast(pa.string())
    return pc.utf8_rpad(column, width=width, padding=" ")


def _check_rebase(column: pa.Array, plan: ColumnPlan) -> None:
    leaves = list(_leaf_arrays(column))
    for index, kind in plan.rebased:
        leaf = leaves[index]
        if len(leaf) == 0 or leaf.null_count == len(leaf):
            continue
        if kind == "date":
            if pa.types.is_date64(leaf.type):
                leaf = leaf.cast(pa.date32())
            lowest, limit = pc.min(leaf.view(pa.int32())).as_py(), _FIRST_UNCHANGED_DAY
        else:
            lowest = pc.min(leaf.view(pa.int64())).as_py()
            limit = _FIRST_UNCHANGED_SECOND * _PER_SECOND[leaf.type.unit]
        if lowest is not None and lowest < limit:
            raise ValueError(f"column {plan.name!r}: {plan.rebase_note}")


def _leaf_arrays(array: pa.Array) -> Iterator[pa.Array]:
    """The leaf arrays of ``array``, depth first, each the values of ``array``'s slice."""
    t = array.type
    if isinstance(t, pa.BaseExtensionType):
        yield from _leaf_arrays(array.storage)
    elif pa.types.is_dictionary(t):
        yield from _leaf_arrays(array.dictionary)
    elif pa.types.is_map(t):
        entries = array.flatten()
        yield from _leaf_arrays(entries.field(0))
        yield from _leaf_arrays(entries.field(1))
    elif pa.types.is_struct(t):
        for child in array.flatten():
            yield from _leaf_arrays(child)
    elif _is_list(t):
        yield from _leaf_arrays(array.flatten())
    else:
        yield array


# --- the input ---------------------------------------------------------------------------------------------


class Input:
    """Data as the engine takes it: the schema it is given, each column's plan, and its batches.

    ``batches(checked, positions)`` yields the batches in ``schema`` (only the columns at ``positions``, in that
    order, unless ``None``), checking the columns in ``checked`` for values the engine cannot hash as Spark
    reads them; refusals wait until the columns to hash are known (:meth:`open`, :meth:`columns`), so a column
    that is not hashed is never refused.
    """

    def __init__(
        self,
        schema: pa.Schema,
        plans: Sequence[ColumnPlan],
        batches: Callable[[set[int], Sequence[int] | None], Iterator[pa.RecordBatch]],
        rows: int | None,
    ) -> None:
        self.schema = schema
        self.plans = list(plans)
        self._batches = batches
        self.rows = rows

    @classmethod
    def of(
        cls,
        schema: pa.Schema,
        batches: Iterable[pa.RecordBatch] | Callable[[], Iterable[pa.RecordBatch]],
        rows: int | None,
        where: str,
    ) -> Input:
        """Arrow data whose Parquet types (if any) are not visible: planned from its schema and its metadata.
        ``batches`` is read on every read of the input (a list, or a function that reads the data again)."""
        found = spark_schema.footer(schema.metadata)
        plans = [plan_column(f, found, None, where) for f in schema]
        target = engine_schema(schema, plans)

        def adapted(checked: set[int], positions: Sequence[int] | None) -> Iterator[pa.RecordBatch]:
            for batch in batches() if callable(batches) else batches:
                batch = adapt(batch, plans, target, checked)
                yield batch if positions is None else batch.select(list(positions))

        return cls(target, plans, adapted, rows)

    def refuse(self, positions: Sequence[int] | None, function: str, allowed: Collection[int] = ()) -> None:
        """Raise the ValueError of the first column at ``positions`` (every column for ``None``), other than
        those ``allowed``, that the engine cannot hash as Spark reads it, naming ``function``, the column and
        why."""
        for i in range(len(self.plans)) if positions is None else positions:
            if i in allowed:
                continue
            refusal = self.plans[i].refusal
            if refusal is not None:
                raise ValueError(f"{function}: column {self.plans[i].name!r}: {refusal}")

    def open(self, positions: Sequence[int] | None, function: str) -> pa.RecordBatchReader:
        """The batches, once: refusing any column at ``positions`` (every column for ``None``) it cannot hash."""
        self.refuse(positions, function)
        chosen = set(range(len(self.plans)) if positions is None else positions)
        return pa.RecordBatchReader.from_batches(self.schema, _named(self._batches(chosen, None), function))

    def columns(
        self, positions: Sequence[int], function: str, allowed: Collection[int] = ()
    ) -> pa.RecordBatchReader:
        """The columns at ``positions`` alone, in that order, once (a Parquet path reads no other column),
        without the schema's metadata: each column's type then says how it hashes. Refuses as :meth:`open`,
        but for the columns ``allowed``, which come as read (a caller that converts them itself)."""
        self.refuse(positions, function, allowed)
        positions = list(positions)
        schema = pa.schema([self.schema.field(i) for i in positions])
        batches = (
            pa.RecordBatch.from_arrays(b.columns, schema=schema)
            for b in self._batches(set(positions), positions)
        )
        return pa.RecordBatchReader.from_batches(schema, _named(batches, function))

    def unchecked(self) -> pa.RecordBatchReader:
        """The batches, once, refusing nothing: a refused column keeps its Arrow type (the engine's functions
        refuse it when they hash it)."""
        return pa.RecordBatchReader.from_batches(self.schema, self._batches(set(), None))


def _named(batches: Iterator[pa.RecordBatch], function: str) -> Iterator[pa.RecordBatch]:
    try:
        yield from batches
    except ValueError as error:
        if str(error).startswith(f"{function}:"):
            raise
        raise ValueError(f"{function}: {error}") from None


def engine_schema(schema: pa.Schema, plans: Sequence[ColumnPlan]) -> pa.Schema:
    """``schema`` with each planned column's target type (a padded CHAR view is a string)."""
    fields = []
    for f, plan in zip(schema, plans):
        target = plan.target
        if plan.pad is not None and pa.types.is_string_view(target):
            target = pa.string()
        fields.append(f.with_type(target))
    return pa.schema(fields, metadata=schema.metadata)
