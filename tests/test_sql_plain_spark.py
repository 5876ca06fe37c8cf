"""The ``spark`` dialect's SQL runs in a Spark that has never seen hashexpr, as a Databricks SQL warehouse is.

One process of its own (tests/plain_spark_job.py, one JVM start) starts a plain local SparkSession: no jar, no
extension, no hashexpr import, a session time zone outside UTC. It evaluates the expressions that
``hashexpr.sql`` wrote for a handful of types and key options, with edge values and NULLs, as generated code
with ANSI mode on and interpreted with ANSI mode off; the jar's ``record_hash_with('algorithm=sha256', ...)`` and
``record_key_with('algorithm=sha256; ...', ...)`` in the test session give the expected bytes.
"""

from __future__ import annotations

import decimal
import json
import subprocess
import sys
from pathlib import Path

import pytest
from servers import spark_env
from sql_engines import literal, rows_query

from hashexpr import reference
from hashexpr.sql import column, dialect, record_hash, record_key
from hashexpr.sql.types import parse_type

# Processes of its own (a Spark session without the jar): make check leaves it out.
pytestmark = pytest.mark.slow

D = decimal.Decimal
FIRST_MICRO, LAST_MICRO = -719162 * 86400000000, 2932897 * 86400000000 - 1

#: (column types, rows of values, options): record_hash without options, record_key with them.
CASES = [
    (["bigint"], [[-(2**63)], [2**63 - 1], [0], [None]], None),
    (["double"], [[-0.0], [float("nan")], [float("-inf")], [5e-324]], None),
    (["double"], [[0.1], [2.2250738585072014e-308], [1.7976931348623157e308], [None]], None),
    (["float"], [[1.401298464324817e-45], [-0.0], [3.4028234663852886e38], [None]], None),
    (["decimal(38,10)"], [[D("-9999999999999999999999999999.9999999999")], [D("1.5")], [D(0)], [None]], None),
    (["decimal(10,2)"], [[D("12.30")], [D("-0.01")], [D("99999999.99")], [None]], None),
    (["string"], [[""], ["  Zürich "], ["日本"], [None]], None),
    (["binary"], [[b""], [b"\x00\xff"], [b"key"], [None]], None),
    (["boolean"], [[True], [False], [None], [True]], None),
    (["date"], [[-719162], [2932896], [-1], [None]], None),
    (["timestamp"], [[FIRST_MICRO], [LAST_MICRO], [-1], [None]], None),
    (["timestamp_ntz"], [[FIRST_MICRO], [LAST_MICRO], [-1], [None]], None),
    (["array<decimal(5,2)>"], [[[D("1.10"), None]], [[]], [None], [[D("-999.99")]]], None),
    (["struct<a:int,b:string>"], [[(1, "x")], [(None, None)], [None], [(-1, "")]], None),
    (["map<string,double>"], [[[("a", 1.0), ("b", -0.0)]], [[]], [None], [[("z", float("nan"))]]], None),
    (["bigint", "string", "timestamp"], [[7, "a", 0], [None, None, None], [-7, "", -1], [1, "b", None]], None),
    (["string"], [[" c-1 "], ["C-1"], [None], ["  "]], {"salt": "hub", "trim": True, "case": "upper"}),
    (["string"], [[" c-1 "], [None], [""], ["x"]], {"case": "lower", "empty_as_null": True, "null_key": "null"}),
    (["bigint", "string"], [[1, " A "], [None, None], [2, None], [None, "b"]], {"salt": "s-t"}),
]
ROWS = 4


def _options(options: dict) -> str:
    items = ["algorithm=sha256"]
    items += [f"salt={options['salt']}"] if "salt" in options else []
    items += [name for name in ("trim", "empty_as_null") if options.get(name)]
    items += [f"{name}={options[name]}" for name in ("case", "null_key") if name in options]
    return "; ".join(items)


