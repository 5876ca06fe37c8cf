"""The reference writes the bytes docs/FORMAT.md specifies, and has the properties it promises.

Expected encodings are written out by hand from the spec, never computed by the code under test.
"""

from __future__ import annotations

import datetime
import math
import struct
from decimal import Decimal

import mmh3
import pytest
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
    NullType,
    Row,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    TimeType,
    UserDefinedType,
    VariantType,
    YearMonthIntervalType,
)

from hashexpr.reference import (
    SEED,
    dataset_fingerprint,
    encode_record,
    encode_value,
    record_hash,
    record_hash_by_name,
    record_key,
)
from hashexpr.spark.types import CalendarIntervalType

INT, LONG, STRING, DOUBLE = IntegerType(), LongType(), StringType(), DoubleType()
LCASE = StringType("UTF8_LCASE")
UTC = datetime.timezone.utc


# Pure computation: no deadline, so that a loaded machine cannot make these flaky.
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def h(text: str) -> bytes:
    """Bytes from hex written with spaces for readability."""
    return bytes.fromhex(text)


def digest(data: bytes) -> bytes:
    return mmh3.mmh3_x64_128_digest(data, 0x68617368)


def rh(*pairs):
    """record_hash of (value, type) pairs."""
    return record_hash([value for value, _ in pairs], [dtype for _, dtype in pairs])


def nan_with_bits(bits: int) -> float:
    return struct.unpack("<d", bits.to_bytes(8, "little"))[0]


class PointUDT(UserDefinedType):
    @classmethod
    def sqlType(cls):
        return ArrayType(DOUBLE, False)

    @classmethod
    def module(cls):
        return "tests.test_reference_encoding"


# ---------------------------------------------------------------------------------------------
# Records


def test_worked_example_of_the_spec():
    stream = h("01 03000000 02 0100000000000000 05 01000000 61 00")
    assert encode_record([1, "a", None], [INT, STRING, STRING]) == stream
    assert record_hash([1, "a", None], [INT, STRING, STRING]) == digest(stream)


def test_empty_record_is_version_and_zero_count():
    assert encode_record([], []) == h("01 00000000")
    assert record_hash([], []) == digest(h("01 00000000"))


def test_seed_value():
    assert SEED == 0x68617368


def test_result_is_16_bytes_and_never_null():
    assert len(record_hash([None], [STRING])) == 16
    assert record_hash([None], [STRING]) == digest(h("01 01000000 00"))


