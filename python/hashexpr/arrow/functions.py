"""Record hashes, keys and fingerprints of Arrow data, computed by the Rust engine (``hashexpr._native``).

Each function reads its input as a stream of record batches and hashes each batch on every core (or
``threads``) with the GIL released, so a Parquet dataset larger than memory is fingerprinted in bounded memory.
Every column hashes as the Spark type Spark gives it when it reads the data from Parquet (``docs/ARROW.md``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import pyarrow as pa

from hashexpr.arrow.engine import native
from hashexpr.arrow.inputs import read, resolve
from hashexpr.arrow.options import check_threads, hashing
from hashexpr.arrow.plan import Input
from hashexpr.fingerprints import FingerprintState
from hashexpr.options import KeyOptions, check_secret_name

#: The name of the fingerprint column that :func:`fingerprints_by` adds.
FINGERPRINT_COLUMN = "fingerprint"

Columns = Sequence[str] | str | None


class _Exported:
    """Arrow capsules the engine made, for :func:`pyarrow.array` (the Arrow PyCapsule interface)."""

    def __init__(self, capsules: tuple[Any, Any]) -> None:
        self._capsules = capsules

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        return self._capsules


@contextlib.contextmanager
def _named(function: str) -> Iterator[None]:
    """The engine's errors as errors of ``function``."""
    try:
        yield
    except ValueError as error:
        message = str(error)
        if message.startswith(f"{function}:"):
            raise
        raise ValueError(f"{function}: {message}") from None


def _hash(
    data: Any,
    columns: Columns,
    function: str,
    kind: str,
    algorithm: str,
    hmac_key: Any,
    threads: Any,
    key: tuple[str, bool, str | None, bool, str] = ("", False, None, False, "hash"),
) -> pa.Array:
    algorithm, key_bytes = hashing(algorithm, hmac_key, function)
    threads = check_threads(threads, function)
    found = read(data, function)
    positions = resolve(found.schema, columns, function)
    if not positions:
        raise ValueError(f"{function} needs at least one column")
    batches = found.open(positions, function)
    with _named(function):
        hasher = native().Hasher(
            batches.schema, positions, kind, algorithm, key_bytes, *key, threads, found.rows or 0
        )
        for batch in batches:
            hasher.update(batch)
        return pa.array(_Exported(hasher.finish()))


def record_hash(
    data: Any,
    columns: Columns = None,
    *,
    by_name: bool = False,
    algorithm: Literal["murmur3", "sha256", "hmac-sha256"] = "murmur3",
    hmac_key: bytes | str | None = None,
    threads: int | None = None,
) -> pa.FixedSizeBinaryArray:
    """Return the record hash of every row: the bytes Spark's ``record_hash`` gives the same data.

    Parameters
    ----------
    data : Arrow data or a path
        A pyarrow Table, RecordBatch, RecordBatchReader, ``ParquetFile``, dataset or scanner, a pandas or Polars
        DataFrame (a pandas index as ``to_parquet`` writes it), a DuckDB relation, anything with
        ``__arrow_c_stream__``, or the path of a Parquet file or directory, read as ``spark.read.parquet`` reads
        it (``docs/ARROW.md``). A column whose Spark type the engine cannot be sure of (a naive
        ``timestamp[ns]`` of unknown origin, INT96 read in nanoseconds, a collated string in Spark's footer
        schema, ...) is refused with a ``ValueError`` naming it and the fix.
    columns : str or sequence of str, optional
        The columns to hash, in this order (default: every column, as ``record_hash(*)``). A name matches a
        column exactly, or else ignoring case.
    by_name : bool, optional
        Identify columns by name, as ``record_hash_by_name``: a column's name is the top-level name the schema
        spells (``docs/FORMAT.md``, section 6.1).
    algorithm : {'murmur3', 'sha256', 'hmac-sha256'}, optional
        As in Spark's ``record_hash_with`` (``docs/SECURITY.md``).
    hmac_key : bytes or str, optional
        With ``'hmac-sha256'``: the secret's value (a ``str`` as UTF-8), the bytes Spark's conf
        ``spark.hashexpr.secret.<name>`` holds.
    threads : int, optional
        Threads to hash on (default: every core).

    Returns
    -------
    :class:`pyarrow.FixedSizeBinaryArray`
        One 16-byte hash a row (32 with SHA-256), never NULL.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from hashexpr import arrow as hxa
    >>> table = pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["a", None]})
    >>> hxa.record_hash(table)[0].as_py().hex().upper()
    'BB9718ED625B2FC5763E75F3ABFD7C5A'
    >>> hxa.record_hash(table, ["name", "id"], by_name=True) == hxa.record_hash(table, by_name=True)
    True
    >>> hxa.record_hash(table, algorithm="sha256").type
    FixedSizeBinaryType(fixed_size_binary[32])
    """
    if not isinstance(by_name, bool):
        raise TypeError(f"record_hash: by_name must be a bool, got {type(by_name).__name__}")
    kind = "by_name" if by_name else "positional"
    return _hash(data, columns, "record_hash", kind, algorithm, hmac_key, threads)


