"""The command line's Arrow engine: ``hashexpr.arrow`` on local Parquet inputs, with no JVM.

:func:`eligibility` says whether a run can take the engine with a result identical to Spark's (and why not);
the others (:func:`fingerprint`, :func:`write_hashed`, :func:`collisions`, ...) compute what the Spark paths
of :mod:`hashexpr.cli.commands` compute, from the same Parquet files as Spark reads them (``docs/CLI.md``,
``--engine``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from hashexpr import arrow as hxa
from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli.session import DEFAULT_MASTER
from hashexpr.options import KeyOptions

#: The Parquet key-value metadata in which Spark writes the Spark schema of a file.
_SPARK_SCHEMA = b"org.apache.spark.sql.parquet.row.metadata"
#: The ``--conf`` prefix of HMAC keys (``spark.hashexpr.secret.<name>``), which the engine reads.
_SECRET_CONF = "spark.hashexpr.secret."
#: ``--conf`` settings that size or place Spark's JVMs and change no result; any other needs Spark.
_NEUTRAL_CONF = (
    _SECRET_CONF,
    "spark.driver.",
    "spark.executor.",
    "spark.ui.",
    "spark.memory.",
    "spark.local.",
)


class Ineligible(ValueError):
    """This run needs Spark: the reason, for ``--engine arrow``'s error."""


def _spark_writes_as_read(t: pa.DataType) -> bool:
    """Whether Spark writes a column that pyarrow read as ``t`` back as ``t`` (so ``hash``'s output is Spark's)."""
    types = pa.types
    if types.is_list(t):
        return _spark_writes_as_read(t.value_type)
    if types.is_map(t):
        return _spark_writes_as_read(t.key_type) and _spark_writes_as_read(t.item_type)
    if types.is_struct(t):
        return all(_spark_writes_as_read(t.field(i).type) for i in range(t.num_fields))
    if types.is_timestamp(t):
        return t.unit == "us" and t.tz in (None, "UTC", "+00:00")
    return (
        types.is_boolean(t)
        or types.is_signed_integer(t)
        or types.is_floating(t)
        and not types.is_float16(t)
        or types.is_decimal128(t)
        or types.is_string(t)
        or types.is_binary(t)
        or types.is_date32(t)
    )


def files(src: hinputs.Source) -> list[str]:
    """The Parquet files Spark reads for ``src``: the file, or the data files of a directory (not ``_``/``.``)."""
    path = hformats.local_path(src.path or "")
    if os.path.isfile(path):
        return [path]
    entries = sorted(os.listdir(path))
    listed = [os.path.join(path, e) for e in entries if not e.startswith(("_", "."))]
    if any(os.path.isdir(p) for p in listed):
        raise Ineligible(f"{src.path} has subdirectories, which Spark reads as partitions")
    return listed


def eligibility(args: argparse.Namespace, src: hinputs.Source, out_fmt: str | None = None) -> list[str]:
    """The Parquet files of a run the engine computes exactly as Spark would; :class:`Ineligible` otherwise."""
    reasons = []
    if src.table is not None or src.fmt != "parquet":
        reasons.append("the engine reads Parquet files only")
    elif src.path is None or hformats.local_path(src.path) is None or any(c in src.path for c in "*?[{"):
        reasons.append("the engine reads local paths without globs only")
    if src.version is not None or src.timestamp is not None or args.schema or args.option:
        reasons.append("--schema, --option, --version and --timestamp need Spark")
    if any(not key.startswith(_NEUTRAL_CONF) for key, _ in args.conf) or args.master not in (
        None,
        DEFAULT_MASTER,
    ):
        reasons.append("--master and --conf settings other than secrets and JVM resources need Spark")
    if out_fmt not in (None, "parquet"):
        reasons.append(f"the engine writes Parquet only, not {out_fmt}")
    if reasons:
        raise Ineligible("; ".join(reasons))
    hformats.check_input(src.path)
    paths = files(src)
    if not paths:
        raise Ineligible(f"{src.path} has no data files")
    try:
        schemas = [pq.read_schema(p) for p in paths]
    except (pa.ArrowException, OSError) as error:
        # Spark reports unreadable input in its own words (an input error).
        raise Ineligible(f"{src.path} cannot be read as Parquet: {error}") from None
    if any(not s.equals(schemas[0]) for s in schemas[1:]):
        raise Ineligible("the files' schemas differ, and Spark reads one of them")
    names = schemas[0].names
    if len({n.lower() for n in names}) != len(names):
        raise Ineligible("column names differ only in case, which Spark cannot read apart")
    for p in paths:
        physical = pq.ParquetFile(p).schema
        if any(physical.column(i).physical_type == "INT96" for i in range(len(physical))):
            raise Ineligible("INT96 timestamps (Spark reads them as TIMESTAMP, pyarrow without a time zone)")
    try:
        types = dict(hxa.spark_types(schemas[0]))
    except ValueError as error:
        raise Ineligible(str(error)) from None
    spark_schema = (schemas[0].metadata or {}).get(_SPARK_SCHEMA)
    if spark_schema is not None:
        _check_spark_schema(spark_schema, types)
    return paths


