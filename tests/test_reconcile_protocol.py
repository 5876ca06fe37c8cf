"""The protocol of hashexpr.reconcile: segments compared by count and sums, refined where many rows differ, rows
fetched only from the segments that still differ; every system's aggregates equal the others' on equal rows."""

from __future__ import annotations

import random

import duckdb
import numpy as np
import psycopg
import pyarrow as pa
import pytest
from pyspark.sql.types import DoubleType, LongType, StringType
from reconcile_data import postgres_table

from hashexpr import reconcile as rc
from hashexpr.reconcile import protocol, sources
from hashexpr.reconcile.segments import Accumulator, Aggregates, difference, lanes

COLUMNS = [("id", LongType()), ("s", StringType()), ("x", DoubleType())]


def _tables(rows: int, changed: float, seed: int) -> tuple[list[tuple], list[tuple], dict[str, int]]:
    """Rows and a copy with about ``changed`` of the keys updated, deleted or inserted; the true counts."""
    rng = random.Random(seed)
    old = [(k, f"s{k % 97}", k / 8) for k in range(rows)]
    new, counts = [], {"inserted": 0, "deleted": 0, "updated": 0}
    for k, s, x in old:
        roll = rng.random()
        if roll < changed / 3:
            counts["deleted"] += 1
            continue
        if roll < 2 * changed / 3:
            counts["updated"] += 1
            new.append((k, s, x + 1))
            continue
        new.append((k, s, x))
    for k in range(rows, rows + int(rows * changed / 3)):
        new.append((k, "new", 0.0))
        counts["inserted"] += 1
    counts["unchanged"] = rows - counts["deleted"] - counts["updated"]
    rng.shuffle(new)
    return old, new, counts


def _arrow(rows: list[tuple]) -> pa.Table:
    return pa.table({n: [r[i] for r in rows] for i, (n, _) in enumerate(COLUMNS)})


def test_segments_that_hold_many_changes_are_refined_before_rows_move(monkeypatch):
    """With a quarter of 40,000 keys changed, the differing segments are refined until fetching pays; the rows
    fetched are few more than the changed ones, and the counts exact."""
    old, new, truth = _tables(40_000, 0.25, seed=1)
    monkeypatch.setattr(sources, "FETCH_ROWS", 2_000)
    con = duckdb.connect()
    con.register("src", _arrow(old))
    con.execute("CREATE TABLE old_t AS SELECT * FROM src")
    result = rc.compare(rc.duckdb(con, "old_t"), rc.arrow(_arrow(new)), key="id")
    assert {k: result.counts[k] for k in truth} == truth
    levels = result.stats["levels"]
    assert len(levels) == 2 and levels[1]["bits"] > levels[0]["bits"]
    changed = truth["inserted"] + truth["deleted"] + truth["updated"]
    assert result.stats["source"]["rows_fetched"] + result.stats["target"]["rows_fetched"] < 3 * changed
    assert result.stats["source"]["passes"][:2] == ["aggregate", "refine"]


def test_postgres_and_spark_refine_too(postgres, spark, monkeypatch):
    """The refinement's queries in PostgreSQL (a filter on the key hash's segment) and Spark (a semi-join with
    the segments) find what a local comparison finds."""
    old, new, truth = _tables(4_000, 0.2, seed=2)
    monkeypatch.setattr(sources, "FETCH_ROWS", 300)
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        postgres_table(conn, "refined", COLUMNS, old, batch=2000)
    lake = spark.createDataFrame(new, "id BIGINT, s STRING, x DOUBLE")
    result = rc.compare(rc.postgres(postgres.dsn, "refined"), rc.spark(lake), key="id")
    assert {k: result.counts[k] for k in truth} == truth
    assert "refine" in result.stats["source"]["passes"] and "refine" in result.stats["target"]["passes"]
    updates = [r for r in result.changes().to_pylist() if r["change"] == "update"]
    assert {tuple(r["changed_columns"]) for r in updates} == {("x",)}


def test_every_system_sums_the_same_lanes(postgres, spark, tmp_path):
    """On the same rows, PostgreSQL's, DuckDB's, the Rust engine's and Spark's aggregates are equal, segment by
    segment: counts and both lane sums, modulo 2^64."""
    rows = [(k, None if k % 11 == 0 else f"v{k}", k * 0.25) for k in range(3_000)] + [(None, "null key", 0.5)]
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        postgres_table(conn, "lanes", COLUMNS, rows, batch=3001)
    con = duckdb.connect()
    con.register("src", _arrow(rows))
    con.execute("CREATE TABLE lanes AS SELECT * FROM src")
    sources = [
        rc.postgres(postgres.dsn, "lanes"),
        rc.duckdb(con, "lanes"),
        rc.arrow(_arrow(rows)),
        rc.spark(spark.createDataFrame(rows, "id BIGINT, s STRING, x DOUBLE")),
        rc.spark(spark.createDataFrame(rows, "id BIGINT, s STRING, x DOUBLE"), engine="sql"),
    ]
    plan = None
    found = []
    for source in sources:
        source.open()
        try:
            if plan is None:
                from hashexpr.reconcile.columns import plan as make_plan

                plan = make_plan(source.columns(), source.columns(), ["id"], None, ("a", "b")).side("source")
            found.append(source.aggregate(plan, 6, None))
        finally:
            source.close()
    first = found[0]
    assert first.rows == 3_001 and first.null_rows() == 1 and len(first.segment) == 65
    for other in found[1:]:
        for name in ("segment", "count", "lane1", "lane2"):
            assert np.array_equal(getattr(first, name), getattr(other, name)), name
        assert len(difference(first, other).segments) == 1  # the NULL segment, always fetched