def record_key(
    data: Any,
    columns: Columns,
    *,
    salt: str | None = "",
    trim: bool = False,
    case: Literal["upper", "lower"] | None = None,
    empty_as_null: bool = False,
    null_key: Literal["hash", "null", "error"] = "hash",
    algorithm: Literal["murmur3", "sha256", "hmac-sha256"] = "murmur3",
    hmac_key: bytes | str | None = None,
    threads: int | None = None,
) -> pa.FixedSizeBinaryArray:
    """Return the business-key hash of every row: the bytes of Spark's ``record_key_with`` with these options.

    Parameters
    ----------
    data : Arrow data
        As for :func:`record_hash`.
    columns : str or sequence of str
        The key parts, in order.
    salt : str, optional
        Separates the hash space of one table from others (``docs/KEYS.md``).
    trim : bool, optional
        Remove spaces from both ends of string key parts.
    case : {'upper', 'lower'}, optional
        Map string key parts to upper or lower case (``docs/FORMAT.md``, section 9.1).
    empty_as_null : bool, optional
        Treat an empty string key part (after ``trim``) as NULL.
    null_key : {'hash', 'null', 'error'}, optional
        What a key whose parts are all NULL gives: its hash (default), NULL, or a ``ValueError``.
    algorithm, hmac_key, threads
        As for :func:`record_hash`.

    Returns
    -------
    :class:`pyarrow.FixedSizeBinaryArray`
        One 16-byte key a row (32 with SHA-256); NULL for an all-NULL key under ``null_key='null'``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from hashexpr import arrow as hxa
    >>> table = pa.table({"customer": [" c-042 ", "C-042", None]})
    >>> keys = hxa.record_key(table, "customer", trim=True, case="upper", null_key="null")
    >>> keys[0] == keys[1], keys[2].is_valid
    (True, False)
    """
    options = KeyOptions.of(salt, trim, case, empty_as_null, null_key)
    if columns is None or (not isinstance(columns, str) and len(columns) == 0):
        raise ValueError("record_key needs at least one key column")
    return _hash(
        data,
        columns,
        "record_key",
        "key",
        algorithm,
        hmac_key,
        threads,
        (options.salt, options.trim, options.case, options.empty_as_null, options.null_key),
    )


