"""A Spark application for tests/test_faults.py: record_hash, dataset_fingerprint and diff under faults.

It runs on a standalone cluster in its own Python process (the pytest process already has a local
SparkContext). Each phase runs one workload under one fault, as the job group ``<fault>-<workload>``:

- workloads: ``write`` (``(id, hex(record_hash(*)))`` to Parquet), ``fingerprint`` (``hx.dataset_fingerprint``)
  and ``diff`` (``hx.diff`` with values, reduced to hashes);
- faults, injected by a Python UDF filter that keeps every row: with ``kill``, tasks wait half-way until the
  test has SIGKILLed a worker; ``flaky`` raises in the first attempt of some tasks, half-way
  through their rows; ``straggle`` makes one task per phase sleep in its first attempt (speculation's case).

Before each phase the job waits until it has its executors again (a killed worker's replacement). Spark's
event log (``events/``) records what happened to every task; ``report.json`` holds the fingerprints and the
diff rows.

``diff_sides`` and ``diff_rows`` are also imported by the tests, which compute the undisturbed results locally.

Usage: ``python fault_job.py --master spark://127.0.0.1:PORT --out DIR --ui-port PORT [--conf KEY=VALUE ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from cluster_job import MIXED_COLUMNS, cluster_builder, hashed
from pyspark import TaskContext
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

import hashexpr as hx

WORKLOADS = ("write", "fingerprint", "diff")
FAULTS = ("kill", "flaky", "straggle")

#: Every (fault, workload) phase, in the order the job runs them. Kill phases are apart, so that the new
#: executor of a killed worker starts while other phases run on the surviving one; the last kill is the last
#: phase, after which the application needs no new executor.
PHASES = (
    ("kill", "write"),
    ("flaky", "write"),
    ("flaky", "fingerprint"),
    ("kill", "fingerprint"),
    ("flaky", "diff"),
    ("straggle", "write"),
    ("straggle", "fingerprint"),
    ("straggle", "diff"),
    ("kill", "diff"),
)
#: The faults that need every executor: one to kill while the other carries on, or a host for the copy.
NEEDS_EVERY_EXECUTOR = ("kill", "straggle")

#: The message of the failures the ``flaky`` fault injects.
INJECTED = "hashexpr-test: injected failure in the first attempt"

#: With ``kill``, tasks wait half-way until the test has killed a worker and created this file in the phase's
#: marker directory (or until the time is up, should the test be gone).
KILLED = "killed"
KILL_WAIT_SECONDS = 90.0
#: How long the straggler sleeps: far longer than the phase takes when speculation replaces it.
STRAGGLE_SECONDS = 60.0


def dataset(spark: SparkSession, rows: int, partitions: int) -> DataFrame:
    """The mixed rows of tests/cluster_job.py, ``rows`` ids in ``partitions`` partitions of equal size."""
    return spark.range(0, rows, 1, partitions).selectExpr(*MIXED_COLUMNS)


def diff_sides(old: DataFrame, rows: int) -> tuple[DataFrame, DataFrame]:
    """``old`` (``rows`` ids from 0) and a new snapshot of it: some rows deleted, some updated, 25 inserted."""
    new = old.where("id % 97 <> 5").withColumn("s", F.expr("IF(id % 89 = 0, concat(s, '*'), s)"))
    new = new.withColumn("dbl", F.expr("IF(id % 113 = 1, dbl + 1, dbl)"))
    inserted = old.sparkSession.range(10 * rows, 10 * rows + 25, 1, 1).selectExpr(*MIXED_COLUMNS)
    return old, new.unionByName(inserted)


def diff_rows(old: DataFrame, new: DataFrame) -> list[list[Any]]:
    """hx.diff of the two sides with values, as sorted ``[id, change, side, changed_columns, old, new]`` rows.

    The value structs are reduced to the hex of their record hash, which differs when a value does.
    """
    rows = (
        hx.diff(old, new, "id", include_values=True)
        .select(
            "id",
            "change",
            "side",
            "changed_columns",
            F.hex(hx.record_hash("old")).alias("old"),
            F.hex(hx.record_hash("new")).alias("new"),
        )
        .collect()
    )
    return sorted([r.id, r.change, r.side, list(r.changed_columns or []), r.old, r.new] for r in rows)


def _fault_filter(fault: str, rows_per_partition: int, marker_dir: str) -> Column:
    """A filter that keeps every row and injects ``fault`` in the tasks that evaluate it."""

    def keep(i: int) -> bool:
        context = TaskContext.get()
        position = i % rows_per_partition
        first_attempt = context.attemptNumber() == 0
        half_way = position == rows_per_partition // 2
        if fault == "kill" and half_way and context.partitionId() != 0:
            # Every task but the first waits for the kill: the test sees one task done and both executors busy
            # however slow the machine, and the kill interrupts tasks half-way through their rows.
            deadline = time.monotonic() + KILL_WAIT_SECONDS
            while not os.path.exists(os.path.join(marker_dir, KILLED)) and time.monotonic() < deadline:
                time.sleep(0.05)
        elif fault == "flaky" and first_attempt and half_way and context.partitionId() % 3 == 0:
            raise RuntimeError(INJECTED)
        elif fault == "straggle" and first_attempt and position == 0 and context.partitionId() == 1:
            # One straggler per phase: two could hold both executors, leaving none to run a copy on.
            try:
                os.close(os.open(os.path.join(marker_dir, "straggler"), os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return True
            time.sleep(STRAGGLE_SECONDS)
        return True

    return F.udf(keep, "boolean")(F.col("id"))


def _wait_for_executors(spark: SparkSession, executors: int, timeout: float) -> None:
    """Wait until ``executors`` executors (besides the driver) are registered, e.g. after a worker was killed."""
    tracker = spark.sparkContext._jsc.sc().statusTracker()
    deadline = time.monotonic() + timeout
    while len(tracker.getExecutorInfos()) - 1 < executors:
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {executors} executors after {timeout:.0f}s")
        time.sleep(0.2)


def main(argv: list[str] | None = None) -> None:
    """Run the phases; see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", required=True, help="spark://host:port of the standalone master")
    parser.add_argument("--out", required=True, type=Path, help="directory for outputs, event log and report")
    parser.add_argument("--ui-port", required=True, type=int, help="the driver's web UI (and REST API) port")
    parser.add_argument("--rows", type=int, default=12_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--executors", type=int, default=2, help="executors of one core each to wait for")
    parser.add_argument("--conf", action="append", default=[], help="more Spark settings, key=value")
    args = parser.parse_args(argv)
    if args.rows % args.partitions:
        parser.error("--rows must be a multiple of --partitions")

    events = args.out / "events"
    events.mkdir(parents=True, exist_ok=True)
    builder = (
        cluster_builder(args.master, "hashexpr-fault-test", args.executors)
        .config("spark.task.maxFailures", "4")
        # No delay scheduling: a task runs on the first free executor, not after waiting for its map outputs'.
        .config("spark.locality.wait", "0")
        .config("spark.sql.shuffle.partitions", str(args.executors))
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", str(args.ui_port))
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.port.maxRetries", "0")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", events.as_uri())
        .config("spark.eventLog.compress", "false")
        .config("spark.eventLog.rolling.enabled", "false")
    )
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = hx.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    report: dict[str, Any] = {"app_id": spark.sparkContext.applicationId, "seconds": {}}
    try:
        for fault, workload in PHASES:
            phase = f"{fault}-{workload}"
            if fault in NEEDS_EVERY_EXECUTOR:
                _wait_for_executors(spark, args.executors, timeout=120)
            began = time.monotonic()
            spark.sparkContext.setJobGroup(phase, phase)
            marker_dir = args.out / "markers" / phase
            marker_dir.mkdir(parents=True)
            keep = _fault_filter(fault, args.rows // args.partitions, str(marker_dir))
            df = dataset(spark, args.rows, args.partitions).where(keep)
            if workload == "write":
                hashed(df).write.parquet(str(args.out / phase))
            elif workload == "fingerprint":
                report[phase] = hx.dataset_fingerprint(df)
            else:
                report[phase] = diff_rows(*diff_sides(df, args.rows))
            report["seconds"][phase] = round(time.monotonic() - began, 1)
        (args.out / "report.json").write_text(json.dumps(report, indent=2))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
