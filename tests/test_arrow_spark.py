"""hashexpr.arrow against the Spark jar: generated Arrow tables (nested schemas, edge values of every type) are
written to Parquet with pyarrow and read by Spark, and every row's hashes, keys and the fingerprints must be
Spark's, for the table as written and for its physical variants (slices, chunks, streams, large, view and
dictionary types). One Spark session (conftest's ``spark``)."""

from __future__ import annotations

import decimal
import itertools
import json
import math
import re
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F
from spark_conf import TEST_SECRETS

import hashexpr as hx
from hashexpr import arrow as hxa
from hashexpr.spark.fingerprint import _fingerprint_column

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec"
SECRET = "pii"
_counter = itertools.count()

# --- values ------------------------------------------------------------------------------------------------


def _nan(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


FLOAT_EDGES = [
    0.0,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
    _nan(0x7FF0000000000001),
    _nan(0xFFF8000000000123),
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    1.5,
    -1.5,
]
FLOAT32_EDGES = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.401298464324817e-45, 3.4028234663852886e38, 0.1]
DAY_MIN, DAY_MAX = -25567, 2932896  # 1900-01-01 .. 9999-12-31
MICROS_MIN, MICROS_MAX = -2208988800 * 10**6, 253402300799 * 10**6 + 999999


def _ints(bits: int, signed: bool = True) -> st.SearchStrategy[int]:
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    return st.sampled_from([low, high, 0, -1 if signed else 1]) | st.integers(low, high)


def _decimals(t: pa.Decimal128Type) -> st.SearchStrategy[decimal.Decimal]:
    bound = 10**t.precision - 1
    unscaled = st.sampled_from([bound, -bound, 0, 10 ** (t.precision - 1)]) | st.integers(-bound, bound)
    # Exact: the default context would round 38 digits to 28.
    return unscaled.map(lambda u: decimal.Decimal(u).scaleb(-t.scale, decimal.Context(prec=40)))


ATOMIC_TYPES = [
    pa.bool_(),
    pa.int8(),
    pa.int16(),
    pa.int32(),
    pa.int64(),
    pa.uint8(),
    pa.uint16(),
    pa.uint32(),
    pa.uint64(),
    pa.float32(),
    pa.float64(),
    pa.string(),
    pa.binary(),
    pa.date32(),
    pa.timestamp("us", tz="UTC"),
    pa.timestamp("us"),
    pa.timestamp("ms", tz="UTC"),
    pa.decimal128(38, 0),
    pa.decimal128(38, 10),
    pa.decimal128(10, 2),
    pa.decimal128(5, 5),
    pa.null(),
]
KEY_TYPES = [pa.string(), pa.int32(), pa.int64(), pa.date32()]


def values(t: pa.DataType) -> st.SearchStrategy:
    """Values of ``t`` as pyarrow builds them, NULL included (except for map keys)."""
    return st.none() | non_null(t)


