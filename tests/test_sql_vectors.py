"""hashexpr.sql's expressions replay the frozen vectors in real engines: PostgreSQL, DuckDB, and Spark SQL (the
expressions use built-in functions only; test_sql_plain_spark runs them where the jar is absent).

Every value of spec/vectors-v1.json that the engine can hold goes through record_hash (expected: the reference's
SHA-256 of it, which test_sha256 checks against the jar), every vector of spec/key-vectors-v1.json through
record_key with its options, and spec/sha256-vectors-v1.json's frozen hex. Sessions run in time zones other than
UTC, so nothing depends on one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest
from pyspark.sql.types import StringType
from spark_conf import spark_conf
from sql_engines import MYSQL_TIME_ZONE, PostgresTypes, column_names, literal, mysql_holds, rows_query
from test_golden_vectors import decode, parse_type

from hashexpr import reference
from hashexpr.sql import Unsupported, column, record_hash, record_key

SPEC = Path(__file__).resolve().parents[1] / "spec"
V1 = json.loads((SPEC / "vectors-v1.json").read_text(encoding="utf-8"))["vectors"]
KEYS = json.loads((SPEC / "key-vectors-v1.json").read_text(encoding="utf-8"))["vectors"]
SHA256 = json.loads((SPEC / "sha256-vectors-v1.json").read_text(encoding="utf-8"))["vectors"]
DIALECTS = ["postgres", "duckdb", "spark", "mysql"]
TIME_ZONES = {"postgres": "Asia/Kolkata", "duckdb": "America/New_York", "spark": "Australia/Lord_Howe",
              "mysql": MYSQL_TIME_ZONE}  # fmt: skip


class Engine:
    """One engine's connection: evaluates queries, holds its session time zone."""

    def __init__(self, dialect: str, run, pg_types: PostgresTypes | None = None) -> None:
        self.dialect = dialect
        self.run = run
        self.pg_types = pg_types

    def literal(self, value: Any, dtype) -> str:
        return literal(value, dtype, self.dialect, self.pg_types)

    def holds(self, values: list[Any], types: list) -> bool:
        """Whether the engine can hold the values: PostgreSQL and DuckDB strings are valid UTF-8, and
        PostgreSQL's hold no NUL."""
        if self.dialect == "spark":
            return True
        if self.dialect == "mysql":
            return all(mysql_holds(v, t) for v, t in zip(values, types))
        for value, dtype in zip(values, types):
            nul = self.dialect == "postgres" and isinstance(value, str) and "\x00" in value
            if isinstance(dtype, StringType) and (isinstance(value, bytes) or nul):
                return False
        return True


@pytest.fixture(scope="module", params=DIALECTS)
def engine(request):
    if request.param == "duckdb":
        connection = duckdb.connect()
        connection.execute(f"SET TimeZone = '{TIME_ZONES['duckdb']}'")
        yield Engine("duckdb", lambda q: connection.execute(q).fetchall())
        connection.close()
    elif request.param == "postgres":
        server = request.getfixturevalue("postgres")
        with psycopg.connect(server.dsn, autocommit=True) as connection:
            connection.execute(f"SET TimeZone = '{TIME_ZONES['postgres']}'")
            yield Engine("postgres", lambda q: connection.execute(q).fetchall(), PostgresTypes(connection))
    elif request.param == "mysql":
        server = request.getfixturevalue("mariadb")
        with server.connect() as connection, connection.cursor() as cursor:
            cursor.execute(f"SET time_zone = '{TIME_ZONES['mysql']}'")

            def run(query: str) -> list:
                cursor.execute(query)
                return list(cursor.fetchall())

            yield Engine("mysql", run)
    else:
        spark = request.getfixturevalue("spark")
        with spark_conf(spark, {"spark.sql.session.timeZone": TIME_ZONES["spark"]}):
            yield Engine("spark", lambda q: [tuple(r) for r in spark.sql(q).collect()])


def _typed(vector: dict[str, Any]) -> tuple[list[Any], list]:
    types = [parse_type(a["type"]) for a in vector["args"]]
    return [decode(a["value"], t) for a, t in zip(vector["args"], types)], types


#: Cases per query. Spark's analyser resolves nested lambdas one level per pass over the whole plan, so its
#: time grows with the text of a query times its depth: two queries hold every vector. PostgreSQL and DuckDB
#: take each test's cases in one query.
CHUNK = {"spark": 100, "postgres": 400, "duckdb": 400, "mysql": 200}


