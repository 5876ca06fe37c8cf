"""``hashexpr reconcile`` with MySQL URLs, many pairs of tables from a TOML file (``--config``), a report for a
reviewer (``--report``), and an interrupt that cancels the queries a pass runs.

The pairs: PostgreSQL against MariaDB (rows that differ), DuckDB against MariaDB (equal), a Delta table against
the Parquet copy of the same rows, and a table that does not exist. The run goes on past the failing pair,
reports every pair, and exits with the worst status.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import duckdb
import psycopg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import run_without_spark
from mariadb_server import PASSWORD

pytest.importorskip("pymysql")

ROWS = [(i, f"name {i}", i * 0.25) for i in range(1, 201)]


@pytest.fixture(scope="module")
def world(mariadb, postgres, tmp_path_factory):
    root = tmp_path_factory.mktemp("reconcile-tables")
    with mariadb.connect() as conn, conn.cursor() as cursor:
        for name in ("orders", "items"):
            cursor.execute(f"DROP TABLE IF EXISTS {name}")
            cursor.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, name VARCHAR(20), x DOUBLE)")
            cursor.executemany(f"INSERT INTO {name} VALUES (%s, %s, %s)", ROWS)
        cursor.execute("UPDATE orders SET name = 'NAME 5' WHERE id = 5")
        cursor.execute("DELETE FROM orders WHERE id = 9")
    with psycopg.connect(postgres.dsn, autocommit=True) as pg:
        pg.execute("DROP TABLE IF EXISTS orders")
        pg.execute("CREATE TABLE orders (id int PRIMARY KEY, name text, x float8)")
        with pg.cursor() as cur:
            cur.executemany("INSERT INTO orders VALUES (%s, %s, %s)", ROWS)
    table = pa.table({"id": pa.array([r[0] for r in ROWS], pa.int32()), "name": [r[1] for r in ROWS],
                      "x": [r[2] for r in ROWS]})  # fmt: skip
    with duckdb.connect(str(root / "shop.duckdb")) as con:
        con.register("rows", table)
        con.execute("CREATE TABLE items AS SELECT * FROM rows")
    from deltalake import write_deltalake

    write_deltalake(str(root / "lake" / "products"), table)
    pq.write_table(table, root / "products.parquet")
    pg_url = f"postgresql://{postgres.user}@127.0.0.1:{postgres.port}/postgres"
    return {"root": root, "pg": pg_url, "mysql": mariadb.url()}


def _config(world, *, failing: bool) -> str:
    root = world["root"]
    text = f"""
[defaults]
source = "{world['pg']}"
target = "{world['mysql'].replace(PASSWORD_ENCODED, '${HX_TEST_PASSWORD}')}"
jobs = 2

[[tables]]
table = "orders"

[[tables]]
name = "items <b>"
source = "duckdb:{root / 'shop.duckdb'}?table=items"
target_table = "items"
key = "id"

