"""What every dialect writes: the encoding of format v1 (docs/FORMAT.md, sections 3, 4, 9, 10) as SQL.

A :class:`Dialect` knows how its engine spells a few primitives (a bytes literal, concatenation, SHA-256,
the little-endian bytes of an integer, a failure) and the encoding of each type. :meth:`Dialect.value`
walks a Spark type and returns SQL that is the value's encoding (its tag and payload), never NULL: a NULL
value is the byte ``00``. Each type's encoder returns SQL that is NULL exactly when the value is NULL, so that
one ``COALESCE`` per value writes the NULL tag, and the value expression appears in it as given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hashexpr.sql.types import type_name
from hashexpr.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CharType,
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

# Tags, docs/FORMAT.md section 4.
NULL, BOOLEAN, INTEGRAL, FLOATING, DECIMAL, STRING, BINARY = 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
DATE, TIMESTAMP, TIMESTAMP_NTZ, ARRAY, MAP, STRUCT = 0x07, 0x08, 0x09, 0x10, 0x11, 0x12

#: The canonical NaN, 0x7FF8000000000000, and +infinity, as signed 64-bit integers.
CANONICAL_NAN = 0x7FF8000000000000
POSITIVE_INFINITY = 0x7FF0000000000000

#: Decimals of up to 18 digits have an unscaled value that fits a signed 64-bit integer.
NARROW_DECIMAL_DIGITS = 18

LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()

_INTEGRAL_TYPES = (ByteType, ShortType, IntegerType, LongType)
_STRING_TYPES = (StringType, VarcharType)


def _has_map(dtype: DataType) -> bool:
    """Whether a map is in ``dtype``, at any depth."""
    if isinstance(dtype, MapType):
        return True
    if isinstance(dtype, ArrayType):
        return _has_map(dtype.elementType)
    if isinstance(dtype, StructType):
        return any(_has_map(f.dataType) for f in dtype.fields)
    return False


class Unsupported(ValueError):
    """A type (or option) that a dialect cannot reproduce exactly; raised while the SQL is written."""


@dataclass(frozen=True)
class Encoder:
    """How a dialect encodes one type: ``encode(value_sql)`` is the encoding, NULL when the value is NULL."""

    encode: Callable[[str], str]


class Dialect:
    """An engine's SQL for the byte stream of format v1 and its SHA-256 (format section 10)."""

    #: The name the writers take (``dialect=``).
    name = ""
    #: The engine's name, for messages.
    engine = ""

    # --- primitives ------------------------------------------------------------------------------------

    def literal(self, data: bytes) -> str:
        """A constant of the engine's bytes type."""
        raise NotImplementedError

    def concat(self, parts: list[str]) -> str:
        """Bytes expressions joined; NULL when one of them is NULL."""
        raise NotImplementedError

    def sha256(self, stream: str) -> str:
        """The 32-byte SHA-256 of a bytes expression, as the engine's bytes type."""
        raise NotImplementedError

    def digest(self, parts: list[str], witness: str) -> str:
        """The SHA-256 of a record's parts, one after another; ``witness`` is an expression of the row (its first
        column), for a dialect whose joined parts may fail."""
        return self.sha256(self.concat(parts))

    def le64(self, value: str) -> str:
        """The 8 bytes, little-endian, of a 64-bit two's complement integer expression (its low 64 bits)."""
        raise NotImplementedError

    def le32(self, value: str) -> str:
        """The 4 bytes, little-endian, of an integer expression in [-2^31, 2^32)."""
        raise NotImplementedError

    def quote(self, name: str) -> str:
        """A column name as a quoted identifier."""
        return '"' + name.replace('"', '""') + '"'

    def string_literal(self, text: str) -> str:
        """A constant string; the engine reads no escapes in it."""
        return "'" + text.replace("'", "''") + "'"

    def fail(self, message: str, witness: str) -> str:
        """An expression that fails the query with ``message`` when it is evaluated (``witness`` is SQL of
        the value at fault, which keeps an engine from evaluating the failure while planning)."""
        raise NotImplementedError

    def is_null(self, value: str, dtype: DataType) -> str:
        """Whether the value is NULL (a struct of NULL fields is not)."""
        return f"(({value}) IS NULL)"

    def coalesce(self, encoding: str) -> str:
        return f"COALESCE({encoding}, {self.literal(bytes([NULL]))})"

    # --- the writers -----------------------------------------------------------------------------------

    def value(self, value: str, dtype: DataType, where: str) -> str:
        """The encoding of ``value`` of Spark type ``dtype``: tag and payload, or ``00`` for NULL."""
        if isinstance(dtype, NullType):
            return self.literal(bytes([NULL]))
        encoding = self.coalesce(self.encoder(dtype, where, 1).encode(value))
        # A VARCHAR's values are strings, hashed as strings: it is declared as one.
        declared = "string" if isinstance(dtype, VarcharType) else type_name(dtype)
        return self.declared(value, declared, not _has_map(dtype), where, encoding)

    def declared(self, value: str, type_text: str, comparable: bool, where: str, encoding: str) -> str:
        """``encoding`` of a value that must be of type ``type_text`` (a value its engine's cast cannot lose, or
        one the encoding checks); ``comparable`` says whether such values can be compared."""
        return encoding

    def encoder(self, dtype: DataType, where: str, depth: int) -> Encoder:
        """The encoder of ``dtype``; ``where`` names the column, ``depth`` the nesting (for lambda names)."""
        if isinstance(dtype, _INTEGRAL_TYPES):
            return Encoder(self.integral)
        if isinstance(dtype, (FloatType, DoubleType)):
            single = isinstance(dtype, FloatType)
            return Encoder(lambda v: self.floating(v, single))
        if isinstance(dtype, DecimalType):
            p, s = dtype.precision, dtype.scale
            return Encoder(lambda v: self.decimal(v, p, s, p > NARROW_DECIMAL_DIGITS))
        if isinstance(dtype, _STRING_TYPES):
            if getattr(dtype, "collation", "UTF8_BINARY") != "UTF8_BINARY":
                raise self.unsupported(
                    where,
                    dtype,
                    f"strings of collation {dtype.collation} hash by Spark's collation key; "
                    "declare them string (UTF8_BINARY)",
                )
            return Encoder(lambda v: self.string(self.text(v)))
        if isinstance(dtype, BinaryType):
            return Encoder(self.binary)
        if isinstance(dtype, BooleanType):
            return Encoder(self.boolean)
        if isinstance(dtype, DateType):
            return Encoder(lambda v: self.date(v, where))
        if isinstance(dtype, TimestampType):
            return Encoder(lambda v: self.timestamp(v, where))
        if isinstance(dtype, TimestampNTZType):
            return Encoder(lambda v: self.timestamp_ntz(v, where))
        if isinstance(dtype, NullType):
            return Encoder(lambda v: f"CASE WHEN ({v}) IS NOT NULL THEN {self.literal(bytes([NULL]))} END")
        if isinstance(dtype, ArrayType):
            self.check_array(dtype, where)
            element = self.encoder(dtype.elementType, where, depth + 1)
            return Encoder(lambda v: self.array(v, element, depth))
        if isinstance(dtype, StructType):
            self.check_struct(dtype, where)
            fields = [(f.name, f.dataType, self.encoder(f.dataType, where, depth + 1)) for f in dtype.fields]
            return Encoder(lambda v: self.struct(v, fields, depth))
        if isinstance(dtype, MapType):
            self.check_map(dtype, where)
            key = self.encoder(dtype.keyType, where, depth + 1)
            item = self.encoder(dtype.valueType, where, depth + 1)
            return Encoder(lambda v: self.map(v, key, item, depth))
        if isinstance(dtype, CharType):
            raise self.unsupported(
                where,
                dtype,
                "Spark hashes CHAR(n) padded to n characters, and engines differ in how they "
                "pad or strip it: declare string and pass rpad(column, n) where the lake pads",
            )
        raise self.unsupported(
            where, dtype, "the SQL writers cover format v1's atomic, array, struct and map types"
        )

    def unsupported(self, where: str, dtype: DataType, reason: str) -> Unsupported:
        return Unsupported(f"{where}: type {type_name(dtype)} cannot be hashed in {self.name} SQL: {reason}")

    def element(self, encoder: Encoder, value: str) -> str:
        """An element's encoding inside an array, struct or map (NULL as ``00``)."""
        return self.coalesce(encoder.encode(value))

    def check_array(self, dtype: ArrayType, where: str) -> None:
        """Refuse arrays the engine cannot hold."""

    def check_struct(self, dtype: StructType, where: str) -> None:
        """Refuse structs the engine cannot hold."""

    def check_map(self, dtype: MapType, where: str) -> None:
        """Refuse maps the engine cannot hold."""
        raise self.unsupported(where, dtype, f"{self.engine} has no map type")

    # --- the types ---------------------------------------------------------------------------------------

    def tagged(self, tag: int, *payload: str) -> str:
        return self.concat([self.literal(bytes([tag])), *payload])

    def text(self, value: str) -> str:
        """The value as the engine's string type."""
        raise NotImplementedError

    def integral(self, value: str) -> str:
        raise NotImplementedError

    def floating(self, value: str, single: bool) -> str:
        raise NotImplementedError

    def decimal(self, value: str, precision: object, scale: object, wide: bool) -> str:
        raise NotImplementedError

    def string(self, text: str) -> str:
        raise NotImplementedError

    def binary(self, value: str) -> str:
        raise NotImplementedError

    def boolean(self, value: str) -> str:
        true, false = self.literal(bytes([BOOLEAN, 1])), self.literal(bytes([BOOLEAN, 0]))
        return f"CASE WHEN ({value}) THEN {true} WHEN NOT ({value}) THEN {false} END"

    def date(self, value: str, where: str) -> str:
        raise NotImplementedError

    def timestamp(self, value: str, where: str) -> str:
        raise NotImplementedError

    def timestamp_ntz(self, value: str, where: str) -> str:
        raise NotImplementedError

    def array(self, value: str, element: Encoder, depth: int) -> str:
        raise NotImplementedError

    def struct(self, value: str, fields: list[tuple[str, DataType, Encoder]], depth: int) -> str:
        raise NotImplementedError

    def map(self, value: str, key: Encoder, item: Encoder, depth: int) -> str:
        raise NotImplementedError

    # --- business keys (format section 9) --------------------------------------------------------------

    def trim(self, text: str) -> str:
        """``text`` without U+0020 at either end."""
        raise NotImplementedError

    def empty_as_null(self, text: str) -> str:
        """``text``, or NULL where it is the empty string."""
        return f"NULLIF({text}, '')"

    def is_ascii(self, text: str) -> str:
        """Whether every character of ``text`` is ASCII (NULL for NULL)."""
        raise NotImplementedError

    def key_part(self, text: str) -> str:
        """The encoding of a normalised string key part ``text`` (NULL as ``00``)."""
        return self.coalesce(self.string(text))

    def case_map(self, text: str, case: str, where: str) -> str:
        """ASCII letters mapped to ``case``; a string with any other character fails the query.

        ASCII letters are the only ones whose mapping every engine, locale and Unicode version agrees on with
        format section 9.1; beyond them an engine's ``upper``/``lower`` would give other keys.
        """
        message = (
            f"hashexpr: {where} holds a character that is not ASCII; case={case} is computed in {self.name} "
            f"SQL for ASCII text only (hash it with the jar or hashexpr.reference, or drop case=)"
        )
        return (
            f"CASE WHEN NOT {self.is_ascii(text)} THEN {self.fail_text(message, text)} "
            f"ELSE {self.ascii_case(text, case)} END"
        )

    def ascii_case(self, text: str, case: str) -> str:
        """``text``, all ASCII, with its letters mapped to ``case``."""
        source, target = (LOWER, UPPER) if case == "upper" else (UPPER, LOWER)
        return f"translate({text}, '{source}', '{target}')"

    def fail_text(self, message: str, witness: str) -> str:
        """:meth:`fail` as the engine's string type."""
        return self.fail(message, witness)
