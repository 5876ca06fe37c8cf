"""Which columns a comparison keys on and compares: names matched as Spark matches them, types checked to hash alike.

A :class:`Plan` pairs each key column and compared column of the source with the target's column of the same
name (exactly, or else the one name equal ignoring case). Two columns are compared when their Spark types hash
alike (format v1: integers of any width, FLOAT and DOUBLE, decimals of any precision and scale, and arrays,
maps and structs of such); any other pair never compares equal and is refused, as a type no system can
reproduce is. ``Plan.schema`` says how each column was compared, or why it was left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

from hashexpr.names import Resolver, preview
from hashexpr.reconcile.catalog import SideColumn
from hashexpr.sql.types import type_name

#: The two sides, as results and messages name them.
SIDES = ("source", "target")


def hash_kind(dtype: DataType) -> Any:
    """What a type's values hash as (format v1, section 4): two columns compare when their kinds are equal."""
    if isinstance(dtype, (ByteType, ShortType, IntegerType, LongType)):
        return "integral"
    if isinstance(dtype, (FloatType, DoubleType)):
        return "floating"
    if isinstance(dtype, DecimalType):
        return "decimal"
    if isinstance(dtype, (StringType, VarcharType)):
        collation = getattr(dtype, "collation", "UTF8_BINARY")
        return "string" if collation == "UTF8_BINARY" else ("string", collation)
    if isinstance(dtype, ArrayType):
        return ("array", hash_kind(dtype.elementType))
    if isinstance(dtype, MapType):
        return ("map", hash_kind(dtype.keyType), hash_kind(dtype.valueType))
    if isinstance(dtype, StructType):
        # Field names do not count (format v1, section 4.7): struct<a:int> and struct<b:int> hash alike.
        return ("struct", tuple(hash_kind(f.dataType) for f in dtype.fields))
    for atomic, kind in (
        (BinaryType, "binary"),
        (BooleanType, "boolean"),
        (DateType, "date"),
        (TimestampType, "timestamp"),
        (TimestampNTZType, "timestamp_ntz"),
        (NullType, "null"),
    ):
        if isinstance(dtype, atomic):
            return kind
    return ("other", type_name(dtype))


def hash_alike(a: DataType, b: DataType) -> bool:
    """Whether values of ``a`` and of ``b`` hash alike when equal. A column of NULLs alone (VOID) hashes as NULLs
    of any type."""
    if isinstance(a, NullType) or isinstance(b, NullType):
        return True
    return hash_kind(a) == hash_kind(b)


@dataclass(frozen=True)
class Pair:
    """A column on both sides: ``name`` is the source's spelling (the output's)."""

    name: str
    source: SideColumn
    target: SideColumn


@dataclass(frozen=True)
class ColumnReport:
    """How one column was compared: ``role`` is ``key``, ``compared`` or ``left out`` (then ``reason`` says why)."""

    name: str
    role: str
    source_type: str | None
    target_type: str | None
    source_spark_type: str | None
    target_spark_type: str | None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class SidePlan:
    """What one side hashes: its own column names with the Spark types they hash as."""

    key: tuple[tuple[str, DataType], ...]
    compared: tuple[tuple[str, DataType], ...]

    @property
    def hashed(self) -> tuple[tuple[str, DataType], ...]:
        """The row hash's columns: the key's, then the compared ones (two rows under one key with swapped values
        differ)."""
        return self.key + self.compared


@dataclass(frozen=True)
class Plan:
    key: tuple[Pair, ...]
    compared: tuple[Pair, ...]
    schema: tuple[ColumnReport, ...]

    def side(self, which: str) -> SidePlan:
        def of(pairs: Sequence[Pair]) -> tuple[tuple[str, DataType], ...]:
            return tuple((getattr(p, which).name, getattr(p, which).dtype) for p in pairs)

        return SidePlan(of(self.key), of(self.compared))


