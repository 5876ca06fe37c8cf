"""What the ``hashexpr`` command line reads: data files, Delta and Iceberg tables, catalog tables.

A :class:`Source` is decided before Spark starts (format, time travel, reader options), so that a wrong
argument costs no JVM start, and read once Spark runs. A directory that holds a table format's log
(``_delta_log``, Iceberg's ``metadata/``) is that table, never its data files read as plain Parquet: when
the format's library is not on this Spark, the command stops with one line saying so.
"""

from __future__ import annotations

import glob
import importlib.util
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hashexpr.cli import formats as hformats

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Table formats read through their own Spark data source, on top of :data:`hashexpr.cli.formats.FORMATS`.
TABLE_FORMATS: tuple[str, ...] = ("delta", "iceberg")

#: Every format an input may have.
INPUT_FORMATS: tuple[str, ...] = (*hformats.FORMATS, *TABLE_FORMATS)

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
_DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


@dataclass(frozen=True)
class Source:
    """One input of a command: a path in a format, or a catalog table, at an optional version."""

    path: str | None = None
    table: str | None = None
    fmt: str = "table"
    version: int | None = None
    timestamp: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    schema: str | None = None

    def label(self) -> str:
        """How the summary names the input: ``data.csv (csv)``, ``table db.t``, ``t (delta, version 3)``."""
        what = f"table {self.table}" if self.table else self.path
        details = [] if self.table and self.fmt == "table" else [self.fmt]
        if self.version is not None:
            details.append(f"version {self.version}")
        if self.timestamp is not None:
            details.append(f"as of {self.timestamp}")
        return f"{what} ({', '.join(details)})" if details else str(what)

    def as_dict(self) -> dict[str, object]:
        """The input as the ``--json`` output shows it."""
        described: dict[str, object] = {"table": self.table} if self.table else {"path": self.path}
        described["format"] = self.fmt
        if self.version is not None:
            described["version"] = self.version
        if self.timestamp is not None:
            described["timestamp"] = self.timestamp
        return described

    def read(self, spark: SparkSession) -> DataFrame:
        """Return a DataFrame over this input."""
        # PySpark's defaults (PERMISSIVE, the session time zone) unless --option says otherwise, plus a header
        # line and typed columns for CSV.
        options = dict(hformats.READ_OPTIONS.get(self.fmt, {}))
        options.update(self.options)
        if self.version is not None:
            options["versionAsOf"] = str(self.version)
        if self.timestamp is not None:
            options["timestampAsOf"] = self.timestamp
        reader = spark.read.options(**options)
        if self.schema is not None:
            reader = reader.schema(self.schema)
        if self.table is not None:
            return reader.table(self.table)
        df = reader.format(self.fmt).load(hformats.spark_path(self.path))
        # Lines that are not JSON objects come out as a `_corrupt_record` column of their own, which would be
        # hashed as data; unless the user chose the schema or the parsing mode, that is refused.
        chosen = self.schema is not None or any(k.lower() == "mode" for k in self.options)
        if self.fmt == "json" and "_corrupt_record" in df.columns and not chosen:
            raise ValueError(
                f"{self.path} has lines that are not JSON objects: for JSON Lines, one object per line; for one "
                "JSON document or array over several lines add --option multiLine=true; to keep such lines "
                "in a _corrupt_record column add --option mode=PERMISSIVE"
            )
        return df


