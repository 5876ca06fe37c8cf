"""``hashexpr diff``: two snapshots compared by key; the counts per change type, and with ``--out`` the
differences themselves."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import hashexpr as hx
from hashexpr import names as hnames
from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli.grammar import (
    add_algorithm,
    add_output,
    check_output,
    hashing_of,
    parse_columns,
    resolve_columns,
    session,
    source,
    time_zone_of,
)
from hashexpr.cli.outcome import EXIT_FINDINGS, EXIT_OK, Outcome
from hashexpr.cli.session import PROG
from hashexpr.errors import SchemaMismatchError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def add_diff(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "diff",
        parents=[common],
        help="compare two snapshots of a table by key",
        description=(
            "Compare OLD and NEW by key: count inserts, updates, deletes, duplicate keys and NULL keys, and with "
            "--out write every difference (key, change, changed columns, old and new values). OLD and NEW are "
            "paths, or catalog tables with --old-table/--new-table; NEW may be left out to compare two "
            "versions of one Delta table. See docs/DIFF.md."
        ),
        epilog=(
            f"Examples: {PROG} diff flights_2024-01.parquet flights_2024-02.parquet --key carrier,flight,day\n"
            f"          {PROG} diff warehouse/flights --old-version 3 --key carrier,flight,day --exit-code"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", metavar="OLD [NEW]", nargs="*", help="the earlier and the later snapshot")
    parser.add_argument("--old-table", metavar="NAME", help="a catalog table as the earlier snapshot")
    parser.add_argument("--new-table", metavar="NAME", help="a catalog table as the later snapshot")
    for side in ("old", "new"):
        parser.add_argument(
            f"--{side}-version", type=int, metavar="N", help=f"a Delta {side.upper()} as of this version"
        )
        parser.add_argument(
            f"--{side}-timestamp", metavar="TIME", help=f"a Delta {side.upper()} as of this time"
        )
    parser.add_argument("--key", required=True, metavar="A,B,...", help="comma-separated key columns")
    parser.add_argument(
        "--columns", metavar="A,B,...", help="columns to compare (default: every non-key column)"
    )
    parser.add_argument("--exclude", metavar="A,B,...", help="compare every non-key column but these")
    parser.add_argument(
        "--format",
        metavar="FORMAT",
        help=f"the inputs' format: {', '.join(hinputs.INPUT_FORMATS)} (default: from each input)",
    )
    parser.add_argument(
        "--out", metavar="OUTPUT", help="write the differences here (Parquet unless --out-format)"
    )
    add_output(parser, "OUTPUT", _DIFF_OUTPUT_FORMATS)
    parser.add_argument(
        "--exit-code", action="store_true", help="exit with status 1 when there are differences, 0 when none"
    )
    parser.add_argument(
        "--no-changed-columns",
        action="store_true",
        help="with --out, write each difference's key, change and side only: one pass over the hashes, no "
        "values read (without --out the counts never need them)",
    )
    add_algorithm(parser)
    parser.set_defaults(run=_run_diff)


# The differences have arrays and structs (changed_columns, old, new), which CSV cannot hold.
_DIFF_OUTPUT_FORMATS = tuple(f for f in hformats.OUTPUT_FORMATS if hformats.holds_binary(f))


def _diff_sources(args: argparse.Namespace) -> tuple[hinputs.Source, hinputs.Source]:
    """OLD and NEW: paths in order, unless a side is a catalog table; NEW defaults to OLD under time travel."""
    paths = list(args.paths)
    sides = {}
    for side in ("old", "new"):
        table = getattr(args, f"{side}_table")
        path = None if table is not None or not paths else paths.pop(0)
        sides[side] = (path, table)
    if paths:
        raise ValueError(
            f"too many inputs: {' '.join(args.paths)} (OLD and NEW, or tables with --old-table/--new-table)"
        )
    time_travel = (
        args.new_version is not None or args.new_timestamp is not None or args.old_version is not None
    )
    if sides["new"] == (None, None) and time_travel:
        sides["new"] = sides["old"]
    for side, (path, table) in sides.items():
        if path is None and table is None:
            raise ValueError(f"name {side.upper()}: a path, or a catalog table with --{side}-table")
    old = source(args, *sides["old"], prefix="old_")
    new = source(args, *sides["new"], prefix="new_")
    if old == new:
        raise ValueError(
            "OLD and NEW are the same input: name two inputs, or two versions with --old-version"
        )
    return old, new


def _run_diff(args: argparse.Namespace) -> Outcome:
    """``hashexpr diff``: the counts per change type; the differences themselves with ``--out``."""
    old_src, new_src = _diff_sources(args)
    key = parse_columns(args.key, "--key")
    requested = parse_columns(args.columns, "--columns")
    excluded = parse_columns(args.exclude, "--exclude")
    if requested and excluded:
        raise ValueError("--columns and --exclude both choose the columns: pass one of them")
    if args.no_changed_columns and not args.out:
        raise ValueError(
            "--no-changed-columns chooses what --out writes: add --out (the counts never read values)"
        )
    out_fmt = None
    if args.out:
        out_fmt = hformats.output_format(args.out, args.out_format)
        args.mode = check_output(args, out_fmt, [old_src, new_src])
        if out_fmt not in _DIFF_OUTPUT_FORMATS and not args.no_changed_columns:
            raise ValueError(
                f"{out_fmt.upper()} cannot hold the differences (changed_columns, old and new are nested): "
                f"write {', '.join(_DIFF_OUTPUT_FORMATS)}"
            )
    hashing = hashing_of(args)

    with session(args, [old_src.fmt, new_src.fmt] + ([out_fmt] if out_fmt else [])) as spark:
        old = old_src.read(spark)
        new = new_src.read(spark)
        exact = hnames.case_sensitive(spark)
        keys = resolve_columns(old.columns, key, "OLD", exact)
        resolve_columns(new.columns, key, "NEW", exact)
        columns = _diff_columns(old, new, keys, requested, excluded, exact)
        # The counts need no values: one pass over the hashes finds every change type.
        details = bool(args.out) and not args.no_changed_columns
        differences = hx.diff(
            old, new, keys, columns=columns, include_values=details, changed_columns=details, **hashing
        )
        if args.out:
            houtputs.write(differences, args.out, out_fmt, args.mode)
            counts = hx.summarize(houtputs.read(spark, args.out, out_fmt, differences.schema))
        else:
            counts = hx.summarize(differences)
        time_zone = time_zone_of(spark, [old_src, new_src])
    found = sum(counts.values())
    summary = [("old", old_src.label()), ("new", new_src.label())]
    summary += [(change, f"{n:,}") for change, n in counts.items()]
    report: dict[str, Any] = {
        "old": old_src.as_dict(),
        "new": new_src.as_dict(),
        "key": keys,
        "counts": counts,
        "differences": found,
    }
    if args.out:
        summary.append(("output", f"{args.out} ({out_fmt})"))
        report["output"] = {"path": args.out, "format": out_fmt}
    if time_zone:
        summary.append(("time zone", time_zone))
        report["time_zone"] = time_zone
    status = EXIT_FINDINGS if args.exit_code and found else EXIT_OK
    return Outcome(status=status, summary=summary, report=report)


def _diff_columns(
    old: DataFrame,
    new: DataFrame,
    keys: list[str],
    requested: list[str],
    excluded: list[str],
    case_sensitive: bool = False,
) -> list[str] | None:
    """The columns to compare as the user chose them; ``None`` leaves the choice (and its checks) to hx.diff."""
    if requested:
        return resolve_columns(old.columns, requested, "OLD", case_sensitive)
    if not excluded:
        return None
    dropped = {c.lower() for c in resolve_columns(old.columns, excluded, "OLD", case_sensitive)}
    key_names = {k.lower() for k in keys}
    remaining_old = [c for c in old.columns if c.lower() not in dropped | key_names]
    remaining_new = {c.lower() for c in new.columns} - dropped - key_names
    only_old = [c for c in remaining_old if c.lower() not in remaining_new]
    only_new = sorted(remaining_new - {c.lower() for c in remaining_old})
    if only_old or only_new:
        problems = ([f"only in old: {only_old}"] if only_old else []) + (
            [f"only in new: {only_new}"] if only_new else []
        )
        raise SchemaMismatchError(problems, "")
    if not remaining_old:
        raise ValueError("--exclude leaves no column to compare")
    return remaining_old
