"""``hashexpr.arrow`` on Parquet as Spark reads it: Spark's own files (INT96 timestamps, partition directories, its
footer schema), pandas frames with every kind of index, Polars frames, and the Arrow and Parquet types whose
reading differs between pyarrow and Spark. Each file is read by Spark (conftest's ``spark``) and by the engine
from the path, a dataset, a ``ParquetFile``, a scanner and the in-memory data; where the engine cannot be sure
of Spark's answer it refuses, naming the column and the fix."""

from __future__ import annotations

import datetime
import decimal
import json

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F
from spark_conf import spark_conf

import hashexpr as hx
from hashexpr import arrow as hxa
from hashexpr import reference
from hashexpr.cli import main

INT96 = {"spark.sql.parquet.outputTimestampType": "INT96"}
# Instants pyarrow's nanoseconds cannot hold (they wrap), one before the epoch with its last microsecond, nested
# ones, a TIMESTAMP_NTZ column that stays one, and the INT32 and INT64 decimals and small integers Spark writes.
SPARK_ROWS = """
SELECT id,
       CASE id WHEN 0 THEN TIMESTAMP'9999-12-31 23:59:59.999999' WHEN 1 THEN TIMESTAMP'0001-01-01 00:00:00'
               WHEN 2 THEN TIMESTAMP'1969-12-31 23:59:59.999999' WHEN 3 THEN NULL
               ELSE TIMESTAMP'2024-03-01 12:34:56.123456' + make_interval(0, 0, 0, 0, id, 0, 0) END AS ts,
       TIMESTAMP_NTZ'2024-03-01 12:34:56.5' + make_interval(0, 0, 0, id, 0, 0, 0) AS ntz,
       array(TIMESTAMP'1900-01-01 00:00:00' + make_interval(0, 0, 0, id, 0, 0, 0), NULL) AS arr,
       map('k', TIMESTAMP'1970-01-01 00:00:00' - make_interval(0, 0, 0, id, 0, 0, 0)) AS m,
       named_struct('at', TIMESTAMP'2262-04-12 00:00:00', 'n', id) AS st,
       CAST(id * 1.25 AS DECIMAL(5, 2)) AS dec32, CAST(id - 2.5 AS DECIMAL(18, 3)) AS dec64,
       CAST(id AS TINYINT) AS tiny, CAST(-id AS SMALLINT) AS small,
       DATE'2024-01-01' + CAST(id % 2 AS INT) AS day,
       IF(id = 4, NULL, IF(id % 2 = 0, 'a/b c', 'x=y')) AS kind
FROM range(6)
"""


#: The columns of SPARK_ROWS whose instants lie within 1677-2262, which nanoseconds hold.
IN_RANGE = ["id", "arr", "m"]


def _hexes(array: pa.Array) -> list[str]:
    return sorted(v.hex().upper() for v in array.to_pylist())


def _spark(df) -> tuple[list[str], str]:
    """Spark's record hashes (sorted) and fingerprint of every column of ``df``, in one job."""
    from hashexpr.spark.fingerprint import _fingerprint_column

    row = df.agg(
        F.collect_list(F.hex(hx.record_hash("*"))).alias("h"), _fingerprint_column(df.columns).alias("f")
    ).first()
    return sorted(row["h"]), row["f"]


def _engine(data) -> tuple[list[str], str]:
    return _hexes(hxa.record_hash(data)), hxa.dataset_fingerprint(data)


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory):
    """Spark's files, INT96 by Spark's default: a directory of two part files and a partitioned directory."""
    folder = tmp_path_factory.mktemp("spark-written")
    rows = spark.sql(SPARK_ROWS)
    with spark_conf(spark, INT96):
        rows.repartition(2).write.parquet(str(folder / "plain"))
        rows.write.partitionBy("day", "kind").parquet(str(folder / "parted"))
    return {
        "plain": folder / "plain",
        "parted": folder / "parted",
        "spark_plain": _spark(spark.read.parquet(str(folder / "plain"))),
        "spark_in_range": _spark(spark.read.parquet(str(folder / "plain")).select(*IN_RANGE)),
        "spark_parted": _spark(spark.read.parquet(str(folder / "parted"))),
    }


