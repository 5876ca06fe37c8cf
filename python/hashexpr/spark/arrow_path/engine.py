"""Which engine a Spark session hashes with: hashexpr's jar, or the Rust engine in Arrow UDFs."""

from __future__ import annotations

import logging
import os
import weakref
from typing import Literal

from pyspark.sql import SparkSession

#: The environment variable that forces an engine.
ENGINE_VARIABLE = "HASHEXPR_ENGINE"
#: The function whose presence says the session has hashexpr's jar.
PROBE = "record_hash"

Engine = Literal["jar", "arrow"]

_log = logging.getLogger("hashexpr")
# Sessions already probed, weakly held: a freed session's id can be reused by a session with other jars.
_probed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def forced() -> Engine | None:
    """The engine ``HASHEXPR_ENGINE`` forces, if any; any other value than ``jar`` or ``arrow`` is an error."""
    value = os.environ.get(ENGINE_VARIABLE, "").strip().lower()
    if value in ("", "auto"):
        return None
    if value not in ("jar", "arrow"):
        raise ValueError(
            f"{ENGINE_VARIABLE}={os.environ[ENGINE_VARIABLE]!r}: it must be 'jar', 'arrow' or 'auto' (or unset)"
        )
    return value  # type: ignore[return-value]


def engine(spark: SparkSession | None = None) -> Engine:
    """Return the engine hashexpr's Python API uses in a Spark session: ``'jar'`` or ``'arrow'``.

    ``'jar'`` when the session has hashexpr's functions (its jar was loaded: :func:`~hashexpr.configure`,
    ``--jars``); otherwise ``'arrow'``, the Rust engine of hashexpr's wheel inside PySpark's Arrow routes, which
    gives the same bytes (``docs/PYTHON.md``, "Databricks serverless and Spark Connect without the jar").
    ``HASHEXPR_ENGINE=jar`` or ``HASHEXPR_ENGINE=arrow`` forces one.

    Parameters
    ----------
    spark : :class:`~pyspark.sql.SparkSession`, optional
        The session (default: the active one).

    Returns
    -------
    str
        ``'jar'`` or ``'arrow'``.

    Examples
    --------
    >>> import hashexpr as hx
    >>> df = spark.range(3)
    >>> hx.engine(df.sparkSession)  # the session of these examples has the jar
    'jar'
    """
    chosen = forced()
    if chosen is not None:
        return chosen
    spark = spark or SparkSession.getActiveSession()
    if spark is None:
        raise ValueError("hashexpr.engine: there is no active Spark session: pass one, engine(spark)")
    try:
        known = _probed.get(spark)
    except TypeError:  # a session class that cannot be weakly referenced
        known = None
    if known is not None:
        return known
    found: Engine = "jar" if spark.catalog.functionExists(PROBE) else "arrow"
    if found == "arrow":
        _log.warning(
            "hashexpr: this Spark session has no hashexpr jar (no %s function), so hashexpr's Python API runs "
            "its Rust engine in Arrow UDFs: the same bytes, with every row sent to a Python worker and back "
            "(make bench --only nojar measures the cost; docs/PYTHON.md).%s SQL's record_hash and record_key "
            "need the jar: without it, call them from Python, or write SHA-256 keys in plain SQL with "
            "hashexpr.sql's spark dialect (docs/SQL.md). Set %s=arrow to silence this, or load the jar for the "
            "faster path.",
            PROBE,
            "" if _arrow_udfs() else _ROWS,
            ENGINE_VARIABLE,
        )
    try:
        _probed[spark] = found
    except TypeError:
        pass
    return found


_ROWS = (
    " This PySpark has no Arrow UDFs (pyspark.sql.functions.arrow_udf, 4.1 and later), so the column functions"
    " (record_hash, record_key, normalize_key) hash row by row in plain Python UDFs, some 10,000 rows a second a"
    " core: add hash columns with hx.with_metadata (mapInArrow) for volume."
)


def _arrow_udfs() -> bool:
    from pyspark.sql import functions as F

    return hasattr(F, "arrow_udf")


def uses_arrow(spark: SparkSession | None = None) -> bool:
    """Whether hashexpr's Python API runs through the Arrow path in ``spark`` (default: the active session)."""
    return engine(spark) == "arrow"
