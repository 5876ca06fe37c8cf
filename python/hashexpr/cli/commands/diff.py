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
    add_engine,
    add_output,
    arrow_hashing,
    arrow_paths,
    check_output,
    fall_back,
    hashing_of,
    parse_columns,
    resolve_columns,
    session,
    source,
    time_zone_of,
)
from hashexpr.cli.outcome import EXIT_FINDINGS, EXIT_OK, Outcome
from hashexpr.cli.report import ARROW, SPARK, ran_on
from hashexpr.cli.session import PROG
from hashexpr.errors import SchemaMismatchError

if TYPE_CHECKING:
    from hashexpr.cli.arrow import Files


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
    add_engine(parser)
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
    files = _arrow_files(args, old_src, new_src, out_fmt)
    if files is not None:
        from hashexpr.cli.arrow import Ineligible

        try:
            return _run_diff_arrow(
                args, (old_src, new_src), files, key, requested, excluded, out_fmt, hashing
            )
        except Ineligible as why:
            fall_back(args, why)

    with session(args, [old_src.fmt, new_src.fmt] + ([out_fmt] if out_fmt else [])) as spark:
        old = old_src.read(spark)
        new = new_src.read(spark)
        exact = hnames.case_sensitive(spark)
        keys = resolve_columns(old.columns, key, "OLD", exact)
        resolve_columns(new.columns, key, "NEW", exact)
        columns = _diff_columns(old.columns, new.columns, keys, requested, excluded, exact)
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
    return ran_on(_diff_outcome(args, (old_src, new_src), keys, counts, out_fmt, time_zone), SPARK)


def _diff_outcome(
    args: argparse.Namespace,
    sources: tuple[hinputs.Source, hinputs.Source],
    keys: list[str],
    counts: dict[str, int],
    out_fmt: str | None,
    time_zone: str | None = None,
) -> Outcome:
    found = sum(counts.values())
    summary = [("old", sources[0].label()), ("new", sources[1].label())]
    summary += [(change, f"{n:,}") for change, n in counts.items()]
    report: dict[str, Any] = {
        "old": sources[0].as_dict(),
        "new": sources[1].as_dict(),
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


def _arrow_files(
    args: argparse.Namespace, old: hinputs.Source, new: hinputs.Source, out_fmt: str | None
) -> tuple[Files, Files] | None:
    """The Parquet files of both sides when the Arrow engine runs this diff, else ``None``."""
    old_files = arrow_paths(args, old, out_fmt)
    new_files = arrow_paths(args, new, out_fmt) if old_files is not None else None
    return None if old_files is None or new_files is None else (old_files, new_files)


def _run_diff_arrow(
    args: argparse.Namespace,
    sources: tuple[hinputs.Source, hinputs.Source],
    files: tuple[Files, Files],
    key: list[str],
    requested: list[str],
    excluded: list[str],
    out_fmt: str | None,
    hashing: dict[str, Any],
) -> Outcome:
    """``hashexpr diff`` by the Arrow engine (:mod:`hashexpr.arrow.diff`): the same counts, rows and messages,
    no JVM."""
    from hashexpr.arrow import diff as arrow_diff
    from hashexpr.cli import arrow as cli_arrow

    for side, found in zip(("OLD", "NEW"), files):
        stored = cli_arrow.metadata_columns(found)
        if stored:
            raise cli_arrow.Ineligible(
                f"{side} has columns that with_metadata wrote ({', '.join(stored)}), whose stored hashes diff "
                "reads in Spark"
            )
    names = [f.schema.names for f in files]
    keys = resolve_columns(names[0], key, "OLD")
    resolve_columns(names[1], key, "NEW")
    columns = _diff_columns(names[0], names[1], keys, requested, excluded)
    options = {"columns": columns, **arrow_hashing(args, hashing)}
    # Each side as hashexpr.arrow reads its path: the diff reads the key and compared columns alone.
    snapshots = (files[0].data, files[1].data)
    if args.out:
        for found in files:
            # The differences hold the key and compared values, which Spark writes with their types.
            cli_arrow.check_declarations(found, found.schema.names)
    if not args.out:
        every = arrow_diff.diff_counts(*snapshots, keys, **options)
        return ran_on(_diff_outcome(args, sources, keys, {t: every[t] for t in _COUNTED}, out_fmt), ARROW)
    details = not args.no_changed_columns
    try:
        differences = arrow_diff.diff(
            *snapshots, keys, include_values=details, changed_columns=details, **options
        )
    except arrow_diff.Unsupported as why:
        raise cli_arrow.Ineligible(str(why)) from None
    for field in differences.schema:
        if not cli_arrow.spark_writes_as_read(field.type):
            raise cli_arrow.Ineligible(
                f"Spark would write the column {field.name!r} ({field.type}) as another type"
            )
    cli_arrow.write_parquet(differences, args.out, args.mode)
    written = {e["values"]: e["counts"] for e in differences["change"].value_counts().to_pylist()}
    counts = {t: written.get(t, 0) for t in _COUNTED}
    return ran_on(_diff_outcome(args, sources, keys, counts, out_fmt), ARROW)


# The counts the command shows, as hx.summarize gives them: the change types of the differences.
_COUNTED = ("insert", "update", "delete", "duplicate_key", "null_key")


def _diff_columns(
    old: list[str],
    new: list[str],
    keys: list[str],
    requested: list[str],
    excluded: list[str],
    case_sensitive: bool = False,
) -> list[str] | None:
    """The columns to compare as the user chose them, from OLD's and NEW's columns; ``None`` leaves the choice
    (and its checks) to hx.diff."""
    if requested:
        return resolve_columns(old, requested, "OLD", case_sensitive)
    if not excluded:
        return None
    dropped = {c.lower() for c in resolve_columns(old, excluded, "OLD", case_sensitive)}
    key_names = {k.lower() for k in keys}
    remaining_old = [c for c in old if c.lower() not in dropped | key_names]
    remaining_new = {c.lower() for c in new} - dropped - key_names
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
