"""Session set-up: give a SparkSession builder hashexpr's jar and extension."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hashexpr.jar import EXTENSION_CLASS, jar_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _append(existing: str | None, item: str) -> str:
    parts = [p for p in (existing or "").split(",") if p.strip()]
    if item not in parts:
        parts.append(item)
    return ",".join(parts)


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add hashexpr's jar and session extension to a ``SparkSession.Builder``.

    Jars and extensions already set on the builder are kept. The settings are static: they take effect when
    the builder creates a new Spark application (not on a session that already runs, and not on a remote
    Spark Connect server, which must be started with the jar: see ``docs/PYTHON.md``).

    Parameters
    ----------
    builder : :class:`pyspark.sql.SparkSession.Builder`
        The builder to configure.

    Returns
    -------
    :class:`pyspark.sql.SparkSession.Builder`
        The same builder, for chaining.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import hashexpr as hx
    >>> builder = hx.configure(SparkSession.builder.master("local[1]"))
    >>> builder._options["spark.sql.extensions"]
    'io.hashexpr.HashExprExtensions'
    """
    options = getattr(builder, "_options", {})
    jar = jar_path()
    builder = builder.config("spark.jars", _append(options.get("spark.jars"), jar))
    return builder.config(
        "spark.sql.extensions", _append(options.get("spark.sql.extensions"), EXTENSION_CLASS)
    )
