"""Every line's jar: classes for the oldest Java its Spark runs on, and the jar the package picks for each line."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from hashexpr.jar import SPARK_LINES, jar_name, jar_path

# Spark 3.5 runs on Java 8, 11 and 17 (class files of Java 8, major 52); Spark 4 on Java 17+ (major 61).
EXPECTED_MAJOR = {"3.5": 52, "4.0": 61, "4.1": 61, "4.2": 61, "4.3": 61}
LINES = [(spark, scala) for spark, scalas in SPARK_LINES.items() for scala in scalas]


@pytest.mark.parametrize(("spark", "scala"), LINES, ids=[jar_name(s, c) for s, c in LINES])
def test_every_class_targets_the_lines_oldest_java(spark, scala):
    jar = Path(jar_path(spark=spark, scala=scala))
    with zipfile.ZipFile(jar) as archive:
        classes = [n for n in archive.namelist() if n.endswith(".class")]
        assert len(classes) > 50 and "io/hashexpr/HashExprExtensions.class" in classes
        majors = {}
        for name in classes:
            magic, _minor, major = struct.unpack(">IHH", archive.read(name)[:8])
            assert magic == 0xCAFEBABE, name
            majors.setdefault(major, []).append(name)
        manifest = archive.read("META-INF/MANIFEST.MF").decode()
    assert set(majors) == {EXPECTED_MAJOR[spark]}, {m: names[:3] for m, names in majors.items()}
    assert f"Spark-Version: {spark}." in manifest and f"Scala-Version: {scala}." in manifest


def test_every_jar_holds_the_same_classes():
    """One source: the lines differ only in how a class is compiled, never in which classes there are."""
    names = {}
    for spark, scala in LINES:
        with zipfile.ZipFile(jar_path(spark=spark, scala=scala)) as archive:
            names[(spark, scala)] = {n for n in archive.namelist() if n.startswith("io/hashexpr/")}
    first = names[LINES[-1]]
    for line, found in names.items():
        assert found == first, (line, sorted(found ^ first)[:10])


def test_the_jar_follows_pyspark_version_whatever_installed_it(monkeypatch, tmp_path):
    """The Spark line comes from ``pyspark.__version__`` (a runtime's PySpark on the path has no pip metadata);
    databricks-connect's is its Databricks runtime's number, read as that runtime's Spark."""
    import sys
    import types

    from hashexpr.jar import jar_path, running_spark

    for version, line in (("4.1.4", "4.1"), ("15.4.3", "3.5"), ("16.4.2", "3.5"), ("17.3.1", "4.0"), ("18.0.2", "4.1")):
        fake = types.ModuleType("pyspark")
        fake.__version__ = version
        fake.__file__ = str(tmp_path / "pyspark" / "__init__.py")  # no jars/: the line's usual Scala
        monkeypatch.setitem(sys.modules, "pyspark", fake)
        monkeypatch.delenv("SPARK_HOME", raising=False)
        assert running_spark()[0] == line, version
        assert jar_path().endswith(f"hashexpr-spark{line}_{'2.12' if line == '3.5' else '2.13'}.jar")
