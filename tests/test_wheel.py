"""The wheels as a user gets them, each installed into a fresh virtualenv next to a Spark line's newest pyspark
and used with no checkout on the path: the one pip picks from ``make dist``'s directory (on this machine the
platform wheel, with the Arrow engine) and the pure wheel (``py3-none-any``, no engine). Hashes, fingerprints
and diffs are the same on every line (the frozen vectors' values); the platform wheel replays the Arrow
engine's vectors, and the pure wheel's ``hashexpr.arrow`` and command line say what is missing and use Spark.
tests/test_dist.py checks the distributions themselves.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from spark_lines import LINES, PINNED_LINE, pyspark_version

from hashexpr.jar import SPARK_LINES, jar_name

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
# The platform wheel: the jars and the Arrow engine's extension module (stable ABI, CPython 3.10 and later).
WHEELS = sorted(DIST.glob(f"hashexpr-{VERSION}-cp310-abi3-*.whl"))
PURE = DIST / f"hashexpr-{VERSION}-py3-none-any.whl"
VECTORS = json.loads((ROOT / "spec" / "vectors-v1.json").read_text(encoding="utf-8"))["vectors"]
FINGERPRINTS = json.loads((ROOT / "spec" / "fingerprint-vectors-v1.json").read_text(encoding="utf-8"))[
    "vectors"
]
CHECKED = [v for v in VECTORS if "collate" not in json.dumps(v).lower()][:60]
# record_hash(1 INT, 'a' STRING), as in hx.record_hash's docstring.
ARROW_HASH = "bb9718ed625b2fc5763e75f3abfd7c5a"

# Processes of its own (the wheel in fresh virtualenvs): make check leaves it out.
pytestmark = pytest.mark.slow

# Run in the fresh virtualenv, from an empty directory: the installed package only.
_SCRIPT = r"""
import importlib.metadata, io, json, subprocess, sys
from contextlib import redirect_stdout
import hashexpr as hx
from pyspark.sql import SparkSession, functions as F

vectors, fingerprint_sql, parquet = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
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
from hashexpr.cli import main

try:
    arrow_hash = hxa.record_hash(pa.table({"id": pa.array([1], pa.int32()), "name": ["a"]}))[0].as_py().hex()
except ImportError as error:
    arrow_hash = f"ImportError: {error}"
# The command line in this session: --engine auto takes the engine where it is installed, else Spark.
out = io.StringIO()
with redirect_stdout(out):
    status = main(["fingerprint", parquet, "--json"], spark)
