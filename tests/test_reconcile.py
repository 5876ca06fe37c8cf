"""hashexpr.reconcile between every pair of systems: PostgreSQL (two databases of a server on loopback), DuckDB
files, Parquet files, Arrow data and Spark (the shared session, with the jar and with the ``spark`` dialect).

One table, ``old``, and a copy, ``new``, with planted changes of every kind (inserts, deletes, updates of each
type by one ulp, one microsecond, a change of case, NULL against ''; duplicate keys, changed and unchanged; NULL
keys) and representation-only differences that are no change (INTEGER against BIGINT, NUMERIC(12,4) 1.5000
against DECIMAL(18,2) 1.50, -0.0 against 0.0, NaN, a FLOAT against its DOUBLE). Each system holds both, with the
old table's types on one side and the new table's on the other. The expected differences are hx.diff's on the
same data in Spark, which must itself find the planted changes.
"""

from __future__ import annotations

import datetime
import decimal
import math
import os
from collections import Counter

import duckdb
import psycopg
import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
)
from reconcile_data import arrow_table, duckdb_table, postgres_table, write_parquet

import hashexpr as hx
from hashexpr import reconcile as rc

OLD = [
    ("id", IntegerType()), ("i", IntegerType()), ("amount", DecimalType(12, 4)), ("x", DoubleType()),
    ("f", FloatType()), ("name", StringType()), ("ts", TimestampType()), ("day", DateType()),
    ("blob", BinaryType()), ("flag", BooleanType()), ("tags", ArrayType(IntegerType())),
]  # fmt: skip
NEW = [
    ("id", LongType()), ("i", LongType()), ("amount", DecimalType(18, 2)), ("x", DoubleType()),
    ("f", DoubleType()), ("name", StringType()), ("ts", TimestampType()), ("day", DateType()),
    ("blob", BinaryType()), ("flag", BooleanType()), ("tags", ArrayType(LongType())),
]  # fmt: skip
COMPARED = [name for name, _ in OLD[1:]]
ROWS = 300
T0 = 1_700_000_000_000_000  # microseconds


def _row(k: int) -> list:
    return [
        k, k * 7 - 1000, decimal.Decimal(k) / 4, k * 1.5, 0.5 * (k % 4), f"name {k}", T0 + k * 1_000_003,
        19_000 + k, bytes([k % 256, 7]), k % 3 == 0, [k, None, -k],
    ]  # fmt: skip


def planted_rows() -> tuple[list[list], list[list], dict]:
    """old and new rows, and the truth: per change type the (key, changed columns) pairs."""
    old = {k: _row(k) for k in range(1, ROWS + 1)}
    new = {k: _row(k) for k in range(1, ROWS + 1)}
    truth = {"insert": {1001, 1002}, "delete": {10, 11}, "update": {}}
    for k in truth["delete"]:
        del new[k]
    for k in truth["insert"]:
        new[k] = _row(k)
    col = {name: i for i, (name, _) in enumerate(OLD)}

    def update(k: int, **values) -> None:
        for name, value in values.items():
            new[k][col[name]] = value
        truth["update"][k] = sorted(values, key=col.get)

    update(20, x=math.nextafter(new[20][col["x"]], math.inf))  # one ulp
    update(21, ts=new[21][col["ts"]] + 1)  # one microsecond
    old[22][col["name"]], new[22][col["name"]] = "abc", "Abc"  # case only
    truth["update"][22] = ["name"]
    old[23][col["name"]], new[23][col["name"]] = None, ""  # NULL is not ''
    truth["update"][23] = ["name"]
    update(24, amount=decimal.Decimal("1.26"))
    update(25, i=12345, day=1)
    update(26, blob=b"")
    update(27, flag=not new[27][col["flag"]])
    update(28, tags=[28, 0, -28])
    update(29, f=0.75)
    # Equal encodings: no change.
    old[30][col["amount"]], new[30][col["amount"]] = decimal.Decimal("1.5000"), decimal.Decimal("1.50")
    old[31][col["x"]], new[31][col["x"]] = -0.0, 0.0
    old[32][col["x"]], new[32][col["x"]] = float("nan"), float("nan")
    old[33][col["f"]], new[33][col["f"]] = 0.1, float(__import__("numpy").float32(0.1))
    old_rows, new_rows = list(old.values()), list(new.values())
    # Key 40: the same two rows on both sides (unchanged); key 41: one row in old, two in new (duplicate_key).
    old_rows.append(_row(40))
    new_rows.append(_row(40))
    new_rows.append(_row(41)[:1] + _row(42)[1:])
    truth["duplicate_key"] = {41: (1, 2)}
    # A NULL key on each side.
    old_rows.append([None, *_row(500)[1:]])
    new_rows.append([None, *_row(501)[1:]])
    truth["null_key"] = 2
    return old_rows, new_rows, truth


