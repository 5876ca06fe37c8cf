"""Metadata columns for loads: record key, record hash, commit time, commit sequence number, source file.

The columns follow the convention of Apache Hudi's meta fields (``_hoodie_record_key``,
``_hoodie_commit_time``, ``_hoodie_commit_seqno``, ``_hoodie_file_name``) and of warehouse loaders'
``RECORD_KEY``/``RECORD_HASH`` columns, with hashexpr's hashes and the hash format version stored beside
them, so a table says which format its hashes were made with. See ``docs/METADATA.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pyspark.errors import AnalysisException
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from hashexpr.definitions import DEFAULT_NAMES, Definition, field_metadata, hash_definition, key_definition
from hashexpr.names import column, quote, resolve
from hashexpr.options import Algorithm, KeyOptions, algorithm_of, flag
from hashexpr.reference import FORMAT_VERSION
from hashexpr.spark.functions import _arrow, _require, record_hash, record_key

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# monotonically_increasing_id() puts the partition index in the upper 31 bits and the record's index
# within the partition in the lower 33 bits.
_RECORD_BITS = 33
_RECORD_MASK = (1 << _RECORD_BITS) - 1


def _column_names(names: Mapping[str, str] | None) -> dict[str, str]:
    chosen = dict(DEFAULT_NAMES)
    for field, name in (names or {}).items():
        if field not in DEFAULT_NAMES:
            raise ValueError(f"names has an unknown field {field!r}; the fields are {sorted(DEFAULT_NAMES)}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"names[{field!r}] must be a non-empty column name, got {name!r}")
        chosen[field] = name
    return chosen


def _check_clashes(df: DataFrame, added: Sequence[str]) -> None:
    # Spark resolves names case-insensitively by default, so 'X' and 'x' clash.
    existing = {c.lower(): c for c in df.columns}
    seen: set[str] = set()
    for name in added:
        if name.lower() in existing:
            raise ValueError(
                f"with_metadata would add column {name!r}, but the DataFrame already has "
                f"{existing[name.lower()]!r}: drop it or choose another name with names="
            )
        if name.lower() in seen:
            raise ValueError(f"with_metadata was asked to add column {name!r} twice: names must be distinct")
        seen.add(name.lower())


def _commit_time(commit_time: datetime | str | None) -> datetime:
    if commit_time is None:
        return datetime.now(timezone.utc)
    if isinstance(commit_time, str):
        commit_time = datetime.fromisoformat(commit_time)
    if not isinstance(commit_time, datetime):
        raise TypeError(
            f"commit_time must be a datetime or an ISO 8601 string, got {type(commit_time).__name__}"
        )
    # A naive time is taken as UTC, so the stored instant does not depend on the machine's time zone.
    return commit_time if commit_time.tzinfo else commit_time.replace(tzinfo=timezone.utc)


def _commit_id(instant: datetime) -> str:
    """Hudi's instant format: UTC, ``yyyyMMddHHmmssSSS``."""
    return instant.astimezone(timezone.utc).strftime("%Y%m%d%H%M%S%f")[:-3]


_DAY_MILLIS = 86_400_000


def _instant_id(instant: Column) -> Column:
    """Hudi's instant format of a TIMESTAMP column, UTC ``yyyyMMddHHmmssSSS``, whatever the session time zone.

    Built from the epoch milliseconds: ``date_format`` formats in the session time zone.
    """
    millis = F.unix_millis(instant)
    of_day = F.pmod(millis, F.lit(_DAY_MILLIS))
    day = F.date_from_unix_date(((millis - of_day) / _DAY_MILLIS).cast("int"))
    hh_mm_ss_sss = (
        F.floor(of_day / 3_600_000) * 10_000_000
        + F.floor(of_day / 60_000) % 60 * 100_000
        + F.floor(of_day / 1000) % 60 * 1000
        + of_day % 1000
    )
    return F.format_string("%04d%02d%02d%09d", F.year(day), F.month(day), F.dayofmonth(day), hh_mm_ss_sss)


def _seqno(commit: Column) -> Column:
    # Both parts come from one monotonically_increasing_id() so they describe the same row position.
    position = F.monotonically_increasing_id()
    partition = F.shiftright(position, _RECORD_BITS)
    index = position.bitwiseAND(F.lit(_RECORD_MASK))
    return F.concat_ws("_", commit, partition.cast("string"), index.cast("string"))


def _stream_seqno(commit: Column, position: Column) -> Column:
    """``<commit id>_<micro-batch id>_<partition>_<index>`` of a ``row_position()`` struct."""
    parts = [position.getField(f).cast("string") for f in ("batch_id", "partition", "index")]
    return F.concat(commit, *(p for part in parts for p in (F.lit("_"), part)))


