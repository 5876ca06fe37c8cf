"""Shared fixtures: one real local Spark per test run, with the built hashexpr jar."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
# HASHEXPR_JAR runs the suite against another Spark line's jar (target/jars/), in a virtualenv with that pyspark.
JAR = Path(os.environ.get("HASHEXPR_JAR", ROOT / "target" / "hashexpr.jar"))


@pytest.fixture(scope="session")
def spark():
    """A ``local[2]`` SparkSession with hashexpr.jar, its extension named in ``spark.sql.extensions``."""
    if not JAR.exists():
        pytest.fail(f"{JAR} is missing: build it with `make jar` (make test does this first)")
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hashexpr-pytest")
        .config("spark.jars", str(JAR))
        .config("spark.sql.extensions", "io.hashexpr.HashExprExtensions")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


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
