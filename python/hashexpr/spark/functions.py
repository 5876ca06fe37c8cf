"""Column functions for hashexpr's SQL functions, in the style of :mod:`pyspark.sql.functions`.

Every function builds its column as a SQL expression when given column names, or with
:func:`pyspark.sql.functions.call_function` when given Columns, so the same code runs on classic PySpark and over
Spark Connect; the Spark side only needs hashexpr's jar (see :func:`configure`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Literal

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from hashexpr import jar_sql
from hashexpr.errors import HashExprNotInstalledError
from hashexpr.names import attribute_sql
from hashexpr.options import Algorithm, KeyOptions, flag, hash_options
from hashexpr.spark.types import is_column

ColumnOrName = Column | str

# Sessions known to have hashexpr's functions, checked once per session (weakly held: a freed session's id
# could be reused by a new session without the jar).
_installed: weakref.WeakSet = weakref.WeakSet()


def _to_column(c: ColumnOrName) -> Column:
    if is_column(c):
        return c
    if isinstance(c, str):
        return F.col(c)
    raise TypeError(f"expected a Column or a column name, got {type(c).__name__}: {c!r}")


def _call(function: str, options: str, cols: Sequence[ColumnOrName]) -> Column:
    """``function(cols)``, or ``function_with(options, cols)`` when there are options.

    Column names go in as SQL text: in classic PySpark each ``F.col`` costs about a dozen round trips to the
    JVM (DataFrame debugging records its call site), 0.11–0.13 s over 200 names; when every argument is a name, the
    whole call is one expression and one round trip.
    """
    called = f"{function}_with" if options else function
    _require(called)
    texts = [attribute_sql(c) if isinstance(c, str) else None for c in cols]
    # Options with a quote or a backslash would be written as hex, which would show in the column's name.
    if all(text is not None for text in texts) and jar_sql.plain(options):
        return F.expr(jar_sql.call(function, texts, options))
    columns = [F.expr(text) if text is not None else _to_column(c) for c, text in zip(cols, texts)]
    head = [F.lit(options)] if options else []
    return F.call_function(called, *head, *columns)


def _arrow() -> bool:
    """Whether the active session hashes through the Arrow path (no jar, or ``HASHEXPR_ENGINE=arrow``)."""
    from hashexpr.spark.arrow_path.engine import forced, uses_arrow

    chosen = forced()
    if chosen is not None:
        return chosen == "arrow"
    return SparkSession.getActiveSession() is not None and uses_arrow()


def _require(name: str) -> None:
    """Fail with a fix when the active session lacks hashexpr's functions (e.g. the jar is missing)."""
    spark = SparkSession.getActiveSession()
    if spark is None or spark in _installed:
        return
    if not spark.catalog.functionExists(name):
        raise HashExprNotInstalledError(name)
    _installed.add(spark)


