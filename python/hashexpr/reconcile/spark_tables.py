"""What a Spark side's name reads: a catalog table, or files named as Spark SQL names them (``parquet.`PATH```).

A Delta table, by name or as ``delta.`PATH```, is read at the version it has when the comparison starts, so
that every pass sees the same rows. A path alone is not a table name: Spark would parse ``/data/orders`` as
SQL and fail on its first ``/``, so it is refused with the forms that read it.
"""

from __future__ import annotations

import re
from typing import Any

#: Formats whose files carry their column types, as Spark SQL names files: ``parquet.`/data/orders```.
FILE_FORMATS = ("parquet", "orc", "delta")
_FILES = re.compile(r"(?P<format>[A-Za-z]+)\.`(?P<path>(?:[^`]|``)+)`")
#: A name that is a path: absolute, relative to the working directory or home, or a URL (s3a://, dbfs:/).
_PATH = re.compile(r"(/|\./|\.\./|~|[A-Za-z][A-Za-z0-9+.-]*:/)")


def file_format(name: str) -> str | None:
    """The format of files named as Spark SQL names them (``delta.`/lake/orders``` → ``delta``), else None."""
    files = _FILES.fullmatch(name)
    return None if files is None else files["format"].lower()


def read(spark: Any, name: str) -> tuple[Any, int | None]:
    """The DataFrame ``name`` reads and, for a Delta table, the version it is read at.

    >>> read(None, "/data/orders")
    Traceback (most recent call last):
    ...
    ValueError: spark: '/data/orders' is a path, not a table name: name it as Spark SQL names files, parquet.`/data/orders` or delta.`/data/orders` (after spark: on the command line), or read it without Spark (rc.parquet, rc.delta, or the path alone on the command line)
    >>> read(None, "csv.`/data/orders.csv`")
    Traceback (most recent call last):
    ...
    ValueError: spark: csv.`/data/orders.csv`: files are compared as parquet, orc or delta (their types are in them); read other files into a typed DataFrame and pass it
    """
    fmt = file_format(name)
    if fmt is not None:
        if fmt not in FILE_FORMATS:
            raise ValueError(
                f"spark: {name}: files are compared as {', '.join(FILE_FORMATS[:-1])} or {FILE_FORMATS[-1]} "
                "(their types are in them); read other files into a typed DataFrame and pass it"
            )
        if fmt == "delta":
            return _read_delta(spark, name)
        return _sql(spark, name, f"SELECT * FROM {name}"), None
    if _PATH.match(name):
        raise ValueError(
            f"spark: {name!r} is a path, not a table name: name it as Spark SQL names files, parquet.`{name}` or "
            f"delta.`{name}` (after spark: on the command line), or read it without Spark (rc.parquet, rc.delta, "
            "or the path alone on the command line)"
        )
    try:
        exists = spark.catalog.tableExists(name)
    except Exception as e:  # Spark's parser names no class common to classic and Connect
        if "PARSE_SYNTAX_ERROR" not in str(e) and "ParseException" not in type(e).__name__:
            raise
        raise ValueError(
            f"spark: cannot read the table name {name!r}: quote a part that holds spaces, dots or other "
            "characters in backquotes (db.`order lines`)"
        ) from None
    if not exists:
        raise ValueError(f"spark: there is no table {name!r} in the session's catalog")
    try:
        detail = spark.sql(f"DESCRIBE DETAIL {name}").first()
    except Exception:  # noqa: BLE001 - not a Delta table, or no Delta in this session: read it as it is
        detail = None
    if detail is not None and str(detail["format"]).lower() == "delta":
        return _read_delta(spark, name)
    return spark.table(name), None


def _read_delta(spark: Any, name: str) -> tuple[Any, int]:
    version = int(_sql(spark, name, f"DESCRIBE HISTORY {name} LIMIT 1").first()["version"])
    return _sql(spark, name, f"SELECT * FROM {name} VERSION AS OF {version}"), version


def _sql(spark: Any, name: str, statement: str) -> Any:
    """``spark.sql(statement)``, its schema resolved; a path that is not there is a ValueError naming it."""
    try:
        df = spark.sql(statement)
        df.schema  # noqa: B018 - resolves the files now (Spark Connect analyses lazily)
    except Exception as e:  # classic and Connect raise different classes
        if "PATH_NOT_FOUND" in str(e) or "is not a Delta table" in str(e):
            raise ValueError(f"spark: {name}: {str(e).splitlines()[0]}") from None
        raise
    return df
