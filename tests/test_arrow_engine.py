"""hashexpr.arrow without Spark: the pure-Python reference as the independent oracle on generated data, every
physical variant of a logical value, and what bad input gets (a ValueError or TypeError naming the function,
the column and the problem; never a partial result, never a crash)."""

from __future__ import annotations

import datetime
import decimal
import subprocess
import sys

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_arrow_spark import tables

from hashexpr import arrow as hxa
from hashexpr import reference as ref


def _rows(table: pa.Table) -> list[tuple]:
    """The rows in the reference's conventions (the conversion fingerprint_arrow makes)."""
    columns = [ref._column_values(name, table.column(name)) for name in table.column_names]
    return list(zip(*columns)) if columns else []


def _types(table: pa.Table) -> list:
    return [ref.spark_type_of_arrow(f.type) for f in table.schema]


# A struct with a date (so the reference casts the column) beside a list of the null type: pyarrow casts
# such a list's child too short unless the reference casts the null type to another.
_DATED_NULL_LIST = pa.table(
    {
        "rid": pa.array([0, 1], pa.int32()),
        "c0": pa.array(
            [{"f0": None, "f1": None, "f2": [None, None]}, {"f0": True, "f1": 3, "f2": [None]}],
            pa.struct([("f0", pa.bool_()), ("f1", pa.date32()), ("f2", pa.list_(pa.null()))]),
        ),
        "c1": pa.array([[("k", None), ("l", None)], []], pa.map_(pa.string(), pa.null())),
        "c2": pa.array([[[None, None, None]], None], pa.list_(pa.large_list(pa.null()))),
        "c3": pa.array([datetime.datetime(2001, 2, 3), None], pa.timestamp("ms")),
        "c4": pa.array([[None], None], pa.list_view(pa.null())),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=tables())
@example(table=_DATED_NULL_LIST)
def test_the_reference_agrees_on_generated_tables(table):
    types = _types(table)
    rows = _rows(table)
    assert hxa.record_hash(table).to_pylist() == [ref.record_hash(r, types) for r in rows]
    assert hxa.record_hash(table, algorithm="sha256").to_pylist() == [
        ref.record_hash(r, types, algorithm="sha256") for r in rows
    ]
    named = [dict(zip(table.column_names, r)) for r in rows]
    by_type = dict(zip(table.column_names, types))
    assert hxa.record_hash(table, by_name=True).to_pylist() == [
        ref.record_hash_by_name(r, by_type) for r in named
    ]
    assert hxa.dataset_fingerprint(table) == ref.fingerprint_arrow(table)


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(
        st.none() | st.text(max_size=6) | st.sampled_from(["  ", " a ", "\u03a3", "A\u03a3.", "stra\u00dfe"]),
        min_size=1,
        max_size=4,
    ),
    trim=st.booleans(),
    case=st.sampled_from([None, "upper", "lower"]),
    empty_as_null=st.booleans(),
    salt=st.sampled_from(["", "hub", "x=y"]),
)
def test_the_reference_agrees_on_keys(parts, trim, case, empty_as_null, salt):
    from pyspark.sql.types import StringType

    table = pa.table({"k": pa.array(parts, pa.string()), "n": pa.array(range(len(parts)), pa.int32())})
    options = {"salt": salt, "trim": trim, "case": case, "empty_as_null": empty_as_null, "null_key": "null"}
    keys = hxa.record_key(table, ["k"], **options).to_pylist()
    assert keys == [ref.record_key([p], [StringType()], **options) for p in parts]


def test_every_physical_form_hashes_like_its_value():
    base = pa.table(
        {
            "s": pa.array(["a", None, "a long string, longer than a view inlines"]),
            "b": pa.array([b"\xff", None, b""]),
            "l": pa.array([[1, None], None, []], pa.list_(pa.int64())),
        }
    )
    expected = hxa.record_hash(base)
    list_view = pa.ListViewArray.from_arrays(
        pa.array([0, 2, 2], pa.int32()),
        pa.array([2, 0, 0], pa.int32()),
        pa.array([1, None], pa.int64()),
        mask=pa.array([False, True, False]),
    )
    forms = {
        "large_string": base.set_column(0, "s", base["s"].cast(pa.large_string())),
        "string_view": base.set_column(0, "s", base["s"].cast(pa.string_view())),
        "dictionary": base.set_column(0, "s", base["s"].dictionary_encode()),
        "dictionary_int8": base.set_column(0, "s", base["s"].cast(pa.dictionary(pa.int8(), pa.string()))),
        "large_binary": base.set_column(1, "b", base["b"].cast(pa.large_binary())),
        "binary_view": base.set_column(1, "b", base["b"].cast(pa.binary_view())),
        "large_list": base.set_column(2, "l", base["l"].cast(pa.large_list(pa.int64()))),
        "list_view": base.set_column(2, "l", list_view),
    }
    for name, form in forms.items():
        assert hxa.record_hash(form) == expected, name
    fixed = pa.table({"b": pa.array([b"abc", None], pa.binary(3))})
    assert hxa.record_hash(fixed) == hxa.record_hash(fixed.cast(pa.schema([("b", pa.binary())])))
    fixed_list = pa.table({"l": pa.array([[1, 2], None, [3, None]], pa.list_(pa.int32(), 2))}).slice(1)
    assert hxa.record_hash(fixed_list) == hxa.record_hash(
        fixed_list.cast(pa.schema([("l", pa.list_(pa.int32()))]))
    )


