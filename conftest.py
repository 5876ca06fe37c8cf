"""Shared fixtures: one real local Spark per test run, with the built hashexpr jar."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
# tests/ is on sys.path once a test module there is collected; doctests and this file need it too.
sys.path.insert(0, str(ROOT / "tests"))

from servers import SHORT_LIVED_JVM_OPTIONS

# Every Spark driver a test run starts reads SPARK_SUBMIT_OPTS (its own session, the command line's processes,
# spark-submit jobs, servers, other lines' sessions): over a test's small jobs the C1 compiler alone and the
# serial collector spend about a third less CPU than the defaults, which on two shared cores is time
# (tests/servers.py says why the code cache keeps its default size).
os.environ.setdefault("SPARK_SUBMIT_OPTS", SHORT_LIVED_JVM_OPTIONS)
# Spark's Python workers (hashexpr's Arrow path, UDFs) run PYSPARK_PYTHON, else whichever `python3` is first on
# PATH, which need not have pyspark or hashexpr: this run's interpreter, for its sessions and the servers it starts.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark():
    """A ``local[2]`` SparkSession with the jar of the running Spark line, its extension in ``spark.sql.extensions``."""
    from pyspark.sql import SparkSession
    from spark_conf import TEST_SECRETS

    from hashexpr.jar import jar_path

    try:
        jar = jar_path()
    except (FileNotFoundError, ValueError) as exc:
        pytest.fail(f"{exc} (make test builds every jar first)")

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Tables of their own: make test runs other lines' suites beside this one, from the same directory.
    warehouse = tempfile.mkdtemp(prefix="hashexpr-warehouse-")
    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.warehouse.dir", warehouse)
        .appName("hashexpr-pytest")
        .config("spark.jars", jar)
        .config("spark.sql.extensions", "io.hashexpr.HashExprExtensions")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    for name, key in TEST_SECRETS.items():
        session = session.config(f"spark.hashexpr.secret.{name}", key)
    session = session.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    shutil.rmtree(warehouse, ignore_errors=True)


@pytest.fixture(autouse=True)
def _doctest_namespace(request, doctest_namespace):
    """Doctests see ``spark`` (only those that use it start Spark) and ``F``, as in PySpark's docs."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    doctest_namespace["F"] = F
    doctest_namespace["SparkSession"] = SparkSession
    if isinstance(request.node, pytest.DoctestItem) and re.search(
        r"\bspark\.", "".join(ex.source for ex in request.node.dtest.examples)
    ):
        doctest_namespace["spark"] = request.getfixturevalue("spark")


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server for the session (tests/postgres_server.py): its psycopg connection string."""
    from postgres_server import postgres_server

    with postgres_server() as server:
        yield server


@pytest.fixture(scope="session")
def connect_with_jar(tmp_path_factory):
    """One Spark Connect server with hashexpr's jar for the run, started when a module first asks and not
    waited for here (``wait_ready`` before a session): the modules that only use it share its start. The
    secrets the Connect tests name are the server's; its Python workers import this checkout's hashexpr."""
    from servers import SHORT_LIVED_JVM, checkout_pythonpath, connect_servers
    from spark_conf import CONNECT_SERVER_CONF

    import hashexpr as hx

    env = {**SHORT_LIVED_JVM, "PYTHONPATH": checkout_pythonpath()}
    log_dir = tmp_path_factory.mktemp("connect-with-jar")
    with connect_servers(log_dir, [[hx.jar_path()]], conf=CONNECT_SERVER_CONF, wait=False, env=env) as (server,):
        yield server


@pytest.fixture(scope="session")
def mariadb():
    """A real MariaDB server for the session (tests/mariadb_server.py)."""
    from mariadb_server import mariadb_server

    with mariadb_server() as server:
        yield server


_MODULE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add each test's setup, call and teardown to its module's time."""
    module = report.nodeid.split("::", 1)[0]
    _MODULE_SECONDS[module] = _MODULE_SECONDS.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Where the time went, module by module (docs/TESTING.md): every log of make test says it."""
    if not _MODULE_SECONDS:
        return
    total = sum(_MODULE_SECONDS.values())
    terminalreporter.write_sep("=", f"seconds per module ({total:,.0f} s in all)")
    for module, seconds in sorted(_MODULE_SECONDS.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{seconds:8.1f}  {module}")
