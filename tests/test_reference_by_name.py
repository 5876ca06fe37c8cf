"""The reference's by-name records (docs/FORMAT.md, section 6): hand-built bytes, properties, frozen vectors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import mmh3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.types import ArrayType, IntegerType, LongType, NullType, StringType, StructField, StructType
from test_golden_vectors import decode, parse_type

from hashexpr.reference import encode_record_by_name, record_hash, record_hash_by_name

SEED = 0x68617368
VECTORS_FILE = Path(__file__).resolve().parents[1] / "spec" / "by-name-vectors-v1.json"
DOCUMENT = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
VECTORS = DOCUMENT["vectors"]
BY_VECTOR_NAME = {vector["name"]: vector for vector in VECTORS}

INT, STRING = IntegerType(), StringType()


def name_bytes(name: str) -> bytes:
    data = name.encode("utf-8")
    return b"\x05" + struct.pack("<I", len(data)) + data


def murmur(data: bytes) -> bytes:
    return mmh3.mmh3_x64_128_digest(data, SEED)


# ---------------------------------------------------------------------------------------------
# Bytes, built by hand from the spec


def test_two_fields_in_name_order():
    stream = (
        b"\x81"
        + name_bytes("a") + b"\x02" + struct.pack("<q", 1)
        + name_bytes("b") + b"\x05" + struct.pack("<I", 1) + b"x"
        + b"\x00"
    )
    values = {"b": "x", "a": 1}
    types = {"a": INT, "b": STRING}
    assert encode_record_by_name(values, types) == stream
    assert record_hash_by_name(values, types) == murmur(stream)


def test_null_fields_are_left_out():
    stream = b"\x81" + name_bytes("k") + b"\x02" + struct.pack("<q", -2) + b"\x00"
    values = [("z", None), ("k", -2), ("a", None)]
    types = {"z": NullType(), "k": LongType(), "a": ArrayType(INT)}
    assert encode_record_by_name(values, types) == stream


def test_all_null_row_is_81_00():
    assert encode_record_by_name({"a": None, "b": None}, {"a": INT, "b": STRING}) == b"\x81\x00"
    assert record_hash_by_name({"a": None}, {"a": INT}) == murmur(b"\x81\x00")
    assert record_hash_by_name({}, {}) == murmur(b"\x81\x00")


def test_names_sort_by_utf8_bytes_not_utf16_nor_case():
    # 'B' 42 < 'a' 61 < 'z' 7A < 'é' C3A9 < '～' EFBD9E < '😀' F09F9880; UTF-16 puts '😀' (D83D) before '～'.
    names = ["\U0001f600", "a", "\uff5e", "B", "\u00e9", "z"]
    ordered = ["B", "a", "z", "\u00e9", "\uff5e", "\U0001f600"]
    stream = b"\x81" + b"".join(name_bytes(n) + b"\x02" + struct.pack("<q", len(n)) for n in ordered) + b"\x00"
    values = {n: len(n) for n in names}
    assert encode_record_by_name(values, {n: INT for n in names}) == stream


def test_nested_struct_is_positional_and_field_names_are_not_encoded():
    point = StructType([StructField("x", INT), StructField("y", STRING)])
    stream = (
        b"\x81" + name_bytes("p")
        + b"\x12" + struct.pack("<I", 2) + b"\x02" + struct.pack("<q", 3) + b"\x00"
        + b"\x00"
    )
    assert encode_record_by_name({"p": {"y": None, "x": 3}}, {"p": point}) == stream


# ---------------------------------------------------------------------------------------------
# Properties

NAMES = st.lists(st.text(alphabet="aAbB_z.\u00e9\uff5e\U0001f600 ", min_size=1, max_size=4), unique=True,
                 min_size=1, max_size=6)


@st.composite
def records(draw):
    names = draw(NAMES)
    values = [draw(st.none() | st.integers(-(2**31), 2**31 - 1)) for _ in names]
    return list(zip(names, values)), {name: INT for name in names}


@settings(max_examples=200, deadline=None)
@given(record=records(), data=st.data())
def test_order_does_not_matter(record, data):
    pairs, types = record
    shuffled = data.draw(st.permutations(pairs))
    assert record_hash_by_name(shuffled, types) == record_hash_by_name(pairs, types)


@settings(max_examples=200, deadline=None)
@given(record=records())
def test_null_column_hashes_like_missing_column(record):
    pairs, types = record
    present = [(name, value) for name, value in pairs if value is not None]
    assert record_hash_by_name(pairs, types) == record_hash_by_name(present, {n: types[n] for n, _ in present})


@settings(max_examples=200, deadline=None)
@given(record=records())
def test_renaming_a_present_column_changes_the_hash(record):
    pairs, types = record
    name, value = pairs[0]
    if value is None:
        pairs[0] = (name, 0)
    renamed = [("\u00ff" + name, pairs[0][1])] + pairs[1:]
    renamed_types = {n: INT for n, _ in renamed}
    assert record_hash_by_name(renamed, renamed_types) != record_hash_by_name(pairs, types)


def test_null_differs_from_empty_string_and_zero():
    null = record_hash_by_name({"a": None}, {"a": STRING})
    assert null != record_hash_by_name({"a": ""}, {"a": STRING})
    assert null != record_hash_by_name({"a": 0}, {"a": INT})
    assert record_hash_by_name({"a": ""}, {"a": STRING}) != record_hash_by_name({"a": 0}, {"a": INT})


def test_by_name_record_differs_from_positional_record():
    assert encode_record_by_name({"a": 1}, {"a": INT})[0] == 0x81
    assert record_hash_by_name({"a": 1}, {"a": INT}) != record_hash([1], [INT])
    assert record_hash_by_name({}, {}) != record_hash([], [])


def test_duplicate_names_are_rejected():
    with pytest.raises(ValueError, match="duplicate argument names \\['a'\\]"):
        record_hash_by_name([("a", 1), ("b", 2), ("a", None)], {"a": INT, "b": INT})


def test_types_must_name_exactly_the_arguments():
    with pytest.raises(ValueError, match="no type for \\['b'\\]"):
        record_hash_by_name({"a": 1, "b": 2}, {"a": INT})
    with pytest.raises(ValueError, match="no value for \\['c'\\]"):
        record_hash_by_name({"a": 1}, {"a": INT, "c": INT})


def test_bad_names_and_values_are_rejected():
    with pytest.raises(TypeError):
        record_hash_by_name([(1, 1)], {1: INT})
    with pytest.raises(ValueError, match="surrogate"):
        record_hash_by_name({"\ud800": 1}, {"\ud800": INT})
    with pytest.raises(ValueError, match="out of range"):
        record_hash_by_name({"a": 2**40}, {"a": INT})


# ---------------------------------------------------------------------------------------------
# Frozen vectors


def test_file_header_and_size():
    assert DOCUMENT["format_version"] == 1 and DOCUMENT["seed"] == SEED
    assert len(VECTORS) >= 30 and len(BY_VECTOR_NAME) == len(VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["name"] for vector in VECTORS])
def test_reference_reproduces_vector(vector):
    pairs = [(arg["name"], decode(arg["value"], parse_type(arg["type"]))) for arg in vector["args"]]
    types = {arg["name"]: parse_type(arg["type"]) for arg in vector["args"]}
    assert record_hash_by_name(pairs, types).hex() == vector["hex"]


EQUAL_GROUPS = [
    ["ab", "ba", "ab_null_first", "ab_null_middle", "ab_null_last", "ab_two_nulls"],
    ["abc", "cab", "bca"],
    ["b_only", "b_null_a"],
    ["all_null_one", "all_null_three", "null_struct_field"],
    ["case_Ba", "case_aB"],
    ["multibyte_names", "multibyte_names_permuted"],
    ["nested_struct", "nested_struct_renamed_fields"],
]

DISTINCT = [
    ["all_null_one", "empty_string", "zero", "empty_array", "struct_of_nulls"],
    ["ab", "renamed_a_to_c", "b_only", "single_int"],
    ["case_a_A", "case_A_a"],
]


@pytest.mark.parametrize("names", EQUAL_GROUPS, ids=lambda names: names[0])
def test_frozen_vectors_that_must_agree(names):
    assert len({BY_VECTOR_NAME[name]["hex"] for name in names}) == 1


@pytest.mark.parametrize("names", DISTINCT, ids=lambda names: names[0])
def test_frozen_vectors_that_must_differ(names):
    assert len({BY_VECTOR_NAME[name]["hex"] for name in names}) == len(names)


def test_all_null_vector_is_the_hash_of_81_00():
    assert BY_VECTOR_NAME["all_null_three"]["hex"] == murmur(b"\x81\x00").hex()


def test_vectors_have_distinct_names_multibyte_names_and_case_pairs():
    for vector in VECTORS:
        names = [arg["name"] for arg in vector["args"]]
        assert len(set(names)) == len(names), vector["name"]
    all_names = {arg["name"] for vector in VECTORS for arg in vector["args"]}
    assert any(len(name.encode("utf-8")) > len(name) for name in all_names)
    assert {"B", "a"} <= all_names and {"A", "a"} <= all_names