def test_spark_int96_files_hash_as_spark_reads_them(written):
    folder = written["plain"]
    parts = sorted(folder.glob("part-*.parquet"))
    assert len(parts) == 2
    schema = pq.ParquetFile(parts[0]).schema
    assert [schema.column(i).physical_type for i in range(len(schema))].count("INT96") == 4
    # Columns whose instants pyarrow's nanoseconds hold: only their type (TIMESTAMP, not TIMESTAMP_NTZ) is at stake.
    in_range = written["spark_in_range"]
    assert hxa.dataset_fingerprint(ds.dataset(folder), IN_RANGE) == in_range[1]
    table = pq.read_table(folder, columns=IN_RANGE, coerce_int96_timestamp_unit="us")
    assert _hexes(hxa.record_hash(table)) == in_range[0]
    expected = written["spark_plain"]
    # pyarrow's default reads INT96 in nanoseconds; the engine reads the files again in microseconds.
    assert _engine(ds.dataset(folder)) == expected
    assert _engine(pq.read_table(folder, coerce_int96_timestamp_unit="us")) == expected
    assert _engine(str(folder)) == expected
    assert _engine(folder) == expected
    us = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="us"))
    scanned = ds.dataset(folder, format=us)
    assert _hexes(hxa.record_hash(scanned.scanner(batch_size=2))) == expected[0]
    assert hxa.dataset_fingerprint(scanned.scanner()) == expected[1]
    # A ParquetFile cannot be read again to check its INT96 years: its INT96 columns are refused, the others hash.
    with pytest.raises(ValueError, match="a ParquetFile cannot be read again to check it: pass the file's path"):
        hxa.record_hash(pq.ParquetFile(parts[0], coerce_int96_timestamp_unit="us"))
    one = [_hexes(hxa.record_hash(pq.ParquetFile(p, coerce_int96_timestamp_unit="us"), IN_RANGE[:1])) for p in parts]
    assert sorted(one[0] + one[1]) == _hexes(hxa.record_hash(folder, IN_RANGE[:1]))
    assert hxa.spark_types(folder)[1:6] == [
        ("ts", "timestamp"),
        ("ntz", "timestamp_ntz"),
        ("arr", "array<timestamp>"),
        ("m", "map<string,timestamp>"),
        ("st", "struct<`at`:timestamp,`n`:bigint>"),
    ]
    # A column that is not hashed is not read into the result.
    assert len(hxa.record_hash(pq.read_table(folder), ["id"])) == 6


def test_int96_read_in_nanoseconds_is_refused(written):
    """In nanoseconds, 9999-12-31 wraps to 1830: the engine refuses, naming the column and the reading that is
    exact, where it cannot read the file again itself."""
    folder = written["plain"]
    fix = "coerce_int96_timestamp_unit='us'"
    for data in (pq.read_table(folder), ds.dataset(folder).scanner()):
        with pytest.raises(
            ValueError, match=r"^dataset_fingerprint: column 'ts': it is a Parquet INT96"
        ) as error:
            hxa.dataset_fingerprint(data)
        assert fix in str(error.value)
    # pandas (and Polars) read INT96 as a naive datetime64[ns], as they hold wall-clock times: not guessed.
    with pytest.raises(
        ValueError, match=r"^record_hash: column 'ts': it is a timestamp\[ns\] without a time zone"
    ):
        hxa.record_hash(pd.read_parquet(folder, columns=["id", "ts"]))


