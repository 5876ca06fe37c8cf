"""Common texts: a text of each row that PostgreSQL and MySQL/MariaDB print alike from their own SQL, whose SHA-256
stands in for the row hash in the aggregate passes between them.

MySQL and MariaDB evaluate the SHA-256 record hashes of format v1 at about 45 µs a row of ten columns; a row's
common text and its SHA-256 cost a quarter of that. Each value prints as a text that is a one-to-one image of its
Spark value (so equal texts are equal values): integers in decimal, booleans as ``1`` and ``0``, decimals with
the larger of the two sides' scales, doubles (and floats, widened) as the 16 hex digits of their IEEE bits (0.0
for -0.0), strings as their length in characters, ``:`` and themselves, binary as hex, dates as days and
timestamps as microseconds since 1970-01-01; a NULL as ``N``, which no value prints as. A row's text is its
values' texts joined by ``,``: the lengths before strings make it decodable, so distinct rows have distinct
texts. A row's segment is the first 32 bits of the MD5 of its key's text (of a key of one integer column, the
integer's low 32 bits times 1640531527, modulo 2^32: MySQL's MD5 costs six times that); a segment's lanes are the sums,
modulo 2^64, of the first and the second 8 bytes (big-endian) of its rows' SHA-256 digests (two sums a row, which
MySQL computes at a fraction of the four 32-bit lanes' cost). Values equal but printed otherwise, if any, only
put their segments among those that differ, which the fetch settles by the record hashes of format v1, as ever.
"""

from __future__ import annotations

from collections.abc import Sequence

from hashexpr.sql.mysql import TOO_LONG, MySQL
from hashexpr.sql.postgres import Postgres, UnconstrainedNumeric
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
    NullType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

#: The text of a NULL.
NULL_TEXT = "N"

#: The multiplier of a one-integer key's segment word: 2^32 / φ², odd and below 2^31, so that the product of a
#: 32-bit value with it fits a signed 64-bit integer in every engine.
MULTIPLIER = 1640531527

_KINDS: tuple[tuple[tuple[type, ...], str], ...] = (
    ((ByteType, ShortType, IntegerType, LongType), "integral"),
    ((BooleanType,), "boolean"),
    ((FloatType, DoubleType), "floating"),
    ((StringType, VarcharType), "string"),
    ((BinaryType,), "binary"),
    ((DateType,), "date"),
    ((TimestampType,), "timestamp"),
    ((TimestampNTZType,), "timestamp_ntz"),
    ((NullType,), "null"),
)


def common_kind(dtype: DataType) -> str | None:
    """The common text kind of a column hashed as ``dtype``; None for what has none (arrays, structs, a
    PostgreSQL numeric without a scale, collated strings).

    Examples
    --------
    >>> from hashexpr.types import DecimalType, LongType
    >>> common_kind(LongType()), common_kind(DecimalType(18, 2))
    ('integral', 'decimal:2')
    """
    if isinstance(dtype, UnconstrainedNumeric):
        return None
    if isinstance(dtype, DecimalType):
        return f"decimal:{dtype.scale}"
    if isinstance(dtype, (StringType, VarcharType)) and getattr(dtype, "collation", "UTF8_BINARY") != "UTF8_BINARY":
        return None
    for types, kind in _KINDS:
        if isinstance(dtype, types):
            return kind
    return None


def common_kinds(dtypes: Sequence[DataType]) -> list[str] | None:
    kinds = [common_kind(t) for t in dtypes]
    return None if None in kinds else kinds  # type: ignore[return-value]


def merged(a: Sequence[str], b: Sequence[str]) -> list[str] | None:
    """The kinds both sides print by: equal kinds, decimals at the larger scale, a column of NULLs alone (``null``)
    as the other side's kind; None when a column's kinds differ otherwise.

    Examples
    --------
    >>> merged(["integral", "decimal:2"], ["integral", "decimal:4"])
    ['integral', 'decimal:4']
    >>> merged(["null"], ["string"]), merged(["date"], ["timestamp"])
    (['string'], None)
    """
    if len(a) != len(b):
        return None
    kinds = []
    for x, y in zip(a, b):
        if x == y or y == "null":
            kinds.append(x)
        elif x == "null":
            kinds.append(y)
        elif x.startswith("decimal:") and y.startswith("decimal:"):
            kinds.append(f"decimal:{max(int(x[8:]), int(y[8:]))}")
        else:
            return None
    return kinds


# --- PostgreSQL ---------------------------------------------------------------------------------------------

_PG = Postgres()
_PG.infinite = True


def postgres_field(value: str, dtype: DataType, kind: str) -> str:
    """The common text of a PostgreSQL value of Spark type ``dtype`` as SQL (``text``, never NULL)."""
    if isinstance(dtype, NullType):
        return f"'{NULL_TEXT}'"
    if kind == "integral":
        text = f"CAST(({value}) AS text)"
    elif kind == "boolean":
        text = f"CASE WHEN ({value}) THEN '1' WHEN NOT ({value}) THEN '0' END"
    elif kind.startswith("decimal:"):
        text = f"CAST(round(({value}), {int(kind[8:])}) AS text)"
    elif kind == "floating":
        number = f"CAST(({value}) AS double precision)"
        text = f"upper(encode(float8send(CASE WHEN {number} = 0 THEN CAST(0 AS double precision) ELSE {number} END), 'hex'))"
    elif kind == "string":
        text = f"(CAST(char_length({value}) AS text) || ':' || ({value}))"
    elif kind == "binary":
        text = f"upper(encode(({value}), 'hex'))"
    elif kind == "date":
        text = f"CAST({_PG.days(value)} AS text)"
    elif kind in ("timestamp", "timestamp_ntz"):
        text = f"CAST({_PG.micros(value, kind == 'timestamp')} AS text)"
    else:
        raise ValueError(f"no common text of kind {kind!r}")
    return f"COALESCE({text}, '{NULL_TEXT}')"


