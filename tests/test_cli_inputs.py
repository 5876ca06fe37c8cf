"""Inputs checked before any JVM starts: empty inputs and inputs without columns say so, and a directory's
format is told from its data files at any depth (Hive partitions), naming both formats when it holds two.
Inputs that Spark reads are checked against Spark reading the same files."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import one_error_line, run, run_without_spark, summary
from pyarrow import orc

import hashexpr as hx

TABLE = pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]})
FIX = "with --schema DDL it is read as a table without rows"


def _write(path, content: str | bytes | pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, pa.Table):
        pq.write_table(content, path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


@pytest.mark.parametrize(
    ("files", "given", "message"),
    [
        (
            {"empty.csv": ""},
            "empty.csv",
            f"empty.csv is empty: it has no columns (not even a header line); {FIX}",
        ),
        ({"blank.csv": "\n  \r\n\n"}, "blank.csv", "blank.csv is empty: it has no columns"),
        ({"d/part-0.csv": "", "d/part-1.csv": "\n"}, "d", "d is empty: it has no columns"),
        ({"e.json": " \n\n"}, "e.json", f"e.json is empty: it has no columns (not one JSON object); {FIX}"),
        ({"d/_SUCCESS": ""}, "d", "d holds no data files: nothing to read"),
        ({"d.parquet/.part-0.crc": ""}, "d.parquet", "d.parquet holds no data files: nothing to read"),
        ({"zero.parquet": b""}, "zero.parquet", "zero.parquet is not Parquet: it is empty (0 bytes)"),
        (
            {"none.parquet": pa.table({})},
            "none.parquet",
            "none.parquet has no columns: its Parquet schema is empty",
        ),
        (
            {"d/a.parquet": TABLE, "d/k=1/b.csv": "id\n1\n"},
            "d",
            (
                "cannot tell the format of d: it holds parquet files (a.parquet) and csv files (k=1/b.csv); name "
                "the one to read with --format, or keep each format in a directory of its own"
            ),
        ),
    ],
)
def test_inputs_without_columns_are_refused_before_spark(tmp_path, monkeypatch, files, given, message):
    monkeypatch.chdir(tmp_path)
    for name, content in files.items():
        _write(tmp_path / name, content)
    for command in (["fingerprint", given], ["hash", given, "--out", "o", "--hex", "--out-format", "json"]):
        assert one_error_line(run_without_spark(*command)).startswith(message)
    assert one_error_line(run_without_spark("diff", given, given + "2", "--key", "id")).startswith(message)


def test_spark_reads_no_columns_from_what_is_refused_and_rows_with_a_schema(spark, tmp_path):
    _write(tmp_path / "empty.csv", "")
    _write(tmp_path / "blank.csv", "\n  \r\n\n")
    _write(tmp_path / "blank.json", " \n\n ")
    for name in ("empty.csv", "blank.csv"):
        assert spark.read.options(header="true", inferSchema="true").csv(str(tmp_path / name)).columns == []
    assert spark.read.json(str(tmp_path / "blank.json")).columns == []
    done = run(spark, "fingerprint", tmp_path / "empty.csv", "--schema", "id INT", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"] == 0


def test_hive_partitioned_csv_and_orc_directories_are_read_at_any_depth(spark, tmp_path):
    for year, month in [(2024, "01"), (2024, "02"), (2025, "01")]:
        part = f"year={year}/month={month}"
        _write(tmp_path / "csv" / part / "part-00000.csv", "id,name\n1,a\n2,b\n")
        (tmp_path / "orc" / part).mkdir(parents=True)
        orc.write_table(TABLE, str(tmp_path / "orc" / part / "part-00000.snappy.orc"))
    expected = {
        "csv": spark.read.options(header="true", inferSchema="true").csv(str(tmp_path / "csv")),
        "orc": spark.read.orc(str(tmp_path / "orc")),
    }
    for fmt, df in expected.items():
        assert df.columns == ["id", "name", "year", "month"]
        done = run(spark, "fingerprint", tmp_path / fmt)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == hx.dataset_fingerprint(df)
        assert summary(done.stderr)["input"] == f"{tmp_path / fmt} ({fmt})"
