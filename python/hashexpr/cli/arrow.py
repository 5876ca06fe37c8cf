"""The command line's Arrow engine: ``hashexpr.arrow`` on local Parquet inputs, with no JVM.

:func:`eligibility` says whether a run can take the engine with a result identical to Spark's (and why not);
the others (:func:`fingerprint`, :func:`write_hashed`, :func:`collisions`, ...) compute what the Spark paths
of :mod:`hashexpr.cli.commands` compute, from the same Parquet files as Spark reads them (``docs/CLI.md``,
``--engine``).
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hashexpr import arrow as hxa
from hashexpr.arrow import engine, paths
from hashexpr.arrow.plan import Input
from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli.session import DEFAULT_MASTER
from hashexpr.definitions import DEFAULT_NAMES, is_metadata_column
from hashexpr.options import KeyOptions
from hashexpr.reference.case_mapping import case_map

#: The Parquet key-value metadata in which Spark writes the Spark schema of a file.
_SPARK_SCHEMA = b"org.apache.spark.sql.parquet.row.metadata"
#: A ``CHAR(n)`` or ``VARCHAR(n)`` declared in a Spark schema's JSON (as a type, or in a field's metadata).
_CHAR_VARCHAR = re.compile(r"\b(var)?char\(\d+\)", re.IGNORECASE)
#: The ``--conf`` prefix of HMAC keys (``spark.hashexpr.secret.<name>``), which the engine reads.
_SECRET_CONF = "spark.hashexpr.secret."
#: ``--conf`` settings that size or place Spark's JVMs or its tasks, or that change no result on Parquet; any
#: other needs Spark.
_NEUTRAL_CONF = (
    _SECRET_CONF,
    "spark.driver.",
    "spark.executor.",
    "spark.ui.",
    "spark.memory.",
    "spark.local.",
    # Parquet holds instants and wall-clock times as such: the session time zone decides nothing there (PySpark
    # shows timestamps in this process's local time whatever it is).
    "spark.sql.session.timeZone",
    "spark.sql.shuffle.partitions",
    "spark.default.parallelism",
)


class Ineligible(ValueError):
    """This run needs Spark: the reason, for ``--engine arrow``'s error."""


def spark_writes_as_read(t: pa.DataType) -> bool:
    """Whether Spark writes a column that pyarrow read as ``t`` back as ``t`` (so ``hash``'s output is Spark's)."""
    types = pa.types
    if types.is_list(t):
        return spark_writes_as_read(t.value_type)
    if types.is_map(t):
        return spark_writes_as_read(t.key_type) and spark_writes_as_read(t.item_type)
    if types.is_struct(t):
        return all(spark_writes_as_read(t.field(i).type) for i in range(t.num_fields))
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


@dataclass(frozen=True)
class Files:
    """A local Parquet input as :mod:`hashexpr.arrow` reads it, which is as Spark reads it
    (:mod:`hashexpr.arrow.paths`): the files' columns with the types Spark gives them (``INT96`` as an instant in
    microseconds, ``CHAR(n)`` padded), in the order of the file Spark takes its schema from, then the partition
    columns of a Hive-partitioned directory."""

    path: str
    data: Input

    @property
    def schema(self) -> pa.Schema:
        """Every column with the Arrow type the engine hashes and writes it as, without metadata."""
        return self.data.schema.remove_metadata()

    @property
    def spark_schema(self) -> bytes | None:
        """The Spark schema in the footer of the file Spark takes its schema from, if Spark wrote it."""
        return (self.data.schema.metadata or {}).get(_SPARK_SCHEMA)

    def count_rows(self) -> int:
        return self.data.rows or 0

    def batches(self, columns: Sequence[str] | None = None) -> pa.RecordBatchReader:
        """The rows, batch by batch, in bounded memory and in the same order on every call; ``columns`` (default:
        every column) in this order, and only they are read."""
        names = self.schema.names
        positions = range(len(names)) if columns is None else [names.index(c) for c in columns]
        return self.data.columns(positions, "hashexpr")

    def table(self, columns: Sequence[str] | None = None) -> pa.Table:
        return self.batches(columns).read_all()