def test_maps_hash_in_any_entry_order_and_nulls_at_every_depth():
    t = pa.map_(pa.string(), pa.list_(pa.struct([("x", pa.int8())])))
    a = pa.table({"m": pa.array([[("a", [{"x": 1}, None]), ("b", None)], [], None], t)})
    b = pa.table({"m": pa.array([[("b", None), ("a", [{"x": 1}, None])], [], None], t)})
    assert hxa.record_hash(a) == hxa.record_hash(b)
    assert hxa.record_hash(a, algorithm="sha256") == hxa.record_hash(b, algorithm="sha256")
    hashes = hxa.record_hash(pa.table({"s": pa.array([None, {"x": None}], pa.struct([("x", pa.int8())]))}))
    assert hashes[0] != hashes[1]  # a NULL struct is not a struct of NULLs


def test_arrow_types_read_as_spark_reads_parquet():
    cases = [
        (
            pa.array([2**64 - 1, 0], pa.uint64()),
            pa.array([decimal.Decimal(2**64 - 1), 0], pa.decimal128(20, 0)),
        ),
        (pa.array([255], pa.uint8()), pa.array([255], pa.int16())),
        (
            pa.array([1, -1], pa.timestamp("s", tz="UTC")),
            pa.array([10**6, -(10**6)], pa.timestamp("us", tz="UTC")),
        ),
        (pa.array([1], pa.timestamp("ms")), pa.array([1000], pa.timestamp("us"))),
        (
            pa.array([3000, None], pa.timestamp("ns", tz="UTC")),
            pa.array([3, None], pa.timestamp("us", tz="UTC")),
        ),
        (pa.array([86_400_000 * 3], pa.date64()), pa.array([3], pa.date32())),
        (
            pa.array([decimal.Decimal("1.5")], pa.decimal256(38, 1)),
            pa.array([decimal.Decimal("1.50")], pa.decimal128(5, 2)),
        ),
        (pa.array([None, None], pa.null()), pa.array([None, None], pa.int32())),
        (pa.array([1.5], pa.float32()), pa.array([1.5], pa.float64())),
    ]
    for given_array, same in cases:
        assert hxa.record_hash(pa.table({"c": given_array})) == hxa.record_hash(pa.table({"c": same})), (
            given_array.type
        )
    # The schema digest follows the Spark type: INT and BIGINT hash alike per row, not per table.
    assert hxa.dataset_fingerprint(pa.table({"c": pa.array([1], pa.int32())})) != hxa.dataset_fingerprint(
        pa.table({"c": pa.array([1], pa.int64())})
    )
    assert hxa.spark_types(pa.schema({"t": pa.timestamp("ns", tz="UTC"), "n": pa.null()})) == [
        ("t", "timestamp"),
        ("n", "int"),
    ]


def test_empty_inputs():
    empty = pa.table({"id": pa.array([], pa.int64())})
    assert len(hxa.record_hash(empty)) == 0
    assert hxa.dataset_fingerprint(empty) == ref.dataset_fingerprint([], ["id"], [ref.LongType()])
    assert hxa.fingerprints_by(empty, "id").num_rows == 0
    reader = pa.RecordBatchReader.from_batches(empty.schema, [])
    assert hxa.dataset_fingerprint(reader) == hxa.dataset_fingerprint(empty)


