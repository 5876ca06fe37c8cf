"""The Spark type each system's catalog type is hashed as: the type the lake holds it as (docs/SQL.md's table).

A column's values hash as the Spark type that Spark gives them when it reads the table (a JDBC read of
PostgreSQL, a Parquet file DuckDB writes); that is the type both sides of a comparison must agree on. A type
without an exact counterpart is a :class:`Refused`, whose message says what to do instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hashexpr.sql.postgres import UnconstrainedNumeric
from hashexpr.types import (
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
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

#: What to do about a type without a counterpart.
CAST_IT = "cast it in a view (to text, or to a type in docs/SQL.md's table)"


class Refused(ValueError):
    """A catalog type that no Spark type reproduces exactly; the message says why and what to do."""


@dataclass(frozen=True)
class SideColumn:
    """A column of one side: its name as the system spells it, its type as the system names it, and the Spark
    type it hashes as (``None`` with the reason when it cannot be hashed exactly)."""

    name: str
    type_text: str
    dtype: DataType | None
    refusal: str | None = None


# --- PostgreSQL ---------------------------------------------------------------------------------------------

_POSTGRES_ATOMIC: dict[str, DataType] = {
    "int2": ShortType(),
    "int4": IntegerType(),
    "int8": LongType(),
    "float4": FloatType(),
    "float8": DoubleType(),
    "text": StringType(),
    "varchar": StringType(),
    "name": StringType(),
    "citext": StringType(),
    "bytea": BinaryType(),
    "bool": BooleanType(),
    "date": DateType(),
    "timestamptz": TimestampType(),
    "timestamp": TimestampNTZType(),
}

#: Types compared as the text PostgreSQL prints for them (docs/RECONCILE.md): a uuid's canonical lower-case
#: form, a json's text as stored, a jsonb's normal form.
_POSTGRES_TEXT = {"uuid", "json", "jsonb"}

_POSTGRES_WHY = {
    "interval": "intervals have no type that every system reads alike",
    "time": "TIME has no Spark type",
    "timetz": "TIME has no Spark type",
    "money": "money's value depends on lc_monetary; cast it to numeric(p,s) in a view",
}


@dataclass(frozen=True)
class PostgresType:
    """A row of ``pg_type``, as the mapping needs it."""

    oid: int
    name: str
    kind: str  # typtype: b base, c composite, d domain, e enum, p pseudo, r range, m multirange
    category: str  # typcategory: A array, ...
    element: int  # typelem
    base: int  # typbasetype (domains)
    base_typmod: int  # typtypmod (domains)
    fields: tuple[tuple[str, int, int], ...]  # a composite's attributes: name, type oid, typmod


def postgres_spark_type(
    type_of: Callable[[int], PostgresType], oid: int, typmod: int, shown: str, nested: bool = False
) -> DataType:
    """The Spark type of a PostgreSQL type (``type_of`` reads ``pg_type``); :class:`Refused` when none fits.

    ``shown`` is the type as ``format_type`` writes it, for messages; ``nested``: the type of an array's
    elements or a composite's field, which :func:`postgres_projection` cannot reach.
    """
    t = type_of(oid)
    if t.kind == "d":
        return postgres_spark_type(type_of, t.base, t.base_typmod, shown, nested)
    if t.kind == "e":
        return StringType()
    if t.category == "A" and t.element:
        return ArrayType(postgres_spark_type(type_of, t.element, typmod, shown, True), True)
    if t.kind == "c":
        return StructType(
            [StructField(n, postgres_spark_type(type_of, o, m, shown, True), True) for n, o, m in t.fields]
        )
    if t.name in _POSTGRES_ATOMIC:
        return _POSTGRES_ATOMIC[t.name]
    if t.name in _POSTGRES_TEXT:
        return StringType()
    if t.name == "bpchar":
        if nested:
            raise Refused(
                "a character(n) inside an array or a composite type loses its padding when it is read; cast "
                "it to text in a view"
            )
        # Spark's CHAR(n): the value padded with blanks to n characters, as the server stores and prints it.
        return StringType()
    if t.name == "numeric":
        # typmod = ((precision << 16) | (scale & 0x7ff)) + 4; -1 when unconstrained.
        if typmod < 4:
            if nested:
                raise Refused(
                    "a numeric without a declared scale inside an array or a composite type has no Spark "
                    "decimal type; declare numeric(p,s) with p <= 38, or cast it in a view"
                )
            # Compared by value: each value's own digits and scale (format v1 normalises the scale).
            return UnconstrainedNumeric()
        precision, scale = (typmod - 4) >> 16, (typmod - 4) & 0x7FF
        if scale >= 0x400:
            scale -= 0x800
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise Refused(f"a Spark decimal has 1 to 38 digits and a scale from 0 to its digits; {CAST_IT}")
        return DecimalType(precision, scale)
    why = _POSTGRES_WHY.get(t.name, f"it has no Spark type whose hash the other systems reproduce; {CAST_IT}")
    raise Refused(why)


def postgres_projection(type_of: Callable[[int], PostgresType], oid: int) -> str | None:
    """How a column of this type is read for hashing (``{}`` stands for the column), where its value is not
    read as it is: a character(n) with its padding, a uuid, json or jsonb as its text."""
    t = type_of(oid)
    while t.kind == "d":
        t = type_of(t.base)
    if t.kind == "c" or (t.category == "A" and t.element):
        return None
    if t.name == "bpchar":
        # A cast to text drops the padding; the type's output function, which concat calls, keeps it. concat
        # gives '' for NULL, which is kept NULL.
        return "(CASE WHEN {0} IS NULL THEN NULL ELSE concat({0}) END)"
    if t.name in _POSTGRES_TEXT:
        return "CAST({0} AS text)"
    return None


# --- DuckDB -------------------------------------------------------------------------------------------------

_DUCKDB_ATOMIC: dict[str, DataType] = {
    # A column of NULLs alone (CREATE TABLE AS over an all-NULL column): NULLs of any type.
    "null": NullType(),
    "tinyint": ByteType(),
    "smallint": ShortType(),
    "integer": IntegerType(),
    "bigint": LongType(),
    # Spark reads unsigned Parquet integers as the next wider signed type, and UBIGINT as decimal(20,0).
    "utinyint": ShortType(),
    "usmallint": IntegerType(),
    "uinteger": LongType(),
    "ubigint": DecimalType(20, 0),
    "float": FloatType(),
    "double": DoubleType(),
    "varchar": StringType(),
    "blob": BinaryType(),
    "boolean": BooleanType(),
    "date": DateType(),
    "timestamp": TimestampNTZType(),
    "timestamp_s": TimestampNTZType(),
    "timestamp_ms": TimestampNTZType(),
    "timestamp with time zone": TimestampType(),
    "enum": StringType(),
    # Compared by its canonical lower-case text, as PostgreSQL's uuid (docs/RECONCILE.md).
    "uuid": StringType(),
}

_DUCKDB_WHY = {
    "hugeint": "a HUGEINT has up to 39 digits, which no Spark type holds; cast it to DECIMAL(38,0) in a view",
    "uhugeint": "a UHUGEINT has up to 39 digits, which no Spark type holds; cast it to DECIMAL(38,0) in a view",
    "timestamp_ns": "Spark keeps microseconds; cast it to TIMESTAMP in a view where the nanoseconds are zero",
    "interval": "intervals have no type that every system reads alike",
    "time": "TIME has no Spark type",
    "time with time zone": "TIME has no Spark type",
    "union": "Spark has no union type",
    "bit": "Spark has no BIT type; cast it to VARCHAR or BLOB in a view",
}


def duckdb_spark_type(t: Any) -> DataType:
    """The Spark type of a DuckDB type (a ``duckdb.DuckDBPyType``); :class:`Refused` when none fits."""
    kind = t.id
    if kind == "decimal":
        children = dict(t.children)
        return DecimalType(int(children["precision"]), int(children["scale"]))
    if kind in ("list", "array"):
        return ArrayType(duckdb_spark_type(dict(t.children)["child"]), True)
    if kind == "struct":
        return StructType([StructField(n, duckdb_spark_type(c), True) for n, c in t.children])
    if kind == "map":
        children = dict(t.children)
        return MapType(duckdb_spark_type(children["key"]), duckdb_spark_type(children["value"]), True)
    if kind in _DUCKDB_ATOMIC:
        return _DUCKDB_ATOMIC[kind]
    # JSON is a VARCHAR with an alias (its id is varchar): its text is compared as stored.
    raise Refused(
        _DUCKDB_WHY.get(kind, f"it has no Spark type whose hash the other systems reproduce; {CAST_IT}")
    )
