"""Hash columns added to a DataFrame without the jar: Arrow UDF columns where PySpark has them, else
``mapInArrow``, which every supported line has (3.5 and 4.0 included)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql.types import BinaryType, StructField, StructType

from hashexpr.options import KeyOptions, algorithm_of
from hashexpr.spark.arrow_path import columns
from hashexpr.spark.arrow_path.checks import check_schema


@dataclass(frozen=True)
class HashSpec:
    """One hash column to add: ``name``, the hash of the top-level ``columns`` (literal names) of ``kind``
    (``'positional'``, ``'by_name'`` or ``'key'``)."""

    name: str
    columns: tuple[str, ...]
    kind: str = "positional"
    algorithm: str = "murmur3"
    secret: str | None = None
    key: KeyOptions | None = None

    def options(self) -> tuple[str, bool, str | None, bool, str]:
        return columns.key_arguments(self.key)


def with_hashes(df: DataFrame, specs: Sequence[HashSpec], function: str) -> DataFrame:
    """``df`` with one BINARY column per spec appended, computed by the Rust engine.

    Every hashed column is checked first (:func:`~hashexpr.spark.arrow_path.checks.check_schema`), so a type the
    Arrow path cannot hash as the jar does fails here, in the driver, naming ``function`` and the column.
    """
    expected = {spec.name: _types(df.schema, spec, function) for spec in specs}
    if columns.available():
        added = {spec.name: _column(spec, expected[spec.name], function) for spec in specs}
        return df.withColumns(added)
    positions = {spec.name: [df.columns.index(c) for c in spec.columns] for spec in specs}
    keys = {spec.name: _hmac_key(spec, function) for spec in specs}
    schema = StructType([*df.schema.fields, *(StructField(s.name, BinaryType(), True) for s in specs)])
    chosen = [
        (
            s.name,
            positions[s.name],
            expected[s.name],
            s.kind,
            algorithm_of(s.algorithm, s.secret, function)[0],
            keys[s.name],
            s.options(),
        )
        for s in specs
    ]

    source = df.columns

    def append(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hashexpr.spark.arrow_path.worker import hash_batch

        for batch in batches:
            batch = batch.rename_columns(source)
            arrays = list(batch.columns)
            names = list(batch.schema.names)
            for name, at, types, kind, algorithm, hmac_key, options in chosen:
                arrays.append(hash_batch(function, batch, at, types, kind, algorithm, hmac_key, options))
                names.append(name)
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    return positional(df).mapInArrow(append, schema)


def _column(spec: HashSpec, expected: list[str], function: str) -> Column:
    """One spec's hash as an Arrow UDF column."""
    algorithm = algorithm_of(spec.algorithm, spec.secret, function)[0]
    if not spec.columns:  # a UDF needs an argument: the struct form takes none
        return columns.hash_column(function, [], spec.kind, spec.algorithm, spec.secret, spec.key)
    return columns.typed_column(
        function, spec.columns, expected, spec.kind, algorithm, _hmac_key(spec, function), spec.options()
    )


def positional(df: DataFrame) -> DataFrame:
    """``df`` with its columns renamed ``_0``, ``_1``, ...: ``mapInArrow`` looks each column up by its name, which
    fails for a name with a backtick and for two columns of one name. The worker renames the batches back."""
    return df.toDF(*(f"_{i}" for i in range(len(df.columns))))


def _types(schema: StructType, spec: HashSpec, function: str) -> list[str]:
    by_name = {field.name: field for field in schema.fields}
    missing = [c for c in spec.columns if c not in by_name]
    if missing:
        raise ValueError(f"{function}: no column {missing[0]!r} in the DataFrame (columns: {schema.names})")
    chosen = StructType([by_name[c] for c in spec.columns])
    return check_schema(function, chosen)


def _hmac_key(spec: HashSpec, function: str) -> bytes | None:
    _, name = algorithm_of(spec.algorithm, spec.secret, function)
    return columns.secret_key(name, function) if name is not None else None