def plan(
    source: Sequence[SideColumn],
    target: Sequence[SideColumn],
    key: Sequence[str],
    columns: Sequence[str] | None,
    labels: tuple[str, str],
) -> Plan:
    """Pair the key columns and the compared columns of both sides; a :class:`ValueError` for anything that
    cannot be compared exactly, naming every such column at once."""
    if isinstance(key, str):
        key = [key]
    if not key:
        raise ValueError("compare: key= names no column; give the key column(s), e.g. key=['id']")
    if columns is not None and isinstance(columns, str):
        columns = [columns]
    sides = {"source": list(source), "target": list(target)}
    resolvers = {s: Resolver([c.name for c in cols], lambda: False) for s, cols in sides.items()}
    by_name = {s: {c.name: c for c in cols} for s, cols in sides.items()}
    label = dict(zip(SIDES, labels))

    def find(name: str, side: str, what: str) -> SideColumn | None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"compare: {what} names must be non-empty strings, got {name!r}")
        found = resolvers[side].matches(name)
        if len(found) > 1:
            raise ValueError(
                f"compare: {what} {name!r} matches several columns of the {side}, {found}: rename them"
            )
        return by_name[side][found[0]] if found else None

    def require(name: str, what: str) -> Pair:
        found = {side: find(name, side, what) for side in SIDES}
        missing = [side for side in SIDES if found[side] is None]
        if missing:
            details = "; ".join(
                f"the {side} ({label[side]}) has no column {name!r}{resolvers[side].hint(name)}, its columns are "
                f"{preview(resolvers[side].columns)}"
                for side in missing
            )
            raise ValueError(f"compare: {what} {name!r} is not a column of both sides: {details}")
        return Pair(found["source"].name, found["source"], found["target"])

    keys = [require(name, "key column") for name in key]
    if len({k.name for k in keys}) != len(keys):
        raise ValueError(f"compare: key= names a column twice: {list(key)}")
    key_names = {k.source.name for k in keys}
    left_out: list[ColumnReport] = []
    if columns is not None:
        compared = [require(name, "compared column") for name in columns]
        compared = [p for p in compared if p.source.name not in key_names]
        chosen = {p.source.name for p in compared} | key_names
        chosen_target = {p.target.name for p in compared} | {k.target.name for k in keys}
        for c in sides["source"]:
            if c.name not in chosen:
                other = find(c.name, "target", "column")
                other = None if other is None or other.name in chosen_target else other
                if other is not None:
                    chosen_target.add(other.name)
                left_out.append(_report(c.name, "left out", c, other, "not among columns="))
        for c in sides["target"]:
            if c.name not in chosen_target:
                left_out.append(_report(c.name, "left out", None, c, "not among columns="))
    else:
        compared = []
        matched_target = {k.target.name for k in keys}
        for c in sides["source"]:
            if c.name in key_names:
                continue
            other = find(c.name, "target", "column")
            if other is None or other.name in matched_target:
                left_out.append(_report(c.name, "left out", c, None, "only in the source"))
                continue
            matched_target.add(other.name)
            compared.append(Pair(c.name, c, other))
        for c in sides["target"]:
            if c.name not in matched_target:
                left_out.append(_report(c.name, "left out", None, c, "only in the target"))
    if len({p.source.name for p in compared}) != len(compared):
        raise ValueError(f"compare: columns= names a column twice: {list(columns or [])}")
    _check(keys, compared, label)
    schema = [_report(p.name, "key", p.source, p.target) for p in keys]
    schema += [_report(p.name, "compared", p.source, p.target) for p in compared]
    return Plan(tuple(keys), tuple(compared), tuple(schema + left_out))


def _check(keys: list[Pair], compared: list[Pair], label: dict[str, str]) -> None:
    problems = []
    for role, pairs in (("key column", keys), ("column", compared)):
        for p in pairs:
            for side in SIDES:
                c = getattr(p, side)
                if c.dtype is None:
                    problems.append(
                        f"{role} {p.name!r} of the {side} ({label[side]}) has type {c.type_text}, which cannot be "
                        f"hashed exactly: {c.refusal}"
                    )
            if (
                p.source.dtype is not None
                and p.target.dtype is not None
                and not hash_alike(p.source.dtype, p.target.dtype)
            ):
                problems.append(
                    f"{role} {p.name!r} is {p.source.type_text} ({type_name(p.source.dtype)}) in the source and "
                    f"{p.target.type_text} ({type_name(p.target.dtype)}) in the target, whose values never compare "
                    "equal: cast one side in a view"
                )
    if problems:
        fix = "" if not any(p.startswith("column") for p in problems) else " (columns= leaves a column out)"
        raise ValueError("compare: " + "; ".join(problems) + fix)


def _report(
    name: str, role: str, source: SideColumn | None, target: SideColumn | None, reason: str | None = None
) -> ColumnReport:
    def spark(c: SideColumn | None) -> str | None:
        return None if c is None or c.dtype is None else type_name(c.dtype)

    return ColumnReport(
        name,
        role,
        None if source is None else source.type_text,
        None if target is None else target.type_text,
        spark(source),
        spark(target),
        reason,
    )