def dataset_fingerprint(
    data: Any,
    columns: Columns = None,
    *,
    algorithm: Literal["murmur3", "lthash16"] = "murmur3",
    hmac_key: bytes | str | None = None,
    threads: int | None = None,
) -> str:
    """Return the fingerprint of every row: the value Spark's ``hx.dataset_fingerprint(df)`` gives the same data.

    Parameters
    ----------
    data : Arrow data
        As for :func:`record_hash`; a stream is read once, batch by batch, in bounded memory.
    columns : str or sequence of str, optional
        The columns (default: every column).
    algorithm : {'murmur3', 'lthash16'}, optional
        The sum of the rows' hashes, or LtHash16 of their SHA-256 hashes (``docs/FORMAT.md``, section 11).
    hmac_key : bytes or str, optional
        With ``'lthash16'``: rows are hashed with HMAC-SHA-256 under this key (Spark's ``secret=<name>``).
    threads : int, optional
        Threads to hash on (default: every core).

    Returns
    -------
    str
        ``'hx1:'`` (``'hx1-lthash16:'``, ``'hx1-lthash16-hmac:'``) and 64 hex digits.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from hashexpr import arrow as hxa
    >>> a = pa.table({"id": pa.array([1, 2], pa.int32()), "s": ["x", "y"]})
    >>> hxa.dataset_fingerprint(a) == hxa.dataset_fingerprint(a.take([1, 0]))
    True
    >>> hxa.dataset_fingerprint(a, algorithm="lthash16")[:13]
    'hx1-lthash16:'
    """
    function = "dataset_fingerprint"
    algorithm, key_bytes = hashing(algorithm, hmac_key, function, ("murmur3", "lthash16"))
    threads = check_threads(threads, function)
    found = read(data, function)
    positions = resolve(found.schema, columns, function)
    batches = found.open(positions, function)
    with _named(function):
        fingerprint = native().Fingerprint(batches.schema, positions, algorithm, key_bytes, threads)
        for batch in batches:
            fingerprint.update(batch)
        return fingerprint.finish()


def fingerprint_state(
    data: Any,
    columns: Columns = None,
    *,
    algorithm: Literal["murmur3", "lthash16"] = "murmur3",
    hmac_key: bytes | str | None = None,
    secret: str | None = None,
    threads: int | None = None,
) -> FingerprintState:
    """Return what :func:`dataset_fingerprint` is computed from: the state Spark's ``hx.fingerprint_state`` gives
    the same data, with the same JSON.

    States add and subtract as the multisets of their rows do, whichever engine made them: a state computed in
    Spark, plus the state of the rows inserted and minus that of the rows deleted (Arrow batches, here), is the
    state of the changed table, and the other way round (``docs/FINGERPRINTS.md``).

    Parameters
    ----------
    data : Arrow data
        As for :func:`record_hash`.
    columns : str or sequence of str, optional
        The columns (default: every column).
    algorithm : {'murmur3', 'lthash16'}, optional
        As for :func:`dataset_fingerprint`.
    hmac_key : bytes or str, optional
        With ``'lthash16'``: rows are hashed with HMAC-SHA-256 under this key; then ``secret`` is required.
    secret : str, optional
        The name of the secret whose value is ``hmac_key`` (Spark's ``spark.hashexpr.secret.<name>``): a keyed
        state records this name, never the key, so that it combines with Spark's states of that secret.
    threads : int, optional
        Threads to hash on (default: every core).

    Returns
    -------
    :class:`hashexpr.FingerprintState`

    Examples
    --------
    >>> import pyarrow as pa
    >>> from hashexpr import arrow as hxa
    >>> a = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    >>> state = hxa.fingerprint_state(a)
    >>> state.fingerprint == hxa.dataset_fingerprint(a), state.count, state.columns
    (True, 3, (('id', 'bigint'),))
    >>> (state - hxa.fingerprint_state(a.slice(2))).fingerprint == hxa.dataset_fingerprint(a.slice(0, 2))
    True
    """
    function = "fingerprint_state"
    algorithm, key_bytes = hashing(algorithm, hmac_key, function, ("murmur3", "lthash16"))
    if (key_bytes is None) != (secret is None):
        raise ValueError(
            f"{function}: a keyed state records its secret's name, never the key: pass hmac_key together with "
            "secret=NAME, the name Spark holds the same key under (spark.hashexpr.secret.NAME)"
        )
    if secret is not None:
        check_secret_name(secret, function)
    threads = check_threads(threads, function)
    found = read(data, function)
    positions = resolve(found.schema, columns, function)
    batches = found.open(positions, function)
    with _named(function):
        fingerprint = native().Fingerprint(batches.schema, positions, algorithm, key_bytes, threads)
        for batch in batches:
            fingerprint.update(batch)
        count, total, lanes, schema, expected = fingerprint.state()
        types = native().spark_types(pa.schema([batches.schema.field(i) for i in positions]))
    state = FingerprintState.from_parts(algorithm, types, schema, count, total, lanes, secret)
    if state.fingerprint != expected:
        # The columns' type strings must give the engine's schema digest: never a state of another fingerprint.
        raise ValueError(f"{function}: the columns {types} do not give the schema digest the engine computed")
    return state


