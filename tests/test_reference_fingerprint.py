"""The reference's dataset fingerprints (docs/FORMAT.md, section 5), also of Arrow tables and pandas frames."""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
import struct
import subprocess
import sys
from pathlib import Path

import mmh3
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CharType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
    YearMonthIntervalType,
)
from test_golden_vectors import decode, parse_type

from hashexpr.reference import (
    dataset_fingerprint,
    encode_record,
    fingerprint_arrow,
    fingerprint_pandas,
    schema_hash,
    spark_type_of_arrow,
    spark_type_string,
)
from hashexpr.spark.types import CalendarIntervalType

ROOT = Path(__file__).resolve().parents[1]
SEED = 0x68617368
VECTORS_FILE = ROOT / "spec" / "fingerprint-vectors-v1.json"
DOCUMENT = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
VECTORS = DOCUMENT["vectors"]
BY_VECTOR_NAME = {vector["name"]: vector for vector in VECTORS}

INT, LONG, STRING = IntegerType(), LongType(), StringType()
# The example in the Scala function's documentation: dataset_fingerprint(id) FROM range(0).
EMPTY_BIGINT_ID = "hx1:13f2888eec11c90f5eb8b7bd9baed23c7bd05dc99306f4a632d24011fe48b1ef"


def string(text: str) -> bytes:
    data = text.encode("utf-8")
    return b"\x05" + struct.pack("<I", len(data)) + data


def murmur(data: bytes) -> bytes:
    return mmh3.mmh3_x64_128_digest(data, SEED)


def hand_schema(names: list[str], type_strings: list[str]) -> bytes:
    fields = b"".join(string(n) + string(t) for n, t in zip(names, type_strings))
    return murmur(b"\x01" + struct.pack("<I", 2 * len(names)) + fields)


def hand_fingerprint(schema: bytes, count: int, total: int) -> str:
    data = b"hashexpr-fingerprint" + b"\x01" + schema + struct.pack("<q", count)
    data += (total % 2**128).to_bytes(16, "little")
    return "hx1:" + hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------
# Computed by hand from the spec


def test_empty_input_by_hand():
    expected = hand_fingerprint(hand_schema(["id"], ["bigint"]), 0, 0)
    assert expected == EMPTY_BIGINT_ID
    assert dataset_fingerprint([], ["id"], [LONG]) == expected


def test_two_rows_by_hand():
    rows = [(1, "a"), (-7, None)]
    records = [
        b"\x01\x02\x00\x00\x00" + b"\x02" + struct.pack("<q", 1) + string("a"),
        b"\x01\x02\x00\x00\x00" + b"\x02" + struct.pack("<q", -7) + b"\x00",
    ]
    total = sum(int.from_bytes(murmur(r), "little") for r in records)
    expected = hand_fingerprint(hand_schema(["id", "s"], ["int", "string"]), 2, total)
    assert dataset_fingerprint(rows, ["id", "s"], [INT, STRING]) == expected


def test_schema_hash_by_hand():
    names = ["k", "m"]
    types = [DecimalType(10, 2), MapType(STRING, ArrayType(INT))]
    assert schema_hash(names, types) == hand_schema(names, ["decimal(10,2)", "map<string,array<int>>"])


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (BooleanType(), "boolean"),
        (ByteType(), "tinyint"),
        (ShortType(), "smallint"),
        (IntegerType(), "int"),
        (LongType(), "bigint"),
        (FloatType(), "float"),
        (DoubleType(), "double"),
        (DecimalType(38, 18), "decimal(38,18)"),
        (StringType(), "string"),
        (StringType("UTF8_LCASE"), "string collate UTF8_LCASE"),
        (StringType("UTF8_BINARY"), "string"),
        (CharType(3), "string"),
        (VarcharType(10), "string"),
        (ArrayType(CharType(2)), "array<string>"),
        (BinaryType(), "binary"),
        (DateType(), "date"),
        (TimestampType(), "timestamp"),
        (TimestampNTZType(), "timestamp_ntz"),
        (DayTimeIntervalType(), "interval day to second"),
        (DayTimeIntervalType(DayTimeIntervalType.HOUR), "interval hour"),
        (YearMonthIntervalType(), "interval year to month"),
        (CalendarIntervalType(), "interval"),
        (NullType(), "void"),
        (ArrayType(ArrayType(LONG, False), True), "array<array<bigint>>"),
        (MapType(STRING, DoubleType(), False), "map<string,double>"),
        (
            StructType([StructField("a", INT, False), StructField("we`ird name", ArrayType(STRING))]),
            "struct<`a`:int,`we``ird name`:array<string>>",
        ),
        (StructType([]), "struct<>"),
    ],
)
def test_spark_type_string(dtype, expected):
    assert spark_type_string(dtype) == expected


