"""``hashexpr fingerprint``: the order-independent fingerprint of a data file or table, or of each group of
it, by Spark or by the Arrow engine."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import hashexpr as hx
from hashexpr import names as hnames
from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli.commands.fingerprint_state import add_state_argument, check_state_run, run_state
from hashexpr.cli.grammar import (
    add_algorithm,
    add_engine,
    add_input,
    add_output,
    arrow_hashing,
    arrow_paths,
    check_output,
    chosen_columns,
    fall_back,
    hashing_of,
    parse_columns,
    resolve_columns,
    session,
    source,
    time_zone_of,
)
from hashexpr.cli.outcome import EXIT_FINDINGS, Outcome
from hashexpr.cli.report import ARROW, SPARK, json_value, preview, ran_on, text
from hashexpr.cli.session import PROG
from hashexpr.options import FINGERPRINT_COLUMN, check_fingerprint_options, fingerprint_prefix

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hashexpr.cli.arrow import Files

_FINGERPRINT = re.compile(r"hx1(-lthash16(-hmac)?)?:[0-9a-f]{64}", re.IGNORECASE)


def add_fingerprint(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "fingerprint",
        parents=[common],
        help="print the order-independent fingerprint of a data file or table",
        description=(
            "Print dataset_fingerprint of INPUT: one value that does not depend on row order or partitioning "
            "and changes when a value, a row, a duplicate, a column name or a type changes. With --by, one "
            "fingerprint per group instead."
        ),
        epilog=f"Example: {PROG} fingerprint flights.parquet --expect hx1:...",
    )
    add_input(parser)
    parser.add_argument("--exclude", metavar="A,B,...", help="fingerprint every column but these")
    parser.add_argument("--by", metavar="A,B,...", help="comma-separated grouping columns")
    parser.add_argument(
        "--limit",
        type=int,
        default=100,
        help="with --by, print at most this many groups (default: %(default)s)",
    )
    parser.add_argument(
        "--out", metavar="OUTPUT", help="with --by, write every group's fingerprint here instead of printing"
    )
    add_output(parser, "OUTPUT")
    parser.add_argument(
        "--expect", metavar="hx1:...", help="exit with status 1 unless the fingerprint is this one"
    )
    add_algorithm(
        parser,
        ("murmur3", "lthash16"),
        "murmur3 (default: the sum of the rows' hashes, against accidents) or lthash16 (LtHash16 of SHA-256 row "
        "hashes: no one can forge it; slower)",
        keyed="lthash16",
    )
    add_engine(parser)
    add_state_argument(parser)
    parser.set_defaults(run=_run_fingerprint)


def _run_fingerprint(args: argparse.Namespace) -> Outcome:
    """``hashexpr fingerprint``: the fingerprint of INPUT, or of each group of it."""
    src = source(args, args.input, args.table)
    by = parse_columns(args.by, "--by")
    excluded = parse_columns(args.exclude, "--exclude")
    if args.limit < 0:
        raise ValueError(f"--limit must be 0 or more, not {args.limit}")
    hashing = hashing_of(args, check_fingerprint_options)
    if args.expect is not None:
        if by:
            raise ValueError("--expect checks the fingerprint of the whole input: it cannot go with --by")
        if not _FINGERPRINT.fullmatch(args.expect):
            raise ValueError(
                f"--expect takes a fingerprint as printed, hx1: and 64 hex digits; got {args.expect!r}"
            )
        prefix = fingerprint_prefix(args.algorithm, args.secret)
        given = args.expect[: args.expect.index(":") + 1].lower()
        if given != prefix:
            needs = {"hx1:": "no --algorithm", "hx1-lthash16:": "--algorithm lthash16 without --secret"}
            raise ValueError(
                f"--expect is a fingerprint starting {given!r}, which this command computes with "
                f"{needs.get(given, '--algorithm lthash16 --secret NAME')}; it computes one starting {prefix!r}"
            )
    if args.state is not None:
        since = check_state_run(args, src, by)
        return run_state(args, src, since, excluded, hashing, _fingerprint_outcome)
    if args.out and not by:
        raise ValueError("--out writes one fingerprint per group: add --by")
    out_fmt = None
    if args.out:
        out_fmt = hformats.output_format(args.out, args.out_format)
        args.mode = check_output(args, out_fmt, [src])
    files = arrow_paths(args, src, out_fmt)
    if files is not None:
        from hashexpr.cli.arrow import Ineligible

        try:
            return _run_fingerprint_arrow(args, src, files, by, excluded, out_fmt, hashing)
        except Ineligible as why:
            fall_back(args, why)

    with session(args, [src.fmt] + ([out_fmt] if out_fmt else [])) as spark:
        df = src.read(spark)
        exact = hnames.case_sensitive(spark)
        columns = chosen_columns(df.columns, [], excluded, exact)
        if excluded:
            df = df.select(*map(hnames.column, columns))
        report: dict[str, Any] = {"input": src.as_dict(), "columns": columns}
        if not by:
            outcome = _whole_fingerprint(df, args.expect, hashing)
        else:
            groups = resolve_columns(df.columns, by, case_sensitive=exact)
            outcome = _group_fingerprints(spark, df, groups, args, out_fmt, hashing)
        time_zone = time_zone_of(spark, [src])
    outcome.summary = [("input", src.label()), *outcome.summary]
    if time_zone:
        outcome.summary.append(("time zone", time_zone))
        report["time_zone"] = time_zone
    outcome.report = {**report, **outcome.report}
    outcome.summary_to_stderr = True
    return ran_on(outcome, SPARK)


def _run_fingerprint_arrow(
    args: argparse.Namespace,
    src: hinputs.Source,
    files: Files,
    by: list[str],
    excluded: list[str],
    out_fmt: str | None,
    hashing: dict[str, Any],
) -> Outcome:
    """``hashexpr fingerprint`` by the Arrow engine: the same fingerprints, no JVM."""
    from hashexpr.cli import arrow as cli_arrow

    columns = chosen_columns(files.schema.names, [], excluded)
    keywords = arrow_hashing(args, hashing)
    algorithm, key = keywords.get("algorithm", "murmur3"), keywords.get("hmac_key")
    if not by:
        rows, fingerprint = cli_arrow.fingerprint(files, columns, algorithm, key)
        outcome = _fingerprint_outcome(rows, fingerprint, columns, args.expect)
    else:
        groups = resolve_columns(columns, by)
        table = cli_arrow.group_fingerprints(files, columns, groups, algorithm, key)
        if args.out:
            cli_arrow.write_parquet(table, args.out, args.mode)
            outcome = Outcome(
                summary=[
                    ("groups", f"{table.num_rows:,} by {', '.join(groups)}"),
                    ("output", f"{args.out} ({out_fmt})"),
                ],
                report={
                    "by": groups,
                    "groups": table.num_rows,
                    "output": {"path": args.out, "format": out_fmt},
                },
            )
        else:
            shown = cli_arrow.spark_rows(table.slice(0, args.limit))
            outcome = _groups_outcome(groups, shown, table.num_rows)
    outcome.summary = [("input", src.label()), *outcome.summary]
    outcome.report = {"input": src.as_dict(), "columns": columns, **outcome.report}
    outcome.summary_to_stderr = True
    return ran_on(outcome, ARROW)


def _whole_fingerprint(df: DataFrame, expect: str | None, hashing: dict[str, Any]) -> Outcome:
    # One job for both: the count and the fingerprint are two aggregates of the same scan.
    from pyspark.sql import functions as F

    from hashexpr.spark.fingerprint import _fingerprint_column

    fingerprint_of_all = _fingerprint_column(["*"], **hashing)
    row = df.agg(F.count(F.lit(1)).alias("rows"), fingerprint_of_all.alias("fp")).first()
    return _fingerprint_outcome(int(row["rows"]), row["fp"], df.columns, expect)


def _fingerprint_outcome(rows: int, fingerprint: str, columns: Sequence[str], expect: str | None) -> Outcome:
    outcome = Outcome(
        lines=[fingerprint],
        summary=[("rows", f"{rows:,}"), ("columns", f"{len(columns)}: {preview(columns)}")],
        report={"rows": rows, "fingerprint": fingerprint},
    )
    if expect is not None:
        matches = expect.lower() == fingerprint.lower()
        outcome.report.update(expected=expect, matches=matches)
        if not matches:
            outcome.status = EXIT_FINDINGS
            outcome.message = f"the fingerprint is not the expected one: {fingerprint}, expected {expect}"
    return outcome


def _group_fingerprints(
    spark: SparkSession,
    df: DataFrame,
    groups: list[str],
    args: argparse.Namespace,
    out_fmt: str | None,
    hashing: dict[str, Any],
) -> Outcome:
    fingerprints = hx.fingerprints_by(df, *groups, **hashing)
    if args.out:
        houtputs.write(fingerprints, args.out, out_fmt, args.mode)
        count = houtputs.read(spark, args.out, out_fmt, fingerprints.schema).count()
        return Outcome(
            summary=[("groups", f"{count:,} by {', '.join(groups)}"), ("output", f"{args.out} ({out_fmt})")],
            report={"by": groups, "groups": count, "output": {"path": args.out, "format": out_fmt}},
        )
    # Only the groups shown come to the driver.
    shown = (
        fingerprints.orderBy(*map(hnames.column, groups)).limit(args.limit).collect() if args.limit else []
    )
    return _groups_outcome(groups, shown, fingerprints.count())


def _groups_outcome(groups: list[str], shown: Sequence[Any], count: int) -> Outcome:
    return Outcome(
        lines=["\t".join([*(text(row[g]) for g in groups), row[FINGERPRINT_COLUMN]]) for row in shown],
        summary=[
            (
                "groups",
                f"{count:,} by {', '.join(groups)}"
                + (f" ({len(shown)} shown)" if count > len(shown) else ""),
            )
        ],
        report={
            "by": groups,
            "groups": count,
            "fingerprints": [
                {"group": {g: json_value(row[g]) for g in groups}, "fingerprint": row[FINGERPRINT_COLUMN]}
                for row in shown
            ],
        },
    )
