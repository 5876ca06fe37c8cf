"""The command line on tables: Delta Lake (with time travel), Iceberg's refusal, catalog tables by name.

A real Delta table is made by Spark 4.2 with Delta Lake 4.4 in ``.venv-4.2`` (Delta Lake has no release for
the Spark in ``spark-version``): 1,000 rows, then a DELETE of 100 and an UPDATE of one. In the main virtualenv
the command line must refuse it in one line, before Spark, and never read its files as Parquet; in ``.venv-4.2``
it must read it with Delta Lake, at any version. The table is made, and those commands run, in one process and
one Delta session (``cli_runner.cli_batch``). The expected values come from plain Parquet copies of each
version, written by Delta Lake itself, read by the same command line. A Hive metastore in a temporary
directory holds the catalog tables, made in the session that then reads them; one command runs as a process of
its own, to show that a run leaves no metastore files behind.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from cli_runner import ROOT, cli, cli_batch, ok, one_error_line, run_without_spark, summary

DELTA_PYTHON = ROOT / ".venv-4.2" / "bin" / "python"

# Processes of its own (Delta Lake in .venv-4.2, a Hive metastore session): make check leaves it out.
pytestmark = pytest.mark.slow

# Run first in the Delta session of the commands (in their directory): the table, its three versions as
# Parquet, and the commit time of version 1 in UTC.
_MAKE_DELTA = """
spark.conf.set("spark.sql.session.timeZone", "UTC")
import os
table = os.path.abspath("table")
spark.range(1000).selectExpr("id", "CAST(id AS STRING) s", "id * 0.5 d").coalesce(2).write.format("delta").save(table)
spark.sql(f"DELETE FROM delta.`{table}` WHERE id < 100")
spark.sql(f"UPDATE delta.`{table}` SET s = 'changed' WHERE id = 500")
for version in range(3):
    spark.read.format("delta").option("versionAsOf", version).load("table").write.parquet(f"v{version}.parquet")
history = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").selectExpr(
    "version", "date_format(timestamp, 'yyyy-MM-dd HH:mm:ss.SSS') AS t").collect()
