"""Dataset fingerprints without the jar: each partition's state computed in ``mapInArrow`` by the Rust engine,
the states added in the driver (sums add: ``docs/FORMAT.md``, section 11).

One Spark job, no shuffle, one small row per partition back to the driver, on every supported line.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DoubleType,
    FloatType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from hashexpr.arrow.engine import native
from hashexpr.fingerprints import FingerprintState
from hashexpr.names import quote
from hashexpr.reference.types import spark_type_string
from hashexpr.spark.arrow_path.batches import unchecked_batch_bytes
from hashexpr.spark.arrow_path.checks import arrow_schema, check_schema
from hashexpr.spark.arrow_path.columns import secret_key
from hashexpr.spark.arrow_path.frames import HashSpec, positional, with_hashes

_STATE = StructType(
    [
        StructField("count", LongType(), False),
        StructField("total", BinaryType(), True),
        StructField("lanes", BinaryType(), True),
        StructField("schema", BinaryType(), False),
    ]
)
# The column fingerprints_by groups rows by before it shuffles them: the record hash of the grouping columns,
# equal exactly when Spark groups two rows together (NULLs, -0.0 and 0.0, NaNs).
_GROUP = "_hx_group"
_BY = "_hx_by_"


def state(df: DataFrame, algorithm: str, secret: str | None, function: str) -> FingerprintState:
    """The :class:`FingerprintState` of every row and column of ``df``."""
    expected = check_schema(function, df.schema)
    native()
    hmac_key = secret_key(secret, function) if secret is not None else None
    names = df.columns

    def states(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hashexpr.spark.arrow_path.worker import partition_state

        named = (b.rename_columns(names) for b in batches)
        found = partition_state(function, named, expected, algorithm, hmac_key)
        if found is not None:
            count, total, lanes, schema = found
            yield pa.RecordBatch.from_pylist(
                [{"count": count, "total": total, "lanes": lanes, "schema": schema}],
                schema=pa.schema(
                    [
                        ("count", pa.int64()),
                        ("total", pa.binary()),
                        ("lanes", pa.binary()),
                        ("schema", pa.binary()),
                    ]
                ),
            )

    columns = [(field.name, spark_type_string(field.dataType)) for field in df.schema.fields]
    empty = _empty_state(df, algorithm, hmac_key, secret, columns)
    total = empty
    with unchecked_batch_bytes(df.sparkSession):
        found = positional(df).mapInArrow(states, _STATE).collect()
    for row in found:
        total = total + FingerprintState.from_parts(
            algorithm, columns, row["schema"], row["count"], row["total"], row["lanes"], secret
        )
    return total


def _empty_state(
    df: DataFrame, algorithm: str, hmac_key: bytes | None, secret: str | None, columns: list[tuple[str, str]]
) -> FingerprintState:
    """The state of no rows of ``df``'s columns, computed here: its schema digest is the engine's."""
    schema = arrow_schema(df.schema)
    fingerprint = native().Fingerprint(schema, list(range(len(schema))), algorithm, hmac_key, 1)
    count, total, lanes, digest, _ = fingerprint.state()
    return FingerprintState.from_parts(algorithm, columns, digest, count, total, lanes, secret)


def fingerprints_by(
    df: DataFrame, by: list[str | Column], algorithm: str, secret: str | None, function: str
) -> DataFrame:
    """One row per group of ``by`` (top-level column names, taken literally, or Columns): the grouping columns
    and ``fingerprint``, the fingerprint of each group's rows (every column of ``df``)."""
    expected = check_schema(function, df.schema)
    native()
    hmac_key = secret_key(secret, function) if secret is not None else None
    taken = [c for c in df.columns if c == _GROUP or c.startswith(_BY)]
    if taken:
        raise ValueError(
            f"{function}: the DataFrame has a column {taken[0]!r}, a name the Arrow path needs: rename it"
        )
    # Grouping expressions become columns after the data's, under names of their own; the output names them as
    # Spark's groupBy would.
    expressions = {f"{_BY}{i}": c for i, c in enumerate(by) if not isinstance(c, str)}
    source = df.select("*", *(c.alias(name) for name, c in expressions.items())) if expressions else df
    names = dict(zip(expressions, df.select(*expressions.values()).columns)) if expressions else {}
    keys = [c if isinstance(c, str) else f"{_BY}{i}" for i, c in enumerate(by)]
    check_schema(function, source.schema, keys)
    grouped = with_hashes(source, [HashSpec(_GROUP, tuple(keys))], function).repartition(quote(_GROUP))
    data = list(range(len(df.columns)))
    grouping = [source.columns.index(c) for c in keys]
    by_fields = [
        StructField(names.get(f.name, f.name), f.dataType, f.nullable)
        for f in (source.schema.fields[i] for i in grouping)
    ]
    out = StructType([*by_fields, StructField("fingerprint", StringType(), False)])
    if expressions:
        # The engine groups by data columns only: rows of a group are made adjacent instead, and each run of
        # equal grouping hashes is fingerprinted on its own.
        grouped = grouped.sortWithinPartitions(quote(_GROUP))
    marker = len(source.columns) if expressions else None
    names = [f.name for f in by_fields]

    def groups(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hashexpr.spark.arrow_path.worker import group_fingerprints

        named = (b.rename_columns(columns) for b in batches)
        found = group_fingerprints(function, named, expected, data, grouping, marker, algorithm, hmac_key)
        if found is None:
            return
        firsts, fingerprints = found
        table = pa.Table.from_batches([b.rename_columns(names) for b in firsts])
        yield from table.append_column("fingerprint", fingerprints).combine_chunks().to_batches()

    columns = grouped.columns
    result = positional(grouped).mapInArrow(groups, out)
    if any(_nested_floating(f.dataType) for f in by_fields):
        # Spark's groupBy gives a group's -0.0 as 0.0 inside arrays and structs too (the worker does it at the top
        # level): the groups, one row each, are grouped once more by Spark.
        ordered = positional(result)
        keys, fingerprint = ordered.columns[:-1], ordered.columns[-1]
        result = ordered.groupBy(*keys).agg(F.min(fingerprint)).toDF(*result.columns)
    return result


def _nested_floating(dtype: DataType, nested: bool = False) -> bool:
    if isinstance(dtype, (FloatType, DoubleType)):
        return nested
    if isinstance(dtype, ArrayType):
        return _nested_floating(dtype.elementType, True)
    if isinstance(dtype, StructType):
        return any(_nested_floating(f.dataType, True) for f in dtype.fields)
    return False
