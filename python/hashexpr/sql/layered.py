"""The PostgreSQL dialect's keys and row hashes for a query of one's own: the same bytes, in less time.

PostgreSQL computes a repeated subexpression each time it appears, so :func:`hashexpr.sql.record_hash` reads a
value that its encoding needs several times (a decimal's digits, a timestamp's epoch microseconds) once, in a
scalar subquery per row. A query built around the hash can do better: :func:`postgres_record_hash` and
:func:`postgres_record_key` return the expression with its intermediate values as *bindings*, columns that
:func:`layered_query` computes once per row in levels of subqueries (``OFFSET 0`` keeps PostgreSQL from
inlining them), so the final expression reads each of them as a plain column. The bytes are
:func:`~hashexpr.sql.record_hash`'s, value by value (tests/test_reconcile_sql.py replays the golden vectors);
a million rows of ten mixed columns hash in about half the time. Values inside arrays and structs keep the
dialect's form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hashexpr.options import KeyOptions
from hashexpr.sql import write_record_hash, write_record_key
from hashexpr.sql.columns import ColumnSpec
from hashexpr.sql.dialect import DATE, NARROW_DECIMAL_DIGITS, TIMESTAMP, TIMESTAMP_NTZ, Encoder
from hashexpr.sql.postgres import Postgres, UnconstrainedNumeric
from hashexpr.types import (
    BinaryType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

__all__ = ["Layered", "layered_query", "postgres_record_hash", "postgres_record_key"]


@dataclass(frozen=True)
class Layered:
    """An expression over the columns of a query and ``levels`` of bindings: each level's ``(name, SQL)`` pairs
    read the query's columns and the names of the levels before it."""

    levels: tuple[tuple[tuple[str, str], ...], ...]
    expression: str


class _Binder:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.levels: list[list[tuple[str, str]]] = []

    def bind(self, sql: str, level: int) -> str:
        while len(self.levels) <= level:
            self.levels.append([])
        name = f"{self.prefix}{sum(len(level) for level in self.levels)}"
        self.levels[level].append((name, sql))
        return name


class _LayeredPostgres(Postgres):
    """The PostgreSQL dialect, whose top-level values bind what their encodings read more than once."""

    def __init__(self, binder: _Binder, infinite: bool) -> None:
        self.binder = binder
        self.infinite = infinite

    def encoder(self, dtype: DataType, where: str, depth: int) -> Encoder:
        if depth != 1 or isinstance(dtype, UnconstrainedNumeric):
            return super().encoder(dtype, where, depth)
        bind = self.binder.bind
        if isinstance(dtype, (ByteType, ShortType, IntegerType, LongType)):
            # A column read eight times costs less than a level of the query: only a cast is bound.
            if isinstance(dtype, LongType):
                return Encoder(self.integral)
            return Encoder(lambda v: self.integral(bind(f"CAST(({v}) AS bigint)", 0)))
        if isinstance(dtype, (FloatType, DoubleType)):
            single = isinstance(dtype, FloatType)

            def floating(v: str) -> str:
                # Both read the value itself: one level.
                number = bind(self.double(v, single), 0)
                return self.floating_bits(number, bind(f"float8send({self.double(v, single)})", 0))

            return Encoder(floating)
        if isinstance(dtype, DecimalType):
            p, s = dtype.precision, dtype.scale
            wide = p > NARROW_DECIMAL_DIGITS

            def decimal(v: str) -> str:
                number = self.numeric(v, p, s)
                # A NaN has no digits: the encoding's own test of it then fails the query with its message.
                digits = bind(
                    f"CASE WHEN {number} = CAST('NaN' AS numeric) THEN NULL ELSE {self.decimal_digits(number)} END",
                    0,
                )
                stripped = bind(self.decimal_stripped(digits), 1)
                unscaled_sql, scale_sql = self.decimal_unscaled(digits, stripped, s, wide)
                unscaled, scale = bind(unscaled_sql, 2), bind(scale_sql, 2)
                low = bind(self.decimal_low(unscaled), 3) if wide else None
                # The value itself for the tests of zero and NaN: a column's own type casts to itself for free.
                return self.decimal_encoding(number, unscaled, scale, wide, low)

            return Encoder(decimal)
        if (
            isinstance(dtype, (StringType, VarcharType))
            and getattr(dtype, "collation", "UTF8_BINARY") == "UTF8_BINARY"
        ):
            return Encoder(lambda v: self.string_bytes(bind(self.utf8(self.text(v)), 0)))
        if isinstance(dtype, BinaryType):
            return Encoder(lambda v: self.binary_bytes(bind(self.bytea(v), 0)))
        if isinstance(dtype, DateType):
            return Encoder(lambda v: self.tagged(DATE, self.le32(bind(self.days(v), 0))))
        if isinstance(dtype, (TimestampType, TimestampNTZType)):
            instant = isinstance(dtype, TimestampType)
            tag = TIMESTAMP if instant else TIMESTAMP_NTZ
            return Encoder(lambda v: self.tagged(tag, self.le64(bind(self.micros(v, instant), 0))))
        return super().encoder(dtype, where, depth)


def _layered(binder: _Binder, expression: str) -> Layered:
    return Layered(tuple(tuple(level) for level in binder.levels), expression)


def postgres_record_hash(
    columns: Sequence[tuple[ColumnSpec, str | DataType]], prefix: str = "hx_b", infinite: bool = False
) -> Layered:
    """:func:`hashexpr.sql.record_hash` for PostgreSQL, its intermediate values as bindings named
    ``<prefix>0``, ``<prefix>1``, ...; with ``infinite``, ``infinity`` dates and timestamps hash as DuckDB holds
    them (:attr:`hashexpr.sql.postgres.Postgres.infinite`).

    Examples
    --------
    >>> from hashexpr.sql.layered import layered_query, postgres_record_hash
    >>> h = postgres_record_hash([("ts", "timestamp"), ("amount", "decimal(12,2)")])
    >>> len(h.levels), h.levels[0][0]
    (3, ('hx_b0', 'CAST(EXTRACT(EPOCH FROM CAST(("ts") AS timestamp with time zone)) * 1000000 AS bigint)'))
    >>> layered_query(h, "SELECT * FROM orders", ["id"], "row_hash").startswith("SELECT id, sha256(")
    True
    """
    binder = _Binder(prefix)
    return _layered(binder, write_record_hash(_LayeredPostgres(binder, infinite), columns))


def postgres_record_key(
    columns: Sequence[tuple[ColumnSpec, str | DataType]],
    options: KeyOptions | None = None,
    prefix: str = "hx_b",
    infinite: bool = False,
) -> Layered:
    """:func:`hashexpr.sql.record_key` for PostgreSQL (with ``options``), as :func:`postgres_record_hash`."""
    binder = _Binder(prefix)
    return _layered(binder, write_record_key(_LayeredPostgres(binder, infinite), columns, options or KeyOptions()))


def layered_query(layered: Layered, rows: str, keep: Sequence[str], name: str) -> str:
    """A query over the query ``rows`` that returns its columns ``keep`` (SQL expressions over them, e.g.
    quoted names) and the expression as ``name``, each binding computed once per row."""
    source = rows
    for level in layered.levels:
        bound = ", ".join(f"{sql} AS {binding}" for binding, sql in level)
        source = f"SELECT *, {bound} FROM ({source}) AS hx_l OFFSET 0"
    selected = [*keep, f"{layered.expression} AS {name}"]
    return f"SELECT {', '.join(selected)} FROM ({source}) AS hx_l"
