"""hashexpr's exceptions."""

from __future__ import annotations

from collections.abc import Callable


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


class ExtraMissingError(ModuleNotFoundError):
    """A library of one of the package's extras was needed where it is not installed; the message names the
    extra to install."""

    def __init__(self, what: str, module: str, extra: str) -> None:
        super().__init__(f'{what} needs {module}, which is not installed: pip install "hashexpr[{extra}]"', name=module)
        self.what = what


def require(module: str, what: str, extra: str) -> None:
    """Raise :class:`ExtraMissingError` when ``module`` cannot be imported."""
    from importlib.util import find_spec

    if find_spec(module) is None:
        raise ExtraMissingError(what, module, extra)


class PySparkMissingError(ModuleNotFoundError):
    """Something that needs PySpark was asked for where none is installed; the message says what to install."""

    def __init__(self, what: str, needs: str | None = None) -> None:
        message = f"{what} needs {needs}" if needs else f"{what} needs PySpark, which is not installed: {INSTALL_SPARK}"
        super().__init__(message, name="pyspark")
        self.what = what


def local_spark_missing() -> Callable[[str], Exception] | None:
    """None where a local Spark can start (PySpark with py4j and its jars); else the error to raise, given what
    needed it: PySpark missing, or a Spark Connect client (pyspark-client, databricks-connect) that has no JVM."""
    from importlib.util import find_spec

    if find_spec("pyspark") is None:
        return PySparkMissingError
    if find_spec("py4j") is None:
        return lambda what: PySparkMissingError(
            what,
            "a local Spark (a JVM driven through py4j), which this PySpark lacks: it is a Spark Connect "
            "client (pyspark-client, databricks-connect). Run the command where classic PySpark is "
            "installed, or use hashexpr's functions from Python over the Connect session",
        )
    return None