# ---------------------------------------------------------------------------------------------
# One value of every kind


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        (None, NullType(), "00"),
        (None, INT, "00"),
        (None, ArrayType(STRING), "00"),
        (True, BooleanType(), "01 01"),
        (False, BooleanType(), "01 00"),
        (7, ByteType(), "02 0700000000000000"),
        (-1, ByteType(), "02 ffffffffffffffff"),
        (-32768, ShortType(), "02 0080ffffffffffff"),
        (2**31 - 1, INT, "02 ffffff7f00000000"),
        (-(2**63), LONG, "02 0000000000000080"),
        (1.5, DOUBLE, "03 000000000000f83f"),
        (1.5, FloatType(), "03 000000000000f83f"),
        # FLOAT 0.1 is the float32 0x3DCCCCCD, widened exactly: 0x3FB99999A0000000.
        (0.1, FloatType(), "03 000000a09999b93f"),
        (0.1, DOUBLE, "03 9a9999999999b93f"),
        (-0.0, DOUBLE, "03 0000000000000000"),
        (-0.0, FloatType(), "03 0000000000000000"),
        (math.inf, DOUBLE, "03 000000000000f07f"),
        (-math.inf, FloatType(), "03 000000000000f0ff"),
        (math.nan, DOUBLE, "03 000000000000f87f"),
        (nan_with_bits(0xFFF8000000000000), DOUBLE, "03 000000000000f87f"),
        (nan_with_bits(0x7FF0000000000001), DOUBLE, "03 000000000000f87f"),
        (math.nan, FloatType(), "03 000000000000f87f"),
        (5e-324, DOUBLE, "03 0100000000000000"),
        (Decimal("-1.50"), DecimalType(10, 2), "04 01000000 01 f1"),
        (Decimal("1.5"), DecimalType(38, 1), "04 01000000 01 0f"),
        (Decimal("1.5000"), DecimalType(20, 4), "04 01000000 01 0f"),
        (Decimal("0.00"), DecimalType(10, 2), "04 00000000 01 00"),
        (Decimal(100), DecimalType(3, 0), "04 feffffff 01 01"),
        (Decimal(127), DecimalType(3, 0), "04 00000000 01 7f"),
        (Decimal(128), DecimalType(3, 0), "04 00000000 02 8000"),
        (Decimal(-128), DecimalType(3, 0), "04 00000000 01 80"),
        (Decimal(-129), DecimalType(3, 0), "04 00000000 02 7fff"),
        (Decimal("0.01"), DecimalType(5, 2), "04 02000000 01 01"),
        (12, DecimalType(5, 2), "04 00000000 01 0c"),
        ("-0.250", DecimalType(5, 3), "04 02000000 01 e7"),
        # 10^38 - 1 = 0x4B3B4CA85A86C47A098A223FFFFFFFFF needs all 16 bytes.
        (Decimal("9" * 38), DecimalType(38, 0), "04 00000000 10 ffffffff3f228a097ac4865aa84c3b4b"),
        ("", STRING, "05 00000000"),
        ("a", STRING, "05 01000000 61"),
        ("\u00e9", STRING, "05 02000000 c3a9"),
        ("\U0001f600", STRING, "05 04000000 f09f9880"),
        (b"\xff", STRING, "05 01000000 ff"),
        ("abc", StringType("UTF8_BINARY"), "05 03000000 616263"),
        ("ab ", StringType("utf8_binary"), "05 03000000 616220"),
        (b"", BinaryType(), "06 00000000"),
        (bytearray(b"\x00\x01"), BinaryType(), "06 02000000 0001"),
        (datetime.date(1970, 1, 2), DateType(), "07 01000000"),
        (datetime.date(1969, 12, 31), DateType(), "07 ffffffff"),
        (-1, DateType(), "07 ffffffff"),
        (datetime.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC), TimestampType(), "08 0100000000000000"),
        (
            datetime.datetime(1970, 1, 1, 1, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
            TimestampType(),
            "08 0000000000000000",
        ),
        (-1, TimestampType(), "08 ffffffffffffffff"),
        (datetime.datetime(1970, 1, 1, 0, 0, 1), TimestampNTZType(), "09 40420f0000000000"),
        (datetime.timedelta(days=1), DayTimeIntervalType(), "0a 0060d71d14000000"),
        (-1, DayTimeIntervalType(0, 0), "0a ffffffffffffffff"),
        (14, YearMonthIntervalType(), "0b 0e000000"),
        ((1, 2, 3), CalendarIntervalType(), "0c 01000000 02000000 0300000000000000"),
        ((-1, 0, -1), CalendarIntervalType(), "0c ffffffff 00000000 ffffffffffffffff"),
        ([], ArrayType(INT), "10 00000000"),
        ([None], ArrayType(NullType()), "10 01000000 00"),
        ([1, None], ArrayType(INT), "10 02000000 02 0100000000000000 00"),
        ([[]], ArrayType(ArrayType(INT)), "10 01000000 10 00000000"),
        ({}, MapType(STRING, INT), "11 00000000" + " 00" * 16),
        (
            (1, None),
            StructType([StructField("a", INT), StructField("b", STRING)]),
            "12 02000000 02 0100000000000000 00",
        ),
        ((), StructType([]), "12 00000000"),
        ([0.5, -2.0], PointUDT(), "10 02000000 03 000000000000e03f 03 00000000000000c0"),
    ],
)
def test_encoding_of_one_value(value, dtype, expected):
    assert encode_value(value, dtype) == h(expected)