@pytest.fixture(scope="module")
def planted(tmp_path_factory, postgres, spark):
    """The old and new tables in every system, and hx.diff's differences over them."""
    old_rows, new_rows, truth = planted_rows()
    root = tmp_path_factory.mktemp("reconcile")
    old_arrow, new_arrow = arrow_table(OLD, old_rows), arrow_table(NEW, new_rows)
    write_parquet(old_arrow, str(root / "old.parquet"))
    write_parquet(new_arrow, str(root / "new"), parts=3)
    database = str(root / "tables.duckdb")
    with duckdb.connect(database) as con:
        duckdb_table(con, "old_t", old_arrow)
        duckdb_table(con, '"New T"', new_arrow)
    dsns = {}
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        for side in ("old", "new"):
            admin.execute(f"DROP DATABASE IF EXISTS hx_reconcile_{side}")
            admin.execute(f"CREATE DATABASE hx_reconcile_{side}")
            dsns[side] = postgres.dsn.replace("dbname=postgres", f"dbname=hx_reconcile_{side}")
    with psycopg.connect(dsns["old"], autocommit=True) as conn:
        postgres_table(conn, "old_t", OLD, old_rows)
    with psycopg.connect(dsns["new"], autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "Lake"')
        postgres_table(conn, '"Lake"."New T"', NEW, new_rows)
    old_df, new_df = spark.read.parquet(str(root / "old.parquet")), spark.read.parquet(str(root / "new"))
    expected = _diff_rows(hx.diff(old_df, new_df, "id", columns=COMPARED))
    check_truth(expected, truth)
    return {
        "root": root,
        "dsns": dsns,
        "duckdb": database,
        "arrow": (old_arrow, new_arrow),
        "spark": (old_df, new_df),
        "expected": expected,
    }


def _diff_rows(df) -> Counter:
    sides = {"old": "source", "new": "target", "both": "both"}
    return Counter(
        (r["id"], r["change"], sides[r["side"]], tuple(r["changed_columns"] or ())) for r in df.collect()
    )


def check_truth(rows: Counter, truth: dict) -> None:
    """hx.diff, the oracle, finds exactly the planted changes."""
    by_change: dict = {}
    for key, change, side, changed in rows.elements():
        by_change.setdefault(change, []).append((key, side, changed))
    assert {k for k, _, _ in by_change["insert"]} == truth["insert"]
    assert {k for k, _, _ in by_change["delete"]} == truth["delete"]
    assert {k: list(c) for k, _, c in by_change["update"]} == truth["update"]
    assert sorted(s for k, s, _ in by_change["duplicate_key"]) == ["source", "target", "target"]
    assert len(by_change["null_key"]) == truth["null_key"]


SYSTEMS = ("postgres", "duckdb", "parquet", "arrow", "spark")


def _source(planted, system: str, side: str) -> rc.Source:
    if system == "postgres":
        return rc.postgres(planted["dsns"][side], "old_t" if side == "old" else '"Lake"."New T"')
    if system == "duckdb":
        return rc.duckdb(planted["duckdb"], "old_t" if side == "old" else '"New T"')
    if system == "parquet":
        return rc.parquet(planted["root"] / ("old.parquet" if side == "old" else "new"))
    if system == "arrow":
        return rc.arrow(planted["arrow"][0 if side == "old" else 1])
    # Spark against Spark: the new side through the spark dialect (no jar functions), as a Spark without the
    # jar computes it (its long expressions take Spark seconds to analyse: one pair is enough).
    return rc.spark(
        planted["spark"][0 if side == "old" else 1], engine="sql" if system == "spark-sql" else "jar"
    )


def found_rows(result: rc.Result) -> Counter:
    rows = result.changes().to_pylist()
    return Counter((r["id"], r["change"], r["side"], tuple(r["changed_columns"] or ())) for r in rows)


PAIRS = [
    (a, b) for a in SYSTEMS for b in SYSTEMS if "arrow" not in (a, b) or {a, b} & {"parquet", "postgres"}
]


@pytest.mark.parametrize(("old_system", "new_system"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_planted_changes_between_every_pair_of_systems(planted, old_system, new_system):
    """Every planted change is found, with its changed columns, and no representation-only difference."""
    new_system = "spark-sql" if (old_system, new_system) == ("spark", "spark") else new_system
    result = rc.compare(_source(planted, old_system, "old"), _source(planted, new_system, "new"), key="id")
    assert found_rows(result) == planted["expected"]
    assert result.counts == {
        "inserted": 2, "deleted": 2, "updated": 10, "unchanged": ROWS - 2 - 10 - 1 + 1,
        "duplicate_key": 3, "null_key": 2, "columns_only_in_source": 0, "columns_only_in_target": 0,
    }  # fmt: skip
    compared = [c.name for c in result.schema if c.role == "compared"]
    assert compared == COMPARED
    assert result.stats["source"]["scans"] == result.stats["target"]["scans"] == 1


def test_changes_table_types_and_order(planted):
    """The key column takes the wider type of the two sides; changes come by type, then key hash."""
    result = rc.compare(_source(planted, "postgres", "old"), _source(planted, "duckdb", "new"), key="ID")
    changes = result.changes()
    assert changes.schema.names == ["id", "change", "side", "changed_columns"]
    assert changes.schema.field("id").type == pa.int64()
    assert changes.schema.field("changed_columns").type == pa.list_(pa.string())
    order = ["insert", "delete", "update", "duplicate_key", "null_key"]
    kinds = changes.column("change").to_pylist()
    assert kinds == sorted(kinds, key=order.index)
    schema = {c.name: c for c in result.schema}
    assert (schema["amount"].source_type, schema["amount"].target_type) == ("numeric(12,4)", "DECIMAL(18,2)")
    assert (schema["f"].source_spark_type, schema["f"].target_spark_type) == ("float", "double")
    assert schema["id"].role == "key"


def test_a_side_without_differences_costs_one_scan_and_one_filtered_pass(planted):
    """Identical tables: one aggregate pass a side, then only the NULL-key rows are fetched."""
    result = rc.compare(_source(planted, "postgres", "old"), _source(planted, "parquet", "old"), key="id")
    assert result.differences == 2 == result.counts["null_key"]
    assert result.counts["unchanged"] == ROWS + 1
    assert result.stats["source"]["passes"] == ["aggregate", "fetch"]
    assert result.stats["source"]["rows_fetched"] == 1


def test_timestamps_are_instants_whatever_the_session_time_zone(planted, postgres):
    """A PostgreSQL server in another time zone gives the same hashes: timestamps hash as instants."""
    dsn = planted["dsns"]["old"] + " options='-c TimeZone=Asia/Kathmandu'"
    result = rc.compare(rc.postgres(dsn, "old_t"), _source(planted, "arrow", "old"), key="id")
    assert result.differences == 2 == result.counts["null_key"]
    keys = result.changes()
    assert keys.column("id").null_count == 2


def test_compound_text_keys_under_a_collation(postgres, tmp_path):
    """Keys of text under a case-insensitive ICU collation and a date: matched by their bytes, so 'a' and 'A'
    are two keys, and keys that sort differently in each system still meet."""
    rows = [("a", 1, 1.0), ("A", 1, 2.0), ("ß", 2, 3.0), ("ss", 2, 4.0), ("é", 3, 5.0), ("e\u0301", 3, 6.0)]
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS keyed")
        conn.execute(
            "CREATE COLLATION IF NOT EXISTS hx_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"
        )
        conn.execute("CREATE TABLE keyed (k text COLLATE hx_ci, d date, v double precision)")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO keyed VALUES (%s, DATE '2024-01-01' + %s, %s)", [(k, d, v) for k, d, v in rows]
            )
    lake = pa.table(
        {
            "K": [k for k, _, _ in rows][::-1],
            "D": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=d) for _, d, _ in rows][::-1]),
            "V": [v for _, _, v in rows][::-1],
        }
    )
    result = rc.compare(rc.postgres(postgres.dsn, "keyed"), rc.arrow(lake), key=["k", "d"])
    assert result.counts["unchanged"] == 6 and result.differences == 0
    # 'A' becomes 'a': the key ('a', day 1) now has two rows in the lake, and ('A', day 1) none.
    changed = lake.set_column(
        0, "K", pa.array(["a" if k == "A" else k for k in lake.column("K").to_pylist()])
    )
    result = rc.compare(rc.postgres(postgres.dsn, "keyed"), rc.arrow(changed), key=["k", "d"])
    found = sorted((r["k"], r["change"], r["side"]) for r in result.changes().to_pylist())
    assert (
        found
        == [("A", "delete", "source"), ("a", "duplicate_key", "source")]
        + [("a", "duplicate_key", "target")] * 2
    )
    assert result.counts == {
        "inserted": 0, "deleted": 1, "updated": 0, "unchanged": 4, "duplicate_key": 3, "null_key": 0,
        "columns_only_in_source": 0, "columns_only_in_target": 0,
    }  # fmt: skip


