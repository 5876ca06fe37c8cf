"""PostgreSQL (13 and later; tested on 15): bytea, ``sha256``, ``int8send``/``float8send`` for the bytes of numbers.

Integers are written little-endian by swapping their bytes with shifts and masks before ``int8send`` (which
writes big-endian); a double's IEEE bits are ``float8send``'s, read back byte by byte. PostgreSQL evaluates a
repeated subexpression as often as it appears, so the writers repeat column references, never costly work.
"""

from __future__ import annotations

from hashexpr.sql.dialect import (
    ARRAY,
    BINARY,
    CANONICAL_NAN,
    DATE,
    DECIMAL,
    FLOATING,
    INTEGRAL,
    STRING,
    STRUCT,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    Dialect,
    Encoder,
)
from hashexpr.sql.numbers import minimal_bytes
from hashexpr.types import ArrayType, DataType, DecimalType, MapType, StructType

#: The failure of a numeric NaN, which no Spark decimal holds.
NUMERIC_NAN = "hashexpr: a numeric NaN has no Spark decimal value"
#: The failure of a numeric Infinity (PostgreSQL 14 and later), which no Spark decimal holds.
NUMERIC_INFINITY = "hashexpr: a numeric Infinity has no Spark decimal value"
#: The failure of a value of a numeric without a declared scale that no DECIMAL(38, s) holds.
NUMERIC_WIDE = "hashexpr: a numeric of more than 38 digits, or of more than 38 after the point, has no Spark decimal value"

#: The day and microsecond counts DuckDB gives PostgreSQL's ``infinity`` and ``-infinity`` (and writes to Parquet).
INFINITE_DAYS = 2**31 - 1
INFINITE_MICROS = 2**63 - 1


class UnconstrainedNumeric(DecimalType):
    """PostgreSQL's ``numeric`` without a declared precision and scale: each value hashes as a decimal of its
    own digits and scale (format v1 normalises the scale away), and a value that no ``DECIMAL(38, s)`` holds, an
    Infinity or a NaN fails the query."""

    def __init__(self) -> None:
        super().__init__(38, 18)

    def simpleString(self) -> str:
        return "decimal(38,*)"

    def __repr__(self) -> str:
        return "UnconstrainedNumeric()"


