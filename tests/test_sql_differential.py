"""hashexpr.sql against the jar, on generated values of every type and option (hypothesis).

For each generated type and a few rows of values (edges included: integer limits, -0.0, NaN, infinities,
subnormals, 38-digit decimals with trailing zeros, multi-byte and space-padded strings, far dates, timestamps
before 1970, NULLs at every depth), the jar's ``record_hash_with('algorithm=sha256', ...)`` /
``record_key_with('algorithm=sha256; ...', ...)`` in Spark is the expected value; the Spark SQL dialect is
evaluated in the same query, PostgreSQL and DuckDB in their own sessions (outside UTC), and the reference must
agree too.
"""

from __future__ import annotations

import decimal

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
from sql_engines import PostgresTypes, column_names, literal, rows_query

from hashexpr import reference
from hashexpr.sql import Unsupported, column, record_hash, record_key
from hashexpr.sql import dialect as sql_dialect
from hashexpr.sql.types import type_name

ROWS = 4
FIRST_DAY, LAST_DAY = -719162, 2932896  # 0001-01-01, 9999-12-31
FIRST_MICRO, LAST_MICRO = FIRST_DAY * 86400000000, (LAST_DAY + 1) * 86400000000 - 1

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
EDGE_DOUBLES = [-0.0, 0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, float("nan"),
                float("inf"), float("-inf"), 1.0, 0.1]


def _values(dtype):
    if isinstance(dtype, (ByteType, ShortType, IntegerType, LongType)):
        bits = {ByteType: 8, ShortType: 16, IntegerType: 32, LongType: 64}[type(dtype)]
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        return st.one_of(st.sampled_from([low, high, 0, -1]), st.integers(low, high))
    if isinstance(dtype, DoubleType):
        return st.one_of(st.sampled_from(EDGE_DOUBLES), st.floats())
    if isinstance(dtype, FloatType):
        return st.one_of(st.sampled_from([-0.0, 1.401298464324817e-45, float("nan"), float("inf")]), st.floats(width=32))
    if isinstance(dtype, DecimalType):
        p, s = dtype.precision, dtype.scale
        digits = st.integers(-(10**p - 1), 10**p - 1)
        zeros = st.builds(lambda k, z: k * 10**z, st.integers(-9, 9), st.integers(0, p - 1))
        unscaled = st.one_of(digits, zeros.filter(lambda u: abs(u) < 10**p), st.sampled_from([0, 10**p - 1]))
        # Exactly: the default context would round 38 digits to 28.
        return unscaled.map(lambda u: decimal.Decimal(u).scaleb(-s, decimal.Context(prec=p + 1)))
    if isinstance(dtype, StringType):
        return st.one_of(TEXT, TEXT.map(lambda t: f"  {t} "))
    if isinstance(dtype, BinaryType):
        return st.binary(max_size=16)
    if isinstance(dtype, BooleanType):
        return st.booleans()
    if isinstance(dtype, DateType):
        return st.one_of(st.sampled_from([FIRST_DAY, LAST_DAY, -1]), st.integers(FIRST_DAY, LAST_DAY))
    if isinstance(dtype, (TimestampType, TimestampNTZType)):
        return st.one_of(st.sampled_from([FIRST_MICRO, LAST_MICRO, -1]), st.integers(FIRST_MICRO, LAST_MICRO))
    if isinstance(dtype, ArrayType):
        return st.lists(st.none() | _values(dtype.elementType), max_size=3)
    if isinstance(dtype, StructType):
        return st.tuples(*(st.none() | _values(f.dataType) for f in dtype.fields))
    if isinstance(dtype, MapType):
        keys = st.lists(TEXT, max_size=3, unique=True)
        return keys.flatmap(lambda ks: st.tuples(*(st.none() | _values(dtype.valueType) for _ in ks)).map(
            lambda vs: list(zip(ks, vs))
        ))
    raise AssertionError(dtype)


ATOMIC = st.one_of(
    st.sampled_from([ByteType(), ShortType(), IntegerType(), LongType(), FloatType(), DoubleType(), StringType(),
                     BinaryType(), BooleanType(), DateType(), TimestampType(), TimestampNTZType()]),
    st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: DecimalType(p, s))),
)
NESTED = st.one_of(
    ATOMIC.map(lambda t: ArrayType(t)),
    st.tuples(ATOMIC, ATOMIC).map(lambda ts: StructType([StructField("a", ts[0]), StructField("b", ts[1])])),
    ATOMIC.map(lambda t: MapType(StringType(), t)),
    ATOMIC.map(lambda t: ArrayType(StructType([StructField("x", t), StructField("y", ArrayType(t))]))),
)


@pytest.fixture(scope="module")
def engines(spark, postgres):
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'Pacific/Chatham'")
    with psycopg.connect(postgres.dsn, autocommit=True) as pg:
        pg.execute("SET TimeZone = 'America/St_Johns'")
        yield {"spark": spark, "duckdb": duck, "postgres": pg, "pg_types": PostgresTypes(pg)}
    duck.close()


