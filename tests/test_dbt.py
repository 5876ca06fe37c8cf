"""The dbt package (integrations/dbt) with real dbt: its Data Vault example built on DuckDB and on PostgreSQL.

dbt lives in a virtualenv of its own (``.venv-dbt``, made by ``make dbt-venv``: dbt-core 1.11 needs a protobuf
older than the one next to pyspark), so each dbt command is a process. The example's hub and satellite are
checked three ways: the compiled SQL is, byte for byte, what hashexpr.sql writes for the same columns and types;
dbt's own data tests pass (one hub row per key, the satellite's keys in the hub); and the keys and hash diffs in
the engine are the bytes that the jar's ``record_key``/``record_hash`` with ``algorithm="sha256"`` give in Spark
for the rows dbt loaded. Each engine runs outside UTC.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import duckdb
import psycopg
import pytest
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

import hashexpr as hx
from hashexpr.sql import column, jinja, record_hash, record_key

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "integrations" / "dbt"
DBT = ROOT / ".venv-dbt" / "bin" / "dbt"
TIME_ZONES = {"duckdb": "America/New_York", "postgres": "Asia/Kolkata"}

# Processes of its own (dbt runs in .venv-dbt): make check leaves it out.
pytestmark = pytest.mark.slow

#: The seed's columns and the Spark types the macros read them as.
RAW = StructType([
    StructField("customer_code", StringType()), StructField("name", StringType()), StructField("email", StringType()),
    StructField("country", StringType()), StructField("balance", DecimalType(12, 2)),
    StructField("score", DoubleType()), StructField("visits", IntegerType()), StructField("signed_up", DateType()),
    StructField("updated_at", TimestampType()), StructField("active", BooleanType()),
])  # fmt: skip
ATTRIBUTES = [f.name for f in RAW.fields[1:]]
KEY = {"salt": "customer", "trim": True, "case": "upper"}
WEIRD = 'Code "A".b\'\\'


def test_generated_macros_are_up_to_date():
    """integrations/dbt/macros/generated is what hashexpr.sql.jinja writes (make dbt-macros)."""
    generated = PACKAGE / "macros" / "generated"
    expected = jinja.files()
    assert sorted(p.name for p in generated.iterdir()) == sorted(expected)
    for name, text in expected.items():
        assert (generated / name).read_text(encoding="utf-8") == text, f"{name}: run make dbt-macros"


def _dbt(folder: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DBT_VERSION_CHECK="false", **(env or {}))
    run = subprocess.run(
        [str(DBT), *args, "--profiles-dir", str(folder), "--project-dir", str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if check:
        assert run.returncode == 0, (args, run.stdout[-6000:], run.stderr[-2000:])
    return run


def _git(folder: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory, postgres):
    """The example as its README runs it: the package copied with its example, in a git repository of its own;
    profiles.example.yml as profiles.yml; dbt deps. The targets read libpq's variables (PGHOST, ...) and TZ."""
    if not DBT.exists():
        pytest.fail(f"{DBT} is missing: make dbt-venv makes it (make test does)")
    package = tmp_path_factory.mktemp("dbt") / "dbt"
    shutil.copytree(PACKAGE, package)
    _git(package, "init", "-q")
    _git(package, "add", "-A")
    _git(package, "commit", "-q", "-m", "the package as committed")
    folder = package / "example"
    shutil.copy(folder / "profiles.example.yml", folder / "profiles.yml")
    with psycopg.connect(postgres.dsn, autocommit=True) as connection:
        connection.execute("DROP DATABASE IF EXISTS vault")
        connection.execute("CREATE DATABASE vault")
        connection.execute(f"ALTER DATABASE vault SET timezone TO '{TIME_ZONES['postgres']}'")
    _dbt(folder, "deps")
    return folder


