"""hashexpr's exceptions."""

from __future__ import annotations


class HashExprNotInstalledError(RuntimeError):
    """The Spark session has no hashexpr functions: it was started without hashexpr's jar."""

    def __init__(self, function: str) -> None:
        super().__init__(
            f"The Spark session has no `{function}` function: start Spark with hashexpr's jar.\n"
            "  - a new session:   spark = hx.configure(SparkSession.builder).getOrCreate()\n"
            '  - spark-submit:    spark-submit --jars "$(python -m hashexpr jar)" ...\n'
            '  - Spark Connect:   start the server with --jars "$(python -m hashexpr jar)"\n'
            "A running Spark driver cannot load the jar: restart the Python process (or notebook kernel) and "
            "build the session with hx.configure, or start it with --jars.\n"
            "Where no jar can load (Databricks serverless, Spark Connect services), hashexpr's Python API runs "
            "without it (unset HASHEXPR_ENGINE, or set it to arrow: docs/PYTHON.md), and in SQL the spark dialect "
            "of hashexpr.sql writes SHA-256 keys as plain Spark SQL (docs/SQL.md)."
        )
        self.function = function


class SchemaMismatchError(ValueError):
    """Two snapshots compared without chosen columns have different columns or column types."""

    def __init__(self, problems: list[str], hint: str) -> None:
        super().__init__("the schemas of old and new differ: " + "; ".join(problems) + ". " + hint)
        self.problems = problems


class SystemFailure(RuntimeError):
    """A system failed while it answered a comparison (a query that failed for another reason than the data, a
    lost connection, a pass over its statement timeout); the message names the system and the table."""

    def __init__(self, message: str, system: str) -> None:
        super().__init__(message)
        self.system = system


#: What to do where no PySpark is installed.
INSTALL_SPARK = (
    'pip install "hashexpr[spark]", or run it where the platform gives PySpark (a Databricks runtime, '
    "databricks-connect, pyspark-client, EMR, Glue, Dataproc, Fabric)"
)


class PySparkMissingError(ModuleNotFoundError):
    """Something that needs PySpark was asked for where none is installed; the message says what to install."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} needs PySpark, which is not installed: {INSTALL_SPARK}", name="pyspark")
        self.what = what
