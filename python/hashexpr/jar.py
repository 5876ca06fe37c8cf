"""Where hashexpr's jars are, and which one the running Spark needs.

There is one jar per Spark line and Scala version (``hashexpr-spark3.5_2.12.jar`` ... ``hashexpr-spark4.3_2.13.jar``),
all built from one source; they give the same bytes. The wheel carries all of them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: The class that registers hashexpr's SQL functions in a session (``spark.sql.extensions``).
EXTENSION_CLASS = "io.hashexpr.HashExprExtensions"

#: Every Spark line hashexpr is built for, with its Scala versions (the first is the one pip's pyspark uses).
SPARK_LINES: dict[str, tuple[str, ...]] = {
    "3.5": ("2.12", "2.13"),
    "4.0": ("2.13",),
    "4.1": ("2.13",),
    "4.2": ("2.13",),
    "4.3": ("2.13",),
}

_PACKAGE_JARS = Path(__file__).resolve().parent / "jars"
_CHECKOUT_JARS = Path(__file__).resolve().parents[2] / "target" / "jars"


def jar_name(spark: str, scala: str) -> str:
    """Return the file name of the jar for Spark line ``spark`` (``X.Y``) and Scala ``scala`` (``2.1x``).

    Examples
    --------
    >>> jar_name("3.5", "2.12")
    'hashexpr-spark3.5_2.12.jar'
    """
    return f"hashexpr-spark{spark}_{scala}.jar"


def _line(version: str) -> str:
    match = re.match(r"(\d+)\.(\d+)", version.strip())
    if not match:
        raise ValueError(f"not a Spark or Scala version: {version!r} (expected X.Y, e.g. 3.5 or 2.13)")
    return f"{match.group(1)}.{match.group(2)}"


#: The Spark line of each Databricks runtime, by its major number: databricks-connect's ``pyspark.__version__``
#: is the runtime's (``16.4.2``), not Spark's.
DATABRICKS_RUNTIMES: dict[int, str] = {14: "3.5", 15: "3.5", 16: "3.5", 17: "4.0", 18: "4.1"}


def spark_line_of(version: str) -> str:
    """The Spark line of a ``pyspark.__version__``: ``X.Y`` of a Spark version, or of the Spark that a Databricks
    runtime's number stands for (databricks-connect gives that number).

    Examples
    --------
    >>> spark_line_of("4.1.4"), spark_line_of("16.4.2"), spark_line_of("17.3.1")
    ('4.1', '3.5', '4.0')
    >>> spark_line_of("13.3.0")
    Traceback (most recent call last):
        ...
    ValueError: pyspark 13.3.0 is databricks-connect for Databricks runtime 13.3, whose Spark (before 3.5) hashexpr is not built for; use runtime 14.3 or later
    """
    line = _line(version)
    major = int(line.split(".")[0])
    if major < 10:
        return line
    if major not in DATABRICKS_RUNTIMES:
        newest = max(DATABRICKS_RUNTIMES)
        if major > newest:
            # A newer runtime runs a newer Spark than any mapped here: the newest line's jar is the nearest.
            return DATABRICKS_RUNTIMES[newest]
        raise ValueError(
            f"pyspark {version} is databricks-connect for Databricks runtime {line}, whose Spark (before 3.5) "
            f"hashexpr is not built for; use runtime {min(DATABRICKS_RUNTIMES)}.3 or later"
        )
    return DATABRICKS_RUNTIMES[major]


def running_spark() -> tuple[str, str]:
    """Return the Spark line and Scala version of the ``pyspark`` this interpreter imports (installed by pip,
    a runtime's own files on the path, Spark Connect's client or databricks-connect), or of ``SPARK_HOME``.

    The Spark line is read from ``pyspark.__version__`` (never from pip's metadata, which a runtime's PySpark
    has none of; databricks-connect's is mapped by :func:`spark_line_of`), the Scala version from the
    ``scala-library`` jar that Spark runs with.

    Returns
    -------
    tuple of str
        ``(spark_line, scala_version)``, e.g. ``("4.3", "2.13")``.

    Raises
    ------
    ValueError
        When no ``pyspark`` is installed.

    Examples
    --------
    >>> import pyspark
    >>> running_spark()[0] == spark_line_of(pyspark.__version__)
    True
    """
    try:
        import pyspark
    except ImportError as exc:
        raise ValueError(
            'pyspark is not installed: pip install "hashexpr[spark]", or name the Spark line with --spark X.Y '
            "(jar_path(spark=...))"
        ) from exc
    spark = spark_line_of(pyspark.__version__)
    homes = [os.environ.get("SPARK_HOME"), os.path.dirname(pyspark.__file__)]
    for home in filter(None, homes):
        for library in sorted(Path(home, "jars").glob("scala-library-*.jar")):
            return spark, _line(library.name[len("scala-library-") :])
    return spark, SPARK_LINES.get(spark, ("2.13",))[0]


def jar_path(spark: str | None = None, scala: str | None = None) -> str:
    """Return the path of the hashexpr jar for a Spark line: by default the one the installed pyspark runs.

    The jars travel inside the Python package; in a source checkout, those ``make jar`` / ``make jars`` built are
    used.

    Parameters
    ----------
    spark : str, optional
        A Spark line (``3.5``, ``4.0`` ... or a full version such as ``3.5.2``), for a ``spark-submit`` or a
        Spark Connect server elsewhere. Default: the installed pyspark's.
    scala : str, optional
        ``2.12`` or ``2.13``. Default: the installed pyspark's Scala when ``spark`` is its line, else the
        line's usual one (2.12 for Spark 3.5, 2.13 for 4.x).

    Returns
    -------
    str
        An absolute path to an existing file.

    Raises
    ------
    ValueError
        When hashexpr is not built for that Spark line or Scala version, naming those it is built for.
    FileNotFoundError
        When the jar is not there, with the command that builds it.

    Examples
    --------
    >>> import hashexpr as hx
    >>> hx.jar_path(spark="3.5").endswith("hashexpr-spark3.5_2.12.jar")
    True
    >>> hx.jar_path(spark="3.4")
    Traceback (most recent call last):
        ...
    ValueError: hashexpr has no jar for Spark 3.4: it is built for Spark 3.5 (Scala 2.12, 2.13), 4.0, 4.1, 4.2, 4.3
    """
    if spark is None:
        spark, running_scala = running_spark()
        scala = scala or running_scala
    spark = _line(spark)
    if spark not in SPARK_LINES:
        lines = ", ".join(f"{s} (Scala {', '.join(v)})" if len(v) > 1 else s for s, v in SPARK_LINES.items())
        raise ValueError(f"hashexpr has no jar for Spark {spark}: it is built for Spark {lines}")
    scala = _line(scala) if scala else SPARK_LINES[spark][0]
    if scala not in SPARK_LINES[spark]:
        raise ValueError(
            f"hashexpr has no jar for Spark {spark} with Scala {scala}: Spark {spark} is built with Scala "
            f"{', '.join(SPARK_LINES[spark])}"
        )
    name = jar_name(spark, scala)
    for folder in (_PACKAGE_JARS, _CHECKOUT_JARS):
        if (folder / name).is_file():
            return str(folder / name)
    raise FileNotFoundError(
        f"{name} (hashexpr for Spark {spark}, Scala {scala}) is not in {_PACKAGE_JARS}: build it with "
        "`make jars` in a hashexpr checkout, or install the hashexpr wheel, which carries every line's jar"
    )
