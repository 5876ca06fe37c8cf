"""The wheel as a user gets it: ``make dist``'s one wheel, installed into a fresh virtualenv of each Spark line
next to that line's newest pyspark, used with no checkout on the path. Hashes, fingerprints and diffs are the
same on every line (the frozen vectors' values).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from spark_lines import LINES, PINNED_LINE, pyspark_version

from hashexpr.jar import SPARK_LINES, jar_name

ROOT = Path(__file__).resolve().parents[1]
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
# One platform wheel: the jars and the Arrow engine's extension module (stable ABI, CPython 3.10 and later).
WHEELS = sorted((ROOT / "dist").glob(f"hashexpr-{VERSION}-cp310-abi3-*.whl"))
VECTORS = json.loads((ROOT / "spec" / "vectors-v1.json").read_text(encoding="utf-8"))["vectors"]
FINGERPRINTS = json.loads((ROOT / "spec" / "fingerprint-vectors-v1.json").read_text(encoding="utf-8"))[
    "vectors"
]
CHECKED = [v for v in VECTORS if "collate" not in json.dumps(v).lower()][:60]

# Processes of its own (the wheel in fresh virtualenvs): make check leaves it out.
pytestmark = pytest.mark.slow

# Run in the fresh virtualenv, from an empty directory: the installed package only.
_SCRIPT = r"""
import json, subprocess, sys
import hashexpr as hx
from pyspark.sql import SparkSession, functions as F

vectors, fingerprint_sql = json.loads(sys.argv[1]), sys.argv[2]
spark = hx.configure(SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
row = spark.range(1).select(
    *[F.hex(hx.record_hash(*[F.expr(a) for a in args])).alias(f"v{i}") for i, args in enumerate(vectors)]
).collect()[0]
old = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id INT, v STRING")
new = spark.createDataFrame([(1, "a"), (2, "B"), (4, "d")], "id INT, v STRING")
cli = subprocess.run([sys.executable, "-m", "hashexpr", "jar"], capture_output=True, text=True, check=True)
import pyarrow as pa
from hashexpr import arrow as hxa

arrow_hash = hxa.record_hash(pa.table({"id": pa.array([1], pa.int32()), "name": ["a"]}))[0].as_py().hex()
print(json.dumps({
    "package": hx.__file__,
    "version": hx.__version__,
    "spark": spark.version,
    "jar": hx.jar_path(),
    "cli_jar": cli.stdout.strip(),
    "hashes": [h.lower() for h in row],
    "fingerprint": hx.dataset_fingerprint(spark.sql(fingerprint_sql)),
    "diff": hx.summarize(hx.diff(old, new, "id")),
    "arrow_hash": arrow_hash,
}))
"""


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    run = subprocess.run(args, check=False, capture_output=True, text=True, timeout=1200, **kwargs)
    assert run.returncode == 0, f"{args}: {run.stderr[-3000:]}"
    return run


@pytest.fixture(scope="module")
def wheel() -> Path:
    if len(WHEELS) != 1:
        pytest.fail(f"dist/ holds {len(WHEELS)} hashexpr-{VERSION} platform wheels, not one: `make dist` builds it")
    return WHEELS[0]


def test_the_wheel_carries_every_lines_jar(wheel):
    with zipfile.ZipFile(wheel) as archive:
        jars = sorted(n for n in archive.namelist() if n.endswith(".jar"))
    expected = sorted(f"hashexpr/jars/{jar_name(s, c)}" for s, scalas in SPARK_LINES.items() for c in scalas)
    assert jars == expected


def test_the_wheel_carries_the_engine_at_the_packages_version(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert [n for n in names if n.startswith("hashexpr/_native")] == ["hashexpr/_native.abi3.so"]
    assert "hashexpr/unicode_case_14_0_0.txt" in names
    cargo = (ROOT / "native" / "Cargo.toml").read_text(encoding="utf-8")
    assert f'version = "{VERSION}"' in cargo


# make test installs the wheel next to Spark 3.5 and the pinned line; make test-matrix next to every line.
WHEEL_LINES = LINES if os.environ.get("HASHEXPR_TEST_MATRIX") else ["3.5", PINNED_LINE]


@pytest.mark.parametrize("line", WHEEL_LINES)
def test_the_wheel_alone_on_each_line(wheel, line, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", str(wheel), f"pyspark=={pyspark_version(line)}"])
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "VIRTUAL_ENV")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    vectors = json.dumps([[a["sql"] for a in v["args"]] for v in CHECKED])
    fingerprint = [v for v in FINGERPRINTS if "collate" not in json.dumps(v).lower()][-1]
    run = _run([python, "-c", _SCRIPT, vectors, fingerprint["sql"]], cwd=work, env=env)
    result = json.loads(run.stdout.strip().splitlines()[-1])
    site = str(venv)
    assert result["package"].startswith(site) and result["version"] == VERSION
    assert result["spark"] == pyspark_version(line)
    scala = "2.12" if line == "3.5" else "2.13"
    assert result["jar"] == result["cli_jar"] and result["jar"].startswith(site)
    assert Path(result["jar"]).name == jar_name(line, scala)
    assert result["hashes"] == [v["hex"] for v in CHECKED]
    assert result["fingerprint"] == fingerprint["fingerprint"]
    assert result["diff"] == {"insert": 1, "update": 1, "delete": 1, "duplicate_key": 0, "null_key": 0}
    # hashexpr.arrow from the wheel: record_hash(1 INT, 'a' STRING), as in hx.record_hash's docstring.
    assert result["arrow_hash"] == "bb9718ed625b2fc5763e75f3abfd7c5a"
