"""SQL that computes hashexpr's SHA-256 keys and row hashes inside another engine, without the jar.

:func:`record_key` and :func:`record_hash` write one SQL expression, for PostgreSQL, DuckDB, MySQL/MariaDB or
Spark SQL without hashexpr's jar (a Databricks SQL warehouse), that evaluates to the same 32 bytes as the jar's
``record_key_with('algorithm=sha256; ...', ...)`` and ``record_hash_with('algorithm=sha256', ...)``: the
byte stream of format v1 (docs/FORMAT.md, sections 3, 4, 9 and 10) built with the engine's byte functions
and hashed with its SHA-256. Nothing is installed in the engine; the expression uses built-in functions only.

What a dialect cannot reproduce exactly is refused while the text is written, with a :class:`ValueError`
naming the column, the type and the dialect; a value that the SQL cannot hash exactly (a non-ASCII string under
``case=``, an infinite date, a PostgreSQL numeric NaN) fails the query instead of giving another hash.
docs/SQL.md has the types per dialect.
"""

from __future__ import annotations

from collections.abc import Sequence

from hashexpr.options import KeyOptions
from hashexpr.sql.columns import Column, ColumnSpec, column, expression, parse_columns
from hashexpr.sql.dialect import STRING, Dialect, Unsupported
from hashexpr.sql.duckdb import DuckDB
from hashexpr.sql.mysql import MySQL
from hashexpr.sql.postgres import Postgres
from hashexpr.sql.spark import Spark
from hashexpr.types import DataType, StringType, VarcharType

__all__ = ["DIALECTS", "Unsupported", "column", "dialect", "expression", "record_hash", "record_key"]

#: The dialects, each tested against its real engine.
DIALECTS: dict[str, Dialect] = {d.name: d for d in (Postgres(), DuckDB(), Spark(), MySQL())}

RECORD_VERSION = 0x01
KEY_RECORD = 0x82


def dialect(name: str) -> Dialect:
    """The :class:`~hashexpr.sql.dialect.Dialect` called ``name``.

    Examples
    --------
    >>> from hashexpr.sql import dialect
    >>> dialect("duckdb").engine
    'DuckDB'
    """
    if name not in DIALECTS:
        raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}, got {name!r}")
    return DIALECTS[name]


def record_hash(columns: Sequence[tuple[ColumnSpec, str | DataType]], *, dialect: str) -> str:
    """Return SQL for the row hash of ``columns``: the jar's ``record_hash_with('algorithm=sha256', ...)``.

    Parameters
    ----------
    columns : sequence of (str, str) pairs
        The values in order, each a column name or SQL expression text (see :func:`column` and
        :func:`expression`) and its Spark SQL type name: ``[("id", "bigint"), ("amount", "decimal(10,2)")]``.
        Each value is cast to its type's counterpart in the engine (``bigint``, ``numeric(10, 2)``,
        ``timestamp with time zone``, ...), so give values of that type.
    dialect : {'postgres', 'duckdb', 'spark', 'mysql'}
        The engine the SQL is for.

    Returns
    -------
    str
        One SQL expression of the engine's bytes type (``bytea``, ``BLOB``, ``BINARY``), 32 bytes, never NULL.

    Raises
    ------
    ValueError
        For an unknown dialect, a type name that cannot be read, or a type the dialect cannot hash exactly
        (naming the column, the type and the dialect).

    Examples
    --------
    >>> import duckdb
    >>> from hashexpr import reference
    >>> from hashexpr.sql import record_hash
    >>> sql = record_hash([("id", "bigint"), ("name", "string")], dialect="duckdb")
    >>> digest = duckdb.execute(f"SELECT {sql} FROM (SELECT 1 AS id, 'a' AS name)").fetchone()[0]
    >>> from hashexpr.types import LongType, StringType
    >>> digest == reference.record_hash([1, "a"], [LongType(), StringType()], algorithm="sha256")
    True
    """
    return write_record_hash(_dialect(dialect, "record_hash"), columns)


def write_record_hash(engine: Dialect, columns: Sequence[tuple[ColumnSpec, str | DataType]]) -> str:
    """:func:`record_hash` written by the :class:`Dialect` instance ``engine``."""
    parsed = parse_columns(columns, "record_hash")
    prefix = bytes([RECORD_VERSION]) + len(parsed).to_bytes(4, "little")
    parts = [engine.value(c.sql(engine), c.dtype, _where("record_hash", c)) for c in parsed]
    return engine.digest([engine.literal(prefix), *parts], parsed[0].sql(engine))


