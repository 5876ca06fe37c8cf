"""Hash-key collisions: detect them, resolve them row by row, and estimate how likely they are.

A hub (or any table keyed by :func:`~hashexpr.record_key`) stores one hash key per business key. Two things
can break that one-to-one mapping, and a ``unique`` test on the hash key catches neither, because the
colliding business keys have already merged into one hash:

* a **collision**: two different business keys share one hash key;
* an **inconsistency**: one business key has several hash keys, typically because loads used different
  normalisation (``trim``, ``case``), salts or hash functions.

:func:`find_collisions` reports both. A collision is then resolved as Data Vault practice does it: detect,
then record an exception (business key -> replacement hash key) and apply it on every load with
:func:`resolve_collisions`; :func:`collision_exceptions` builds that table with a salted re-hash. See
``docs/KEYS.md``. Column names (``key``, ``hash_col``) are taken literally, as :mod:`hashexpr.names` describes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import CharType, DataType, StringType, StructType, VarcharType

from hashexpr.definitions import METADATA_KEY, Definition
from hashexpr.names import Resolver, column, quote, resolve
from hashexpr.options import KeyOptions, parse_normalization
from hashexpr.spark.functions import normalize_key, record_key

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: ``kind`` of a hash key shared by several business keys.
COLLISION = "collision"
#: ``kind`` of a business key stored under several hash keys.
INCONSISTENT = "inconsistent"
#: The column of an exception table that holds the replacement hash key.
REPLACEMENT_COLUMN = "replacement_key"
#: The column of an exception table that holds the normalisation its business keys are compared under.
NORMALIZATION_COLUMN = "normalization"

KeyColumns = str | Sequence[str]

# Internal column names; the "__hx_" prefix keeps them apart from user columns.
_BK = "__hx_business_key"
_HK = "__hx_hash_key"
_N = "__hx_rows"
_MATCHED = "__hx_matched"


def _key_names(key: KeyColumns) -> list[str]:
    names = [key] if isinstance(key, str) else list(key)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"key must be a column name or a non-empty sequence of column names, got {key!r}")
    if len({n.lower() for n in names}) != len(names):
        raise ValueError(f"key names a column more than once: {names}")
    return names


def _recorded_normalization(df: DataFrame, hash_col: str) -> KeyOptions | None:
    """The normalisation a stored hash key column records (written by with_metadata), if it records one."""
    definition = Definition.of(df.schema[hash_col].metadata)
    if definition is None or definition.function != "record_key":
        return None
    options = definition.key_options
    return KeyOptions(
        trim=bool(options.get("trim")),
        case=options.get("case"),
        empty_as_null=bool(options.get("empty_as_null")),
    )


def _normalization(
    given: KeyOptions | None, recorded: KeyOptions | None, function: str, source: str
) -> KeyOptions:
    """The normalisation to compare business keys under: as given, else as recorded; both must agree."""
    if given is not None and recorded is not None and given.normalization != recorded.normalization:
        raise ValueError(
            f"{function}: the key options ask for normalisation {given.normalization or 'none'!r}, but {source} "
            f"records {recorded.normalization or 'none'!r}: pass the options the hash keys were made with, or none"
        )
    return given or recorded or KeyOptions()


def _given(trim: object, case: object, empty_as_null: object, function: str) -> KeyOptions | None:
    """The normalisation the caller asked for, or None when it passed none of the three options."""
    if trim is None and case is None and empty_as_null is None:
        return None
    return KeyOptions.of(
        trim=False if trim is None else trim,
        case=case,
        empty_as_null=False if empty_as_null is None else empty_as_null,
        function=function,
    )


def _key_part(name: str, options: KeyOptions, dtype: DataType) -> Column:
    """A key part as record_key sees it: a top-level string normalised as ``options`` ask (``normalize_key``);
    a part of another type is what record_key hashes already."""
    if not isinstance(dtype, (StringType, CharType, VarcharType)):
        return column(name)
    return normalize_key(column(name), **options.normalizing).alias(name)


def _key_parts(names: list[str], options: KeyOptions, schema: StructType) -> list[Column]:
    """:func:`_key_part` of each of the top-level columns ``names`` (as resolved), typed by ``schema``."""
    types = {field.name: field.dataType for field in schema.fields}
    return [_key_part(n, options, types[n]) for n in names]


def _business_key(key: list[str], options: KeyOptions, schema: StructType) -> Column:
    # Spellings that one normalisation maps to one key are one business key, not a collision.
    return F.struct(*_key_parts(key, options, schema))


def find_collisions(
    df: DataFrame,
    key: KeyColumns,
    hash_col: str | None = None,
    *,
    salt: str | None = None,
    trim: bool | None = None,
    case: str | None = None,
    empty_as_null: bool | None = None,
    null_key: str = "hash",
    algorithm: str = "murmur3",
    secret: str | None = None,
) -> DataFrame:
    """Return the hash keys shared by several business keys, and the business keys with several hash keys.

    With ``hash_col``, the stored hash key column of ``df`` (a hub, a staged load) is checked against the
    business key columns; without it, the hash key is computed with :func:`~hashexpr.record_key` over
    ``key`` (with ``salt`` and the key options), which checks a key definition before it is used. Business keys
    are compared after the normalisation the key options ask for (``trim``, ``case``, ``empty_as_null``), as
    :func:`~hashexpr.record_key` normalises them: ``' c-1'`` and ``'C-1'`` under ``trim=True, case='upper'``
    are one business key, reported as ``'C-1'``. With ``hash_col``, pass the options its hash keys were made
    with; a column written by :func:`~hashexpr.spark.metadata.with_metadata` records them, and they are used when
    none are passed. Business keys are compared NULL-safely (a NULL key part equals a NULL key part); rows whose
    hash key is NULL have no hash key to check and are skipped. The distinct (business key, hash key) pairs are
    shuffled once, then grouped both ways.

    Parameters
    ----------
    df : :class:`~pyspark.sql.DataFrame`
        The rows to check.
    key : str or sequence of str
        The business key column name(s).
    hash_col : str, optional
        The stored hash key column; default: compute it.
    salt, null_key : optional
        Options of the computed hash key (see :func:`~hashexpr.record_key`); with ``hash_col`` they describe how
        the stored keys were made and change nothing.
    trim, case, empty_as_null : optional
        The key's normalisation (see :func:`~hashexpr.record_key`): which spellings are one business key.
    algorithm, secret : str, optional
        The algorithm of the computed hash key; not with ``hash_col``, which is checked as it is.

    Returns
    -------
    :class:`~pyspark.sql.DataFrame`
        One row per problem, none when the mapping is one-to-one:

        * ``kind`` STRING: ``'collision'`` (one hash key, several business keys) or ``'inconsistent'``
          (one business key, several hash keys);
        * ``hash_keys`` ARRAY<BINARY>: the hash key(s) involved, sorted;
        * ``business_keys`` ARRAY<STRUCT<key columns>>: the business key(s) involved, normalised, sorted;
        * ``rows`` BIGINT: the number of rows of ``df`` involved.

        ``business_keys`` records the normalisation in its metadata, for :func:`collision_exceptions`.

    Examples
    --------
    >>> from hashexpr.spark.collisions import find_collisions
    >>> hub = spark.createDataFrame(
    ...     [("A", b"k1"), ("B", b"k1"), ("C", b"k2"), ("C", b"k3"), ("D", b"k4")], "id STRING, hk BINARY")
    >>> for r in find_collisions(hub, "id", hash_col="hk").collect():
    ...     print(r.kind, [bytes(h) for h in r.hash_keys], [b.id for b in r.business_keys], r.rows)
    collision [b'k1'] ['A', 'B'] 2
    inconsistent [b'k2', b'k3'] ['C'] 2
    >>> find_collisions(hub, "id").count()
    0
    >>> import hashexpr as hx
    >>> stored = spark.createDataFrame([(" n1 ",), ("N1",)], "tailnum STRING").select(
    ...     "tailnum", hx.record_key("tailnum", trim=True, case="upper").alias("hk"))
    >>> find_collisions(stored, "tailnum", hash_col="hk").first().kind
    'collision'
    >>> find_collisions(stored, "tailnum", hash_col="hk", trim=True, case="upper").count()
    0
    """
    function = "find_collisions"
    names = resolve(df, _key_names(key), function)
    given = _given(trim, case, empty_as_null, function)
    chosen = given or KeyOptions()
    # Checked even where they change nothing (with hash_col): a typo never passes silently.
    options = KeyOptions.of(salt, chosen.trim, chosen.case, chosen.empty_as_null, null_key, function=function)
    if hash_col is None:
        normalization = options
        hash_key = record_key(*map(quote, names), **options.as_kwargs(), algorithm=algorithm, secret=secret)
    else:
        if (algorithm, secret) != ("murmur3", None):
            raise ValueError(
                f"{function}: algorithm and secret describe a computed hash key; a stored hash_col is checked as "
                "it is: drop them, or drop hash_col to compute the keys"
            )
        hash_col = resolve(df, [hash_col], function)[0]
        normalization = _normalization(
            given, _recorded_normalization(df, hash_col), function, f"{hash_col!r}"
        )
        hash_key = column(hash_col)
    pairs = (
        df.select(_business_key(names, normalization, df.schema).alias(_BK), hash_key.alias(_HK))
        .where(F.col(_HK).isNotNull())
        .groupBy(_BK, _HK)
        .agg(F.count(F.lit(1)).alias(_N))
    )
    collisions = (
        pairs.groupBy(_HK)
        .agg(F.array_sort(F.collect_list(_BK)).alias("business_keys"), F.sum(_N).alias("rows"))
        .where(F.size("business_keys") > 1)
        .select(F.lit(COLLISION).alias("kind"), F.array(_HK).alias("hash_keys"), "business_keys", "rows")
    )
    inconsistent = (
        pairs.groupBy(_BK)
        .agg(F.array_sort(F.collect_list(_HK)).alias("hash_keys"), F.sum(_N).alias("rows"))
        .where(F.size("hash_keys") > 1)
        .select(F.lit(INCONSISTENT).alias("kind"), "hash_keys", F.array(_BK).alias("business_keys"), "rows")
    )
    # ``pairs`` is distinct per (business key, hash key), so collect_list holds no duplicates. The problems
    # are few: one partition sorts them without the sampling job a global orderBy would start.
    found = collisions.unionByName(inconsistent).repartition(1).sortWithinPartitions("kind", "hash_keys")
    return found.select(
        "kind",
        "hash_keys",
        F.col("business_keys").alias("business_keys", metadata=_marked(normalization)),
        "rows",
    )


def _marked(normalization: KeyOptions) -> dict[str, Any]:
    """The metadata of ``business_keys``: the normalisation its keys went through."""
    return {METADATA_KEY: {"normalization": normalization.normalization}}


def _found_normalization(collisions: DataFrame) -> KeyOptions | None:
    """The normalisation find_collisions recorded on ``business_keys``, if the frame has it."""
    entry = (collisions.schema["business_keys"].metadata or {}).get(METADATA_KEY) or {}
    text = entry.get("normalization")
    return None if text is None else parse_normalization(text, "collision_exceptions")


def collision_exceptions(
    collisions: DataFrame,
    *,
    salt: str,
    keep: str = "first",
    trim: bool | None = None,
    case: str | None = None,
    empty_as_null: bool | None = None,
    null_key: str = "hash",
    algorithm: str = "murmur3",
    secret: str | None = None,
) -> DataFrame:
    """Build an exception table (business key -> replacement hash key) from :func:`find_collisions` output.

    For every ``'collision'`` row, one business key keeps the shared hash key and every other one gets a
    replacement: :func:`~hashexpr.record_key` of the same key parts under ``salt``, a hash space unrelated to
    the unsalted one. The normalisation (``trim``, ``case``, ``empty_as_null``) is the one
    :func:`find_collisions` compared the business keys under, which its output records; options given here
    must agree with it. ``'inconsistent'`` rows are left out: a business key with several hash keys needs its
    table re-keyed under one definition, not an exception.

    Parameters
    ----------
    collisions : :class:`~pyspark.sql.DataFrame`
        The output of :func:`find_collisions`.
    salt : str
        The salt of the replacement hash keys; not empty, and never the salt of the original keys.
    keep : {'first', 'none'}, optional
        ``'first'`` (default): the first business key in sort order keeps the shared hash key, so only the
        others need rewriting; ``'none'``: every colliding business key gets a replacement.
    trim, case, empty_as_null, null_key, algorithm, secret : optional
        :func:`~hashexpr.record_key` options of the replacement keys, as the hash keys were made.

    Returns
    -------
    :class:`~pyspark.sql.DataFrame`
        The business key columns, ``replacement_key`` (BINARY) and ``normalization`` (STRING, the
        normalisation items, e.g. ``'trim; case=upper'``, which :func:`resolve_collisions` applies), one row per
        business key to re-key.

    Examples
    --------
    >>> import hashexpr as hx
    >>> from hashexpr.spark.collisions import find_collisions, collision_exceptions
    >>> hub = spark.createDataFrame([("A", b"k1"), ("B", b"k1"), ("C", b"k2")], "id STRING, hk BINARY")
    >>> exceptions = collision_exceptions(find_collisions(hub, "id", hash_col="hk"), salt="c1")
    >>> [(r.id, r.replacement_key == hub.select(hx.record_key(F.lit("B"), salt="c1")).first()[0], r.normalization)
    ...  for r in exceptions.collect()]
    [('B', True, '')]
    """
    function = "collision_exceptions"
    if not salt:
        raise ValueError(f"{function} needs a non-empty salt: it separates replacement keys from the rest")
    if keep not in ("first", "none"):
        raise ValueError(f"keep must be 'first' or 'none', got {keep!r}")
    given = _given(trim, case, empty_as_null, function)
    normalization = _normalization(given, _found_normalization(collisions), function, "the collisions")
    options = KeyOptions.of(
        salt, normalization.trim, normalization.case, normalization.empty_as_null, null_key, function=function
    )
    keys = collisions.where(F.col("kind") == COLLISION).select(
        F.posexplode("business_keys").alias("position", _BK)
    )
    if keep == "first":
        # business_keys is sorted, so position 0 is the same business key on every run.
        keys = keys.where(F.col("position") > 0)
    keys = keys.select(f"{_BK}.*").distinct()
    replacement = record_key(
        *map(quote, keys.columns), **options.as_kwargs(), algorithm=algorithm, secret=secret
    )
    return keys.select(
        *map(column, keys.columns),
        replacement.alias(REPLACEMENT_COLUMN),
        F.lit(normalization.normalization).alias(NORMALIZATION_COLUMN),
    )


def _check_exceptions(exceptions: DataFrame, names: list[str], normalized: str | None) -> KeyOptions:
    """Refuse a business key listed twice; return the one normalisation the table's rows record."""
    # A business key listed twice would duplicate its rows in the join below.
    duplicate = exceptions.groupBy(*map(column, names)).count().where(F.col("count") > 1).limit(1).collect()
    if duplicate:
        listed = {n: duplicate[0][n] for n in names}
        raise ValueError(f"exceptions lists the business key {listed} more than once")
    if normalized is None:
        return KeyOptions()
    found = [r[0] for r in exceptions.select(column(normalized)).distinct().limit(2).collect()]
    if len(found) > 1:
        raise ValueError(
            f"resolve_collisions: the exceptions' {normalized} column holds several normalisations, {found}: "
            "one exception table serves one key definition"
        )
    return parse_normalization(found[0] if found and found[0] is not None else "", "resolve_collisions")


