"""Parquet inputs whose physical types the engine reads: ``ParquetFile``, pyarrow datasets and scanners, and the
files of a path (:mod:`hashexpr.arrow.paths`).

Each file's columns are planned from its own Parquet schema and footer (:mod:`hashexpr.arrow.plan`); the files
of one input must agree on every column's Spark type, or the column is refused naming two files that differ,
since Spark reads all of them with the schema of one (:func:`merge`). ``INT96`` timestamps are read in
microseconds, as Spark keeps them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from hashexpr.arrow import spark_schema
from hashexpr.arrow.int96 import REFUSAL as INT96_REFUSAL
from hashexpr.arrow.int96 import UNCHECKED as INT96_UNCHECKED
from hashexpr.arrow.int96 import outside as int96_outside
from hashexpr.arrow.partitions import ARROW_TYPES, PartitionError, infer
from hashexpr.arrow.plan import (
    ColumnPlan,
    Input,
    Leaf,
    adapt,
    engine_schema,
    parquet_leaves,
    plan_column,
)

#: Rows a batch read from a file holds: pyarrow then holds about one column chunk at a time.
BATCH_ROWS = 65_536


@dataclass
class FilePlan:
    """One file's columns as the engine takes them."""

    path: str
    schema: pa.Schema  # as pyarrow reads the file, INT96 in microseconds
    plans: list[ColumnPlan]
    rows: int
    int96: set[str]  # the columns with INT96 leaves
    order: list[int] | None = None  # each column's position in the file, where it differs from the schema's
    own_names: list[str] | None = None  # the file's columns in its own order, where ``schema`` is another's


def plan_file(path: str, parquet: pq.ParquetFile | None = None, label: str | None = None) -> FilePlan:
    """The plan of one Parquet file's columns, from its footer (``ValueError`` if it is not Parquet)."""
    try:
        reader = parquet or pq.ParquetFile(path, coerce_int96_timestamp_unit="us")
    except (pa.ArrowException, OSError) as error:
        raise ValueError(f"{path} cannot be read as Parquet: {error}") from None
    try:
        schema = reader.schema_arrow
        found = spark_schema.footer(reader.metadata.metadata)
        leaves = parquet_leaves(reader.schema, schema)
        plans = [plan_column(f, found, leaves.get(f.name), label or f"the file {path}") for f in schema]
        int96 = _int96(leaves)
        if parquet is None:
            # A path is read again to check its INT96 years (int96.py).
            _refuse_misread(plans, int96, path)
        else:
            # A ParquetFile cannot be read again in another unit: its INT96 years go unchecked, so refused.
            for plan in plans:
                if plan.name in int96 and plan.refusal is None:
                    plan.refusal = INT96_UNCHECKED
        return FilePlan(path, schema, plans, reader.metadata.num_rows, int96)
    finally:
        if parquet is None:
            reader.close()


def _int96(leaves: dict[str, list[Leaf]]) -> set[str]:
    return {name for name, found in leaves.items() if any(leaf.int96 for leaf in found)}


def _refuse_misread(plans: list[ColumnPlan], int96: set[str], path: str, filesystem: Any = None) -> None:
    """Refuse the INT96 columns of the file at ``path`` that hold years pyarrow misreads (:mod:`.int96`)."""
    wanted = [p.name for p in plans if p.name in int96 and p.refusal is None]
    misread = int96_outside(path, wanted, filesystem) if wanted else set()
    for plan in plans:
        if plan.name in misread:
            plan.refusal = INT96_REFUSAL


def spark_order(path: str) -> bytes:
    """The sort key of a file's path in Spark's order: Java's ``String.compareTo`` (UTF-16 code units) of the
    absolute path. Spark takes the schema of files read as one from the first file in this order.

    Examples
    --------
    >>> sorted(["d/x=1/p.parquet", "d/x=1.5/p.parquet"], key=spark_order)  # '.' sorts before '/'
    ['d/x=1.5/p.parquet', 'd/x=1/p.parquet']
    """
    return os.path.abspath(path).encode("utf-16-be", "surrogatepass")


