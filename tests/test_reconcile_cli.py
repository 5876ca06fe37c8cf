"""``hashexpr reconcile``: SOURCE and TARGET as PostgreSQL URLs, DuckDB files, Parquet paths and Spark tables; the
summary, --json, --exit-code and --out; passwords from the URL, PGPASSWORD or a password file, never shown; one
line for every error. The runs are in-process (cli_runner.run)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import duckdb
import psycopg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import run, run_without_spark

PASSWORD = "s3cr3t-Ünïcode pass"
ROLE = "hx_reconcile_login"


@pytest.fixture(scope="module")
def tables(postgres, tmp_path_factory):
    """A PostgreSQL table (a role that logs in with a password may read it), a DuckDB file and a Parquet file
    with the same rows but for one update, one delete and one insert."""
    root = tmp_path_factory.mktemp("reconcile-cli")
    rows = [(i, f"v{i}", i * 0.5) for i in range(1, 101)]
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS cli_orders")
        conn.execute("CREATE TABLE cli_orders (id bigint, v text, x double precision)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO cli_orders VALUES (%s, %s, %s)", rows)
        conn.execute(f"DROP ROLE IF EXISTS {ROLE}")
        conn.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
        conn.execute(f"GRANT SELECT ON cli_orders TO {ROLE}")
        # This role alone must give its password (the suite's other connections stay trusted).
        hba = Path(postgres.socket_dir) / "data" / "pg_hba.conf"
        text = hba.read_text()
        if ROLE not in text:
            hba.write_text(f"host all {ROLE} 127.0.0.1/32 scram-sha-256\n" + text)
            conn.execute("SELECT pg_reload_conf()")
    changed = [r for r in rows if r[0] != 7] + [(101, "new", 0.0)]
    changed = [(i, "changed" if i == 3 else v, x) for i, v, x in changed]
    table = pa.table(
        {"id": [r[0] for r in changed], "V": [r[1] for r in changed], "x": [r[2] for r in changed]}
    )
    pq.write_table(table, root / "lake.parquet")
    database = root / "copy.duckdb"
    with duckdb.connect(str(database)) as con:
        con.register("lake", table)
        con.execute("CREATE TABLE orders AS SELECT * FROM lake")
    host, port = "127.0.0.1", postgres.port
    return {
        "root": root,
        "url": f"postgresql://{postgres.user}@{host}:{port}/postgres?table=public.cli_orders",
        "login": f"postgresql://{ROLE}@{host}:{port}/postgres?table=cli_orders",
        "secret_url": f"postgresql://{ROLE}:{PASSWORD.replace(' ', '%20')}@{host}:{port}/postgres?table=cli_orders",
        "duckdb": f"duckdb:{database}?table=orders",
        "parquet": str(root / "lake.parquet"),
    }


def test_postgres_against_duckdb_summary_and_exit_code(tables):
    done = run_without_spark("reconcile", tables["url"], tables["duckdb"], "--key", "id", "--exit-code")
    assert done.returncode == 1, done.stderr
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines())
    assert lines["inserted"] == "1" and lines["deleted"] == "1" and lines["updated"] == "1"
    assert lines["unchanged"] == "98" and lines["duplicate_key"] == "0" and lines["null_key"] == "0"
    assert lines["source"].startswith("PostgreSQL table public.cli_orders (postgres@127.0.0.1:")
    assert lines["passes"] == "source 1 scan(s), 2 queries; target 1 scan(s), 2 queries"
    # Progress on stderr: the first pass and the rows fetched.
    assert re.search(
        r"^hashexpr: pass 1: 100 and 100 rows in [\d,]+ segments; \d+ differ", done.stderr, re.MULTILINE
    )
    assert "hashexpr: fetched" in done.stderr
    again = run_without_spark("reconcile", tables["url"], tables["url"].replace("public.cli_orders", "cli_orders"),
                              "--key", "id", "--exit-code", "--quiet")  # fmt: skip
    assert again.returncode == 0 and again.stderr == ""


def test_json_and_out(tables, tmp_path):
    out = tmp_path / "changes.parquet"
    done = run_without_spark(
        "reconcile", tables["duckdb"], tables["parquet"], "--key", "ID", "--json", "--out", out, "--quiet"
    )
    report = json.loads(done.stdout)
    assert report["exit_status"] == 0 and report["counts"]["unchanged"] == 100 and report["differences"] == 0
    assert [c["name"] for c in report["schema"]] == ["id", "V", "x"]
    written = pq.read_table(out)
    assert written.num_rows == 0 and written.schema.names == ["id", "change", "side", "changed_columns"]
    assert sorted(os.listdir(out)) == ["_SUCCESS", "part-00000.snappy.parquet"]
    # An existing output is kept unless --mode overwrite; an output may not replace an input.
    kept = run_without_spark("reconcile", tables["url"], tables["parquet"], "--key", "id", "--out", out)
    assert kept.returncode == 2 and "output already exists" in kept.stderr
    replaced = run_without_spark(
        "reconcile",
        tables["url"],
        tables["parquet"],
        "--key",
        "id",
        "--out",
        out,
        "--mode",
        "overwrite",
        "--quiet",
    )
    assert replaced.returncode == 0, replaced.stderr
    rows = pq.read_table(out).to_pylist()
    assert sorted((r["id"], r["change"], r["side"], r["changed_columns"]) for r in rows) == [
        (3, "update", "both", ["v"]), (7, "delete", "source", None), (101, "insert", "target", None),
    ]  # fmt: skip
    onto_input = run_without_spark("reconcile", tables["url"], tables["parquet"], "--key", "id", "--out",
                                   tables["parquet"], "--mode", "overwrite")  # fmt: skip
    assert onto_input.returncode == 2 and "OUTPUT is INPUT" in onto_input.stderr
    assert pq.read_table(tables["parquet"]).num_rows == 100


@pytest.mark.parametrize("how", ["url", "PGPASSWORD", "PGPASSFILE"])
def test_passwords_come_from_the_url_pgpassword_or_a_password_file_and_are_never_shown(tables, tmp_path, how):
    env, source = {}, tables["login"]
    if how == "url":
        source = tables["secret_url"]
    elif how == "PGPASSWORD":
        env["PGPASSWORD"] = PASSWORD
    else:
        passfile = tmp_path / "pgpass"
        passfile.write_text(f"127.0.0.1:*:*:{ROLE}:{PASSWORD}\n")
        passfile.chmod(0o600)
        env["PGPASSFILE"] = str(passfile)
    done = run_without_spark("reconcile", source, tables["parquet"], "--key", "id", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["updated"] == 1
    for text in (done.stdout, done.stderr):
        assert PASSWORD not in text and PASSWORD.replace(" ", "%20") not in text
    assert ":***@" in json.loads(done.stdout)["source"] if how == "url" else True


def test_a_wrong_password_and_an_unreachable_server_are_input_errors(tables):
    wrong = tables["secret_url"].replace("s3cr3t", "wrong")
    done = run_without_spark("reconcile", wrong, tables["parquet"], "--key", "id")
    assert done.returncode == 2
    assert "password authentication failed" in done.stderr and "wrong" not in done.stderr
    assert done.stderr.count("hashexpr: error:") == 1
    refused = run_without_spark(
        "reconcile", "postgresql://x@127.0.0.1:1/db?table=t", tables["parquet"], "--key", "id"
    )
    assert refused.returncode == 2 and "cannot connect to PostgreSQL at x@127.0.0.1:1/db" in refused.stderr


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("postgresql://127.0.0.1/postgres", "names no table: add ?table=SCHEMA.TABLE"),
        ("duckdb:nowhere.duckdb?table=t", "no such DuckDB database file: nowhere.duckdb"),
        ("duckdb:copy.duckdb", "names no table: write duckdb:PATH?table=TABLE"),
        ("nowhere.parquet", "SOURCE not found: nowhere.parquet"),
        ("s3a://bucket/orders", "is none of: postgresql://"),
    ],
)
def test_sources_it_cannot_read_are_refused_before_anything_runs(tables, source, message):
    done = run_without_spark("reconcile", source, tables["parquet"], "--key", "id")
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_missing_table_and_key_column(tables):
    missing = run_without_spark(
        "reconcile", tables["url"].replace("cli_orders", "nope"), tables["parquet"], "--key", "id"
    )
    assert missing.returncode == 2 and "public.nope" in missing.stderr and "does not exist" in missing.stderr
    key = run_without_spark("reconcile", tables["url"], tables["parquet"], "--key", "idd")
    assert key.returncode == 2 and "did you mean 'id'?" in key.stderr
    spark_options = run_without_spark(
        "reconcile", tables["url"], tables["parquet"], "--key", "id", "--master", "local[1]"
    )
    assert (
        spark_options.returncode == 2 and "--master and --conf are for spark: tables" in spark_options.stderr
    )


def test_a_spark_table(tables, spark):
    """spark:NAME reads a table of the command's Spark (here the test session, as main(argv, spark) gives it)."""
    spark.read.parquet(tables["parquet"]).createOrReplaceTempView("hx_reconcile_lake")
    try:
        done = run(
            spark, "reconcile", tables["url"], "spark:hx_reconcile_lake", "--key", "id", "--json", "--quiet"
        )
    finally:
        spark.catalog.dropTempView("hx_reconcile_lake")
    report = json.loads(done.stdout)
    assert report["counts"] == {
        "inserted": 1, "deleted": 1, "updated": 1, "unchanged": 98, "duplicate_key": 0, "null_key": 0,
    }  # fmt: skip
    assert report["target"] == "spark:hx_reconcile_lake"
    missing = run(spark, "reconcile", tables["url"], "spark:no_such_table", "--key", "id")
    assert missing.returncode == 2 and "there is no table 'no_such_table'" in missing.stderr


def test_a_delta_directory_needs_delta_lake(tables, tmp_path):
    """A Delta directory is read through Spark with Delta Lake; without it the command says so before Spark starts."""
    from hashexpr.cli import inputs as hinputs

    table = tmp_path / "orders_delta"
    (table / "_delta_log").mkdir(parents=True)
    if "delta" in hinputs.available_table_formats():
        pytest.skip("this environment has Delta Lake; the refusal needs one without it")
    done = run_without_spark("reconcile", tables["url"], table, "--key", "id")
    assert done.returncode == 2 and "is a Delta table, and Delta Lake is not available" in done.stderr, (
        done.stderr
    )