def source(
    path: str | None = None,
    *,
    table: str | None = None,
    fmt: str | None = None,
    version: int | None = None,
    timestamp: str | None = None,
    options: Mapping[str, str] | None = None,
    schema: str | None = None,
    available: Sequence[str] = (),
) -> Source:
    """Return the :class:`Source` for a path or a table, checked as far as possible without Spark.

    Parameters
    ----------
    path : str, optional
        A file, a directory of part files, a glob, or a table's directory.
    table : str, optional
        A catalog table name (``db.t``), instead of ``path``.
    fmt : str, optional
        A format named by the user; by default the one ``path`` shows (its table log, its extension, its
        part files).
    version, timestamp : optional
        Time travel: the table as of this version or time (Delta Lake).
    options : mapping of str to str, optional
        Options for Spark's reader, over the defaults (CSV: ``header`` and ``inferSchema``).
    schema : str, optional
        A DDL schema to read with (``"id INT, name STRING"``).
    available : sequence of str
        The table formats whose libraries this Spark has (:func:`available_table_formats`).

    Returns
    -------
    :class:`Source`

    Raises
    ------
    ValueError
        For an unknown format, a format that cannot be told, time travel on a format without it, or a table
        format this Spark has no library for.
    FileNotFoundError
        For a local path that matches nothing.

    Examples
    --------
    >>> source("s3a://lake/flights.csv", options={"mode": "FAILFAST"}).label()
    's3a://lake/flights.csv (csv)'
    >>> source(table="db.flights").label()
    'table db.flights'
    >>> source("s3a://lake/flights.csv", version=3)
    Traceback (most recent call last):
        ...
    ValueError: --version and --timestamp are for Delta tables; s3a://lake/flights.csv is csv
    """
    if (path is None) == (table is None):
        raise ValueError("name one input: a path, or a catalog table with --table")
    if version is not None and timestamp is not None:
        raise ValueError("--version and --timestamp both choose a version: pass one of them")
    if version is not None and version < 0:
        raise ValueError(f"--version must be 0 or more, not {version}")
    if table is not None:
        if version is not None or timestamp is not None:
            raise ValueError(
                "--version and --timestamp read a Delta table by its directory: name the table's path instead "
                "of --table"
            )
        chosen = "table" if fmt is None else hformats.check_format_name(fmt, INPUT_FORMATS)
        if chosen in TABLE_FORMATS:
            require_library(chosen, f"table {table}", available)
        return Source(table=table, fmt=chosen, options=dict(options or {}), schema=schema)
    assert path is not None
    inside = enclosing_table(path)
    if inside is not None:
        directory, kind = inside
        raise ValueError(
            f"{path} is inside {_article(kind)} table ({directory}): its files are not the table's rows; "
            f"read the table itself, {directory}"
        )
    found = table_format_of(path)
    if fmt is not None:
        chosen = hformats.check_format_name(fmt, INPUT_FORMATS)
        if found is not None and chosen != found:
            raise ValueError(
                f"{path} is {_article(found)} table (it has {_LOG[found]}): its files are not a plain "
                f"{chosen} input; read it with --format {found}"
            )
    else:
        hformats.check_input(path)
        chosen = found or hformats.input_format(path)
    if chosen in TABLE_FORMATS:
        hformats.check_input(path)
        if found is None and hformats.local_path(path) is not None:
            raise ValueError(f"{path} is not {_article(chosen)} table: it has no {_LOG[chosen]}")
        require_library(chosen, path, available)
    else:
        hformats.check_content(path, chosen, options)
        if schema is None:
            hformats.check_has_columns(path, chosen, options)
    if (version is not None or timestamp is not None) and chosen != "delta":
        raise ValueError(f"--version and --timestamp are for Delta tables; {path} is {chosen}")
    return Source(
        path=path,
        fmt=chosen,
        version=version,
        timestamp=timestamp,
        options=dict(options or {}),
        schema=schema,
    )


_LOG = {"delta": "_delta_log", "iceberg": "metadata/*.metadata.json"}


def _article(fmt: str) -> str:
    return "an Iceberg" if fmt == "iceberg" else "a Delta"


def table_format_of(path: str) -> str | None:
    """Return ``"delta"`` or ``"iceberg"`` when the local directory ``path`` holds such a table, else ``None``.

    Examples
    --------
    >>> table_format_of("no/such/dir") is None
    True
    """
    local = hformats.local_path(path)
    if local is None or not os.path.isdir(local):
        return None
    if os.path.isdir(os.path.join(local, "_delta_log")):
        return "delta"
    if glob.glob(os.path.join(glob.escape(local), "metadata", "*.metadata.json")):
        return "iceberg"
    return None