wheel = importlib.metadata.distribution("hashexpr").read_text("WHEEL")
print(json.dumps({
    "package": hx.__file__,
    "version": hx.__version__,
    "tags": [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")],
    "spark": spark.version,
    "jar": hx.jar_path(),
    "cli_jar": cli.stdout.strip(),
    "hashes": [h.lower() for h in row],
    "fingerprint": hx.dataset_fingerprint(spark.sql(fingerprint_sql)),
    "diff": hx.summarize(hx.diff(old, new, "id")),
    "arrow_hash": arrow_hash,
    "cli": {"status": status, **json.loads(out.getvalue())},
}))
"""

# A conftest for the Arrow engine's vector replay in the virtualenv: the installed package, not a checkout's.
_CONFTEST = """
import sys

import hashexpr


def pytest_sessionstart(session):
    assert hashexpr.__file__.startswith(sys.prefix), hashexpr.__file__
"""


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    run = subprocess.run(args, check=False, capture_output=True, text=True, timeout=1200, **kwargs)
    assert run.returncode == 0, f"{args}: {run.stderr[-3000:]}"
    return run


@pytest.fixture(scope="module")
def wheel() -> Path:
    if len(WHEELS) != 1:
        pytest.fail(
            f"dist/ holds {len(WHEELS)} hashexpr-{VERSION} platform wheels, not one: `make dist` builds it"
        )
    if not PURE.is_file():
        pytest.fail(f"dist/ has no {PURE.name}: `make dist` builds it")
    return WHEELS[0]


def test_the_wheel_carries_every_lines_jar(wheel):
    expected = sorted(f"hashexpr/jars/{jar_name(s, c)}" for s, scalas in SPARK_LINES.items() for c in scalas)
    for built in (wheel, PURE):
        with zipfile.ZipFile(built) as archive:
            assert sorted(n for n in archive.namelist() if n.endswith(".jar")) == expected, built.name


def test_the_wheel_carries_the_engine_at_the_packages_version(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert [n for n in names if n.startswith("hashexpr/_native")] == ["hashexpr/_native.abi3.so"]
    assert "hashexpr/unicode_case_14_0_0.txt" in names
    cargo = (ROOT / "native" / "Cargo.toml").read_text(encoding="utf-8")
    assert f'version = "{VERSION}"' in cargo


# make test: the wheel pip picks from dist/ next to the pinned line, the pure wheel next to Spark 3.5;
# make test-matrix: pip's pick next to every line, and the pure wheel next to Spark 3.5.
PICKED_LINES = LINES if os.environ.get("HASHEXPR_TEST_MATRIX") else [PINNED_LINE]
CASES = [(line, "picked") for line in PICKED_LINES] + [("3.5", "pure")]


def _install(python: str, line: str, which: str) -> None:
    pyspark = f"pyspark=={pyspark_version(line)}"
    if which == "pure":
        _run([python, "-m", "pip", "install", "-q", str(PURE), pyspark])
        return
    # With both wheels in the directory, pip takes the platform wheel here (tests/test_dist.py: elsewhere).
    _run([python, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(DIST), "--no-deps",
          f"hashexpr=={VERSION}"])  # fmt: skip
    _run([python, "-m", "pip", "install", "-q", "--find-links", str(DIST), f"hashexpr=={VERSION}", pyspark,
          "pytest"])  # fmt: skip


@pytest.mark.parametrize(("line", "which"), CASES)
def test_the_wheel_alone_on_each_line(wheel, line, which, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    _install(python, line, which)
    work = tmp_path / "work"
    work.mkdir()
    parquet = work / "small.parquet"
    _small_parquet(parquet)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "VIRTUAL_ENV", "PYSPARK_PYTHON")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    vectors = json.dumps([[a["sql"] for a in v["args"]] for v in CHECKED])
    fingerprint = [v for v in FINGERPRINTS if "collate" not in json.dumps(v).lower()][-1]
    run = _run([python, "-c", _SCRIPT, vectors, fingerprint["sql"], str(parquet)], cwd=work, env=env)
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
    # The command line's fingerprint of the Parquet file is the reference's, on whichever engine ran it.
    assert (result["cli"]["status"], result["cli"]["fingerprint"]) == (0, _reference_fingerprint(parquet))
    if which == "picked":
        assert sorted(result["tags"]) == sorted(_tags(wheel))
        assert result["arrow_hash"] == ARROW_HASH
        assert result["cli"]["engine"] == "arrow"
        if line == PINNED_LINE:
            # The vectors' types parse with the pinned pyspark's (collations: Spark 4).
            _replay_arrow_vectors(python, tmp_path / "replay", env)
    else:
        assert result["tags"] == ["py3-none-any"]
        _says_what_is_missing(result["arrow_hash"].removeprefix("ImportError: "))
        assert result["cli"]["engine"] == "spark"
        # --engine arrow refuses with the reason, before any JVM starts (exit status 2: an input error).
        cli = venv / "bin" / "hashexpr"
        done = subprocess.run(
            [str(cli), "fingerprint", str(parquet), "--engine", "arrow"],
            check=False, capture_output=True, text=True, cwd=work, env={**env, "JAVA_HOME": str(tmp_path / "no-java")},
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("hashexpr: error: --engine arrow cannot run this: hashexpr.arrow needs")
        _says_what_is_missing(done.stderr)
        assert done.stderr.rstrip().endswith("; use --engine spark or auto")


def _tags(wheel: Path) -> list[str]:
    """The tags a wheel's name states (``cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64``: two)."""
    interpreter, abi, platforms = wheel.name.removesuffix(".whl").split("-")[2:5]
    return [f"{interpreter}-{abi}-{p}" for p in platforms.split(".")]


def _says_what_is_missing(message: str) -> None:
    assert (
        "hashexpr.arrow needs the compiled engine hashexpr._native, which is not installed for CPython"
        in (message)
    )
    assert "linux-x86_64" in message or "linux-aarch64" in message
    assert "this is hashexpr's pure wheel (py3-none-any)" in message
    assert f"pip install --force-reinstall --no-deps --no-binary hashexpr hashexpr=={VERSION}" in message
    assert "make venv" not in message


def _small_parquet(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "name": ["a", None, "c"]})
    pq.write_table(table, path)


def _reference_fingerprint(path: Path) -> str:
    import pyarrow.parquet as pq

    from hashexpr.reference import fingerprint_arrow

    return fingerprint_arrow(pq.read_table(path))


def _replay_arrow_vectors(python: str, where: Path, env: dict[str, str]) -> None:
    """tests/test_arrow_vectors.py (every spec/ vector file through hashexpr.arrow) against the installed
    package: the test modules it needs and spec/ copied to ``where``, run by the virtualenv's pytest."""
    tests = where / "tests"
    tests.mkdir(parents=True)
    for name in ("test_arrow_vectors.py", "arrow_data.py", "test_golden_vectors.py"):
        shutil.copy2(ROOT / "tests" / name, tests)
    (tests / "conftest.py").write_text(_CONFTEST, encoding="utf-8")
    shutil.copytree(ROOT / "spec", where / "spec", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    run = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_arrow_vectors.py"],
        check=False, capture_output=True, text=True, cwd=where, env=env, timeout=600,
    )  # fmt: skip
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in summary and "skipped" not in summary and "failed" not in summary, summary
    assert int(summary.split(" passed")[0].split()[-1]) >= 400, summary
