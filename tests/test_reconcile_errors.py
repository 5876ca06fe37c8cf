"""hashexpr.reconcile refuses what it cannot compare exactly, with a message that names the column, the type and
the system, and says what to do; it writes nothing, and a side that fails or runs too long stops both."""

from __future__ import annotations

import time

import duckdb
import psycopg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from servers import free_port

from hashexpr import reconcile as rc

LAKE = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]})


@pytest.fixture(scope="module")
def pg(postgres):
    """A database of its own with a few tables of types no other system reproduces."""
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS hx_reconcile_errors")
        admin.execute("CREATE DATABASE hx_reconcile_errors")
    dsn = postgres.dsn.replace("dbname=postgres", "dbname=hx_reconcile_errors")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE odd (id bigint, v text, u uuid, span interval, n numeric, c char(3), nan numeric(5,2))"
        )
        conn.execute(
            "INSERT INTO odd VALUES (1, 'a', gen_random_uuid(), '1 day', 1.5, 'x', 1), "
            "(2, 'b', gen_random_uuid(), '2 days', 2, 'y', 'NaN'), (3, 'c', NULL, NULL, NULL, NULL, NULL)"
        )
        conn.execute("CREATE TABLE log (at timestamptz)")
        conn.execute(
            "CREATE FUNCTION noted(x bigint) RETURNS bigint LANGUAGE plpgsql VOLATILE AS "
            "$$BEGIN INSERT INTO log VALUES (now()); RETURN x; END$$"
        )
        conn.execute("CREATE VIEW writes AS SELECT noted(id) AS id, v FROM odd")
        conn.execute("CREATE VIEW slow AS SELECT id, v, CAST(pg_sleep(0.5) AS text) AS z FROM odd")
        conn.execute("CREATE VIEW slower AS SELECT id, v, CAST(pg_sleep(1) AS text) AS z FROM odd")
    return dsn


def test_a_missing_table_and_a_missing_key_column(pg, tmp_path):
    with pytest.raises(ValueError, match=r"PostgreSQL table public\.nope .* does not exist"):
        rc.compare(rc.postgres(pg, "public.nope"), rc.arrow(LAKE), key="id")
    with pytest.raises(ValueError, match=r"key column 'idd' is not a column of both sides: the source .* has no "
                       r"column 'idd' \(did you mean 'id'\?\)"):  # fmt: skip
        rc.compare(rc.postgres(pg, "odd"), rc.arrow(LAKE), key="idd")
    database = tmp_path / "d.duckdb"
    duckdb.connect(str(database)).close()
    with pytest.raises(ValueError, match="DuckDB table orders .* does not exist"):
        rc.compare(rc.duckdb(database, "orders"), rc.arrow(LAKE), key="id")
    with pytest.raises(FileNotFoundError, match="no such database file"):
        rc.compare(rc.duckdb(tmp_path / "missing.duckdb", "t"), rc.arrow(LAKE), key="id")
    assert not (tmp_path / "missing.duckdb").exists()
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        rc.parquet(tmp_path / "missing.parquet")


def test_an_unreachable_server():
    dsn = f"postgresql://nobody:pa55word@127.0.0.1:{free_port()}/db"
    with pytest.raises(
        ConnectionError, match=r"cannot connect to PostgreSQL at nobody@127\.0\.0\.1:\d+/db"
    ) as error:
        rc.compare(rc.postgres(dsn, "t"), rc.arrow(LAKE), key="id")
    assert "pa55word" not in str(error.value) and "pa55word" not in repr(rc.postgres(dsn, "t"))


