"""A diff of Arrow data checked as ``hx.diff`` checks its DataFrames, with its messages: the key and compared
columns on both sides (names matched as Spark matches them, ignoring case), the schemas' differences, the types
that widen alike; and the type of each key column in the result, as Spark widens it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hashexpr.arrow.arrow_types import arrow_type
from hashexpr.arrow.options import hashing
from hashexpr.definitions import DEFAULT_NAMES
from hashexpr.diff_spec import (
    OUTPUT_COLUMNS,
    P,
    Side,
    check_compatible,
    default_columns,
    resolve_on_both,
    type_name,
)
from hashexpr.names import Resolver
from hashexpr.reference.arrow import spark_type_of_arrow
from hashexpr.types import (
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
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)


class Unsupported(ValueError):
    """A diff whose rows :func:`~hashexpr.arrow.diff.diff` cannot give exactly as ``hx.diff`` gives them in
    Spark: the reason."""


@dataclass(frozen=True)
class Spec:
    """A checked diff: (old's name, new's name) of each key and compared column, and each side's Arrow types."""

    key: tuple[tuple[str, str], ...]
    columns: tuple[tuple[str, str], ...]
    types: tuple[dict[str, pa.DataType], dict[str, pa.DataType]]
    spark_types: tuple[dict[str, DataType], dict[str, DataType]]
    algorithm: str
    hmac_key: bytes | None

    def names(self, i: int) -> list[str]:
        """Side ``i``'s key and compared columns, as it spells them."""
        return [pair[i] for pair in self.key + self.columns]


class _Frame:
    """A schema as ``hashexpr.diff_spec`` reads a DataFrame's: its columns and their Spark types."""

    def __init__(self, schema: StructType) -> None:
        self.schema = schema
        self.columns = schema.names


def _side(schema: pa.Schema, name: str) -> Side:
    fields = []
    for field in schema:
        try:
            fields.append(StructField(field.name, spark_type_of_arrow(field.type)))
        except ValueError as error:
            raise ValueError(f"diff: column {field.name!r} of {name}: {error}") from None
    frame = _Frame(StructType(fields))
    everything = Resolver(frame.columns, lambda: False)
    # with_metadata's columns are not data (hx.diff leaves them out of the comparison too).
    metadata = {n.lower() for n in DEFAULT_NAMES.values()}
    data = [c for c in frame.columns if c.lower() not in metadata]
    return Side(frame, name, data, Resolver(data, lambda: False), everything)  # type: ignore[arg-type]


def checked(
    schemas: tuple[pa.Schema, pa.Schema],
    key: str | Sequence[str],
    columns: Sequence[str] | None,
    algorithm: Any,
    hmac_key: Any,
) -> Spec:
    """The diff's arguments checked as ``hx.diff`` checks them, with its messages."""
    algorithm, key_bytes = hashing(algorithm, hmac_key, "diff")
    keys = [key] if isinstance(key, str) else list(key)
    if not keys:
        raise ValueError("diff needs at least one key column")
    sides = [_side(schema, name) for schema, name in zip(schemas, ("old", "new"))]
    key_pairs = resolve_on_both(sides, keys, "key")
    clash = [o for o, _ in key_pairs if o.lower() in OUTPUT_COLUMNS or o.lower().startswith(P)]
    if clash:
        raise ValueError(
            f"diff: key columns may not be named {clash}: diff's output has columns {list(OUTPUT_COLUMNS)}"
        )
    check_compatible(key_pairs, "key", sides)
    if columns is None:
        column_pairs = default_columns(key_pairs, sides)
    else:
        column_pairs = resolve_on_both(
            sides, [columns] if isinstance(columns, str) else list(columns), "columns"
        )
        overlap = [o for o, _ in column_pairs if o in {k for k, _ in key_pairs}]
        if overlap:
            raise ValueError(f"diff: columns may not include key columns: {overlap}")
        check_compatible(column_pairs, "compared", sides)
    return Spec(
        tuple(key_pairs),
        tuple(column_pairs),
        tuple({f.name: f.type for f in schema} for schema in schemas),  # type: ignore[arg-type]
        tuple(s.types for s in sides),  # type: ignore[arg-type]
        algorithm,
        key_bytes,
    )


# The atomic key types whose widening to themselves is certain (besides decimals).
_ATOMIC = (
    BooleanType,
    ByteType,
    ShortType,
    IntegerType,
    LongType,
    FloatType,
    DoubleType,
    StringType,
    BinaryType,
    DateType,
    TimestampType,
    TimestampNTZType,
)
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
_MAX_PRECISION = 38


def key_type(spec: Spec, pair: tuple[str, str]) -> pa.DataType:
    """The Arrow type of a key column in the result: the sides' type, or the type Spark widens both to."""
    arrow = [spec.types[i][pair[i]] for i in (0, 1)]
    if arrow[0].equals(arrow[1]):
        return arrow[0]
    old, new = (spec.spark_types[i][pair[i]] for i in (0, 1))
    widened = _wider(old, new)
    if widened is None:
        raise Unsupported(
            f"key column {pair[0]!r} has the type {arrow[0]} in old and {arrow[1]} in new, which Spark widens "
            "by rules this engine does not reproduce"
        )
    return arrow_type(widened)


def _wider(old: DataType, new: DataType) -> DataType | None:
    """The type Spark gives a CASE over values of these two atomic types, where it is certain."""
    if type_name(old, widen=False) == type_name(new, widen=False):
        return old if type(old) in _ATOMIC or isinstance(old, DecimalType) else None
    if isinstance(old, _INTEGRAL) and isinstance(new, _INTEGRAL):
        return max(old, new, key=lambda t: _INTEGRAL.index(type(t)))
    if isinstance(old, (FloatType, DoubleType)) and isinstance(new, (FloatType, DoubleType)):
        return DoubleType()
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        scale = max(old.scale, new.scale)
        digits = max(old.precision - old.scale, new.precision - new.scale)
        # Beyond 38 digits Spark bounds the type and values may not fit it.
        return DecimalType(digits + scale, scale) if digits + scale <= _MAX_PRECISION else None
    return None