def eligibility(args: argparse.Namespace, src: hinputs.Source, out_fmt: str | None = None) -> Files:
    """The Parquet files of a run the engine computes exactly as Spark would; :class:`Ineligible` otherwise."""
    missing = engine.unavailable()
    if missing is not None:
        # The pure wheel has no engine: every run is Spark's.
        raise Ineligible(missing)
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
        reasons.append(
            "--master and --conf settings other than secrets, JVM resources, the session time zone and "
            "partition counts need Spark"
        )
    if out_fmt not in (None, "parquet"):
        reasons.append(f"the engine writes Parquet only, not {out_fmt}")
    if reasons:
        raise Ineligible("; ".join(reasons))
    hformats.check_input(src.path)
    try:
        # Spark's reading of the path, or why the engine cannot be sure of it (a partition value whose type
        # depends on the session, files that disagree, ...): Spark reports unreadable input in its own words.
        data = paths.from_path(hformats.local_path(src.path))
    except (ValueError, OSError, pa.ArrowException) as error:
        raise Ineligible(str(error)) from None
    for plan in data.plans:
        # Refused: a type the engine cannot hash as Spark reads it. Rebased: values Spark moves from the hybrid
        # calendar, which the engine would refuse only once it meets them.
        if plan.refusal is not None or plan.rebased:
            raise Ineligible(f"column {plan.name!r}: {plan.refusal or plan.rebase_note}")
    files = Files(src.path, data)
    try:
        engine.native().spark_types(files.schema)
    except ValueError as error:
        raise Ineligible(str(error)) from None
    return files


def metadata_columns(files: Files) -> list[str]:
    """The columns that ``with_metadata`` wrote (marked so in the Spark schema of a file Spark wrote, or named
    as its default names), which ``hx.diff`` leaves out of a comparison or reads as stored hashes."""
    defaults = {n.lower() for n in DEFAULT_NAMES.values()}
    marked = set()
    text = files.spark_schema
    if text is not None:
        try:
            fields = json.loads(text).get("fields", [])
            marked = {f.get("name") for f in fields if is_metadata_column(f.get("metadata"))}
        except (ValueError, AttributeError):
            pass
    return [n for n in files.schema.names if n.lower() in defaults or n in marked]


def check_declarations(files: Files, columns: Sequence[str]) -> None:
    """Spark writes a column it read as ``CHAR(n)`` or ``VARCHAR(n)`` back (``hash``, ``diff --out``) declared
    so in its output's Spark schema, which the engine does not write: :class:`Ineligible` for such ``columns``."""
    declared = _char_varchar(files.spark_schema)
    written = [n for n in columns if n in declared]
    if written:
        raise Ineligible(
            f"Spark writes the column {written[0]!r} back declared as {declared[written[0]]} in its output's "
            "schema, which the engine's output does not declare"
        )


def _char_varchar(text: bytes | None) -> dict[str, str]:
    """The top-level columns a Spark schema declares as ``CHAR(n)`` or ``VARCHAR(n)`` (at any depth), with the
    first such declaration."""
    if text is None:
        return {}
    try:
        fields = json.loads(text).get("fields", [])
    except (ValueError, AttributeError):
        return {}
    found = {}
    for field in fields:
        declared = _CHAR_VARCHAR.search(json.dumps(field))
        if declared is not None:
            found[field.get("name")] = declared.group(0).upper()
    return found


def hex_upper(hashes: pa.FixedSizeBinaryArray) -> pa.StringArray:
    """Hashes as upper-case hex strings, as SQL ``hex()`` writes them (NULL stays NULL)."""
    try:
        import numpy as np
    except ImportError:  # the wheel needs no numpy: one value at a time, then
        return pa.array([None if v is None else v.hex().upper() for v in hashes.to_pylist()], pa.string())

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


def fingerprint(files: Files, columns: list[str], algorithm: str, key: str | None) -> tuple[int, str]:
    return files.count_rows(), hxa.dataset_fingerprint(
        files.batches(columns), algorithm=algorithm, hmac_key=key
    )


