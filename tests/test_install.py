"""hashexpr installed where its users run it, each in a fresh virtualenv from ``make dist``'s platform wheel, with
no checkout on the path (docs/PYTHON.md, "Installing"):

- **the wheel alone**: no PySpark or py4j comes with it; the Arrow engine, ``hashexpr.sql`` and the command line's
  hash, fingerprint, diff and collisions on Parquet files run, and with the ``reconcile`` extra (still no PySpark)
  reconcile between Parquet and DuckDB; a Spark function says what to install, in one line;
- **a runtime's PySpark** (a Databricks runtime ships PySpark as files on the interpreter's path, not as a
  distribution): pip leaves it alone, and the jar's route gives the golden vectors;
- **Spark Connect's own client** (``pyspark-client``, which brings its own ``pyspark`` package): no second ``pyspark``
  distribution comes with hashexpr, and against a Spark Connect server started without the jar the Python API gives
  the jar's bytes (its Arrow path).

The virtualenvs share pip's cache; the Connect server starts while they install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from servers import SHORT_LIVED_JVM, connect_server

from hashexpr.jar import jar_name

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
WHEELS = sorted(DIST.glob(f"hashexpr-{VERSION}-cp310-abi3-*.whl"))
VECTORS = json.loads((ROOT / "spec" / "vectors-v1.json").read_text(encoding="utf-8"))["vectors"]
KEYS = json.loads((ROOT / "spec" / "key-vectors-v1.json").read_text(encoding="utf-8"))["vectors"]
FINGERPRINTS = json.loads((ROOT / "spec" / "fingerprint-vectors-v1.json").read_text(encoding="utf-8"))["vectors"]
# Vectors every route hashes (no collations, which need Spark 4.0 on the client too; no intervals, which the
# Arrow path refuses); a few dozen keep the run short.
PLAIN = [v for v in VECTORS if not any(w in json.dumps(v).lower() for w in ("collate", "interval"))][:40]
PLAIN_KEYS = [v for v in KEYS if not v["options"] and not v["key_options"]][:10]
FINGERPRINT = [v for v in FINGERPRINTS if "collate" not in json.dumps(v).lower()][-1]
# Spark Connect's Python client, without the classic PySpark: its newest release (its line is 4.2, the server's
# the pinned one; an older client against a newer server is what managed services run).
PYSPARK_CLIENT = "pyspark-client==4.2.0"

pytestmark = pytest.mark.slow


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(args, check=False, capture_output=True, text=True, timeout=900, **kwargs)
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done


def _environment(**extra: str) -> dict[str, str]:
    """This process's environment without what points at the checkout or at a Spark."""
    drop = ("PYTHONPATH", "SPARK_HOME", "VIRTUAL_ENV", "PYSPARK_PYTHON", "SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env.update(extra)
    return env


def _venv(where: Path, *requirements: str) -> Path:
    """A fresh virtualenv at ``where`` with ``requirements`` installed by pip; its python."""
    _run([sys.executable, "-m", "venv", str(where)])
    python = where / "bin" / "python"
    if requirements:
        _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements])
    return python


def _distributions(python: Path) -> dict[str, str]:
    listed = _run([str(python), "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"]).stdout
    return {d["name"].lower(): d["version"] for d in json.loads(listed)}


def _site_packages(python: Path) -> Path:
    return Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())