def _environment(target: str, postgres) -> dict[str, str]:
    """What a target's dbt commands find in their environment: profiles.example.yml reads it."""
    if target == "duckdb":
        return {"TZ": TIME_ZONES["duckdb"]}
    return {
        "PGHOST": "127.0.0.1", "PGPORT": str(postgres.port), "PGUSER": postgres.user, "PGPASSWORD": "",
        "PGDATABASE": "vault",
    }  # fmt: skip


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def vault(request, project, postgres):
    """``dbt build`` on one target; the engine's rows of the seed, the hub, the satellite and weird_names."""
    target = request.param
    _dbt(project, "build", "--target", target, env=_environment(target, postgres))
    queries = {
        "raw": f"SELECT {', '.join(f.name for f in RAW.fields)} FROM raw_customers",
        "hub": "SELECT hk_customer, customer_code FROM hub_customer",
        "sat": "SELECT hk_customer, hash_diff, customer_code FROM sat_customer",
        "weird": "SELECT k, h FROM weird_names",
    }
    if target == "duckdb":
        with duckdb.connect(str(project / "vault.duckdb"), read_only=True) as connection:
            rows = {name: connection.execute(q).fetchall() for name, q in queries.items()}
    else:
        dsn = postgres.dsn.replace("dbname=postgres", "dbname=vault")
        with psycopg.connect(dsn, options="-c search_path=analytics") as connection:
            rows = {name: connection.execute(q).fetchall() for name, q in queries.items()}
    rows = {name: [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in r] for name, r in rows.items()}
    return target, rows


@pytest.fixture(scope="module")
def jar(spark, vault):
    """The jar's keys and row hashes (SHA-256) of the rows dbt loaded, per row, in Spark."""
    _, rows = vault
    df = spark.createDataFrame(rows["raw"], RAW)
    keyed = df.select(
        "customer_code",
        hx.record_key("customer_code", **KEY, algorithm="sha256").alias("hk"),
        hx.record_hash(*ATTRIBUTES, algorithm="sha256").alias("diff"),
        hx.record_key("customer_code", trim=True, case="upper", null_key="null", algorithm="sha256").alias("k"),
        hx.record_hash("customer_code", "visits", algorithm="sha256").alias("h"),
    )
    return [tuple(bytes(v) if isinstance(v, (bytes, bytearray)) else v for v in row) for row in keyed.collect()]


def test_the_compiled_sql_is_hashexpr_sql(vault, project):
    target, _ = vault
    compiled = project / "target" / "compiled" / "hashexpr_example" / "models"
    types = {f.name: f.dataType for f in RAW.fields}
    key = record_key([(column("customer_code"), "string")], dialect=target, **KEY)
    diff = record_hash([(column(name), types[name]) for name in ATTRIBUTES], dialect=target)
    hub = (compiled / "hub_customer.sql").read_text(encoding="utf-8")
    sat = (compiled / "sat_customer.sql").read_text(encoding="utf-8")
    weird = (compiled / "weird_names.sql").read_text(encoding="utf-8")
    assert f"select distinct\n    {key} as hk_customer," in hub
    assert f"{key} as hk_customer,\n    {diff} as hash_diff," in sat
    weird_key = record_key([(column(WEIRD), "string")], dialect=target, trim=True, case="upper", null_key="null")
    weird_hash = record_hash([(column(WEIRD), "string"), (column("Visits"), "int")], dialect=target)
    assert f"{weird_key} as k,\n    {weird_hash} as h" in weird


def test_the_keys_are_the_jars(vault, jar):
    """Every satellite row's key and hash diff, and every hub key, are the jar's bytes for that row."""
    _, rows = vault
    assert len(rows["raw"]) == 6 and len(rows["sat"]) == 6
    assert Counter((code, hk, diff) for hk, diff, code in rows["sat"]) == Counter(
        (code, hk, diff) for code, hk, diff, _, _ in jar
    )
    # c-001 and C-001 are one business key: five hub rows.
    assert sorted(rows["hub"]) == sorted({(hk, code.strip().upper()) for code, hk, _, _, _ in jar})
    assert len(rows["hub"]) == 5
    assert Counter(rows["weird"]) == Counter((k, h) for _, _, _, k, h in jar)


