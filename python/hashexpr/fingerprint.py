"""Dataset fingerprints: one order-independent value for a whole DataFrame, or for each group of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from hashexpr.functions import ColumnOrName, _require
from hashexpr.names import column, resolve
from hashexpr.spark_types import is_column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: The name of the fingerprint column that :func:`fingerprints_by` adds.
FINGERPRINT_COLUMN = "fingerprint"


def dataset_fingerprint(df: DataFrame) -> str:
    """Return the fingerprint of every row and column of ``df``.

    The value is ``'hx1:'`` and 64 hex digits: a SHA-256 over the row count, the sum (mod 2^128) of every row's
    ``record_hash`` and a digest of the column names and types (``docs/FORMAT.md``, section 5). It does not
    depend on row order or partitioning; it changes when a value, a row, a duplicate row, a column name or a
    column type changes. One Spark job, no shuffle of the rows.

    Parameters
    ----------
    df : :class:`~pyspark.sql.DataFrame`
        The data to fingerprint.

    Returns
    -------
    str
        The fingerprint, e.g. ``'hx1:13f2...'``.

    Examples
    --------
    >>> import hashexpr as hx
    >>> a = spark.createDataFrame([(1, "x"), (2, "y")], "id INT, s STRING")
    >>> b = spark.createDataFrame([(2, "y"), (1, "x")], "id INT, s STRING")
    >>> hx.dataset_fingerprint(a) == hx.dataset_fingerprint(b)
    True
    >>> hx.dataset_fingerprint(a) == hx.dataset_fingerprint(a.union(a))
    False
    """
    _require("dataset_fingerprint")
    return df.agg(F.call_function("dataset_fingerprint", F.col("*"))).first()[0]


def fingerprints_by(df: DataFrame, *by: ColumnOrName) -> DataFrame:
    """Return one fingerprint per group: the ``by`` columns and a ``fingerprint`` column.

    Each group's fingerprint is :func:`dataset_fingerprint` of that group's rows (every column of ``df``), so
    comparing two snapshots group by group finds the groups (partitions, days, buckets) that changed.

    Parameters
    ----------
    df : :class:`~pyspark.sql.DataFrame`
        The data to fingerprint.
    by : :class:`~pyspark.sql.Column` or str
        One or more grouping columns or column names; a name is taken literally (``'a.b'`` is the column
        named ``a.b``), matched as Spark matches names.

    Returns
    -------
    :class:`~pyspark.sql.DataFrame`
        The grouping columns and a ``fingerprint`` string column, one row per group.

    Examples
    --------
    >>> import hashexpr as hx
    >>> df = spark.createDataFrame([("a", 1), ("a", 2), ("b", 3)], "k STRING, v INT")
    >>> rows = hx.fingerprints_by(df, "k").orderBy("k").collect()
    >>> [r.k for r in rows], rows[0].fingerprint == hx.dataset_fingerprint(df.where("k = 'a'"))
    (['a', 'b'], True)
    """
    if not by:
        raise ValueError("fingerprints_by needs at least one grouping column; use dataset_fingerprint for all rows")
    for c in by:
        if not (is_column(c) or isinstance(c, str)):
            raise TypeError(f"fingerprints_by: by takes Columns or column names, got {type(c).__name__}: {c!r}")
    _require("dataset_fingerprint")
    named = iter(resolve(df, [c for c in by if isinstance(c, str)], "fingerprints_by"))
    groups = [column(next(named)) if isinstance(c, str) else c for c in by]
    fingerprint = F.call_function("dataset_fingerprint", *map(column, df.columns))
    return df.groupBy(*groups).agg(fingerprint.alias(FINGERPRINT_COLUMN))
