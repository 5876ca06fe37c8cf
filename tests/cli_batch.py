"""Runs several ``hashexpr`` commands in one Python process and one Spark session, for tests that need another
virtualenv's Spark (Delta Lake in .venv-4.2) or a session of their own (a Hive metastore): one JVM start for all.

Usage: ``python cli_batch.py REQUEST.json``, where the request is ``{"commands": {name: [arg, ...]}, "conf":
{key: value}, "delta": bool, "prepare": source}``; prints one JSON object, ``{"prepared": {...}, "runs": {name:
{"status", "stdout", "stderr"}}}``, as its last line. ``prepare`` (Python source, optional) runs first with
``spark`` in its namespace and may leave a dict of strings in ``prepared``: the data the commands read, made in
the same session rather than in a process of its own. A command argument ``{prepared:KEY}`` is replaced by
``prepared[KEY]``. Each command runs as ``hashexpr.cli.main(argv, spark)`` runs it, in the current directory.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys


def main(request_path: str) -> None:
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    from pyspark.sql import SparkSession

    import hashexpr as hx
    from hashexpr.cli import main as cli_main

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    # Tables of a few rows: Spark's 200 shuffle partitions and Delta's 50 for a snapshot's state made each command
    # seconds of empty tasks (the Delta batch of test_cli_tables.py took 150 s instead of 48).
    builder = builder.config("spark.sql.shuffle.partitions", "2").config(
        "spark.databricks.delta.snapshotPartitions", "2"
    )
    for key, value in request.get("conf", {}).items():
        builder = builder.config(key, value)
    if request.get("delta"):
        from delta import configure_spark_with_delta_pip

        builder = builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension").config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
        )
        builder = configure_spark_with_delta_pip(builder)
    spark = hx.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    namespace = {"spark": spark, "prepared": {}}
    exec(request.get("prepare") or "", namespace)  # noqa: S102 (the test's own source, in its request file)
    prepared = {str(k): str(v) for k, v in namespace["prepared"].items()}
    results = {}
    for name, argv in request["commands"].items():
        argv = [_placeholder(arg, prepared) for arg in argv]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli_main(argv, spark=spark)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 2
        results[name] = {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}
    spark.stop()
    print(json.dumps({"prepared": prepared, "runs": results}))


def _placeholder(arg: str, prepared: dict[str, str]) -> str:
    if arg.startswith("{prepared:") and arg.endswith("}"):
        return prepared[arg[len("{prepared:") : -1]]
    return arg


if __name__ == "__main__":
    main(sys.argv[1])
