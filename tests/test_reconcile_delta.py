"""Delta tables read without Spark (``rc.delta``, and a Delta directory on the command line): against Spark's own
reading of the same tables.

Spark with Delta Lake (in ``.venv-4.2``: Delta has no release for the pinned Spark) writes the tables, then
writes what it reads of each version as plain Parquet; delta-rs and the Rust engine must read every version as
Spark did (INT96 timestamps of years 1 and 9999, a partition column, decimals, floats, binary, arrays, structs
and maps), and a version against another must differ by exactly the rows the commits changed. What delta-rs
cannot read (column mapping, deletion vectors) is refused, and ``--engine spark`` compares it.
"""

from __future__ import annotations

import json

import pytest
from cli_runner import ROOT, cli_batch, run_without_spark

from hashexpr import reconcile as rc

DELTA_PYTHON = ROOT / ".venv-4.2" / "bin" / "python"

# Delta Lake in .venv-4.2, a process of its own: make check leaves it out.
pytestmark = pytest.mark.slow

_PREPARE = r"""
import os
spark.conf.set("spark.sql.session.timeZone", "UTC")
rows = spark.sql('''
  SELECT id, CAST(id AS STRING) AS s, CAST(id / 3 AS DECIMAL(12, 4)) AS dec, CAST(id AS FLOAT) / 7 AS f,
    CASE WHEN id = 0 THEN TIMESTAMP'9999-12-31 23:59:59.999999' WHEN id = 1 THEN TIMESTAMP'0001-01-01 00:00:00'
         ELSE TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) END AS ts,
    CAST(TIMESTAMP'2024-01-01 00:00:00' AS TIMESTAMP_NTZ) AS ntz, DATE'2024-01-01' + CAST(id AS INT) AS d,
    CAST(CAST(id AS STRING) AS BINARY) AS b, array(id, NULL) AS arr, named_struct('a', id, 'b', 'x') AS st,
    map('k', id) AS m, id % 3 AS part
  FROM range(40)''')
plain = os.path.abspath("plain")
rows.write.format("delta").partitionBy("part").save(plain)
spark.sql(f"UPDATE delta.`{plain}` SET s = upper(s) || 'X' WHERE id % 10 = 4")
spark.sql(f"DELETE FROM delta.`{plain}` WHERE id % 10 = 7")
spark.sql(f"INSERT INTO delta.`{plain}` SELECT id + 100, s, dec, f, ts, ntz, d, b, arr, st, m, part FROM delta.`{plain}` WHERE id < 3")
mapped, dv = os.path.abspath("mapped"), os.path.abspath("dv")
rows.write.format("delta").option("delta.columnMapping.mode", "name").option("delta.minReaderVersion", "2") \
    .option("delta.minWriterVersion", "5").save(mapped)
spark.sql(f"ALTER TABLE delta.`{mapped}` RENAME COLUMN s TO label")
rows.write.format("delta").option("delta.enableDeletionVectors", "true").save(dv)
spark.sql(f"DELETE FROM delta.`{dv}` WHERE id % 5 = 0")
# NULL partition values (delta-rs gives their files an is_null expression, not a value) of three types.
spark.sql('''
  SELECT id, CASE WHEN id % 3 = 0 THEN NULL ELSE DATE'2024-01-01' + CAST(id % 3 AS INT) END AS pd,
    CASE WHEN id % 4 = 0 THEN NULL ELSE concat('a=b/', CAST(id % 4 AS STRING), ' %41') END AS ps,
    CAST(id % 2 AS DECIMAL(5, 2)) AS pdec, id * 2 AS v
  FROM range(12)''').write.format("delta").partitionBy("pd", "ps", "pdec").save(os.path.abspath("nulls"))
for name, versions in (("plain", 4), ("mapped", 2), ("dv", 2), ("nulls", 1)):
    for v in range(versions):
        spark.read.format("delta").option("versionAsOf", v).load(os.path.abspath(name)) \
            .write.parquet(os.path.abspath(f"{name}-{v}.parquet"))
prepared["dir"] = os.getcwd()
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    if not DELTA_PYTHON.exists():
        pytest.fail(f"{DELTA_PYTHON} is missing: `make venv-4.2` (a prerequisite of `make test`) creates it")
    spark_engine = ["--engine", "spark", "--key", "id", "--json", "--quiet"]
    folder = tmp_path_factory.mktemp("reconcile-delta")
    return cli_batch(
        {
            "mapped": ["reconcile", "mapped", "mapped-1.parquet", *spark_engine],
            "dv": ["reconcile", "dv", "dv-1.parquet", *spark_engine],
            "by spark sql's name": ["reconcile", f"spark:delta.`{folder}/plain`", "plain-3.parquet", *spark_engine],
        },
        python=DELTA_PYTHON,
        delta=True,
        prepare=_PREPARE,
        cwd=folder,
    )


def test_every_version_reads_as_spark_reads_it(batch):
    where = batch.prepared["dir"]
    for version in range(4):
        result = rc.compare(rc.delta(f"{where}/plain", version=version), rc.parquet(f"{where}/plain-{version}.parquet"),
                            key="id")  # fmt: skip
        assert not result.differences and result.counts["unchanged"] > 30, (version, result.counts)
    assert rc.compare(rc.delta(f"{where}/plain"), rc.parquet(f"{where}/plain-3.parquet"), key="id").counts[
        "unchanged"
    ] == 39


def test_null_partition_values_read_as_spark_reads_them(batch):
    where = batch.prepared["dir"]
    result = rc.compare(rc.delta(f"{where}/nulls"), rc.parquet(f"{where}/nulls-0.parquet"), key="id")
    assert not result.differences and result.counts["unchanged"] == 12, result.counts


def test_a_table_delta_rs_would_misread_is_refused(tmp_path):
    """Column mapping turned on under an older protocol (delta-rs' reader check passes it, and it would read the
    files' physical names), and a schema that grew after a file was written (Spark reads the new column as NULLs
    in the older file)."""
    import pyarrow as pa
    from deltalake import write_deltalake

    renamed = tmp_path / "renamed"
    write_deltalake(renamed, pa.table({"id": pa.array([1, 2], pa.int64()), "a": ["a1", "a2"], "b": ["b1", "b2"]}))
    log = [json.loads(line) for line in (renamed / "_delta_log" / "00000000000000000000.json").read_text().splitlines()]
    metadata = next(entry["metaData"] for entry in log if "metaData" in entry)
    schema = json.loads(metadata["schemaString"])
    # a and b swapped by two renames: the logical a is the file's b.
    for position, field in enumerate(schema["fields"], 1):
        physical = {"a": "b", "b": "a"}.get(field["name"], field["name"])
        field["metadata"] = {"delta.columnMapping.id": position, "delta.columnMapping.physicalName": physical}
    metadata |= {"schemaString": json.dumps(schema),
                 "configuration": {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "3"}}  # fmt: skip
    commit = [{"commitInfo": {"timestamp": 1, "operation": "RENAME COLUMN"}},
              {"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}}, {"metaData": metadata}]  # fmt: skip
    (renamed / "_delta_log" / "00000000000000000001.json").write_text("".join(json.dumps(e) + "\n" for e in commit))
    lake = pa.table({"id": pa.array([1, 2], pa.int64()), "a": ["b1", "b2"], "b": ["a1", "a2"]})
    with pytest.raises(ValueError, match=r"delta.columnMapping.mode = name.*compare it through Spark"):
        rc.compare(rc.delta(renamed), rc.arrow(lake), key="id")
    grown = tmp_path / "grown"
    write_deltalake(grown, pa.table({"id": pa.array([1, 2], pa.int64())}))
    write_deltalake(grown, pa.table({"id": pa.array([3], pa.int64()), "x": ["c"]}), mode="append", schema_mode="merge")
    with pytest.raises(ValueError, match="has no column 'x' of the table, which was added after the file was written"):
        rc.compare(rc.delta(grown), rc.arrow(pa.table({"id": [1, 2, 3], "x": [None, None, "c"]})), key="id")


def test_two_versions_differ_by_the_commits_between_them(batch):
    where = batch.prepared["dir"]
    result = rc.compare(rc.delta(f"{where}/plain", version=0), rc.delta(f"{where}/plain"), key="id", values=True)
    counts = result.counts
    assert (counts["updated"], counts["deleted"], counts["inserted"]) == (4, 4, 3), counts
    updates = [r for r in result.changes().to_pylist() if r["change"] == "update"]
    assert {r["id"] for r in updates} == {4, 14, 24, 34} and all(r["changed_columns"] == ["s"] for r in updates)
    assert result.source == f"Delta table {where}/plain (version 0)" and result.target.endswith("(version 3)")


def test_what_delta_rs_cannot_read_is_refused_and_spark_compares_it(batch):
    where = batch.prepared["dir"]
    for name, feature in (("mapped", "columnMapping"), ("dv", "deletionVectors")):
        with pytest.raises(ValueError, match=f"{feature}.*compare it through Spark"):
            rc.compare(rc.delta(f"{where}/{name}"), rc.parquet(f"{where}/{name}-1.parquet"), key="id")
        done = run_without_spark("reconcile", f"{where}/{name}", f"{where}/{name}-1.parquet", "--key", "id")
        assert done.returncode == 2 and "--engine spark" in done.stderr, done.stderr
        run = batch.runs[name]
        assert run.returncode == 0, run.stderr
        report = json.loads(run.stdout)
        assert not report["differences"] and report["counts"]["unchanged"] in (32, 40), report["counts"]


def test_a_delta_table_named_as_spark_sql_names_files_reads_its_newest_version(batch):
    run = batch.runs["by spark sql's name"]
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert not report["differences"] and report["counts"]["unchanged"] == 39, report["counts"]
