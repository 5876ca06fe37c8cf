"""The differing rows ``hashexpr reconcile`` found: a sample for the summary and ``--json``, and ``--out`` files.

``--out`` takes its format from the output's suffix: ``.parquet`` a Parquet file, ``.csv`` a CSV file with a
header line, ``.jsonl`` JSON Lines (one object a row); a name without a suffix (or ending in ``/``) a directory of
Parquet part files, as Spark writes them. CSV has no nested values: ``changed_columns`` and nested values are
written as JSON text, the value structs as columns ``source.NAME`` and ``target.NAME``. Every output is written
to a hidden sibling and moved into place when complete.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hashexpr.cli import formats as hformats
from hashexpr.cli import outputs as houtputs
from hashexpr.cli.report import json_value
from hashexpr.reconcile.local import output_columns

#: The output formats by suffix; a name without one is a directory of Parquet part files.
SUFFIXES = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl"}


def out_format(path: str) -> str:
    """The format of ``--out``'s ``path``: by its suffix, ``parquet-directory`` without one.

    Examples
    --------
    >>> out_format("changes.csv"), out_format("changes.parquet"), out_format("changes/")
    ('csv', 'parquet', 'parquet-directory')
    >>> out_format("changes.txt")
    Traceback (most recent call last):
        ...
    ValueError: --out changes.txt: write .parquet, .csv or .jsonl, or a directory name without a suffix
    """
    name = os.path.basename(path.rstrip("/" + os.sep))
    suffix = os.path.splitext(name)[1].lower()
    if path.endswith(("/", os.sep)) or not suffix:
        return "parquet-directory"
    if suffix not in SUFFIXES:
        raise ValueError(f"--out {path}: write .parquet, .csv or .jsonl, or a directory name without a suffix")
    return SUFFIXES[suffix]


def check_out(path: str, mode: str, inputs: Sequence[str]) -> str:
    """Check ``--out`` before anything runs: a local path whose directory exists (it is not created), which
    replaces no input; returns the mode."""
    local = hformats.local_path(path)
    if local is None:
        raise ValueError(f"--out {path}: write a local file")
    parent = os.path.dirname(os.path.abspath(local.rstrip("/" + os.sep)))
    if not os.path.isdir(parent):
        raise ValueError(f"--out {path}: the directory {parent} does not exist; create it first")
    out_format(path)
    return houtputs.check_output(path, mode, inputs)


def write(changes: pa.Table, path: str, mode: str, keys: Sequence[str]) -> str:
    """Write ``changes`` (of the key columns ``keys``) to ``path`` in its format (:func:`out_format`); return the
    format."""
    import pyarrow.parquet as pq

    fmt = out_format(path)
    target = os.path.abspath(hformats.local_path(path).rstrip("/" + os.sep))

    def write_into(staging: str) -> None:
        if fmt == "parquet-directory":
            os.makedirs(staging)
            pq.write_table(changes, os.path.join(staging, "part-00000.snappy.parquet"), compression="snappy")
            open(os.path.join(staging, "_SUCCESS"), "wb").close()
        elif fmt == "parquet":
            pq.write_table(changes, staging, compression="snappy")
        elif fmt == "csv":
            import pyarrow.csv as pcsv

            pcsv.write_csv(flat(displayable(changes), keys), staging)
        else:
            rows = displayable(changes).to_pylist()
            with open(staging, "w", encoding="utf-8") as out:
                out.writelines(json.dumps(_finite(json_value(row)), ensure_ascii=False) + "\n" for row in rows)

    houtputs.write_staged(target, mode, write_into)
    return fmt


def displayable(table: pa.Table) -> pa.Table:
    """``table`` with every date and timestamp (at any depth) as ISO text, so that Python can read the values
    that no ``datetime`` holds: after year 9999, before year 1, and infinity as DuckDB holds it."""
    return pa.table({n: _dated(c) for n, c in zip(table.column_names, table.columns)})


def _dated(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([_dated(c) for c in column.chunks], _dated_type(column.type))
    t = column.type
    if pa.types.is_date32(t) or pa.types.is_timestamp(t):
        counts = column.cast(pa.int32() if pa.types.is_date32(t) else pa.int64()).to_pylist()
        if pa.types.is_date32(t):
            return pa.array([None if v is None else iso_day(v) for v in counts], pa.string())
        scale = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 0}[t.unit]
        micros = [None if v is None else (v * scale if scale else v // 1000) for v in counts]
        zone = "Z" if t.tz is not None else ""
        return pa.array([None if v is None else iso_instant(v, zone) for v in micros], pa.string())
    if pa.types.is_struct(t):
        fields = [_dated(column.field(i)) for i in range(t.num_fields)]
        names = [t.field(i).name for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(fields, names=names, mask=pc.is_null(column)) if fields else column
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        # The offsets of a slice index the whole child array, .values.
        kind = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        return kind.from_arrays(column.offsets, _dated(column.values), mask=pc.is_null(column))
    return column


def _dated_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_date32(t) or pa.types.is_timestamp(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_dated_type(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_large_list(t):
        return pa.large_list(_dated_type(t.value_type))
    if pa.types.is_list(t):
        return pa.list_(_dated_type(t.value_type))
    return t


#: Day and microsecond counts of DuckDB's (and PostgreSQL's) infinity.
_INFINITE_DAYS, _INFINITE_MICROS = 2**31 - 1, 2**63 - 1


def iso_day(days: int) -> str:
    """A day count from 1970-01-01 as ISO text in the proleptic Gregorian calendar, any year.

    Examples
    --------
    >>> iso_day(0), iso_day(-719_163), iso_day(2_932_897), iso_day(2**31 - 1)
    ('1970-01-01', '0000-12-31', '10000-01-01', 'infinity')
    """
    if abs(days) == _INFINITE_DAYS:
        return "infinity" if days > 0 else "-infinity"
    z = days + 719_468
    era, doe = divmod(z, 146_097)
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    return f"{'-' if year < 0 else ''}{abs(year):04d}-{month:02d}-{day:02d}"


def iso_instant(micros: int, zone: str) -> str:
    """Microseconds from 1970-01-01 00:00 as ISO text, any year (``zone``: ``Z`` for an instant).

    Examples
    --------
    >>> iso_instant(1_500_000, "Z"), iso_instant(-1, "")
    ('1970-01-01T00:00:01.500000Z', '1969-12-31T23:59:59.999999')
    """
    if abs(micros) == _INFINITE_MICROS:
        return "infinity" if micros > 0 else "-infinity"
    days, of_day = divmod(micros, 86_400_000_000)
    seconds, fraction = divmod(of_day, 1_000_000)
    clock = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{iso_day(days)}T{clock}{f'.{fraction:06d}' if fraction else ''}{zone}"


def flat(changes: pa.Table, keys: Sequence[str]) -> pa.Table:
    """``changes`` as CSV can hold it: the value structs as columns ``NAME.FIELD``, lists, maps and nested values
    as JSON text, binary values as upper-case hex."""
    names = output_columns(keys)
    columns: dict[str, pa.Array] = {}
    for name, column in zip(changes.column_names, changes.columns):
        if pa.types.is_struct(column.type) and name in (names["source"], names["target"]):
            for i in range(column.type.num_fields):
                field = column.type.field(i)
                columns[f"{name}.{field.name}"] = _csv_column(pa.chunked_array([c.field(i) for c in column.chunks], field.type))
        else:
            columns[name] = _csv_column(column)
    return pa.table(columns)


def _csv_column(column: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    t = column.type
    if pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        texts = [None if v is None else _text(v) for v in column.to_pylist()]
        return pa.array(texts, pa.string())
    return column


def _text(value: Any) -> str:
    shown = json_value(value)
    return shown if isinstance(shown, str) else json.dumps(_finite(shown), ensure_ascii=False)


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such a double is written as its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def sample(changes: pa.Table, keys: Sequence[str], limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` differing rows as ``--json`` shows them: ``change``, ``side``, ``key`` (the key
    columns' values, typed), ``changed_columns`` and, when fetched, ``source`` and ``target`` values."""
    names = output_columns(keys)
    rows = displayable(changes.slice(0, limit)).to_pylist() if limit > 0 else []
    found = []
    for row in rows:
        item: dict[str, Any] = {"change": row[names["change"]], "side": row[names["side"]]}
        item["key"] = {k: _finite(json_value(row[k])) for k in keys}
        item["changed_columns"] = row[names["changed_columns"]]
        for side in ("source", "target"):
            if names[side] in row:
                item[side] = _finite(json_value(row[names[side]]))
        found.append(item)
    return found