def test_a_given_connection_is_left_as_it_was(planted):
    """A psycopg connection is read in a read-only transaction of its own and given back idle, its autocommit
    setting kept; a DuckDB connection likewise."""
    with psycopg.connect(planted["dsns"]["old"]) as conn:
        assert not conn.autocommit
        rc.compare(rc.postgres(conn, "old_t"), _source(planted, "parquet", "old"), key="id")
        assert not conn.autocommit and conn.info.transaction_status == 0
        conn.execute("CREATE TEMP TABLE still_writable (x int)")
    with duckdb.connect(planted["duckdb"], read_only=True) as con:
        result = rc.compare(rc.duckdb(con, "old_t"), _source(planted, "arrow", "old"), key="id")
        assert result.counts["null_key"] == 2
        assert con.execute("SELECT count(*) FROM old_t").fetchall()[0][0] == ROWS + 2


def test_each_side_is_read_from_one_snapshot(planted):
    """A change committed between the passes is not seen: every pass reads the snapshot of the first."""
    dsn = planted["dsns"]["new"]
    with psycopg.connect(dsn, autocommit=True) as writer:
        writer.execute('CREATE TABLE moving AS SELECT * FROM "Lake"."New T"')

        def commit_between_passes(message: str) -> None:
            if message.startswith("pass 1"):
                writer.execute("UPDATE moving SET name = 'moved' WHERE id = 1")
                writer.execute("DELETE FROM moving WHERE id = 2")

        before = rc.compare(_source(planted, "postgres", "old"), rc.postgres(dsn, "moving"), key="id",
                            progress=commit_between_passes)  # fmt: skip
        assert found_rows(before) == planted["expected"]
        after = rc.compare(_source(planted, "postgres", "old"), rc.postgres(dsn, "moving"), key="id")
        assert {(1, "update"), (2, "delete")} <= {(k, c) for k, c, _, _ in found_rows(after)}
        writer.execute("DROP TABLE moving")


