"""A Spark application for tests/test_cluster.py: hash a deterministic dataset on a standalone cluster.

It runs as its own Python process because the pytest process already has a local SparkContext, and a Python
process can hold only one. It gets hashexpr's jar through ``hx.configure`` (``spark.jars``, shipped to the
executors by the driver), writes ``(id, hex(record_hash(*)), partition)`` to Parquet once per repartitioning,
and writes a JSON report: which executors ran the tasks, and how long each step took.

``mixed_dataset`` and ``hashed`` are also imported by the tests, which compute the same rows locally.

Usage: ``python cluster_job.py --master spark://127.0.0.1:PORT --out DIR [--rows N]``
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import hashexpr as hx

LOOPBACK = "127.0.0.1"

#: The repartitionings the job writes; each must give every row the same hash.
PARTITIONINGS = (7, 3)

#: Columns of every kind record_hash covers, derived from ``id`` only, so every session builds the same rows.
#: The moduli differ so that NULLs fall on different rows in different columns.
MIXED_COLUMNS = (
    "id",
    "IF(id % 5 = 0, NULL, CAST(id * 7919 % 65536 - 32768 AS INT)) AS i",
    "CAST(id % 256 - 128 AS TINYINT) AS tiny",
    "IF(id % 7 = 0, NULL, id * 2654435761 - 1000000007) AS big",
    ("CASE id % 13 WHEN 0 THEN NULL WHEN 1 THEN CAST('NaN' AS DOUBLE) WHEN 2 THEN -0.0D"
     " WHEN 3 THEN CAST('-Infinity' AS DOUBLE) ELSE id / 7.0D END AS dbl"),
    "IF(id % 17 = 0, NULL, CAST(id / 3.0D AS FLOAT)) AS flt",
    "IF(id % 4 = 0, NULL, CAST(id * 12345.678 - 999999.5 AS DECIMAL(20, 3))) AS dec",
    "CAST(id AS DECIMAL(38, 18)) / 7 AS dec38",
    "IF(id % 9 = 0, NULL, IF(id % 9 = 1, '', concat('row-', id, repeat('é☃', CAST(id % 3 AS INT))))) AS s",
    "IF(id % 11 = 0, NULL, id % 2 = 0) AS flag",
    "IF(id % 8 = 0, NULL, timestamp_micros(1700000000000000 + id * 3600000001)) AS ts",
    "IF(id % 8 = 1, NULL, CAST(timestamp_micros(-86400000000 * id) AS TIMESTAMP_NTZ)) AS ts_ntz",
    "IF(id % 10 = 0, NULL, date_from_unix_date(CAST(id * 37 - 20000 AS INT))) AS dt",
    "IF(id % 6 = 0, NULL, unhex(sha2(CAST(id AS STRING), 256))) AS bin",
    ("CASE id % 5 WHEN 0 THEN NULL WHEN 1 THEN array() WHEN 2 THEN array(NULL, id)"
     " ELSE sequence(id % 3, id % 3 + id % 5) END AS arr"),
    "IF(id % 12 = 0, NULL, array(array('a', CAST(id AS STRING)), IF(id % 2 = 0, NULL, array(NULL)))) AS nested",
    ("CASE id % 4 WHEN 0 THEN NULL WHEN 1 THEN map() WHEN 2 THEN map('k', id, 'z', NULL)"
     " ELSE map(concat('key', id), id * 3, 'a', -id) END AS m"),
    "map(CAST(id % 3 AS INT), array(CAST(id AS DOUBLE), NULL)) AS m_arr",
    ("IF(id % 15 = 0, NULL, named_struct('x', IF(id % 2 = 0, NULL, id), 'y', concat('y', id),"
     " 'z', map('p', CAST(id AS DECIMAL(10, 2))))) AS st"),
    "make_dt_interval(CAST(id % 3 AS INT), CAST(id % 24 AS INT), 0, id / 1000.0) AS ival",
)


def mixed_dataset(spark: SparkSession, rows: int, partitions: int | None = None) -> DataFrame:
    """Return ``rows`` rows (``id`` 0 to rows - 1) of every kind of column, most of them with NULLs.

    With ``partitions``, the ids are repartitioned (round robin) into that many partitions before the
    columns are derived: the same rows, built and hashed in that many tasks, with only the ids shuffled.
    """
    ids = spark.range(rows)
    if partitions is not None:
        ids = ids.repartition(partitions)
    return ids.selectExpr(*MIXED_COLUMNS)


def hashed(df: DataFrame) -> DataFrame:
    """Return ``(id, h)``: each row's ``id`` and the hex of ``record_hash`` over all of its columns."""
    return df.select("id", F.hex(hx.record_hash("*")).alias("h"))


def _executor_tasks(spark: SparkSession, expected_executors: int, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Return the executors (not the driver) with the number of tasks each ran.

    The counts come from the application's status store, which a listener fills asynchronously: the last
    tasks may be counted a moment after the job ended, so this polls until every expected executor has run
    at least one task, or ``timeout`` passes.
    """
    store = spark.sparkContext._jsc.sc().statusStore()
    deadline = time.monotonic() + timeout
    while True:
        summaries = store.executorList(False)
        executors = []
        for i in range(summaries.size()):
            e = summaries.apply(i)
            if e.id() != "driver":
                executors.append({"id": e.id(), "host_port": e.hostPort(), "tasks": e.totalTasks()})
        busy = [e for e in executors if e["tasks"] > 0]
        if len(busy) >= expected_executors or time.monotonic() > deadline:
            return executors
        time.sleep(0.5)


def cluster_builder(master: str, app_name: str, executors: int) -> SparkSession.Builder:
    """A session builder for ``executors`` one-core executors of the standalone ``master``, driver on loopback.

    The first job waits until every executor is up, so that every worker's executor gets tasks.
    """
    return (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.host", LOOPBACK)
        .config("spark.driver.bindAddress", LOOPBACK)
        .config("spark.driver.memory", "512m")
        .config("spark.executor.memory", "512m")
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", str(executors))
        .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "120s")
        .config("spark.sql.session.timeZone", "UTC")
    )


def main(argv: list[str] | None = None) -> None:
    """Run the job; see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", required=True, help="spark://host:port of the standalone master")
    parser.add_argument("--out", required=True, type=Path, help="directory for the Parquet outputs and report")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--executors", type=int, default=2, help="executors of one core each to wait for")
    args = parser.parse_args(argv)

    builder = (
        cluster_builder(args.master, "hashexpr-cluster-test", args.executors)
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
    )
    started = time.monotonic()
    spark = hx.configure(builder).getOrCreate()
    try:
        sc = spark.sparkContext
        if sc.master != args.master:
            raise RuntimeError(f"expected master {args.master}, the SparkContext has {sc.master}")
        seconds = {"start": round(time.monotonic() - started, 1)}
        for partitions in PARTITIONINGS:
            began = time.monotonic()
            df = hashed(mixed_dataset(spark, args.rows, partitions))
            # The partition each row was hashed in, so that the test can check the repartitioning took effect.
            df.withColumn("partition", F.spark_partition_id()).write.parquet(
                str(args.out / f"partitions-{partitions}")
            )
            seconds[f"partitions-{partitions}"] = round(time.monotonic() - began, 1)
        report = {
            "app_id": sc.applicationId,
            "master": sc.master,
            "jars": sc.getConf().get("spark.jars"),
            "executors": _executor_tasks(spark, args.executors),
            "seconds": seconds,
        }
        (args.out / "report.json").write_text(json.dumps(report, indent=2))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