def record_key(
    columns: Sequence[tuple[ColumnSpec, str | DataType]],
    *,
    dialect: str,
    salt: str = "",
    trim: bool = False,
    case: str | None = None,
    empty_as_null: bool = False,
    null_key: str = "hash",
) -> str:
    """Return SQL for the business key of ``columns``: the jar's ``record_key_with('algorithm=sha256; ...', ...)``.

    Parameters
    ----------
    columns : sequence of (str, str) pairs
        The key parts in order, as for :func:`record_hash`.
    dialect : {'postgres', 'duckdb', 'spark', 'mysql'}
        The engine the SQL is for.
    salt : str, optional
        The salt (``salt=<text>``), written into the SQL as bytes.
    trim : bool, optional
        Remove U+0020 from both ends of string key parts.
    case : {'upper', 'lower'}, optional
        Map string key parts to upper or lower case. The SQL maps ASCII letters only, which is exact for ASCII
        text; a key part holding any other character fails the query (format section 9.1's mapping is not
        what engines' ``upper``/``lower`` do beyond ASCII).
    empty_as_null : bool, optional
        An empty string key part (after ``trim`` and ``case``) counts as NULL.
    null_key : {'hash', 'null', 'error'}, optional
        What a key whose parts are all NULL gives: its hash, NULL, or a failed query.

    Returns
    -------
    str
        One SQL expression of the engine's bytes type: 32 bytes, or NULL under ``null_key='null'``.

    Raises
    ------
    ValueError
        As :func:`record_hash`, and for options that ``record_key_with`` would refuse.

    Examples
    --------
    >>> import duckdb
    >>> from hashexpr import reference
    >>> from hashexpr.sql import record_key
    >>> sql = record_key([("code", "string")], dialect="duckdb", salt="hub", trim=True, case="upper")
    >>> digest = duckdb.execute(f"SELECT {sql} FROM (SELECT ' c-1 ' AS code)").fetchone()[0]
    >>> digest == reference.record_key(["C-1"], [StringType()], salt="hub", algorithm="sha256")
    True
    """
    engine = _dialect(dialect, "record_key")
    options = KeyOptions.of(salt, trim, case, empty_as_null, null_key)
    return write_record_key(engine, columns, options)


def write_record_key(engine: Dialect, columns: Sequence[tuple[ColumnSpec, str | DataType]], options: KeyOptions) -> str:
    """:func:`record_key` with checked ``options``, written by the :class:`Dialect` instance ``engine``."""
    salt, trim, case, empty_as_null, null_key = (
        options.salt,
        options.trim,
        options.case,
        options.empty_as_null,
        options.null_key,
    )
    parsed = parse_columns(columns, "record_key")
    normalises = trim or case is not None or empty_as_null
    parts, null_tests = [], []
    for c in parsed:
        where = _where("record_key", c)
        value = c.sql(engine)
        if normalises and isinstance(c.dtype, (StringType, VarcharType)):
            text = normalised(engine, engine.text(value), trim, case, empty_as_null, where)
            parts.append(engine.key_part(text))
            null_tests.append(engine.is_null(text, c.dtype))
        else:
            parts.append(engine.value(value, c.dtype, where))
            null_tests.append(engine.is_null(value, c.dtype))
    salt_bytes = salt.encode("utf-8")
    prefix = (
        bytes([KEY_RECORD, STRING])
        + len(salt_bytes).to_bytes(4, "little")
        + salt_bytes
        + len(parsed).to_bytes(4, "little")
    )
    witness = parsed[0].sql(engine)
    digest = engine.digest([engine.literal(prefix), *parts], witness)
    return null_key_guard(engine, null_key, EVERY_PART.join(null_tests), digest, witness)


#: What joins the NULL tests of the key parts.
EVERY_PART = " AND "


def null_key_guard(engine: Dialect, null_key: str, every_part_null: str, digest: str, witness: str) -> str:
    """The key ``digest`` under ``null_key`` when ``every_part_null`` holds (``witness``: the first key part)."""
    if null_key == "hash":
        return digest
    if null_key == "null":
        return f"CASE WHEN {every_part_null} THEN NULL ELSE {digest} END"
    message = (
        "hashexpr: record_key: every key part is NULL. Filter such rows out, or choose what they get with "
        "null_key=hash (a hash of the NULL key) or null_key=null (NULL)"
    )
    return f"CASE WHEN {every_part_null} THEN {engine.fail(message, witness)} ELSE {digest} END"


def normalised(
    engine: Dialect, text: str, trim: bool, case: str | None, empty_as_null: bool, where: str
) -> str:
    """A string key part after ``trim``, ``case`` and ``empty_as_null``, in that order (format section 9)."""
    if trim:
        text = engine.trim(text)
    if case is not None:
        text = engine.case_map(text, case, where)
    if empty_as_null:
        text = engine.empty_as_null(text)
    return text


def _dialect(name: str, function: str) -> Dialect:
    try:
        return dialect(name)
    except ValueError as exc:
        raise ValueError(f"{function}: {exc}") from None


def _where(function: str, c: Column) -> str:
    return f"{function}: {c.label}"