# ---------------------------------------------------------------------------------------------
# Properties

ROWS = st.lists(st.tuples(st.none() | st.integers(-(2**63), 2**63 - 1), st.none() | st.text(max_size=5)),
                max_size=30)
TYPES = [LONG, STRING]


@settings(max_examples=150, deadline=None)
@given(rows=ROWS, data=st.data())
def test_row_order_does_not_matter(rows, data):
    shuffled = data.draw(st.permutations(rows))
    assert dataset_fingerprint(shuffled, ["n", "s"], TYPES) == dataset_fingerprint(rows, ["n", "s"], TYPES)


@settings(max_examples=150, deadline=None)
@given(rows=ROWS)
def test_fingerprint_is_count_and_sum_of_record_hashes(rows):
    total = sum(int.from_bytes(murmur(encode_record(row, TYPES)), "little") for row in rows)
    expected = hand_fingerprint(hand_schema(["n", "s"], ["bigint", "string"]), len(rows), total)
    assert dataset_fingerprint(iter(rows), ["n", "s"], TYPES) == expected


@settings(max_examples=150, deadline=None)
@given(rows=ROWS.filter(bool), data=st.data())
def test_a_duplicate_row_changes_the_fingerprint(rows, data):
    duplicate = data.draw(st.sampled_from(rows))
    assert dataset_fingerprint(rows + [duplicate], ["n", "s"], TYPES) != dataset_fingerprint(rows, ["n", "s"], TYPES)


def test_count_is_hashed_even_when_the_sum_is_unchanged():
    # 2^128 copies of a row add up to SUM = 0, like no rows; the count is the only difference.
    schema = hand_schema(["n"], ["bigint"])
    assert hand_fingerprint(schema, 1, 0) != hand_fingerprint(schema, 0, 0) == dataset_fingerprint([], ["n"], [LONG])


def test_names_and_types_count_but_nullability_does_not():
    rows = [(1,), (2,)]
    base = dataset_fingerprint(rows, ["n"], [INT])
    assert dataset_fingerprint(rows, ["m"], [INT]) != base
    assert dataset_fingerprint(rows, ["n"], [LONG]) != base
    arrays = [([1, None],)]
    assert dataset_fingerprint(arrays, ["a"], [ArrayType(INT, True)]) == dataset_fingerprint(
        arrays, ["a"], [ArrayType(INT, False)])


def test_mismatched_names_and_types_are_rejected():
    with pytest.raises(ValueError):
        dataset_fingerprint([], ["a", "b"], [INT])


# ---------------------------------------------------------------------------------------------
# Frozen vectors


def test_file_header_and_size():
    assert DOCUMENT["format_version"] == 1 and DOCUMENT["seed"] == SEED
    assert len(VECTORS) >= 12 and len(BY_VECTOR_NAME) == len(VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["name"] for vector in VECTORS])
def test_reference_reproduces_vector(vector):
    names = [column["name"] for column in vector["columns"]]
    types = [parse_type(column["type"]) for column in vector["columns"]]
    rows = [[decode(value, dtype) for value, dtype in zip(row, types)] for row in vector["rows"]]
    assert dataset_fingerprint(rows, names, types) == vector["fingerprint"]


def test_frozen_vectors_agree_and_differ_as_the_spec_says():
    fp = {name: vector["fingerprint"] for name, vector in BY_VECTOR_NAME.items()}
    assert fp["two_rows"] == fp["two_rows_reversed"]
    assert fp["empty_bigint"] == EMPTY_BIGINT_ID
    distinct = ["empty", "one_row", "two_rows", "duplicate_row", "one_row_renamed", "one_row_bigint"]
    assert len({fp[name] for name in distinct}) == len(distinct)


def _arrow_type(dtype: DataType) -> pa.DataType:
    simple = {
        IntegerType: pa.int32(), LongType: pa.int64(), StringType: pa.string(), DoubleType: pa.float64(),
        DateType: pa.date32(), TimestampType: pa.timestamp("us", tz="UTC"),
    }
    if isinstance(dtype, DecimalType):
        return pa.decimal128(dtype.precision, dtype.scale)
    if isinstance(dtype, ArrayType):
        return pa.list_(_arrow_type(dtype.elementType))
    if isinstance(dtype, MapType):
        return pa.map_(_arrow_type(dtype.keyType), _arrow_type(dtype.valueType))
    if isinstance(dtype, StructType):
        return pa.struct([(f.name, _arrow_type(f.dataType)) for f in dtype.fields])
    return simple[type(dtype)]