def _check_spark_schema(text: bytes, types: dict[str, str]) -> None:
    """A file Spark wrote says which Spark types it holds, and Spark reads them so (a collated string, a
    VARIANT stored as a struct): every column must hash as the engine hashes it."""
    from pyspark.sql.types import StructType

    from hashexpr.reference import spark_type_string

    try:
        fields = StructType.fromJson(json.loads(text)).fields
        theirs = {f.name: spark_type_string(f.dataType) for f in fields}
    except Exception as error:  # noqa: BLE001 - a type this pyspark does not know: Spark decides
        raise Ineligible(f"the file's Spark schema has a type this engine does not know ({error})") from None
    for name, spark_type in theirs.items():
        if types.get(name) != spark_type:
            raise Ineligible(
                f"Spark reads column {name!r} as {spark_type}, which the Arrow data does not say"
            )


def dataset(paths: Sequence[str]) -> ds.Dataset:
    return ds.dataset(list(paths), format="parquet")


def batches(paths: Sequence[str], columns: Sequence[str] | None = None) -> pa.RecordBatchReader:
    """The files' rows, batch by batch, in bounded memory: without pre-buffering, pyarrow holds one column chunk
    at a time instead of whole row groups (a 20-million-row file: 0.3 GiB instead of 1.2)."""
    schema = dataset(paths).schema
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])

    def read() -> Iterator[pa.RecordBatch]:
        for path in paths:
            reader = pq.ParquetFile(path, pre_buffer=False)
            yield from reader.iter_batches(batch_size=65_536, columns=columns, use_threads=False)

    return pa.RecordBatchReader.from_batches(schema, read())


def hex_upper(hashes: pa.FixedSizeBinaryArray) -> pa.StringArray:
    """Hashes as upper-case hex strings, as SQL ``hex()`` writes them (NULL stays NULL)."""
    import numpy as np

    width = hashes.type.byte_width
    digits = np.frombuffer(b"0123456789ABCDEF", np.uint8)
    data = np.frombuffer(hashes.buffers()[1], np.uint8)[
        hashes.offset * width : (hashes.offset + len(hashes)) * width
    ]
    text = np.empty(data.size * 2, np.uint8)
    text[0::2], text[1::2] = digits[data >> 4], digits[data & 15]
    offsets = pa.array(np.arange(len(hashes) + 1, dtype=np.int32) * (2 * width))
    validity = hashes.buffers()[0] if hashes.null_count else None
    return pa.StringArray.from_buffers(
        len(hashes), offsets.buffers()[1], pa.py_buffer(text.tobytes()), validity, hashes.null_count, 0
    )


def write_staged_parquet(out: str, mode: str, write: Callable[[str], None]) -> None:
    """A directory of one part file (``write(path)`` writes it) and ``_SUCCESS``, moved into place only once
    complete, as Spark's outputs are."""

    def write_into(staging: str) -> None:
        os.makedirs(staging)
        write(os.path.join(staging, "part-00000.snappy.parquet"))
        open(os.path.join(staging, "_SUCCESS"), "wb").close()

    houtputs.write_staged(os.path.abspath(hformats.local_path(out)), mode, write_into)


def write_parquet(table: pa.Table, out: str, mode: str) -> None:
    write_staged_parquet(out, mode, lambda path: pq.write_table(table, path, compression="snappy"))


def fingerprint(paths: Sequence[str], columns: list[str], algorithm: str, key: str | None) -> tuple[int, str]:
    rows = dataset(paths).count_rows()
    return rows, hxa.dataset_fingerprint(batches(paths, columns), algorithm=algorithm, hmac_key=key)