def fingerprints_by(
    data: Any,
    by: Sequence[str] | str,
    *,
    algorithm: Literal["murmur3", "lthash16"] = "murmur3",
    hmac_key: bytes | str | None = None,
    threads: int | None = None,
) -> pa.Table:
    """Return one fingerprint per group: the groups and fingerprints Spark's ``hx.fingerprints_by`` gives.

    Each group's fingerprint is :func:`dataset_fingerprint` of its rows (every column), so comparing two
    snapshots group by group finds the groups that changed. Rows are grouped as Spark groups them: NULL is a
    group, ``-0.0`` and ``0.0`` are one, every NaN is one.

    Parameters
    ----------
    data : Arrow data
        As for :func:`record_hash`.
    by : str or sequence of str
        The grouping columns.
    algorithm, hmac_key, threads
        As for :func:`dataset_fingerprint`.

    Returns
    -------
    :class:`pyarrow.Table`
        The grouping columns (each group's values as its first row has them) and a ``fingerprint`` string
        column, one row per group, in the order the groups first appear.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from hashexpr import arrow as hxa
    >>> table = pa.table({"k": ["a", "a", "b"], "v": [1, 2, 3]})
    >>> groups = hxa.fingerprints_by(table, "k")
    >>> groups.column("k").to_pylist(), groups["fingerprint"][1].as_py() == hxa.dataset_fingerprint(table[2:])
    (['a', 'b'], True)
    """
    function = "fingerprints_by"
    if isinstance(by, str):
        by = [by]
    if not by:
        raise ValueError(
            "fingerprints_by needs at least one grouping column; use dataset_fingerprint for all rows"
        )
    algorithm, key_bytes = hashing(algorithm, hmac_key, function, ("murmur3", "lthash16"))
    threads = check_threads(threads, function)
    found = read(data, function)
    grouping = resolve(found.schema, by, function, "grouping column")
    batches = found.open(None, function)
    positions = list(range(len(batches.schema)))
    group_schema = pa.schema([batches.schema.field(i) for i in grouping])
    firsts = []
    with _named(function):
        groups = native().GroupFingerprints(
            batches.schema, positions, grouping, algorithm, key_bytes, threads
        )
        for batch in batches:
            starts = groups.update(batch)
            if starts:
                firsts.append(batch.select(grouping).take(pa.array(starts, pa.int64())))
        fingerprints = groups.finish()
    table = pa.Table.from_batches(firsts, group_schema) if firsts else group_schema.empty_table()
    return table.append_column(FINGERPRINT_COLUMN, pa.array(fingerprints, pa.string()))


def spark_types(data: Any) -> list[tuple[str, str]]:
    """Return each column's name and the Spark type it hashes as (its text in the fingerprint's schema).

    ``data`` is anything :func:`record_hash` takes, or a :class:`pyarrow.Schema` (its metadata may hold Spark's
    footer schema); nothing is read but the schema (and, for Parquet files, their footers).

    Raises
    ------
    ValueError
        Naming the first column whose Arrow type Spark has no type for, or that the engine refuses.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from hashexpr import arrow as hxa
    >>> hxa.spark_types(pa.schema({"n": pa.uint64(), "t": pa.timestamp("ms"), "d": pa.duration("s")}))
    [('n', 'decimal(20,0)'), ('t', 'timestamp_ntz'), ('d', 'bigint')]
    >>> hxa.spark_types(pa.schema({"t": pa.timestamp("ns")}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: spark_types: column 't': it is a timestamp[ns] without a time zone, whose Spark type the data ...
    """
    function = "spark_types"
    found = Input.of(data, [], 0, "the data") if isinstance(data, pa.Schema) else read(data, function)
    schema = found.open(None, function).schema
    with _named(function):
        return [tuple(pair) for pair in native().spark_types(schema)]
