"""Spark's dataset_fingerprint and record_hash_by_name agree with the pure-Python reference, bit for bit."""

from __future__ import annotations

import datetime
import decimal
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType
from test_spark_parity import SCALARS

from hashexpr import reference

ROWS = 3000
EPOCH = datetime.datetime(1970, 1, 1)


def _maybe(rng: random.Random, make, null_share: float = 0.1):
    return [None if rng.random() < null_share else make() for _ in range(ROWS)]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice("aZ\u00e9\u4e2d\U0001f600 _'`") for _ in range(rng.randrange(8)))


def _timestamp(rng: random.Random) -> datetime.datetime:
    return EPOCH + datetime.timedelta(microseconds=rng.randrange(-(10**16), 10**16))


def _generated_table(seed: int = 20240607) -> pa.Table:
    rng = random.Random(seed)
    point = pa.struct([("x", pa.int32()), ("label", pa.string())])
    columns = {
        "i8": pa.array(_maybe(rng, lambda: rng.randrange(-128, 128)), pa.int8()),
        "i16": pa.array(_maybe(rng, lambda: rng.randrange(-(2**15), 2**15)), pa.int16()),
        "i32": pa.array(_maybe(rng, lambda: rng.randrange(-(2**31), 2**31)), pa.int32()),
        "i64": pa.array(_maybe(rng, lambda: rng.randrange(-(2**63), 2**63)), pa.int64()),
        "u32": pa.array(_maybe(rng, lambda: rng.randrange(2**32)), pa.uint32()),
        "u64": pa.array(_maybe(rng, lambda: rng.randrange(2**64)), pa.uint64()),
        "f32": pa.array(_maybe(rng, lambda: rng.choice([rng.uniform(-1e6, 1e6), -0.0, float("nan"),
                                                         float("inf")])), pa.float32()),
        "f64": pa.array(_maybe(rng, lambda: rng.choice([rng.gauss(0, 1e9), -0.0, float("nan"),
                                                         float("-inf")])), pa.float64()),
        "flag": pa.array(_maybe(rng, lambda: rng.random() < 0.5), pa.bool_()),
        "dec_10_2": pa.array(_maybe(rng, lambda: decimal.Decimal(rng.randrange(-10**10 + 1, 10**10)).scaleb(-2)),
                             pa.decimal128(10, 2)),
        "dec_38_10": pa.array(_maybe(rng, lambda: decimal.Decimal(rng.randrange(-10**38 + 1, 10**38)).scaleb(-10)),
                              pa.decimal128(38, 10)),
        "text": pa.array(_maybe(rng, lambda: _text(rng)), pa.string()),
        "large text": pa.array(_maybe(rng, lambda: _text(rng)), pa.large_string()),
        "category": pa.array(_maybe(rng, lambda: rng.choice(["red", "green", ""]))).dictionary_encode(),
        "blob": pa.array(_maybe(rng, lambda: rng.randbytes(rng.randrange(6))), pa.binary()),
        "day": pa.array(_maybe(rng, lambda: rng.randrange(-700_000, 2_900_000)), pa.date32()),
        "at_utc": pa.array(_maybe(rng, lambda: _timestamp(rng)), pa.timestamp("us", tz="UTC")),
        "at_zoned": pa.array(_maybe(rng, lambda: _timestamp(rng)), pa.timestamp("ms", tz="America/New_York")),
        "wall": pa.array(_maybe(rng, lambda: _timestamp(rng)), pa.timestamp("us")),
        "wall_ns": pa.array(_maybe(rng, lambda: rng.randrange(-(10**15), 10**15) * 1000), pa.timestamp("ns")),
        "ints": pa.array(_maybe(rng, lambda: _maybe_list(rng, lambda: rng.randrange(-99, 99))),
                         pa.list_(pa.int32())),
        "texts": pa.array(_maybe(rng, lambda: _maybe_list(rng, lambda: _text(rng))), pa.large_list(pa.string())),
        "point": pa.array(_maybe(rng, lambda: {"x": rng.choice([None, rng.randrange(100)]), "label": _text(rng)}),
                          point),
        "attrs": pa.array(_maybe(rng, lambda: [(_text(rng) + str(k), rng.choice([None, rng.randrange(9)]))
                                               for k in range(rng.randrange(4))]),
                          pa.map_(pa.string(), pa.int64())),
        "nested": pa.array(_maybe(rng, lambda: [{"x": rng.randrange(5), "label": None}] * rng.randrange(3)),
                           pa.list_(point)),
        "nothing": pa.array([None] * ROWS, pa.null()),
    }
    table = pa.table(columns)
    # Every tenth row again: duplicates count.
    return pa.concat_tables([table, table.take(list(range(0, ROWS, 10)))])