def record_hash(
    *cols: ColumnOrName, by_name: bool = False, algorithm: Algorithm = "murmur3", secret: str | None = None
) -> Column:
    """Return the record hash of the given columns (hashexpr format v1): 16 bytes, or 32 with SHA-256.

    The hash is MurmurHash3 x64 128 of a null-safe, length-prefixed, type-tagged encoding of the values:
    NULLs, argument positions and the number of arguments count; map entry order, ``-0.0`` versus ``0.0``,
    NaN payloads and integer, float or decimal widening do not. See ``docs/FORMAT.md``.

    With ``by_name=True`` (SQL ``record_hash_by_name``) columns are identified by name instead of position:
    reordering columns does not change the hash, and adding a column that is NULL does not change it either,
    which keeps row hashes stable while a schema grows. NULL still differs from every value. A column goes by
    its name as the DataFrame's schema spells it (``"ID"`` names the column ``id``), any other expression by the
    name Spark shows for it (``upper(s)``), an aliased one by its alias (``docs/FORMAT.md``, section 6.1).

    Parameters
    ----------
    cols : :class:`~pyspark.sql.Column` or str
        One or more columns or column names; ``"*"`` stands for every column, in order.
    by_name : bool, optional
        Identify columns by name (default: by position).
    algorithm : {'murmur3', 'sha256', 'hmac-sha256'}, optional
        What the encoding is hashed with (``docs/SECURITY.md``): ``'murmur3'`` (default, 16 bytes) is the
        fastest and guards against accidents; ``'sha256'`` (32 bytes) also resists someone who crafts rows to
        collide; ``'hmac-sha256'`` (32 bytes) is keyed, for hashes of personal data.
    secret : str, optional
        With ``'hmac-sha256'``: the *name* of the key, which is the value of the Spark conf
        ``spark.hashexpr.secret.<name>``; the key itself never appears in the query.

    Returns
    -------
    :class:`~pyspark.sql.Column`
        A ``BINARY`` column of 16-byte (32-byte with SHA-256) values, never NULL.

    Examples
    --------
    >>> import hashexpr as hx
    >>> df = spark.createDataFrame([(1, "a"), (2, None)], "id INT, name STRING")
    >>> df.select(F.hex(hx.record_hash("id", "name")).alias("h")).first().h
    'BB9718ED625B2FC5763E75F3ABFD7C5A'
    >>> df.select((hx.record_hash("*") == hx.record_hash(df.id, df.name)).alias("same")).first().same
    True
    >>> wider = df.withColumn("added", F.lit(None).cast("date")).select("added", "name", "id")
    >>> wider.select(hx.record_hash("*", by_name=True)).collect() == df.select(
    ...     hx.record_hash("*", by_name=True)).collect()
    True
    >>> df.select(F.length(hx.record_hash("id", "name", algorithm="sha256")).alias("n")).first().n
    32
    """
    if not cols:
        raise ValueError("record_hash needs at least one column: pass column names, Columns, or '*'")
    function = "record_hash_by_name" if flag(by_name, "by_name", "record_hash") else "record_hash"
    options = "; ".join(hash_options(algorithm, secret, function))
    if _arrow():
        from hashexpr.spark.arrow_path.columns import hash_column

        return hash_column(function, cols, "by_name" if by_name else "positional", algorithm, secret)
    return _call(function, options, cols)