def test_int96_at_the_ends_of_sparks_range_is_refused_and_within_pyarrows_hashes_as_spark(spark, tmp_path):
    """Spark writes INT96 with 64-bit arithmetic that wraps and reads it back alike, years -290308 to 294247;
    pyarrow misreads the day and nanoseconds of years before 1 and after 287,566 (year 294247 came back some
    220,000 years BC). Files Spark wrote at both ends of its range are refused, naming the column, on every
    route that can read the file again; files just inside the years pyarrow reads exactly hash as Spark reads
    them."""
    ends = """SELECT id, timestamp_micros(m) AS t, named_struct('n', id, 'at', timestamp_micros(m)) AS st FROM VALUES
              (0, 9223372036854775807L), (1, -9223372036854775808L), (2, 0L) AS v(id, m)"""
    inside = """SELECT id, timestamp_micros(m) AS t FROM VALUES
                (0, -62135596800000000L), (1, 9000000000000000001L), (2, 253402300799999999L), (3, NULL),
                (4, 9012505233654775807L), (5, -62135596799999999L) AS v(id, m)"""
    settings = {**INT96, "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED"}
    with spark_conf(spark, settings):
        spark.sql(ends).coalesce(1).write.parquet(str(tmp_path / "ends"))
        spark.sql(inside).coalesce(1).write.parquet(str(tmp_path / "inside"))
    part = min((tmp_path / "ends").glob("part-*.parquet"))
    assert pq.ParquetFile(part).schema.column(1).physical_type == "INT96"
    # pyarrow's own reading is wrong there (the reason for the refusal): 294247 comes back negative.
    assert pq.read_table(part, coerce_int96_timestamp_unit="us")["t"].cast(pa.int64())[0].as_py() < 0
    us = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="us"))
    for data in (tmp_path / "ends", ds.dataset(tmp_path / "ends"), ds.dataset(tmp_path / "ends", format=us).scanner()):
        with pytest.raises(ValueError, match=r"^record_hash: column 't': it holds a Parquet INT96 timestamp "
                           r"before year 1 or after year 287,566"):  # fmt: skip
            hxa.record_hash(data)
        with pytest.raises(ValueError, match=r"^record_hash: column 'st': it holds a Parquet INT96"):
            hxa.record_hash(data, ["id", "st"])
    ids = _spark(spark.read.parquet(str(tmp_path / "ends")).select("id"))[0]
    assert _hexes(hxa.record_hash(tmp_path / "ends", ["id"])) == ids
    expected = _spark(spark.read.parquet(str(tmp_path / "inside")))
    for data in (tmp_path / "inside", ds.dataset(tmp_path / "inside"), ds.dataset(tmp_path / "inside", format=us).scanner()):
        assert _engine(data) == expected


def test_int96_nanoseconds_are_floored_to_microseconds_as_spark_does(spark, tmp_path):
    """INT96 holds a day and nanoseconds of the day (Impala and Hive write sub-microsecond ones): Spark keeps
    microseconds by dividing the nanoseconds of the day, which are never negative, so an instant before the
    epoch is floored; pyarrow's reading in microseconds is the same division."""
    nanos = pa.array([-1, 1_500, -1_500, 86_399_999_999_999, None], pa.timestamp("ns"))
    pq.write_table(pa.table({"t": nanos}), tmp_path / "t.parquet", use_deprecated_int96_timestamps=True)
    read = spark.read.parquet(str(tmp_path / "t.parquet"))
    assert [r[0] for r in read.selectExpr("unix_micros(t)").collect()] == [-1, 1, -2, 86_399_999_999, None]
    assert _engine(tmp_path / "t.parquet") == _spark(read)
    # Read in nanoseconds, without Spark's schema, the column says neither its type nor its microseconds.
    with pytest.raises(ValueError, match=r"column 't': it is a timestamp\[ns\] without a time zone"):
        hxa.record_hash(pq.read_table(tmp_path / "t.parquet"))


def test_a_partitioned_directory_as_spark_reads_it(written):
    folder = written["parted"]
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == ["day=2024-01-01", "day=2024-01-02"]
    assert _engine(folder) == written["spark_parted"]
    assert hxa.spark_types(folder)[-2:] == [("day", "date"), ("kind", "string")]
    # pyarrow's own partitioning reads day as a string, which Spark reads as a DATE.
    with pytest.raises(ValueError, match="Spark reads the partition column 'day' as date .* pass the path"):
        hxa.dataset_fingerprint(ds.dataset(folder, partitioning="hive"))
    with pytest.raises(ValueError, match=r"partition columns \['day', 'kind'\] .* the dataset has \[\]"):
        hxa.dataset_fingerprint(ds.dataset(folder))


def test_files_that_disagree_are_refused(spark, tmp_path):
    """An INT96 file beside a TIMESTAMP_NTZ one: Spark reads both as the type of whichever file it reads the
    schema from; the engine names the column and both files."""
    table = pa.table({"id": [1], "t": pa.array([0], pa.timestamp("us"))})
    pq.write_table(table, tmp_path / "a.parquet", use_deprecated_int96_timestamps=True)
    pq.write_table(table, tmp_path / "b.parquet")
    assert spark.read.parquet(str(tmp_path)).schema["t"].dataType.simpleString() == "timestamp"
    for data in (ds.dataset(tmp_path), tmp_path):
        with pytest.raises(ValueError, match="column 't': the files disagree on its Spark type") as error:
            hxa.record_hash(data)
        assert "a.parquet holds a timestamp" in str(error.value)
        assert "b.parquet a timestamp_ntz" in str(error.value)
        assert len(hxa.record_hash(data, ["id"])) == 2