class Postgres(Dialect):
    name = "postgres"
    engine = "PostgreSQL"
    #: Whether ``infinity`` and ``-infinity`` dates and timestamps hash as DuckDB holds them (the largest and
    #: smallest day and microsecond counts) instead of failing the query: hashexpr.reconcile's choice.
    infinite = False

    def encoder(self, dtype: DataType, where: str, depth: int) -> Encoder:
        if isinstance(dtype, UnconstrainedNumeric):
            return Encoder(self.any_decimal)
        return super().encoder(dtype, where, depth)

    def literal(self, data: bytes) -> str:
        return f"decode('{data.hex()}', 'hex')"

    def concat(self, parts: list[str]) -> str:
        return "(" + " || ".join(parts) + ")"

    def sha256(self, stream: str) -> str:
        return f"sha256({stream})"

    def le64(self, value: str) -> str:
        return f"int8send({_swap(value, 8)})"

    def le32(self, value: str) -> str:
        return f"int4send({_swap(f'CAST({value} AS integer)', 4)})"

    def string_literal(self, text: str) -> str:
        # An escape string reads alike whatever standard_conforming_strings says; in a plain one a backslash
        # before a quote would end the literal where that setting is off.
        return "E'" + text.replace("\\", "\\\\").replace("'", "''") + "'"

    def fail_text(self, message: str, witness: str) -> str:
        # A failed cast carries the message. The witness keeps PostgreSQL from folding (and so raising) the
        # cast while it plans a CASE branch that may never run.
        text = self.string_literal(message)
        return f"CAST(CAST({text} || COALESCE(left(CAST({witness} AS text), 0), '') AS integer) AS text)"

    def fail(self, message: str, witness: str) -> str:
        return f"convert_to({self.fail_text(message, witness)}, 'UTF8')"

    def is_null(self, value: str, dtype: DataType) -> str:
        # A composite value whose fields are all NULL IS NULL in SQL, but is no NULL struct.
        if isinstance(dtype, StructType):
            return f"(num_nulls({value}) = 1)"
        return super().is_null(value, dtype)

    def text(self, value: str) -> str:
        return f"CAST(({value}) AS text)"

    def integral(self, value: str) -> str:
        return self.tagged(INTEGRAL, self.le64(f"CAST(({value}) AS bigint)"))

    def floating(self, value: str, single: bool) -> str:
        number = self.double(value, single)
        return self.floating_bits(number, f"float8send({number})")

    def double(self, value: str, single: bool) -> str:
        """The value as a double precision (a real first, for FLOAT)."""
        return f"CAST(CAST(({value}) AS real) AS double precision)" if single else f"CAST(({value}) AS double precision)"

    def floating_bits(self, number: str, big_endian: str) -> str:
        """The encoding of a double ``number`` whose ``float8send`` is ``big_endian``."""
        # The bits as an integer whose int8send is the little-endian bytes: byte k of float8send is byte k here.
        bits = " | ".join(f"(CAST(get_byte({big_endian}, {k}) AS bigint) << {8 * k})" for k in range(8))
        zero = self.literal(bytes([FLOATING]) + bytes(8))
        nan = self.literal(bytes([FLOATING]) + CANONICAL_NAN.to_bytes(8, "little"))
        return (
            f"CASE WHEN {number} = 0 THEN {zero} WHEN {number} = CAST('NaN' AS double precision) THEN {nan} "
            f"ELSE {self.tagged(FLOATING, f'int8send({bits})')} END"
        )

    def decimal(self, value: str, precision: object, scale: object, wide: bool) -> str:
        # The digits are read once, in a subquery that OFFSET 0 keeps PostgreSQL from inlining: inlined, the
        # unscaled value would be computed again for every comparison that sizes it.
        number = self.numeric(value, precision, scale)
        digits = self.decimal_digits("hx_y")
        unscaled, normal_scale = self.decimal_unscaled(digits, self.decimal_stripped(digits), scale, wide)
        encoding = self.decimal_encoding("hx_y", "hx_u", "hx_s", wide)
        return (
            f"(SELECT {encoding} FROM (SELECT hx_y, {unscaled} AS hx_u, {normal_scale} AS hx_s "
            f"FROM (SELECT {number} AS hx_y) AS hx_n OFFSET 0) AS hx_d)"
        )

    def numeric(self, value: str, precision: object, scale: object) -> str:
        return f"CAST(({value}) AS numeric({precision}, {scale}))"

    def any_decimal(self, value: str) -> str:
        """The encoding of a numeric of any scale (:class:`UnconstrainedNumeric`): its own scale in place of a
        declared one, and a failure for what no ``DECIMAL(38, s)`` holds."""
        digits = "CASE WHEN hx_x IN ('NaN', 'Infinity', '-Infinity') THEN NULL ELSE replace(hx_x, '.', '') END"
        unscaled, normal_scale = self.decimal_unscaled("hx_g", "hx_r", "hx_c", True)
        encoding = self.decimal_encoding("hx_y", "hx_u", "hx_s", True)
        count = "(length(hx_r) - CASE WHEN left(hx_r, 1) = '-' THEN 1 ELSE 0 END)"
        fits = f"(CASE WHEN hx_s >= 0 THEN {count} <= 38 AND hx_s <= 38 ELSE {count} - hx_s <= 38 END)"
        return (
            f"(SELECT CASE WHEN hx_x IN ('Infinity', '-Infinity') THEN {self.fail(NUMERIC_INFINITY, 'hx_x')} "
            f"WHEN hx_r IS NOT NULL AND NOT {fits} THEN {self.fail(NUMERIC_WIDE, 'hx_x')} ELSE {encoding} END "
            f"FROM (SELECT hx_y, hx_x, hx_r, CASE WHEN hx_r IS NULL THEN NULL ELSE {unscaled} END AS hx_u, "
            f"{normal_scale} AS hx_s FROM (SELECT hx_y, hx_x, hx_g, hx_c, {self.decimal_stripped('hx_g')} AS hx_r "
            f"FROM (SELECT hx_y, hx_x, {digits} AS hx_g, scale(hx_y) AS hx_c FROM (SELECT CAST(({value}) AS numeric) AS hx_y, "
            f"CAST(CAST(({value}) AS numeric) AS text) AS hx_x) AS hx_n OFFSET 0) AS hx_m OFFSET 0) AS hx_k OFFSET 0) AS hx_d)"
        )

    def decimal_digits(self, number: str) -> str:
        """A numeric's digits without the point (all of its scale's)."""
        return f"replace(CAST({number} AS text), '.', '')"

    def decimal_stripped(self, digits: str) -> str:
        """The digits without trailing zeros (NULL for zero, and for a NaN, which then fails by name)."""
        return f"NULLIF(NULLIF(rtrim({digits}, '0'), ''), 'NaN')"

    def decimal_unscaled(self, digits: str, stripped: str, scale: object, wide: bool) -> tuple[str, str]:
        """The unscaled value and the scale once trailing zeros are gone (format section 4.3)."""
        unscaled = f"CAST({stripped} AS {'numeric' if wide else 'bigint'})"
        normal_scale = f"CAST({scale} - (length({digits}) - length({stripped})) AS integer)"
        return unscaled, normal_scale

    def decimal_low(self, unscaled: str) -> str:
        """A wide unscaled value modulo 2^64, in [0, 2^64)."""
        modulus = 2**64
        # mod and div are exact on numeric (a quotient by / is rounded); mod keeps the dividend's sign.
        return f"(CASE WHEN mod({unscaled}, {modulus}) < 0 THEN mod({unscaled}, {modulus}) + {modulus} ELSE mod({unscaled}, {modulus}) END)"

    def decimal_encoding(self, number: str, unscaled: str, normal_scale: str, wide: bool, low: str | None = None) -> str:
        """The encoding of the numeric ``number`` from its unscaled value and normal scale (and, for a wide one,
        its ``low`` 64 bits when they are at hand)."""
        if wide:
            modulus = 2**64
            low = low or self.decimal_low(unscaled)
            low_signed = f"CAST(CASE WHEN {low} >= {2**63} THEN {low} - {modulus} ELSE {low} END AS bigint)"
            high = f"CAST(div({unscaled} - {low}, {modulus}) AS bigint)"
            little_endian = self.concat([self.le64(low_signed), self.le64(high)])
        else:
            little_endian = self.le64(unscaled)
        sized = minimal_bytes(unscaled, little_endian, wide, self.literal, _substring)
        zero = self.literal(bytes([DECIMAL, 0, 0, 0, 0, 1, 0]))
        return (
            f"CASE WHEN {number} = CAST(0 AS numeric) THEN {zero} WHEN {number} = CAST('NaN' AS numeric) THEN {self.fail(NUMERIC_NAN, number)} "
            f"ELSE {self.tagged(DECIMAL, self.le32(normal_scale), *sized)} END"
        )

    def string(self, text: str) -> str:
        return self.string_bytes(self.utf8(text))

    def utf8(self, text: str) -> str:
        return f"convert_to({text}, 'UTF8')"

    def string_bytes(self, data: str) -> str:
        """The encoding of a string whose UTF-8 bytes are ``data``."""
        return self.tagged(STRING, self.le32(f"octet_length({data})"), data)

    def binary(self, value: str) -> str:
        return self.binary_bytes(self.bytea(value))

    def bytea(self, value: str) -> str:
        return f"CAST(({value}) AS bytea)"

    def binary_bytes(self, data: str) -> str:
        return self.tagged(BINARY, self.le32(f"octet_length({data})"), data)

    def date(self, value: str, where: str) -> str:
        return self.tagged(DATE, self.le32(self.days(value)))

    def days(self, value: str) -> str:
        """Days since the epoch. An infinite date fails the subtraction, or (:attr:`infinite`) is DuckDB's."""
        days = f"(CAST(({value}) AS date) - DATE '1970-01-01')"
        if not self.infinite:
            return days
        return (
            f"(CASE WHEN CAST(({value}) AS date) = DATE 'infinity' THEN {INFINITE_DAYS} "
            f"WHEN CAST(({value}) AS date) = DATE '-infinity' THEN {-INFINITE_DAYS} ELSE {days} END)"
        )

    def timestamp(self, value: str, where: str) -> str:
        return self.tagged(TIMESTAMP, self._le64_once(self.micros(value, True)))

    def timestamp_ntz(self, value: str, where: str) -> str:
        return self.tagged(TIMESTAMP_NTZ, self._le64_once(self.micros(value, False)))

    def micros(self, value: str, instant: bool) -> str:
        """Microseconds since the epoch of an instant, or of a wall clock read as UTC (EXTRACT(EPOCH ...) of a
        timestamp without time zone is that)."""
        kind = "timestamp with time zone" if instant else "timestamp without time zone"
        micros = _micros(f"CAST(({value}) AS {kind})")
        if not self.infinite:
            return micros
        typed = f"CAST(({value}) AS {kind})"
        return (
            f"(CASE WHEN {typed} = CAST('infinity' AS {kind}) THEN {INFINITE_MICROS} "
            f"WHEN {typed} = CAST('-infinity' AS {kind}) THEN {-INFINITE_MICROS} ELSE {micros} END)"
        )

    def _le64_once(self, value: str) -> str:
        """:meth:`le64` of a costly value, computed once in a subquery (the byte swap names it eight times)."""
        return f"(SELECT {self.le64('hx_t')} FROM (SELECT {value} AS hx_t OFFSET 0) AS hx_tq)"

    def check_array(self, dtype: ArrayType, where: str) -> None:
        if isinstance(dtype.elementType, ArrayType):
            raise self.unsupported(
                where, dtype, "PostgreSQL arrays of arrays are rectangular multi-dimensional arrays, not arrays of "
                "arrays of any length"
            )

    def array(self, value: str, element: Encoder, depth: int) -> str:
        # By subscript: unnest would spread an array of composite values over columns.
        index, table = f"hx_i{depth}", f"hx_t{depth}"
        elements = (
            f"COALESCE((SELECT string_agg({self.element(element, f'({value})[{index}]')}, ''::bytea ORDER BY {index}) "
            f"FROM generate_subscripts({value}, 1) AS {table}({index})), ''::bytea)"
        )
        message = "hashexpr: a multi-dimensional PostgreSQL array is no Spark array"
        return (
            f"CASE WHEN array_ndims({value}) > 1 THEN {self.fail(message, value)} "
            f"ELSE {self.tagged(ARRAY, self.le32(f'cardinality({value})'), elements)} END"
        )

    def struct(self, value: str, fields: list[tuple[str, DataType, Encoder]], depth: int) -> str:
        count = self.literal(bytes([STRUCT]) + len(fields).to_bytes(4, "little"))
        parts = [self.element(encoder, f"({value}).{self.quote(name)}") for name, _, encoder in fields]
        return f"CASE WHEN {self.is_null(value, StructType())} THEN NULL ELSE {self.concat([count, *parts])} END"

    def map(self, value: str, key: Encoder, item: Encoder, depth: int) -> str:
        raise AssertionError("check_map refuses maps")

    def check_map(self, dtype: MapType, where: str) -> None:
        raise self.unsupported(where, dtype, "PostgreSQL has no map type")

    def key_part(self, text: str) -> str:
        # The normalised text is read once, in a subquery that OFFSET 0 keeps PostgreSQL from inlining: the
        # encoding names its bytes twice and its length four times.
        return self.coalesce(f"(SELECT {self.string('hx_k')} FROM (SELECT {text} AS hx_k OFFSET 0) AS hx_kq)")

    def ascii_case(self, text: str, case: str) -> str:
        # Under the C collation upper and lower map the ASCII letters alone, faster than translate.
        return f"{case}(({text}) COLLATE \"C\")"

    def trim(self, text: str) -> str:
        return f"btrim({text}, ' ')"

    def is_ascii(self, text: str) -> str:
        return f"(octet_length(convert_to({text}, 'UTF8')) = char_length({text}))"


def _swap(value: str, width: int) -> str:
    """The integer whose big-endian bytes are the ``width`` low bytes of ``value``, little-endian."""
    terms = []
    for i in range(width):
        byte = f"({value})" if i == 0 else f"(({value}) >> {8 * i})"
        shift = 8 * (width - 1 - i)
        terms.append(f"(({byte} & 255) << {shift})" if shift else f"({byte} & 255)")
    return "(" + " | ".join(terms) + ")"


def _substring(data: str, start: str, length: str) -> str:
    return f"substring({data} from {start} for {length})"


def _micros(timestamp: str) -> str:
    """Microseconds since the epoch, exactly: EXTRACT(EPOCH ...) is numeric from PostgreSQL 14 on."""
    return f"CAST(EXTRACT(EPOCH FROM {timestamp}) * 1000000 AS bigint)"