def record_key(
    *cols: ColumnOrName,
    salt: str | None = None,
    trim: bool = False,
    case: Literal["upper", "lower"] | None = None,
    empty_as_null: bool = False,
    null_key: Literal["hash", "null", "error"] = "hash",
    hash_single_field: bool = True,
    algorithm: Algorithm = "murmur3",
    secret: str | None = None,
) -> Column:
    """Return the hash of a business key (a hub key, an upsert key, a dedup key): 16 bytes, or 32 with SHA-256.

    Key parts are hashed positionally with the NULL-safe, type-tagged encoding of :func:`record_hash`, framed
    so that a key hash never equals a record hash (``docs/FORMAT.md``, section 9). Nothing is normalised
    unless asked for: normalisation makes ``' c-1 '`` and ``'C-1'`` the same key, which is right for keys
    typed by people and wrong for case-sensitive codes, so it is a decision per key. The options follow the
    grammar of ``record_key_with`` (``docs/KEYS.md``): flags are ``True`` or ``False`` (a string such as
    ``"no"`` is a TypeError), and words are read in any case (``case="UPPER"``).

    Parameters
    ----------
    cols : :class:`~pyspark.sql.Column` or str
        The key parts, in order.
    salt : str, optional
        Separates the hash space of one table (or hub) from others; change it to re-key a table.
    trim : bool, optional
        Remove spaces from both ends of string key parts.
    case : {'upper', 'lower', 'keep'}, optional
        Map string key parts to upper or lower case: the Unicode 14.0.0 full case mapping of Python 3.11's
        ``str.upper()`` / ``str.lower()``, independent of locale and of the Java version (``docs/FORMAT.md``,
        section 9.1).
    empty_as_null : bool, optional
        Treat an empty string key part (after ``trim``) as NULL.
    null_key : {'hash', 'null', 'error'}, optional
        What a key whose parts are all NULL gives: its hash (default; no row loses its key), NULL, or a
        failed query.
    hash_single_field : bool, optional
        With ``False`` and a single key column, return that column's raw value instead of a hash (as
        warehouse loaders offer for natural keys); it cannot be combined with several columns or other options.
    algorithm : {'murmur3', 'sha256', 'hmac-sha256'}, optional
        As in :func:`record_hash`. Keys that someone else can choose (sign-up forms, partner feeds) call for
        ``'sha256'``; keys that are personal data (emails, national ids) for ``'hmac-sha256'``, whose hashes
        cannot be reversed by trying likely values without the key.
    secret : str, optional
        With ``'hmac-sha256'``: the name of the Spark conf ``spark.hashexpr.secret.<name>`` holding the key.

    Returns
    -------
    :class:`~pyspark.sql.Column`
        A ``BINARY`` column of 16-byte (32-byte with SHA-256) key hashes (or the raw key column).

    Examples
    --------
    >>> import hashexpr as hx
    >>> df = spark.createDataFrame([(" c-042 ",), ("C-042",)], "customer STRING")
    >>> keys = df.select(hx.record_key("customer", trim=True, case="upper").alias("k")).collect()
    >>> keys[0].k == keys[1].k
    True
    >>> df.select(hx.record_key("customer", hash_single_field=False).alias("k")).first().k
    ' c-042 '
    """
    if not cols:
        raise ValueError("record_key needs at least one key column")
    key = KeyOptions.of(salt, trim, case, empty_as_null, null_key)
    options = "; ".join([*key.items, *hash_options(algorithm, secret, "record_key")])
    if not flag(hash_single_field, "hash_single_field", "record_key"):
        if len(cols) != 1 or cols[0] == "*":
            raise ValueError(
                "hash_single_field=False returns a raw key value, so it needs exactly one key column; "
                f"got {len(cols)}: hash composite keys, or pass a single column"
            )
        if options:
            raise ValueError(
                "hash_single_field=False returns the raw key value, which salt, trim, case, empty_as_null, "
                "null_key and algorithm cannot apply to: normalise the column in the query instead"
            )
        return _to_column(cols[0])
    if _arrow():
        from hashexpr.spark.arrow_path.columns import hash_column

        return hash_column("record_key", cols, "key", algorithm, secret, key)
    return _call("record_key", options, cols)


def normalize_key(
    col: ColumnOrName,
    *,
    trim: bool = False,
    case: Literal["upper", "lower", "keep"] | None = None,
    empty_as_null: bool = False,
) -> Column:
    """Return a key part as :func:`record_key` hashes it under the same options: the SQL ``normalize_key``.

    A top-level string is trimmed of spaces, case-mapped (the frozen Unicode 14.0.0 mapping of
    ``docs/FORMAT.md``, section 9.1) and turned into NULL when empty, each only when asked for; any other value
    is returned as it is. Two spellings are one business key under these options exactly when their normalised
    parts are equal, so this is what to compare, group or join business keys on (``find_collisions`` does).

    Parameters
    ----------
    col : :class:`~pyspark.sql.Column` or str
        A key part.
    trim, case, empty_as_null : optional
        As in :func:`record_key`.

    Returns
    -------
    :class:`~pyspark.sql.Column`
        The normalised part, of the part's type; the part itself when no option normalises.

    Examples
    --------
    >>> import hashexpr as hx
    >>> df = spark.createDataFrame([(" n10156 ",), ("stra\\u00dfe",)], "s STRING")
    >>> [r[0] for r in df.select(hx.normalize_key("s", trim=True, case="upper")).collect()]
    ['N10156', 'STRASSE']
    """
    options = KeyOptions.of(trim=trim, case=case, empty_as_null=empty_as_null, function="normalize_key")
    if not options.normalizes:
        return _to_column(col)
    if _arrow():
        from hashexpr.spark.arrow_path.columns import normalize_column

        return normalize_column(col, options)
    _require("normalize_key")
    return F.call_function("normalize_key", F.lit(options.normalization), _to_column(col))