def enclosing_table(path: str) -> tuple[str, str] | None:
    """The Delta or Iceberg table that a local ``path`` lies inside (a data file, a partition), if any.

    Returns
    -------
    (str, str) or None
        The table's directory and format.
    """
    local = hformats.local_path(path)
    if local is None:
        return None
    # A glob's fixed part is a directory it reads inside; a plain path's table would be the path itself.
    prefix = os.path.abspath(hformats.fixed_prefix(local))
    here = prefix if prefix != os.path.abspath(local) else os.path.dirname(prefix)
    while True:
        found = table_format_of(here)
        if found is not None:
            return here, found
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def available_table_formats(conf: Mapping[str, str] | None = None) -> list[str]:
    """The table formats this Python environment and the given Spark settings can read.

    Delta Lake comes from the ``delta-spark`` package (which pins a pyspark it runs on) or from a Delta jar
    the user names in ``spark.jars.packages`` or ``spark.jars``; Iceberg only from a runtime jar named there.
    """
    conf = conf or {}
    found = []
    if importlib.util.find_spec("delta") is not None or _names_delta_jar(conf):
        found.append("delta")
    if "iceberg-spark-runtime" in _named_jars(conf):
        found.append("iceberg")
    return found


def _named_jars(conf: Mapping[str, str]) -> str:
    """The jars and packages the user's Spark settings name, as one text."""
    return f"{conf.get('spark.jars.packages', '')},{conf.get('spark.jars', '')}"


def _names_delta_jar(conf: Mapping[str, str]) -> bool:
    jars = _named_jars(conf)
    return "io.delta:" in jars or "delta-spark" in jars


def require_library(fmt: str, what: str, available: Sequence[str], writing: bool = False) -> None:
    """Raise a :class:`ValueError` saying how to get the library of ``fmt`` when it is not ``available``."""
    if fmt in available:
        return
    from hashexpr.errors import local_spark_missing

    missing = local_spark_missing()
    if missing is not None:
        raise missing(f"{'writing' if writing else 'reading'} {what} ({_article(fmt)} table, through Spark)")
    import pyspark

    if fmt == "delta":
        how = (
            "install delta-spark in a Python environment with a pyspark it supports, or name a Delta jar "
            "built for this Spark with --conf spark.jars.packages=io.delta:..."
        )
        name = "Delta Lake"
    else:
        how = (
            "name an Iceberg runtime built for this Spark with --conf "
            "spark.jars.packages=org.apache.iceberg:iceberg-spark-runtime-..."
        )
        name = "Iceberg"
    problem = (
        f"writing {what} as {_article(fmt)} table needs {name}, which is"
        if writing
        else f"{what} is {_article(fmt)} table, and {name} is"
    )
    raise ValueError(f"{problem} not available on this Spark ({pyspark.__version__}): {how}")


def session_settings(formats: Sequence[str], conf: Mapping[str, str]) -> dict[str, str]:
    """The Spark settings that reading or writing ``formats`` needs, merged with the user's ``conf``.

    Delta Lake needs its session extension and catalog, and its jar: from the ``delta-spark`` package's
    version when that is installed and the user named no Delta jar.
    """
    settings: dict[str, str] = {}
    if "delta" in formats:
        settings["spark.sql.extensions"] = DELTA_EXTENSION
        settings["spark.sql.catalog.spark_catalog"] = _DELTA_CATALOG
        if not _names_delta_jar(conf):
            settings["spark.jars.packages"] = _delta_package()
    merged = dict(settings)
    for key, value in conf.items():
        if key in ("spark.sql.extensions", "spark.jars.packages") and key in settings:
            merged[key] = ",".join([settings[key], value])
        else:
            merged[key] = value
    return merged


def _delta_package() -> str:
    """The Maven coordinates of the Delta jar that the installed ``delta-spark`` package goes with."""
    from delta.pip_utils import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    # A fresh builder, only to read the setting the package makes: nothing starts here.
    return configure_spark_with_delta_pip(SparkSession.Builder())._options["spark.jars.packages"]
