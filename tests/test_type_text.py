"""Spark's catalog text of a type, read back without a JVM (``hashexpr.spark.arrow_path.type_text``): what the row-by-row
column functions type their arguments by on PySpark before 4.1.

The texts are PySpark's own ``simpleString`` of types built from the frozen vectors' JSON types (``StructType.fromJson``)
and by hand; tests/test_nojar.py reads the texts a real Spark's ``typeof`` gives.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)
from test_arrow_vectors import _load
from test_golden_vectors import parse_type

from hashexpr.spark.arrow_path.checks import refused_text
from hashexpr.spark.arrow_path.type_text import parse, parse_fields

VECTOR_FILES = ("vectors-v1.json", "by-name-vectors-v1.json", "key-vectors-v1.json", "sha256-vectors-v1.json")


def _vector_types() -> list[DataType]:
    types = {}
    for name in VECTOR_FILES:
        for vector in _load(name)["vectors"]:
            for argument in vector["args"]:
                dtype = parse_type(argument["type"])
                types[dtype.simpleString()] = dtype
    return list(types.values())


def _nullable(dtype: DataType) -> DataType:
    """``dtype`` with every element, value and field nullable: the text does not say, and nothing hashes it."""
    if isinstance(dtype, ArrayType):
        return ArrayType(_nullable(dtype.elementType))
    if isinstance(dtype, MapType):
        return MapType(_nullable(dtype.keyType), _nullable(dtype.valueType))
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, _nullable(f.dataType)) for f in dtype.fields])
    return dtype


def test_every_vector_type_reads_back():
    """Each type of the vectors that the path without the jar hashes reads back as itself; the others read as
    None (and are refused before they are read)."""
    read = refused = 0
    for dtype in _vector_types():
        text = dtype.simpleString()
        if refused_text(text, "lost") is not None:
            refused += 1
            continue
        assert parse(text) == _nullable(dtype), text
        read += 1
    assert (read, refused) == (50, 15)


@pytest.mark.parametrize(
    "dtype",
    [
        StructType([StructField("b:c", IntegerType())]),
        StructType([StructField("x,y:int", ArrayType(StructType([StructField("a", LongType())])))]),
        StructType([StructField("m:", MapType(StringType(), StructType([StructField("z", StringType())])))]),
        StructType([StructField("", IntegerType()), StructField(" ", DecimalType(38, 0))]),
        StructType([]),
        MapType(StructType([StructField("k:", IntegerType())]), ArrayType(ArrayType(StringType()))),
    ],
    ids=str,
)
def test_unquoted_field_names_with_punctuation(dtype):
    """Field names are not quoted in the text: a name may hold ':' and ','."""
    assert parse(dtype.simpleString()) == dtype


def test_a_name_that_spells_fields_reads_as_those_fields():
    """``struct<a:int,b:int,c:string>`` is also one field ``b:int,c`` after ``a``: the text cannot tell, so the
    reader takes the first reading, the row-by-row route refuses a row whose names disagree with it, and the
    arguments' types are read with their names known."""
    named = StructType([StructField("a", IntegerType()), StructField("b:int,c", StringType())])
    read = parse(named.simpleString())
    assert isinstance(read, StructType) and read.names == ["a", "b", "c"]
    assert parse_fields(named.simpleString(), ["a", "b:int,c"]) == [IntegerType(), StringType()]
    assert parse_fields(named.simpleString(), ["a", "b"]) is None


def test_names_with_angle_brackets_are_not_read():
    """A name holding '<' or '>' can move where a struct ends, and one reading of such a text can be another
    type altogether: ``c`` below, with the names ``p:int>,b:array<struct<q`` and ``b``, also reads as a struct
    whose ``b`` is an array. No reading with such a name is taken, so neither is."""
    inner = StructType([StructField("p:int>,b:array<struct<q", IntegerType())])
    nested = StructType([StructField("y", StructType([StructField("z", IntegerType())]))])
    tricky = StructType([StructField("a", inner), StructField("b", nested)])
    assert parse(tricky.simpleString()) is None
    assert parse(StructType([StructField("<a>", LongType())]).simpleString()) is None
    assert parse_fields(f"struct<_0:{tricky.simpleString()}>", ["_0"]) is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "integer",
        "array<int",
        "array<int>>",
        "map<int>",
        "struct<a>",
        "struct<a:int,>",
        "decimal(10)",
        "interval day to second",
        "variant",
        "string collate UTF8_LCASE",
        "geometry(4326)",
    ],
)
def test_what_it_cannot_read(text):
    assert parse(text) is None


def test_char_varchar_and_binary_collation_are_strings():
    """Spark hands CHAR and VARCHAR values, and UTF8_BINARY strings, to Python as the strings it hashes."""
    for text in ("char(3)", "varchar(10)", "string collate UTF8_BINARY", "string collate utf8_binary"):
        assert parse(text) == StringType(), text
    assert parse("array<varchar(2)>") == ArrayType(StringType())


NAME = st.lists(
    st.sampled_from([":", ",", "<", ">", "a", "b", "int", "struct<", "array<", "map<"]), max_size=5
).map("".join)
ATOMIC = st.sampled_from([IntegerType(), LongType(), StringType(), DecimalType(10, 2)])
TYPES = st.recursive(
    ATOMIC,
    lambda inner: st.one_of(
        inner.map(ArrayType),
        st.tuples(ATOMIC, inner).map(lambda kv: MapType(*kv)),
        st.lists(st.tuples(NAME, inner), min_size=1, max_size=3).map(
            lambda fields: StructType([StructField(n, t) for n, t in fields])
        ),
    ),
    max_leaves=6,
)


def _names(dtype: DataType) -> list[list[str]]:
    """Every struct's field names, in pre-order: what the row-by-row route checks against the Row values."""
    if isinstance(dtype, ArrayType):
        return _names(dtype.elementType)
    if isinstance(dtype, MapType):
        return _names(dtype.keyType) + _names(dtype.valueType)
    if isinstance(dtype, StructType):
        return [dtype.names] + [n for f in dtype.fields for n in _names(f.dataType)]
    return []


@settings(max_examples=400, deadline=None)
@given(TYPES)
def test_a_reading_is_the_type_or_has_other_names(dtype):
    """Whatever the names, a type read back is the type itself, or one whose structs have other names than the
    type's (which the row-by-row route finds when it compares them with the values' names)."""
    read = parse(dtype.simpleString())
    assert read is None or read == _nullable(dtype) or _names(read) != _names(dtype)
