"""``hashexpr reconcile``: SOURCE and TARGET as PostgreSQL URLs, DuckDB files, Parquet paths and Spark tables; the
summary with a sample of the differing rows, --json, --exit-code, --out in each format, --values, --exclude;
passwords from the URL (written with any character), PGPASSWORD or a password file, never shown; one line for
every error, with the exit status of its class. The runs are in-process (cli_runner.run), but for the progress
of a running pass on a terminal, which needs a process of its own."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from urllib.parse import quote

import duckdb
import psycopg
import psycopg.sql
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import run, run_without_spark

from hashexpr import reconcile as rc

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
        "admin": postgres.dsn,
        "port": port,
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
    assert lines["passes"] == "source 1 scan, 2 queries; target 1 scan, 2 queries"
    assert lines["compared"] == "2 columns: v, x"
    # The differing rows follow the summary: change, key, changed columns.
    sample = done.stdout[done.stdout.index("differing rows:") :].splitlines()
    assert sample[0] == "differing rows: the first 3 of 3"
    assert [line.split() for line in sample[1:]] == [
        ["insert", "id=101"], ["delete", "id=7"], ["update", "id=3", "v"],
    ]  # fmt: skip
    # Progress on stderr: the first pass and the rows fetched.
    assert re.search(
        r"^hashexpr: pass 1: 100 and 100 rows in [\d,]+ segments; \d+ differ", done.stderr, re.MULTILINE
    )
    assert "hashexpr: fetched" in done.stderr
    again = run_without_spark("reconcile", tables["url"], tables["url"].replace("public.cli_orders", "cli_orders"),
                              "--key", "id", "--exit-code", "--quiet")  # fmt: skip
    assert again.returncode == 0 and again.stderr == ""


def test_json_and_out(tables, tmp_path):
    out = tmp_path / "changes"
    done = run_without_spark(
        "reconcile", tables["duckdb"], tables["parquet"], "--key", "ID", "--json", "--out", out, "--quiet"
    )
    report = json.loads(done.stdout)
    assert report["exit_status"] == 0 and report["counts"]["unchanged"] == 100 and report["differences"] == 0
    assert [c["name"] for c in report["schema"]] == ["id", "V", "x"]
    assert report["sample"] == [] and report["schema_differences"] == []
    assert report["output"] == {"path": str(out), "format": "parquet-directory", "rows": 0}
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
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")], "a staged output was left behind"
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
        "columns_only_in_source": 0, "columns_only_in_target": 0,
    }  # fmt: skip
    assert report["target"] == "spark:hx_reconcile_lake"
    missing = run(spark, "reconcile", tables["url"], "spark:no_such_table", "--key", "id")
    assert missing.returncode == 2 and "there is no table 'no_such_table'" in missing.stderr


def test_files_named_as_spark_sql_names_them(tables, spark, tmp_path):
    """spark:parquet.`PATH` reads files through Spark; a path alone, a format without types, a missing path and
    a name Spark cannot parse are each refused in one line with the form that works."""
    lake = tables["parquet"]
    done = run(spark, "reconcile", tables["url"], f"spark:parquet.`{lake}`", "--key", "id", "--json", "--quiet")
    assert json.loads(done.stdout)["counts"] == {
        "inserted": 1, "deleted": 1, "updated": 1, "unchanged": 98, "duplicate_key": 0, "null_key": 0,
        "columns_only_in_source": 0, "columns_only_in_target": 0,
    }  # fmt: skip
    refused = {
        str(lake): f"spark: '{lake}' is a path, not a table name: name it as Spark SQL names files, parquet.`{lake}`",
        "s3a://bucket/orders": "spark: 's3a://bucket/orders' is a path, not a table name",
        "./orders": "spark: './orders' is a path, not a table name",
        f"parquet.`{tmp_path}/none`": f"spark: parquet.`{tmp_path}/none`: [PATH_NOT_FOUND]",
        f"csv.`{lake}`": "files are compared as parquet, orc or delta (their types are in them)",
        "order lines": "spark: cannot read the table name 'order lines': quote a part that holds spaces",
    }
    for name, message in refused.items():
        done = run(spark, "reconcile", tables["url"], f"spark:{name}", "--key", "id")
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, (name, done.stderr)
    done = run_without_spark("reconcile", tables["url"], f"spark:delta.`{tmp_path}`", "--key", "id")
    assert done.returncode == 2 and "and Delta Lake is not available" in done.stderr, done.stderr


def test_a_delta_directory_is_read_without_spark_unless_asked(tables, tmp_path):
    """A Delta directory is read by delta-rs (no Spark); with --engine spark, through Spark with Delta Lake, which
    this environment lacks: the command says so before Spark starts."""
    from hashexpr.cli import inputs as hinputs

    table = tmp_path / "orders_delta"
    (table / "_delta_log").mkdir(parents=True)
    done = run_without_spark("reconcile", tables["url"], table, "--key", "id")
    assert done.returncode == 2 and f"reconcile: {table}: " in done.stderr, done.stderr
    assert "compare it through Spark (rc.spark, or --engine spark on the command line)" in done.stderr
    assert "delta" not in hinputs.available_table_formats()
    done = run_without_spark("reconcile", tables["url"], table, "--key", "id", "--engine", "spark")
    assert done.returncode == 2 and "is a Delta table, and Delta Lake is not available" in done.stderr, (
        done.stderr
    )


SPECIAL = ["#", "?", "/", "@", ":", "%", " ", "&", "=", "'", '"', "\\", "+", "[", "Ü"]


def _leaks(password: str, *texts: str) -> list[str]:
    """The parts (three characters or more) of ``password`` that appear in ``texts``."""
    parts = {password[i : i + 3] for i in range(len(password) - 2)}
    return sorted(p for p in parts for text in texts if p in text)


@pytest.mark.parametrize("character", SPECIAL)
def test_no_output_holds_any_part_of_a_password_whatever_its_characters(tables, character):
    """A password written into the URL as it is, with a character URLs reserve: read as written (the user
    information runs to the last @), and no output, of a run that succeeds or fails, holds three characters of
    it."""
    password = f"Zq{character}Wk{character}Vy9"
    with psycopg.connect(tables["admin"], autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("ALTER ROLE {} PASSWORD {}").format(psycopg.sql.Identifier(ROLE), psycopg.sql.Literal(password))
        )
    try:
        url = f"postgresql://{ROLE}:{password}@127.0.0.1:{tables['port']}/postgres?table=cli_orders"
        for args in ((), ("--json",)):
            done = run_without_spark("reconcile", url, tables["parquet"], "--key", "id", "--values", *args)
            assert done.returncode == 0, done.stderr
            assert not _leaks(password, done.stdout, done.stderr)
        assert ":***@127.0.0.1" in json.loads(done.stdout)["source"]
        wrong = url.replace("Vy9", "Vy8")
        failed = run_without_spark("reconcile", wrong, tables["parquet"], "--key", "id", "--json")
        assert failed.returncode == 2 and "password authentication failed" in failed.stderr
        assert not _leaks(password, failed.stdout, failed.stderr)
        # The password as an option of the URL is never shown either.
        option = f"postgresql://{ROLE}@127.0.0.1:{tables['port']}/postgres?table=nope&password={quote(password)}"
        missing = run_without_spark("reconcile", option, tables["parquet"], "--key", "id")
        assert missing.returncode == 2 and "does not exist" in missing.stderr
        assert not _leaks(password, missing.stderr) and not _leaks(quote(password), missing.stderr)
    finally:
        with psycopg.connect(tables["admin"], autocommit=True) as conn:
            conn.execute(
                psycopg.sql.SQL("ALTER ROLE {} PASSWORD {}").format(psycopg.sql.Identifier(ROLE), psycopg.sql.Literal(PASSWORD))
            )


def test_out_by_suffix_with_values(tables, tmp_path):
    """--out writes a Parquet file, CSV or JSON Lines by its suffix (a directory without one); --values adds the
    changed rows' values on each side, to the summary's sample and to the output."""
    outputs = {}
    for name in ("d.parquet", "d.csv", "d.jsonl"):
        done = run_without_spark("reconcile", tables["url"], tables["parquet"], "--key", "id", "--values", "--quiet",
                                 "--out", tmp_path / name)  # fmt: skip
        assert done.returncode == 0, done.stderr
        outputs[name] = tmp_path / name
    assert "update         id=3  v: 'v3' -> 'changed'" in done.stdout
    parquet = pq.read_table(outputs["d.parquet"]).to_pylist()
    update = next(r for r in parquet if r["change"] == "update")
    assert update["source"] == {"v": "v3", "x": 1.5} and update["target"] == {"v": "changed", "x": 1.5}
    assert next(r for r in parquet if r["change"] == "insert")["source"] is None
    csv = (tmp_path / "d.csv").read_text().splitlines()
    assert csv[0] == '"id","change","side","changed_columns","source.v","source.x","target.v","target.x"'
    assert '3,"update","both","[""v""]","v3",1.5,"changed",1.5' in csv
    jsonl = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert {r["change"] for r in jsonl} == {"insert", "delete", "update"}
    assert next(r for r in jsonl if r["id"] == 3)["target"] == {"v": "changed", "x": 1.5}
    for bad, message in (
        (tmp_path / "no" / "such" / "d.parquet", "the directory .*no/such does not exist; create it first"),
        (tmp_path / "d.txt", r"write .parquet, .csv or .jsonl"),
    ):
        done = run_without_spark("reconcile", tables["url"], tables["parquet"], "--key", "id", "--out", bad)
        assert done.returncode == 2 and re.search(message, done.stderr), done.stderr
    assert not (tmp_path / "no").exists()


def test_limit_json_sample_and_a_copy_that_lost_columns(tables, tmp_path):
    """--limit N rows in the summary and --json (key values typed); a copy without a column is a difference
    (printed first, exit status 1), unless --exclude leaves the column out."""
    done = run_without_spark("reconcile", tables["url"], tables["parquet"], "--key", "id", "--limit", "1", "--quiet")
    assert "differing rows: the first 1 of 3; --out writes all 3" in done.stdout
    report = json.loads(run_without_spark("reconcile", tables["url"], tables["parquet"], "--key", "id", "--json",
                                          "--limit", "2", "--values").stdout)  # fmt: skip
    assert report["sample"][0] == {
        "change": "insert", "side": "target", "key": {"id": 101}, "changed_columns": None,
        "source": None, "target": {"v": "new", "x": 0.0},
    }  # fmt: skip
    assert len(report["sample"]) == 2
    lost = tmp_path / "lost.parquet"
    pq.write_table(pq.read_table(tables["parquet"]).select(["id"]), lost)
    done = run_without_spark("reconcile", tables["url"], lost, "--key", "id", "--exit-code", "--quiet")
    assert done.returncode == 1
    first = done.stdout.splitlines()[:2]
    assert first == ["schema                  column 'v' (text) is only in the source",
                     "schema                  column 'x' (double precision) is only in the source"]  # fmt: skip
    report = json.loads(run_without_spark("reconcile", tables["url"], lost, "--key", "id", "--json").stdout)
    assert report["schema_differences"] == [
        {"column": "v", "only_in": "source", "type": "text"},
        {"column": "x", "only_in": "source", "type": "double precision"},
    ]
    # Two rows (an insert and a delete: without the columns the update is no difference) and two columns.
    assert report["counts"]["columns_only_in_source"] == 2 and report["differences"] == 4
    excluded = run_without_spark("reconcile", tables["url"], lost, "--key", "id", "--exclude", "v,x", "--exit-code",
                                 "--quiet")  # fmt: skip
    assert excluded.returncode == 1, "the rows still differ"
    keys_only = run_without_spark("reconcile", tables["url"], lost, "--key", "id", "--columns", "id", "--quiet")
    assert re.search(r"^compared +no column besides the key: which keys exist", keys_only.stdout, re.MULTILINE)
    both = run_without_spark("reconcile", tables["url"], lost, "--key", "id", "--columns", "v", "--exclude", "x")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_each_class_of_failure_has_its_exit_status(tables):
    """2: the input (a value no Spark type holds, named by column and key); 3: a system that failed while it
    answered (PostgreSQL's own error, a pass over --statement-timeout), one line naming it, no Python names."""
    with psycopg.connect(tables["admin"], autocommit=True) as conn:
        conn.execute("CREATE OR REPLACE VIEW cli_nan AS SELECT id, CAST(CASE WHEN id = 5 THEN 'NaN' ELSE '1' END "
                     "AS numeric(5,2)) AS n FROM cli_orders")  # fmt: skip
        conn.execute("CREATE OR REPLACE VIEW cli_nan_copy AS SELECT * FROM cli_nan")
        conn.execute("CREATE OR REPLACE VIEW cli_fails AS SELECT id, 1 / (id - 50) AS v FROM cli_orders")
        conn.execute("CREATE OR REPLACE VIEW cli_fails_copy AS SELECT * FROM cli_fails")
        conn.execute("CREATE OR REPLACE VIEW cli_slow AS SELECT id, CAST(pg_sleep(0.2) AS text) AS v FROM cli_orders")
    url = tables["url"].replace("public.cli_orders", "{}")
    lake = tables["parquet"]
    nan = run_without_spark("reconcile", url.format("cli_nan"), url.format("cli_orders"), "--key", "id", "--columns", "id")
    assert nan.returncode == 0
    nan = run_without_spark("reconcile", url.format("cli_nan"), url.format("cli_nan_copy"), "--key", "id")
    assert nan.returncode == 2 and "column 'n', key id=5: a numeric NaN" in nan.stderr, nan.stderr
    failed = run_without_spark("reconcile", url.format("cli_fails"), lake, "--key", "id", "--columns", "id")
    assert failed.returncode == 0
    failed = run_without_spark("reconcile", url.format("cli_fails"), url.format("cli_fails_copy"), "--key", "id",
                               "--quiet")  # fmt: skip
    assert failed.returncode == 3 and failed.stderr.startswith("hashexpr: error: PostgreSQL: PostgreSQL table cli_fails")
    assert "division by zero" in failed.stderr and "Error" not in failed.stderr and failed.stderr.count("\n") == 1
    slow = run_without_spark("reconcile", url.format("cli_slow"), lake, "--key", "id", "--statement-timeout", "0.5")
    assert slow.returncode == 3 and "statement timeout" in slow.stderr and "--statement-timeout 0.5" in slow.stderr


def test_progress_of_a_running_pass_on_a_terminal(tables):
    """On a terminal, a pass that runs for seconds reports what each side has done every 2 s; in a log, each
    step once; --quiet, nothing."""
    import pty
    import subprocess

    from cli_runner import ROOT, env

    with psycopg.connect(tables["admin"], autocommit=True) as conn:
        conn.execute("CREATE OR REPLACE VIEW cli_sleepy AS SELECT id, v, x, pg_sleep(CASE WHEN id = 1 THEN 5 ELSE 0 "
                     "END) IS NULL AS z FROM cli_orders")  # fmt: skip
    source = tables["url"].replace("public.cli_orders", "cli_sleepy")
    args = [sys.executable, "-m", "hashexpr", "reconcile", source, tables["parquet"], "--key", "id", "--columns", "v"]
    primary, secondary = pty.openpty()
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=secondary, env=env(), cwd=ROOT)
    os.close(secondary)
    shown = b""
    while True:
        try:
            data = os.read(primary, 4096)
        except OSError:
            break
        if not data:
            break
        shown += data
    process.wait(timeout=60)
    os.close(primary)
    text = shown.decode()
    ticks = re.findall(r"hashexpr: pass 1: source query running \(about [\d,]+ rows\); target [\d,]+ rows read", text)
    assert len(ticks) >= 2, text
    assert process.returncode == 0