@pytest.mark.parametrize(
    "value, key",
    [
        ("Abc", "616263"),
        ("", ""),
        ("\u0130", "69 cc87"),  # capital I with dot above: i + combining dot above
        ("\u03a3\u03c3\u03c2", "cf83 cf83 cf83"),  # every sigma, final or not, becomes U+03C3
        ("\u1e9e", "c39f"),  # capital sharp s lower-cases to sharp s
        ("\u00c9T\u00c9", "c3a9 74 c3a9"),
        (b"A\xff", "61 efbfbd"),  # invalid UTF-8 becomes U+FFFD first, as in Spark
        (b"\xe2\x82Z", "efbfbd 7a"),  # one U+FFFD for the maximal subpart E2 82
    ],
)
def test_utf8_lcase_collated_string(value, key):
    key_bytes = h(key)
    expected = h("0d 0a000000") + b"UTF8_LCASE" + len(key_bytes).to_bytes(4, "little") + key_bytes
    assert encode_value(value, LCASE) == expected
    assert encode_value(value, StringType("utf8_lcase")) == expected


def test_map_sum_of_entry_digests():
    one_a = digest(h("02 0100000000000000 05 01000000 61"))
    two_b = digest(h("02 0200000000000000 05 01000000 62"))
    total = (int.from_bytes(one_a, "little") + int.from_bytes(two_b, "little")) % 2**128
    dtype = MapType(INT, STRING)
    assert encode_value({1: "a"}, dtype) == h("11 01000000") + one_a
    assert encode_value({1: "a", 2: "b"}, dtype) == h("11 02000000") + total.to_bytes(16, "little")
    assert encode_value([(2, "b"), (1, "a")], dtype) == h("11 02000000") + total.to_bytes(16, "little")


def test_map_entry_with_null_value():
    assert encode_value({"k": None}, MapType(STRING, INT)) == h("11 01000000") + digest(
        h("05 01000000 6b 00")
    )


def test_map_sum_wraps_modulo_2_128():
    # The same entry twice sums to 2·d mod 2^128, which must wrap for a large enough digest.
    entry = digest(h("02 0500000000000000 00"))
    doubled = (2 * int.from_bytes(entry, "little")) % 2**128
    dtype = MapType(INT, INT)
    assert encode_value([(5, None), (5, None)], dtype) == h("11 02000000") + doubled.to_bytes(16, "little")


def test_struct_accepts_tuple_dict_and_row():
    dtype = StructType([StructField("a", INT), StructField("b", STRING)])
    expected = h("12 02000000 02 0100000000000000 05 01000000 78")
    assert encode_value((1, "x"), dtype) == expected
    assert encode_value([1, "x"], dtype) == expected
    assert encode_value({"b": "x", "a": 1}, dtype) == expected
    assert encode_value(Row(a=1, b="x"), dtype) == expected
    assert encode_value(Row(b="x", a=1), dtype) == expected
    assert encode_value(Row(1, "x"), dtype) == expected


def test_char_and_varchar_are_strings():
    from pyspark.sql.types import CharType, VarcharType

    assert encode_value("ab ", CharType(3)) == h("05 03000000 616220")
    assert encode_value("ab", VarcharType(5)) == h("05 02000000 6162")


# ---------------------------------------------------------------------------------------------
# Properties of section 4


def test_null_empty_string_and_the_text_null_differ():
    assert len({rh((None, STRING)), rh(("", STRING)), rh(("NULL", STRING))}) == 3


def test_null_differs_from_every_empty_or_zero_value():
    null = rh((None, INT))
    others = [
        rh((0, INT)),
        rh((False, BooleanType())),
        rh(([], ArrayType(INT))),
        rh(({}, MapType(INT, INT))),
        rh(((None,), StructType([StructField("a", INT)]))),
        rh((b"", BinaryType())),
    ]
    assert null not in others


def test_concatenation_is_unambiguous():
    assert rh(("ab", STRING), ("c", STRING)) != rh(("a", STRING), ("bc", STRING))
    assert rh((b"ab", BinaryType()), (b"c", BinaryType())) != rh((b"a", BinaryType()), (b"bc", BinaryType()))


def test_position_of_null_matters():
    assert rh(("a", STRING), (None, STRING)) != rh((None, STRING), ("a", STRING))


