"""with_metadata on a real local Spark: names, values, clashes, and the source file of Parquet reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import hashexpr as hx
from hashexpr.spark.metadata import DEFAULT_NAMES, with_metadata

COMMIT = "2026-03-04T05:06:07.891"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def orders(spark):
    return spark.createDataFrame(
        [(1, " c-1", 10.5), (2, "C-1", None), (3, None, 7.0), (3, None, 7.0)],
        "order_id INT, customer STRING, amount DOUBLE",
    )


def test_columns_values_and_sequence_numbers(spark, orders):
    tagged = with_metadata(orders.repartition(2), "order_id", commit_time=COMMIT)
    assert tagged.columns == orders.columns + list(DEFAULT_NAMES.values())
    types = dict(tagged.dtypes)
    assert [types[n] for n in DEFAULT_NAMES.values()] == [
        "binary",
        "binary",
        "timestamp",
        "string",
        "string",
        "int",
    ]

    expected = orders.select(
        "order_id",
        hx.record_key("order_id").alias("k"),
        hx.record_hash("order_id", "customer", "amount", by_name=True).alias("h"),
    )
    joined = tagged.join(expected.distinct(), "order_id").collect()
    assert len(joined) == 4
    assert all(r._hx_record_key == r.k and r._hx_record_hash == r.h for r in joined)
    commit = F.lit("2026-03-04 05:06:07.891").cast("timestamp")  # the session time zone is UTC
    assert tagged.where(F.col("_hx_commit_time") == commit).count() == 4
    assert {r._hx_format_version for r in joined} == {hx.FORMAT_VERSION}
    assert {r._hx_source_file for r in joined} == {None}

    seqnos = [r._hx_commit_seqno for r in joined]
    assert len(set(seqnos)) == 4  # unique even for the duplicate rows
    parts = [s.split("_") for s in seqnos]
    assert {p[0] for p in parts} == {"20260304050607891"}
    # Each partition numbers its rows 0, 1, ...
    by_partition: dict[str, list[int]] = {}
    for _, partition, index in parts:
        by_partition.setdefault(partition, []).append(int(index))
    assert all(sorted(ix) == list(range(len(ix))) for ix in by_partition.values())


def test_record_hash_includes_the_key_and_ignores_column_order(spark, orders):
    tagged = with_metadata(
        orders, "customer", commit_seqno=False, key_options={"trim": True, "case": "upper"}
    )
    rows = {r.order_id: r for r in tagged.where("order_id < 3").collect()}
    # ' c-1' and 'C-1' are one record key under the normalisation, and still two different records.
    assert rows[1]._hx_record_key == rows[2]._hx_record_key
    assert rows[1]._hx_record_hash != rows[2]._hx_record_hash
    reordered = with_metadata(orders.select("amount", "order_id", "customer"), "customer", commit_seqno=False)
    assert sorted(r._hx_record_hash for r in reordered.collect()) == sorted(
        r._hx_record_hash for r in with_metadata(orders, "customer", commit_seqno=False).collect()
    )
    payload_only = with_metadata(orders, "order_id", hash_columns=["amount"], source_file=False)
    assert "_hx_source_file" not in payload_only.columns
    assert (
        payload_only.where("order_id = 1").first()._hx_record_hash
        == (orders.where("order_id = 1").select(hx.record_hash("amount", by_name=True)).first()[0])
    )


def test_default_commit_time_is_one_literal(spark, orders):
    # PySpark returns timestamps as naive datetimes in the local time zone.
    before = datetime.now().replace(microsecond=0)
    tagged = with_metadata(orders, "order_id")
    first = {r._hx_commit_time for r in tagged.collect()}
    again = {r._hx_commit_time for r in tagged.collect()}
    assert len(first) == 1 and first == again  # recomputing the frame does not move the commit time
    assert before <= next(iter(first)) <= datetime.now()


def test_names_mapping_and_clashes(spark, orders):
    renamed = with_metadata(
        orders,
        "order_id",
        commit_time=COMMIT,
        names={"record_key": "RECORD_KEY", "record_hash": "RECORD_HASH"},
    )
    assert renamed.columns[3:5] == ["RECORD_KEY", "RECORD_HASH"]
    assert (
        with_metadata(orders, ["order_id", "customer"], commit_id="c42")
        .first()
        ._hx_commit_seqno.startswith("c42_")
    )
    with pytest.raises(ValueError, match="'_hx_commit_time'.*'_HX_COMMIT_TIME'"):
        with_metadata(orders.withColumn("_HX_COMMIT_TIME", F.lit(1)), "order_id")
    with pytest.raises(ValueError, match="'amount'"):
        with_metadata(orders, "order_id", names={"record_key": "amount"})
    with pytest.raises(ValueError, match="twice"):
        with_metadata(orders, "order_id", names={"record_key": "k", "record_hash": "K"})
    with pytest.raises(ValueError, match="unknown field 'file'"):
        with_metadata(orders, "order_id", names={"file": "f"})
    with pytest.raises(ValueError, match="'nope'"):
        with_metadata(orders, "nope")
    with pytest.raises(TypeError, match="commit_time"):
        with_metadata(orders, "order_id", commit_time=12)


def test_source_file_of_parquet_reads(spark, orders, tmp_path):
    path = tmp_path / "orders"
    orders.repartition(2).write.parquet(str(path))
    read = spark.read.parquet(str(path))
    files = {p.name for p in path.glob("*.parquet")}
    tagged = with_metadata(read.where("order_id > 0").select("order_id", "customer"), "order_id")
    sources = {r._hx_source_file for r in tagged.collect()}
    assert {s.rsplit("/", 1)[-1] for s in sources} == files
    # After an aggregation no row comes from one file.
    counted = with_metadata(read.groupBy("customer").count(), "customer")
    assert {r._hx_source_file for r in counted.collect()} == {None}


# Run in a Python of its own, so that everything Spark and PySpark log (to stderr) can be read: the JVM's log4j
# output does not go through this process's sys.stderr.
_SOURCE_FILE_SCRIPT = r"""
import json, sys
from pyspark.sql import SparkSession, functions as F
from hashexpr.spark.metadata import with_metadata

