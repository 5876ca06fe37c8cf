"""hashexpr's Maven artifacts, resolved as JVM users resolve them: ``spark-submit --packages``.

``make test`` (and ``make publish-local``) publish every line's artifact to ``target/maven-repo`` before pytest
runs. A Java job (``tests/packages_job/HashexprJob.java``) is compiled against an artifact, as a user's build
compiles against the coordinate, and run by a real ``spark-submit --packages <coordinate> --repositories
file://target/maven-repo`` with an empty Ivy cache, so Spark resolves the artifact from that folder; its hashes
must be the Python API's for the same data. The pinned line and Spark 3.5 with Scala 2.12 (``.venv-3.5``'s
pyspark) run it; the 3.5 artifact on the pinned Spark must fail with the jar to use.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from servers import LOOPBACK, SHORT_LIVED_JVM
from spark_conf import TEST_SECRETS
from spark_lines import PINNED_LINE, PINNED_VERSION

import hashexpr as hx
from hashexpr.jar import SPARK_LINES, jar_path

# Processes of its own (spark-submit --packages): make check leaves it out.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT / "target" / "maven-repo"
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
JOB = ROOT / "tests" / "packages_job" / "HashexprJob.java"
POM = "{http://maven.apache.org/POM/4.0.0}"

#: The job's table, as SQL text: NULLs, a key typed two ways, a non-ASCII string, nested values.
DATA_SQL = (
    "SELECT * FROM VALUES "
    "(1, ' c-042 ', CAST(12.50 AS DECIMAL(10, 2)), array('x', NULL), map('k', 1)), "
    "(2, 'C-042', CAST(NULL AS DECIMAL(10, 2)), array(), CAST(NULL AS MAP<STRING, INT>)), "
    "(3, 'caf\\u00e9', CAST(-0.5 AS DECIMAL(10, 2)), CAST(NULL AS ARRAY<STRING>), map()), "
    "(4, CAST(NULL AS STRING), NULL, NULL, NULL) "
    "AS t(id, name, amount, tags, attrs)"
)
SECRET = "pii"

#: Every line's artifact id, as docs/JVM.md gives them.
ARTIFACTS = {(s, c): f"hashexpr-spark{s}_{c}" for s, scalas in SPARK_LINES.items() for c in scalas}


def artifact_file(spark: str, scala: str, suffix: str = ".jar") -> Path:
    artifact = ARTIFACTS[(spark, scala)]
    return REPO / "io" / "hashexpr" / artifact / VERSION / f"{artifact}-{VERSION}{suffix}"


def spark_home(spark: str) -> Path:
    """The Spark distribution in the pyspark wheel of the virtualenv that tests ``spark``."""
    venv = ROOT / (".venv" if spark == PINNED_LINE else f".venv-{spark}")
    homes = sorted(venv.glob("lib/python3*/site-packages/pyspark"))
    if not homes or not (homes[0] / "bin" / "spark-submit").is_file():
        pytest.fail(
            f"no pyspark in {venv}: `make venv venv-{spark}` (a prerequisite of `make test`) creates it"
        )
    return homes[0]


@pytest.fixture(scope="module")
def published() -> None:
    missing = [a for (s, c), a in ARTIFACTS.items() if not artifact_file(s, c, ".pom").is_file()]
    if missing:
        pytest.fail(f"{REPO} lacks {missing}: `make publish-local` publishes them (`make test` does first)")


def compile_job(spark: str, scala: str, out: Path) -> Path:
    """The job compiled against the artifact and the line's Spark jars, for the line's oldest Java."""
    javac = shutil.which("javac")
    assert javac, "javac (JDK 17) is needed to compile the job"
    classes = out / f"classes-{spark}_{scala}"
    classpath = os.pathsep.join([str(spark_home(spark) / "jars" / "*"), str(artifact_file(spark, scala))])
    release = "8" if spark == "3.5" else "17"
    built = subprocess.run(
        [javac, "--release", release, "-d", str(classes), "-cp", classpath, str(JOB)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    jar = out / f"job-{spark}_{scala}.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        for cls in classes.glob("*.class"):
            archive.write(cls, cls.name)
    return jar


def spark_submit(spark: str, coordinate: str, job: Path, ivy: Path) -> subprocess.CompletedProcess[str]:
    """``spark-submit --packages coordinate --repositories file://target/maven-repo`` of the job."""
    home = spark_home(spark)
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_CONF_DIR", "SPARK_REMOTE", "PYTHONPATH")}
    env.update(SHORT_LIVED_JVM, SPARK_HOME=str(home), SPARK_LOCAL_IP=LOOPBACK, SPARK_LOCAL_HOSTNAME=LOOPBACK)
    args = [
        str(home / "bin" / "spark-submit"),
        "--master", "local[2]",
        "--driver-memory", "512m",
        "--class", "HashexprJob",
        "--packages", coordinate,
        "--repositories", REPO.as_uri(),
        "--conf", f"spark.jars.ivy={ivy}",
        "--conf", f"spark.hashexpr.secret.{SECRET}={TEST_SECRETS[SECRET]}",
        "--conf", "spark.ui.enabled=false",
        "--conf", f"spark.driver.host={LOOPBACK}",
        "--conf", "spark.sql.shuffle.partitions=2",
        str(job), DATA_SQL, SECRET,
    ]  # fmt: skip
    ivy.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        args, check=False, env=env, cwd=ivy.parent, capture_output=True, text=True, timeout=300
    )