def test_what_the_example_makes_is_ignored_by_git(vault, project):
    """After deps and a build on each target, the example's folder holds nothing git would pick up."""
    assert _git(project, "status", "--porcelain", "--untracked-files=all", ".") == ""
    made = {p.name for p in project.iterdir()}
    assert {"dbt_packages", "logs", "target", "profiles.yml", "vault.duckdb"} <= made


def test_a_missing_column_is_named(project):
    """A name the relation does not have fails the compilation, naming the macro, the column and the columns."""
    sql = "select {{ hashexpr.record_key(['nope'], relation=ref('raw_customers')) }}"
    run = _dbt(project, "compile", "--target", "duckdb", "--inline", sql, check=False)
    assert run.returncode != 0
    assert "hashexpr.record_key" in run.stdout and "no column called 'nope'" in run.stdout
    assert "its columns: customer_code, name" in run.stdout


#: record_key and record_hash with types given, as a model would write them for Spark (names needing quotes).
SPARK_MACROS = (
    "{{ hashexpr.record_key([{'name': 'Code \"A\".b\\'\\\\', 'type': 'string'}, {'name': 'n', 'type': "
    "'decimal(20,4)'}], salt=\"s'1\", trim=true, case='lower', null_key='error') }}\n"
    "{{ hashexpr.record_hash([{'name': 'ts', 'type': 'timestamp'}, {'name': 'd', 'type': 'double'}, "
    "{'name': 'v', 'type': 'varchar(5)'}]) }}"
)


@pytest.fixture(scope="module")
def spark_sql(project):
    """The two macros compiled for Spark: the jar's functions (native) and the spark dialect's SQL."""
    compiled = {}
    for dialect in ("native", "spark"):
        run = _dbt(project, "compile", "--target", "duckdb", "--quiet", "--inline", SPARK_MACROS,
                   "--vars", json.dumps({"hashexpr_dialect": dialect}))  # fmt: skip
        compiled[dialect] = run.stdout.strip().splitlines()[-2:]
    return compiled


def test_spark_sql_is_hashexpr_sql(spark_sql):
    """On Spark the macros write the jar's call as hashexpr.jar_sql does, or the spark dialect's SQL."""
    from hashexpr.jar_sql import call
    from hashexpr.options import KeyOptions, hash_options

    key_columns = [(column(WEIRD), "string"), (column("n"), "decimal(20,4)")]
    options = {"salt": "s'1", "trim": True, "case": "lower", "null_key": "error"}
    hash_columns = [(column("ts"), "timestamp"), (column("d"), "double"), (column("v"), "varchar(5)")]
    assert spark_sql["spark"] == [
        record_key(key_columns, dialect="spark", **options),
        record_hash(hash_columns, dialect="spark"),
    ]
    quoted = ["`Code \"A\".b'\\`", "`n`"]
    assert spark_sql["native"] == [
        call(
            "record_key",
            quoted,
            "; ".join([*KeyOptions.of("s'1", True, "lower", False, "error").items, *hash_options("sha256", None)]),
        ),
        call("record_hash", ["`ts`", "`d`", "`v`"], "algorithm=sha256"),
    ]


def test_spark_sql_runs_like_the_jar(spark_sql, spark):
    """Both texts give the same bytes in Spark, and an all-NULL key fails the query under null_key=error."""
    row = (
        "SELECT ' Ab ' AS `Code \"A\".b'\\`, CAST(12.5000 AS DECIMAL(20,4)) AS n, timestamp_micros(-1) AS ts, "
        "CAST(-0.0 AS DOUBLE) AS d, CAST('xy' AS STRING) AS v"
    )
    got = {
        dialect: spark.sql(f"SELECT {', '.join(texts)} FROM ({row})").first()
        for dialect, texts in spark_sql.items()
    }
    assert got["native"] == got["spark"] and all(len(bytes(v)) == 32 for v in got["spark"])
    nulls = row.replace("' Ab '", "CAST(NULL AS STRING)").replace("CAST(12.5000 AS DECIMAL(20,4))", "CAST(NULL AS DECIMAL(20,4))")
    for texts in spark_sql.values():
        with pytest.raises(Exception, match="every key part is NULL"):
            spark.sql(f"SELECT {texts[0]} FROM ({nulls})").collect()
