"""Spark's record_hash and the pure-Python reference agree, bit for bit, on random rows of every type."""

from __future__ import annotations

import datetime
import decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DayTimeIntervalType,
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
from spark_conf import EXECUTION_MODES, spark_conf

from hashexpr import reference

UTC = datetime.timezone.utc
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


def _int(bits: int):
    return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _decimal(precision: int, scale: int):
    # From the unscaled integer, in a context wide enough for 38 digits: the default context (28 digits)
    # would round the largest values up, out of the type's range.
    wide = decimal.Context(prec=precision + 2)
    return st.integers(-(10**precision - 1), 10**precision - 1).map(
        lambda unscaled: decimal.Decimal(unscaled).scaleb(-scale, wide)
    )


SCALARS = [
    (BooleanType(), st.booleans()),
    (ByteType(), _int(8)),
    (ShortType(), _int(16)),
    (IntegerType(), _int(32)),
    (LongType(), _int(64)),
    (FloatType(), st.floats(width=32)),
    (DoubleType(), st.floats()),
    (DecimalType(10, 2), _decimal(10, 2)),
    (DecimalType(18, 0), _decimal(18, 0)),
    (DecimalType(38, 18), _decimal(38, 18)),
    (StringType(), TEXT),
    (BinaryType(), st.binary(max_size=40)),
    (DateType(), st.dates(min_value=datetime.date(1, 1, 1))),
    (
        TimestampType(),
        st.datetimes(min_value=datetime.datetime(1800, 1, 1), max_value=datetime.datetime(2200, 1, 1),
                     timezones=st.just(UTC)),
    ),
    (
        TimestampNTZType(),
        st.datetimes(min_value=datetime.datetime(1, 1, 1), max_value=datetime.datetime(9999, 12, 31)),
    ),
    (DayTimeIntervalType(), st.timedeltas(min_value=datetime.timedelta(days=-10**6),
                                          max_value=datetime.timedelta(days=10**6))),
]

NESTED = [
    (ArrayType(IntegerType()), st.lists(st.none() | _int(32), max_size=5)),
    (ArrayType(ArrayType(StringType())), st.lists(st.none() | st.lists(st.none() | TEXT, max_size=3), max_size=3)),
    (MapType(StringType(), LongType()), st.dictionaries(TEXT, st.none() | _int(64), max_size=5)),
    (
        MapType(IntegerType(), ArrayType(DoubleType())),
        st.dictionaries(_int(32), st.none() | st.lists(st.none() | st.floats(), max_size=3), max_size=4),
    ),
    (
        StructType([
            StructField("a", IntegerType()),
            StructField("b", StringType()),
            StructField("c", MapType(StringType(), DecimalType(20, 3))),
        ]),
        st.tuples(st.none() | _int(32), st.none() | TEXT,
                  st.none() | st.dictionaries(TEXT, st.none() | _decimal(20, 3), max_size=3)),
    ),
    (
        ArrayType(MapType(StringType(), ArrayType(BooleanType()))),
        st.lists(st.none() | st.dictionaries(TEXT, st.none() | st.lists(st.none() | st.booleans(), max_size=3),
                                             max_size=3), max_size=3),
    ),
]


def _rows(columns):
    return st.lists(st.tuples(*(st.none() | strategy for _, strategy in columns)), min_size=1, max_size=60)


def _check(spark, columns, rows):
    schema = StructType([StructField(f"c{i}", t) for i, (t, _) in enumerate(columns)])
    types = [t for t, _ in columns]
    df = spark.createDataFrame([(i, *row) for i, row in enumerate(rows)],
                               StructType([StructField("idx", LongType()), *schema.fields]))
    hashes = [f"record_hash(c{i})" for i in range(len(columns))]
    got = df.selectExpr("idx", f"record_hash({', '.join(schema.names)})", *hashes).orderBy("idx").collect()
    assert len(got) == len(rows)
    for out, row in zip(got, rows):
        for i, (t, value) in enumerate(zip(types, row)):
            assert bytes(out[2 + i]) == reference.record_hash([value], [t]), f"{t.simpleString()}: {value!r}"
        assert bytes(out[1]) == reference.record_hash(list(row), types)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(rows=_rows(SCALARS))
def test_scalar_types_match_reference(spark, rows):
    _check(spark, SCALARS, rows)


@SETTINGS
@given(rows=_rows(NESTED))
def test_nested_types_match_reference(spark, rows):
    _check(spark, NESTED, rows)


LCASE_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x24F) | st.characters(min_codepoint=0x391,
                                                                                    max_codepoint=0x44F),
    max_size=12,
)


@SETTINGS
@given(values=st.lists(st.none() | LCASE_TEXT, min_size=1, max_size=40))
def test_utf8_lcase_strings_match_reference(spark, values):
    df = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "idx BIGINT, s STRING")
    got = df.selectExpr("idx", "record_hash(collate(s, 'UTF8_LCASE'))").orderBy("idx").collect()
    lcase = StringType("UTF8_LCASE")
    for out, v in zip(got, values):
        assert bytes(out[1]) == reference.record_hash([v], [lcase]), repr(v)


#: Decimals whose trailing zeros, sign and width test the normalisation (FORMAT.md), up to 18 digits (the
#: generated code passes those as a long and a scale) and past it.
DECIMAL_EDGES = [
    (DecimalType(18, 0), ["0", "1", "-1", "10", "-100", "999999999999999999", "-999999999999999999",
                          "100000000000000000", "-128", "127", "128", "-129", "32768", "-32769"]),
    (DecimalType(18, 2), ["0.00", "1.50", "-1.50", "0.01", "10.00", "9999999999999999.99", "-0.10"]),
    (DecimalType(18, 18), ["0.100000000000000000", "-0.999999999999999999", "0.000000000000000001"]),
    (DecimalType(4, 4), ["0.1000", "-0.0001"]),
    (DecimalType(19, 0), ["9999999999999999999", "-9223372036854775808", "1000000000000000000"]),
    (DecimalType(38, 10), ["1234567890123456789012345678.0000000000", "-0.5000000000"]),
]


def test_decimals_match_reference_in_generated_and_interpreted_code(spark):
    for dtype, texts in DECIMAL_EDGES:
        values = [decimal.Decimal(t) for t in texts] + [None]
        nested = [ArrayType(dtype), StructType([StructField("d", dtype)]), MapType(StringType(), dtype)]
        df = spark.createDataFrame(
            [(i, v, [v, v], (v,), {"k": v}) for i, v in enumerate(values)],
            StructType([StructField("idx", LongType()), StructField("d", dtype),
                        *(StructField(f"n{j}", t) for j, t in enumerate(nested))]),
        )
        for mode, conf in EXECUTION_MODES.items():
            with spark_conf(spark, conf):
                got = df.selectExpr("idx", "record_hash(d)", "record_hash(n0, n1, n2)").orderBy("idx").collect()
            for row, v in zip(got, values):
                assert bytes(row[1]) == reference.record_hash([v], [dtype]), f"{mode} {dtype.simpleString()} {v}"
                assert bytes(row[2]) == reference.record_hash([[v, v], (v,), {"k": v}], nested), f"{mode} {v}"
