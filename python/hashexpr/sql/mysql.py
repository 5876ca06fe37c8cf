"""MySQL (8.0 and later) and MariaDB (10.5 and later; tested on 10.11): binary strings, ``SHA2``, ``HEX`` and
``UNHEX`` for the bytes of integers, arithmetic for the bits of a double.

Integers become bytes through their 16 hex digits (``HEX`` writes a negative BIGINT as its two's complement),
reversed for little-endian. Neither server has a function that gives a double's IEEE bits, so they are computed
as the ``spark`` dialect computes them: the exponent from ``LOG2``, corrected against exact powers of two, the
significand by exact scaling. Strings are converted to utf8mb4 (whatever their column's character set) and
hashed as its bytes, never compared under a collation: case-only and trailing-space changes change the hash.

Neither server has a function that raises an error of one's own in a query; a value that cannot be hashed
exactly makes an unsigned overflow, whose error (1690) quotes the expression, and in it the message.
"""

from __future__ import annotations

from hashexpr.sql.dialect import (
    BINARY,
    DATE,
    DECIMAL,
    FLOATING,
    INTEGRAL,
    NULL,
    STRING,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    Dialect,
    Encoder,
)
from hashexpr.sql.numbers import minimal_bytes
from hashexpr.types import ArrayType, DataType, MapType, NullType, StructType

#: A date whose year, month or day is zero ('0000-00-00', '2024-00-10'), or a day past its month's end
#: ('2024-02-30'), which MySQL keeps where its SQL mode allows it: no calendar day, so no Spark date.
NO_DAY = "hashexpr: a zero or invalid date"
#: A TIMESTAMP that is zero, or a DATETIME outside the TIMESTAMP range, given as an instant.
ZERO_TIMESTAMP = "hashexpr: a zero or out-of-range timestamp"
#: A TINYINT(1) that is neither 0 nor 1, given as a boolean.
NOT_BOOLEAN = "hashexpr: a boolean neither 0 nor 1"
#: A value's or a row's bytes longer than max_allowed_packet, which CONCAT, HEX and CAST make NULL.
TOO_LONG = "hashexpr: a value or row longer than max_allowed_packet"

#: Days from 0000-01-00 (``TO_DAYS``' origin) to 1970-01-01.
_EPOCH_DAYS = 719528
_SMALLEST_NORMAL = "2.2250738585072014E-308"
_UNSIGNED_MAX = 2**64 - 1