def merge(files: Sequence[FilePlan], where: str) -> list[ColumnPlan]:
    """One plan per column for files read as one: the first file's, or a refusal where a file refuses the
    column or the files disagree on its Spark type."""
    first = files[0]
    for other in files[1:]:
        if other.schema.names != first.schema.names:
            raise ValueError(
                f"the files of {where} have different columns ({first.path}: {first.schema.names}; {other.path}: "
                f"{other.schema.names}), and Spark reads all of them with the schema of one: hash files of one "
                "schema"
            )
    merged = []
    for i, plan in enumerate(first.plans):
        plan = dataclasses.replace(plan)
        # Datasets read their files as one stream: a rebase check of any file applies to every batch.
        rebasing = [f.plans[i] for f in files if f.plans[i].rebased]
        if rebasing:
            plan.rebased = tuple(sorted({leaf for p in rebasing for leaf in p.rebased}))
            plan.rebase_note = rebasing[0].rebase_note
        refused = next((f for f in files if f.plans[i].refusal is not None), None)
        if refused is not None:
            why = refused.plans[i].refusal
            plan.refusal = why if len(files) == 1 or refused.path in why else f"in {refused.path}: {why}"
        else:
            differs = next((f for f in files if f.plans[i].spark != plan.spark), None)
            padded = next((f for f in files if f.plans[i].pad != plan.pad), None)
            if differs is not None:
                plan.refusal = (
                    f"the files disagree on its Spark type: {first.path} holds a {plan.spark} "
                    f"({_shown(first, i)}), {differs.path} a {differs.plans[i].spark} ({_shown(differs, i)}); "
                    "Spark reads every file as one of them, so rewrite the files with one type"
                )
            elif padded is not None:
                plan.refusal = (
                    f"the files disagree on its Spark type: {_char(first, i)} in {first.path}, "
                    f"{_char(padded, i)} in {padded.path}; Spark reads every file as one of them, so rewrite the "
                    "files with one type"
                )
        merged.append(plan)
    return merged


def _char(file: FilePlan, i: int) -> str:
    pad = file.plans[i].pad
    return "a STRING" if pad is None else f"CHAR({pad})"


def _shown(file: FilePlan, i: int) -> str:
    field = file.schema.field(i)
    return "Parquet INT96" if field.name in file.int96 else f"Arrow {field.type}"


# --- ParquetFile, datasets, scanners ------------------------------------------------------------------------


def from_parquet_file(reader: pq.ParquetFile) -> Input:
    """A ``pyarrow.parquet.ParquetFile``, read with the options it was opened with."""
    file = plan_file("the ParquetFile", reader, "the ParquetFile")
    schema = engine_schema(file.schema, file.plans)

    def batches(checked: set[int], positions: Sequence[int] | None) -> Iterator[pa.RecordBatch]:
        for batch in reader.iter_batches(batch_size=BATCH_ROWS):
            batch = adapt(batch, file.plans, schema, checked)
            yield batch if positions is None else batch.select(list(positions))

    return Input(schema, file.plans, batches, file.rows)


def from_dataset(
    dataset: ds.Dataset, function: str, table_partitions: Sequence[str] | None = None
) -> Input:
    """A pyarrow dataset: of Parquet files, planned file by file (INT96 read in microseconds, partition
    columns checked against Spark's, the columns in the order of the file Spark takes its schema from); of
    anything else, as Arrow data. ``table_partitions`` names a table's own partition columns (a Delta table's,
    whose values its log holds, typed by its schema, as Spark reads them), not inferred from directory names;
    their fragments' expressions may say more (a NULL value, statistics), which says nothing of the files'
    columns."""
    if not isinstance(dataset, ds.FileSystemDataset) or not isinstance(dataset.format, ds.ParquetFileFormat):
        return Input.of(dataset.schema, dataset.to_batches, None, "the dataset")
    fragments = _fragments(dataset)
    if not fragments:
        return Input.of(dataset.schema, [], 0, "the dataset")
    files = [_fragment_plan(f, dataset.schema, table_partitions) for f in fragments]
    data_names = [n for n in dataset.schema.names if n in files[0].schema.names]
    if table_partitions is None:
        _check_partitions(dataset, fragments, data_names, function)
    int96 = {name for f in files for name in f.int96}
    if int96 and dataset.format.read_options.coerce_int96_timestamp_unit != "us":
        dataset = _in_microseconds(dataset, fragments, int96)
        files = [_fragment_plan(f, dataset.schema, table_partitions) for f in _fragments(dataset)]
    merged = dict(zip(data_names, merge(files, "the dataset")))
    # Spark reads every file by name, in the order of the first file's columns (the order of their paths).
    first = min(files, key=lambda f: spark_order(f.path))
    names = [n for n in first.own_names if n in merged]
    names += [n for n in dataset.schema.names if n not in merged]
    order = [dataset.schema.get_field_index(n) for n in names]
    fields = [dataset.schema.field(i) for i in order]
    plans = [merged.get(f.name) or ColumnPlan(f.name, f.type, f.type) for f in fields]
    schema = engine_schema(pa.schema(fields, metadata=dataset.schema.metadata), plans)
    reordered = order != list(range(len(order)))

    def batches(checked: set[int], positions: Sequence[int] | None) -> Iterator[pa.RecordBatch]:
        if positions is None:
            for batch in dataset.to_batches():
                yield adapt(batch.select(order) if reordered else batch, plans, schema, checked)
            return
        # Only the columns asked for are read, by name.
        read = sorted(set(positions))
        sub_plans, sub_schema = [plans[i] for i in read], pa.schema([schema.field(i) for i in read])
        sub_checked = {j for j, i in enumerate(read) if i in checked}
        for batch in dataset.to_batches(columns=[schema.field(i).name for i in read]):
            batch = adapt(batch, sub_plans, sub_schema, sub_checked)
            yield batch.select([read.index(i) for i in positions])

    return Input(schema, plans, batches, None)