#: The runs: the Spark line that runs the job, and the line and Scala version of the coordinate it gives.
RUNS = {
    "pinned": (PINNED_LINE, (PINNED_LINE, "2.13")),
    "3.5": ("3.5", ("3.5", "2.12")),
    "another line": (PINNED_LINE, ("3.5", "2.12")),
}


@pytest.fixture(scope="module")
def runs(published, tmp_path_factory) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every run of ``RUNS``, all started at once: each spends most of its time starting a JVM.

    Each line's job is compiled against that line's artifact, as its user's build would; the run for another
    line submits the pinned line's job with the 3.5 coordinate.
    """
    out = tmp_path_factory.mktemp("packages")
    jobs = {
        spark: compile_job(spark, "2.12" if spark == "3.5" else "2.13", out) for spark, _ in RUNS.values()
    }
    with ThreadPoolExecutor(len(RUNS)) as pool:
        started = {
            name: pool.submit(
                spark_submit,
                spark,
                f"io.hashexpr:{ARTIFACTS[artifact]}:{VERSION}",
                jobs[spark],
                out / name / "ivy",
            )
            for name, (spark, artifact) in RUNS.items()
        }
        return {name: run.result() for name, run in started.items()}


def resolved_modules(stderr: str) -> list[tuple[str, str]]:
    """The modules Ivy's resolution report lists as in use."""
    report = stderr.split(":: modules in use:", 1)
    assert len(report) == 2, stderr[-3000:]
    return re.findall(r"^\s+(\S+#\S+;\S+) from (\S+) in", report[1].split("-----", 1)[0], re.MULTILINE)


def job_results(stdout: str) -> dict[str, str]:
    return dict(line.split("\t")[1:] for line in stdout.splitlines() if line.startswith("result\t"))


@pytest.fixture(scope="module")
def expected(spark) -> dict[str, str]:
    """What the Python API gives for the job's table, in the job's format."""
    df = spark.sql(DATA_SQL)

    def rows(frame, column) -> str:
        return ",".join(r[0] for r in frame.orderBy("id").select(F.hex(column)).collect())

    key = hx.record_key("name", salt="hub_customer", trim=True, case="upper", empty_as_null=True)
    return {
        "record_hash": rows(df, hx.record_hash("*")),
        "record_hash_columns": rows(df, hx.record_hash(F.col("id"), F.col("name"))),
        "record_hash_by_name": rows(df, hx.record_hash("*", by_name=True)),
        "record_hash_with": rows(df, hx.record_hash("id", "name", algorithm="sha256")),
        "record_hash_by_name_with": rows(
            df, hx.record_hash("*", by_name=True, algorithm="hmac-sha256", secret=SECRET)
        ),
        "record_key": rows(df, hx.record_key("id")),
        "record_key_with": rows(df, key),
        "dataset_fingerprint": hx.dataset_fingerprint(df),
        "dataset_fingerprint_with": hx.dataset_fingerprint(df, algorithm="lthash16"),
        # row_position() has no Python function: one partition of three rows, outside a micro-batch.
        "row_position": "[null,0,0],[null,0,1],[null,0,2]",
    }