def test_lanes_are_exact_sums_of_signed_words_folded_in_pairs():
    """Each 32-bit lane is summed exactly (no wrap at 32 bits), and the sums fold into two 64-bit lanes."""
    hashes = np.zeros((3, 32), np.uint8)
    hashes[:, 0:4] = [0x80, 0, 0, 0]  # -2^31 in every row
    hashes[:, 4:8] = [0x7F, 0xFF, 0xFF, 0xFF]  # 2^31 - 1
    hashes[0, 8:12] = [0, 0, 0, 1]
    assert lanes(hashes).tolist()[0] == [-(2**31), 2**31 - 1, 1, 0]
    total = Accumulator(2)
    total.add(np.array([1, 1, 1]), lanes(hashes))
    found = total.result()
    s0, s1 = -3 * 2**31, 3 * (2**31 - 1)
    assert found.segment.tolist() == [1] and found.count.tolist() == [3]
    assert found.lane1.tolist() == [((s0 % 2**64) << 32) % 2**64 ^ s1]
    assert found.lane2.tolist() == [1 << 32]
    # The same through the sparse path, and through the 28-byte records PostgreSQL sends.
    sparse = Accumulator(24)
    sparse.add(np.array([1, 1, 1]), lanes(hashes))
    assert sparse.result().lane1.tolist() == found.lane1.tolist()
    record = (1).to_bytes(8, "big", signed=True) + (3).to_bytes(4, "big")
    record += int(found.lane1[0]).to_bytes(8, "big") + int(found.lane2[0]).to_bytes(8, "big")
    decoded = Aggregates.decode(record)
    assert decoded.lane1.tolist() == found.lane1.tolist() and decoded.count.tolist() == [3]


@pytest.mark.parametrize(("rows", "bits"), [(0, 0), (8, 0), (9, 1), (1_000_000, 17), (10**9, 18)])
def test_first_pass_segments(rows, bits):
    assert protocol.first_bits(rows) == bits


def test_postgres_to_postgres_aggregates_row_texts_and_stays_exact(postgres):
    """Two PostgreSQL tables of the same types aggregate by the MD5 of each row's text, not by SHA-256 record
    hashes: a one-ulp change is still found where the server's own float text would hide it
    (``extra_float_digits = 0``), and values equal as the format sees them but written differently (``-0`` and
    ``0``) are fetched and found unchanged, not reported."""
    rows = [(k, f"s{k}", k / 3) for k in range(2_000)]
    changed = list(rows)
    changed[5] = (5, "s5", float(np.nextafter(5 / 3, 10.0)))  # one ulp
    changed[0] = (0, "s0", -0.0)  # rows[0] is 0.0: equal under the format
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        postgres_table(conn, "texts_old", COLUMNS, rows, batch=2000)
        postgres_table(conn, "texts_new", COLUMNS, changed, batch=2000)
        database = conn.info.dbname
        conn.execute(f'ALTER DATABASE "{database}" SET extra_float_digits = 0')
    try:
        said: list[str] = []
        result = rc.compare(
            rc.postgres(postgres.dsn, "texts_old"),
            rc.postgres(postgres.dsn, "texts_new"),
            key="id",
            progress=said.append,
        )
    finally:
        with psycopg.connect(postgres.dsn, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{database}" RESET extra_float_digits')
    assert any("compare the rows' texts" in line for line in said), said
    assert {k: result.counts[k] for k in ("inserted", "deleted", "updated", "unchanged")} == {
        "inserted": 0,
        "deleted": 0,
        "updated": 1,
        "unchanged": 1_999,
    }
    assert [r["id"] for r in result.changes().to_pylist()] == [5]
    # The -0.0 row's segment differed by its text and was fetched, then settled by the record hashes.
    assert result.stats["source"]["rows_fetched"] >= 2


def test_postgres_tables_of_other_types_aggregate_record_hashes(postgres):
    """A column typed differently on the two sides (``integer`` and ``bigint``) compares by record hashes from
    the first pass: the texts of the two types could differ for equal values."""
    rows = [(k, f"s{k}", k / 4) for k in range(500)]
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        postgres_table(conn, "typed_a", COLUMNS, rows, batch=500)
        postgres_table(conn, "typed_b", COLUMNS, rows, batch=500)
        conn.execute("ALTER TABLE typed_b ALTER COLUMN id TYPE integer")
    said: list[str] = []
    result = rc.compare(
        rc.postgres(postgres.dsn, "typed_a"), rc.postgres(postgres.dsn, "typed_b"), key="id", progress=said.append
    )
    assert not any("texts" in line for line in said), said
    assert result.counts["unchanged"] == 500 and result.stats["source"]["rows_fetched"] == 0