BASE = pd.DataFrame(
    {
        "n": [1, 2, 3, 4],
        "s": ["a", None, "c", "d"],
        "t": pd.to_datetime(
            ["2024-01-01 10:00:00.000001", None, "1969-12-31 23:59:59", "2000-02-29"], format="ISO8601"
        ).as_unit("us"),
    }
)
INDEXES = {
    "default RangeIndex": lambda df: df,
    "named RangeIndex": lambda df: df.rename_axis("rid"),
    "RangeIndex from 5 by 2": lambda df: df.set_axis(pd.RangeIndex(5, 13, 2)),
    "left by a filter": lambda df: df[df["n"] != 2],
    "sorted": lambda df: df.sort_values("n", ascending=False),
    "named strings": lambda df: df.set_axis(pd.Index(["p", "q", "r", "s"], name="key")),
    "datetimes": lambda df: df.set_axis(
        pd.DatetimeIndex(["2024-01-01", "2024-01-02", None, "2024-01-04"]).as_unit("us")
    ),
    "two levels, one unnamed": lambda df: df.set_axis(
        pd.MultiIndex.from_arrays([[1, 1, 2, 2], ["a", "b", "a", "b"]], names=["k", None])
    ),
    "categorical": lambda df: df.set_axis(pd.CategoricalIndex(["u", "v", "u", "w"])),
    "named as a column": lambda df: df.set_axis(pd.Index([7, 8, 9, 10], name="n")),
}


def test_pandas_frames_hash_as_spark_reads_their_parquet_whatever_the_index(spark, tmp_path):
    """``df.to_parquet(path)`` writes a RangeIndex as metadata only and any other index as columns after the
    frame's (``__index_level_0__`` or its names): every hxa function and the reference follow it."""
    for i, (kind, make) in enumerate(INDEXES.items()):
        frame = make(BASE)
        frame.to_parquet(tmp_path / f"{i}.parquet")
        read = spark.read.parquet(str(tmp_path / f"{i}.parquet"))
        expected = _spark(read)
        assert [n for n, _ in hxa.spark_types(frame)] == read.columns, kind
        assert _engine(frame) == expected, kind
        assert reference.fingerprint_pandas(frame) == expected[1], kind
        assert hxa.fingerprints_by(frame, "n").num_rows == frame["n"].nunique(), kind
    written = pq.read_schema(tmp_path / "7.parquet").names
    assert written == ["n", "s", "t", "k", "__index_level_1__"]


def test_pandas_extension_dtypes_as_spark_reads_their_parquet(spark, tmp_path):
    """Nullable integers and booleans, both string dtypes, categoricals of numbers, timedeltas (BIGINT
    nanoseconds, as pyarrow writes them) and tz-aware datetimes; Period and Interval are refused (extension types
    whose meaning is not their storage's)."""
    frame = pd.DataFrame(
        {
            "i": pd.array([1, None, -3], dtype="Int64"),
            "b": pd.array([True, None, False], dtype="boolean"),
            "sa": pd.array(["a", None, ""], dtype="string[pyarrow]"),
            "sp": pd.array(["a", None, "\u00e9"], dtype="string[python]"),
            "cat": pd.Categorical([10, 20, None]),
            "f": pd.array([0.5, None, -0.0], dtype="Float64"),
            "td": pd.to_timedelta([1, None, -2], unit="s"),
            "tz": pd.to_datetime(
                ["2024-01-01", None, "1969-12-31 23:59:59.999999"], format="ISO8601"
            ).tz_localize("Europe/Paris"),
        }
    )
    frame.to_parquet(tmp_path / "dtypes.parquet", coerce_timestamps="us")
    read = spark.read.parquet(str(tmp_path / "dtypes.parquet"))
    assert read.schema.simpleString() == (
        "struct<i:bigint,b:boolean,sa:string,sp:string,cat:bigint,f:double,td:bigint,tz:timestamp>"
    )
    assert _engine(frame) == _spark(read)
    for kind, column in (
        ("pandas.period", pd.period_range("2024-01", periods=2, freq="M")),
        ("pandas.interval", pd.interval_range(0, 2)),
    ):
        with pytest.raises(
            ValueError, match=f"column 'p': Spark has no type for the Arrow extension type {kind}"
        ):
            hxa.record_hash(pd.DataFrame({"p": column}))


