"""``hashexpr hash``: a data file or table written again with a record-hash column (and a key column) added,
by Spark or by the Arrow engine."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import hashexpr as hx
from hashexpr import names as hnames
from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli.grammar import (
    add_algorithm,
    add_engine,
    add_input,
    add_key_options,
    add_output,
    arrow_hashing,
    arrow_paths,
    check_output,
    chosen_columns,
    fall_back,
    hashing_of,
    key_options_of,
    parse_columns,
    resolve_columns,
    session,
    source,
    time_zone_of,
)
from hashexpr.cli.outcome import Outcome
from hashexpr.cli.report import ARROW, SPARK, count, preview, ran_on
from hashexpr.cli.session import PROG
from hashexpr.options import KeyOptions

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from hashexpr.cli.arrow import Files


def add_hash(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "hash",
        parents=[common],
        help="add a record-hash column (and a key column) to a data file or table",
        description=(
            "Read INPUT, add a column with record_hash of the chosen columns (default: every column, in order) "
            "and, with --key, a column with record_key of the key columns, and write OUTPUT. Spark runs "
            "embedded unless --master names a cluster."
        ),
        epilog=f"Example: {PROG} hash flights.parquet --out flights_hashed.parquet --key carrier,flight,time_hour",
    )
    add_input(parser)
    parser.add_argument("--out", required=True, metavar="OUTPUT", help="the output directory to write")
    parser.add_argument(
        "--columns",
        metavar="A,B,...",
        help="comma-separated columns to hash, in this order (default: every column, as record_hash(*))",
    )
    parser.add_argument("--exclude", metavar="A,B,...", help="hash every column but these")
    parser.add_argument(
        "--key",
        metavar="A,B,...",
        help="also add record_key of these business-key columns (see docs/KEYS.md)",
    )
    add_key_options(parser)
    add_output(parser, "OUTPUT")
    parser.add_argument(
        "--hex",
        action="store_true",
        help="write the hashes as 32-character upper-case hex strings, as SQL hex(), instead of 16 bytes "
        "(required for CSV output)",
    )
    parser.add_argument(
        "--column-name", default="record_hash", help="name of the hash column (default: %(default)s)"
    )
    parser.add_argument(
        "--key-column-name", default="record_key", help="name of the --key column (default: %(default)s)"
    )
    add_algorithm(parser)
    add_engine(parser)
    parser.set_defaults(run=_run_hash)


def _run_hash(args: argparse.Namespace) -> Outcome:
    """``hashexpr hash``: read, add the hash column (and the key column), write, and sum up."""
    # Everything that can be checked without Spark is, so that a typo costs no JVM start.
    src = source(args, args.input, args.table)
    out_fmt = hformats.output_format(args.out, args.out_format)
    if not args.hex and not hformats.holds_binary(out_fmt):
        raise ValueError(f"{out_fmt.upper()} cannot hold the binary hash: add --hex to write it as hex text")
    requested = parse_columns(args.columns, "--columns")
    excluded = parse_columns(args.exclude, "--exclude")
    if requested and excluded:
        raise ValueError("--columns and --exclude both choose the columns: pass one of them")
    key = parse_columns(args.key, "--key")
    key_options = key_options_of(args)
    if args.key_options is not None and not key:
        raise ValueError("--key-options are the options of the --key column: add --key")
    new_columns = [args.column_name] + ([args.key_column_name] if key else [])
    if len({n.lower() for n in new_columns}) < len(new_columns):
        raise ValueError("--column-name and --key-column-name are the same: name them differently")
    args.mode = check_output(args, out_fmt, [src])
    hashing = hashing_of(args)
    files = arrow_paths(args, src, out_fmt)
    if files is not None:
        from hashexpr.cli.arrow import Ineligible

        try:
            return _run_hash_arrow(
                args, src, files, requested, excluded, key, new_columns, hashing, key_options
            )
        except Ineligible as why:
            fall_back(args, why)

    with session(args, [src.fmt, out_fmt]) as spark:
        df = src.read(spark)
        exact = hnames.case_sensitive(spark)
        columns = chosen_columns(df.columns, requested, excluded, exact)
        key_columns = resolve_columns(df.columns, key, case_sensitive=exact) if key else []
        # Spark matches names ignoring case, so `Record_Hash` in the input would clash too.
        for name in new_columns:
            if name.lower() in {c.lower() for c in df.columns}:
                option = "--column-name" if name == args.column_name else "--key-column-name"
                raise ValueError(
                    f"column {name!r} already exists in the input: name it otherwise with {option}"
                )
        added = []
        if key_columns:
            keyed = hx.record_key(*map(hnames.quote, key_columns), **key_options.as_kwargs(), **hashing)
            added.append(_hex_if(keyed, args.hex).alias(args.key_column_name))
        row_hash = hx.record_hash(*_hash_args(columns, requested or excluded), **hashing)
        added.append(_hex_if(row_hash, args.hex).alias(args.column_name))
        hashed = df.select("*", *added)
        houtputs.write(hashed, args.out, out_fmt, args.mode)
        counts = _count_distinct(houtputs.read(spark, args.out, out_fmt, hashed.schema), new_columns)
        time_zone = time_zone_of(spark, [src])
    outcome = _hash_outcome(
        args, src, out_fmt, columns, list(df.columns), key_columns, hashing, counts, time_zone
    )
    return ran_on(outcome, SPARK)


def _run_hash_arrow(
    args: argparse.Namespace,
    src: hinputs.Source,
    files: Files,
    requested: list[str],
    excluded: list[str],
    key: list[str],
    new_columns: list[str],
    hashing: dict[str, Any],
    key_options: KeyOptions,
) -> Outcome:
    """``hashexpr hash`` by the Arrow engine: the same output and summary, no JVM."""
    from hashexpr.cli import arrow as cli_arrow

    available = files.schema.names
    columns = chosen_columns(available, requested, excluded)
    key_columns = resolve_columns(available, key) if key else []
    for name in new_columns:
        if name.lower() in {c.lower() for c in available}:
            option = "--column-name" if name == args.column_name else "--key-column-name"
            raise ValueError(f"column {name!r} already exists in the input: name it otherwise with {option}")
    written = cli_arrow.write_hashed(
        files,
        columns,
        key_columns,
        (args.column_name, args.key_column_name),
        args.hex,
        arrow_hashing(args, hashing),
        args.out,
        args.mode,
        key_options,
    )
    counts = {"rows": written["rows"], **{c: cli_arrow.distinct(written[c]) for c in new_columns}}
    outcome = _hash_outcome(args, src, "parquet", columns, available, key_columns, hashing, counts, None)
    return ran_on(outcome, ARROW)


def _hash_outcome(
    args: argparse.Namespace,
    src: hinputs.Source,
    out_fmt: str,
    columns: list[str],
    available: list[str],
    key_columns: list[str],
    hashing: dict[str, Any],
    counts: dict[str, int],
    time_zone: str | None,
) -> Outcome:
    rows = counts["rows"]
    distinct = counts[args.column_name]
    hash_type = "STRING (hex)" if args.hex else ("BINARY(16)" if not hashing else "BINARY(32)")
    summary = [
        ("input", src.label()),
        ("rows read", f"{rows:,}"),
        ("columns hashed", f"{len(columns)} of {len(available)}: {preview(columns)}"),
        ("output", f"{args.out} ({out_fmt}), column {args.column_name} {hash_type}"),
        ("distinct hashes", f"{distinct:,} of {rows:,} rows ({count(rows - distinct, 'duplicate')})"),
    ]
    report: dict[str, Any] = {
        "input": src.as_dict(),
        "output": {"path": args.out, "format": out_fmt},
        "rows": rows,
        "columns_hashed": columns,
        "hash_column": args.column_name,
        "distinct_hashes": distinct,
    }
    if key_columns:
        distinct_keys = counts[args.key_column_name]
        summary.append(
            (
                "key column",
                f"{args.key_column_name} of {', '.join(key_columns)}: {distinct_keys:,} distinct keys",
            )
        )
        report.update(key_columns=key_columns, key_column=args.key_column_name, distinct_keys=distinct_keys)
    if time_zone:
        summary.insert(1, ("time zone", time_zone))
        report["time_zone"] = time_zone
    return Outcome(summary=summary, report=report)


def _hash_args(columns: Sequence[str], chosen: bool) -> list[str]:
    """``*`` for every column (as ``record_hash(*)`` in SQL), else the columns by their quoted names."""
    return list(map(hnames.quote, columns)) if chosen else ["*"]


def _hex_if(column: Column, as_hex: bool) -> Column:
    from pyspark.sql import functions as F

    return F.hex(column) if as_hex else column


def _count_distinct(written: DataFrame, columns: Sequence[str]) -> dict[str, int]:
    """The rows of the written output, and the distinct values of each of ``columns`` in it."""
    # Reading back a few columns of the output is cheaper than hashing the input a second time.
    from pyspark.sql import functions as F

    aggregates = [F.count(F.lit(1)).alias("rows")]
    aggregates += [F.count_distinct(hnames.column(c)).alias(f"d{i}") for i, c in enumerate(columns)]
    row = written.agg(*aggregates).first()
    return {"rows": int(row["rows"]), **{c: int(row[f"d{i}"]) for i, c in enumerate(columns)}}