def test_every_artifact_has_a_pom_that_resolves_nothing_but_itself(published):
    """Spark and Scala are provided; the jar is the line's jar; the sources jar holds the API's sources."""
    for (spark, scala), artifact in ARTIFACTS.items():
        pom = ET.parse(artifact_file(spark, scala, ".pom")).getroot()
        assert [pom.findtext(f"{POM}{t}") for t in ("groupId", "artifactId", "version")] == [
            "io.hashexpr",
            artifact,
            VERSION,
        ]
        dependencies = {
            d.findtext(f"{POM}artifactId"): (d.findtext(f"{POM}version"), d.findtext(f"{POM}scope"))
            for d in pom.iter(f"{POM}dependency")
        }
        assert set(dependencies) == {"scala-library", f"spark-sql_{scala}", f"spark-catalyst_{scala}"}, (
            artifact
        )
        assert {scope for _, scope in dependencies.values()} == {"provided"}, artifact
        jar = artifact_file(spark, scala)
        assert jar.read_bytes() == Path(jar_path(spark=spark, scala=scala)).read_bytes(), artifact
        with zipfile.ZipFile(jar) as archive:
            manifest = archive.read("META-INF/MANIFEST.MF").decode()
        compiled_against = re.search(r"^Spark-Version: (\S+)", manifest, re.MULTILINE).group(1)
        assert compiled_against.startswith(f"{spark}.")
        assert dependencies[f"spark-sql_{scala}"][0] == compiled_against, artifact
        assert dependencies["scala-library"][0].startswith(f"{scala}."), artifact
        with zipfile.ZipFile(artifact_file(spark, scala, "-sources.jar")) as sources:
            assert {"io/hashexpr/functions.scala", "io/hashexpr/RecordKeyOptions.scala"} <= set(
                sources.namelist()
            )


@pytest.mark.parametrize("name", ["pinned", "3.5"])
def test_packages_resolves_the_artifact_and_the_job_hashes_as_python(name, runs, expected):
    run = runs[name]
    assert run.returncode == 0, run.stderr[-6000:]
    artifact = ARTIFACTS[RUNS[name][1]]
    # Resolved from the folder, and nothing else: Spark and Scala are provided by the cluster.
    assert resolved_modules(run.stderr) == [(f"io.hashexpr#{artifact};{VERSION}", "repo-1")]
    assert f"downloading file:{artifact_file(*RUNS[name][1])} ..." in run.stderr
    assert job_results(run.stdout) == expected


def test_an_artifact_for_another_line_fails_naming_the_one_to_use(runs):
    """The 3.5 / Scala 2.12 artifact on the pinned Spark: the first hashexpr call says which artifact to use."""
    run = runs["another line"]
    assert run.returncode != 0 and not job_results(run.stdout)
    message = (
        "this hashexpr jar (hashexpr-spark3.5_2.12.jar) is built for Spark 3.5 with Scala 2.12, but this session "
        f"runs Spark {PINNED_VERSION} with Scala 2.13"
    )
    # Logged when the session starts, then raised by the job's first call into the API.
    assert f"ERROR HashExprExtensions: {message}" in run.stderr, run.stderr[-6000:]
    raised = re.search(r"^Caused by: java\.lang\.IllegalStateException: (.*)$", run.stderr, re.MULTILINE)
    assert raised and raised.group(1).startswith(message), run.stderr[-6000:]
    assert (
        f"Use hashexpr-spark{PINNED_LINE}_2.13.jar instead (the Maven artifact io.hashexpr:"
        in raised.group(1)
    )