def test_naive_nanoseconds_have_no_spark_type(spark, tmp_path):
    """pandas' datetime64[ns] is written as TIMESTAMP(NANOS), which Spark refuses, and pandas reads INT96 into
    it too: the engine refuses it unless the data says which it is."""
    frame = pd.DataFrame({"id": [1, 2], "t": pd.to_datetime(["2024-01-01 10:00:00.000001", None])})
    frame.to_parquet(tmp_path / "ns.parquet")
    with pytest.raises(Exception, match=r"Illegal Parquet type: INT64 \(TIMESTAMP\(NANOS,false\)\)"):
        spark.read.parquet(str(tmp_path / "ns.parquet")).collect()
    nanos = r"column 't': it is a timestamp\[ns\] without a time zone, whose Spark type the data does not say"
    for data in (frame, pl.from_pandas(frame), pa.Table.from_pandas(frame)):
        with pytest.raises(ValueError, match=nanos):
            hxa.record_hash(data)
    with pytest.raises(
        ValueError, match=r"column 't': its Parquet type is TIMESTAMP\(NANOS\), which Spark cannot"
    ):
        hxa.dataset_fingerprint(tmp_path / "ns.parquet")
    assert len(hxa.record_hash(frame, ["id"])) == 2
    # Wall-clock microseconds are Spark's TIMESTAMP_NTZ; nanoseconds with a time zone are instants.
    micros = frame.astype({"t": "datetime64[us]"})
    micros.to_parquet(tmp_path / "us.parquet")
    assert _engine(micros) == _spark(spark.read.parquet(str(tmp_path / "us.parquet")))
    utc = frame.assign(t=frame["t"].dt.tz_localize("UTC"))
    utc.to_parquet(tmp_path / "utc.parquet", coerce_timestamps="us")
    assert _engine(utc) == _spark(spark.read.parquet(str(tmp_path / "utc.parquet")))


def test_polars_frames_as_spark_reads_their_parquet(spark, tmp_path):
    frame = pl.DataFrame(
        {
            "cat": pl.Series(["a", "b", None], dtype=pl.Categorical),
            "enum": pl.Series(["x", "y", "x"], dtype=pl.Enum(["x", "y"])),
            "dec": pl.Series(
                [decimal.Decimal("1.50"), None, decimal.Decimal("-2.25")], dtype=pl.Decimal(10, 2)
            ),
            "dur": pl.Series([1, None, -3], dtype=pl.Duration("us")),
            "u64": pl.Series([0, 2**64 - 1, None], dtype=pl.UInt64),
            "arr": pl.Series([[1, 2], None, [3, 4]], dtype=pl.Array(pl.Int32, 2)),
            "lst": [[1], [], None],
            "st": [{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}],
            "null": pl.Series([None, None, None], dtype=pl.Null),
            "dt_ms": pl.Series([0, 1, None], dtype=pl.Datetime("ms")),
            "dt_utc": pl.Series([0, -1, None], dtype=pl.Datetime("us", "UTC")),
            "day": pl.Series([0, -1, None], dtype=pl.Date),
            "bin": [b"a", None, b""],
        }
    )
    frame.write_parquet(tmp_path / "p.parquet")
    expected = _spark(spark.read.parquet(str(tmp_path / "p.parquet")))
    assert _engine(frame) == expected
    assert _engine(frame.lazy()) == expected
    assert _engine(tmp_path / "p.parquet") == expected
    with pytest.raises(
        ValueError, match="record_hash: column 'big' is of the Polars type Int128: .* pl.Decimal"
    ):
        hxa.record_hash(pl.DataFrame({"id": [1], "big": pl.Series([1], dtype=pl.Int128)}))
    with pytest.raises(ValueError, match=r"column 'ns': it is a timestamp\[ns\] without a time zone"):
        hxa.record_hash(pl.DataFrame({"ns": pl.Series([1], dtype=pl.Datetime("ns"))}))


