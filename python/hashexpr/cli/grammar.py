"""The options that several commands of the ``hashexpr`` command line take, and how they are read.

Each ``add_*`` function registers a group of options on a command's parser; the functions beside it read what
was given, checking before Spark starts whatever needs no Spark, so that a typo costs no JVM start: the input
(INPUT, ``--table``, ``--format``, time travel), the output (``--out-format``, ``--mode``), the Spark session
(``--master``, ``--conf``), the hash algorithm (``--algorithm``, ``--secret``), ``--key-options``, the engine
(``--engine``) and lists of columns (``--columns``, ``--exclude``, ``--key``, ``--by``).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from hashexpr import names as hnames
from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli import session as cli_session
from hashexpr.cli.report import preview
from hashexpr.options import KeyOptions, hash_options, parse_key_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from hashexpr.cli.arrow import Files


def common_options() -> argparse.ArgumentParser:
    """The options of every subcommand that starts Spark, as a parent parser."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("Spark")
    group.add_argument(
        "--master",
        help=f"Spark master URL (default: {cli_session.DEFAULT_MASTER}, an embedded Spark using every core)",
    )
    group.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_pair,
        help="a Spark setting, e.g. --conf spark.driver.memory=4g; may be repeated",
    )
    reading = parent.add_argument_group("reading")
    reading.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_pair,
        help="an option of Spark's reader, e.g. --option mode=FAILFAST or --option multiLine=true; may be "
        "repeated",
    )
    reading.add_argument("--schema", metavar="DDL", help="read with this schema, e.g. 'id INT, name STRING'")
    output = parent.add_argument_group("output")
    output.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of text")
    output.add_argument(
        "--verbose", action="store_true", help="show Spark's warnings and the stack trace of an error"
    )
    return parent


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def add_input(parser: argparse.ArgumentParser) -> None:
    """INPUT, --table, --format and time travel, for the subcommands that read one input."""
    parser.add_argument(
        "input",
        metavar="INPUT",
        nargs="?",
        help="a file, a directory of part files, a glob, or a table's directory",
    )
    parser.add_argument("--table", metavar="NAME", help="a catalog table (db.t) instead of INPUT")
    parser.add_argument(
        "--format",
        metavar="FORMAT",
        help=f"INPUT's format: {', '.join(hinputs.INPUT_FORMATS)} (default: from INPUT)",
    )
    parser.add_argument("--version", type=int, metavar="N", help="a Delta table as of this version")
    parser.add_argument("--timestamp", metavar="TIME", help="a Delta table as of this time")


def source(args: argparse.Namespace, path: str | None, table: str | None, prefix: str = "") -> hinputs.Source:
    """The input of ``path`` or ``table`` with the reading options of ``args`` (time travel under ``prefix``)."""
    return hinputs.source(
        path,
        table=table,
        fmt=args.format,
        version=getattr(args, f"{prefix}version"),
        timestamp=getattr(args, f"{prefix}timestamp"),
        options=dict(args.option),
        schema=args.schema,
        available=hinputs.available_table_formats(dict(args.conf)),
    )


def check_output(args: argparse.Namespace, out_fmt: str, inputs: Sequence[hinputs.Source]) -> str:
    """Check OUTPUT against the inputs and its format's library; return the mode, lower-cased."""
    if out_fmt == "delta":
        hinputs.require_library(
            "delta", args.out, hinputs.available_table_formats(dict(args.conf)), writing=True
        )
    return houtputs.check_output(args.out, args.mode, [s.path for s in inputs if s.path is not None])


def session(args: argparse.Namespace, formats: Sequence[str]) -> AbstractContextManager[SparkSession]:
    if args.master is not None:
        cli_session.check_master(args.master)
    if args.session is not None:
        return cli_session.given_session(args.session, args.master, args.conf, formats, args.verbose)
    return cli_session.spark_session(
        args.master or cli_session.DEFAULT_MASTER, args.conf, formats, args.verbose
    )