def _compare(engines, cases, write, jar_call):
    """The jar's bytes for every case and row, the Spark dialect's beside them in the same query, then
    PostgreSQL's and DuckDB's, each engine in one query for the whole batch.

    ``cases`` are ``(type, rows)``; ``write(dialect, i, name)`` is case ``i``'s expression over the column
    ``name``, and ``jar_call(i)`` the jar's call up to its argument.
    """
    names = [column_names(1)[0] + str(i) for i in range(len(cases))]
    quote = sql_dialect("spark").quote
    spark_rows = [[literal(rows[r], dtype, "spark") for dtype, rows in cases] for r in range(ROWS)]
    expressions = []
    for i, name in enumerate(names):
        expressions += [write("spark", i, name), f"{jar_call(i)}{quote(name)})"]
    query = rows_query("spark", names, spark_rows, expressions)
    result = [[None if v is None else bytes(v) for v in row] for row in engines["spark"].sql(query).collect()]
    expected = [[row[2 * i + 1] for row in result] for i in range(len(cases))]
    for i, (dtype, rows) in enumerate(cases):
        assert [row[2 * i] for row in result] == expected[i], ("spark", type_name(dtype), rows)
    for dialect in ("postgres", "duckdb"):
        chosen = []
        for i, (dtype, _) in enumerate(cases):
            try:
                chosen.append((i, write(dialect, i, names[i])))
            except Unsupported:
                assert dialect == "postgres" and ("map" in type_name(dtype) or "array<array" in type_name(dtype))
        if not chosen:
            continue
        lits = [
            [literal(cases[i][1][r], cases[i][0], dialect, engines["pg_types"]) for i, _ in chosen] for r in range(ROWS)
        ]
        query = rows_query(dialect, [names[i] for i, _ in chosen], lits, [sql for _, sql in chosen])
        got = engines[dialect].execute(query).fetchall()
        for k, (i, _) in enumerate(chosen):
            column = [None if row[k] is None else bytes(row[k]) for row in got]
            assert column == expected[i], (dialect, type_name(cases[i][0]), cases[i][1])
    return expected


#: Each example is a batch of cases evaluated together (one query per engine): Spark's cost is mostly
#: planning, paid per query. Derandomized, so every run checks the same examples; not shrunk, since each
#: step of shrinking a batch would plan it again, and a failure names its type and rows as it is.
BATCH = 12
SETTINGS = settings(
    max_examples=4,
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
CASES = st.one_of(ATOMIC, NESTED).flatmap(
    lambda t: st.tuples(st.just(t), st.lists(st.none() | _values(t), min_size=ROWS, max_size=ROWS))
)


@SETTINGS
@given(st.lists(CASES, min_size=BATCH, max_size=BATCH))
def test_record_hash_matches_the_jar(engines, cases):
    def write(dialect, i, name):
        return record_hash([(column(name), cases[i][0])], dialect=dialect)

    expected = _compare(engines, cases, write, lambda i: "record_hash_with('algorithm=sha256', ")
    for (dtype, rows), hashes in zip(cases, expected):
        assert hashes == [reference.record_hash([v], [dtype], algorithm="sha256") for v in rows]


ASCII = st.text(st.characters(min_codepoint=1, max_codepoint=127), max_size=8)
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "salt": st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e, blacklist_characters=";'\\"), min_size=1,
                        max_size=5),
        "trim": st.just(True),
        "case": st.sampled_from(["upper", "lower"]),
        "empty_as_null": st.just(True),
        "null_key": st.sampled_from(["hash", "null"]),
    },
)
KEYS = st.tuples(OPTIONS, st.lists(st.none() | ASCII.map(lambda t: f" {t}  "), min_size=ROWS, max_size=ROWS))


def _key_call(options) -> str:
    items = [f"salt={options['salt']}"] if "salt" in options else []
    items += [name for name in ("trim", "empty_as_null") if name in options]
    items += [f"{name}={options[name]}" for name in ("case", "null_key") if name in options]
    return f"record_key_with('{'; '.join(['algorithm=sha256', *items])}', "


@SETTINGS
@given(st.lists(KEYS, min_size=BATCH, max_size=BATCH))
def test_record_key_matches_the_jar(engines, keys):
    def write(dialect, i, name):
        return record_key([(column(name), "string")], dialect=dialect, **keys[i][0])

    cases = [(StringType(), rows) for _, rows in keys]
    expected = _compare(engines, cases, write, lambda i: _key_call(keys[i][0]))
    for (options, rows), hashes in zip(keys, expected):
        assert hashes == [reference.record_key([v], [StringType()], **options, algorithm="sha256") for v in rows]


@pytest.mark.parametrize("dtype", [DecimalType(5, 2), DecimalType(30, 2)], ids=["narrow", "wide"])
def test_a_postgresql_numeric_nan_fails_the_query_by_name(engines, dtype):
    """A NaN in a numeric column has no Spark decimal value: the query fails with that message, not with a cast
    error of the digits it does not have (a narrow decimal's digits are read as a bigint)."""
    pg = engines["postgres"]
    pg.execute("DROP TABLE IF EXISTS hx_nan")
    pg.execute("CREATE TABLE hx_nan (c numeric)")
    pg.execute("INSERT INTO hx_nan VALUES (1.5), (CAST('NaN' AS numeric))")
    with pytest.raises(
        psycopg.errors.InvalidTextRepresentation, match="hashexpr: a numeric NaN has no Spark decimal"
    ):
        pg.execute(f"SELECT {record_hash([(column('c'), dtype)], dialect='postgres')} FROM hx_nan")
