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
            "A session that is already running cannot load the jar; stop it and start a new one."
        )
        self.function = function