def test_a_password_as_an_option_and_urls_that_read_more_than_one_way(tables):
    """The password as a URL option, written as it is or with its name percent-encoded, is masked; a URL whose
    user information could end at more than one '@' is refused with everything after the scheme hidden."""
    password = "Zq@Wk/Vy#9"
    with psycopg.connect(tables["admin"], autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("ALTER ROLE {} PASSWORD {}").format(psycopg.sql.Identifier(ROLE), psycopg.sql.Literal(password))
        )
    try:
        base = f"postgresql://{ROLE}@127.0.0.1:{tables['port']}/postgres?table=cli_orders"
        for url in (f"{base}&password={password}", f"{base}&pass%77ord={quote(password)}"):
            done = run_without_spark("reconcile", url, tables["parquet"], "--key", "id", "--json")
            assert done.returncode == 0, done.stderr
            assert not _leaks(password, done.stdout, done.stderr) and not _leaks(quote(password), done.stdout)
            assert "=***" in json.loads(done.stdout)["source"]
        ambiguous = f"postgresql://{ROLE}:{password}@127.0.0.1:{tables['port']}/postgres?table=t&application_name=a@b"
        refused = run_without_spark("reconcile", ambiguous, tables["parquet"], "--key", "id", "--json")
        assert refused.returncode == 2 and "SOURCE postgresql://*** reads more than one way" in refused.stderr
        assert not _leaks(password, refused.stdout, refused.stderr)
        with pytest.raises(ValueError, match=r"postgresql://\*\*\* reads more than one way") as error:
            rc.postgres(ambiguous, "t")
        assert not _leaks(password, str(error.value))
    finally:
        with psycopg.connect(tables["admin"], autocommit=True) as conn:
            conn.execute(
                psycopg.sql.SQL("ALTER ROLE {} PASSWORD {}").format(psycopg.sql.Identifier(ROLE), psycopg.sql.Literal(PASSWORD))
            )