def test_pyarrow_types_spark_reads_as_others(spark, tmp_path):
    """pyarrow writes a duration as a plain INT64 and the JSON extension as the Parquet JSON type: Spark reads a
    BIGINT (the count of units) and a STRING."""
    table = pa.table(
        {
            "d": pa.array([1, None, -(10**18)], pa.duration("ns")),
            "j": pa.array(['{"a": 1}', None, "[]"], pa.json_(pa.string())),
            "ds": pa.array([[1], None, [-2, None]], pa.list_(pa.duration("s"))),
        }
    )
    pq.write_table(table, tmp_path / "t.parquet")
    read = spark.read.parquet(str(tmp_path / "t.parquet"))
    assert read.schema.simpleString() == "struct<d:bigint,j:string,ds:array<bigint>>"
    expected = _spark(read)
    assert _engine(table) == expected
    assert _engine(tmp_path / "t.parquet") == expected
    assert reference.fingerprint_arrow(table) == expected[1]


def test_what_a_spark_schema_says_that_arrow_does_not(spark, tmp_path):
    """Spark reads a file it wrote with the schema in its footer: collations, VARIANT and intervals, which the
    engine cannot hash as Spark, are refused; CHAR(n) is padded as Spark pads it on read."""
    cases = {
        "collated": ("SELECT 1 AS id, 'Abc' COLLATE UTF8_LCASE AS c", "string collate UTF8_LCASE"),
        "variant": ("""SELECT 1 AS id, parse_json('{"a": 1}') AS c""", "variant"),
        "interval": ("SELECT 1 AS id, INTERVAL '1' DAY AS c", "interval day"),
    }
    for name, (query, what) in cases.items():
        spark.sql(query).write.parquet(str(tmp_path / name))
        for data in (pq.read_table(tmp_path / name), tmp_path / name):
            with pytest.raises(ValueError, match=f"column 'c': Spark reads it as {what} "):
                hxa.dataset_fingerprint(data)
            assert len(hxa.record_hash(data, ["id"])) == 1
    footer = {
        "type": "struct",
        "fields": [{"name": "c", "type": "char(5)", "nullable": True, "metadata": {}}],
    }
    table = pa.table({"c": ["ab", None, "abcdef", "\u00e9"]})
    table = table.replace_schema_metadata({b"org.apache.spark.sql.parquet.row.metadata": json.dumps(footer)})
    pq.write_table(table, tmp_path / "char.parquet")
    expected = _spark(spark.read.parquet(str(tmp_path / "char.parquet")))
    assert _engine(pq.read_table(tmp_path / "char.parquet", read_dictionary=["c"])) == expected
    assert _engine(tmp_path / "char.parquet") == expected


def test_dates_spark_rebases_from_the_julian_calendar_are_refused(spark, tmp_path):
    """Files Spark wrote in its LEGACY calendar mode (as Spark 2 did): Spark moves dates before 1582-10-15 and
    timestamps before 1900 as it reads them; the engine refuses such values, and hashes later ones."""
    legacy = {
        **INT96,
        "spark.sql.parquet.datetimeRebaseModeInWrite": "LEGACY",
        "spark.sql.parquet.int96RebaseModeInWrite": "LEGACY",
    }
    with spark_conf(spark, legacy):
        spark.sql("SELECT DATE'0001-01-01' AS d, TIMESTAMP'2000-01-01 00:00:00' AS t").write.parquet(
            str(tmp_path / "old-date")
        )
        spark.sql("SELECT DATE'2001-01-01' AS d, TIMESTAMP'1000-01-01 00:00:00' AS t").write.parquet(
            str(tmp_path / "old-time")
        )
        spark.sql("SELECT DATE'2001-01-01' AS d, TIMESTAMP'2000-01-01 00:00:00' AS t").write.parquet(
            str(tmp_path / "new")
        )
    assert spark.read.parquet(str(tmp_path / "old-date")).first()["d"] == datetime.date(1, 1, 1)
    for data in (
        pq.read_table(tmp_path / "old-date", coerce_int96_timestamp_unit="us"),
        tmp_path / "old-date",
    ):
        with pytest.raises(ValueError, match="column 'd': .* hybrid Julian calendar"):
            hxa.record_hash(data)
    assert len(hxa.record_hash(tmp_path / "old-date", ["t"])) == 1
    with pytest.raises(ValueError, match="column 't': .* hybrid Julian calendar"):
        hxa.dataset_fingerprint(pq.read_table(tmp_path / "old-time", coerce_int96_timestamp_unit="us"))
    assert _engine(tmp_path / "new") == _spark(spark.read.parquet(str(tmp_path / "new")))


