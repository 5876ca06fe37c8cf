"""The reference reproduces every frozen golden vector in spec/vectors-v1.json.

The file is never regenerated: a difference here means the reference (or the format) changed.
Values are decoded from the JSON rendering described in spec/generate_vectors.py.
"""

from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

import mmh3
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    MapType,
    StringType,
    StructType,
)

from hashexpr.reference import FORMAT_VERSION, SEED, record_hash
from hashexpr.spark.types import CalendarIntervalType

VECTORS_FILE = Path(__file__).resolve().parents[1] / "spec" / "vectors-v1.json"
DOCUMENT = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
VECTORS = DOCUMENT["vectors"]
BY_NAME = {vector["name"]: vector for vector in VECTORS}


def parse_type(type_json: Any) -> DataType:
    """A DataType from its JSON form, through the public StructType.fromJson."""
    field = {"name": "c", "type": type_json, "nullable": True, "metadata": {}}
    return StructType.fromJson({"type": "struct", "fields": [field]}).fields[0].dataType


def decode(value: Any, dtype: DataType) -> Any:
    """The Python value of a JSON rendering, in the reference's conventions."""
    if value is None:
        return None
    if isinstance(dtype, (FloatType, DoubleType)):
        return float(value)
    if isinstance(dtype, DecimalType):
        return decimal.Decimal(value)
    if isinstance(dtype, StringType):
        return bytes.fromhex(value["utf8_hex"]) if isinstance(value, dict) else value
    if isinstance(dtype, BinaryType):
        return bytes.fromhex(value)
    if isinstance(dtype, CalendarIntervalType):
        return tuple(value)
    if isinstance(dtype, ArrayType):
        return [decode(element, dtype.elementType) for element in value]
    if isinstance(dtype, MapType):
        return [(decode(k, dtype.keyType), decode(v, dtype.valueType)) for k, v in value]
    if isinstance(dtype, StructType):
        return tuple(decode(item, field.dataType) for item, field in zip(value, dtype.fields))
    return value


def test_file_header():
    assert DOCUMENT["format_version"] == FORMAT_VERSION == 1
    assert DOCUMENT["seed"] == SEED == 0x68617368


def test_file_has_many_uniquely_named_vectors():
    assert len(VECTORS) >= 80
    assert len(BY_NAME) == len(VECTORS)
    for vector in VECTORS:
        assert len(vector["hex"]) == 32 and vector["hex"] == vector["hex"].lower()
        assert vector["args"], vector["name"]


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["name"] for vector in VECTORS])
def test_reference_reproduces_vector(vector):
    types = [parse_type(arg["type"]) for arg in vector["args"]]
    values = [decode(arg["value"], dtype) for arg, dtype in zip(vector["args"], types)]
    assert record_hash(values, types).hex() == vector["hex"]


# Vectors the format says must hash the same, and vectors it says must differ.
EQUAL_GROUPS = [
    ["tinyint_7", "smallint_7", "int_7", "bigint_7"],
    ["float_1_5", "double_1_5"],
    ["decimal_1_50_p10s2", "decimal_1_5_p38s1", "decimal_1_5000_p20s4"],
    ["decimal_zero_p10s2", "decimal_zero_p38s0"],
    ["double_zero", "double_minus_zero", "double_minus_zero_cast", "float_zero", "float_minus_zero"],
    ["double_nan", "double_nan_sqrt", "float_nan"],
    ["double_infinity", "float_infinity"],
    ["map_12", "map_21"],
    ["map_nested_ab", "map_nested_ba"],
    ["map_double_key_zero", "map_double_key_minus_zero"],
    ["struct_named", "struct_unnamed"],
    ["lcase_Abc", "lcase_abc"],
    ["interval_year_to_month", "interval_14_months"],
    ["interval_1_day", "interval_24_hours"],
    ["array_empty", "array_empty_int"],
    ["string_empty", "tail_string_00"],
    ["null_literal", "null_void_cast", "null_int", "null_string", "null_array", "null_map", "lcase_null"],
]

DISTINCT = [
    ["null_string", "string_empty", "string_NULL_text"],
    ["pair_ab_c", "pair_a_bc"],
    ["pair_a_null", "pair_null_a"],
    ["pair_1_2", "pair_2_1"],
    ["kind_int_1", "pair_1_null"],
    ["array_nested_12_3", "array_nested_1_23"],
    ["array_of_null", "array_empty", "null_array"],
    ["struct_null", "struct_of_nulls"],
    ["map_empty", "null_map", "array_empty"],
    ["lcase_abc", "string_ascii", "string_collate_utf8_binary"],
    [
        "kind_int_1",
        "kind_double_1",
        "kind_decimal_1",
        "kind_string_1",
        "kind_binary_01",
        "kind_date_1",
        "kind_timestamp_1",
        "kind_timestamp_ntz_1",
        "kind_day_time_interval_1",
        "kind_year_month_interval_1",
        "kind_array_1",
        "kind_struct_1",
        "boolean_true",
    ],
]


@pytest.mark.parametrize("names", EQUAL_GROUPS, ids=lambda names: names[0])
def test_frozen_vectors_that_must_agree(names):
    assert len({BY_NAME[name]["hex"] for name in names}) == 1


@pytest.mark.parametrize("names", DISTINCT, ids=lambda names: names[0])
def test_frozen_vectors_that_must_differ(names):
    assert len({BY_NAME[name]["hex"] for name in names}) == len(names)


def test_golden_worked_example_is_the_spec_example():
    vector = BY_NAME["worked_example"]
    assert [arg["sql"] for arg in vector["args"]] == ["1", "'a'", "CAST(NULL AS STRING)"]
    stream = bytes.fromhex("01 03000000 02 0100000000000000 05 01000000 61 00")
    assert vector["hex"] == mmh3.mmh3_x64_128_digest(stream, 0x68617368).hex()
