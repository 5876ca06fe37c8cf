"""hashexpr.reconcile on generated tables (hypothesis): keys and columns of every type each pair of systems holds
(integers of every width, FLOAT, DOUBLE, decimals of every precision and scale, strings, binary, booleans, dates,
timestamps, arrays, structs, and maps where both systems have them), edge values and NULLs at every depth, a
wider type on the target side, and random inserts, deletes, updates, duplicate and NULL keys.

The expected result comes from hashexpr.reference, the format in pure Python: keys match when their
``record_key`` is equal, rows when their ``record_hash`` is, and a column changed when its own ``record_hash``
did; a key's rows are compared as a multiset, as hx.diff compares them (docs/DIFF.md).
"""

from __future__ import annotations

import decimal
from collections import Counter, defaultdict

import duckdb
import psycopg
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)
from reconcile_data import arrow_table, duckdb_table, postgres_table, write_parquet
from test_sql_differential import _values

from hashexpr import reconcile as rc
from hashexpr import reference

ATOMIC = [ByteType(), ShortType(), IntegerType(), LongType(), FloatType(), DoubleType(), StringType(), BinaryType(),
          BooleanType(), DateType(), TimestampType(), TimestampNTZType()]  # fmt: skip
KEY_TYPES = [LongType(), IntegerType(), StringType(), DecimalType(10, 2), DateType(), TimestampType(), DoubleType(),
             BinaryType()]  # fmt: skip


def _types(maps: bool):
    atomic = st.one_of(
        st.sampled_from(ATOMIC),
        st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: DecimalType(p, s))),
    )
    nested = [
        atomic.map(ArrayType),
        st.tuples(atomic, atomic).map(
            lambda ts: StructType([StructField("a", ts[0]), StructField("b", ts[1])])
        ),
        atomic.map(lambda t: ArrayType(StructType([StructField("x", t)]))),
    ]
    if maps:
        nested.append(atomic.map(lambda t: MapType(StringType(), t)))
    return st.one_of(atomic, *nested)


def _wider(dtype):
    """The type the target declares: a wider one where format v1 hashes both alike."""
    if isinstance(dtype, (ByteType, ShortType, IntegerType)):
        return LongType()
    if isinstance(dtype, FloatType):
        return DoubleType()
    if isinstance(dtype, DecimalType) and dtype.precision <= 36:
        return DecimalType(dtype.precision + 2, min(dtype.scale + 1, dtype.precision + 2))
    return dtype


@st.composite
def tables(draw, maps: bool):
    keys = draw(st.lists(st.sampled_from(KEY_TYPES), min_size=1, max_size=2))
    others = draw(st.lists(_types(maps), min_size=2, max_size=3))
    source_types = keys + others
    widen = draw(st.lists(st.booleans(), min_size=len(source_types), max_size=len(source_types)))
    target_types = [_wider(t) if w else t for t, w in zip(source_types, widen)]
    row = st.tuples(*(_values(t) for t in source_types))
    # Distinct keys to begin with (as their encodings are): the operations below make the duplicates.
    rows = draw(st.lists(row, min_size=2, max_size=10, unique_by=lambda r: _key(r, keys)))
    rows = [list(r) for r in rows]
    target = [list(r) for r in rows]
    operations = st.sampled_from(["update", "update", "update", "delete", "insert", "duplicate", "null_key"])
    for op in draw(st.lists(operations, min_size=1, max_size=4)):
        if op == "delete" and target:
            target.pop(draw(st.integers(0, len(target) - 1)))
        elif op == "insert":
            target.append(list(draw(row)))
        elif op == "update" and target:
            i = draw(st.integers(0, len(target) - 1))
            changed = st.integers(len(keys), len(source_types) - 1)
            for j in draw(st.lists(changed, min_size=1, max_size=len(others), unique=True)):
                target[i][j] = draw(st.none() | _values(source_types[j]))
        elif op == "duplicate" and target:
            target.append(list(target[draw(st.integers(0, len(target) - 1))]))
        elif op == "null_key" and target:
            target[draw(st.integers(0, len(target) - 1))][draw(st.integers(0, len(keys) - 1))] = None
    names = [f"k{i}" for i in range(len(keys))] + [f"c{i}" for i in range(len(others))]
    # Decimals of the wider scale hold the same values.
    return names, len(keys), source_types, target_types, rows, target


def _key(row, types) -> bytes:
    return reference.record_key(list(row[: len(types)]), types, algorithm="sha256")


