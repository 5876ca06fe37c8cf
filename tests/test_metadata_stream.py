"""with_metadata on a real file-source stream: one commit per micro-batch, replayed batches unchanged."""

from __future__ import annotations

import json
from collections import defaultdict
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hashexpr.spark.metadata import _commit_id, _instant_id, with_metadata

SCHEMA = "order_id INT, customer STRING, amount DOUBLE"
FILES = 3
ROWS_PER_FILE = 5
#: A session time zone far from UTC: commit ids must still be UTC.
ZONE = "America/Los_Angeles"


@contextmanager
def _session_zone(spark: SparkSession, zone: str):
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    """Three JSON files of orders; one file per micro-batch with maxFilesPerTrigger=1."""
    folder = tmp_path / "landing"
    folder.mkdir()
    for f in range(FILES):
        rows = [
            {"order_id": f * 100 + i, "customer": f"c-{i % 3}", "amount": None if i == 2 else f + i / 4}
            for i in range(ROWS_PER_FILE)
        ]
        (folder / f"orders-{f}.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return folder


def _stream(spark: SparkSession, landing: Path) -> DataFrame:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(landing))


def _run(spark: SparkSession, landing: Path, out: Path, checkpoint: Path) -> list[int]:
    """Tag the stream into a Parquet sink until no file is left; return the micro-batch ids run."""
    query = (
        with_metadata(_stream(spark, landing), "order_id")
        .writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(out))
    )
    query.awaitTermination()
    return [p["batchId"] for p in query.recentProgress]


def _written(spark: SparkSession, out: Path) -> dict[int, list[tuple]]:
    """The sink's rows (as its metadata log lists its files) by micro-batch id, from the sequence number."""
    rows = spark.read.parquet(str(out)).select(
        "order_id",
        "_hx_record_key",
        "_hx_record_hash",
        F.unix_millis("_hx_commit_time").alias("millis"),
        "_hx_commit_seqno",
        "_hx_source_file",
    )
    by_batch: dict[int, list[tuple]] = defaultdict(list)
    for r in rows.collect():
        batch = int(r._hx_commit_seqno.split("_")[1])
        by_batch[batch].append(
            (r.order_id, bytes(r._hx_record_key), bytes(r._hx_record_hash), r.millis, r._hx_commit_seqno,
             r._hx_source_file)
        )
    return {b: sorted(rows) for b, rows in by_batch.items()}


def _forget_last_commit(checkpoint: Path, out: Path, batch: int) -> None:
    """Make the query run ``batch`` again: drop its commit, and its entry in the sink's log so it is rewritten."""
    for log in (checkpoint / "commits", out / "_spark_metadata"):
        for name in (str(batch), f".{batch}.crc"):
            (log / name).unlink(missing_ok=True)


def test_stream_commits_per_micro_batch_and_replays_identically(spark, landing, tmp_path):
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    with _session_zone(spark, ZONE):
        assert _run(spark, landing, out, checkpoint) == list(range(FILES))
        first = _written(spark, out)

        # Keys and hashes are those of the batch function over the same data.
        batch = with_metadata(spark.read.schema(SCHEMA).json(str(landing)), "order_id", commit_seqno=False)
        expected = sorted(
            (r.order_id, bytes(r._hx_record_key), bytes(r._hx_record_hash), r._hx_source_file)
            for r in batch.collect()
        )
        got = sorted((r[0], r[1], r[2], r[5]) for rows in first.values() for r in rows)
        assert got == expected and len(got) == FILES * ROWS_PER_FILE

        assert sorted(first) == list(range(FILES))
        commit_times = {}
        for b, rows in first.items():
            millis = {r[3] for r in rows}
            assert len(millis) == 1, f"micro-batch {b} has one commit time"
            commit_times[b] = millis.pop()
            assert len({r[5] for r in rows}) == 1, "one file per micro-batch"
            instant = datetime.fromtimestamp(commit_times[b] / 1000, tz=timezone.utc)
            for r in rows:
                commit, batch_id, partition, index = r[4].split("_")
                assert (commit, int(batch_id)) == (_commit_id(instant), b)
                assert int(partition) >= 0 and int(index) >= 0
        assert len(set(commit_times.values())) == FILES, "every micro-batch has its own commit time"
        seqnos = [r[4] for rows in first.values() for r in rows]
        assert len(set(seqnos)) == len(seqnos)

        # Spark runs the last micro-batch again from its offset log: same time, same sequence numbers.
        _forget_last_commit(checkpoint, out, FILES - 1)
        assert _run(spark, landing, out, checkpoint) == [FILES - 1]
        assert _written(spark, out) == first


def test_stream_commit_id_is_a_prefix_and_commit_time_is_refused(spark, landing):
    stream = _stream(spark, landing)
    with pytest.raises(ValueError, match="commit_time cannot be given for a streaming DataFrame.*foreachBatch"):
        with_metadata(stream, "order_id", commit_time="2026-01-01T00:00:00")
    query = (
        with_metadata(stream, "order_id", commit_id="load-7", source_file=False)
        .writeStream.format("memory")
        .queryName("tagged_stream")
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
        seqnos = [r[0] for r in spark.sql("SELECT _hx_commit_seqno FROM tagged_stream").collect()]
    finally:
        query.stop()
        spark.sql("DROP VIEW IF EXISTS tagged_stream")
    assert len(seqnos) == len(set(seqnos)) == FILES * ROWS_PER_FILE
    assert {tuple(s.split("_")[:2]) for s in seqnos} == {("load-7", str(b)) for b in range(FILES)}


@pytest.mark.parametrize(
    "instant",
    [
        "2026-03-08T10:30:00.123",  # 02:30 in Los Angeles that day does not exist (DST)
        "1969-12-31T23:59:59.999",
        "1900-01-01T00:00:00.000",
        "2026-12-31T23:59:59.999",
        "2026-03-04T05:06:07.891",
    ],
)
def test_instant_id_is_utc_in_any_session_time_zone(spark, instant):
    at = datetime.fromisoformat(instant).replace(tzinfo=timezone.utc)
    for zone in ("UTC", ZONE, "Asia/Kathmandu"):
        with _session_zone(spark, zone):
            got = spark.range(1).select(_instant_id(F.lit(at).cast("timestamp"))).first()[0]
        assert got == _commit_id(at), zone