def group_fingerprints(
    files: Files, columns: list[str], by: list[str], algorithm: str, key: str | None
) -> pa.Table:
    """Each group's fingerprint, its group values as Spark gives them (``-0.0`` grouped and shown as ``0.0``),
    in the order the Spark path's ``orderBy`` shows them: NULLs first, then ascending, NaN last."""
    for name in by:
        t = files.schema.field(name).type
        nested = pa.types.is_struct(t) and _holds(t, _floating_or_list)
        if _holds(t, pa.types.is_map) or _floating_or_list(t) and not pa.types.is_floating(t) or nested:
            raise Ineligible(
                f"--by {name!r} is of type {t}, which Spark groups and orders by rules of its own (maps, lists, "
                "floating point inside a struct)"
            )
    groups = hxa.fingerprints_by(files.batches(columns), by, algorithm=algorithm, hmac_key=key)
    for name in by:
        column = groups[name]
        if pa.types.is_floating(column.type):
            # Spark normalises -0.0 to 0.0 in grouping keys.
            zero = pa.scalar(0.0, column.type)
            groups = groups.set_column(
                groups.schema.get_field_index(name), name, pc.if_else(pc.equal(column, zero), zero, column)
            )
    keys = []
    for name in by:
        if pa.types.is_floating(groups[name].type):
            # Spark orders NaN after every number; pyarrow places it with the NULLs.
            nan = f"__hx_nan_{name}"
            groups = groups.append_column(nan, pc.is_nan(groups[name]))
            keys.append(nan)
        keys.append(name)
    try:
        ordered = groups.sort_by([(k, "ascending", "at_start") for k in keys])
    except (TypeError, ValueError):
        # pyarrow before 20 takes the NULL placement for all keys at once.
        ordered = groups.take(
            pc.sort_indices(groups, [(k, "ascending") for k in keys], null_placement="at_start")
        )
    return ordered.select([*by, hxa.FINGERPRINT_COLUMN])


def _floating_or_list(t: pa.DataType) -> bool:
    return (
        pa.types.is_floating(t)
        or pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
    )


