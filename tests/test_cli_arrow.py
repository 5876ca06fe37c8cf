"""``--engine`` of the command line: the Arrow engine answers what Spark answers, from the same Parquet files,
and starts no JVM; ``auto`` takes it only where its result is Spark's."""

from __future__ import annotations

import datetime
import decimal
import json
import os
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import cli
from pyspark.sql import functions as F

import hashexpr as hx
from hashexpr.cli import main

UTC = datetime.timezone.utc
TABLE = pa.table(
    {
        "id": pa.array([1, 2, 3, 4, 4], pa.int64()),
        "name": pa.array(["a", None, "x,y", "\u00e9", "\u00e9"]),
        "amount": pa.array([1.5, None, -0.0, 2.0, 2.0]),
        "day": pa.array(
            [datetime.date(2024, 1, 1), None, datetime.date(1969, 12, 31)] + [datetime.date(2024, 2, 29)] * 2
        ),
        "ts": pa.array([0, None, -1, 10**15, 10**15], pa.timestamp("us", tz="UTC")),
        "price": pa.array([decimal.Decimal("1.50"), None, 0, 3, 3], pa.decimal128(10, 2)),
        "tags": pa.array([["x"], [], None, ["y"], ["y"]], pa.list_(pa.string())),
    }
)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cli-arrow")
    pq.write_table(TABLE, folder / "rows.parquet")
    (folder / "parts").mkdir()
    pq.write_table(TABLE.slice(0, 2), folder / "parts" / "part-0.parquet")
    pq.write_table(TABLE.slice(2), folder / "parts" / "part-1.parquet")
    (folder / "parts" / "_SUCCESS").write_text("")
    pq.write_table(pa.table({"t": pa.array([1], pa.time64("us"))}), folder / "time.parquet")
    return {
        "rows": folder / "rows.parquet",
        "parts": folder / "parts",
        "time": folder / "time.parquet",
    }