def _maybe_list(rng: random.Random, make) -> list:
    return [None if rng.random() < 0.1 else make() for _ in range(rng.randrange(4))]


@pytest.fixture(scope="module")
def parquet_table(tmp_path_factory):
    table = _generated_table()
    path = tmp_path_factory.mktemp("fingerprint") / "table.parquet"
    # Spark reads no nanosecond timestamps; microseconds keep every value of the table.
    pq.write_table(table, path, coerce_timestamps="us", row_group_size=1000)
    return table, str(path), reference.fingerprint_arrow(table)


def test_parquet_types_are_the_reference_mapping(spark, parquet_table):
    table, path, _ = parquet_table
    schema = spark.read.parquet(path).schema
    assert schema.names == table.column_names
    expected = [reference.spark_type_string(reference.spark_type_of_arrow(f.type)) for f in table.schema]
    assert [reference.spark_type_string(f.dataType) for f in schema.fields] == expected


def test_dataset_fingerprint_of_parquet_equals_fingerprint_arrow(spark, parquet_table):
    _, path, expected = parquet_table
    df = spark.read.parquet(path)
    spark_fp = df.agg(F.call_function("dataset_fingerprint", F.col("*"))).first()[0]
    assert spark_fp == expected
    shuffled = df.repartition(5, "i32").agg(F.call_function("dataset_fingerprint", F.col("*"))).first()[0]
    assert shuffled == spark_fp


def test_a_changed_row_changes_both_fingerprints(spark, parquet_table, tmp_path):
    table, _, original = parquet_table
    changed = table.slice(1)
    path = str(tmp_path / "changed.parquet")
    pq.write_table(changed, path, coerce_timestamps="us")
    spark_fp = spark.read.parquet(path).agg(F.call_function("dataset_fingerprint", F.col("*"))).first()[0]
    assert spark_fp == reference.fingerprint_arrow(changed) != original


def test_dataset_fingerprint_of_pandas_parquet_equals_fingerprint_pandas(spark, tmp_path):
    import pandas as pd
    rng = random.Random(7)
    df = pd.DataFrame({
        "id": list(range(300)),
        "x": [rng.choice([rng.random(), float("nan")]) for _ in range(300)],
        "s": [rng.choice(["a", "\u00e9", None]) for _ in range(300)],
        "t": pd.to_datetime([rng.randrange(10**15) for _ in range(300)], unit="us"),
        "c": pd.Categorical([rng.choice(["u", "v"]) for _ in range(300)]),
    })
    path = str(tmp_path / "frame.parquet")
    df.to_parquet(path, index=False, coerce_timestamps="us")
    spark_fp = spark.read.parquet(path).agg(F.call_function("dataset_fingerprint", F.col("*"))).first()[0]
    assert spark_fp == reference.fingerprint_pandas(df)


# ---------------------------------------------------------------------------------------------
# record_hash_by_name on random rows

# Spark resolves column references case-insensitively, so the names differ in more than case here;
# names that differ only in case are in spec/by-name-vectors-v1.json.
NAMES = st.lists(st.text(alphabet="aAbB_z.\u00e9\uff5e\U0001f600 ", min_size=1, max_size=3), unique_by=str.lower,
                 min_size=len(SCALARS), max_size=len(SCALARS))


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    names=NAMES,
    rows=st.lists(st.tuples(*(st.none() | strategy for _, strategy in SCALARS)), min_size=30, max_size=60),
    null_columns=st.sets(st.integers(0, len(SCALARS) - 1), max_size=4),
    data=st.data(),
)
def test_record_hash_by_name_matches_reference(spark, names, rows, null_columns, data):
    types = [dtype for dtype, _ in SCALARS]
    rows = [tuple(None if i in null_columns else v for i, v in enumerate(row)) for row in rows]
    schema = StructType([StructField("idx", LongType()), *(StructField(n, t) for n, t in zip(names, types))])
    df = spark.createDataFrame([(i, *row) for i, row in enumerate(rows)], schema)
    order = data.draw(st.permutations(names))
    permuted = df.select("idx", *(F.col(_quoted(n)) for n in order))
    got = (
        df.select("idx", F.call_function("record_hash_by_name", *(F.col(_quoted(n)) for n in names)).alias("h"))
        .join(permuted.select("idx", F.expr("record_hash_by_name(* EXCEPT (idx))").alias("p")), "idx")
        .orderBy("idx")
        .collect()
    )
    assert len(got) == len(rows)
    by_name = dict(zip(names, types))
    for out, row in zip(got, rows):
        expected = reference.record_hash_by_name(list(zip(names, row)), by_name)
        assert bytes(out.h) == expected, row
        assert bytes(out.p) == expected, row