@pytest.fixture(scope="module")
def queries():
    """The generated expressions and the jar's calls, over one inline table of every case's columns."""
    quote = dialect("spark").quote
    names, types, plain, jar = [], [], [], []
    for n, (type_names, _, options) in enumerate(CASES):
        columns = [f"c{n}.{k} `x`" for k in range(len(type_names))]
        names += columns
        types += [parse_type(t) for t in type_names]
        pairs = list(zip(map(column, columns), type_names))
        quoted = ", ".join(map(quote, columns))
        if options is None:
            plain.append(record_hash(pairs, dialect="spark"))
            jar.append(f"record_hash_with('algorithm=sha256', {quoted})")
        else:
            plain.append(record_key(pairs, dialect="spark", **options))
            jar.append(f"record_key_with('{_options(options)}', {quoted})")
    rows = [
        [literal(v, t, "spark") for v, t in zip((v for _, case, _ in CASES for v in case[r]), types)]
        for r in range(ROWS)
    ]
    return rows_query("spark", names, rows, plain), rows_query("spark", names, rows, jar)


@pytest.fixture(scope="module")
def plain_spark(queries, tmp_path_factory):
    """tests/plain_spark_job.py's report on the generated SQL."""
    folder = tmp_path_factory.mktemp("plain-spark")
    (folder / "in.json").write_text(json.dumps({"query": queries[0]}), encoding="utf-8")
    # No PYTHONPATH to hashexpr's sources; and the child never imports hashexpr.
    env = spark_env()
    env.pop("PYTHONPATH", None)
    run = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("plain_spark_job.py")), str(folder / "in.json"),
         str(folder / "out.json")],
        env=env, capture_output=True, text=True, timeout=600, check=False, cwd=folder,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads((folder / "out.json").read_text(encoding="utf-8"))


def test_the_session_has_no_hashexpr(plain_spark):
    assert plain_spark["jars"] == "" and plain_spark["extensions"] == ""
    assert "record_hash" in plain_spark["no_record_hash"] and "UNRESOLVED_ROUTINE" in plain_spark["no_record_hash"]


@pytest.fixture(scope="module")
def jar(queries, spark):
    """The jar's bytes for every row and case, from the test session."""
    return [[None if v is None else bytes(v) for v in row] for row in spark.sql(queries[1]).collect()]


def test_the_jar_agrees_with_the_reference(jar):
    """The expected bytes are the format's: the reference computes them from the values."""
    assert len(jar) == ROWS and len(jar[0]) == len(CASES)
    for n, (type_names, rows, options) in enumerate(CASES):
        types = [parse_type(t) for t in type_names]
        for r, values in enumerate(rows):
            if options is None:
                want = reference.record_hash(values, types, algorithm="sha256")
            else:
                want = reference.record_key(values, types, algorithm="sha256", **options)
            assert jar[r][n] == want, (type_names, values, options)


def test_plain_spark_gives_the_jars_bytes(plain_spark, jar):
    assert sum(v is None for row in jar for v in row) == 2, "the null_key=null case gives NULL twice"
    assert set(plain_spark["modes"]) == {"codegen, ANSI on", "interpreted, ANSI off"}
    for mode, got in plain_spark["modes"].items():
        for n, (type_names, _, options) in enumerate(CASES):
            want = [None if row[n] is None else row[n].hex() for row in jar]
            assert [row[n] for row in got] == want, (mode, type_names, options)


@pytest.mark.parametrize(
    ("declared", "value"),
    [
        ("int", "CAST(4000000000 AS BIGINT)"),
        ("decimal(3,1)", "CAST(12345.6 AS DECIMAL(6,1))"),
        ("bigint", "'not a number'"),
        ("date", "'not a date'"),
        ("array<int>", "array(CAST(4000000000 AS BIGINT))"),
    ],
)
def test_a_value_its_declared_type_cannot_hold_fails_the_query_with_ansi_off(spark, declared, value):
    """With ANSI off Spark casts such a value to NULL, which would hash as a NULL: the query fails instead."""
    from pyspark.errors import PySparkException
    from spark_conf import spark_conf

    from hashexpr.sql import expression, record_hash

    sql = record_hash([(expression(value), declared)], dialect="spark")
    with spark_conf(spark, {"spark.sql.ansi.enabled": "false"}), pytest.raises(PySparkException) as failed:
        spark.sql(f"SELECT {sql}").collect()
    assert f"a value that is not of type {declared}" in str(failed.value)
    # A value of the type hashes as the jar does.
    fits = record_hash([(expression(value.replace("4000000000", "40")), declared)], dialect="spark")
    if declared == "int":
        assert spark.sql(f"SELECT {fits} = record_hash_with('algorithm=sha256', 40)").first()[0]
