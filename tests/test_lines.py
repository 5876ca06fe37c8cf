"""The same bytes and the same features on every Spark line, on whichever pyspark runs this file.

``make test`` runs it with the pinned pyspark and again in each other line's virtualenv (``spark-lines/``): every
frozen vector through SQL and through the Python API in each execution mode, fingerprints, diff, collisions,
metadata columns, persistent views and the command line. Vectors of types a line lacks (collated strings before
Spark 4.0) are absent there, never changed.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import ok, run
from pyspark.sql import functions as F
from spark_conf import FOLDING_RULES, spark_conf
from spark_lines import PINNED_LINE

import hashexpr as hx
from hashexpr.jar import running_spark

# Processes of its own (other jars' sessions; this file is every other line's smoke suite): make check leaves it
# out.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
LINE, SCALA = running_spark()
COLLATIONS = tuple(map(int, LINE.split("."))) >= (4, 0)

MODES = {
    "interpreted": {"spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.codegen.wholeStage": "false"},
    "codegen": {"spark.sql.codegen.factoryMode": "CODEGEN_ONLY", "spark.sql.codegen.wholeStage": "true"},
    "codegen-no-whole-stage": {
        "spark.sql.codegen.factoryMode": "CODEGEN_ONLY",
        "spark.sql.codegen.wholeStage": "false",
    },
}


def _vectors(name: str) -> list[dict]:
    document = json.loads((ROOT / "spec" / name).read_text(encoding="utf-8"))
    assert document["format_version"] == hx.FORMAT_VERSION
    return document["vectors"]


def _on_this_line(vector: dict) -> bool:
    return COLLATIONS or "collate" not in json.dumps(vector).lower()


VECTORS = _vectors("vectors-v1.json")
KEY_VECTORS = _vectors("key-vectors-v1.json")
BY_NAME_VECTORS = _vectors("by-name-vectors-v1.json")
FINGERPRINT_VECTORS = _vectors("fingerprint-vectors-v1.json")


def _in_mode(spark, mode: str):
    return spark_conf(spark, {**MODES[mode], "spark.sql.optimizer.excludedRules": FOLDING_RULES})


def test_the_session_runs_the_jar_of_its_line(spark):
    assert spark.version.startswith(LINE + ".")
    jar = spark.conf.get("spark.jars")
    assert Path(jar).name == f"hashexpr-spark{LINE}_{SCALA}.jar"
    expected_scala = "2.12" if LINE == "3.5" else "2.13"
    assert SCALA == expected_scala


def test_only_collated_vectors_are_absent():
    every = VECTORS + KEY_VECTORS + BY_NAME_VECTORS + FINGERPRINT_VECTORS
    absent = [v["name"] for v in every if not _on_this_line(v)]
    assert (absent == []) == COLLATIONS
    # The vectors with a collated string somewhere in their arguments: 14 of the 434.
    assert COLLATIONS or len(absent) == 14, absent


@pytest.mark.parametrize("mode", MODES)
def test_record_hash_vectors_through_sql_and_python(spark, mode):
    vectors = [v for v in VECTORS if _on_this_line(v)]
    assert len(vectors) >= 80
    sql = ", ".join(
        f"hex(record_hash({', '.join(a['sql'] for a in v['args'])})) AS v{i}" for i, v in enumerate(vectors)
    )
    api = [
        F.hex(hx.record_hash(*[F.expr(a["sql"]) for a in v["args"]])).alias(f"v{i}")
        for i, v in enumerate(vectors)
    ]
    with _in_mode(spark, mode):
        through_sql = spark.sql(f"SELECT {sql}").collect()[0]
        through_api = spark.range(1).select(*api).collect()[0]
    for i, vector in enumerate(vectors):
        assert through_sql[i].lower() == vector["hex"], (vector["name"], "SQL")
        assert through_api[i].lower() == vector["hex"], (vector["name"], "hx.record_hash")


@pytest.mark.parametrize("mode", MODES)
def test_key_vectors_through_sql_and_python(spark, mode):
    vectors = [v for v in KEY_VECTORS if _on_this_line(v) and "error" not in v]
    assert len(vectors) >= 100
    sql = ", ".join(
        f"hex(record_key_with('{v['key_options']}', {', '.join(a['sql'] for a in v['args'])})) AS v{i}"
        for i, v in enumerate(vectors)
    )
    plain = [(i, v) for i, v in enumerate(vectors) if not v["key_options"]]
    api = [F.hex(hx.record_key(*[F.expr(a["sql"]) for a in v["args"]])).alias(f"k{i}") for i, v in plain]
    with _in_mode(spark, mode):
        through_sql = spark.sql(f"SELECT {sql}").collect()[0]
        through_api = spark.range(1).select(*api).collect()[0]
    for i, vector in enumerate(vectors):
        assert (through_sql[i] or "").lower() == (vector["hex"] or ""), (vector["name"], "SQL")
    for j, (_, vector) in enumerate(plain):
        assert through_api[j].lower() == vector["hex"], (vector["name"], "hx.record_key")


@pytest.mark.parametrize("mode", MODES)
def test_by_name_vectors(spark, mode):
    vectors = [v for v in BY_NAME_VECTORS if _on_this_line(v)]
    assert len(vectors) >= 30
    with _in_mode(spark, mode):
        for vector in vectors:
            columns = ", ".join(f"{a['sql']} AS `{a['name'].replace('`', '``')}`" for a in vector["args"])
            df = spark.sql(f"SELECT {columns}")
            got = df.select(F.hex(hx.record_hash("*", by_name=True))).collect()[0][0]
            assert got.lower() == vector["hex"], vector["name"]


@pytest.mark.parametrize("mode", MODES)
def test_fingerprint_vectors(spark, mode):
    vectors = [v for v in FINGERPRINT_VECTORS if _on_this_line(v)]
    assert len(vectors) >= 10
    with _in_mode(spark, mode):
        for vector in vectors:
            df = spark.sql(vector["sql"])
            assert hx.dataset_fingerprint(df) == vector["fingerprint"], vector["name"]
            sql = spark.sql(f"SELECT dataset_fingerprint(*) FROM ({vector['sql']})").collect()[0][0]
            assert sql == vector["fingerprint"], vector["name"]


def test_fingerprint_with_group_by_filter_and_over(spark):
    df = spark.range(100).selectExpr("id % 3 AS g", "id", "CAST(id AS STRING) AS s")
    df.createOrReplaceTempView("lines_t")
    by_group = {
        r.g: r.f
        for r in spark.sql("SELECT g, dataset_fingerprint(id, s) AS f FROM lines_t GROUP BY g").collect()
    }
    for g, fingerprint in by_group.items():
        assert hx.dataset_fingerprint(df.where(F.col("g") == g).select("id", "s")) == fingerprint
    filtered = spark.sql("SELECT dataset_fingerprint(id, s) FILTER (WHERE g = 1) FROM lines_t").collect()[0][
        0
    ]
    assert filtered == by_group[1]
    over = spark.sql("SELECT DISTINCT g, dataset_fingerprint(id, s) OVER (PARTITION BY g) AS f FROM lines_t")
    assert {r.g: r.f for r in over.collect()} == by_group
    by = {r.g: r.fingerprint for r in hx.fingerprints_by(df.select("g", "id", "s"), "g").collect()}
    assert set(by) == {0, 1, 2}


def test_diff_and_diff_buckets(spark):
    old = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c"), (4, None)], "id INT, v STRING")
    new = spark.createDataFrame([(1, "a"), (2, "B"), (4, None), (5, "e")], "id INT, v STRING")
    changes = {r.id: r.change for r in hx.diff(old, new, key="id").collect()}
    assert changes == {2: "update", 3: "delete", 5: "insert"}
    counts = hx.summarize(hx.diff(old, new, key="id"))
    assert counts == {"insert": 1, "update": 1, "delete": 1, "duplicate_key": 0, "null_key": 0}
    differing = spark.sql(
        "SELECT diff_buckets(side, id % 2, 2, record_hash(id, v)).differing_buckets "
        "FROM VALUES (0, 1, 'a'), (1, 1, 'a'), (0, 2, 'b'), (1, 2, 'B') AS t(side, id, v)"
    ).collect()[0][0]
    assert list(differing) == [0]


def test_collisions(spark):
    hub = spark.createDataFrame(
        [("k1", bytes(16)), ("k2", bytes(16)), ("k3", bytes([1] * 16))], "bk STRING, hk BINARY"
    )
    found = hx.find_collisions(hub, "bk", hash_col="hk").collect()
    assert [(r.kind, [b.bk for b in r.business_keys], r.rows) for r in found] == [
        ("collision", ["k1", "k2"], 2)
    ]
    assert hx.find_collisions(hub.select("bk"), "bk").count() == 0


def test_metadata_columns(spark, tmp_path):
    source = tmp_path / "in.parquet"
    spark.range(5).selectExpr("id", "CAST(id AS STRING) AS s").write.parquet(str(source))
    df = hx.with_metadata(spark.read.parquet(str(source)), "id", commit_time="2024-01-02T03:04:05Z")
    rows = df.orderBy("id").collect()
    assert len(rows) == 5 and all(
        r._hx_record_key is not None and r._hx_record_hash is not None for r in rows
    )
    assert all(r._hx_source_file.endswith(".parquet") for r in rows)
    assert rows[0]._hx_commit_time == datetime.datetime(2024, 1, 2, 3, 4, 5)


def test_persistent_view_and_describe_function(spark):
    spark.sql("DROP VIEW IF EXISTS default.lines_view")
    spark.sql("DROP TABLE IF EXISTS default.lines_base")
    try:
        spark.range(4).selectExpr("id", "CAST(id AS STRING) AS s").write.saveAsTable("default.lines_base")
        spark.sql("CREATE VIEW default.lines_view AS SELECT id, record_hash(*) AS h FROM default.lines_base")
        view = spark.sql("SELECT hex(h) FROM default.lines_view ORDER BY id").collect()
        direct = spark.sql("SELECT hex(record_hash(*)) FROM default.lines_base ORDER BY id").collect()
        assert view == direct and len(view) == 4
    finally:
        spark.sql("DROP VIEW IF EXISTS default.lines_view")
        spark.sql("DROP TABLE IF EXISTS default.lines_base")
    text = "\n".join(r[0] for r in spark.sql("DESCRIBE FUNCTION EXTENDED record_hash").collect())
    assert "Class: io.hashexpr.RecordHash" in text and "Examples:" in text


def test_cli_hash_and_fingerprint(spark, tmp_path, monkeypatch):
    source = tmp_path / "in.csv"
    source.write_text("id,name\n1,a\n2,\n3,c\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "hashed.parquet"
    assert ok(run(spark, "hash", "in.csv", "--out", "hashed.parquet")) and out.is_dir()
    hashed = spark.read.parquet(str(out))
    assert hashed.selectExpr("record_hash = record_hash(id, name)").collect() == [(True,)] * 3
    fingerprint = ok(run(spark, "fingerprint", "in.csv")).split()[0]
    assert fingerprint == hx.dataset_fingerprint(spark.read.csv(str(source), header=True, inferSchema=True))


_WRONG_JAR_SCRIPT = """
import sys
from pyspark.sql import SparkSession
builder = SparkSession.builder.master("local[1]").config("spark.jars", sys.argv[1]).config("spark.ui.enabled", "false")
if sys.argv[2] == "named":
    builder = builder.config("spark.sql.extensions", "io.hashexpr.HashExprExtensions")
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
for query in ("SELECT record_hash(1)", "SELECT dataset_fingerprint(id) FROM range(3)"):
    try:
        spark.sql(query).collect()
        print("RAN", query)
    except Exception as exc:
        print(type(exc).__name__, str(exc).splitlines()[0])