def resolve_collisions(
    df: DataFrame,
    key: KeyColumns,
    exceptions: DataFrame,
    hash_col: str = "hash_key",
) -> DataFrame:
    """Replace the hash key of the business keys listed in an exception table.

    Each row of ``df`` whose business key (normalised as the table's ``normalization`` says, then matched
    NULL-safely, part by part) is in ``exceptions`` gets that row's ``replacement_key`` in ``hash_col``; every
    other row, and the column order, stay as they are. So every spelling of a re-keyed business key gets the
    replacement, never one spelling alone. Apply it on every load after the hash key is computed, so a
    re-keyed business key never comes back under its colliding hash. The exception table is small and is
    broadcast; it is checked first (one small Spark job) to list each business key once, under one
    normalisation. A table without a ``normalization`` column compares the business keys as they are.

    Parameters
    ----------
    df : :class:`~pyspark.sql.DataFrame`
        Rows with business key columns and a hash key column.
    key : str or sequence of str
        The business key column name(s), in ``df`` and in ``exceptions``.
    exceptions : :class:`~pyspark.sql.DataFrame`
        The business key columns, ``replacement_key`` and ``normalization`` (see :func:`collision_exceptions`).
    hash_col : str, optional
        The hash key column of ``df`` to rewrite (default ``'hash_key'``).

    Returns
    -------
    :class:`~pyspark.sql.DataFrame`
        ``df`` with ``hash_col`` replaced where an exception applies.

    Examples
    --------
    >>> from hashexpr.spark.collisions import resolve_collisions
    >>> rows = spark.createDataFrame([("A", b"k1"), ("B", b"k1"), (None, b"k0")], "id STRING, hash_key BINARY")
    >>> exceptions = spark.createDataFrame([("B", b"k9"), (None, b"kn")], "id STRING, replacement_key BINARY")
    >>> sorted((r.id or "-", bytes(r.hash_key)) for r in resolve_collisions(rows, "id", exceptions).collect())
    [('-', b'kn'), ('A', b'k1'), ('B', b'k9')]
    """
    function = "resolve_collisions"
    names = resolve(df, _key_names(key), function)
    hash_col = resolve(df, [hash_col], function)[0]
    listed = resolve(exceptions, names + [REPLACEMENT_COLUMN], function, "exceptions")
    normalized = Resolver.of(exceptions).find(NORMALIZATION_COLUMN)
    normalization = _check_exceptions(exceptions, listed[:-1], normalized)
    aliases = [f"__hx_exception_{i}" for i in range(len(names))]
    # The marker tells a matched row from an unmatched one even when the matched business key is all NULL.
    table = exceptions.select(
        *(
            part.alias(a)
            for part, a in zip(_key_parts(listed[:-1], normalization, exceptions.schema), aliases)
        ),
        column(listed[-1]).alias(_HK),
        F.lit(True).alias(_MATCHED),
    )
    condition = [
        part.eqNullSafe(table[a]) for part, a in zip(_key_parts(names, normalization, df.schema), aliases)
    ]
    joined = df.join(F.broadcast(table), on=condition, how="left")
    replaced = F.when(F.col(_MATCHED), F.col(_HK)).otherwise(df[quote(hash_col)])
    return joined.select(*(replaced.alias(c) if c == hash_col else df[quote(c)] for c in df.columns))