def shown(value: Any) -> str:
    """A value as the text summary shows it: NULL, strings quoted, bytes as hex, the rest as JSON shows it.

    Examples
    --------
    >>> shown(None), shown("a b"), shown(b"\\x01"), shown(1.5)
    ('NULL', "'a b'", 'X01', '1.5')
    """
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        return "X" + bytes(value).hex().upper()
    converted = json_value(value)
    return converted if isinstance(converted, str) else json.dumps(_finite(converted), ensure_ascii=False)


def lines(changes: pa.Table, keys: Sequence[str], limit: int) -> list[str]:
    """The first ``limit`` differing rows as text lines: the change, the key, the changed columns (and their
    values, when fetched)."""
    names = output_columns(keys)
    found = []
    for row in displayable(changes.slice(0, max(limit, 0))).to_pylist():
        key = ", ".join(f"{k}={shown(row[k])}" for k in keys)
        line = f"{row[names['change']]:<13}  {key}"
        changed = row[names["changed_columns"]]
        before, after = row.get(names["source"]), row.get(names["target"])
        if changed:
            if before is not None and after is not None:
                details = [f"{c}: {shown(before[c])} -> {shown(after[c])}" for c in changed]
                line += "  " + "; ".join(details)
            else:
                line += "  " + ", ".join(changed)
        found.append(line)
    return found