[[tables]]
name = "products"
source = "{root / 'lake' / 'products'}"
target = "{root / 'products.parquet'}"
key = ["id"]
"""
    if failing:
        text += '\n[[tables]]\nname = "missing"\ntable = "no_such_table"\n'
    path = root / ("failing.toml" if failing else "tables.toml")
    path.write_text(text)
    return str(path)


PASSWORD_ENCODED = __import__("urllib.parse").parse.quote(PASSWORD, safe="")


def test_a_mysql_url_with_a_password_and_the_primary_key_by_default(world):
    done = run_without_spark("reconcile", f"{world['pg']}?table=orders", world["mysql"] + "?table=orders", "--json",
                             "--quiet")  # fmt: skip
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["key"] == ["id"]
    assert (report["counts"]["updated"], report["counts"]["deleted"], report["counts"]["unchanged"]) == (1, 1, 198)
    assert report["target"].startswith("mariadb://hx:***@127.0.0.1:") and report["target"].endswith("/hx table orders")
    assert PASSWORD not in done.stdout + done.stderr and PASSWORD_ENCODED not in done.stdout + done.stderr
    bad = run_without_spark("reconcile", f"{world['pg']}?table=orders", "mysql://hx:wrong@127.0.0.1:1/hx?table=t")
    assert bad.returncode == 2 and "cannot connect to MySQL at hx@127.0.0.1:1/hx" in bad.stderr


def test_many_tables_from_a_config_with_a_report_and_every_differing_row(world):
    root = world["root"]
    out, report = root / "differences", root / "report.html"
    env = {"HX_TEST_PASSWORD": PASSWORD_ENCODED}
    done = run_without_spark("reconcile", "--config", _config(world, failing=True), "--report", report, "--out", out,
                             "--exit-code", "--json", "--quiet", env=env)  # fmt: skip
    assert done.returncode == 2, done.stderr  # a pair failed: its status is the run's
    found = json.loads(done.stdout)
    tables = {t["name"]: t for t in found["tables"]}
    assert list(tables) == ["orders", "items <b>", "products", "missing"]
    assert (tables["orders"]["counts"]["updated"], tables["orders"]["counts"]["deleted"]) == (1, 1)
    assert not tables["items <b>"]["differences"] and not tables["products"]["differences"]
    assert "no_such_table" in tables["missing"]["error"] and "does not exist" in tables["missing"]["error"]
    wanted = {"tables": 4, "differ": 1, "failed": 1, "updated": 1, "deleted": 1}
    assert {k: found["totals"][k] for k in wanted} == wanted
    assert sorted(os.listdir(out)) == ["items__b_.parquet", "orders.parquet", "products.parquet"]
    assert pq.read_table(out / "orders.parquet").num_rows == 2
    html = report.read_text()
    assert "items &lt;b&gt;" in html and "items <b>" not in html
    assert "4 tables: 2 equal, 1 differ, 1 failed" in html and PASSWORD not in html
    # Without the failing pair: the differences alone decide (--exit-code), and the text summary has a line each.
    text = run_without_spark("reconcile", "--config", _config(world, failing=False), "--report", root / "r.md",
                             "--exit-code", "--quiet", env=env)  # fmt: skip
    assert text.returncode == 1, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split()[:3] == ["table", "status", "inserted"]
    assert lines[1].split()[:2] == ["orders", "differs"] and lines[3].split()[:2] == ["products", "equal"]
    markdown = (root / "r.md").read_text()
    assert "| orders | differs | 0 | 1 | 1 | 0 | 0 | 198 |" in markdown
    assert "| 5 | update | name |" in markdown


def test_config_errors_name_the_file_and_the_entry(world, tmp_path):
    bad = tmp_path / "bad.toml"
    for text, message in (
        ('[[tables]]\ntable = "t"\n', "[[tables]] entry 1: no source"),
        ('[[tables]]\nsource = "a.parquet"\ntarget = "b.parquet"\nkeys = ["id"]\n', "unknown setting 'keys'"),
        ('[defaults]\njobs = 0\n[[tables]]\ntable = "t"\n', "jobs must be a whole number of 1 or more"),
        ('[[tables]]\nsource = "postgresql://h/d?table=t&password=${HX_UNSET_VARIABLE}"\ntarget = "x"\n',
         "the environment variable HX_UNSET_VARIABLE is not set"),
        ("tables = 3", "no [[tables]] entry"),
    ):  # fmt: skip
        bad.write_text(text)
        done = run_without_spark("reconcile", "--config", bad)
        assert done.returncode == 2 and message in done.stderr, (text, done.stderr)
    both = run_without_spark("reconcile", "a.parquet", "b.parquet", "--config", bad)
    assert both.returncode == 2 and "in place of SOURCE and TARGET" in both.stderr


def test_config_checks_before_anything_runs(world, tmp_path):
    """Two pairs whose --out files would be one (after a name's cleaning, or by case alone), an --out that would
    replace the configuration itself, a timeout no system takes: refused before any system is asked."""
    pair = f'source = "{world["root"] / "products.parquet"}"\ntarget = "{world["root"] / "lake" / "products"}"\n'
    config = tmp_path / "twins.toml"
    config.write_text(f'[[tables]]\nname = "a/b"\n{pair}[[tables]]\nname = "A_B"\n{pair}')
    twins = run_without_spark("reconcile", "--config", config, "--out", tmp_path / "out")
    assert twins.returncode == 2 and "'a/b' and 'A_B' would both write a_b.parquet and A_B.parquet" in twins.stderr, twins.stderr
    (tmp_path / "dir").mkdir()
    inside = tmp_path / "dir" / "c.toml"
    inside.write_text(f"[[tables]]\n{pair}")
    over = run_without_spark("reconcile", "--config", inside, "--out", tmp_path / "dir", "--mode", "overwrite")
    assert over.returncode == 2 and inside.exists(), over.stderr
    for seconds in ("inf", "nan", "1e300", "0"):
        done = run_without_spark("reconcile", "--config", _config(world, failing=False), "--statement-timeout", seconds)
        assert done.returncode == 2 and "--statement-timeout must be a number of seconds above 0 and at most 2,147,483" in done.stderr


def test_a_variable_in_a_table_name_of_a_default_is_expanded(world, tmp_path):
    config = tmp_path / "variable.toml"
    config.write_text(f'[defaults]\nsource = "{world["pg"]}"\ntarget = "{world["root"]}"\n'
                      '[[tables]]\nname = "orders"\nsource_table = "${HX_TEST_TABLE}"\n'
                      'target_table = "products.parquet"\nkey = "id"\n')  # fmt: skip
    done = run_without_spark("reconcile", "--config", config, "--json", "--quiet", env={"HX_TEST_TABLE": "orders"})
    assert done.returncode == 0, done.stderr
    (found,) = json.loads(done.stdout)["tables"]
    assert found["counts"]["unchanged"] == len(ROWS) and found["source"].endswith("table orders")


def test_a_pair_that_fails_unforeseen_leaves_the_others_to_run(world):
    from hashexpr.cli.reconcile import tables
    from hashexpr.cli.reconcile.config import Config, Entry
    from hashexpr.cli.reconcile.sides import parse_side

    def entry(name):
        source, target = (parse_side(str(world["root"] / p), "SIDE") for p in ("products.parquet", "lake/products"))
        return Entry(name, source, target, None, None, None, False)

    def compare(entry, say, track):
        if entry.name == "broken":
            raise KeyError("no such thing")
        return {"differences": False}

    args = __import__("argparse").Namespace(exit_code=True)
    found = tables.run_all(Config([entry("broken"), entry("fine")], 2), args, None, compare, None)
    assert [(d.entry.name, d.status, d.error) for d in found] == [("broken", 3, "KeyError: 'no such thing'"), ("fine", 0, None)]


@pytest.mark.parametrize("how", ["one pair", "--config"])
def test_an_interrupt_cancels_the_running_queries(world, mariadb, how):
    """Ctrl-C during a pass: the command ends with status 130 at once, and the server runs none of its queries,
    whether it compares one pair or many (whose passes run in threads of their own)."""
    with mariadb.connect() as conn, conn.cursor() as cursor:
        cursor.execute("CREATE OR REPLACE VIEW endless AS SELECT CAST(a.id * 10000000 + b.seq AS SIGNED) AS id "
                       "FROM orders AS a CROSS JOIN seq_1_to_5000000 AS b")  # fmt: skip
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    source, target = world["mysql"] + "?table=endless", str(world["root"] / "products.parquet")
    if how == "one pair":
        command = [source, target, "--key", "id"]
    else:
        config = world["root"] / "endless.toml"
        config.write_text(f'[[tables]]\nsource = "{source}"\ntarget = "{target}"\nkey = "id"\n'
                          f'[[tables]]\nname = "again"\nsource = "{source}"\ntarget = "{target}"\nkey = "id"\n')  # fmt: skip
        command = ["--config", str(config)]
    process = subprocess.Popen(
        [sys.executable, "-m", "hashexpr", "reconcile", *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert "comparing 0 columns" not in process.stderr.readline()  # the first progress line: it has started
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _running(mariadb):
            time.sleep(0.2)
        assert _running(mariadb), "the pass never reached the server"
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = process.communicate(timeout=60)
        assert process.returncode == 130, err
        assert time.monotonic() - started < 15
    finally:
        if process.poll() is None:
            process.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _running(mariadb):
        time.sleep(0.2)
    assert not _running(mariadb)


def _running(mariadb) -> bool:
    with mariadb.connect() as conn, conn.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'hx' AND INFO LIKE '%endless%'")
        return cursor.fetchone()[0] > 0