def _holds(t: pa.DataType, predicate: Callable[[pa.DataType], bool]) -> bool:
    """Whether ``t`` or a type inside it satisfies ``predicate``."""
    if predicate(t):
        return True
    if pa.types.is_struct(t):
        return any(_holds(t.field(i).type, predicate) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _holds(t.key_type, predicate) or _holds(t.item_type, predicate)
    if _floating_or_list(t) and not pa.types.is_floating(t):
        return _holds(t.value_type, predicate)
    return False


class StructRow(tuple):
    """A struct value as PySpark's ``Row`` is one, for a run that imports no PySpark: a tuple of the values (as
    JSON shows it), printed ``Row(a=1, b='x')``, with ``asDict``."""

    _names: list[str]

    @classmethod
    def of(cls, fields: list[tuple[str, Any]]) -> StructRow:
        row = cls(value for _, value in fields)
        row._names = [name for name, _ in fields]
        return row

    def asDict(self) -> dict[str, Any]:
        return dict(zip(self._names, self))

    def __repr__(self) -> str:
        return "Row(" + ", ".join(f"{name}={value!r}" for name, value in zip(self._names, self)) + ")"

    __str__ = __repr__


def spark_rows(table: pa.Table) -> list[dict[str, Any]]:
    """The rows of ``table`` as PySpark's ``collect`` gives the same values: a struct as a ``Row``, a timestamp
    with a time zone as a naive datetime in this process's local time, an unsigned 64-bit integer (Spark's
    ``DECIMAL(20,0)``) as a ``Decimal``."""
    converters = {f.name: _python(f.type) for f in table.schema}
    return [{k: converters[k](v) for k, v in row.items()} for row in table.to_pylist()]


def _python(t: pa.DataType) -> Callable[[Any], Any]:
    if pa.types.is_struct(t):
        fields = [(t.field(i).name, _python(t.field(i).type)) for i in range(t.num_fields)]
        return lambda v: None if v is None else StructRow.of([(name, convert(v[name])) for name, convert in fields])
    if pa.types.is_timestamp(t) and t.tz is not None:
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

        def local(v: Any) -> Any:
            if v is None:
                return None
            micros = (v - epoch) // datetime.timedelta(microseconds=1)
            return datetime.datetime.fromtimestamp(micros // 1_000_000).replace(
                microsecond=micros % 1_000_000
            )

        return local
    if pa.types.is_uint64(t):
        return lambda v: None if v is None else decimal.Decimal(v)
    return lambda v: v


def write_hashed(
    files: Files,
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
    for field in files.schema:
        if not spark_writes_as_read(field.type):
            raise Ineligible(f"Spark would write the column {field.name!r} ({field.type}) as another type")
    check_declarations(files, files.schema.names)
    options = {"algorithm": hashing.get("algorithm", "murmur3"), "hmac_key": hashing.get("hmac_key")}
    added_type = pa.string() if as_hex else pa.binary()
    added_names = ([names[1]] if key_columns else []) + [names[0]]
    # Without the input's metadata: Spark reads the schema a file's Spark metadata states, which lacks the
    # added columns.
    schema = files.schema
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
            for batch in files.batches():
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


def collisions(
    files: Files, keys: list[str], hashing: dict[str, Any], key_options: KeyOptions | None = None
) -> tuple[int, list[dict]]:
    """The collisions of computed hash keys: hash keys shared by business keys that differ.

    Business keys are compared after the normalisation of ``key_options`` (trim, case, empty as NULL), as
    ``find_collisions`` compares them: by the SHA-256 ``record_key`` of their parts under that normalisation,
    equal exactly when Spark's NULL-safe equality of the normalised parts holds. A computed key is a function
    of the normalised business key, so it has no inconsistencies; a hash key with several identities is a
    collision. Rows whose hash key is NULL (an all-NULL key under ``null_key=null``) are skipped, as Spark
    skips them.
    """
    options = key_options or KeyOptions()
    for field in files.schema:
        if field.name in keys and _holds_map(field.type):
            raise Ineligible(f"key column {field.name!r} holds a map, which Spark cannot group by")
    table = files.table(keys)
    algorithm = {"algorithm": hashing.get("algorithm", "murmur3"), "hmac_key": hashing.get("hmac_key")}
    hash_keys = hxa.record_key(table, keys, **options.as_kwargs(), **algorithm)
    identity = hxa.record_key(table, keys, **options.normalizing, algorithm="sha256")
    pairs = pa.table(
        {
            "hk": hash_keys.cast(pa.binary()),
            "id": identity.cast(pa.binary()),
            "row": pa.array(range(table.num_rows), pa.int64()),
        }
    ).filter(pc.is_valid(hash_keys))
    per_pair = pairs.group_by(["hk", "id"]).aggregate([("row", "min"), ("row", "count")])
    per_hash = per_pair.group_by("hk").aggregate([("id", "count_distinct"), ("row_count", "sum")])
    shared = per_hash.filter(pc.greater(per_hash["id_count_distinct"], 1))
    problems = []
    for row in shared.sort_by("hk").to_pylist():
        firsts = per_pair.filter(pc.equal(per_pair["hk"], row["hk"]))["row_min"].to_pylist()
        business = [
            tuple(_normalized(v, options) for v in r.values()) for r in table.take(firsts).to_pylist()
        ]
        problems.append(
            {
                "kind": "collision",
                "hash_keys": [row["hk"]],
                "business_keys": sorted(business, key=lambda k: tuple(map(_spark_order, k))),
                "rows": row["row_count_sum"],
            }
        )
    return len(problems), problems


def _holds_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_struct(t):
        return any(_holds_map(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _holds_map(t.value_type)
    return False


def _normalized(value: Any, options: KeyOptions) -> Any:
    """A key part as ``normalize_key`` gives it (a top-level string trimmed, case-mapped, empty as NULL)."""
    if not isinstance(value, str) or not options.normalizes:
        return value
    if options.trim:
        value = value.strip(" ")
    if options.case is not None:
        value = case_map(value, options.case)
    return None if options.empty_as_null and not value else value


def _spark_order(value: Any) -> tuple:
    """A sort key that orders values as Spark's ascending order does: NULL first, NaN last."""
    if value is None:
        return (0,)
    if isinstance(value, float) and math.isnan(value):
        return (2,)
    return (1, value)