def test_parquet_files_that_change_during_a_comparison_fail_it(planted, tmp_path):
    table = planted["arrow"][0]
    path = tmp_path / "moving.parquet"
    write_parquet(table, str(path))

    def rewrite(message: str) -> None:
        if message.startswith("pass 1"):
            write_parquet(table.slice(1), str(path))
            os.utime(path, ns=(1, 1))

    with pytest.raises(ValueError, match="changed while it was compared"):
        rc.compare(rc.parquet(path), _source(planted, "arrow", "new"), key="id", progress=rewrite)


def test_parquet_written_by_spark_with_int96_timestamps_and_partitions(planted, spark):
    """Spark's own Parquet: INT96 timestamps (pyarrow reads them without a time zone, in nanoseconds), Spark's
    schema in the footer and a partition directory per value of ``f``, whose column Spark infers from the
    directory names (as DOUBLE; a BOOLEAN's directories it would read back as STRING). Read as Spark reads it, it holds the new table, and the planted changes are found."""
    import pyarrow.parquet as pq

    path = str(planted["root"] / "spark_written")
    before = spark.conf.get("spark.sql.parquet.outputTimestampType")
    spark.conf.set("spark.sql.parquet.outputTimestampType", "INT96")
    try:
        planted["spark"][1].write.partitionBy("f").parquet(path)
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", before)
    part = next(
        os.path.join(root, f) for root, _, files in os.walk(path) for f in files if f.endswith(".parquet")
    )
    schema = pq.ParquetFile(part).schema
    assert schema.column(schema.names.index("ts")).physical_type == "INT96"
    assert {"f=0.0", "f=0.75"} <= set(os.listdir(path))
    assert spark.read.parquet(path).schema["f"].dataType == DoubleType()
    for old_system in ("postgres", "duckdb"):
        result = rc.compare(_source(planted, old_system, "old"), rc.parquet(path), key="id")
        assert found_rows(result) == planted["expected"]
        types = {c.name: c.target_spark_type for c in result.schema}
        assert (types["ts"], types["f"]) == ("timestamp", "double")


def test_arrow_data_of_every_kind_hashexpr_arrow_takes():
    """A pandas index (written as to_parquet writes it), Polars' view types, a one-time stream and a DuckDB
    relation, each read once and compared as its Parquet would be."""
    import pandas as pd
    import polars as pl

    lake = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]})
    indexed = pd.DataFrame({"v": ["a", "b", "c"]}, index=pd.Index([1, 2, 3], name="id"))
    assert rc.compare(rc.arrow(indexed), rc.arrow(lake.to_reader()), key="id").counts["unchanged"] == 3
    relation = duckdb.connect().sql("SELECT * FROM (VALUES (1::BIGINT, 'a'), (2, 'B'), (4, 'd')) t(id, v)")
    polars = pl.DataFrame({"id": ["1", "2", "4"], "v": ["a", "B", "d"]})
    for changed, key in ((relation, lake), (polars, lake.set_column(0, "id", pa.array(["1", "2", "3"])))):
        result = rc.compare(rc.arrow(key), rc.arrow(changed), key="id")
        found = sorted(
            (str(r["id"]), r["change"], r["changed_columns"]) for r in result.changes().to_pylist()
        )
        assert found == [("2", "update", ["v"]), ("3", "delete", None), ("4", "insert", None)]