def test_arguments_are_positional():
    assert rh((1, INT), (2, INT)) != rh((2, INT), (1, INT))


def test_nested_array_boundaries():
    dtype = ArrayType(ArrayType(INT))
    assert rh(([[1, 2], [3]], dtype)) != rh(([[1], [2, 3]], dtype))


def test_array_of_null_empty_array_and_null_array_differ():
    dtype = ArrayType(INT)
    assert len({rh(([None], dtype)), rh(([], dtype)), rh((None, dtype))}) == 3


def test_null_struct_differs_from_struct_of_nulls():
    dtype = StructType([StructField("a", INT), StructField("b", STRING)])
    assert rh((None, dtype)) != rh(((None, None), dtype))


def test_argument_count_is_part_of_the_record():
    assert rh((1, INT)) != rh((1, INT), (None, INT))
    assert rh((1, INT)) != rh((1, INT), (None, NullType()))


def test_kinds_are_distinct():
    hashes = [
        rh((1, INT)),
        rh(("1", STRING)),
        rh((1.0, DOUBLE)),
        rh((True, BooleanType())),
        rh((Decimal(1), DecimalType(1, 0))),
        rh((1, DateType())),
        rh((1, TimestampType())),
        rh((1, TimestampNTZType())),
        rh((b"\x01", BinaryType())),
        rh((1, DayTimeIntervalType())),
        rh((1, YearMonthIntervalType())),
        rh(("1", LCASE)),
    ]
    assert len(set(hashes)) == len(hashes)


def test_field_names_and_nullability_are_not_encoded():
    named = StructType([StructField("a", INT, False), StructField("b", STRING, True)])
    renamed = StructType([StructField("x", INT, True), StructField("y", STRING, False)])
    assert rh(((1, "s"), named)) == rh(((1, "s"), renamed))
    assert rh(([1], ArrayType(INT, False))) == rh(([1], ArrayType(INT, True)))


@QUICK
@given(st.integers(-(2**7), 2**7 - 1))
def test_widening_integers_keeps_the_hash(value):
    hashes = {rh((value, dtype)) for dtype in (ByteType(), ShortType(), INT, LONG)}
    assert len(hashes) == 1


@QUICK
@given(st.floats(width=32))
def test_widening_float_to_double_keeps_the_hash(value):
    assert rh((value, FloatType())) == rh((value, DOUBLE))


@QUICK
@given(st.decimals(min_value=-(10**6), max_value=10**6, places=2, allow_nan=False))
def test_widening_decimals_keeps_the_hash(value):
    hashes = {rh((value, dtype)) for dtype in (DecimalType(9, 2), DecimalType(20, 4), DecimalType(38, 10))}
    assert len(hashes) == 1


def test_negative_zero_and_zero_hash_the_same():
    assert rh((-0.0, DOUBLE)) == rh((0.0, DOUBLE)) == rh((-0.0, FloatType()))


def test_every_nan_hashes_the_same():
    nans = [math.nan, -math.nan, nan_with_bits(0x7FF0000000000001), nan_with_bits(0xFFFFFFFFFFFFFFFF)]
    assert len({rh((nan, DOUBLE)) for nan in nans} | {rh((math.nan, FloatType()))}) == 1


def test_infinities_keep_their_sign():
    assert rh((math.inf, DOUBLE)) != rh((-math.inf, DOUBLE))


MAP_ENTRIES = st.dictionaries(st.integers(-100, 100), st.none() | st.text(max_size=5), max_size=8).map(
    lambda entries: list(entries.items())
)


@QUICK
@given(MAP_ENTRIES.flatmap(lambda items: st.tuples(st.just(items), st.permutations(items))))
def test_map_order_does_not_matter(items_and_permutation):
    items, permuted = items_and_permutation
    dtype = MapType(INT, STRING)
    assert encode_value(items, dtype) == encode_value(permuted, dtype) == encode_value(dict(items), dtype)