def _arrow_value(value, dtype: DataType):
    if value is None:
        return None
    if isinstance(dtype, StructType):
        return {f.name: _arrow_value(v, f.dataType) for v, f in zip(value, dtype.fields)}
    if isinstance(dtype, ArrayType):
        return [_arrow_value(v, dtype.elementType) for v in value]
    if isinstance(dtype, MapType):
        return [(_arrow_value(k, dtype.keyType), _arrow_value(v, dtype.valueType)) for k, v in value]
    return value


@pytest.mark.parametrize("name", ["empty", "two_rows", "nulls", "map_column", "struct_column", "mixed_kinds",
                                  "quoted_names"])
def test_fingerprint_arrow_reproduces_vector(name):
    vector = BY_VECTOR_NAME[name]
    types = [parse_type(column["type"]) for column in vector["columns"]]
    columns = {}
    for i, (column, dtype) in enumerate(zip(vector["columns"], types)):
        values = [_arrow_value(decode(row[i], dtype), dtype) for row in vector["rows"]]
        arrow_type = _arrow_type(StringType() if isinstance(dtype, StringType) else dtype)
        columns[column["name"]] = pa.array(values, arrow_type)
    table = pa.table(columns)
    # A collated string has no Arrow type: such a table is fingerprinted with the Spark types given.
    given_types = types if name == "mixed_kinds" else None
    assert fingerprint_arrow(table, given_types) == vector["fingerprint"]


# ---------------------------------------------------------------------------------------------
# Arrow and pandas

TS = datetime.datetime(2020, 1, 2, 3, 4, 5, 123456)
TS_MICROS = 1_577_934_245_123_456


@pytest.mark.parametrize(
    ("arrow_type", "expected"),
    [
        (pa.int8(), ByteType()),
        (pa.int16(), ShortType()),
        (pa.int32(), IntegerType()),
        (pa.int64(), LongType()),
        (pa.uint8(), ShortType()),
        (pa.uint16(), IntegerType()),
        (pa.uint32(), LongType()),
        (pa.uint64(), DecimalType(20, 0)),
        (pa.float32(), FloatType()),
        (pa.float64(), DoubleType()),
        (pa.bool_(), BooleanType()),
        (pa.string(), StringType()),
        (pa.large_string(), StringType()),
        (pa.binary(), BinaryType()),
        (pa.large_binary(), BinaryType()),
        (pa.binary(4), BinaryType()),
        (pa.date32(), DateType()),
        (pa.date64(), DateType()),
        (pa.timestamp("us", tz="UTC"), TimestampType()),
        (pa.timestamp("s", tz="Asia/Tokyo"), TimestampType()),
        (pa.timestamp("ms"), TimestampNTZType()),
        (pa.timestamp("ns"), TimestampNTZType()),
        (pa.decimal128(38, 10), DecimalType(38, 10)),
        (pa.dictionary(pa.int8(), pa.string()), StringType()),
        (pa.null(), IntegerType()),
        (pa.list_(pa.field("e", pa.int32(), nullable=False)), ArrayType(IntegerType(), False)),
        (pa.large_list(pa.string()), ArrayType(StringType(), True)),
        (pa.map_(pa.string(), pa.int64()), MapType(StringType(), LongType(), True)),
        (
            pa.struct([pa.field("a", pa.int8(), nullable=False), ("b", pa.list_(pa.float32()))]),
            StructType([StructField("a", ByteType(), False), StructField("b", ArrayType(FloatType()), True)]),
        ),
    ],
    ids=str,
)
def test_arrow_types_map_to_spark_types(arrow_type, expected):
    assert spark_type_of_arrow(arrow_type) == expected


@pytest.mark.parametrize(
    "arrow_type",
    [pa.float16(), pa.time32("s"), pa.time64("us"), pa.month_day_nano_interval(),
     pa.decimal256(40, 2), pa.list_(pa.time64("ns"))],
    ids=str,
)
def test_unsupported_arrow_types_name_the_column(arrow_type):
    table = pa.table({"ok": pa.array([1]), "bad col": pa.array([None], arrow_type)})
    with pytest.raises(ValueError, match="column 'bad col'"):
        fingerprint_arrow(table)


