"""hashexpr.sql.layered, the PostgreSQL keys and row hashes that reconcile's queries compute with bindings: the
frozen vectors replay through it in a real PostgreSQL, byte for byte the reference's SHA-256 (as the dialect's
single expression replays them in test_sql_vectors), with key options too."""

from __future__ import annotations

import re

import psycopg
import pytest
from pyspark.sql.types import StringType
from sql_engines import PostgresTypes, column_names
from test_sql_vectors import KEYS, V1, Engine, _ascii, _key_options, _typed

from hashexpr import reference
from hashexpr.options import KeyOptions
from hashexpr.sql import Unsupported, column, record_hash
from hashexpr.sql.layered import layered_query, postgres_record_hash, postgres_record_key


@pytest.fixture(scope="module")
def pg(postgres):
    with psycopg.connect(postgres.dsn, autocommit=True) as connection:
        connection.execute("SET TimeZone = 'Pacific/Chatham'")
        yield connection, Engine("postgres", None, PostgresTypes(connection))


def _rows(engine: Engine, names: list[str], values: list, types: list) -> str:
    row = ", ".join(f"{engine.literal(v, t)} AS {engine_quote(n)}" for n, v, t in zip(names, values, types))
    # OFFSET 0: PostgreSQL would otherwise fold the literals into the expression.
    return f"SELECT {row} OFFSET 0"


def engine_quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def test_format_v1_vectors_through_bindings(pg):
    connection, engine = pg
    replayed = 0
    for vector in V1:
        values, types = _typed(vector)
        names = column_names(len(types))
        columns = list(zip(map(column, names), types))
        if not engine.holds(values, types):
            continue
        try:
            record_hash(columns, dialect="postgres")
        except Unsupported:
            continue
        query = layered_query(postgres_record_hash(columns), _rows(engine, names, values, types), [], "h")
        got = bytes(connection.execute(query).fetchone()[0])
        assert got == reference.record_hash(values, types, algorithm="sha256"), vector["name"]
        replayed += 1
    assert replayed >= 140


def test_key_vectors_through_bindings(pg):
    connection, engine = pg
    replayed = failed = 0
    for vector in KEYS:
        values, types = _typed(vector)
        options = _key_options(vector)
        if not engine.holds(values, types) or any("collate" in str(a["type"]) for a in vector["args"]):
            continue
        names = column_names(len(types))
        settings = {
            "salt": "",
            "trim": False,
            "case": None,
            "empty_as_null": False,
            "null_key": "hash",
            **options,
        }
        key = postgres_record_key(list(zip(map(column, names), types)), KeyOptions.of(**settings))
        query = layered_query(key, _rows(engine, names, values, types), [], "k")
        non_ascii = options.get("case") and any(
            isinstance(t, StringType) and v is not None and not _ascii(v, options)
            for v, t in zip(values, types)
        )
        if vector["hex"] is None and vector.get("error") or non_ascii:
            # A key the SQL cannot compute exactly fails the query, never hashes otherwise.
            with pytest.raises(psycopg.Error, match="hashexpr: "):
                connection.execute(query).fetchone()
            failed += 1
            continue
        got = connection.execute(query).fetchone()[0]
        expected = reference.record_key(values, types, **options, algorithm="sha256")
        assert (None if got is None else bytes(got)) == expected, vector["name"]
        replayed += 1
    assert replayed >= 90 and failed >= 5


def test_every_binding_is_read_after_the_level_that_computes_it():
    """Each binding is a column of one level and read only by later levels or the final expression."""
    h = postgres_record_hash([("x", "double"), ("d", "decimal(30,4)"), ("s", "string"), ("t", "timestamp")])
    assert len(h.levels) == 4
    for i, level in enumerate(h.levels):
        later = " ".join(sql for next_level in h.levels[i + 1 :] for _, sql in next_level) + h.expression
        for name, sql in level:
            assert re.search(rf"\b{name}\b", later), name
            assert not any(re.search(rf"\b{other}\b", sql) for other, _ in level if other != name)
    query = layered_query(h, "SELECT * FROM t", ['"id"'], "h")
    assert query.count("OFFSET 0") == len(h.levels)