def test_types_no_other_system_reproduces_are_refused_naming_column_type_and_system(pg):
    """An interval has no type every system reads alike; a numeric against a double never compares equal. Each
    is named once, with its type, its system and the way out; a uuid and a character(n) compare (as text)."""
    lake = LAKE.append_column("u", pa.array(["x"] * 3)).append_column("span", pa.array(["1 day"] * 3))
    lake = lake.append_column("n", pa.array([1.5] * 3)).append_column("c", pa.array(["x"] * 3))
    with pytest.raises(ValueError) as error:
        rc.compare(rc.postgres(pg, "odd"), rc.arrow(lake), key="id", columns=["v", "u", "span", "n", "c"])
    message = str(error.value)
    assert message.startswith("compare: 2 columns cannot be compared exactly: 'span': interval in the source "
                              "(PostgreSQL table odd (")  # fmt: skip
    assert "intervals have no type that every system reads alike" in message
    assert "'n': numeric (decimal(38,*)) in the source and double (double) in the target" in message
    assert message.endswith("columns= without them leaves them out") and message.count("'span'") == 1
    # Left out by columns=, they are not read at all.
    result = rc.compare(rc.postgres(pg, "odd"), rc.arrow(LAKE), key="id", columns=["v"])
    assert result.differences == 0 and result.counts["unchanged"] == 3
    left_out = {(c.name, c.source_type) for c in result.schema if c.role == "left out"}
    assert left_out == {
        ("u", "uuid"),
        ("span", "interval"),
        ("n", "numeric"),
        ("c", "character(3)"),
        ("nan", "numeric(5,2)"),
    }


def test_a_numeric_nan_fails_the_pass(pg):
    lake = LAKE.append_column("nan", pa.array([1, None, None], pa.decimal128(5, 2)))
    with pytest.raises(ValueError, match="column 'nan', key id=2: a numeric NaN has no Spark decimal value"):
        rc.compare(rc.postgres(pg, "odd"), rc.arrow(lake), key="id", columns=["nan"])


def test_types_whose_values_never_compare_equal_are_refused(pg, tmp_path):
    lake = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array([1, 2, 3], pa.int32())})
    with pytest.raises(ValueError, match=r"a column cannot be compared exactly: 'v': text \(string\) in the source "
                       r"and int32 \(int\) in the target, whose values never compare equal: cast one side in a view"):  # fmt: skip
        rc.compare(rc.postgres(pg, "odd"), rc.arrow(lake), key="id", columns=["v"])
    con = duckdb.connect()
    con.execute("CREATE TABLE h (id HUGEINT, v VARCHAR)")
    with pytest.raises(ValueError, match=r"key column 'id': HUGEINT in the source \(DuckDB table h .*\): .*"
                       r"cast it to DECIMAL\(38,0\) in a view"):  # fmt: skip
        rc.compare(rc.duckdb(con, "h"), rc.arrow(LAKE), key="id")
    # An INT96 timestamp is Spark's TIMESTAMP, an instant: never equal to a wall clock, equal to an instant.
    path = tmp_path / "int96.parquet"
    pq.write_table(
        pa.table({"id": [1], "t": pa.array([0], pa.timestamp("us"))}),
        path,
        use_deprecated_int96_timestamps=True,
    )
    wall_clock = pa.table({"id": [1], "t": pa.array([0], pa.timestamp("us"))})
    with pytest.raises(ValueError, match=r"'t': .* \(timestamp\) in the source and .* \(timestamp_ntz\)"):
        rc.compare(rc.parquet(path), rc.arrow(wall_clock), key="id")
    instant = pa.table({"id": [1], "t": pa.array([0], pa.timestamp("us", "UTC"))})
    assert rc.compare(rc.parquet(path), rc.arrow(instant), key="id").counts["unchanged"] == 1


def test_nothing_is_written_the_transaction_is_read_only(pg):
    """A view that would write fails: the comparison reads in a READ ONLY transaction."""
    with pytest.raises(Exception, match="read-only transaction"):
        rc.compare(rc.postgres(pg, "writes"), rc.arrow(LAKE), key="id", columns=["v"])
    with psycopg.connect(pg) as conn:
        assert conn.execute("SELECT count(*) FROM log").fetchone()[0] == 0