def test_threads_do_not_change_a_result():
    table = pa.table({"i": pa.array(range(20_000)), "s": pa.array([str(i % 7) for i in range(20_000)])})
    one = hxa.record_hash(table, threads=1)
    assert hxa.record_hash(table, threads=3) == one
    assert hxa.dataset_fingerprint(table, threads=1) == hxa.dataset_fingerprint(table, threads=2)
    groups = hxa.fingerprints_by(table, "s", threads=2)
    assert groups.num_rows == 7
    assert groups["fingerprint"][0].as_py() == hxa.dataset_fingerprint(
        table.filter(pa.compute.equal(table["s"], "0"))
    )


def test_many_small_batches_hash_like_one():
    # The engine hashes batches in groups of about 65,536 rows: a stream of 1,000-row batches crosses several.
    table = pa.table({"i": pa.array(range(150_500)), "s": pa.array([str(i % 11) for i in range(150_500)])})
    batches = table.to_batches(max_chunksize=1_000)
    assert len(batches) == 151
    stream = pa.RecordBatchReader.from_batches(table.schema, batches)
    assert hxa.record_hash(stream) == hxa.record_hash(table.combine_chunks())
    stream = pa.RecordBatchReader.from_batches(table.schema, batches)
    assert hxa.dataset_fingerprint(stream) == hxa.dataset_fingerprint(table.combine_chunks())
    # A value refused in the last batch is refused, whichever group it falls in.
    times = pa.array(range(0, 3000 * 1000, 1000), pa.timestamp("ns", tz="UTC"))
    bad = pa.table({"t": pa.concat_arrays([times, pa.array([1001], pa.timestamp("ns", tz="UTC"))])})
    for call in (hxa.record_hash, hxa.dataset_fingerprint):
        stream = pa.RecordBatchReader.from_batches(bad.schema, bad.to_batches(max_chunksize=1_000))
        with pytest.raises(ValueError, match=r"column 't': the timestamp\[ns\] value 1001"):
            call(stream)


@pytest.mark.parametrize(
    ("array", "text"),
    [
        (pa.array([None], pa.time32("s")), "time32[s]"),
        (pa.array([None], pa.time64("ns")), "time64[ns]"),
        (pa.array([None], pa.float16()), "halffloat"),
        (pa.array([None], pa.month_day_nano_interval()), "Interval(MonthDayNano)"),
        (pa.array([None], pa.list_(pa.time64("us"))), "time64[us]"),
        (pa.UnionArray.from_sparse(pa.array([0], pa.int8()), [pa.array([None], pa.int8())]), "Union"),
    ],
    ids=lambda p: str(p) if isinstance(p, str) else None,
)
def test_types_without_spark_type_are_refused_before_any_output(array, text):
    table = pa.table({"ok": pa.array([None], pa.int8()), "odd col": array})
    for call in (hxa.record_hash, hxa.dataset_fingerprint, lambda t: hxa.record_key(t, ["ok", "odd col"])):
        with pytest.raises(
            ValueError, match=r"column 'odd col': Spark has no type for the Arrow type"
        ) as error:
            call(table)
        assert text in str(error.value)
    assert len(hxa.record_hash(table, ["ok"])) == 1


def test_extension_types_are_refused_at_any_depth():
    uuid = pa.array([b"0123456789abcdef"], pa.uuid())
    nested = pa.StructArray.from_arrays([uuid], ["id"])
    for table in (pa.table({"u": uuid}), pa.table({"s": nested})):
        name = table.column_names[0]
        with pytest.raises(
            ValueError, match=f"column '{name}': Spark has no type for the Arrow extension type arrow.uuid"
        ):
            hxa.record_hash(table)


def test_values_spark_cannot_hold_are_refused():
    with pytest.raises(ValueError, match=r"record_hash: column 't': the timestamp\[ns\] value 1001"):
        hxa.record_hash(pa.table({"t": pa.array([1000, 1001], pa.timestamp("ns", tz="UTC"))}))
    with pytest.raises(ValueError, match="column 't': the timestamp 9223372036854775 s is out of range"):
        hxa.record_hash(pa.table({"t": pa.array([9223372036854775], pa.timestamp("s"))}))
    with pytest.raises(ValueError, match="column 'd': the date64 value 1 ms is not a whole day"):
        hxa.dataset_fingerprint(pa.table({"d": pa.array([1], pa.date64())}))