class MySQL(Dialect):
    name = "mysql"
    engine = "MySQL/MariaDB"

    def literal(self, data: bytes) -> str:
        return f"X'{data.hex().upper()}'"

    def concat(self, parts: list[str]) -> str:
        return "CONCAT(" + ", ".join(parts) + ")"

    def sha256(self, stream: str) -> str:
        return f"UNHEX(SHA2({stream}, 256))"

    def digest(self, parts: list[str], witness: str) -> str:
        # CONCAT is NULL past max_allowed_packet: such a row fails rather than hash as nothing. The witness keeps
        # the failure a value of the row without writing the whole stream a second time.
        return self.sha256(f"COALESCE({self.concat(parts)}, {self.fail(TOO_LONG, witness)})")

    def le64(self, value: str) -> str:
        # HEX of a negative BIGINT is its 64-bit two's complement; of an unsigned one, its bits.
        return f"REVERSE(UNHEX(LPAD(HEX({value}), 16, '0')))"

    def le32(self, value: str) -> str:
        return f"REVERSE(UNHEX(LPAD(HEX(({value}) & 4294967295), 8, '0')))"

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def string_literal(self, text: str) -> str:
        # A literal's backslashes are escapes unless the SQL mode says NO_BACKSLASH_ESCAPES: written as bytes.
        return f"CONVERT({self.literal(text.encode('utf-8'))} USING utf8mb4)"

    def failure(self, message: str, witness: str) -> str:
        """A number whose evaluation fails the query with ``message``. An unsigned overflow fails in every SQL
        mode, and its error quotes the expression, message included; the witness makes it a value of the row,
        evaluated only where a CASE reaches it."""
        # A plain literal, read alike in every SQL mode: no backslash, quotes doubled.
        text = message.replace("\\", "/").replace("'", "''")
        test = f"(CONCAT('{text}', COALESCE(LEFT(CAST(({witness}) AS CHAR), 0), '')) <> '')"
        return f"({_UNSIGNED_MAX} + {test})"

    def fail(self, message: str, witness: str) -> str:
        return f"CAST({self.failure(message, witness)} AS BINARY)"

    def fail_text(self, message: str, witness: str) -> str:
        return f"CAST({self.fail(message, witness)} AS CHAR)"

    def value(self, value: str, dtype: DataType, where: str) -> str:
        if isinstance(dtype, NullType):
            return super().value(value, dtype, where)
        # An encoding is NULL for a value only past max_allowed_packet: that fails rather than hash as a NULL.
        encoding = self.encoder(dtype, where, 1).encode(value)
        return (
            f"CASE WHEN ({value}) IS NULL THEN {self.literal(bytes([NULL]))} "
            f"ELSE COALESCE({encoding}, {self.fail(TOO_LONG, value)}) END"
        )

    def text(self, value: str) -> str:
        return f"CONVERT(({value}) USING utf8mb4)"

    def integral(self, value: str) -> str:
        return self.tagged(INTEGRAL, self.le64(f"CAST(({value}) AS SIGNED)"))

    def floating(self, value: str, single: bool) -> str:
        return self.tagged(FLOATING, self.le64(self.double_bits(value, single)))

    def double_bits(self, value: str, single: bool) -> str:
        """The IEEE bits of the value as a double (a FLOAT first, for ``single``), an unsigned integer; 0 for -0.0,
        NULL for NULL."""
        number = f"CAST(CAST(({value}) AS FLOAT) AS DOUBLE)" if single else f"CAST(({value}) AS DOUBLE)"
        size = f"ABS({number})"
        # The exponent's guess: FLOOR(LOG2(x)), which can be one off near a power of two (and rounds the largest
        # doubles up to 1024, whose power of two overflows: at most 1023). Dividing by a power of two is exact,
        # so m is x's significand scaled into [1, 2), or into [2, 4) or [0.5, 1) where the guess was one off;
        # the bits are the guess's exponent field plus m's fraction at the scale that makes up for it, each
        # term an exact integer.
        guess = f"LEAST(FLOOR(LOG2({size})), 1023)"
        m = f"({size} / POW(2, {guess}))"
        fraction = (
            f"CASE WHEN {m} >= 2 THEN {m} * 2251799813685248 WHEN {m} < 1 THEN ({m} - 1) * 9007199254740992 "
            f"ELSE ({m} - 1) * 4503599627370496 END"
        )
        normal = f"(CAST(({guess} + 1023) * 4503599627370496 AS SIGNED) + CAST({fraction} AS SIGNED))"
        subnormal = f"CAST({size} * POW(2, 1022) * 4503599627370496 AS SIGNED)"
        # Unsigned integers throughout: a CASE that mixes in another type (a NULL branch) may be computed as a
        # double, which rounds the low bits away. A NULL value makes the ELSE branch NULL. Neither server holds a
        # NaN or an infinity.
        magnitude = (
            f"CASE WHEN {number} = 0 THEN 0 WHEN {size} < {_SMALLEST_NORMAL} THEN {subnormal} ELSE {normal} END"
        )
        sign = f"CASE WHEN {number} < 0 THEN CAST({1 << 63} AS UNSIGNED) ELSE CAST(0 AS UNSIGNED) END"
        return f"(CAST({magnitude} AS UNSIGNED) | {sign})"

    def decimal(self, value: str, precision: object, scale: object, wide: bool) -> str:
        number = f"CAST(({value}) AS DECIMAL({precision}, {scale}))"
        # CAST(decimal AS CHAR) writes every digit of the scale, never an exponent.
        digits = f"REPLACE(CAST({number} AS CHAR), '.', '')"
        stripped = f"NULLIF(TRIM(TRAILING '0' FROM {digits}), '')"
        normal_scale = f"({scale} - (LENGTH({digits}) - LENGTH({stripped})))"
        unscaled = f"CAST({stripped} AS {'DECIMAL(38, 0)' if wide else 'SIGNED'})"
        if wide:
            modulus = 2**64
            low = f"(MOD({unscaled}, {modulus}) + CASE WHEN {unscaled} < 0 AND MOD({unscaled}, {modulus}) <> 0 THEN {modulus} ELSE 0 END)"
            high = f"CAST(({unscaled} - {low}) DIV {modulus} AS SIGNED)"
            little_endian = self.concat([self.le64(f"CAST({low} AS UNSIGNED)"), self.le64(high)])
        else:
            little_endian = self.le64(unscaled)
        sized = minimal_bytes(unscaled, little_endian, wide, self.literal, _substring)
        zero = self.literal(bytes([DECIMAL, 0, 0, 0, 0, 1, 0]))
        return f"CASE WHEN {number} = 0 THEN {zero} ELSE {self.tagged(DECIMAL, self.le32(normal_scale), *sized)} END"

    def string(self, text: str) -> str:
        data = f"CAST({text} AS BINARY)"
        return self.tagged(STRING, self.le32(f"LENGTH({data})"), data)

    def binary(self, value: str) -> str:
        data = f"CAST(({value}) AS BINARY)"
        return self.tagged(BINARY, self.le32(f"LENGTH({data})"), data)

    def boolean(self, value: str) -> str:
        true, false = self.literal(bytes([0x01, 1])), self.literal(bytes([0x01, 0]))
        # A BOOLEAN is a TINYINT(1): 2 is no boolean, where a test of its truth would take it for true.
        return (
            f"CASE WHEN ({value}) = 1 THEN {true} WHEN ({value}) = 0 THEN {false} "
            f"WHEN ({value}) IS NOT NULL THEN {self.fail(NOT_BOOLEAN, value)} END"
        )

    def date(self, value: str, where: str) -> str:
        return self.tagged(DATE, self.le32(self.days(value)))

    def days(self, value: str) -> str:
        """Days since 1970-01-01 (TO_DAYS is proleptic Gregorian, as Spark's dates are); a date that is no
        calendar day (:func:`calendar_day`) fails the query."""
        days = f"(TO_DAYS({value}) - {_EPOCH_DAYS})"
        return (
            f"CAST(CASE WHEN {calendar_day(value)} THEN {days} WHEN ({value}) IS NULL THEN NULL "
            f"ELSE {self.failure(NO_DAY, value)} END AS SIGNED)"
        )

    def timestamp(self, value: str, where: str) -> str:
        return self.tagged(TIMESTAMP, self.le64(self.instant_micros(value)))

    def instant_micros(self, value: str) -> str:
        """Microseconds since the epoch of an instant. UNIX_TIMESTAMP reads a TIMESTAMP's instant as stored (no
        session time zone, no ambiguous hour), a DATETIME in the session time zone; it is 0 for a zero TIMESTAMP
        and outside TIMESTAMP's range, where no instant is 0 (the range starts a second after the epoch): such a
        value fails the query."""
        seconds = f"UNIX_TIMESTAMP({value})"
        return (
            f"CAST(CASE WHEN {seconds} > 0 THEN {seconds} * 1000000 WHEN ({value}) IS NULL THEN NULL "
            f"ELSE {self.failure(ZERO_TIMESTAMP, value)} END AS SIGNED)"
        )

    def timestamp_ntz(self, value: str, where: str) -> str:
        return self.tagged(TIMESTAMP_NTZ, self.le64(self.clock_micros(value)))

    def clock_micros(self, value: str) -> str:
        """Microseconds from 1970-01-01 00:00 to a wall clock, which reads no time zone; a date part that is no
        calendar day (:func:`calendar_day`) fails the query."""
        micros = f"TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {value})"
        return (
            f"CAST(CASE WHEN {calendar_day(value)} THEN {micros} WHEN ({value}) IS NULL THEN NULL "
            f"ELSE {self.failure(NO_DAY, value)} END AS SIGNED)"
        )

    def check_array(self, dtype: ArrayType, where: str) -> None:
        raise self.unsupported(where, dtype, f"{self.engine} has no array type")

    def check_struct(self, dtype: StructType, where: str) -> None:
        raise self.unsupported(where, dtype, f"{self.engine} has no struct type")

    def check_map(self, dtype: MapType, where: str) -> None:
        raise self.unsupported(where, dtype, f"{self.engine} has no map type")

    def array(self, value: str, element: Encoder, depth: int) -> str:
        raise AssertionError("check_array refuses arrays")

    def struct(self, value: str, fields: list[tuple[str, DataType, Encoder]], depth: int) -> str:
        raise AssertionError("check_struct refuses structs")

    def map(self, value: str, key: Encoder, item: Encoder, depth: int) -> str:
        raise AssertionError("check_map refuses maps")

    def trim(self, text: str) -> str:
        return f"TRIM(BOTH ' ' FROM {text})"

    def empty_as_null(self, text: str) -> str:
        # By length: under a PAD SPACE collation '  ' = '' is true.
        return f"(CASE WHEN LENGTH({text}) = 0 THEN NULL ELSE {text} END)"

    def is_ascii(self, text: str) -> str:
        return f"(LENGTH(CONVERT({text} USING utf8mb4)) = CHAR_LENGTH({text}))"

    def ascii_case(self, text: str, case: str) -> str:
        # In the ascii character set UPPER and LOWER map the ASCII letters alone, whatever the collation of
        # the text (a Turkish one maps i to İ).
        return f"CONVERT({case.upper()}(CONVERT({text} USING ascii)) USING utf8mb4)"


def calendar_day(value: str) -> str:
    """Whether a DATE or DATETIME is a calendar day of a year from 1: no part zero (TO_DAYS is NULL), no day past
    its month's end (which ALLOW_INVALID_DATES keeps), no year 0 (which TO_DAYS counts as no proleptic
    calendar does). False for NULL."""
    return (
        f"COALESCE(TO_DAYS({value}) IS NOT NULL AND YEAR({value}) > 0 "
        f"AND DAYOFMONTH({value}) <= DAYOFMONTH(LAST_DAY({value})), FALSE)"
    )


def _substring(data: str, start: str, length: str) -> str:
    return f"SUBSTRING({data}, {start}, {length})"