def test_the_spark_engine_writes_timestamps_as_the_arrow_engine(spark, tmp_path):
    """The command line's Spark engine writes TIMESTAMP_MICROS, as its Arrow engine does (not INT96), for the
    command only."""
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1], "t": pa.array([0], pa.timestamp("us", "UTC"))}), source)
    before = spark.conf.get("spark.sql.parquet.outputTimestampType")
    assert (
        main(["hash", str(source), "--out", str(tmp_path / "by-spark"), "--engine", "spark"], spark=spark)
        == 0
    )
    assert spark.conf.get("spark.sql.parquet.outputTimestampType") == before
    assert main(["hash", str(source), "--out", str(tmp_path / "by-arrow"), "--engine", "arrow"]) == 0
    for out in ("by-spark", "by-arrow"):
        (part,) = (tmp_path / out).glob("part-*.parquet")
        column = pq.ParquetFile(part).schema.column(1)
        assert (column.physical_type, json.loads(column.logical_type.to_json())["timeUnit"]) == (
            "INT64",
            "microseconds",
        ), out


def test_the_command_lines_arrow_engine_reads_files_as_the_engine_does(spark, tmp_path, capsys):
    """The command line's Arrow engine reads through hashexpr.arrow: a TIMESTAMP(NANOS) column, which Spark cannot
    read, is left to Spark (--engine arrow refuses with the reason); a CHAR column is padded as Spark pads it, and
    left to Spark by ``hash``, whose output declares it CHAR(n) again."""
    pq.write_table(pa.table({"t": pa.array([1000], pa.timestamp("ns"))}), tmp_path / "ns.parquet")
    assert main(["fingerprint", str(tmp_path / "ns.parquet"), "--engine", "arrow"]) == 2
    assert "column 't': its Parquet type is TIMESTAMP(NANOS)" in capsys.readouterr().err
    footer = {
        "type": "struct",
        "fields": [{"name": "c", "type": "char(3)", "nullable": True, "metadata": {}}],
    }
    char = pa.table({"c": ["a", None]}).replace_schema_metadata(
        {b"org.apache.spark.sql.parquet.row.metadata": json.dumps(footer)}
    )
    pq.write_table(char, tmp_path / "char.parquet")
    assert main(["fingerprint", str(tmp_path / "char.parquet"), "--engine", "arrow", "--json"]) == 0
    expected = hx.dataset_fingerprint(spark.read.parquet(str(tmp_path / "char.parquet")))
    assert json.loads(capsys.readouterr().out)["fingerprint"] == expected
    out = str(tmp_path / "hashed")
    assert main(["hash", str(tmp_path / "char.parquet"), "--out", out, "--engine", "arrow"]) == 2
    assert "column 'c' back declared as CHAR(3)" in capsys.readouterr().err
    pq.write_table(char, tmp_path / "char_again.parquet")
    diff = ["diff", str(tmp_path / "char.parquet"), str(tmp_path / "char_again.parquet"), "--key", "c"]
    assert main([*diff, "--out", out, "--engine", "arrow"]) == 2
    assert "column 'c' back declared as CHAR(3)" in capsys.readouterr().err
    assert main([*diff, "--engine", "arrow", "--json"]) == 0
    # The row whose key is NULL is a null_key on each side, never matched.
    counts = json.loads(capsys.readouterr().out)["counts"]
    assert counts == {"insert": 0, "update": 0, "delete": 0, "duplicate_key": 0, "null_key": 2}