def test_options_are_checked_as_record_key_with_checks_them():
    table = pa.table({"k": ["a"]})
    refused = [
        (
            {"case": "title"},
            ValueError,
            "record_key: case must be one of 'upper', 'lower', 'keep', got 'title'",
        ),
        ({"null_key": "skip"}, ValueError, "record_key: null_key must be"),
        ({"salt": "a;b"}, ValueError, "record_key: salt must not contain ';'"),
        ({"salt": " a"}, ValueError, "record_key: salt must not begin or end"),
        ({"trim": 1}, TypeError, "record_key: trim must be True or False, got 1"),
        ({"empty_as_null": "yes"}, TypeError, "record_key: empty_as_null must be True or False, got 'yes'"),
        ({"algorithm": "md5"}, ValueError, "record_key: algorithm must be one of"),
        ({"algorithm": "hmac-sha256"}, ValueError, "record_key: algorithm='hmac-sha256' needs hmac_key"),
        ({"hmac_key": "k"}, ValueError, "record_key: hmac_key is only for algorithm='hmac-sha256'"),
        ({"algorithm": "hmac-sha256", "hmac_key": b""}, ValueError, "hmac_key is empty"),
        ({"algorithm": "hmac-sha256", "hmac_key": 5}, TypeError, "hmac_key must be bytes or str"),
        ({"threads": 0}, ValueError, "threads must be at least 1"),
        ({"threads": True}, TypeError, "threads must be an int"),
    ]
    for options, error, message in refused:
        with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
            hxa.record_key(table, "k", **options)
    with pytest.raises(
        ValueError, match="dataset_fingerprint: algorithm must be one of 'murmur3', 'lthash16'"
    ):
        hxa.dataset_fingerprint(table, algorithm="sha256")
    with pytest.raises(ValueError, match="dataset_fingerprint: hmac_key is only for algorithm='lthash16'"):
        hxa.dataset_fingerprint(table, hmac_key="k")
    # The key is the secret's value: a str is its UTF-8 bytes.
    keyed = hxa.record_key(table, "k", algorithm="hmac-sha256", hmac_key="k\u00fc")
    assert keyed == hxa.record_key(table, "k", algorithm="hmac-sha256", hmac_key="k\u00fc".encode())


def test_columns_are_resolved_as_spark_resolves_names():
    table = pa.table({"id": [1], "Name": ["a"], "dup": [1], "DUP": [2]})
    assert hxa.record_hash(table, ["name", "ID"]) == hxa.record_hash(table, ["Name", "id"])
    with pytest.raises(
        ValueError,
        match=r"record_hash: column 'nmae' is unknown \(did you mean 'Name'\?\); available columns: id, Name",
    ):
        hxa.record_hash(table, ["nmae"])
    with pytest.raises(ValueError, match="record_hash: column 'Dup' is ambiguous"):
        hxa.record_hash(table, ["Dup"])
    with pytest.raises(ValueError, match="record_hash: column 'id' is given twice"):
        hxa.record_hash(table, ["id", "ID"], by_name=True)
    with pytest.raises(ValueError, match="fingerprints_by: grouping column 'x' is unknown"):
        hxa.fingerprints_by(table, "x")
    with pytest.raises(TypeError, match="record_hash: expected Arrow data"):
        hxa.record_hash([1, 2])
    with pytest.raises(ValueError, match="record_key: every key part is NULL"):
        hxa.record_key(pa.table({"k": pa.array([None], pa.string())}), "k", null_key="error")


def test_a_panic_on_a_pool_thread_is_a_python_exception():
    from hashexpr import _native

    with pytest.raises(RuntimeError, match="hashexpr.arrow: internal error: a deliberate panic"):
        _native._panic_on_pool(2)
    # The pool still works afterwards.
    assert len(hxa.record_hash(pa.table({"a": [1]}), threads=2)) == 1


def test_a_missing_extension_says_how_to_build_it():
    code = (
        "import sys; sys.modules['hashexpr._native'] = None\n"
        "import pyarrow as pa\nfrom hashexpr import arrow\n"
        "try:\n    arrow.record_hash(pa.table({'a': [1]}))\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "hashexpr.arrow needs the compiled engine hashexpr._native" in out
    assert "make venv" in out


def test_a_batch_of_a_stream_must_keep_the_schema():
    schema = pa.schema({"a": pa.int32()})

    class Stream:
        def __arrow_c_stream__(self, requested_schema=None):
            batches = [pa.record_batch({"a": pa.array([1], pa.int32())})]
            return pa.RecordBatchReader.from_batches(schema, batches).__arrow_c_stream__(requested_schema)

    assert len(hxa.record_hash(Stream())) == 1
    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    assert hxa.record_hash(pa.table({"t": [when]})) == hxa.record_hash(
        pa.table({"t": pa.array([int(when.timestamp() * 10**6)], pa.timestamp("us", tz="UTC"))})
    )