def add_algorithm(
    parser: argparse.ArgumentParser,
    choices: Sequence[str] = ("murmur3", "sha256", "hmac-sha256"),
    help: str = "murmur3 (default, 16 bytes), sha256 (32 bytes, resists crafted collisions) or hmac-sha256 "
    "(32 bytes, keyed: for personal data)",
    keyed: str = "hmac-sha256",
) -> None:
    group = parser.add_argument_group("hash algorithm (docs/SECURITY.md)")
    # Words are read in any case, as in SQL options and the Python API.
    group.add_argument("--algorithm", choices=choices, default="murmur3", type=_word, help=help)
    group.add_argument(
        "--secret",
        metavar="NAME",
        help=f"with {keyed}: the key's name; the key is read from the environment variable "
        "HASHEXPR_SECRET_<NAME> (upper case, other characters as _) or a --conf spark.hashexpr.secret.<NAME>, "
        "never from the command line",
    )


def _word(text: str) -> str:
    return text.strip().lower()


def add_key_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key-options",
        metavar="OPTIONS",
        help="the key's options as record_key_with takes them, e.g. 'salt=hub; trim; case=upper' (salt, trim, "
        "case=upper|lower, empty_as_null, null_key=hash|null|error; see docs/KEYS.md)",
    )


def key_options_of(args: argparse.Namespace) -> KeyOptions:
    """The --key-options, read by the grammar of record_key_with before Spark starts."""
    if args.key_options is None:
        return KeyOptions()
    return parse_key_options(args.key_options, "--key-options")


def add_engine(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=("auto", "spark", "arrow"),
        default="auto",
        help="arrow: hashexpr.arrow, no JVM, for local Parquet files whose every type it hashes; spark: an "
        "embedded Spark; auto (default): arrow where its result is Spark's, else spark",
    )


def arrow_paths(args: argparse.Namespace, src: hinputs.Source, out_fmt: str | None = None) -> Files | None:
    """The Parquet files the Arrow engine reads for this run, or ``None`` when Spark runs it."""
    if args.engine == "spark":
        return None
    # Imported here: the Arrow engine's modules load pyarrow, which `hashexpr jar` and Spark runs do without.
    from hashexpr.cli import arrow as cli_arrow

    try:
        return cli_arrow.eligibility(args, src, out_fmt)
    except cli_arrow.Ineligible as why:
        fall_back(args, why)
        return None


def fall_back(args: argparse.Namespace, why: Exception) -> None:
    """Leave a run the Arrow engine cannot compute as Spark would to Spark, unless ``--engine arrow`` asked for
    the engine: then a ValueError with the reason."""
    if args.engine == "arrow":
        raise ValueError(f"--engine arrow cannot run this: {why}; use --engine spark or auto") from None
    from hashexpr.errors import local_spark_missing

    missing = local_spark_missing()
    if missing is not None:
        # Spark is what would run it, and there is none: the Arrow engine's reason is the one to give.
        raise missing(f"the Arrow engine cannot run this ({why}), and Spark, which can,") from None


def arrow_hashing(args: argparse.Namespace, hashing: dict[str, Any]) -> dict[str, Any]:
    """The algorithm keywords of ``hashexpr.arrow``: the secret's value instead of its name."""
    if not hashing:
        return {}
    key = dict(args.conf).get(f"spark.hashexpr.secret.{args.secret}") if args.secret else None
    return {"algorithm": hashing["algorithm"], "hmac_key": key}