def postgres_text(fields: Sequence[str]) -> str:
    """The row text of the fields (:func:`postgres_field`)."""
    return " || ',' || ".join(fields) if fields else "''"


def postgres_digest(text: str) -> str:
    """The SHA-256 of a text, as ``bytea``."""
    return f"sha256(convert_to({text}, 'UTF8'))"


# --- MySQL and MariaDB --------------------------------------------------------------------------------------

_MYSQL = MySQL()


def mysql_field(value: str, dtype: DataType, kind: str) -> str:
    """The common text of a MySQL/MariaDB value of Spark type ``dtype`` as SQL (utf8mb4, never NULL); a value
    that has no Spark value (a zero date, a boolean of 2) fails the query as the record hashes do."""
    if isinstance(dtype, NullType):
        return f"'{NULL_TEXT}'"
    if kind == "integral":
        # + 0: a ZEROFILL column's CAST keeps its padding.
        text = f"CAST(({value}) + 0 AS CHAR)"
    elif kind == "boolean":
        # Through the record hash's encoding, whose failure a boolean neither 0 nor 1 reaches.
        text = f"CASE WHEN ({value}) = 1 THEN '1' WHEN ({value}) = 0 THEN '0' WHEN ({value}) IS NOT NULL THEN {_MYSQL.fail_text('hashexpr: a boolean neither 0 nor 1', value)} END"
    elif kind.startswith("decimal:"):
        scale = int(kind[8:])
        text = f"CAST(CAST(({value}) AS DECIMAL(65, {scale})) AS CHAR)"
    elif kind == "floating":
        text = f"LPAD(HEX({_MYSQL.double_bits(value, isinstance(dtype, FloatType))}), 16, '0')"
    elif kind == "string":
        converted = _MYSQL.text(value)
        text = f"CONCAT(CHAR_LENGTH({converted}), ':', {converted})"
    elif kind == "binary":
        text = f"HEX({value})"
    elif kind == "date":
        text = f"CAST({_MYSQL.days(value)} AS CHAR)"
    elif kind == "timestamp":
        text = f"CAST({_MYSQL.instant_micros(value)} AS CHAR)"
    elif kind == "timestamp_ntz":
        text = f"CAST({_MYSQL.clock_micros(value)} AS CHAR)"
    else:
        raise ValueError(f"no common text of kind {kind!r}")
    # A text is NULL for a value only where it is longer than max_allowed_packet (CONCAT, HEX): that fails the
    # query, as a NULL would print as the NULL's text.
    return f"CASE WHEN ({value}) IS NULL THEN '{NULL_TEXT}' ELSE COALESCE({text}, {_MYSQL.fail_text(TOO_LONG, value)}) END"


def mysql_text(fields: Sequence[str]) -> str:
    """The row text of the fields (:func:`mysql_field`); a text beyond max_allowed_packet fails the query."""
    if not fields:
        return "''"
    joined = ", ',', ".join(fields)
    return f"COALESCE(CONCAT({joined}), {_MYSQL.fail_text(TOO_LONG, fields[0])})"


def mysql_digest(text: str) -> str:
    """The SHA-256 of a text, as a 32-byte binary string."""
    return f"UNHEX(SHA2(CONVERT({text} USING utf8mb4), 256))"


def postgres_key_word(text: str, integer: str | None = None) -> str:
    """A ``bigint`` whose high 32 bits are a key's segment word: the first 8 bytes of the MD5 of its text, or for
    a key of one integer column (``integer``, SQL of it), its multiplicative hash."""
    if integer is not None:
        # mod(), not %: every query goes through psycopg's placeholders.
        low = f"mod(mod(CAST(({integer}) AS bigint), 4294967296) + 4294967296, 4294967296)"
        return f"(mod({low} * {MULTIPLIER}, 4294967296) << 32)"
    return f"CAST(CAST('x' || left(md5({text}), 16) AS bit(64)) AS bigint)"


def mysql_key_word(text: str, integer: str | None = None) -> str:
    """A key's 32-bit segment word (:func:`postgres_key_word`'s high 32 bits), as an integer."""
    if integer is not None:
        low = f"((({integer}) % 4294967296 + 4294967296) % 4294967296)"
        return f"(CAST({low} AS SIGNED) * {MULTIPLIER} % 4294967296)"
    return f"CONV(LEFT(MD5(CONVERT({text} USING utf8mb4)), 8), 16, 10)"


def integer_key(kinds: Sequence[str], key_count: int) -> bool:
    """Whether the key is one integer column, whose segment word is its multiplicative hash."""
    return key_count == 1 and kinds[0] == "integral"


def postgres_word(digest: str, start: int) -> str:
    """8 bytes of a ``bytea`` digest from ``start`` (0-based), big-endian, as a signed ``bigint``."""
    return f"CAST(CAST('x' || encode(substring({digest} from {start + 1} for 8), 'hex') AS bit(64)) AS bigint)"


def postgres_wrapped(total: str) -> str:
    """A ``numeric`` sum modulo 2^64, as the signed ``bigint`` of the same 64 bits."""
    modulus = 2**64
    unsigned = f"(mod(mod({total}, {modulus}) + {modulus}, {modulus}))"
    return f"CAST(CASE WHEN {unsigned} >= {2**63} THEN {unsigned} - {modulus} ELSE {unsigned} END AS bigint)"