"""


def _other_line_jars() -> list[str]:
    """Jars of other lines: the 3.5/2.12 jar on 4.x (another Scala), a 4.x jar on 3.5, a neighbouring 4.x jar."""
    ours = f"hashexpr-spark{LINE}_{SCALA}.jar"
    picks = [("4.3", "2.13"), ("3.5", "2.12") if LINE != "3.5" else ("3.5", "2.13")]
    picks.append(("4.1", "2.13") if LINE != "4.1" else ("4.2", "2.13"))
    return [hx.jar_path(spark=s, scala=c) for s, c in picks if f"hashexpr-spark{s}_{c}.jar" != ours]


# How the session meets the jar: named in spark.sql.extensions (as hx.configure does), or found by Spark's
# ServiceLoader with nothing but spark.jars (which PySpark 3.5's session does not consult for spark.jars).
_HOW = ["named"] if LINE == "3.5" else ["named", "service"]
# Every case on the pinned line; one jar, one way on the others (their suite runs in CI's time budget).
_PINNED = LINE == PINNED_LINE


_WRONG = [(jar, how) for jar in (_other_line_jars() if _PINNED else _other_line_jars()[:1])
          for how in (_HOW if _PINNED else _HOW[:1])]  # fmt: skip


@pytest.fixture(scope="module")
def wrong_jar_runs() -> dict[tuple[str, str], subprocess.CompletedProcess]:
    """Each wrong jar, each way, in a session of its own: the processes start together."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    started = {
        case: subprocess.Popen(
            [sys.executable, "-c", _WRONG_JAR_SCRIPT, *case],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for case in _WRONG
    }
    done = {}
    for case, process in started.items():
        stdout, stderr = process.communicate(timeout=600)
        done[case] = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    return done