def _expected(names, key_count, source_types, target_types, source_rows, target_rows) -> Counter:
    """hx.diff's rows, from the reference alone."""
    keys = names[:key_count]
    found: Counter = Counter()
    by_key: dict = defaultdict(lambda: ([], []))
    for side, (rows, types) in enumerate(((source_rows, source_types), (target_rows, target_types))):
        for row in rows:
            if any(v is None for v in row[:key_count]):
                found[(None, "null_key", ("source", "target")[side], ())] += 1
                continue
            key = reference.record_key(row[:key_count], types[:key_count], algorithm="sha256")
            by_key[key][side].append((row, reference.record_hash(row, types, algorithm="sha256")))
    for a, b in by_key.values():
        if sorted(h for _, h in a) == sorted(h for _, h in b):
            continue
        if len(a) <= 1 and len(b) <= 1:
            if a and b:
                changed = tuple(
                    n for j, n in enumerate(names) if j >= key_count and reference.record_hash(
                        [a[0][0][j]], [source_types[j]], algorithm="sha256"
                    ) != reference.record_hash([b[0][0][j]], [target_types[j]], algorithm="sha256")
                )  # fmt: skip
                found[(len(keys), "update", "both", changed)] += 1
            elif a:
                found[(len(keys), "delete", "source", ())] += 1
            else:
                found[(len(keys), "insert", "target", ())] += 1
        else:
            found[(len(keys), "duplicate_key", "source", ())] += len(a)
            found[(len(keys), "duplicate_key", "target", ())] += len(b)
    return found


def _found(result, key_count: int) -> Counter:
    return Counter(
        (
            None if r["change"] == "null_key" else key_count,
            r["change"],
            r["side"],
            tuple(r["changed_columns"] or ()),
        )
        for r in result.changes().to_pylist()
    )


def _fits_postgres(rows, types) -> bool:
    """PostgreSQL arrays of arrays are rectangular, and its text holds no NUL."""
    return not any(isinstance(t, ArrayType) and isinstance(t.elementType, ArrayType) for t in types)


@pytest.fixture(scope="module")
def pg(postgres):
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS hx_reconcile_generated")
        admin.execute("CREATE DATABASE hx_reconcile_generated")
    dsn = postgres.dsn.replace("dbname=postgres", "dbname=hx_reconcile_generated")
    with psycopg.connect(dsn, autocommit=True) as conn:
        yield dsn, conn


def _side(system, name, names, types, rows, pg, tmp_path, spark=None):
    columns = list(zip(names, types))
    if system == "postgres":
        dsn, conn = pg
        postgres_table(conn, name, columns, rows)
        return rc.postgres(dsn, name)
    table = arrow_table(columns, rows)
    if system == "duckdb":
        con = duckdb.connect()
        duckdb_table(con, name, table)
        return rc.duckdb(con, name)
    if system == "parquet":
        path = tmp_path / f"{name}.parquet"
        write_parquet(table, str(path))
        return rc.parquet(path)
    if system == "spark":
        path = tmp_path / f"{name}.parquet"
        write_parquet(table, str(path))
        return rc.spark(spark.read.parquet(str(path)))
    return rc.arrow(table)


PAIRS = [("postgres", "duckdb"), ("duckdb", "postgres"), ("postgres", "arrow"), ("parquet", "postgres"),
         ("duckdb", "parquet"), ("arrow", "duckdb")]  # fmt: skip

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@SETTINGS
@given(pair=st.sampled_from(PAIRS), data=st.data())
def test_generated_tables_between_systems(pg, tmp_path_factory, pair, data):
    with_pg = "postgres" in pair
    names, key_count, source_types, target_types, source_rows, target_rows = data.draw(
        tables(maps=not with_pg)
    )
    if with_pg:
        source_types = [_pg_safe(t) for t in source_types]
        target_types = [_pg_safe(t) for t in target_types]
    tmp = tmp_path_factory.mktemp("generated")
    source = _side(pair[0], "source_t", names, source_types, source_rows, pg, tmp)
    target = _side(pair[1], "target_t", names, target_types, target_rows, pg, tmp)
    result = rc.compare(source, target, key=names[:key_count])
    expected = _expected(names, key_count, source_types, target_types, source_rows, target_rows)
    assert _found(result, key_count) == expected
    assert sum(result.counts.values()) - result.counts["unchanged"] == sum(expected.values())


def _pg_safe(dtype):
    """A type PostgreSQL holds: a tinyint is a smallint there (the same hash)."""
    if isinstance(dtype, ByteType):
        return ShortType()
    if isinstance(dtype, ArrayType):
        return ArrayType(_pg_safe(dtype.elementType))
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, _pg_safe(f.dataType)) for f in dtype.fields])
    return dtype


@settings(max_examples=3, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(data=st.data())
def test_generated_tables_against_spark(pg, spark, tmp_path_factory, data):
    names, key_count, source_types, target_types, source_rows, target_rows = data.draw(tables(maps=False))
    source_types = [_pg_safe(t) for t in source_types]
    target_types = [_pg_safe(t) for t in target_types]
    tmp = tmp_path_factory.mktemp("generated-spark")
    source = _side("postgres", "source_s", names, source_types, source_rows, pg, tmp)
    target = _side("spark", "target_s", names, target_types, target_rows, pg, tmp, spark)
    result = rc.compare(source, target, key=names[:key_count])
    assert _found(result, key_count) == _expected(
        names, key_count, source_types, target_types, source_rows, target_rows
    )


def test_decimal_values_fit_the_wider_type():
    assert _wider(DecimalType(5, 5)) == DecimalType(7, 6)
    assert decimal.Decimal("0.12345").quantize(decimal.Decimal("0.000001")) == decimal.Decimal("0.123450")