def test_partition_values_as_spark_types_them(spark, tmp_path, capsys):
    """Spark 4.3 types each partition column from all its values and keeps a value's text where the column is a
    STRING: '01' beside 'a' stays '01', while '01' beside '1' is the INT 1; '1' beside '1.5' the DOUBLE 1.0."""
    folder = tmp_path / "mixed"
    for i, part in enumerate(
        ["a=01/b=01/c=1.5/d=2024-01-01", "a=1/b=1/c=1/d=1", "a=a/b=007/c=__HIVE_DEFAULT_PARTITION__/d=x%3Dy"]
    ):
        (folder / part).mkdir(parents=True)
        pq.write_table(pa.table({"v": [i]}), folder / part / "part-0.parquet")
    df = spark.read.parquet(str(folder))
    assert df.schema.simpleString() == "struct<v:bigint,a:string,b:int,c:double,d:string>"
    assert sorted(map(tuple, df.collect())) == [
        (0, "01", 1, 1.5, "2024-01-01"),
        (1, "1", 1, 1.0, "1"),
        (2, "a", 7, None, "x=y"),
    ]
    expected = _spark(df)
    assert _engine(folder) == expected
    assert hxa.spark_types(folder) == df.dtypes
    assert main(["fingerprint", str(folder), "--engine", "arrow", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fingerprint"] == expected[1]


def test_files_whose_columns_are_in_other_orders_are_read_by_name(spark, tmp_path, capsys):
    """Spark reads every file by name with the schema of one: a summary file's (_common_metadata), else the first
    data file's in the order of their paths ('x=1.5/' sorts before 'x=1/'); the engine takes the same order."""
    table = pa.table({"id": [1, 2], "name": ["a", None]})
    flipped = table.select(["name", "id"])
    cases = {
        "parted": {"x=1/part-0.parquet": table, "x=1.5/part-0.parquet": flipped},
        "flat": {"a.parquet": flipped, "b.parquet": table},
        "summary": {"a.parquet": table, "_common_metadata": flipped.schema},
    }
    for name, files in cases.items():
        for relative, content in files.items():
            path = tmp_path / name / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, pa.Schema):
                pq.write_metadata(content, path)
            else:
                pq.write_table(content, path)
        df = spark.read.parquet(str(tmp_path / name))
        assert df.columns[:2] == ["name", "id"], name
        expected = _spark(df)
        assert _engine(tmp_path / name) == expected, name
        assert [n for n, _ in hxa.spark_types(tmp_path / name)] == df.columns, name
        assert main(["fingerprint", str(tmp_path / name), "--engine", "arrow", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["fingerprint"] == expected[1], name
    # A dataset of the files in another order (its schema is b.parquet's): the columns in Spark's order.
    flat = tmp_path / "flat"
    dataset = ds.dataset([str(flat / "b.parquet"), str(flat / "a.parquet")], format="parquet")
    assert dataset.schema.names == ["id", "name"]
    assert _engine(dataset) == _spark(spark.read.parquet(str(flat)))
    # Columns that differ in more than their order are refused, naming both files.
    pq.write_table(table.append_column("extra", pa.array([1, 2])), flat / "c.parquet")
    with pytest.raises(ValueError, match=r"have different columns .*c\.parquet: \['id', 'name', 'extra'\]"):
        hxa.record_hash(flat)


def test_partition_values_whose_spark_type_is_not_certain_are_refused(tmp_path):
    """Spark reads 1e3 as a DECIMAL, ' 5' and NaN as DOUBLEs, a date and time as a TIMESTAMP in the session
    time zone, a column of NULLs as VOID: the engine refuses them with the value, before reading any file."""
    for value, why in (
        ("1e3", "DOUBLE or DECIMAL"),
        ("NaN", "DOUBLE or DECIMAL"),
        (" 5", "DOUBLE or DECIMAL"),
        ("2024-01-01 10%3A00%3A00", "timestamp"),
        ("__HIVE_DEFAULT_PARTITION__", "VOID"),
        ("99999999999999999999", "DECIMAL"),
    ):
        folder = tmp_path / str(abs(hash(value)))
        (folder / f"k={value}").mkdir(parents=True)
        pq.write_table(pa.table({"v": [1]}), folder / f"k={value}" / "part-0.parquet")
        with pytest.raises(ValueError, match=f"^record_hash: .*{why}"):
            hxa.record_hash(folder)
    mixed = tmp_path / "mixed"
    (mixed / "k=1").mkdir(parents=True)
    pq.write_table(pa.table({"v": [1]}), mixed / "k=1" / "part-0.parquet")
    pq.write_table(pa.table({"v": [2]}), mixed / "part-0.parquet")
    with pytest.raises(ValueError, match="different partition levels"):
        hxa.record_hash(mixed)