@pytest.mark.parametrize(("jar", "how"), _WRONG, ids=lambda v: Path(v).name if v.endswith(".jar") else v)
def test_a_wrong_jar_fails_at_the_first_call_naming_the_right_one(wrong_jar_runs, jar, how):
    run = wrong_jar_runs[(jar, how)]
    assert run.returncode == 0, run.stderr[-3000:]
    import pyspark

    lines = run.stdout.strip().splitlines()
    assert len(lines) == 2, run.stdout
    classes = {"record_hash": "RecordHash", "dataset_fingerprint": "DatasetFingerprint"}
    for line, function in zip(lines, classes):
        assert line.startswith(
            f"AnalysisException [CANNOT_LOAD_FUNCTION_CLASS] Cannot load class io.hashexpr.{classes[function]} "
            f"when registering the function `{function}`: this hashexpr jar ({Path(jar).name}) is built for Spark"
        ), line
        assert f"this session runs Spark {pyspark.__version__} with Scala {SCALA}." in line
        assert f"Use hashexpr-spark{LINE}_{SCALA}.jar instead" in line
        assert (
            f"(the Maven artifact io.hashexpr:hashexpr-spark{LINE}_{SCALA}; "
            f"`hashexpr jar --spark {LINE} --scala {SCALA}` prints its path;"
        ) in line
    # Said once more when the session starts, in Spark's log.
    assert f"this hashexpr jar ({Path(jar).name}) is built for Spark" in run.stderr
    assert "NoSuchMethodError" not in run.stderr + run.stdout and "NoClassDefFoundError" not in run.stderr
