"""Column functions for hashexpr's SQL functions, in the style of :mod:`pyspark.sql.functions`.

Every function builds its column with :func:`pyspark.sql.functions.call_function`, so the same code runs on
classic PySpark and over Spark Connect; the Spark side only needs hashexpr's jar (see :func:`configure`).
"""

from __future__ import annotations

from typing import Union

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from hashexpr.errors import HashExprNotInstalledError

ColumnOrName = Union[Column, str]

# Sessions known to have hashexpr's functions; checked once per session.
_installed: set[int] = set()


def _to_column(c: ColumnOrName) -> Column:
    if isinstance(c, Column):
        return c
    if isinstance(c, str):
        return F.col(c)
    raise TypeError(f"expected a Column or a column name, got {type(c).__name__}: {c!r}")


def _require(name: str) -> None:
    """Fail with a fix when the active session lacks hashexpr's functions (e.g. the jar is missing)."""
    spark = SparkSession.getActiveSession()
    if spark is None or id(spark) in _installed:
        return
    if not spark.catalog.functionExists(name):
        raise HashExprNotInstalledError(name)
    _installed.add(id(spark))


def record_hash(*cols: ColumnOrName, by_name: bool = False) -> Column:
    """Return the 16-byte record hash of the given columns (hashexpr format v1).

    The hash is MurmurHash3 x64 128 of a null-safe, length-prefixed, type-tagged encoding of the values:
    NULLs, argument positions and the number of arguments count; map entry order, ``-0.0`` versus ``0.0``,
    NaN payloads and integer, float or decimal widening do not. See ``docs/FORMAT.md``.

    With ``by_name=True`` (SQL ``record_hash_by_name``) columns are identified by name instead of position:
    reordering columns does not change the hash, and adding a column that is NULL does not change it either,
    which keeps row hashes stable while a schema grows. NULL still differs from every value.

    Parameters
    ----------
    cols : :class:`~pyspark.sql.Column` or str
        One or more columns or column names; ``"*"`` stands for every column, in order.
    by_name : bool, optional
        Identify columns by name (default: by position).

    Returns
    -------
    :class:`~pyspark.sql.Column`
        A ``BINARY`` column of 16-byte values, never NULL.

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
    """
    if not cols:
        raise ValueError("record_hash needs at least one column: pass column names, Columns, or '*'")
    name = "record_hash_by_name" if by_name else "record_hash"
    _require(name)
    return F.call_function(name, *(_to_column(c) for c in cols))