jar, folder = sys.argv[1:]
spark = (SparkSession.builder.master("local[1]").config("spark.jars", jar)
         .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1").getOrCreate())
spark.sparkContext.setLogLevel("WARN")
spark.range(4).selectExpr("CAST(id AS INT) AS id", "'v' || id AS v").coalesce(1).write.parquet(folder + "/p")
files = spark.read.parquet(folder + "/p")
other = spark.read.parquet(folder + "/p").withColumnsRenamed({"id": "id2", "v": "v2"})
memory = spark.createDataFrame([(1, "m")], "id INT, w STRING")
cases = {
    "memory": memory,
    "files": files,
    "filtered projection": files.where("id > 0").select("v", "id"),
    "join with memory": files.join(memory.withColumnRenamed("id", "mid"), F.col("id") == F.col("mid")),
    "join on names": files.join(memory, "id"),
    "two file scans joined": files.join(other, F.col("id") == F.col("id2")),
    "aggregate": files.groupBy("v").count(),
    "union": files.unionByName(files),
    "own _metadata column": files.withColumn("_metadata", F.lit(1)),
    "stream": spark.readStream.schema("id INT, v STRING").parquet(folder + "/p"),
}
found = {}
for name, df in cases.items():
    tagged = with_metadata(df, df.columns[0], commit_seqno=False)
    if df.isStreaming:
        query = tagged.writeStream.format("memory").queryName("t").trigger(availableNow=True).start()
        query.awaitTermination()
        tagged = spark.table("t")
    found[name] = sorted({str(r._hx_source_file).rsplit("/", 1)[-1][:5] for r in tagged.collect()})
print(json.dumps(found))
spark.stop()
"""


@pytest.mark.slow
def test_source_file_probe_is_silent_and_follows_name_resolution(tmp_path):
    """No failed analysis (PySpark logs each one at ERROR, with its stack trace), no job, the right answers."""
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "python"), env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", _SOURCE_FILE_SCRIPT, hx.jar_path(), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    errors = [line for line in done.stderr.splitlines() if "ERROR" in line]
    assert errors == [], "\n".join(errors)[:4000]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "memory": ["None"],
        "files": ["part-"],
        "filtered projection": ["part-"],
        "join with memory": ["part-"],
        # A join on column names hides the hidden columns of both sides (Spark's name resolution).
        "join on names": ["None"],
        "two file scans joined": ["None"],
        "aggregate": ["None"],
        "union": ["None"],
        "own _metadata column": ["None"],
        "stream": ["part-"],
    }