def test_nested_map_order_does_not_matter():
    dtype = ArrayType(MapType(STRING, MapType(INT, INT)))
    first = [[("x", [(1, 10), (2, 20)]), ("y", [])]]
    second = [[("y", []), ("x", [(2, 20), (1, 10)])]]
    assert rh((first, dtype)) == rh((second, dtype))


def test_equal_entries_accumulate_instead_of_cancelling():
    # Under XOR, both maps would be n = 2 with a zero sum; addition keeps them apart.
    dtype = MapType(INT, STRING)
    assert rh(([(1, "a"), (1, "a")], dtype)) != rh(([(2, "b"), (2, "b")], dtype))
    assert encode_value([(1, "a"), (1, "a")], dtype)[5:] != bytes(16)


def test_map_entries_pair_keys_with_values():
    dtype = MapType(INT, INT)
    assert rh(({1: 1, 2: 2}, dtype)) != rh(({1: 2, 2: 1}, dtype))


def test_map_negative_zero_key_is_the_zero_key():
    dtype = MapType(DOUBLE, STRING)
    assert rh(([(-0.0, "z")], dtype)) == rh(([(0.0, "z")], dtype))


def test_utf8_lcase_follows_collation_equality():
    assert rh(("ABC", LCASE)) == rh(("abc", LCASE))
    assert rh(("\u03a3", LCASE)) == rh(("\u03c2", LCASE))
    assert rh(("abc", LCASE)) != rh(("abc", STRING))


def test_utf8_binary_collation_is_a_plain_string():
    assert rh(("Abc", StringType("UTF8_BINARY"))) == rh(("Abc", STRING))


def test_str_and_its_utf8_bytes_hash_the_same():
    assert rh(("h\u00e9", STRING)) == rh(("h\u00e9".encode(), STRING))


def test_timestamp_is_an_instant_and_ntz_a_wall_clock():
    noon_utc = datetime.datetime(2024, 1, 2, 12, 0, tzinfo=UTC)
    same_instant = noon_utc.astimezone(datetime.timezone(datetime.timedelta(hours=-5)))
    assert rh((noon_utc, TimestampType())) == rh((same_instant, TimestampType()))
    assert rh((datetime.datetime(2024, 1, 2, 12, 0), TimestampNTZType())) != rh(
        (datetime.datetime(2024, 1, 2, 7, 0), TimestampNTZType())
    )


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "value, dtype, name",
    [
        (128, ByteType(), "tinyint"),
        (-129, ByteType(), "tinyint"),
        (2**15, ShortType(), "smallint"),
        (2**31, INT, "int"),
        (2**63, LONG, "bigint"),
        (2**31, DateType(), "date"),
        (2**31, YearMonthIntervalType(), "interval"),
        (2**63, TimestampType(), "timestamp"),
        (1e39, FloatType(), "float"),
        (10**400, DOUBLE, "double"),
    ],
)
def test_out_of_range_value_names_the_type(value, dtype, name):
    with pytest.raises(ValueError, match=name):
        encode_value(value, dtype)


@pytest.mark.parametrize(
    "value, dtype",
    [
        (Decimal("1.234"), DecimalType(10, 2)),
        (Decimal("12345678.9"), DecimalType(9, 2)),
        (Decimal("NaN"), DecimalType(10, 2)),
        (Decimal("Infinity"), DecimalType(10, 2)),
        ("not a number", DecimalType(10, 2)),
        (datetime.datetime(2024, 1, 1), TimestampType()),
        (datetime.datetime(2024, 1, 1, tzinfo=UTC), TimestampNTZType()),
        (0, NullType()),
        ("\ud800", STRING),
        ({None: 1}, MapType(INT, INT)),
        ([(1, 2, 3)], MapType(INT, INT)),
        ((1,), StructType([StructField("a", INT), StructField("b", INT)])),
        ({"a": 1}, StructType([StructField("a", INT), StructField("b", INT)])),
        ({"a": 1, "b": 2, "c": 3}, StructType([StructField("a", INT), StructField("b", INT)])),
        ((1, 2), CalendarIntervalType()),
    ],
)
def test_impossible_values_raise_value_error(value, dtype):
    with pytest.raises(ValueError):
        encode_value(value, dtype)


