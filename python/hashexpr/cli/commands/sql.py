"""``hashexpr sql``: SQL that computes the SHA-256 key or row hash in an engine without hashexpr's jar."""

from __future__ import annotations

import argparse
from typing import Any

from hashexpr import sql as hsql
from hashexpr.cli.outcome import Outcome
from hashexpr.cli.session import PROG
from hashexpr.sql.types import parse_type


def add_sql(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "sql",
        help="print SQL that computes the SHA-256 key or row hash in PostgreSQL, DuckDB or Spark without the jar",
        description=(
            "Print one SQL expression that computes, inside the engine, the same 32 bytes as the jar's "
            "record_key_with('algorithm=sha256; ...') (--key) or record_hash_with('algorithm=sha256', ...) "
            "(--hash) over the given columns and their Spark SQL types. Nothing runs: no Spark, no database. "
            "See docs/SQL.md."
        ),
        epilog=f"Example: {PROG} sql --dialect postgres --key customer_id:bigint,email:string --salt crm",
    )
    parser.add_argument("--dialect", required=True, choices=sorted(hsql.DIALECTS), help="the engine")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--key",
        metavar="COL:TYPE,...",
        help="the business key: column names with Spark SQL types (bigint, string, decimal(10,2), ...)",
    )
    what.add_argument("--hash", metavar="COL:TYPE,...", help="the row hash of these columns, in this order")
    options = parser.add_argument_group("key options (docs/KEYS.md), with --key only")
    options.add_argument("--salt", help="the salt")
    options.add_argument("--trim", action="store_true", help="remove spaces (U+0020) around string key parts")
    options.add_argument("--case", choices=("upper", "lower"), help="map ASCII string key parts to one case")
    options.add_argument(
        "--empty-as-null", action="store_true", help="an empty string key part counts as NULL"
    )
    options.add_argument(
        "--null-key", choices=("hash", "null", "error"), help="what a key whose parts are all NULL gives"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of text")
    parser.set_defaults(run=_run_sql)


def _run_sql(args: argparse.Namespace) -> Outcome:
    """``hashexpr sql``: the expression, on one line."""
    key_options = {
        "salt": args.salt,
        "trim": args.trim or None,
        "case": args.case,
        "empty_as_null": args.empty_as_null or None,
        "null_key": args.null_key,
    }
    given = {name: value for name, value in key_options.items() if value is not None}
    if args.hash is not None:
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise ValueError(f"{flags}: key options apply to --key, not to --hash")
        columns = parse_column_types(args.hash, "--hash")
        text = hsql.record_hash(columns, dialect=args.dialect)
    else:
        columns = parse_column_types(args.key, "--key")
        text = hsql.record_key(columns, dialect=args.dialect, **given)
    report = {
        "dialect": args.dialect,
        "function": "record_hash" if args.hash is not None else "record_key",
        "columns": [[name.name, dtype] for name, dtype in columns],
        "sql": text,
    }
    return Outcome(lines=[text], report=report)


def parse_column_types(text: str, option: str) -> list[tuple[Any, str]]:
    """The ``name:type`` items of ``--key`` / ``--hash``, split at the commas outside a type's brackets.

    Each item is split at the first colon after which a Spark SQL type follows, so that names may hold colons
    and types may hold commas and colons (``decimal(10,2)``, ``map<string,int>``, ``struct<a:int,b:string>``).
    Every name is a column name, quoted for the dialect.

    Examples
    --------
    >>> [(c.name, t) for c, t in parse_column_types("id:bigint, amount:decimal(10,2),m:map<string,int>", "--key")]
    [('id', 'bigint'), ('amount', 'decimal(10,2)'), ('m', 'map<string,int>')]
    >>> [(c.name, t) for c, t in parse_column_types("a:b:struct<x:int,y:string>", "--key")]
    [('a:b', 'struct<x:int,y:string>')]
    """
    items, depth, current = [], 0, ""
    for char in text:
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    columns = []
    for item in items:
        item = item.strip()
        for position, char in enumerate(item):
            if char != ":" or position == 0:
                continue
            try:
                parse_type(item[position + 1 :])
            except ValueError:
                continue
            columns.append((hsql.column(item[:position]), item[position + 1 :].strip()))
            break
        else:
            raise ValueError(
                f"{option}: {item!r} is not NAME:TYPE with a Spark SQL type (bigint, string, decimal(10,2), ...)"
            )
    return columns