def _metadata_of(field: str, recorded: Mapping[str, Definition]) -> dict[str, Any]:
    """The column metadata of the metadata field ``field``: its definition, for a hash."""
    return recorded[field].metadata(field) if field in recorded else field_metadata(field)


def _null_string() -> Column:
    return F.lit(None).cast("string")


def _source_file(df: DataFrame) -> Column:
    """``_metadata.file_path`` where ``df`` reads files, otherwise a NULL string."""
    if "_metadata" in {c.lower() for c in df.columns}:
        # A data column named _metadata hides the file metadata.
        return _null_string()
    return F.col("_metadata.file_path") if _reads_one_file_source(df) else _null_string()


def _reads_one_file_source(df: DataFrame) -> bool:
    """Whether ``_metadata.file_path`` resolves on ``df``: through projections, filters and joins over one file
    scan, not over aggregates, unions, non-file sources or a join of two file scans (which is ambiguous).

    Decided without a job, and without a failed analysis (which PySpark logs as an ERROR, with its stack
    trace) except over Spark Connect for a join of two file scans.
    """
    jdf = getattr(df, "_jdf", None)
    if jdf is not None:
        # Classic PySpark: the hidden columns of the analyzed plan, as name resolution sees them.
        hidden = jdf.queryExecution().analyzed().metadataOutput()
        found = [
            a for a in (hidden.apply(i) for i in range(hidden.size())) if a.name().lower() == "_metadata"
        ]
        if len(found) != 1:
            return False
        fields = json.loads(found[0].dataType().json()).get("fields", [])
        return any(f["name"] == "file_path" and f["type"] == "string" for f in fields)
    # Spark Connect, where the plan is out of reach: a lateral column alias named _metadata, which the name
    # resolves to only when no hidden column of that name exists, tells the two apart by its type (INT).
    probe = df.select(
        F.struct(F.lit(0).alias("file_path")).alias("_metadata"),
        F.col("_metadata.file_path").alias("file_path"),
    )
    try:
        return isinstance(probe.schema["file_path"].dataType, StringType)
    except AnalysisException:
        # Two file scans joined: the name is ambiguous, and there is no one source file.
        return False