def collision_probability(n_rows: int, bits: int = 128) -> float:
    """Return the probability that ``n_rows`` distinct keys hashed to ``bits`` bits contain a collision.

    The birthday bound ``1 - exp(-n(n-1) / 2^(bits+1))`` for a uniform hash, computed as
    ``-expm1(-x)`` so that tiny probabilities (``1e-21``) keep their precision instead of rounding to 0.

    Parameters
    ----------
    n_rows : int
        The number of distinct keys.
    bits : int, optional
        The hash width in bits (default 128, the width of :func:`~hashexpr.record_key`).

    Returns
    -------
    float
        A probability in ``[0, 1]``.

    Examples
    --------
    >>> from hashexpr.spark.collisions import collision_probability
    >>> f"{collision_probability(10**9):.3g}"
    '1.47e-21'
    >>> f"{collision_probability(10**9, bits=64):.3g}"
    '0.0267'
    >>> collision_probability(1)
    0.0
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 0:
        raise ValueError(f"n_rows must be an int >= 0, got {n_rows!r}")
    if isinstance(bits, bool) or not isinstance(bits, int) or bits < 1:
        raise ValueError(f"bits must be an int >= 1, got {bits!r}")
    # Python ints keep n(n-1) exact; int / int rounds once to the nearest float.
    exponent = n_rows * (n_rows - 1) / 2 ** (bits + 1)
    return -math.expm1(-exponent)