def _secret_env(name: str) -> str:
    return "HASHEXPR_SECRET_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def hashing_of(
    args: argparse.Namespace, check: Callable[[str, str | None], Any] = hash_options
) -> dict[str, Any]:
    """The algorithm keywords of ``args``, checked by ``check`` before Spark starts; the secret goes to the
    Spark conf."""
    check(args.algorithm, args.secret)
    if args.algorithm == "murmur3":
        return {}
    if args.secret is not None:
        conf_key = f"spark.hashexpr.secret.{args.secret}"
        if conf_key not in dict(args.conf):
            variable = _secret_env(args.secret)
            key = os.environ.get(variable)
            if not key:
                raise ValueError(
                    f"--secret {args.secret}: set the environment variable {variable} to the key "
                    f"(or pass --conf {conf_key}=...)"
                )
            args.conf = [*args.conf, (conf_key, key)]
    return {"algorithm": args.algorithm, "secret": args.secret}


def add_output(
    parser: argparse.ArgumentParser, what: str, formats: Sequence[str] = hformats.OUTPUT_FORMATS
) -> None:
    parser.add_argument(
        "--out-format",
        metavar="FORMAT",
        help=f"OUTPUT's format: {', '.join(formats)} (default: from OUTPUT's extension, else parquet)",
    )
    parser.add_argument(
        "--mode",
        default="error",
        metavar="MODE",
        help=f"error: fail when {what} exists (default); overwrite: replace it",
    )


def parse_columns(text: str | None, option: str = "--columns") -> list[str]:
    """The names in ``--columns a,b``; an empty list when the option is absent."""
    if text is None:
        return []
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise ValueError(f"{option} has an empty name: {text!r}")
    return names


def resolve_columns(
    available: Sequence[str], requested: Sequence[str], where: str = "", case_sensitive: bool = False
) -> list[str]:
    """Return the input columns named by ``requested``, as spelled in the input; all of them if none.

    Names match as Spark resolves column names: exactly, or else, unless ``case_sensitive``
    (``spark.sql.caseSensitive``), the one column whose name differs only in case.

    Parameters
    ----------
    available : sequence of str
        The input's columns, in order.
    requested : sequence of str
        The names the user gave; empty for every column.
    where : str
        Which input the columns are of (``"NEW"``), for the error message.
    case_sensitive : bool
        Whether names match only in their exact case.

    Returns
    -------
    list of str
        The columns to hash, in the requested order.

    Raises
    ------
    ValueError
        Naming the first unknown column, the nearest existing one, and the available ones.

    Examples
    --------
    >>> resolve_columns(["id", "Name"], ["name", "id"])
    ['Name', 'id']
    >>> resolve_columns(["id", "name"], [])
    ['id', 'name']
    >>> resolve_columns(["id", "name"], ["nmae"])
    Traceback (most recent call last):
        ...
    ValueError: unknown column 'nmae' (did you mean 'name'?); available columns: id, name
    """
    if not requested:
        return list(available)
    resolver = hnames.Resolver(available, lambda: case_sensitive)
    place = f" in {where}" if where else ""
    resolved = []
    for name in requested:
        found = resolver.matches(name)
        if len(found) > 1:
            raise ValueError(f"column {name!r}{place} matches several columns, {found}: rename them")
        if not found:
            raise ValueError(
                f"unknown column {name!r}{place}{resolver.hint(name)}; available columns: "
                f"{preview(available, limit=50)}"
            )
        resolved.append(found[0])
    return resolved


def chosen_columns(
    available: Sequence[str], requested: Sequence[str], excluded: Sequence[str], case_sensitive: bool = False
) -> list[str]:
    """The columns named by ``requested``, or every column but ``excluded``."""
    if not excluded:
        return resolve_columns(available, requested, case_sensitive=case_sensitive)
    dropped = set(resolve_columns(available, excluded, case_sensitive=case_sensitive))
    remaining = [c for c in available if c not in dropped]
    if not remaining:
        raise ValueError("--exclude leaves no column")
    return remaining


def time_zone_of(spark: SparkSession, inputs: Sequence[hinputs.Source]) -> str | None:
    """The session time zone, when an input is text (CSV, JSON) whose timestamps it decides."""
    if not any(s.fmt in ("csv", "json") for s in inputs):
        return None
    return spark.conf.get("spark.sql.session.timeZone")