def test_a_statement_timeout_cancels_the_pass(pg):
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="canceling statement due to statement timeout"):
        rc.compare(rc.postgres(pg, "slow"), rc.arrow(LAKE), key="id", columns=["v"], statement_timeout=0.3)
    assert time.monotonic() - started < 5


def test_a_failing_side_cancels_the_other(pg, tmp_path):
    """When one side fails, the other side's running query is cancelled rather than waited for."""
    lake = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", None]})
    path = tmp_path / "lake.parquet"
    pq.write_table(lake, path)
    source = rc.parquet(path)
    original = type(source)._check_unchanged

    def failing(self):
        raise ValueError("parquet: the lake went away")

    type(source)._check_unchanged = failing
    try:
        # PostgreSQL's first pass takes 3 s (three rows of pg_sleep(1)); the Parquet side fails at once.
        started = time.monotonic()
        with pytest.raises(ValueError, match="the lake went away"):
            rc.compare(rc.postgres(pg, "slower"), source, key="id", columns=["v"])
        assert time.monotonic() - started < 2.5
    finally:
        type(source)._check_unchanged = original
    with psycopg.connect(pg) as conn:
        running = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%%slower%%' AND pid <> pg_backend_pid()"
        )
        assert running.fetchone()[0] == 0


def test_arguments_are_checked_before_anything_runs(tmp_path):
    with pytest.raises(TypeError, match="rc.postgres, rc.mysql, rc.duckdb"):
        rc.compare("postgresql://x/y", rc.arrow(LAKE), key="id")
    side = rc.arrow(LAKE)
    with pytest.raises(ValueError, match="the same object"):
        rc.compare(side, side, key="id")
    for timeout in (0, -1, float("nan"), float("inf"), 1e300, 2_147_484, "5", True):
        with pytest.raises(ValueError, match=r"compare: statement_timeout must be a number of seconds above 0 and at most 2,147,483"):
            rc.compare(rc.arrow(LAKE), rc.arrow(LAKE), key="id", statement_timeout=timeout)
    with pytest.raises(ValueError, match="cannot read the table name"):
        rc.postgres("dbname=x", "t; DROP TABLE t")
    with pytest.raises(ValueError, match="key= names no column"):
        rc.compare(rc.arrow(LAKE), rc.arrow(LAKE), key=[])


def test_data_the_engine_cannot_read_as_spark_does_is_refused(tmp_path):
    """Parquet and Arrow data go through hashexpr.arrow's input layer, which refuses what it cannot be sure of."""
    directory = tmp_path / "partitioned"
    (directory / "year=2024").mkdir(parents=True)
    with pytest.raises(ValueError, match="has no data files"):
        rc.compare(rc.parquet(directory), rc.arrow(LAKE), key="id")
    delta = tmp_path / "delta"
    (delta / "_delta_log").mkdir(parents=True)
    pq.write_table(LAKE, delta / "part-0.parquet")
    with pytest.raises(ValueError, match="is a Delta table.*compare it through rc.spark"):
        rc.compare(rc.parquet(delta), rc.arrow(LAKE), key="id")
    naive = LAKE.append_column("ts", pa.array([1, 2, 3], pa.timestamp("ns")))
    with pytest.raises(ValueError, match=r"'ts': timestamp\[ns\] on both sides: it is a timestamp\[ns\] without a time zone"):
        rc.compare(rc.arrow(naive), rc.arrow(LAKE.append_column("ts", naive["ts"])), key="id")


def test_import_hashexpr_loads_none_of_reconciles_dependencies():
    """numpy, psycopg and DuckDB (the reconcile extra) load with hashexpr.reconcile, not with hashexpr or its CLI."""
    import subprocess
    import sys

    code = (
        "import sys, hashexpr, hashexpr.cli.main; "
        "print(sorted(m for m in ('numpy', 'psycopg', 'duckdb', 'hashexpr.reconcile') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