def _evaluate(engine: Engine, cases: list[tuple[list[Any], list, str]]) -> list[Any]:
    """Each case's expression over one row of its values, many cases per query."""
    results = []
    size = CHUNK[engine.dialect]
    for start in range(0, len(cases), size):
        chunk = cases[start : start + size]
        names, row, expressions = [], [], []
        for n, (values, types, write) in enumerate(chunk):
            columns = [f"v{n} {name}" for name in column_names(len(types))]
            names += columns
            row += [engine.literal(v, t) for v, t in zip(values, types)]
            expressions.append(write(columns))
        results += list(engine.run(rows_query(engine.dialect, names, [row], expressions))[0])
    return [None if r is None else bytes(r) for r in results]


def test_format_v1_vectors(engine):
    """Every value of format v1 that the dialect covers hashes as the reference's SHA-256; the rest is refused."""
    cases, expected, refused = [], [], []
    for vector in V1:
        values, types = _typed(vector)
        if not engine.holds(values, types):
            continue
        try:
            record_hash(list(zip(map(column, column_names(len(types))), types)), dialect=engine.dialect)
        except Unsupported as exc:
            assert engine.dialect in str(exc)
            refused.append(vector["name"])
            continue

        def write(columns, types=types):
            return record_hash(list(zip(map(column, columns), types)), dialect=engine.dialect)

        cases.append((values, types, write))
        expected.append((vector["name"], reference.record_hash(values, types, algorithm="sha256")))
    got = _evaluate(engine, cases)
    assert [(name, g) for (name, _), g in zip(expected, got)] == expected
    # Intervals and collated strings everywhere; maps and arrays of arrays in PostgreSQL; arrays, structs, maps,
    # NaN, infinities and instants outside TIMESTAMP's range in MySQL.
    assert len(cases) >= {"postgres": 140, "duckdb": 160, "spark": 165, "mysql": 120}[engine.dialect], refused


def _key_options(vector: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in vector["options"].items()}


def test_key_vectors(engine):
    """Every key vector through record_key with its options: the hash, NULL, or a failed query."""
    cases, expected, failing = [], [], []
    for vector in KEYS:
        values, types = _typed(vector)
        options = _key_options(vector)
        if not engine.holds(values, types) or any("collate" in str(a["type"]) for a in vector["args"]):
            continue
        non_ascii = options.get("case") and any(
            isinstance(t, StringType) and v is not None and not _ascii(v, options) for v, t in zip(values, types)
        )

        def write(columns, types=types, options=options):
            return record_key(list(zip(map(column, columns), types)), dialect=engine.dialect, **options)

        if vector["hex"] is None and vector.get("error") or non_ascii:
            failing.append((vector["name"], values, types, write))
            continue
        cases.append((values, types, write))
        key = reference.record_key(values, types, **options, algorithm="sha256")
        expected.append((vector["name"], key))
    got = _evaluate(engine, cases)
    assert [(name, g) for (name, _), g in zip(expected, got)] == expected
    assert len(cases) >= 90
    # A key the SQL cannot compute exactly fails the query, never hashes otherwise.
    for name, values, types, write in failing[:12]:
        with pytest.raises(Exception, match="hashexpr: ") as raised:
            _evaluate(engine, [(values, types, write)])
        assert "record_key" in str(raised.value), name


def _ascii(value: str | bytes, options: dict[str, Any]) -> bool:
    text = value if isinstance(value, bytes) else value.encode("utf-8")
    if options.get("trim"):
        text = text.strip(b" ")
    return all(b < 0x80 for b in text)


def test_sha256_vectors(engine):
    """The frozen hex of spec/sha256-vectors-v1.json (unkeyed, positional)."""
    cases, expected = [], []
    for vector in SHA256:
        if vector["key"] or vector["function"] == "record_hash_by_name_with":
            continue
        values, types = _typed(vector)
        options: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in vector["options"].split(";"))):
            name, _, value = item.partition("=")
            options[name] = value or True
        options.pop("algorithm")
        if engine.dialect == "postgres" and any("map" in str(a["type"]) for a in vector["args"]):
            continue
        if not engine.holds(values, types):
            continue
        function = record_key if vector["function"] == "record_key_with" else record_hash
        try:
            function(list(zip(map(column, column_names(len(types))), types)), dialect=engine.dialect, **options)
        except Unsupported as exc:
            assert engine.dialect == "mysql" and "mysql" in str(exc), exc
            continue

        def write(columns, types=types, function=function, options=options):
            return function(list(zip(map(column, columns), types)), dialect=engine.dialect, **options)

        cases.append((values, types, write))
        expected.append((vector["name"], bytes.fromhex(vector["hex"])))
    got = _evaluate(engine, cases)
    assert [(name, g) for (name, _), g in zip(expected, got)] == expected
    assert len(cases) >= {"postgres": 5, "mysql": 3}.get(engine.dialect, 11)