def non_null(t: pa.DataType) -> st.SearchStrategy:
    types = pa.types
    if types.is_null(t):
        return st.none()
    if types.is_boolean(t):
        return st.booleans()
    if types.is_integer(t):
        return _ints(t.bit_width, types.is_signed_integer(t))
    if types.is_float32(t):
        return st.sampled_from(FLOAT32_EDGES) | st.floats(width=32)
    if types.is_float64(t):
        return st.sampled_from(FLOAT_EDGES) | st.floats()
    if types.is_decimal(t):
        return _decimals(t)
    if types.is_string(t):
        return st.sampled_from(["", " ", "a", "\u00df", "\U0001f600", "a\x00b"]) | st.text(max_size=6)
    if types.is_binary(t):
        return st.sampled_from([b"", b"\xff", b"\xc3", b"\xed\xa0\x80"]) | st.binary(max_size=6)
    if types.is_date32(t):
        return st.integers(DAY_MIN, DAY_MAX)
    if types.is_timestamp(t):
        scale = 1000 if t.unit == "ms" else 1
        return st.integers(MICROS_MIN // scale, MICROS_MAX // scale)
    if types.is_list(t):
        return st.lists(values(t.value_type), max_size=3)
    if types.is_map(t):
        return st.lists(st.tuples(non_null(t.key_type), values(t.item_type)), max_size=3)
    if types.is_struct(t):
        return st.tuples(*(values(t.field(i).type) for i in range(t.num_fields))).map(
            lambda row: {t.field(i).name: v for i, v in enumerate(row)}
        )
    raise AssertionError(t)


def _nested(children: st.SearchStrategy[pa.DataType]) -> st.SearchStrategy[pa.DataType]:
    return st.one_of(
        children.map(pa.list_),
        st.lists(children, min_size=1, max_size=3).map(
            lambda ts: pa.struct([(f"f{i}", t) for i, t in enumerate(ts)])
        ),
        st.tuples(st.sampled_from(KEY_TYPES), children).map(lambda kv: pa.map_(*kv)),
    )


arrow_types = st.recursive(st.sampled_from(ATOMIC_TYPES), _nested, max_leaves=5)


@st.composite
def tables(draw) -> pa.Table:
    column_types = draw(st.lists(arrow_types, min_size=1, max_size=4))
    rows = draw(st.integers(0, 6))
    columns = {"rid": pa.array(range(rows), pa.int32())}
    for i, t in enumerate(column_types):
        columns[f"c{i}"] = pa.array(draw(st.lists(values(t), min_size=rows, max_size=rows)), t)
    return pa.table(columns)


# --- variants ----------------------------------------------------------------------------------------------


def _large(t: pa.DataType) -> pa.DataType:
    """``t`` with every string, binary and list large."""
    types = pa.types
    if types.is_string(t):
        return pa.large_string()
    if types.is_binary(t):
        return pa.large_binary()
    if types.is_list(t):
        return pa.large_list(_large(t.value_type))
    if types.is_struct(t):
        return pa.struct([t.field(i).with_type(_large(t.field(i).type)) for i in range(t.num_fields)])
    if types.is_map(t):
        return pa.map_(_large(t.key_type), _large(t.item_type))
    return t


def _has_null(t: pa.DataType) -> bool:
    if pa.types.is_null(t):
        return True
    return any(_has_null(t.field(i).type) for i in range(t.num_fields))


def _large_table(table: pa.Table) -> pa.Table:
    """``table`` with every string, binary and list large. pyarrow (26) casts a nested null child too short, so
    a column with one is built again from its values instead."""
    schema = pa.schema([f.with_type(_large(f.type)) for f in table.schema])
    columns = [
        pa.array(column.to_pylist(), large.type)
        if _has_null(large.type) and not pa.types.is_null(large.type)
        else column.cast(large.type)
        for column, large in zip(table.columns, schema)
    ]
    return pa.table(columns, schema=schema)


def _views(table: pa.Table) -> pa.Table:
    """Top-level strings as views (and dictionaries), binaries as views."""
    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type):
            column = table.column(i).cast(pa.string_view()) if i % 2 else table.column(i).dictionary_encode()
            table = table.set_column(i, field.name, column)
        elif pa.types.is_binary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(pa.binary_view()))
    return table


def variants(table: pa.Table) -> dict[str, object]:
    """The same rows in other physical forms."""
    n = table.num_rows
    doubled = pa.concat_tables([table, table]).combine_chunks()
    split = n // 2
    return {
        "table": table,
        "slice": doubled.slice(n, n),
        "chunks": pa.concat_tables([table.slice(0, split), table.slice(split)]),
        "stream": pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=2)),
        "large": _large_table(table),
        "views": _views(table),
        "batch": table.combine_chunks().to_batches()[0] if n else table,
    }


# --- Spark -------------------------------------------------------------------------------------------------


def _hexes(array: pa.Array) -> list[str | None]:
    return [None if v is None else v.hex().upper() for v in array.to_pylist()]


