"""The command line in scripts: ``--json``, exit statuses, ``--expect``, reader options, column choice, clean runs.

Runs go in-process, in the ``spark`` fixture's session, in a directory of their own; the expected values come
from the Python API in that session on the same files. Real ``python -m hashexpr`` processes, each with its own
embedded Spark, are kept where the process is the point: what its JVM prints, a Spark that does not start, a run
that leaves nothing behind, the machine's time zone.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import JVM_NOTICE, cli, cli_all, ok, one_error_line, run, run_without_spark, summary

import hashexpr as hx

ROWS_SCHEMA = "id INT, name STRING, amount DOUBLE, day DATE"
ROWS = [
    (1, "a", 1.5, datetime.date(2024, 1, 1)),
    (2, None, None, None),
    (3, "x,y", -0.0, datetime.date(1969, 12, 31)),
    (4, "é", 2.0, datetime.date(2024, 2, 29)),
]
# Snapshots keyed by a lower-case `iata`: one update (name), one update (elevation only), one delete, one insert.
SNAP_SCHEMA = "iata STRING, name STRING, elevation INT"
SNAP_OLD = [("JFK", "Kennedy", 13), ("LGA", "LaGuardia", 21), ("EWR", "Newark", 18), ("BOS", "Logan", 20)]
SNAP_NEW = [("JFK", "John F Kennedy", 13), ("LGA", "LaGuardia", 22), ("EWR", "Newark", 18), ("SFO", "SF", 13)]
RAGGED_CSV = "a,b\n1,2\n3\n4,5,6\n"
# One JSON array over several lines: not JSON Lines.
ARRAY_JSON = '[\n  {"a": 1, "b": "x"},\n  {"a": 2, "b": "y"}\n]\n'
TIMESTAMPS_CSV = "id,ts\n1,2024-03-10 01:30:00\n2,2024-11-03 01:30:00\n"
ZERO = "hx1:" + "0" * 64


@pytest.fixture(scope="module")
def work(spark, tmp_path_factory) -> Path:
    """The inputs, in the directory the runs start in."""
    folder = tmp_path_factory.mktemp("cli-automation")
    rows = spark.createDataFrame(ROWS, ROWS_SCHEMA).coalesce(1)
    rows.write.parquet(str(folder / "rows.parquet"))
    rows.write.parquet(str(folder / "rows_copy.parquet"))
    rows.withColumn("extra", rows.id * 2).write.parquet(str(folder / "rows_extra.parquet"))
    spark.createDataFrame(SNAP_OLD, SNAP_SCHEMA).coalesce(1).write.parquet(str(folder / "snap_old.parquet"))
    spark.createDataFrame(SNAP_NEW, SNAP_SCHEMA).coalesce(1).write.parquet(str(folder / "snap_new.parquet"))
    groups = [(bytes([1, 2]), 1), (None, 2), (bytes([255]), 3), (bytes([1, 2]), 4), (bytes([0]), 5)]
    spark.createDataFrame(groups, "g BINARY, v INT").coalesce(1).write.parquet(str(folder / "groups.parquet"))
    # A hub whose stored hash keys are hex text, as `hashexpr hash --hex` writes them, with one collision.
    hub = [("a", "01" * 16), ("b", "01" * 16), ("c", "02" * 16)]
    spark.createDataFrame(hub, "k STRING, hk STRING").coalesce(1).write.parquet(str(folder / "hub_hex.parquet"))
    spark.sql("SELECT 1 AS id, parse_json('{\"x\": 1}') AS v").write.parquet(str(folder / "variant.parquet"))
    (folder / "ragged.csv").write_text(RAGGED_CSV, encoding="utf-8")
    (folder / "array.json").write_text(ARRAY_JSON, encoding="utf-8")
    (folder / "empty.csv").write_text("", encoding="utf-8")
    (folder / "timestamps.csv").write_text(TIMESTAMPS_CSV, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def fingerprint_of_rows(spark, work) -> str:
    return hx.dataset_fingerprint(spark.read.parquet(str(work / "rows.parquet")))


@pytest.fixture(scope="module")
def before(work) -> set[str]:
    return {p.name for p in work.iterdir()}


@pytest.fixture(scope="module")
def runs(spark, work, fingerprint_of_rows, before) -> dict[str, subprocess.CompletedProcess]:
    """The runs, in the test session; the tests below check one or a few each."""
    commands = {
            "hash json": ["hash", "rows.parquet", "--out", "hashed.parquet", "--key", "ID", "--json"],
            "hash exclude": ["hash", "rows.parquet", "--out", "excluded.parquet", "--exclude", "day,AMOUNT", "--hex"],
            "fingerprint json": ["fingerprint", "rows.parquet", "--json"],
            "expect same": ["fingerprint", "rows.parquet", "--expect", fingerprint_of_rows.upper()],
            "expect other": ["fingerprint", "rows.parquet", "--expect", ZERO],
            "expect other json": ["fingerprint", "rows.parquet", "--expect", ZERO, "--json"],
            "fingerprint exclude": ["fingerprint", "rows.parquet", "--exclude", "day"],
            "by text": ["fingerprint", "groups.parquet", "--by", "g"],
            "by limit json": ["fingerprint", "groups.parquet", "--by", "g", "--limit", "2", "--json"],
            "by out": ["fingerprint", "groups.parquet", "--by", "g", "--out", "group_fingerprints.json"],
            "diff changes": ["diff", "snap_old.parquet", "snap_new.parquet", "--key", "IATA", "--exit-code", "--json"],
            "diff exclude": ["diff", "snap_old.parquet", "snap_new.parquet", "--key", "iata", "--exclude", "Elevation"],
            "diff none": ["diff", "rows.parquet", "rows_copy.parquet", "--key", "id", "--exit-code"],
            "diff schema": ["diff", "rows.parquet", "rows_extra.parquet", "--key", "id"],
            "collisions hex": ["collisions", "hub_hex.parquet", "--key", "k", "--hash-col", "HK", "--json"],
            "collisions text": ["collisions", "hub_hex.parquet", "--key", "k", "--hash-col", "hk"],
            "collisions none": ["collisions", "rows.parquet", "--key", "id"],
            "ragged permissive": ["fingerprint", "ragged.csv", "--json"],
            "ragged failfast": ["fingerprint", "ragged.csv", "--option", "mode=FAILFAST"],
            "schema": ["fingerprint", "ragged.csv", "--schema", "a STRING, b STRING", "--json"],
            "json array": ["fingerprint", "array.json"],
            "json array multiline": ["fingerprint", "array.json", "--option", "multiLine=true", "--json"],
            "variant": ["hash", "variant.parquet", "--out", "variant_hashed.parquet"],
            "empty csv": ["hash", "empty.csv", "--out", "empty_hashed.parquet"],
    }  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(work)
        return {name: run(spark, *args) for name, args in commands.items()}


@pytest.fixture(scope="module")
def processes(work, runs, tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """What the JVM itself prints, and a Spark that does not start: each run in a process of its own, started
    together, after the in-process runs (whose outputs they must not add to)."""
    logs = tmp_path_factory.mktemp("cli-automation-logs")
    return cli_all(
        {
            "verbose": ["fingerprint", "rows.parquet", "--verbose", "--engine", "spark"],
            "spark fails": ["fingerprint", "rows.parquet", "--conf", "spark.jars.packages=org.example:no-such-thing:0.0"],
        },
        logs,
        cwd=work,
    )  # fmt: skip


def _json(run: subprocess.CompletedProcess, status: int = 0) -> dict:
    assert run.returncode == status, f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.stderr == "", run.stderr
    (line,) = run.stdout.splitlines()
    report = json.loads(line)
    assert report["exit_status"] == status
    return report


def test_hash_json_reports_counts_and_adds_a_key_column(spark, work, runs):
    report = _json(runs["hash json"])
    assert report["command"] == "hash"
    assert report["rows"] == 4 and report["distinct_hashes"] == 4 and report["distinct_keys"] == 4
    assert report["columns_hashed"] == ["id", "name", "amount", "day"]
    assert report["key_columns"] == ["id"] and report["key_column"] == "record_key"
    assert report["input"] == {"path": "rows.parquet", "format": "parquet"}
    assert report["output"] == {"path": "hashed.parquet", "format": "parquet"}
    assert isinstance(report["elapsed_seconds"], float)
    written = spark.read.parquet(str(work / "hashed.parquet"))
    expected = written.select("id", hx.record_hash("id", "name", "amount", "day").alias("h"), hx.record_key("id").alias("k"))
    assert sorted(map(tuple, written.select("id", "record_hash", "record_key").collect())) == sorted(
        map(tuple, expected.collect())
    )


def test_hash_exclude_hashes_every_other_column(spark, work, runs):
    assert summary(ok(runs["hash exclude"]))["columns hashed"] == "2 of 4: id, name"
    written = spark.read.parquet(str(work / "excluded.parquet"))
    got = written.selectExpr("id", "record_hash", "hex(record_hash(id, name))").collect()
    assert len(got) == 4 and all(r[1] == r[2] for r in got)


def test_fingerprint_json_and_expect(fingerprint_of_rows, runs):
    report = _json(runs["fingerprint json"])
    assert report["fingerprint"] == fingerprint_of_rows and report["rows"] == 4
    assert report["columns"] == ["id", "name", "amount", "day"]
    # --expect in any case: a match exits 0, a mismatch 1 with one line naming both.
    assert ok(runs["expect same"]).splitlines() == [fingerprint_of_rows]
    other = runs["expect other"]
    assert other.returncode == 1, other.stderr
    assert other.stdout.splitlines() == [fingerprint_of_rows]
    assert other.stderr.splitlines()[-1] == (
        f"hashexpr: the fingerprint is not the expected one: {fingerprint_of_rows}, expected {ZERO}"
    )
    report = json.loads(runs["expect other json"].stdout)
    assert runs["expect other json"].returncode == 1
    assert report["matches"] is False and report["expected"] == ZERO and report["exit_status"] == 1


def test_fingerprint_exclude(spark, work, runs):
    expected = hx.dataset_fingerprint(spark.read.parquet(str(work / "rows.parquet")).drop("day"))
    assert ok(runs["fingerprint exclude"]).splitlines() == [expected]


def test_fingerprint_by_prints_null_and_bytes_as_text(spark, work, runs):
    df = spark.read.parquet(str(work / "groups.parquet"))
    rows = hx.fingerprints_by(df, "g").orderBy("g").collect()
    expected = [f"{'NULL' if r.g is None else bytes(r.g).hex().upper()}\t{r.fingerprint}" for r in rows]
    assert ok(runs["by text"]).splitlines() == expected
    assert expected[0].startswith("NULL\t") and expected[1].startswith("00\t") and len(expected) == 4
    report = _json(runs["by limit json"])
    assert report["groups"] == 4 and len(report["fingerprints"]) == 2
    assert report["fingerprints"][0] == {"group": {"g": None}, "fingerprint": rows[0].fingerprint}
    assert report["fingerprints"][1] == {"group": {"g": "00"}, "fingerprint": rows[1].fingerprint}


def test_fingerprint_by_out_writes_every_group(spark, work, runs):
    assert runs["by out"].stdout == "", "with --out, no group is printed"
    assert summary(runs["by out"].stderr)["groups"] == "4 by g"
    df = spark.read.parquet(str(work / "groups.parquet"))
    expected = {(r.g and bytes(r.g), r.fingerprint) for r in hx.fingerprints_by(df, "g").collect()}
    written = spark.read.schema("g BINARY, fingerprint STRING").json(str(work / "group_fingerprints.json"))
    assert {(r.g and bytes(r.g), r.fingerprint) for r in written.collect()} == expected


def test_diff_exit_code_json_and_key_case(runs):
    report = _json(runs["diff changes"], status=1)
    assert report["key"] == ["iata"]
    assert report["counts"] == {"insert": 1, "update": 2, "delete": 1, "duplicate_key": 0, "null_key": 0}
    assert report["differences"] == 4
    assert report["old"] == {"path": "snap_old.parquet", "format": "parquet"}
    # Without the elevation, LGA is unchanged.
    assert summary(ok(runs["diff exclude"]))["update"] == "1"
    assert summary(ok(runs["diff none"]))["update"] == "0"


def test_diff_schema_error_names_the_options(runs):
    message = one_error_line(runs["diff schema"])
    assert message.startswith("the schemas of old and new differ: only in new: ['extra']. Pass --columns A,B,...")
    assert "columns=[" not in message


def test_collisions_on_a_text_hash_key(runs):
    report = _json(runs["collisions hex"], status=1)
    assert report["problems"] == 1
    assert report["shown"] == [
        {"kind": "collision", "hash_keys": ["01" * 16], "business_keys": [["a"], ["b"]]}
    ]
    text = runs["collisions text"]
    assert text.returncode == 1, text.stderr
    assert text.stdout.splitlines() == [f"collision\thash keys {'01' * 16}\tbusiness keys ('a',), ('b',)"]
    assert runs["collisions none"].returncode == 0, runs["collisions none"].stderr


def test_reader_options_and_schema(spark, work, runs):
    # By default CSV is read as PySpark reads it (PERMISSIVE): the ragged rows are padded and cut.
    permissive = spark.read.csv(str(work / "ragged.csv"), header=True, inferSchema=True)
    assert _json(runs["ragged permissive"])["fingerprint"] == hx.dataset_fingerprint(permissive)
    message = one_error_line(runs["ragged failfast"])
    assert "[MALFORMED_CSV_RECORD]" in message or "[MALFORMED_RECORD_IN_PARSING" in message, message
    typed = spark.read.csv(str(work / "ragged.csv"), header=True, schema="a STRING, b STRING")
    assert _json(runs["schema"])["fingerprint"] == hx.dataset_fingerprint(typed)


def test_a_json_array_over_several_lines(spark, work, runs):
    assert one_error_line(runs["json array"]) == (
        "array.json has lines that are not JSON objects: for JSON Lines, one object per line; for one JSON "
        "document or array over several lines add --option multiLine=true; to keep such lines in a "
        "_corrupt_record column add --option mode=PERMISSIVE"
    )
    report = _json(runs["json array multiline"])
    assert report["rows"] == 2
    assert report["fingerprint"] == hx.dataset_fingerprint(spark.read.json(str(work / "array.json"), multiLine=True))


def test_analysis_errors_are_one_line(runs):
    assert "has type VARIANT" in one_error_line(runs["variant"])
    # An input without columns is refused before Spark starts, saying so (test_cli_inputs.py).
    assert one_error_line(runs["empty csv"]).startswith("empty.csv is empty: it has no columns")


@pytest.mark.slow
def test_spark_that_does_not_start_is_status_3_in_one_line(processes):
    message = one_error_line(processes["spark fails"], status=3)
    assert message.startswith("Spark did not start: "), message
    assert "no-such-thing" in message


@pytest.mark.slow
def test_verbose_shows_what_the_jvm_prints(processes):
    # The check that other runs never started Spark rests on this: under --verbose the JVM's notice shows.
    assert JVM_NOTICE in ok(processes["verbose"]) + processes["verbose"].stderr


@pytest.mark.slow
def test_runs_leave_nothing_but_their_outputs(work, before, runs, processes):
    outputs = {
        "hashed.parquet",
        "excluded.parquet",
        "group_fingerprints.json",
    }
    assert {p.name for p in work.iterdir()} == before | outputs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fingerprint", "rows.parquet", "--master", "foo"],
         "unknown --master 'foo': use local, local[N], local[*], spark://HOST:PORT, yarn or k8s://URL"),
        (["fingerprint", "rows.parquet", "--expect", "hx1:12"],
         "--expect takes a fingerprint as printed, hx1: and 64 hex digits; got 'hx1:12'"),
        (["fingerprint", "rows.parquet", "--by", "id", "--expect", ZERO],
         "--expect checks the fingerprint of the whole input: it cannot go with --by"),
        (["fingerprint", "rows.parquet", "--out", "fp.parquet"], "--out writes one fingerprint per group: add --by"),
        (["diff", "rows.parquet", "rows_copy.parquet", "--key", "id", "--out", "d.csv"],
         "CSV cannot hold the differences (changed_columns, old and new are nested): write parquet, json, orc, delta"),
        (["diff", "rows.parquet", "--key", "id"], "name NEW: a path, or a catalog table with --new-table"),
        (["diff", "rows.parquet", "rows.parquet", "--key", "id"],
         "OLD and NEW are the same input: name two inputs, or two versions with --old-version"),
        (["hash", "rows.parquet", "--out", "o", "--columns", "id", "--exclude", "name"],
         "--columns and --exclude both choose the columns: pass one of them"),
        (["hash", "rows.parquet", "--out", "o", "--key", "id", "--key-column-name", "RECORD_HASH"],
         "--column-name and --key-column-name are the same: name them differently"),
        (["hash", "rows.parquet", "--out", "o", "--version", "3"],
         "--version and --timestamp are for Delta tables; rows.parquet is parquet"),
        (["hash", "--out", "o"], "name one input: a path, or a catalog table with --table"),
        (["fingerprint", "--table", "db.t", "--version", "1"],
         "--version and --timestamp read a Delta table by its directory: name the table's path instead of --table"),
        (["hash", "rows.parquet", "--table", "t", "--out", "o"], "name one input: a path, or a catalog table with --table"),
    ],
)  # fmt: skip
def test_usage_errors_before_spark(args, message, tmp_path, monkeypatch):
    (tmp_path / "rows.parquet").mkdir()
    (tmp_path / "rows.parquet" / "part-0.parquet").write_bytes(b"PAR1" + bytes(8) + b"PAR1")
    (tmp_path / "rows_copy.parquet").mkdir()
    (tmp_path / "rows_copy.parquet" / "part-0.parquet").write_bytes(b"PAR1" + bytes(8) + b"PAR1")
    monkeypatch.chdir(tmp_path)
    assert one_error_line(run_without_spark(*args, "--verbose")) == message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.parquet", "rows_copy.parquet"]


def test_usage_errors_with_json_print_a_json_object(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = run_without_spark("fingerprint", "missing.parquet", "--json")
    assert run.returncode == 2
    assert json.loads(run.stdout) == {
        "command": "fingerprint",
        "exit_status": 2,
        "error": "input not found: missing.parquet",
    }
    assert run.stderr == "hashexpr: error: input not found: missing.parquet\n"


def _pyspark_fingerprint(csv: Path, time_zone: str) -> str:
    """The fingerprint PySpark gives ``csv`` (header, inferSchema) in a process whose zone is ``time_zone``."""
    script = (
        "import sys, hashexpr as hx\n"
        "from pyspark.sql import SparkSession\n"
        "spark = hx.configure(SparkSession.builder.master('local[1]')).getOrCreate()\n"
        "print(hx.dataset_fingerprint(spark.read.csv(sys.argv[1], header=True, inferSchema=True)))\n"
    )
    from cli_runner import env

    run = subprocess.run(
        [sys.executable, "-c", script, str(csv)],
        capture_output=True, text=True, env=env({"TZ": time_zone}), timeout=600, check=True,
    )  # fmt: skip
    return run.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_csv_timestamps_read_as_pyspark_reads_them(spark, work, monkeypatch):
    # The same CSV gives the same fingerprint through the command line and through PySpark, in a machine's
    # zone, and the zone matters (the test could fail): New York's local times are other instants than UTC's,
    # which the test session's zone is.
    new_york = cli("fingerprint", "timestamps.csv", "--json", cwd=work, extra_env={"TZ": "America/New_York"})
    monkeypatch.chdir(work)
    utc = run(spark, "fingerprint", "timestamps.csv", "--json")
    assert _json(utc)["time_zone"] == "UTC"
    report = _json(new_york)
    assert report["time_zone"] == "America/New_York"
    assert report["fingerprint"] == _pyspark_fingerprint(work / "timestamps.csv", "America/New_York")
    assert _json(utc)["fingerprint"] != report["fingerprint"]
    # The user's zone wins over the machine's.
    pinned = cli(
        "fingerprint", "timestamps.csv", "--json", "--conf", "spark.sql.session.timeZone=UTC",
        cwd=work, extra_env={"TZ": "America/New_York"},
    )  # fmt: skip
    assert _json(pinned)["fingerprint"] == _json(utc)["fingerprint"]
