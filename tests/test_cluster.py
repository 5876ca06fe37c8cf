"""record_hash on a real standalone cluster (a master and two workers) gives the same bytes as local Spark.

The application runs in a separate Python process (tests/cluster_job.py): the pytest process already has a
local SparkContext, and a Python process can have only one. The job gets hashexpr's jar the way users give it,
through ``hx.configure`` (``spark.jars``), which ships it to the executors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_job import PARTITIONINGS, hashed, mixed_dataset
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from servers import ManagedProcess, StandaloneCluster, spark_env, standalone_cluster

# Processes of its own (a standalone master and workers): make check leaves it out.
pytestmark = pytest.mark.slow

ROWS = 200_000
WORKERS = 2
JOB_TIMEOUT_SECONDS = 360
PYTHON_SOURCES = Path(__file__).resolve().parents[1] / "python"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A standalone master with two one-core workers, stopped (executors included) after the module."""
    with standalone_cluster(tmp_path_factory.mktemp("standalone"), workers=WORKERS) as running:
        yield running


@pytest.fixture(scope="module")
def job(cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run tests/cluster_job.py against the cluster; return its report, with ``out``, its output directory."""
    out = tmp_path_factory.mktemp("cluster-job")
    # The job's own Python process needs hashexpr from the source tree, like this one (PYTHONPATH=python).
    pythonpath = os.pathsep.join(filter(None, [str(PYTHON_SOURCES), os.environ.get("PYTHONPATH")]))
    env = spark_env({"PYTHONPATH": pythonpath, "PYSPARK_PYTHON": sys.executable})
    args = [
        sys.executable,
        str(Path(__file__).with_name("cluster_job.py")),
        "--master",
        cluster.master_url,
        "--out",
        str(out),
        "--rows",
        str(ROWS),
        "--executors",
        str(WORKERS),
    ]
    process = ManagedProcess.start("cluster job", args, out / "job.log", env)
    try:
        try:
            code = process.popen.wait(timeout=JOB_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"the cluster job did not finish in {JOB_TIMEOUT_SECONDS}s; log:\n{process.log_tail()}"
            )
        if code != 0:
            pytest.fail(f"the cluster job failed with exit code {code}; log:\n{process.log_tail()}")
    finally:
        # Ends the job's driver JVM too, should the Python process have left it behind.
        process.stop()
    report = json.loads((out / "report.json").read_text())
    report["out"] = out
    return report


def _mismatches(expected: DataFrame, actual: DataFrame) -> DataFrame:
    """Rows whose id is missing on either side, or whose hashes differ."""
    joined = expected.alias("e").join(actual.alias("a"), on="id", how="full_outer")
    return joined.where(~F.col("e.h").eqNullSafe(F.col("a.h"))).select("id", "e.h", "a.h")


def test_job_ran_on_both_workers(cluster: StandaloneCluster, job: dict[str, Any]) -> None:
    """The job's tasks ran on two executors, one on each worker, and the jar came from spark.jars."""
    assert job["master"] == cluster.master_url
    assert job["jars"].endswith(".jar") and "hashexpr-spark" in job["jars"], job["jars"]
    executors = job["executors"]
    assert len(executors) == WORKERS, executors
    assert all(e["tasks"] > 0 for e in executors), executors
    # Each worker lists the application's executor (finished, since the job has stopped).
    for state in cluster.worker_states():
        apps = {e["appid"] for e in state["executors"] + state["finishedexecutors"]}
        assert job["app_id"] in apps, (state["id"], apps)
    completed = {app["id"]: app for app in cluster.master_state()["completedapps"]}
    assert job["app_id"] in completed, completed.keys()


def _output(spark: SparkSession, job: dict[str, Any], partitions: int) -> DataFrame:
    return spark.read.parquet(str(job["out"] / f"partitions-{partitions}"))


@pytest.fixture(scope="module")
def expected(spark: SparkSession) -> Iterator[DataFrame]:
    """``(id, h)`` for the job's dataset, computed by the local session (cached: several tests compare)."""
    df = hashed(mixed_dataset(spark, ROWS)).cache()
    yield df
    df.unpersist()


@pytest.mark.parametrize("partitions", PARTITIONINGS)
def test_cluster_hashes_equal_local_hashes(
    spark: SparkSession, expected: DataFrame, job: dict[str, Any], partitions: int
) -> None:
    """Every row hashed on the cluster has the hash the local session computes for it."""
    actual = _output(spark, job, partitions)
    assert actual.count() == ROWS
    # Each partition of the repartitioning got rows, so the rows really were hashed in that many tasks.
    assert actual.select("partition").distinct().count() == partitions
    bad = _mismatches(expected, actual.drop("partition"))
    assert bad.isEmpty(), bad.limit(5).collect()


def test_repartitionings_agree(spark: SparkSession, job: dict[str, Any]) -> None:
    """The hash of a row does not depend on how the rows were partitioned."""
    first, *others = (_output(spark, job, p).drop("partition") for p in PARTITIONINGS)
    for other in others:
        bad = _mismatches(first, other)
        assert bad.isEmpty(), bad.limit(5).collect()