def spark_results(spark, table: pa.Table, tmp_path: Path, key_options: dict) -> dict[str, list]:
    path = tmp_path / f"t{next(_counter)}.parquet"
    pq.write_table(table, path)
    df = spark.read.parquet(str(path))
    columns = [c for c in df.columns if c != "rid"]
    rows = F.struct(
        "rid",
        F.hex(hx.record_hash(*columns)).alias("murmur3"),
        F.hex(hx.record_hash(*columns, algorithm="sha256")).alias("sha256"),
        F.hex(hx.record_hash(*columns, algorithm="hmac-sha256", secret=SECRET)).alias("hmac"),
        F.hex(hx.record_hash(*columns, by_name=True)).alias("by_name"),
        F.hex(hx.record_key(*columns[:2], **key_options)).alias("key"),
    )
    # One job: the rows' hashes and the fingerprints of the columns but rid, as aggregates of one scan.
    result = df.agg(
        F.collect_list(rows).alias("rows"),
        _fingerprint_column(columns).alias("fp_murmur3"),
        _fingerprint_column(columns, "lthash16").alias("fp_lthash16"),
        _fingerprint_column(columns, "lthash16", SECRET).alias("fp_lthash16_hmac"),
    ).first()
    ordered = sorted(result["rows"], key=lambda r: r["rid"])
    results = {name: [r[name] for r in ordered] for name in ("murmur3", "sha256", "hmac", "by_name", "key")}
    results.update({name: result[name] for name in ("fp_murmur3", "fp_lthash16", "fp_lthash16_hmac")})
    return results


key_options = st.fixed_dictionaries(
    {
        "salt": st.sampled_from(["", "hub"]),
        "trim": st.booleans(),
        "case": st.sampled_from([None, "upper", "lower"]),
        "empty_as_null": st.booleans(),
        "null_key": st.sampled_from(["hash", "null"]),
    }
)


def computations(columns: list[str], options: dict) -> dict:
    """The engine's counterpart of each of :func:`spark_results`."""
    key = TEST_SECRETS[SECRET]
    return {
        "murmur3": lambda d: _hexes(hxa.record_hash(d)),
        "sha256": lambda d: _hexes(hxa.record_hash(d, columns, algorithm="sha256", threads=1)),
        "hmac": lambda d: _hexes(hxa.record_hash(d, columns, algorithm="hmac-sha256", hmac_key=key)),
        "by_name": lambda d: _hexes(hxa.record_hash(d, by_name=True)),
        "key": lambda d: _hexes(hxa.record_key(d, columns[:2], **options)),
        "fp_murmur3": lambda d: hxa.dataset_fingerprint(d),
        "fp_lthash16": lambda d: hxa.dataset_fingerprint(d, algorithm="lthash16", threads=1),
        "fp_lthash16_hmac": lambda d: hxa.dataset_fingerprint(d, algorithm="lthash16", hmac_key=key),
    }


# A null child under a map (pyarrow casts it too short when the large variant is made).
_MAP_OF_NULL_STRUCTS = pa.table(
    {
        "rid": pa.array([0], pa.int32()),
        "c0": pa.array([[(-(2**31), None), (-(2**31), None)]], pa.map_(pa.int32(), pa.struct([("f0", pa.null())]))),
    }
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=tables(), options=key_options)
@example(
    table=_MAP_OF_NULL_STRUCTS,
    options={"salt": "", "trim": False, "case": None, "empty_as_null": False, "null_key": "hash"},
)
def test_generated_tables_hash_as_spark_reads_them(spark, tmp_path_factory, table, options):
    expected = spark_results(spark, table, tmp_path_factory.mktemp("arrow"), options)
    data = table.drop_columns(["rid"])
    for name, compute in computations(data.column_names, options).items():
        # variants() makes a new stream each time: a stream is read once.
        for variant, form in variants(data).items():
            assert compute(form) == expected[name], (name, variant)


# --- fixed data: inputs, names, groups ---------------------------------------------------------------------

FIXED = pa.table(
    {
        "id": pa.array([1, 2, 3, 4, None], pa.int64()),
        "Name.with dots": pa.array(["a", " B ", None, "", "\u00df"], pa.string()),
        "x`y": pa.array([0.0, -0.0, math.nan, _nan(0xFFF8000000000001), None], pa.float64()),
        "u": pa.array([0, 2**64 - 1, None, 1, 7], pa.uint64()),
        "at": pa.array([0, -1, None, 10**15, 5], pa.timestamp("us", tz="UTC")),
        "d": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-0.01"), 0, 3], pa.decimal128(10, 2)),
        "tags": pa.array([["x"], [], None, [None], ["y", "z"]], pa.list_(pa.string())),
        "m": pa.array(
            [[("k", 1)], [], None, [("a", None), ("b", 2)], [("b", 2), ("a", None)]],
            pa.map_(pa.string(), pa.int32()),
        ),
        "s": pa.array(
            [{"p": 1, "q": None}, None, {"p": None, "q": None}, {"p": 2, "q": "r"}, None],
            pa.struct([("p", pa.int16()), ("q", pa.string())]),
        ),
    }
)