prepared = {f"v{r.version}_time": r.t for r in history}
"""

# Run first in the session of the catalog commands: two tables in a Hive metastore, and a Parquet copy of one.
_MAKE_HIVE = """
spark.sql("CREATE DATABASE sales")
spark.range(50).selectExpr("id", "CAST(id % 7 AS STRING) region").write.saveAsTable("sales.orders_v1")
spark.range(10, 60).selectExpr("id", "CAST(id % 7 AS STRING) region").write.saveAsTable("sales.orders_v2")
spark.table("sales.orders_v1").write.parquet("orders_v1.parquet")
"""


@pytest.fixture(scope="module")
def delta(tmp_path_factory) -> dict:
    """The Delta table, the Parquet copy of each version, and the commands that read and write it, in one
    Delta session; in order, the last three replace a table and read both of its versions."""
    folder = tmp_path_factory.mktemp("cli-delta")
    utc = ["--conf", "spark.sql.session.timeZone=UTC"]
    batch = cli_batch(
        {
            "now": ["fingerprint", "table", "--json"],
            "v0": ["fingerprint", "table", "--version", "0", "--json"],
            "v1 by time": ["fingerprint", "table", "--timestamp", "{prepared:v1_time}", "--json", *utc],
            "copy v0": ["fingerprint", "v0.parquet", "--json"],
            "copy v1": ["fingerprint", "v1.parquet", "--json"],
            "copy v2": ["fingerprint", "v2.parquet", "--json"],
            "diff": ["diff", "table", "--old-version", "0", "--key", "ID", "--exit-code", "--json"],
            "diff out": ["diff", "table", "--old-version", "0", "--key", "id", "--out", "changes", "--out-format", "delta"],
            "hash": ["hash", "table", "--out", "hashed", "--out-format", "delta", "--key", "id", "--hex"],
            "hash again": ["hash", "table", "--out", "hashed", "--out-format", "delta", "--columns", "id",
                           "--mode", "overwrite", "--json"],
            "hashed v0": ["fingerprint", "hashed", "--version", "0", "--json"],
            "hashed now": ["fingerprint", "hashed", "--json"],
        },
        folder,
        python=DELTA_PYTHON,
        delta=True,
        prepare=_MAKE_DELTA,
    )  # fmt: skip
    assert set(batch.prepared) == {"v0_time", "v1_time", "v2_time"}
    return {"folder": folder, "table": folder / "table", "runs": batch.runs}


@pytest.fixture(scope="module")
def delta_runs(delta) -> dict[str, subprocess.CompletedProcess]:
    return delta["runs"]


def test_without_delta_lake_a_delta_table_is_refused_in_one_line(delta, tmp_path):
    import pyspark

    table = delta["table"]
    run = run_without_spark("hash", table, "--out", tmp_path / "o.parquet", "--verbose")
    assert one_error_line(run) == (
        f"{table} is a Delta table, and Delta Lake is not available on this Spark ({pyspark.__version__}): "
        "install delta-spark in a Python environment with a pyspark it supports, or name a Delta jar built for "
        "this Spark with --conf spark.jars.packages=io.delta:..."
    )
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("how", ["--format parquet", "a data file", "a glob of data files"])
def test_a_delta_tables_files_are_never_read_as_parquet(delta, how):
    table = delta["table"]
    data_file = next(table.glob("*.parquet"))
    args = {
        "--format parquet": [table, "--format", "parquet"],
        "a data file": [data_file],
        "a glob of data files": [f"{table}/*.parquet"],
    }[how]
    message = one_error_line(run_without_spark("fingerprint", *args, "--verbose"))
    if how == "--format parquet":
        assert message == (
            f"{table} is a Delta table (it has _delta_log): its files are not a plain parquet input; read it "
            "with --format delta"
        )
    else:
        assert message.endswith(
            f"is inside a Delta table ({table}): its files are not the table's rows; read the table itself, {table}"
        )


def test_an_iceberg_table_is_refused_without_its_runtime(tmp_path):
    import pyspark

    table = tmp_path / "iceberg_table"
    (table / "metadata").mkdir(parents=True)
    (table / "metadata" / "v1.metadata.json").write_text("{}", encoding="utf-8")
    (table / "data").mkdir()
    message = one_error_line(run_without_spark("fingerprint", table, "--verbose"))
    assert message.startswith(
        f"{table} is an Iceberg table, and Iceberg is not available on this Spark ({pyspark.__version__})"
    )


def test_a_delta_output_needs_delta_lake(tmp_path, monkeypatch):
    (tmp_path / "in.csv").write_text("a\n1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    message = one_error_line(run_without_spark("hash", "in.csv", "--out", "out", "--out-format", "delta", "--hex"))
    assert message.startswith(
        "writing out as a Delta table needs Delta Lake, which is not available on this Spark"
    )


def _report(run: subprocess.CompletedProcess, status: int = 0) -> dict:
    assert run.returncode == status, (
        f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr[-4000:]}"
    )
    return json.loads(run.stdout)


def test_delta_reads_the_live_rows_at_each_version(delta_runs):
    now, v0, v1 = (_report(delta_runs[n]) for n in ("now", "v0", "v1 by time"))
    assert now["rows"] == 900 and v0["rows"] == 1000 and v1["rows"] == 900
    assert now["input"] == {"path": "table", "format": "delta"}
    assert v0["input"] == {"path": "table", "format": "delta", "version": 0}
    assert now["fingerprint"] == _report(delta_runs["copy v2"])["fingerprint"]
    assert v0["fingerprint"] == _report(delta_runs["copy v0"])["fingerprint"]
    assert v1["fingerprint"] == _report(delta_runs["copy v1"])["fingerprint"]
    assert len({now["fingerprint"], v0["fingerprint"], v1["fingerprint"]}) == 3


def test_diff_of_two_versions_of_one_table(delta, delta_runs):
    report = _report(delta_runs["diff"], status=1)
    assert report["counts"] == {"insert": 0, "update": 1, "delete": 100, "duplicate_key": 0, "null_key": 0}
    assert report["old"]["version"] == 0 and "version" not in report["new"]
    counts = summary(ok(delta_runs["diff out"]))
    assert counts["delete"] == "100" and counts["output"] == "changes (delta)"
    assert (delta["folder"] / "changes" / "_delta_log").is_dir()


def test_hash_writes_a_delta_table_and_overwrite_is_a_new_version(delta_runs):
    first = summary(ok(delta_runs["hash"]))
    assert first["rows read"] == "900" and first["output"].startswith("hashed (delta)")
    assert _report(delta_runs["hash again"])["columns_hashed"] == ["id"]
    # The replaced table is still there as version 0: overwriting a Delta table is one more commit.
    old = _report(delta_runs["hashed v0"])
    assert old["rows"] == 900 and old["columns"] == ["id", "s", "d", "record_key", "record_hash"]
    new = _report(delta_runs["hashed now"])
    assert new["columns"] == ["id", "s", "d", "record_hash"]


@pytest.fixture(scope="module")
def hive(tmp_path_factory) -> dict:
    """The metastore's tables, made in one session of their own (its settings are static) that then runs the
    commands that read them."""
    folder = tmp_path_factory.mktemp("cli-hive")
    warehouse, metastore = folder / "warehouse", folder / "metastore_db"
    url = f"jdbc:derby:;databaseName={metastore}"
    conf = {"spark.sql.catalogImplementation": "hive", "spark.sql.warehouse.dir": str(warehouse)}
    batch = cli_batch(
        {
            "table": ["fingerprint", "--table", "sales.orders_v1", "--json"],
            "copy": ["fingerprint", "orders_v1.parquet", "--json"],
            "diff": ["diff", "--old-table", "sales.orders_v1", "--new-table", "sales.orders_v2", "--key", "id", "--json"],
        },
        folder,
        conf={**conf, "spark.hadoop.javax.jdo.option.ConnectionURL": f"{url};create=true"},
        prepare=_MAKE_HIVE,
    )  # fmt: skip
    conf["spark.hadoop.javax.jdo.option.ConnectionURL"] = url
    return {"runs": batch.runs, "conf": [a for k, v in conf.items() for a in ("--conf", f"{k}={v}")]}


def test_catalog_tables_by_name(hive, tmp_path):
    runs = hive["runs"]
    table = _report(runs["table"])
    assert table["input"] == {"table": "sales.orders_v1", "format": "table"}
    assert table["rows"] == 50 and table["fingerprint"] == _report(runs["copy"])["fingerprint"]
    assert _report(runs["diff"])["counts"] == {
        "insert": 10,
        "update": 0,
        "delete": 10,
        "duplicate_key": 0,
        "null_key": 0,
    }
    # A process of its own (an embedded Derby metastore serves one JVM at a time, so after the others): the
    # command's --conf settings start its Spark, and it leaves no metastore, warehouse or Derby log behind.
    missing = cli("fingerprint", "--table", "sales.nope", *hive["conf"], cwd=tmp_path)
    message = one_error_line(missing)
    assert "[TABLE_OR_VIEW_NOT_FOUND]" in message and "`nope`" in message, message
    assert list(tmp_path.iterdir()) == []