def test_outputs_of_keys_named_like_the_outputs_columns_and_of_infinite_dates(tables, tmp_path):
    """A key column named change or source keeps its name; the columns added are then hx_-prefixed. CSV and
    JSON Lines show infinite dates and years past 9999 as text."""
    with psycopg.connect(tables["admin"], autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS cli_odd_keys, cli_odd_keys_copy")
        conn.execute('CREATE TABLE cli_odd_keys ("change" int, "source" date, v text)')
        conn.execute("INSERT INTO cli_odd_keys VALUES (1, 'infinity', 'a'), (2, '20000-01-01', 'b')")
        conn.execute("CREATE TABLE cli_odd_keys_copy AS SELECT * FROM cli_odd_keys")
        conn.execute("UPDATE cli_odd_keys_copy SET v = 'B'")
    url = tables["url"].replace("public.cli_orders", "{}")
    source, target = url.format("cli_odd_keys"), url.format("cli_odd_keys_copy")
    for name in ("o.csv", "o.jsonl", "o.parquet"):
        done = run_without_spark("reconcile", source, target, "--key", "change,source", "--values", "--quiet",
                                 "--out", tmp_path / name, "--json")  # fmt: skip
        assert done.returncode == 0, done.stderr
    sample = json.loads(done.stdout)["sample"]
    assert sorted((s["key"]["change"], s["key"]["source"], s["change"]) for s in sample) == [
        (1, "infinity", "update"), (2, "20000-01-01", "update"),
    ]  # fmt: skip
    assert pq.read_table(tmp_path / "o.parquet").column_names == [
        "change", "source", "hx_change", "hx_side", "hx_changed_columns", "hx_source", "hx_target",
    ]  # fmt: skip
    jsonl = sorted(json.loads(line)["source"] for line in (tmp_path / "o.jsonl").read_text().splitlines())
    assert jsonl == ["20000-01-01", "infinity"]
    csv = (tmp_path / "o.csv").read_text().splitlines()
    assert csv[0].startswith('"change","source","hx_change"') and any('"infinity"' in line for line in csv[1:])