def _fragments(dataset: ds.FileSystemDataset) -> list[Any]:
    """Every fragment of the dataset; pyarrow lists none of a filtered dataset, whose filter is lifted for it."""
    options = getattr(dataset, "_scan_options", None)
    if not options:
        return list(dataset.get_fragments())
    try:
        dataset._scan_options = {}
        return list(dataset.get_fragments())
    finally:
        dataset._scan_options = options


def _fragment_plan(fragment: Any, schema: pa.Schema, table_partitions: Sequence[str] | None = None) -> FilePlan:
    """The plan of a fragment's columns as the dataset presents them (``schema``), from the file's footer."""
    metadata = fragment.metadata
    own = metadata.schema.to_arrow_schema()
    if table_partitions is None:
        partitions: Collection[str] = ds.get_partition_keys(fragment.partition_expression)
    else:
        partitions = set(table_partitions)
    missing = [f.name for f in schema if f.name not in own.names and f.name not in partitions]
    extra = [n for n in own.names if n not in schema.names]
    if missing and table_partitions is not None:
        raise ValueError(
            f"the file {fragment.path} has no column {missing[0]!r} of the table, which was added after the file "
            "was written: Spark reads it as NULLs there, this engine does not; compare the table through Spark"
        )
    if missing or extra:
        what = (
            f"no column {missing[0]!r} of the dataset"
            if missing
            else f"a column {extra[0]!r} the dataset has not"
        )
        raise ValueError(
            f"the file {fragment.path} has {what}, and Spark reads every file with the schema of one: hash files "
            "of one schema"
        )
    leaves = parquet_leaves(metadata.schema, own)
    found = spark_schema.footer(metadata.metadata)
    fields = [f for f in schema if f.name in own.names and f.name not in partitions]
    plans = [plan_column(f, found, leaves.get(f.name), f"the file {fragment.path}") for f in fields]
    int96 = {n for n in _int96(leaves) if n in schema.names}
    _refuse_misread(plans, int96, fragment.path, fragment.filesystem)
    return FilePlan(
        fragment.path,
        pa.schema(fields, metadata=schema.metadata),
        plans,
        metadata.num_rows,
        int96,
        own_names=[n for n in own.names if n not in partitions],
    )


def _in_microseconds(
    dataset: ds.FileSystemDataset, fragments: list[Any], int96: set[str]
) -> ds.FileSystemDataset:
    """The dataset again, reading INT96 timestamps (of the columns ``int96``) in microseconds: nanoseconds wrap
    outside 1677-2262."""
    old = dataset.format
    fmt = ds.ParquetFileFormat(
        read_options=ds.ParquetReadOptions(
            dictionary_columns=old.read_options.dictionary_columns, coerce_int96_timestamp_unit="us"
        ),
        default_fragment_scan_options=old.default_fragment_scan_options,
    )
    rebuilt = [
        fmt.make_fragment(f.path, f.filesystem, partition_expression=f.partition_expression)
        for f in fragments
    ]
    schema = pa.schema(
        [f.with_type(_micros(f.type)) if f.name in int96 else f for f in dataset.schema],
        metadata=dataset.schema.metadata,
    )
    new = ds.FileSystemDataset(rebuilt, schema, fmt, dataset.filesystem)
    options = getattr(dataset, "_scan_options", None)
    if options:
        new._scan_options = dict(options)  # a Dataset.filter(...) carries its filter here
    return new


def _micros(t: pa.DataType) -> pa.DataType:
    """``t`` with every naive nanosecond timestamp in microseconds."""
    if pa.types.is_timestamp(t) and t.tz is None and t.unit == "ns":
        return pa.timestamp("us")
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_micros(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(_micros(t.key_type)), t.item_field.with_type(_micros(t.item_type))
        )
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_micros(t.value_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_micros(t.value_type)))
    return t


