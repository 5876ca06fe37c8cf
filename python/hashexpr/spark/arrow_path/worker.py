"""What runs in Spark's Python workers: a batch of arguments in, the engine's hashes out.

Everything here is imported by the worker from the installed wheel; the closures the column functions ship
hold only option values, never code.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hashexpr.arrow.engine import native
from hashexpr.arrow.functions import _Exported, _named
from hashexpr.reference.keys import _normalise_key_string
from hashexpr.spark.arrow_path.checks import check_batch, check_catalog_text, refusal


def readable(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with each column rebuilt whose tree holds an offsets buffer of fewer than length + 1 entries.

    Arrow Java (Spark 3.5's) writes an empty offsets buffer for an empty array, e.g. the keys of a map column
    whose values are all NULL; pyarrow accepts it, but the engine's C Data import reads length + 1 offsets."""
    if not any(map(_short, batch.columns)):
        return batch
    columns = [pa.concat_arrays([c]) if _short(c) else c for c in batch.columns]
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _short(array: pa.Array) -> bool:
    kind = array.type
    if pa.types.is_struct(kind):
        return any(_short(array.field(i)) for i in range(kind.num_fields))
    if pa.types.is_fixed_size_list(kind):
        return _short(array.values)
    nested = pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_map(kind)
    large = pa.types.is_large_list(kind) or pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)
    if not (nested or large or pa.types.is_string(kind) or pa.types.is_binary(kind)):
        return False
    offsets = array.buffers()[1]
    if offsets is None or offsets.size < (array.offset + len(array) + 1) * (8 if large else 4):
        return True
    return nested and _short(array.values)


def hash_rows(
    function: str,
    values: pa.StructArray,
    catalog: pa.Array,
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    key: tuple[str, bool, str | None, bool, str],
    labels: Mapping[str, str] | None = None,
) -> pa.Array:
    """The record hashes (or keys) of the rows of ``values``, a struct of the function's arguments, as BINARY.

    ``catalog`` repeats Spark's ``typeof`` of that struct on every row; the first is checked against the Arrow
    types before anything is hashed. One thread: Spark runs a worker per core already. ``labels`` names in
    errors the fields the struct names by position (positions and keys do not hash names).
    """
    return _hash_checked(
        function,
        pa.RecordBatch.from_struct_array(values),
        catalog,
        kind,
        algorithm,
        hmac_key,
        key,
        labels,
    )


def hash_arguments(
    function: str,
    arrays: Sequence[pa.Array],
    catalog: pa.Array,
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    key: tuple[str, bool, str | None, bool, str],
    labels: Mapping[str, str],
) -> pa.Array:
    """:func:`hash_rows` of arguments that arrive as arrays of their own, not as one struct.

    ``catalog`` is Spark's ``typeof`` of the struct ``_0``, ``_1``, ... of the arguments; ``labels`` names each
    position in errors. Spark copies each argument into Arrow once this way, where a struct costs it a row
    built and copied again.
    """
    batch = pa.RecordBatch.from_arrays(list(arrays), names=[f"_{i}" for i in range(len(arrays))])
    return _hash_checked(function, batch, catalog, kind, algorithm, hmac_key, key, labels)


def _hash_checked(
    function: str,
    batch: pa.RecordBatch,
    catalog: pa.Array,
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    key: tuple[str, bool, str | None, bool, str],
    labels: Mapping[str, str] | None,
) -> pa.Array:
    if batch.num_rows == 0:
        return pa.array([], pa.binary())
    batch = readable(batch)
    check_catalog_text(function, batch.schema, catalog[0].as_py(), labels)
    if labels:
        batch = batch.rename_columns([labels.get(name, name) for name in batch.schema.names])
    return _hash(function, batch, kind, algorithm, hmac_key, key)


def hash_typed(
    function: str,
    arrays: Sequence[pa.Array],
    names: Sequence[str],
    expected: Sequence[str],
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    key: tuple[str, bool, str | None, bool, str],
) -> pa.Array:
    """The hashes of columns ``names`` arriving as ``arrays``, checked to hash as the Spark types ``expected``
    (which the driver read from the DataFrame's schema)."""
    if len(arrays[0]) == 0:
        return pa.array([], pa.binary())
    batch = pa.RecordBatch.from_arrays(list(arrays), names=list(names))
    return _hash_expected(function, batch, expected, kind, algorithm, hmac_key, key)


def _hash_expected(
    function: str,
    batch: pa.RecordBatch,
    expected: Sequence[str],
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    key: tuple[str, bool, str | None, bool, str],
) -> pa.Array:
    """Every column of ``batch`` hashed, once checked to hash as the Spark types ``expected``."""
    batch = readable(batch)
    check_batch(function, batch.schema, expected)
    return _hash(function, batch, kind, algorithm, hmac_key, key)


