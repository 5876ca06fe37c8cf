"""User-defined types hash as their SQL values: a dense and a sparse VectorUDT of one vector differ."""

from __future__ import annotations

from pyspark.ml.functions import vector_to_array
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.sql.types import StructField, StructType

import hashexpr as hx
from hashexpr import reference


def test_dense_and_sparse_vectors_hash_differently_until_converted(spark):
    vectors = [Vectors.dense([0.0, 2.5, 0.0]), Vectors.sparse(3, [1], [2.5])]
    assert vectors[0] == vectors[1]  # one vector, as pyspark.ml compares them
    schema = StructType([StructField("v", VectorUDT())])
    df = spark.createDataFrame([(v,) for v in vectors], schema)
    rows = df.select(
        hx.record_hash("v").alias("udt"), hx.record_hash(vector_to_array("v")).alias("array")
    ).collect()
    dense, sparse = rows
    assert dense.udt != sparse.udt  # their SQL structs differ: (1, NULL, NULL, values) vs (0, 3, indices, values)
    assert dense.array == sparse.array
    # The reference hashes the UDT's SQL value, as Spark does.
    udt = VectorUDT()
    assert [bytes(r.udt) for r in rows] == [reference.record_hash([udt.serialize(v)], [udt]) for v in vectors]