def with_metadata(
    df: DataFrame,
    key: str | Sequence[str],
    *,
    commit_time: datetime | str | None = None,
    commit_id: str | None = None,
    commit_seqno: bool = True,
    source_file: bool = True,
    hash_columns: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    key_options: Mapping[str, Any] | None = None,
    algorithm: Algorithm = "murmur3",
    secret: str | None = None,
) -> DataFrame:
    """Return ``df`` with metadata columns appended: record key, record hash, commit time and more.

    ============================  ==========  ==========================================================
    column (default name)         type        value
    ============================  ==========  ==========================================================
    ``_hx_record_key``            BINARY      :func:`~hashexpr.record_key` of the ``key`` columns
    ``_hx_record_hash``           BINARY      :func:`~hashexpr.record_hash` (by name) of the data columns
    ``_hx_commit_time``           TIMESTAMP   ``commit_time``, the same for every row (of a micro-batch)
    ``_hx_commit_seqno``          STRING      ``'<commit id>_<partition>_<index in partition>'``
    ``_hx_source_file``           STRING      the file the row was read from, or NULL
    ``_hx_format_version``        INT         the hash format version (1)
    ============================  ==========  ==========================================================

    The record hash covers every column of ``df`` (``hash_columns`` to choose), key columns included: with a
    normalised key, ``' c-1'`` and ``'C-1'`` share a record key, and the record hash still sees the change.
    It is :func:`~hashexpr.record_hash` with ``by_name=True``, so reordering columns or adding a column that
    is NULL leaves stored hashes unchanged and a later MERGE does not rewrite every row. Column names in
    ``key`` and ``hash_columns`` are taken literally (``'a.b'`` is the column named ``a.b``), matched as Spark
    matches names (ignoring case unless ``spark.sql.caseSensitive`` is set), and hashed as ``df`` spells them.

    The commit time is captured once, on the driver, as a literal: every row gets the same value, and
    recomputing the DataFrame gives the same value again (unlike ``current_timestamp()``, which is
    re-evaluated by every query). The sequence number follows Hudi's ``_hoodie_commit_seqno``; it reflects
    the physical partitioning, so it is only stable for one materialisation: store it, do not recompute it.

    On a streaming DataFrame every micro-batch is a commit: its commit time is the micro-batch's timestamp,
    which Spark records in the query's offset log, so a replayed micro-batch gets the same value; the commit
    id is that time in Hudi's instant format, and the sequence number is
    ``'<commit id>_<micro-batch id>_<partition>_<index in partition>'``, unique across micro-batches (see
    ``docs/METADATA.md``).

    Parameters
    ----------
    df : :class:`~pyspark.sql.DataFrame`
        The rows to tag; a streaming DataFrame is tagged per micro-batch.
    key : str or sequence of str
        The business key column name(s).
    commit_time : datetime or str, optional
        The commit instant (an ISO 8601 string, or a datetime; naive values are UTC). Default: now. Not for a
        streaming DataFrame, whose micro-batches each have their own.
    commit_id : str, optional
        The commit id that starts each sequence number. Default: the commit time as Hudi writes an instant
        (UTC ``yyyyMMddHHmmssSSS``).
    commit_seqno : bool, optional
        Add the sequence number column (default ``True``).
    source_file : bool, optional
        Add the source file column (default ``True``): ``_metadata.file_path`` when ``df`` reads files
        directly (through projections, filters and joins with data that is not read from files), NULL
        otherwise (after an aggregation, for in-memory data, or when ``df`` has its own ``_metadata`` column).
    hash_columns : sequence of str, optional
        The columns the record hash covers. Default: every column of ``df``.
    names : mapping of str to str, optional
        Column names by field (``'record_key'``, ``'record_hash'``, ``'commit_time'``, ``'commit_seqno'``,
        ``'source_file'``, ``'format_version'``), replacing the defaults in :data:`DEFAULT_NAMES`.
    key_options : mapping, optional
        :func:`~hashexpr.record_key` options: ``salt``, ``trim``, ``case``, ``empty_as_null``, ``null_key``.
    algorithm : {'murmur3', 'sha256', 'hmac-sha256'}, optional
        The algorithm of both the record key and the record hash (see :func:`~hashexpr.record_hash`);
        :func:`~hashexpr.spark.diff.diff` must be given the same to use the stored hashes.
    secret : str, optional
        With ``'hmac-sha256'``: the name of the Spark conf ``spark.hashexpr.secret.<name>`` holding the key.

    Returns
    -------
    :class:`~pyspark.sql.DataFrame`
        Every column of ``df``, then the metadata columns.

    Raises
    ------
    ValueError
        When a metadata column name is already a column of ``df`` (the message names it), a field in
        ``names`` is unknown, a key or hash column is missing, or ``commit_time`` is given for a streaming
        DataFrame.

    Examples
    --------
    >>> import hashexpr as hx
    >>> from hashexpr.spark.metadata import with_metadata
    >>> df = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, v STRING")
    >>> tagged = with_metadata(df, "id", commit_time="2026-01-02T03:04:05", names={"commit_seqno": "seq"})
    >>> tagged.columns[2:]
    ['_hx_record_key', '_hx_record_hash', '_hx_commit_time', 'seq', '_hx_source_file', '_hx_format_version']
    >>> row = tagged.orderBy("id").first()
    >>> row.seq.startswith("20260102030405000_"), row._hx_source_file, row._hx_format_version
    (True, None, 1)
    >>> row._hx_record_key == df.select(hx.record_key("id")).orderBy("id").first()[0]
    True
    >>> with_metadata(df.withColumnRenamed("v", "_HX_RECORD_HASH"), "id")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: with_metadata would add column '_hx_record_hash', but the DataFrame already has ...
    """
    keys = [key] if isinstance(key, str) else list(key)
    if not keys:
        raise ValueError("with_metadata needs at least one key column")
    keys = resolve(df, keys, "with_metadata")
    if key_options and {"algorithm", "secret"} & set(key_options):
        raise ValueError(
            "with_metadata: pass algorithm= and secret= to with_metadata itself, not in key_options: they "
            "apply to both the record key and the record hash"
        )
    options = KeyOptions.from_mapping(key_options, "with_metadata")
    algorithm, secret = algorithm_of(algorithm, secret, "with_metadata")
    hashing = {"algorithm": algorithm, "secret": secret}
    commit_seqno = flag(commit_seqno, "commit_seqno", "with_metadata")
    source_file = flag(source_file, "source_file", "with_metadata")
    payload = resolve(df, list(hash_columns), "with_metadata") if hash_columns is not None else df.columns
    if not payload:
        raise ValueError("with_metadata needs at least one column to hash")
    # Each hash column records what it is the hash of, so that a reader (diff, find_collisions) uses it only
    # when that is the hash it would compute.
    recorded = {
        "record_key": key_definition(keys, options, algorithm, secret, FORMAT_VERSION),
        "record_hash": hash_definition(payload, algorithm, secret, FORMAT_VERSION),
    }

    chosen = _column_names(names)
    streaming = df.isStreaming
    if streaming:
        if commit_time is not None:
            raise ValueError(
                "with_metadata: commit_time cannot be given for a streaming DataFrame, whose micro-batches "
                "each get their own commit time (the micro-batch timestamp); leave it out, or call "
                "with_metadata on each micro-batch in foreachBatch to give every batch a time of your own"
            )
        # Spark replaces current_timestamp() in a micro-batch by the batch's timestamp from the offset log.
        commit_at = F.current_timestamp()
        commit = F.lit(commit_id) if commit_id is not None else _instant_id(commit_at)
    else:
        instant = _commit_time(commit_time)
        commit_at = F.lit(instant).cast("timestamp")
        commit = F.lit(commit_id if commit_id is not None else _commit_id(instant))
    if _arrow():
        if commit_seqno and streaming:
            raise ValueError(
                "with_metadata: commit_seqno on a streaming DataFrame numbers rows with the jar's row_position(), "
                "and this Spark session has no hashexpr jar: load the jar, drop commit_seqno, or call "
                "with_metadata on each micro-batch in foreachBatch"
            )
        return _with_metadata_arrow(
            df,
            keys,
            payload,
            options,
            hashing,
            chosen,
            recorded,
            commit_at,
            _seqno(commit) if commit_seqno else None,
            source_file,
        )
    added: list[tuple[str, Column]] = [
        ("record_key", record_key(*map(quote, keys), **options.as_kwargs(), **hashing)),
        ("record_hash", record_hash(*map(quote, payload), by_name=True, **hashing)),
        ("commit_time", commit_at),
    ]
    if commit_seqno and streaming:
        # monotonically_increasing_id() is refused on streams (every micro-batch would number from 0 again).
        _require("row_position")
        added.append(("commit_seqno", F.call_function("row_position")))
    elif commit_seqno:
        added.append(("commit_seqno", _seqno(commit)))
    if source_file:
        added.append(("source_file", _source_file(df)))
    added.append(("format_version", F.lit(FORMAT_VERSION).cast("int")))

    _check_clashes(df, [chosen[field] for field, _ in added])
    tagged = df.select(
        "*",
        *(c.alias(chosen[field], metadata=_metadata_of(field, recorded)) for field, c in added),
    )
    if not (commit_seqno and streaming):
        return tagged
    # A projection of its own evaluates row_position() once per row; the sequence number reads three of its
    # fields, and three calls would be three positions.
    seqno = chosen["commit_seqno"]
    return tagged.select(
        *(
            _stream_seqno(commit, column(c)).alias(c, metadata=field_metadata("commit_seqno"))
            if c == seqno
            else column(c)
            for c in tagged.columns
        )
    )