def _hash(
    function: str,
    batch: pa.RecordBatch,
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    key: tuple[str, bool, str | None, bool, str],
) -> pa.Array:
    """Every column of ``batch`` hashed as ``kind``, by the engine on one thread (Spark runs a worker per core)."""
    with _named(function):
        hasher = native().Hasher(
            batch.schema, list(range(batch.num_columns)), kind, algorithm, hmac_key, *key, 1, batch.num_rows
        )
        hasher.update(batch)
        return pa.array(_Exported(hasher.finish())).cast(pa.binary())


def normalize(
    values: pa.Array, catalog: pa.Array, column: str, trim: bool, case: str | None, empty_as_null: bool
) -> pa.Array:
    """A string key part normalised as ``record_key`` normalises it (``docs/FORMAT.md``, section 9.1)."""
    if len(values) == 0:
        return pa.array([], pa.string())
    text = catalog[0].as_py()
    if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
        raise refusal(
            "normalize_key",
            column,
            text,
            "without the jar it normalises string key parts only (a part of another type is already what "
            "record_key hashes: pass it as it is)",
        )
    check_catalog_text(
        "normalize_key", pa.schema([pa.field(column, values.type)]), f"struct<{column}:{text}>"
    )

    def one(value: str | None) -> str | None:
        if value is None:
            return None
        data = _normalise_key_string(value.encode("utf-8", "surrogateescape"), trim, case, empty_as_null)
        return None if data is None else data.decode("utf-8", "surrogateescape")

    return pa.array([one(v) for v in values.to_pylist()], pa.string())


def hash_batch(
    function: str,
    batch: pa.RecordBatch,
    positions: list[int],
    expected: list[str],
    kind: str,
    algorithm: str,
    hmac_key: bytes | None,
    key: tuple[str, bool, str | None, bool, str],
) -> pa.Array:
    """The hashes of the columns ``positions`` of ``batch``, checked to hash as the types ``expected``."""
    return _hash_expected(function, batch.select(positions), expected, kind, algorithm, hmac_key, key)


def partition_state(
    function: str,
    batches: Iterator[pa.RecordBatch],
    expected: list[str],
    algorithm: str,
    hmac_key: bytes | None,
) -> tuple[int, bytes | None, bytes | None, bytes] | None:
    """The fingerprint state of one partition's rows (count, sum, lanes, schema digest), or None if it has none."""
    fingerprint = None
    for batch in batches:
        if fingerprint is None:
            check_batch(function, batch.schema, expected)
            fingerprint = native().Fingerprint(
                batch.schema, list(range(batch.num_columns)), algorithm, hmac_key, 1
            )
        fingerprint.update(readable(batch))
    if fingerprint is None:
        return None
    count, total, lanes, schema, _ = fingerprint.state()
    return count, total, lanes, schema


def group_fingerprints(
    function: str,
    batches: Iterator[pa.RecordBatch],
    expected: list[str],
    data: list[int],
    grouping: list[int],
    marker: int | None,
    algorithm: str,
    hmac_key: bytes | None,
) -> tuple[list[pa.RecordBatch], pa.Array] | None:
    """Each group's first grouping values and its fingerprint over the columns ``data``.

    Groups are the engine's (``grouping`` among ``data``), or, with ``marker`` (the position of the grouping
    columns' record hash, by which the rows arrive sorted), the runs of equal hashes.
    """
    firsts: list[pa.RecordBatch] = []
    fingerprints: list[str] = []
    grouper = None
    current: pa.Scalar | None = None
    for batch in map(readable, batches):
        if batch.num_rows == 0:
            continue
        if grouper is None and current is None:
            check_batch(function, batch.schema, expected)
        if marker is None:
            if grouper is None:
                grouper = native().GroupFingerprints(batch.schema, data, grouping, algorithm, hmac_key, 1)
            starts = grouper.update(batch)
            if starts:
                firsts.append(batch.select(grouping).take(pa.array(starts, pa.int64())))
            continue
        hashes = batch.column(marker)
        changes = pc.not_equal(hashes.slice(1), hashes.slice(0, len(hashes) - 1))
        ends = [*(i + 1 for i in pc.indices_nonzero(changes).to_pylist()), batch.num_rows]
        start = 0
        for end in ends:
            if current is None or hashes[start] != current:
                if grouper is not None:
                    fingerprints.append(grouper.finish())
                grouper = native().Fingerprint(batch.schema, data, algorithm, hmac_key, 1)
                current = hashes[start]
                firsts.append(batch.select(grouping).slice(start, 1))
            grouper.update(batch.slice(start, end - start))
            start = end
    if grouper is None:
        return None
    firsts = [_zero_signless(batch) for batch in firsts]
    if marker is None:
        return firsts, pa.array(grouper.finish(), pa.string())
    fingerprints.append(grouper.finish())
    return firsts, pa.array(fingerprints, pa.string())


def _zero_signless(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A group's values as Spark's groupBy gives them: a floating-point -0.0 as 0.0 (Spark normalises grouping
    keys; both are one group)."""
    arrays = [
        pc.if_else(pc.equal(array, 0), pa.scalar(0.0, array.type), array)
        if pa.types.is_floating(array.type)
        else array
        for array in batch.columns
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=batch.schema)