def _check_partitions(
    dataset: ds.FileSystemDataset, fragments: list[Any], data: list[str], function: str
) -> None:
    """The dataset's partition columns must be those Spark reads from the same directories, typed alike."""
    paths = [f.path for f in fragments]
    # The directory Spark would be given: the files' common directory.
    folders = {p: os.path.dirname(p) or os.curdir for p in paths}
    base = os.path.commonpath(list(folders.values()))
    below = {p: os.path.relpath(folder, base).split(os.sep) for p, folder in folders.items()}
    below = {p: [] if dirs == [os.curdir] else dirs for p, dirs in below.items()}
    theirs = [n for n in dataset.schema.names if n not in data]
    if not any(below.values()):
        spark = None
    else:
        try:
            spark = infer(below, base)
        except PartitionError as error:
            raise ValueError(f"{function}: {error}") from None
    names = list(spark.names) if spark is not None else []
    if names != theirs:
        raise ValueError(
            f"{function}: Spark reads the partition columns {names} from the directories of the dataset's files, "
            f"but the dataset has {theirs}: pass the path instead, and the engine reads them as Spark does"
        )
    for i, name in enumerate(names):
        field = dataset.schema.field(name)
        wanted = ARROW_TYPES[spark.types[i]]
        got = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        values = {
            p: ds.get_partition_keys(f.partition_expression).get(name) for p, f in zip(paths, fragments)
        }
        if got != wanted or any(values[p] != spark.values[p][i] for p in paths):
            raise ValueError(
                f"{function}: Spark reads the partition column {name!r} as {spark.types[i]} from the directories, "
                f"but the dataset has it as {field.type}: pass the path instead, and the engine reads it as Spark does"
            )


def from_scanner(scanner: ds.Scanner, function: str) -> Input:
    """A pyarrow scanner: its batches, each Parquet fragment's columns planned from its footer as it comes."""
    tagged = scanner.scan_batches()
    first = next(tagged, None)
    schema = scanner.projected_schema
    if first is None or not isinstance(first.fragment, ds.ParquetFileFragment):
        rest = ([] if first is None else [first.record_batch]) + [t.record_batch for t in tagged]
        return Input.of(schema, rest, None, "the scanner's data")
    plans = _scanned(first.fragment, schema, function).plans
    target = engine_schema(schema, plans)

    def batches(checked: set[int], positions: Sequence[int] | None) -> Iterator[pa.RecordBatch]:
        seen = {first.fragment.path}
        for item in _chain(first, tagged):
            if item.fragment.path not in seen:
                seen.add(item.fragment.path)
                other = _scanned(item.fragment, schema, function).plans
                for i in checked:
                    if other[i].spark != plans[i].spark or other[i].refusal != plans[i].refusal:
                        raise ValueError(
                            f"column {schema.field(i).name!r}: the files {first.fragment.path} and "
                            f"{item.fragment.path} disagree on its Spark type ({plans[i].spark}, {other[i].spark}); "
                            "Spark reads every file as one of them, so rewrite the files with one type"
                        )
            batch = adapt(item.record_batch, plans, target, checked)
            yield batch if positions is None else batch.select(list(positions))

    return Input(target, plans, batches, None)


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _scanned(fragment: Any, schema: pa.Schema, function: str) -> FilePlan:
    """The plan of a scanned fragment's columns (as the scanner presents them) from its file's footer."""
    if not isinstance(fragment, ds.ParquetFileFragment):
        found = spark_schema.footer(schema.metadata)
        plans = [plan_column(f, found, None, "the scanner's data") for f in schema]
        return FilePlan(str(getattr(fragment, "path", "a fragment")), schema, plans, 0, set())
    if fragment.partition_expression is not None and str(fragment.partition_expression) != "true":
        raise ValueError(
            f"{function}: the scanner reads partition directories, whose columns Spark types from every "
            "directory: pass the dataset or the path instead"
        )
    metadata = fragment.metadata
    own = metadata.schema.to_arrow_schema()
    leaves = parquet_leaves(metadata.schema, own)
    found = spark_schema.footer(metadata.metadata)
    plans = [
        plan_column(
            f, found, leaves.get(f.name) if f.name in own.names else None, f"the file {fragment.path}"
        )
        for f in schema
    ]
    int96 = _int96(leaves)
    _refuse_misread(plans, int96, fragment.path, fragment.filesystem)
    return FilePlan(fragment.path, schema, plans, metadata.num_rows, int96)
