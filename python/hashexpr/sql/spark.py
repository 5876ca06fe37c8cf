"""Spark SQL without hashexpr's jar (a Databricks SQL warehouse, or any Spark 3.5 or later): built-in functions only.

Spark has no function that gives a double's IEEE bits (``CAST(x AS BINARY)`` of a number is refused under ANSI
mode, and ``java_method`` is not allowed everywhere), so they are computed: the exponent from ``log2``,
corrected by comparing with exact powers of two, and the significand by exact scaling. Integers become bytes
through ``hex`` and ``unhex``, byte-swapped first. Whole-stage code generation evaluates a repeated
subexpression once.
"""

from __future__ import annotations

from hashexpr.jar_sql import string as spark_string
from hashexpr.sql.dialect import (
    ARRAY,
    BINARY,
    CANONICAL_NAN,
    DATE,
    DECIMAL,
    FLOATING,
    INTEGRAL,
    MAP,
    POSITIVE_INFINITY,
    STRING,
    STRUCT,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    Dialect,
    Encoder,
)
from hashexpr.sql.numbers import minimal_bytes
from hashexpr.types import DataType

_SMALLEST_NORMAL = "2.2250738585072014E-308D"


class Spark(Dialect):
    name = "spark"
    engine = "Spark SQL"

    def literal(self, data: bytes) -> str:
        return f"X'{data.hex().upper()}'"

    def concat(self, parts: list[str]) -> str:
        return "concat(" + ", ".join(parts) + ")"

    def sha256(self, stream: str) -> str:
        return f"unhex(sha2({stream}, 256))"

    def le64(self, value: str) -> str:
        return _bind(value, "hx_w", lambda w: f"unhex(lpad(hex({_swap(w, 8)}), 16, '0'))")

    def le32(self, value: str) -> str:
        return _bind(f"CAST({value} AS BIGINT)", "hx_w", lambda w: f"unhex(lpad(hex({_swap(w, 4)}), 8, '0'))")

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def string_literal(self, text: str) -> str:
        # Spark reads backslash escapes in literals (unless spark.sql.parser.escapedStringLiterals): such text
        # is written as the cast of its bytes.
        return spark_string(text)

    def fail(self, message: str, witness: str) -> str:
        return f"raise_error({self.string_literal(message)})"

    def declared(self, value: str, type_text: str, comparable: bool, where: str, encoding: str) -> str:
        """With ANSI off Spark casts a value its declared type cannot hold to NULL (a string that is no number, a
        decimal overflow) or wraps it (an integer overflow), which would hash as another value: such a value
        fails the query instead. A value of the type is its own cast."""
        cast = f"CAST(({value}) AS {type_text})"
        # A cast to NULL is lost; so is one that changed the value (maps, which Spark cannot compare, aside).
        changed = f" OR NOT ({cast} <=> ({value}))" if comparable else ""
        lost = f"({value}) IS NOT NULL AND ({cast} IS NULL{changed})"
        message = f"hashexpr.sql: {where}: a value that is not of type {type_text}"
        return f"CASE WHEN {lost} THEN CAST({self.fail(message, value)} AS BINARY) ELSE {encoding} END"

    def text(self, value: str) -> str:
        return f"CAST(({value}) AS STRING)"

    def integral(self, value: str) -> str:
        return self.tagged(INTEGRAL, self.le64(f"CAST(({value}) AS BIGINT)"))

    def floating(self, value: str, single: bool) -> str:
        number = f"CAST(CAST(({value}) AS FLOAT) AS DOUBLE)" if single else f"CAST(({value}) AS DOUBLE)"
        return _bind(number, "hx_d", self._float_bits)

    def _float_bits(self, number: str) -> str:
        size = f"abs({number})"
        # floor(log2(x)) can be one off near a power of two; exact powers of two correct it.
        exponent = _bind(
            f"CAST(floor(log2({size})) AS INT)",
            "hx_g",
            lambda guess: (
                f"({guess} - CASE WHEN {size} < power(2, {guess}) THEN 1 ELSE 0 END"
                f" + CASE WHEN {size} >= power(2, {guess} + 1) THEN 1 ELSE 0 END)"
            ),
        )
        # Dividing by a power of two is exact, so the significand's 52 bits come out exactly.
        normal = _bind(
            exponent,
            "hx_x",
            lambda e: (
                f"(shiftleft(CAST({e} + 1023 AS BIGINT), 52)"
                f" | CAST(({size} / power(2, {e}) - 1) * 4503599627370496D AS BIGINT))"
            ),
        )
        subnormal = f"CAST({size} * power(2, 1022) * 4503599627370496D AS BIGINT)"
        magnitude = (
            f"CASE WHEN isnan({number}) THEN {CANONICAL_NAN}L WHEN {number} = 0 THEN 0L"
            f" WHEN {size} = double('Infinity') THEN {POSITIVE_INFINITY}L"
            f" WHEN {size} < {_SMALLEST_NORMAL} THEN {subnormal} ELSE {normal} END"
        )
        sign = f"CASE WHEN {number} < 0 THEN shiftleft(1L, 63) ELSE 0L END"
        bits = f"CASE WHEN {number} IS NULL THEN NULL ELSE (({magnitude}) | ({sign})) END"
        return self.tagged(FLOATING, self.le64(bits))

    def decimal(self, value: str, precision: object, scale: object, wide: bool) -> str:
        number = f"CAST(({value}) AS DECIMAL({precision}, {scale}))"
        zero = self.literal(bytes([DECIMAL, 0, 0, 0, 0, 1, 0]))

        def encoding(digits: str) -> str:
            stripped = f"NULLIF(TRIM(TRAILING '0' FROM {digits}), '')"
            normal_scale = f"({scale} - (length({digits}) - length({stripped})))"
            unscaled = f"CAST({stripped} AS {'DECIMAL(38, 0)' if wide else 'BIGINT'})"
            return _bind(
                unscaled,
                "hx_u",
                lambda u: self.tagged(DECIMAL, self.le32(normal_scale), *self._sized(u, wide)),
            )

        # CAST(decimal AS STRING) writes every digit of the scale, never an exponent. Zero is compared with a
        # zero of the same type: against an integer 0 the comparison could round the value to 0.
        return _bind(
            number,
            "hx_n",
            lambda n: (
                f"CASE WHEN {n} = CAST(0 AS DECIMAL({precision}, {scale})) THEN {zero} "
                f"ELSE {_bind(f'replace(CAST({n} AS STRING), {chr(39)}.{chr(39)}, {chr(39)}{chr(39)})', 'hx_s', encoding)} END"
            ),
        )

    def _sized(self, unscaled: str, wide: bool) -> list[str]:
        if wide:
            modulus = f"{2**64}BD"
            low = f"pmod({unscaled}, {modulus})"
            low_signed = f"CAST(CASE WHEN {low} >= {2**63}BD THEN {low} - {modulus} ELSE {low} END AS BIGINT)"
            # div truncates towards zero; the high word is the floor.
            high = f"(({unscaled} div {modulus}) - CASE WHEN {unscaled} < 0 AND {low} <> 0 THEN 1 ELSE 0 END)"
            little_endian = self.concat([self.le64(low_signed), self.le64(high)])
        else:
            little_endian = self.le64(unscaled)
        return minimal_bytes(unscaled, little_endian, wide, self.literal, _substring)

    def string(self, text: str) -> str:
        return self.tagged(STRING, self.le32(f"octet_length({text})"), f"CAST({text} AS BINARY)")

    def binary(self, value: str) -> str:
        data = f"CAST(({value}) AS BINARY)"
        return self.tagged(BINARY, self.le32(f"octet_length({data})"), data)

    def date(self, value: str, where: str) -> str:
        return self.tagged(DATE, self.le32(f"unix_date(CAST(({value}) AS DATE))"))

    def timestamp(self, value: str, where: str) -> str:
        return self.tagged(TIMESTAMP, self.le64(f"unix_micros(CAST(({value}) AS TIMESTAMP))"))

    def timestamp_ntz(self, value: str, where: str) -> str:
        # The wall clock's fields, none of which reads the session time zone (timestampdiff and a cast to
        # TIMESTAMP do).
        clock = f"CAST(({value}) AS TIMESTAMP_NTZ)"
        micros = (
            f"(CAST(unix_date(CAST({clock} AS DATE)) AS BIGINT) * 86400000000L + hour({clock}) * 3600000000L"
            f" + minute({clock}) * 60000000L + CAST(extract(SECOND FROM {clock}) * 1000000 AS BIGINT))"
        )
        return self.tagged(TIMESTAMP_NTZ, self.le64(micros))

    def _joined(self, items: str, depth: int) -> str:
        left, right = f"hx_a{depth}", f"hx_b{depth}"
        return f"aggregate({items}, X'', ({left}, {right}) -> concat({left}, {right}))"

    def array(self, value: str, element: Encoder, depth: int) -> str:
        item = f"hx_e{depth}"
        items = f"transform({value}, {item} -> {self.element(element, item)})"
        return self.tagged(ARRAY, self.le32(f"size({value})"), self._joined(items, depth))

    def struct(self, value: str, fields: list[tuple[str, DataType, Encoder]], depth: int) -> str:
        count = self.literal(bytes([STRUCT]) + len(fields).to_bytes(4, "little"))
        parts = [self.element(encoder, f"({value}).{self.quote(name)}") for name, _, encoder in fields]
        return f"CASE WHEN ({value}) IS NULL THEN NULL ELSE {self.concat([count, *parts])} END"

    def map(self, value: str, key: Encoder, item: Encoder, depth: int) -> str:
        entry = f"hx_e{depth}"
        digest = self.sha256(
            self.concat([self.element(key, f"{entry}.key"), self.element(item, f"{entry}.value")])
        )
        digests = f"array_sort(transform(map_entries({value}), {entry} -> {digest}))"
        return self.tagged(MAP, self.le32(f"size({value})"), self._joined(digests, depth))

    def check_map(self, dtype, where: str) -> None:
        """Spark has maps."""

    def trim(self, text: str) -> str:
        return f"trim(BOTH ' ' FROM {text})"

    def is_ascii(self, text: str) -> str:
        # The pattern [^\x00-\x7F], built from characters: a backslash in a literal depends on a parser setting.
        # A string holding bytes that are not UTF-8 matches too (Java reads them as U+FFFD).
        return f"(NOT ({text} RLIKE concat('[^', chr(0), '-', chr(127), ']')))"


def _bind(value: str, name: str, body) -> str:
    """``body`` of ``value`` bound to the lambda variable ``name``, so that the value's SQL is written once: the
    analyser's time grows with the text, and a repeated subexpression repeats its text."""
    return f"transform(array({value}), {name} -> {body(name)})[0]"


def _substring(data: str, start: str, length: str) -> str:
    return f"substring({data}, {start}, {length})"


def _swap(value: str, width: int) -> str:
    """The non-negative (or, at 8 bytes, any) BIGINT whose hex is the ``width`` low bytes of ``value``,
    little-endian."""
    terms = []
    for i in range(width):
        byte = f"({value})" if i == 0 else f"shiftright({value}, {8 * i})"
        shift = 8 * (width - 1 - i)
        terms.append(f"shiftleft({byte} & 255, {shift})" if shift else f"({byte} & 255)")
    return "(" + " | ".join(terms) + ")"