def _with_metadata_arrow(
    df: DataFrame,
    keys: list[str],
    payload: list[str],
    options: KeyOptions,
    hashing: dict[str, Any],
    chosen: dict[str, str],
    recorded: Mapping[str, Definition],
    commit_at: Column,
    seqno: Column | None,
    source_file: bool,
) -> DataFrame:
    """:func:`with_metadata` without the jar: the same columns, the hashes computed by the Rust engine.

    The other fields are computed first, in a projection of the source, where ``_metadata`` and the row
    positions are still those of the files read; the hashes are then appended (``mapInArrow`` where PySpark
    has no Arrow UDFs), and the columns put in with_metadata's order.
    """
    from hashexpr.spark.arrow_path.frames import HashSpec, with_hashes

    rest: list[tuple[str, Column]] = [("commit_time", commit_at)]
    if seqno is not None:
        rest.append(("commit_seqno", seqno))
    if source_file:
        rest.append(("source_file", _source_file(df)))
    rest.append(("format_version", F.lit(FORMAT_VERSION).cast("int")))
    fields = ["record_key", "record_hash", *(field for field, _ in rest)]
    _check_clashes(df, [chosen[field] for field in fields])
    staged = {field: f"_hx_staged_{field}" for field in fields}
    taken = [c for c in df.columns if c.lower() in {v.lower() for v in staged.values()}]
    if taken:
        raise ValueError(
            f"with_metadata: the DataFrame has a column {taken[0]!r}, a name the Arrow path needs"
        )
    before = df.select("*", *(c.alias(staged[field]) for field, c in rest))
    specs = [
        HashSpec(staged["record_key"], tuple(keys), "key", key=options, **hashing),
        HashSpec(staged["record_hash"], tuple(payload), "by_name", **hashing),
    ]
    hashed = with_hashes(before, specs, "with_metadata")
    return hashed.select(
        *(column(c) for c in df.columns),
        *(
            F.col(quote(staged[field])).alias(chosen[field], metadata=_metadata_of(field, recorded))
            for field in fields
        ),
    )
