"""The reference's Arrow functions on what Spark writes and refuses: INT96 timestamps, tables without columns."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from hashexpr import reference

INT96_ROWS = """
SELECT id,
       IF(id = 2, NULL, TIMESTAMP'2024-03-01 12:34:56.123456' + make_interval(0, 0, 0, id, id, 0, 0)) AS ts,
       TIMESTAMP_NTZ'2024-03-01 12:34:56.5' + make_interval(0, 0, 0, 0, id, 0, 0) AS ntz,
       named_struct('at', TIMESTAMP'1999-12-31 23:59:59.999999', 'n', id) AS st,
       array(TIMESTAMP'2000-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id / 1000), NULL) AS arr,
       map('k', TIMESTAMP'1970-01-01 00:00:00' - make_interval(0, 0, 0, id, 0, 0, 0)) AS m
FROM range(4)
"""


def _spark_fingerprint(df) -> str:
    return df.agg(F.call_function("dataset_fingerprint", F.col("*"))).first()[0]


def test_a_table_without_columns_is_refused_as_spark_refuses_it(spark):
    with pytest.raises(AnalysisException, match="needs at least one argument"):
        _spark_fingerprint(spark.range(3).select())
    with pytest.raises(ValueError, match="^fingerprint_arrow: the table has no columns"):
        reference.fingerprint_arrow(pa.table({}))
    with pytest.raises(ValueError, match="no columns"):
        reference.fingerprint_arrow(pa.table({"x": [1, 2, 3]}).select([]))
    with pytest.raises(ValueError, match="no columns"):
        reference.fingerprint_pandas(pd.DataFrame(index=range(3)))


def test_int96_timestamps_are_timestamps_as_spark_reads_them(spark, tmp_path):
    before = spark.conf.get("spark.sql.parquet.outputTimestampType")
    spark.conf.set("spark.sql.parquet.outputTimestampType", "INT96")
    try:
        spark.sql(INT96_ROWS).coalesce(1).write.parquet(str(tmp_path / "int96"))
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", before)
    (path,) = (tmp_path / "int96").glob("*.parquet")
    parquet_schema = pq.ParquetFile(path).schema
    assert [parquet_schema.column(i).physical_type for i in range(len(parquet_schema))].count("INT96") == 4

    read = spark.read.parquet(str(path))
    assert [reference.spark_type_string(t) for t in reference.spark_types_of_parquet(parquet_schema)] == [
        reference.spark_type_string(f.dataType) for f in read.schema.fields
    ]
    assert read.schema.simpleString() == (
        "struct<id:bigint,ts:timestamp,ntz:timestamp_ntz,st:struct<at:timestamp,n:bigint>,"
        "arr:array<timestamp>,m:map<string,timestamp>>"
    )

    table = pq.read_table(path)
    expected = _spark_fingerprint(read)
    assert reference.fingerprint_arrow(table, parquet_schema=parquet_schema) == expected
    # From the Arrow types alone the INT96 columns would be TIMESTAMP_NTZ, another schema.
    assert reference.fingerprint_arrow(table) != expected
    # A Spark TIMESTAMP column written as INT64 (Spark's default) fingerprints alike.
    micros = tmp_path / "micros"
    read.write.parquet(str(micros))
    assert _spark_fingerprint(spark.read.parquet(str(micros))) == expected

    with pytest.raises(ValueError, match="not both"):
        reference.fingerprint_arrow(table, [reference.LongType()] * 6, parquet_schema=parquet_schema)
    with pytest.raises(ValueError, match="parquet_schema has the columns"):
        reference.fingerprint_arrow(table.select(["id"]), parquet_schema=parquet_schema)