def _megabytes(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


@pytest.fixture(scope="module")
def wheel() -> Path:
    if len(WHEELS) != 1:
        pytest.fail(f"dist/ holds {len(WHEELS)} hashexpr-{VERSION} platform wheels, not one: `make dist` builds it")
    return WHEELS[0]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Parquet files and a DuckDB database for the command line: two snapshots of a table and a hub."""
    import duckdb

    where = tmp_path_factory.mktemp("install-data")
    old = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "v": ["a", "b", "c"]})
    new = pa.table({"id": pa.array([1, 2, 4], pa.int32()), "v": ["a", "B", "d"]})
    pq.write_table(old, where / "old.parquet")
    pq.write_table(new, where / "new.parquet")
    with duckdb.connect(str(where / "copy.duckdb")) as con:
        con.register("new_rows", new)
        con.execute("CREATE TABLE t AS SELECT * FROM new_rows")
    from deltalake import write_deltalake

    write_deltalake(str(where / "lake"), new)
    return where


def test_the_wheel_alone_runs_everything_but_spark(wheel, data, tmp_path):
    python = _venv(tmp_path / "venv", str(wheel))
    installed = _distributions(python)
    assert "pyspark" not in installed and "py4j" not in installed, installed
    assert set(installed) >= {"hashexpr", "mmh3", "pyarrow"}
    size = _megabytes(_site_packages(python))
    cli = str(python.parent / "hashexpr")
    env = _environment(JAVA_HOME=str(tmp_path / "no-java"))
    work = tmp_path / "work"
    work.mkdir()
    script = work / "uses.py"
    script.write_text(
        "import json, sys, time\n"
        "started = time.perf_counter()\n"
        "import hashexpr as hx, hashexpr.arrow as hxa\n"
        "seconds = time.perf_counter() - started\n"
        "import pyarrow as pa\n"
        "from hashexpr import sql as hsql\n"
        "h = hxa.record_hash(pa.table({'id': pa.array([1], pa.int32()), 'name': ['a']}))[0].as_py().hex()\n"
        "spark_loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j'))\n"
        "print(json.dumps({'hash': h, 'sql': hsql.record_hash([('id', 'int')], dialect='postgres')[:7],\n"
        "                  'spark_loaded': spark_loaded, 'import_seconds': seconds}))\n"
    )
    used = json.loads(_run([str(python), str(script)], cwd=work, env=env).stdout)
    assert used["hash"] == "bb9718ed625b2fc5763e75f3abfd7c5a" and used["sql"] == "sha256("
    assert used["spark_loaded"] == []
    # The command line on Parquet files: the Arrow engine, no JVM (there is no Java here).
    old, new = str(data / "old.parquet"), str(data / "new.parquet")
    for args, status in (
        (["hash", old, "--out", str(work / "hashed.parquet"), "--key", "id", "--json"], 0),
        (["fingerprint", old, "--json"], 0),
        (["diff", old, new, "--key", "id", "--json", "--exit-code"], 1),
        (["collisions", old, "--key", "id", "--json"], 0),
    ):
        done = subprocess.run([cli, *args], check=False, capture_output=True, text=True, cwd=work, env=env)
        assert done.returncode == status, (args, done.stderr)
        assert json.loads(done.stdout)["engine"] == "arrow", args
    # What needs Spark says what to install: one line from the command line, one error from Python.
    spark_table = subprocess.run([cli, "fingerprint", "--table", "db.t"], check=False, capture_output=True,
                                 text=True, cwd=work, env=env)  # fmt: skip
    assert spark_table.returncode == 2 and spark_table.stderr.count("\n") == 1, spark_table.stderr
    assert 'needs PySpark, which is not installed: pip install "hashexpr[spark]"' in spark_table.stderr
    called = subprocess.run([str(python), "-c", "import hashexpr as hx; hx.record_hash('id')"], check=False,
                            capture_output=True, text=True, cwd=work, env=env)  # fmt: skip
    assert called.returncode == 1
    assert called.stderr.strip().splitlines()[-1] == (
        'hashexpr.errors.PySparkMissingError: hx.record_hash needs PySpark, which is not installed: pip install '
        '"hashexpr[spark]", or run it where the platform gives PySpark (a Databricks runtime, databricks-connect, '
        "pyspark-client, EMR, Glue, Dataproc, Fabric)"
    )
    assert called.stderr.count('File "') == 2, called.stderr  # the caller's line and the one that raises
    # hashexpr.reconcile without its extra names the extra to install, in one line.
    bare = subprocess.run([cli, "reconcile", old, new, "--key", "id"], check=False, capture_output=True, text=True,
                          cwd=work, env=env)  # fmt: skip
    assert bare.returncode == 2 and bare.stderr.strip().endswith('pip install "hashexpr[reconcile]"'), bare.stderr
    # The reconcile extra adds psycopg, DuckDB, PyMySQL, delta-rs and numpy, and still no PySpark.
    _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{wheel}[reconcile]"])
    installed = _distributions(python)
    assert "pyspark" not in installed and {"duckdb", "numpy", "psycopg", "pymysql", "deltalake"} <= set(installed), installed
    with_reconcile = _megabytes(_site_packages(python))
    done = subprocess.run([cli, "reconcile", old, f"duckdb:{data / 'copy.duckdb'}?table=t", "--key", "id", "--json"],
                          check=False, capture_output=True, text=True, cwd=work, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"] | {} == {
        "inserted": 1, "deleted": 1, "updated": 1, "unchanged": 1, "duplicate_key": 0, "null_key": 0,
        "columns_only_in_source": 0, "columns_only_in_target": 0,
    }  # fmt: skip
    # A Delta table without Spark: delta-rs reads it.
    lake = subprocess.run([cli, "reconcile", str(data / "lake"), new, "--key", "id", "--json"], check=False,
                          capture_output=True, text=True, cwd=work, env=env)  # fmt: skip
    assert lake.returncode == 0 and json.loads(lake.stdout)["counts"]["unchanged"] == 3, lake.stderr
    spark_side = subprocess.run([cli, "reconcile", old, "spark:db.t", "--key", "id"], check=False,
                                capture_output=True, text=True, cwd=work, env=env)  # fmt: skip
    assert spark_side.returncode == 2 and "needs PySpark" in spark_side.stderr, spark_side.stderr
    print(f"installed: the wheel alone {size:.0f} MB, with [reconcile] {with_reconcile:.0f} MB; "
          f"import hashexpr, hashexpr.arrow {used['import_seconds']:.2f} s")  # fmt: skip


_VECTORS_SCRIPT = r"""
import json, subprocess, sys
import hashexpr as hx
import pyspark
from pyspark.sql import SparkSession, functions as F

vectors = json.loads(sys.argv[1])
spark = hx.configure(SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
row = spark.range(1).select(
    *[F.hex(hx.record_hash(*[F.expr(a) for a in args])).alias(f"v{i}") for i, args in enumerate(vectors)]
).first()
cli = subprocess.run([sys.executable, "-m", "hashexpr", "jar"], capture_output=True, text=True, check=True)
print(json.dumps({"pyspark": pyspark.__file__, "engine": hx.engine(spark), "jar": hx.jar_path(),
                  "cli_jar": cli.stdout.strip(), "hashes": [h.lower() for h in row]}))
"""


def test_a_runtimes_pyspark_on_the_path_is_left_alone_and_runs_the_jar(wheel, tmp_path):
    """PySpark and py4j importable through a .pth file only, as a Databricks runtime has them: installing the
    wheel installs no PySpark over them, and hx.configure loads the jar their version needs."""
    import py4j
    import pyspark

    runtime = tmp_path / "runtime"
    runtime.mkdir()
    for package in (pyspark, py4j):
        (runtime / package.__name__).symlink_to(Path(package.__file__).parent)
    python = _venv(tmp_path / "venv")
    (_site_packages(python) / "runtime.pth").write_text(f"{runtime}\n")
    _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)])
    installed = _distributions(python)
    assert "pyspark" not in installed and "py4j" not in installed and "hashexpr" in installed, installed
    vectors = json.dumps([[a["sql"] for a in v["args"]] for v in PLAIN])
    work = tmp_path / "work"
    work.mkdir()
    result = json.loads(_run([str(python), "-c", _VECTORS_SCRIPT, vectors], cwd=work, env=_environment()).stdout
                        .strip().splitlines()[-1])  # fmt: skip
    assert result["pyspark"].startswith(str(runtime))
    assert result["engine"] == "jar" and result["jar"] == result["cli_jar"]
    assert Path(result["jar"]).name == jar_name(".".join(pyspark.__version__.split(".")[:2]), "2.13")
    assert result["hashes"] == [v["hex"] for v in PLAIN]


_CONNECT_SCRIPT = r"""
import json, sys
import hashexpr as hx
from pyspark.sql import SparkSession, functions as F

url, vectors, keys, fingerprint_sql = sys.argv[1], *map(json.loads, sys.argv[2:4]), sys.argv[4]
spark = SparkSession.builder.remote(url).getOrCreate()
row = spark.range(1).select(
    *[F.hex(hx.record_hash(*[F.expr(a) for a in args])).alias(f"v{i}") for i, args in enumerate(vectors)],
    *[F.hex(hx.record_key(*[F.expr(a) for a in args])).alias(f"k{i}") for i, args in enumerate(keys)],
).first()
old = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id INT, v STRING")
new = spark.createDataFrame([(1, "a"), (2, "B"), (4, "d")], "id INT, v STRING")
print(json.dumps({
    "engine": hx.engine(spark), "server": spark.version,
    "hashes": [row[f"v{i}"].lower() for i in range(len(vectors))],
    "keys": [row[f"k{i}"].lower() for i in range(len(keys))],
    "fingerprint": hx.dataset_fingerprint(spark.sql(fingerprint_sql)),
    "diff": hx.summarize(hx.diff(old, new, "id")),
}))
spark.stop()
"""


def test_spark_connects_own_client_beside_the_wheel_against_a_server_without_the_jar(wheel, tmp_path):
    """pyspark-client brings the pyspark package; the wheel adds no pyspark distribution beside it, and its
    Python API computes the jar's bytes on a Spark Connect server that has no jar (the Arrow path)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The client installs while the server starts.
        client = pool.submit(_venv, tmp_path / "venv", str(wheel), PYSPARK_CLIENT)
        with connect_server(tmp_path / "logs", [], env=SHORT_LIVED_JVM) as server:
            python = client.result()
            installed = _distributions(python)
            assert "pyspark" not in installed and "pyspark-client" in installed, installed
            work = tmp_path / "work"
            work.mkdir()
            # A script file: PySpark's Connect client takes a `python -c` program for a doctest run.
            script = work / "connect.py"
            script.write_text(_CONNECT_SCRIPT)
            vectors = json.dumps([[a["sql"] for a in v["args"]] for v in PLAIN])
            keys = json.dumps([[a["sql"] for a in v["args"]] for v in PLAIN_KEYS])
            started = time.monotonic()
            done = _run([str(python), "-W", "ignore", str(script), server.url, vectors, keys, FINGERPRINT["sql"]],
                        cwd=work, env=_environment(HASHEXPR_ENGINE="arrow"))  # fmt: skip
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["engine"] == "arrow" and result["server"] == pytest.importorskip("pyspark").__version__
    assert result["hashes"] == [v["hex"] for v in PLAIN]
    assert result["keys"] == [v["hex"] for v in PLAIN_KEYS]
    assert result["fingerprint"] == FINGERPRINT["fingerprint"]
    assert result["diff"] == {"insert": 1, "update": 1, "delete": 1, "duplicate_key": 0, "null_key": 0}
    assert time.monotonic() - started < 600
    shutil.rmtree(tmp_path / "venv", ignore_errors=True)
