"""``hashexpr collisions``: hash keys shared by different business keys, and business keys stored under
different hash keys."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import hashexpr as hx
from hashexpr import names as hnames
from hashexpr.cli import inputs as hinputs
from hashexpr.cli.grammar import (
    add_algorithm,
    add_engine,
    add_input,
    add_key_options,
    arrow_hashing,
    arrow_paths,
    fall_back,
    hashing_of,
    key_options_of,
    parse_columns,
    resolve_columns,
    session,
    source,
)
from hashexpr.cli.outcome import EXIT_FINDINGS, EXIT_OK, Outcome
from hashexpr.cli.report import ARROW, SPARK, json_value, ran_on, text
from hashexpr.cli.session import PROG
from hashexpr.options import KeyOptions


def add_collisions(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "collisions",
        parents=[common],
        help="find hash-key collisions and inconsistent hash keys",
        description=(
            "Find hash keys shared by different business keys (collisions) and business keys stored under "
            "different hash keys (inconsistent hashing). The hash key is record_key of --key, or the stored "
            "column --hash-col (binary, or text such as hex). Exit status 1 when there is any. See docs/KEYS.md."
        ),
        epilog=f"Example: {PROG} collisions hub_customer.parquet --key customer_id --hash-col hk_customer",
    )
    add_input(parser)
    parser.add_argument(
        "--key", required=True, metavar="A,B,...", help="comma-separated business-key columns"
    )
    parser.add_argument("--hash-col", metavar="COLUMN", help="a stored hash-key column (default: compute it)")
    add_key_options(parser)
    parser.add_argument(
        "--limit", type=int, default=20, help="print at most this many (default: %(default)s)"
    )
    add_algorithm(parser)
    add_engine(parser)
    parser.set_defaults(run=_run_collisions)


def _run_collisions(args: argparse.Namespace) -> Outcome:
    """``hashexpr collisions``: each problem found; exit status 1 when there is any."""
    src = source(args, args.input, args.table)
    key = parse_columns(args.key, "--key")
    if args.limit < 0:
        raise ValueError(f"--limit must be 0 or more, not {args.limit}")
    hashing = hashing_of(args)
    key_options = key_options_of(args)
    if hashing and args.hash_col:
        raise ValueError(
            "--algorithm applies to a computed hash key; a stored --hash-col is checked as it is"
        )
    if args.hash_col and args.engine == "arrow":
        raise ValueError(
            "--engine arrow computes hash keys; a stored --hash-col is checked by --engine spark"
        )
    files = None if args.hash_col else arrow_paths(args, src)
    if files is not None:
        from hashexpr.cli import arrow as cli_arrow

        keys = resolve_columns(files.schema.names, key)
        try:
            count, problems = cli_arrow.collisions(files, keys, arrow_hashing(args, hashing), key_options)
        except cli_arrow.Ineligible as why:
            fall_back(args, why)
        else:
            return ran_on(_collisions_outcome(src, keys, problems[: args.limit], count), ARROW)
    with session(args, [src.fmt]) as spark:
        df = src.read(spark)
        exact = hnames.case_sensitive(spark)
        keys = resolve_columns(df.columns, key, case_sensitive=exact)
        hash_col = (
            resolve_columns(df.columns, [args.hash_col], case_sensitive=exact)[0] if args.hash_col else None
        )
        problems = hx.find_collisions(df, keys, hash_col, **_collision_options(key_options, args), **hashing)
        # Only the problems shown come to the driver.
        shown = problems.limit(args.limit).collect() if args.limit else []
        count = problems.count() if len(shown) == args.limit else len(shown)
    return ran_on(_collisions_outcome(src, keys, shown, count), SPARK)


def _collisions_outcome(src: hinputs.Source, keys: list[str], shown: Sequence[Any], count: int) -> Outcome:
    lines = []
    for row in shown:
        business = ", ".join(str(tuple(json_value(v) for v in k)) for k in row["business_keys"])
        hashes = ", ".join(text(h) for h in row["hash_keys"])
        lines.append(f"{row['kind']}\thash keys {hashes}\tbusiness keys {business}")
    return Outcome(
        status=EXIT_FINDINGS if count else EXIT_OK,
        lines=lines,
        summary=[
            ("input", src.label()),
            ("problems", f"{count:,}" + (f" ({len(shown)} shown)" if count > len(shown) else "")),
        ],
        summary_to_stderr=True,
        report={
            "input": src.as_dict(),
            "key": keys,
            "problems": count,
            "shown": [
                {
                    "kind": row["kind"],
                    "hash_keys": [text(h) for h in row["hash_keys"]],
                    "business_keys": [[json_value(v) for v in k] for k in row["business_keys"]],
                }
                for row in shown
            ],
        },
    )


def _collision_options(options: KeyOptions, args: argparse.Namespace) -> dict[str, Any]:
    """find_collisions' keywords for --key-options: normalisation only when given, so that a --hash-col
    written by with_metadata lends its own."""
    kwargs: dict[str, Any] = {"salt": options.salt or None, "null_key": options.null_key}
    if args.key_options is not None:
        kwargs.update(options.normalizing)
    return kwargs