def test_fingerprint_arrow_converts_every_kind_like_the_reference_conventions():
    table = pa.table({
        "i8": pa.array([-1, None], pa.int8()),
        "u64": pa.array([2**64 - 1, 0], pa.uint64()),
        "f32": pa.array([0.1, float("nan")], pa.float32()),
        "dec": pa.array([decimal.Decimal("1.50"), None], pa.decimal128(5, 2)),
        "s": pa.array(["a", "b"]).dictionary_encode(),
        "fsb": pa.array([b"ab", None], pa.binary(2)),
        "d64": pa.array([datetime.date(2020, 1, 1), None], pa.date64()),
        "tz": pa.array([TS, None], pa.timestamp("ns", tz="America/New_York")),
        "ntz": pa.array([TS.replace(microsecond=123000), None], pa.timestamp("ms")),
        "lst": pa.array([[TS], None], pa.large_list(pa.timestamp("us"))),
        "m": pa.array([[("k", {"x": 1})], []], pa.map_(pa.string(), pa.struct([("x", pa.int16())]))),
        "nul": pa.array([None, None], pa.null()),
    })
    types = [ByteType(), DecimalType(20, 0), FloatType(), DecimalType(5, 2), STRING, BinaryType(), DateType(),
             TimestampType(), TimestampNTZType(), ArrayType(TimestampNTZType()),
             MapType(STRING, StructType([StructField("x", ShortType())])), INT]
    rows = [
        (-1, 2**64 - 1, 0.1, decimal.Decimal("1.50"), "a", b"ab", 18262, TS_MICROS, TS_MICROS - 456,
         [TS_MICROS], [("k", (1,))], None),
        (None, 0, float("nan"), None, "b", None, None, None, None, None, [], None),
    ]
    assert fingerprint_arrow(table) == dataset_fingerprint(rows, table.column_names, types)


def test_nanosecond_timestamps_must_be_whole_microseconds():
    exact = pa.table({"t": pa.array([TS_MICROS * 1000], pa.timestamp("ns"))})
    assert fingerprint_arrow(exact) == dataset_fingerprint([(TS_MICROS,)], ["t"], [TimestampNTZType()])
    with pytest.raises(ValueError, match="column 't'"):
        fingerprint_arrow(pa.table({"t": pa.array([TS_MICROS * 1000 + 1], pa.timestamp("ns"))}))


def test_fingerprint_arrow_with_given_types_and_without_columns():
    table = pa.table({"n": pa.array([1, 2], pa.int64())})
    assert fingerprint_arrow(table, [INT]) == dataset_fingerprint([(1,), (2,)], ["n"], [INT])
    assert fingerprint_arrow(table, [INT]) != fingerprint_arrow(table)
    with pytest.raises(ValueError, match="1 columns but 2 types"):
        fingerprint_arrow(table, [INT, INT])
    with pytest.raises(ValueError, match="out of range"):
        fingerprint_arrow(pa.table({"n": pa.array([2**40])}), [INT])


def test_fingerprint_arrow_of_chunked_columns_equals_one_chunk():
    one = pa.table({"n": pa.array(list(range(10)), pa.int32())})
    chunked = pa.concat_tables([one.slice(0, 3), one.slice(3)])
    assert chunked.column("n").num_chunks == 2
    assert fingerprint_arrow(chunked) == fingerprint_arrow(one)


def test_fingerprint_pandas():
    import pandas as pd
    df = pd.DataFrame({
        "id": [3, 1],
        "x": [0.5, float("nan")],
        "s": pd.Series(["a", None], index=[10, 20], dtype=object),
        "t": pd.to_datetime(["2020-01-02 03:04:05.123456", None]),
        "c": pd.Categorical(["u", "v"]),
        "none": [None, None],
    }, index=[10, 20])
    # The index is not a RangeIndex: to_parquet writes it, as the last column.
    rows = [(3, 0.5, "a", TS_MICROS, "u", None, 10), (1, None, None, None, "v", None, 20)]
    types = [LONG, DoubleType(), STRING, TimestampNTZType(), STRING, INT, LONG]
    names = [*df.columns, "__index_level_0__"]
    assert fingerprint_pandas(df) == dataset_fingerprint(rows, names, types)
    assert fingerprint_pandas(df.iloc[::-1]) == fingerprint_pandas(df)


def test_module_imports_and_hashes_without_pyarrow_and_pandas():
    code = (
        "import sys; sys.modules['pyarrow'] = None; sys.modules['pandas'] = None\n"
        "from hashexpr import reference\n"
        "from pyspark.sql.types import LongType\n"
        "print(reference.dataset_fingerprint([], ['id'], [LongType()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "python"), "PATH": ""})
    assert out.stdout.strip() == EMPTY_BIGINT_ID


def test_no_columns_is_refused_as_in_spark():
    with pytest.raises(ValueError, match="needs at least one column"):
        dataset_fingerprint([], [], [])