def group_fingerprints(
    paths: Sequence[str], columns: list[str], by: list[str], algorithm: str, key: str | None
) -> pa.Table:
    groups = hxa.fingerprints_by(
        dataset(paths).scanner(columns=columns), by, algorithm=algorithm, hmac_key=key
    )
    # In the order Spark's `orderBy` of the CLI shows them: NULLs first, then ascending.
    try:
        return groups.sort_by([(g, "ascending", "at_start") for g in by])
    except (TypeError, ValueError):
        # pyarrow before 20 takes the NULL placement for all keys at once.
        return groups.take(pc.sort_indices(groups, [(g, "ascending") for g in by], null_placement="at_start"))


def write_hashed(
    paths: Sequence[str],
    columns: list[str] | None,
    key_columns: list[str],
    names: tuple[str, str],
    as_hex: bool,
    hashing: dict[str, Any],
    out: str,
    mode: str,
    key_options: KeyOptions | None = None,
) -> dict[str, Any]:
    """Write the input with its hash column (and key column) added, batch by batch; return the row count and
    the hash columns (for their distinct counts)."""
    data = dataset(paths)
    for t in data.schema.types:
        if not _spark_writes_as_read(t):
            raise Ineligible(f"Spark would write a column of type {t} as another type")
    if as_hex and importlib.util.find_spec("numpy") is None:
        raise Ineligible("--hex on the Arrow engine needs numpy")
    options = {"algorithm": hashing.get("algorithm", "murmur3"), "hmac_key": hashing.get("hmac_key")}
    added_type = pa.string() if as_hex else pa.binary()
    added_names = ([names[1]] if key_columns else []) + [names[0]]
    # Without the input's metadata: Spark reads the schema a file's Spark metadata states, which lacks the
    # added columns.
    schema = data.schema.remove_metadata()
    key = key_options or KeyOptions()
    for name in added_names:
        # A key hash is NULL for an all-NULL key under null_key=null, as Spark's column is nullable then.
        nullable = name == names[1] and key.null_key == "null"
        schema = schema.append(pa.field(name, added_type, nullable=nullable))
    hashes: dict[str, list[pa.Array]] = {name: [] for name in added_names}
    rows = 0

    def write(path: str) -> None:
        nonlocal rows
        with pq.ParquetWriter(path, schema, compression="snappy") as writer:
            for batch in batches(paths):
                added = (
                    [hxa.record_key(batch, key_columns, **key.as_kwargs(), **options)] if key_columns else []
                )
                added.append(hxa.record_hash(batch, columns, **options))
                added = [hex_upper(h) if as_hex else h.cast(pa.binary()) for h in added]
                for name, column in zip(added_names, added):
                    hashes[name].append(column)
                writer.write_batch(pa.RecordBatch.from_arrays([*batch.columns, *added], schema=schema))
                rows += batch.num_rows

    write_staged_parquet(out, mode, write)
    return {"rows": rows, **{n: pa.chunked_array(c, added_type) for n, c in hashes.items()}}


def distinct(column: pa.ChunkedArray) -> int:
    return pc.count_distinct(column).as_py()


def collisions(paths: Sequence[str], keys: list[str], hashing: dict[str, Any]) -> tuple[int, list[dict]]:
    """The collisions of computed hash keys: hash keys shared by business keys that differ.

    Business keys are told apart by the SHA-256 of their canonical encoding (equal exactly when Spark's
    NULL-safe struct equality holds), so a computed key, a function of the business key, has no
    inconsistencies; a hash key with several SHA-256 identities is a collision.
    """
    table = dataset(paths).to_table(columns=keys)
    options = {"algorithm": hashing.get("algorithm", "murmur3"), "hmac_key": hashing.get("hmac_key")}
    hash_keys = hxa.record_key(table, keys, **options)
    identity = hxa.record_key(table, keys, algorithm="sha256")
    pairs = pa.table(
        {
            "hk": hash_keys.cast(pa.binary()),
            "id": identity.cast(pa.binary()),
            "row": pa.array(range(table.num_rows), pa.int64()),
        }
    )
    per_pair = pairs.group_by(["hk", "id"]).aggregate([("row", "min"), ("row", "count")])
    per_hash = per_pair.group_by("hk").aggregate([("id", "count_distinct"), ("row_count", "sum")])
    shared = per_hash.filter(pc.greater(per_hash["id_count_distinct"], 1))
    problems = []
    for row in shared.sort_by("hk").to_pylist():
        firsts = per_pair.filter(pc.equal(per_pair["hk"], row["hk"]))["row_min"].to_pylist()
        business = [tuple(r.values()) for r in table.take(firsts).to_pylist()]
        problems.append(
            {
                "kind": "collision",
                "hash_keys": [row["hk"]],
                "business_keys": sorted(business, key=repr),
                "rows": row["row_count_sum"],
            }
        )
    return len(problems), problems
