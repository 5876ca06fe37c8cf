"""A Spark application without hashexpr for tests/test_sql_plain_spark.py: no jar, no extension, no hashexpr import.

It evaluates the SQL that ``hashexpr.sql`` wrote for the ``spark`` dialect, as a Databricks SQL warehouse (which
cannot load the jar) would, and writes the results as hex. The query runs twice: as generated code with ANSI mode
on (constant folding and local-relation conversion off, and no fallback to interpreted evaluation), and
interpreted with ANSI mode off; the session's time zone is not UTC.

Usage: ``python plain_spark_job.py IN.json OUT.json``; ``IN.json`` holds ``{"query": ...}``, ``OUT.json``
gets ``{"jars", "extensions", "no_record_hash", "modes": {mode: [[hex or null, ...] per row]}}``.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

#: The optimizer rules that would evaluate the projection on the driver instead of as generated code.
FOLDING_RULES = ",".join(
    "org.apache.spark.sql.catalyst.optimizer." + rule
    for rule in ("ConstantFolding", "ConvertToLocalRelation", "FoldablePropagation")
)
MODES = {
    "codegen, ANSI on": {
        "spark.sql.ansi.enabled": "true",
        "spark.sql.codegen.wholeStage": "true",
        "spark.sql.codegen.factoryMode": "CODEGEN_ONLY",
        "spark.sql.codegen.fallback": "false",
        "spark.sql.optimizer.excludedRules": FOLDING_RULES,
    },
    "interpreted, ANSI off": {
        "spark.sql.ansi.enabled": "false",
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.sql.optimizer.excludedRules": FOLDING_RULES,
    },
}


def main(source: str, target: str) -> None:
    with open(source, encoding="utf-8") as f:
        query = json.load(f)["query"]
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("hashexpr-plain-spark")
        .config("spark.sql.session.timeZone", "America/Los_Angeles")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    try:
        spark.sql("SELECT record_hash(1)").collect()
        missing = "record_hash resolved"
    except Exception as exc:  # noqa: BLE001 - the message is the result
        missing = str(exc).splitlines()[0]
    report = {
        "jars": spark.conf.get("spark.jars", ""),
        "extensions": spark.conf.get("spark.sql.extensions", ""),
        "no_record_hash": missing,
        "modes": {},
    }
    for mode, confs in MODES.items():
        for key, value in confs.items():
            spark.conf.set(key, value)
        rows = spark.sql(query).collect()
        report["modes"][mode] = [[None if v is None else bytes(v).hex() for v in row] for row in rows]
    spark.stop()
    with open(target, "w", encoding="utf-8") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