@pytest.fixture(scope="module")
def fixed(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("fixed") / "fixed.parquet"
    pq.write_table(FIXED, path, row_group_size=2)
    df = spark.read.parquet(str(path))
    rows = df.select(
        F.hex(hx.record_hash("*")).alias("h"), F.hex(hx.record_hash("*", by_name=True)).alias("n")
    ).collect()
    return {
        "path": path,
        "df": df,
        "hashes": [r["h"] for r in rows],
        "by_name": [r["n"] for r in rows],
        "fingerprint": hx.dataset_fingerprint(df),
    }


def test_names_with_dots_spaces_backticks_and_case(fixed):
    assert _hexes(hxa.record_hash(FIXED)) == fixed["hashes"]
    assert _hexes(hxa.record_hash(FIXED, by_name=True)) == fixed["by_name"]
    assert hxa.dataset_fingerprint(FIXED) == fixed["fingerprint"]
    # A name typed in another case resolves to the column, which goes by the schema's spelling.
    assert (
        _hexes(hxa.record_hash(FIXED, [n.upper() for n in FIXED.column_names], by_name=True))
        == fixed["by_name"]
    )


def test_a_parquet_dataset_streams_as_spark_reads_it(fixed):
    import pyarrow.dataset as ds

    dataset = ds.dataset(fixed["path"])
    assert hxa.dataset_fingerprint(dataset) == fixed["fingerprint"]
    assert hxa.dataset_fingerprint(dataset.scanner(batch_size=1)) == fixed["fingerprint"]
    assert (
        _hexes(hxa.record_hash(pq.ParquetFile(fixed["path"]).iter_batches(batch_size=2).__next__()))
        == (fixed["hashes"][:2])
    )


def test_polars_and_duckdb_inputs(fixed):
    import duckdb
    import polars as pl

    if hasattr(pl, "Map"):
        # Polars 2 keeps maps as maps and strings as large strings: every column hashes as Spark hashes the
        # original.
        frame = pl.from_arrow(FIXED)
        assert frame.schema["m"] == pl.Map(pl.String, pl.Int32)
        assert hxa.dataset_fingerprint(frame) == fixed["fingerprint"]
        assert _hexes(hxa.record_hash(frame)) == fixed["hashes"]
        assert _hexes(hxa.record_hash(frame.lazy())) == fixed["hashes"]
    else:
        # Polars 1 has no map type: a map becomes a list of key-value structs (as in the Parquet Polars 1 writes,
        # which Spark reads as ARRAY<STRUCT>). The other columns hash as Spark hashes the original.
        no_map = FIXED.drop_columns(["m"])
        frame = pl.from_arrow(no_map)
        assert hxa.dataset_fingerprint(frame) == hxa.dataset_fingerprint(no_map)
        assert hxa.record_hash(frame) == hxa.record_hash(no_map)
        assert hxa.record_hash(frame.lazy()) == hxa.record_hash(no_map)
        entries = pa.list_(pa.struct([("key", pa.string()), ("value", pa.int32())]))
        pairs = [None if m is None else [{"key": k, "value": v} for k, v in m] for m in FIXED["m"].to_pylist()]
        as_list = pa.table({"m": pa.array(pairs, entries)})
        assert hxa.record_hash(pl.from_arrow(FIXED.select(["m"]))) == hxa.record_hash(as_list)
    con = duckdb.connect()
    relation = con.from_arrow(FIXED)
    assert hxa.dataset_fingerprint(relation) == fixed["fingerprint"]
    assert _hexes(hxa.record_hash(con.from_arrow(FIXED))) == fixed["hashes"]


def test_duckdb_sql_functions(fixed):
    import duckdb

    con = duckdb.connect()
    con.register("t", FIXED)
    types = [str(t) for t in con.sql("SELECT * FROM t").types]
    hxa.register(con, "row_hash", types)
    names = ", ".join(f'"{c}"' for c in FIXED.column_names)
    got = [r[0].hex().upper() for r in con.sql(f"SELECT row_hash({names}) FROM t").fetchall()]
    assert got == fixed["hashes"]


def test_duckdb_recipe_of_arrow_md_runs_as_written(spark):
    """ARROW.md's DuckDB recipe runs, its function over every column is Spark's record_hash(*), and the error
    it quotes for f(*) is the one DuckDB gives."""
    import duckdb

    doc = (ROOT / "docs" / "ARROW.md").read_text()
    section = doc[doc.index("**DuckDB**") :]
    start = section.index("```python") + len("```python")
    recipe = section[start : section.index("```", start)]
    namespace: dict = {}
    exec(compile(recipe, "ARROW.md", "exec"), namespace)  # noqa: S102 - the documentation's own example
    con = namespace["con"]
    got = con.sql("SELECT id, hex(hash_customers(*COLUMNS(*))) FROM customers ORDER BY id").fetchall()
    rows = spark.createDataFrame(con.sql("SELECT * FROM customers").fetchall(), "id INT, name STRING")
    expected = rows.select("id", F.hex(hx.record_hash("*")).alias("h")).orderBy("id").collect()
    assert got == [(r["id"], r["h"]) for r in expected]
    quoted = re.search(r"`(Binder Error: No function matches[^`]*)`", section.replace("\n", " "))
    assert quoted is not None, "ARROW.md quotes DuckDB's error for f(*)"
    with pytest.raises(duckdb.BinderException) as refused:
        con.sql("SELECT hash_customers(*) FROM customers").fetchall()
    assert " ".join(quoted.group(1).split()) in " ".join(str(refused.value).split())


def test_pandas_input_as_spark_reads_its_parquet(spark, tmp_path):
    import pandas as pd

    frame = pd.DataFrame(
        {
            "id": [1, 2, 3],
            "x": [0.5, float("nan"), -0.0],
            "s": ["a", None, "c"],
            # Microseconds: a naive datetime64[ns] may hold INT96 instants, which the engine does not guess.
            "when": pd.to_datetime(
                ["2024-01-01 10:00:00.000001", None, "1969-12-31 23:59:59"], format="ISO8601"
            ).as_unit("us"),
            "c": pd.Categorical(["p", "q", "p"]),
        }
    )
    frame.to_parquet(tmp_path / "f.parquet", index=False, coerce_timestamps="us")
    df = spark.read.parquet(str(tmp_path / "f.parquet"))
    assert hxa.dataset_fingerprint(frame) == hx.dataset_fingerprint(df)


def test_fingerprints_by_groups_as_spark(fixed):
    for by in (["x`y"], ["Name.with dots", "id"], ["s"]):
        spark_groups = hx.fingerprints_by(fixed["df"], *by).collect()
        ours = hxa.fingerprints_by(FIXED, by)
        assert sorted(ours.column("fingerprint").to_pylist()) == sorted(
            r["fingerprint"] for r in spark_groups
        ), by
        for algorithm in ("lthash16",):
            spark_lt = hx.fingerprints_by(fixed["df"], *by, algorithm=algorithm).collect()
            ours_lt = hxa.fingerprints_by(FIXED, by, algorithm=algorithm, threads=1)
            assert sorted(ours_lt.column("fingerprint").to_pylist()) == sorted(
                r["fingerprint"] for r in spark_lt
            )


@pytest.mark.parametrize(
    "vector", json.loads((SPEC / "lthash-vectors-v1.json").read_text())["vectors"], ids=lambda v: v["name"]
)
def test_lthash_vectors_from_the_data_spark_makes(spark, vector):
    """The lthash vectors give their data as SQL: Spark makes it, the engine fingerprints its Arrow form."""
    keys = json.loads((SPEC / "lthash-vectors-v1.json").read_text())["keys"]
    table = spark.sql(vector["sql"]).toArrow()
    key = keys[vector["key"]] if vector["key"] else None
    assert hxa.dataset_fingerprint(table, algorithm="lthash16", hmac_key=key) == vector["fingerprint"]
