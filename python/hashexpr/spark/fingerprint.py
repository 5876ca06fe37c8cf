"""Dataset fingerprints: one order-independent value for a whole DataFrame, or for each group of it, and the
state a fingerprint is computed from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column

from hashexpr.fingerprints import FingerprintState
from hashexpr.names import column, quote, resolve
from hashexpr.options import (
    FINGERPRINT_COLUMN,
    FingerprintAlgorithm,
    check_fingerprint_options,
)
from hashexpr.reference.types import spark_type_string
from hashexpr.spark.functions import ColumnOrName, _arrow, _call
from hashexpr.spark.types import is_column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

def _fingerprint_column(
    cols: list[ColumnOrName], algorithm: str = "murmur3", secret: str | None = None
) -> Column:
    """``dataset_fingerprint(cols)``, or ``dataset_fingerprint_with(options, cols)`` for lthash16."""
    algorithm, secret = check_fingerprint_options(algorithm, secret)
    if algorithm == "murmur3":
        return _call("dataset_fingerprint", "", cols)
    return _call("dataset_fingerprint", "algorithm=lthash16" + (f"; secret={secret}" if secret else ""), cols)


def dataset_fingerprint(
    df: DataFrame, algorithm: FingerprintAlgorithm = "murmur3", secret: str | None = None
) -> str:
    """Return the fingerprint of every row and column of ``df``.

    The value is ``'hx1:'`` and 64 hex digits: a SHA-256 over the row count, the sum (mod 2^128) of every row's
    ``record_hash`` and a digest of the column names and types (``docs/FORMAT.md``, section 5). It does not
    depend on row order or partitioning; it changes when a value, a row, a duplicate row, a column name or a
    column type changes. One Spark job, no shuffle of the rows.

    That sum guards against accidents, not against someone who controls rows: generalized-birthday attacks find
    different tables with equal sums. ``algorithm='lthash16'`` resists them (``docs/SECURITY.md``): each row's
    SHA-256 record hash is expanded into 1024 16-bit lanes, summed lane by lane (LtHash16, section 11), and
    the value starts ``'hx1-lthash16:'``; with ``secret``, rows are hashed with HMAC-SHA-256 under the key in
    ``spark.hashexpr.secret.<secret>`` and the value starts ``'hx1-lthash16-hmac:'``. It costs more per row.

    Parameters
    ----------
    df : :class:`~pyspark.sql.DataFrame`
        The data to fingerprint.
    algorithm : str, optional
        ``'murmur3'`` (the default) or ``'lthash16'``.
    secret : str, optional
        With ``'lthash16'``: the name of the secret whose key hashes the rows (never the key itself).

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
    >>> hx.dataset_fingerprint(a, algorithm="lthash16") == hx.dataset_fingerprint(b, algorithm="lthash16")
    True
    >>> hx.dataset_fingerprint(a, algorithm="lthash16")[:13]
    'hx1-lthash16:'
    """
    if _arrow():
        from hashexpr.spark.arrow_path.fingerprints import state

        chosen, secret = check_fingerprint_options(algorithm, secret)
        return state(df, chosen, secret, "dataset_fingerprint").fingerprint
    fingerprint = _fingerprint_column(["*"], algorithm, secret)
    return df.agg(fingerprint).first()[0]


def fingerprints_by(
    df: DataFrame, *by: ColumnOrName, algorithm: FingerprintAlgorithm = "murmur3", secret: str | None = None
) -> DataFrame:
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
    algorithm, secret : str, optional
        As for :func:`dataset_fingerprint`.

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
        raise ValueError(
            "fingerprints_by needs at least one grouping column; use dataset_fingerprint for all rows"
        )
    for c in by:
        if not (is_column(c) or isinstance(c, str)):
            raise TypeError(
                f"fingerprints_by: by takes Columns or column names, got {type(c).__name__}: {c!r}"
            )
    if _arrow():
        from hashexpr.spark.arrow_path.fingerprints import fingerprints_by as arrow_fingerprints_by

        chosen, secret = check_fingerprint_options(algorithm, secret, "fingerprints_by")
        named = iter(resolve(df, [c for c in by if isinstance(c, str)], "fingerprints_by"))
        keys = [next(named) if isinstance(c, str) else c for c in by]
        return arrow_fingerprints_by(df, keys, chosen, secret, "fingerprints_by")
    fingerprint = _fingerprint_column(list(map(quote, df.columns)), algorithm, secret)
    named = iter(resolve(df, [c for c in by if isinstance(c, str)], "fingerprints_by"))
    groups = [column(next(named)) if isinstance(c, str) else c for c in by]
    return df.groupBy(*groups).agg(fingerprint.alias(FINGERPRINT_COLUMN))


def fingerprint_state(
    df: DataFrame,
    *cols: ColumnOrName,
    algorithm: FingerprintAlgorithm = "murmur3",
    secret: str | None = None,
) -> FingerprintState:
    """Return what the fingerprint of ``df`` (or of the columns ``cols``) is computed from: its row count, and the
    sum of the rows' hashes or their LtHash16 lanes.

    ``state.fingerprint`` is :func:`dataset_fingerprint` of ``df.select(*cols)``. States add and subtract as the
    multisets of their rows do (``a + b``, ``a - b``), so the fingerprint of a table after a change is its state
    before, plus the state of the rows added, minus that of the rows removed, equal byte for byte to a full
    recompute; ``state.to_json()`` keeps it, and :meth:`FingerprintState.from_json` reads it back in Spark or in
    the Rust engine (``docs/FINGERPRINTS.md``). One Spark job, one aggregate: ``dataset_fingerprint_state``.

    Parameters
    ----------
    df : :class:`~pyspark.sql.DataFrame`
        The data.
    cols : :class:`~pyspark.sql.Column` or str, optional
        The columns, as ``df.select`` takes them (default: every column); the fingerprint names each as the
        selected frame does.
    algorithm, secret : str, optional
        As for :func:`dataset_fingerprint`; a keyed state records the secret's name, never its key.

    Returns
    -------
    :class:`FingerprintState`

    Examples
    --------
    >>> import hashexpr as hx
    >>> df = spark.createDataFrame([(1, "x"), (2, "y"), (2, "y")], "id INT, s STRING")
    >>> state = hx.fingerprint_state(df)
    >>> state.count, state.fingerprint == hx.dataset_fingerprint(df)
    (3, True)
    >>> added = hx.fingerprint_state(spark.createDataFrame([(3, "z")], "id INT, s STRING"))
    >>> (state + added).fingerprint == hx.dataset_fingerprint(df.union(spark.createDataFrame([(3, "z")], df.schema)))
    True
    >>> hx.fingerprint_state(df, "id", algorithm="lthash16").columns
    (('id', 'int'),)
    """
    algorithm, secret = check_fingerprint_options(algorithm, secret, "fingerprint_state")
    for c in cols:
        if not (is_column(c) or isinstance(c, str)):
            raise TypeError(
                f"fingerprint_state: cols takes Columns or column names, got {type(c).__name__}: {c!r}"
            )
    chosen = df.select(*cols) if cols else df
    if _arrow():
        from hashexpr.spark.arrow_path.fingerprints import state

        return state(chosen, algorithm, secret, "fingerprint_state")
    options = (
        "" if algorithm == "murmur3" else "algorithm=lthash16" + (f"; secret={secret}" if secret else "")
    )
    row = chosen.agg(_call("dataset_fingerprint_state", options, ["*"]).alias("state")).first()["state"]
    columns = [(field.name, spark_type_string(field.dataType)) for field in chosen.schema.fields]
    state = FingerprintState.from_parts(
        row["algorithm"], columns, row["schema"], row["count"], row["sum"], row["lanes"], row["secret"]
    )
    if state.fingerprint != row["fingerprint"]:
        # The Spark schema's names and types give another digest than the aggregate's: never a wrong state.
        raise ValueError(
            f"fingerprint_state: the columns {state.column_names} do not give the schema digest Spark computed; "
            "select them with plain names or aliases"
        )
    return state