@pytest.mark.parametrize(
    "value, dtype",
    [
        (True, INT),
        ("1", INT),
        (1.0, LONG),
        (1, BooleanType()),
        (True, DOUBLE),
        ("1.0", DOUBLE),
        (1.5, DecimalType(10, 2)),
        ("x", BinaryType()),
        (1, STRING),
        (datetime.datetime(2024, 1, 1), DateType()),
        ("2024-01-01", DateType()),
        ("abc", ArrayType(STRING)),
        ({1, 2}, ArrayType(INT)),
        (1, MapType(INT, INT)),
        (1, StructType([StructField("a", INT)])),
        (1.5, YearMonthIntervalType()),
    ],
)
def test_wrong_python_kind_raises_type_error(value, dtype):
    with pytest.raises(TypeError):
        encode_value(value, dtype)


@pytest.mark.parametrize(
    "dtype, name",
    [
        (VariantType(), "variant"),
        (TimeType(), "time"),
        (ArrayType(VariantType()), "variant"),
        (MapType(STRING, TimeType()), "time"),
        (StructType([StructField("v", VariantType())]), "variant"),
    ],
)
def test_unsupported_types_are_rejected_even_for_null(dtype, name):
    with pytest.raises(ValueError, match=name):
        encode_value(None, dtype)
    with pytest.raises(ValueError, match=name):
        record_hash([None], [dtype])


def test_icu_collations_are_not_computed():
    dtype = StringType("UNICODE_CI")
    with pytest.raises(NotImplementedError, match="UNICODE_CI"):
        encode_value("a", dtype)
    with pytest.raises(NotImplementedError, match="UTF8_LCASE_RTRIM"):
        encode_value("a", StringType("UTF8_LCASE_RTRIM"))
    # A NULL needs no collation key.
    assert encode_value(None, dtype) == h("00")


def test_record_needs_one_type_per_value():
    with pytest.raises(ValueError, match="2 values but 1 types"):
        encode_record([1, 2], [INT])


def test_types_must_be_data_types():
    with pytest.raises(TypeError, match="DataType"):
        encode_value(1, int)


def test_numpy_scalars_are_the_values_they_hold():
    np = pytest.importorskip("numpy")
    cases = [
        (np.int64(-7), LONG, -7),
        (np.int8(5), ByteType(), 5),
        (np.uint32(4_000_000_000), LONG, 4_000_000_000),
        (np.float32(0.1), FloatType(), float(np.float32(0.1))),
        (np.float64(-0.0), DOUBLE, 0.0),
        (np.bool_(True), BooleanType(), True),
        (np.int32(3), DecimalType(5, 2), 3),
    ]
    for numpy_value, dtype, plain in cases:
        assert encode_value(numpy_value, dtype) == encode_value(plain, dtype), (numpy_value, dtype)
    # Out of range still refused, whatever the value's container.
    with pytest.raises(ValueError, match="out of range for tinyint"):
        encode_value(np.int64(300), ByteType())
    # A NumPy date or duration has a unit that is not the format's: refused, never reinterpreted.
    with pytest.raises(TypeError, match="NumPy datetime64"):
        encode_value(np.datetime64("2024-01-01T00:00:00.000000001"), TimestampNTZType())


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match=r"^argument 2 \(bigint\): bigint value must be an int, got float 1.0 \(pandas"):
        record_hash([1, 1.0], [LONG, LONG])
    with pytest.raises(ValueError, match=r"^argument 1 \(tinyint\): 300 is out of range"):
        encode_record([300], [ByteType()])
    with pytest.raises(TypeError, match=r"^argument 'seats' \(int\): int value must be an int, got str"):
        record_hash_by_name({"seats": "7", "id": 1}, {"seats": INT, "id": INT})
    with pytest.raises(TypeError, match=r"^key part 2 \(int\)"):
        record_key(["a", "b"], [STRING, INT])
    with pytest.raises(TypeError, match=r"^column 'year' \(bigint\): bigint value must be an int, got float nan"):
        dataset_fingerprint([(1, float("nan"))], ["id", "year"], [LONG, LONG])