def _run(capsys, *args: object) -> tuple[int, dict]:
    status = main([*map(str, args), "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_fingerprints_are_sparks(spark, files, capsys):
    df = spark.read.parquet(str(files["rows"]))
    status, report = _run(capsys, "fingerprint", files["rows"])
    assert (status, report["engine"], report["rows"]) == (0, "arrow", 5)
    assert report["fingerprint"] == hx.dataset_fingerprint(df)
    status, report = _run(
        capsys, "fingerprint", files["parts"], "--exclude", "tags", "--algorithm", "lthash16"
    )
    assert report["fingerprint"] == hx.dataset_fingerprint(df.drop("tags"), algorithm="lthash16")
    status, report = _run(capsys, "fingerprint", files["rows"], "--by", "NAME", "--limit", "10")
    expected = {r["name"]: r["fingerprint"] for r in hx.fingerprints_by(df, "name").collect()}
    assert {g["group"]["name"]: g["fingerprint"] for g in report["fingerprints"]} == expected
    assert report["fingerprints"][0]["group"]["name"] is None  # NULLs first, as orderBy
    status, report = _run(capsys, "fingerprint", files["rows"], "--expect", "hx1:" + "0" * 64)
    assert (status, report["matches"]) == (1, False)


def test_a_secret_comes_from_the_environment(spark, files, capsys, monkeypatch):
    from spark_conf import TEST_SECRETS

    monkeypatch.setenv("HASHEXPR_SECRET_PII", TEST_SECRETS["pii"])
    _, report = _run(capsys, "fingerprint", files["rows"], "--algorithm", "lthash16", "--secret", "pii")
    df = spark.read.parquet(str(files["rows"]))
    assert report["fingerprint"] == hx.dataset_fingerprint(df, algorithm="lthash16", secret="pii")


def test_hash_writes_what_spark_writes(spark, files, tmp_path, capsys, monkeypatch):
    from spark_conf import TEST_SECRETS

    monkeypatch.setenv("HASHEXPR_SECRET_PII", TEST_SECRETS["pii"])
    out = tmp_path / "hashed.parquet"
    status, report = _run(
        capsys,
        "hash",
        files["parts"],
        "--out",
        out,
        "--key",
        "id,name",
        "--algorithm",
        "hmac-sha256",
        "--secret",
        "pii",
    )
    assert (status, report["engine"], report["rows"], report["distinct_hashes"]) == (0, "arrow", 5, 4)
    df = spark.read.parquet(str(files["rows"]))
    expected = df.select(
        "id",
        F.hex(hx.record_hash(*TABLE.column_names, algorithm="hmac-sha256", secret="pii")).alias("h"),
        F.hex(hx.record_key("id", "name", algorithm="hmac-sha256", secret="pii")).alias("k"),
    )
    written = spark.read.parquet(str(out))
    assert written.schema["record_hash"].dataType.simpleString() == "binary"
    got = written.select("id", F.hex("record_hash").alias("h"), F.hex("record_key").alias("k"))
    assert sorted(got.collect()) == sorted(expected.collect())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left behind
    status, report = _run(capsys, "hash", files["rows"], "--out", out, "--hex", "--mode", "overwrite")
    hexed = spark.read.parquet(str(out)).select("id", "record_hash").collect()
    assert sorted(hexed) == sorted(df.select("id", F.hex(hx.record_hash("*")).alias("record_hash")).collect())


def test_hash_of_a_file_spark_wrote_reads_back_in_spark(spark, tmp_path, capsys):
    source = tmp_path / "spark.parquet"
    spark.createDataFrame([(1, "a"), (2, None)], "id INT, name STRING").write.parquet(str(source))
    out = tmp_path / "out.parquet"
    status, report = _run(capsys, "hash", source, "--out", out, "--key", "id")
    assert (status, report["engine"]) == (0, "arrow")
    written = spark.read.parquet(str(out))
    assert written.columns == ["id", "name", "record_key", "record_hash"]
    expected = written.select(F.hex(hx.record_hash("id", "name")), F.hex(hx.record_key("id")))
    assert sorted(written.select(F.hex("record_hash"), F.hex("record_key")).collect()) == sorted(
        expected.collect()
    )


def test_collisions(files, capsys):
    status, report = _run(capsys, "collisions", files["rows"], "--key", "name")
    assert (status, report["engine"], report["problems"]) == (0, "arrow", 0)


def test_int96_files_spark_wrote_take_the_arrow_engine(spark, tmp_path, capsys):
    """Spark's default Parquet timestamps (INT96, instants beyond pyarrow's nanoseconds among them) are read as
    Spark reads them: the fingerprint is Spark's, and ``hash`` writes what the Spark engine writes."""
    from spark_conf import spark_conf

    source = tmp_path / "int96"
    with spark_conf(spark, {"spark.sql.parquet.outputTimestampType": "INT96"}):
        spark.sql(
            "SELECT id, CASE id WHEN 0 THEN TIMESTAMP'9999-12-31 23:59:59.999999' WHEN 1 THEN NULL "
            "ELSE TIMESTAMP'1969-12-31 23:59:59.999999' END AS ts FROM range(3)"
        ).write.parquet(str(source))
    df = spark.read.parquet(str(source))
    status, report = _run(capsys, "fingerprint", source, "--engine", "arrow")
    assert (status, report["engine"]) == (0, "arrow")
    assert report["fingerprint"] == hx.dataset_fingerprint(df)
    outs = {e: tmp_path / f"by-{e}" for e in ("arrow", "spark")}
    assert main(["hash", str(source), "--out", str(outs["arrow"]), "--engine", "arrow"]) == 0
    assert main(["hash", str(source), "--out", str(outs["spark"]), "--engine", "spark"], spark=spark) == 0
    capsys.readouterr()
    written = {e: spark.read.parquet(str(out)) for e, out in outs.items()}
    assert written["arrow"].schema.simpleString() == written["spark"].schema.simpleString()
    shown = [
        sorted(w.selectExpr("id", "unix_micros(ts)", "hex(record_hash)").collect()) for w in written.values()
    ]
    assert shown[0] == shown[1]
    assert shown[0][0][1] == 253402300799999999  # 9999-12-31 23:59:59.999999, not wrapped


def test_auto_takes_spark_where_the_engine_would_differ(files, capsys):
    status = main(["fingerprint", str(files["time"]), "--engine", "arrow"])
    assert status == 2
    assert "column 't': Spark has no type for the Arrow type time64[us]" in capsys.readouterr().err
    status = main(["fingerprint", str(files["rows"]), "--engine", "arrow", "--schema", "id BIGINT"])
    assert status == 2
    assert "--schema" in capsys.readouterr().err
    status = main(
        ["collisions", str(files["rows"]), "--key", "id", "--hash-col", "name", "--engine", "arrow"]
    )
    assert status == 2


def test_auto_leaves_spark_types_arrow_cannot_say_to_spark(spark, tmp_path, capsys):
    path = tmp_path / "collated.parquet"
    # In-process runs here must not reach Spark: the command line stops the session it used.
    spark.sql("SELECT 'Abc' COLLATE UTF8_LCASE AS s, 1 AS id").write.parquet(str(path))
    status = main(["fingerprint", str(path), "--engine", "arrow"])
    assert status == 2
    assert "column 's': Spark reads it as string collate UTF8_LCASE" in capsys.readouterr().err
    variant = tmp_path / "variant.parquet"
    spark.sql("""SELECT 1 AS id, parse_json('{"x": 1}') AS v""").write.parquet(str(variant))
    assert main(["fingerprint", str(variant), "--engine", "arrow"]) == 2
    assert "'v'" in capsys.readouterr().err


def test_the_console_command_starts_no_jvm(files, tmp_path):
    """The real command in a process whose only java records that it ran: auto and arrow never run it."""
    fake = tmp_path / "jdk" / "bin"
    fake.mkdir(parents=True)
    marker = tmp_path / "java-ran"
    (fake / "java").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (fake / "java").chmod(stat.S_IRWXU)
    env = {"JAVA_HOME": str(fake.parent), "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    for engine in ("auto", "arrow"):
        run = cli("fingerprint", files["rows"], "--engine", engine, "--json", extra_env=env)
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["engine"] == "arrow"
        assert not marker.exists()
    # The check works: Spark's launcher runs that java.
    run = cli("fingerprint", files["rows"], "--engine", "spark", extra_env=env)
    assert run.returncode == 3
    assert marker.exists()
