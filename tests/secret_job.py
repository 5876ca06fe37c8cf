"""A Spark application for tests/test_secrets.py: hash with HMAC secrets, with the event log and the web UI
on, and record everything Spark shows about the run.

It runs as its own Python process because the event log and the UI are set when a SparkContext starts, and the
pytest process already has one. One secret comes in with the application's configuration (as
``--conf``/``spark-defaults.conf`` would give it) and keys the hashes; the other is set on the session at run
time, which hashexpr refuses, and is unset again before any job runs. The report holds the hashes, the plans
(``EXPLAIN EXTENDED``, ``EXPLAIN CODEGEN``), ``SET`` output, the messages of the queries whose secret is missing
or set on the session, and the UI's REST API answers (environment, SQL executions with their plans, jobs,
stages); the event log is flushed to ``OUT/events`` when the application stops.

Usage: ``python secret_job.py --out DIR --port PORT`` with ``HASHEXPR_TEST_SECRETS`` = ``startup,runtime``.
"""

from __future__ import annotations

import argparse
import json
import os
import urllib.request
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import hashexpr as hx


def _rest(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/{path}", timeout=30) as answer:
        return json.load(answer)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    out = Path(args.out)
    (out / "events").mkdir(parents=True)
    startup, runtime = os.environ["HASHEXPR_TEST_SECRETS"].split(",")
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", (out / "events").as_uri())
        # Uncompressed, so that the test can search it for the secrets.
        .config("spark.eventLog.compress", "false")
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", str(args.port))
        .config("spark.port.maxRetries", "0")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.hashexpr.secret.startup", startup)
    )
    spark = hx.configure(builder).getOrCreate()
    df = (
        spark.range(20)
        .selectExpr("CAST(id AS STRING) AS email")
        .select(
            "email",
            hx.record_key("email", algorithm="hmac-sha256", secret="startup").alias("k"),
            hx.record_hash("email", algorithm="hmac-sha256", secret="startup").alias("h"),
        )
    )
    rows = [(r.email, bytes(r.k).hex(), bytes(r.h).hex()) for r in df.collect()]
    spark.conf.set("spark.hashexpr.secret.runtime", runtime)
    runtime_error = ""
    try:
        spark.range(1).select(hx.record_key("id", algorithm="hmac-sha256", secret="runtime")).collect()
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        runtime_error = str(e)
    set_runtime = [list(r) for r in spark.sql("SET spark.hashexpr.secret.runtime").collect()]
    # Every job from now on would carry it in its properties: gone before the next one.
    spark.conf.unset("spark.hashexpr.secret.runtime")
    df.createOrReplaceTempView("hashed")
    report: dict[str, Any] = {
        "rows": rows,
        "explain": spark.sql("EXPLAIN EXTENDED SELECT * FROM hashed").first()[0],
        "codegen": spark.sql("EXPLAIN CODEGEN SELECT * FROM hashed").first()[0],
        "set": [list(r) for r in spark.sql("SET").collect()],
        "set_one": set_runtime,
        "session_secret_error": runtime_error,
    }
    try:
        spark.range(1).select(hx.record_key("id", algorithm="hmac-sha256", secret="absent")).collect()
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        report["missing_secret_error"] = str(e)
    app = _rest(args.port, "applications")[0]["id"]
    report["rest"] = {
        path: _rest(args.port, f"applications/{app}/{path}")
        for path in ("environment", "sql?details=true&planDescription=true", "jobs", "stages?details=true")
    }
    (out / "report.json").write_text(json.dumps(report), encoding="utf-8")
    spark.stop()


if __name__ == "__main__":
    main()
