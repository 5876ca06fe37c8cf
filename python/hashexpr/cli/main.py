"""The ``hashexpr`` command line.

``hashexpr jar`` prints the path of hashexpr's jar; ``hashexpr sql`` prints SQL for engines without it;
``hashexpr hash``, ``fingerprint``, ``diff`` and
``collisions`` run on data files and tables with an embedded Spark. Each subcommand is one ``_run_*``
function registered by one ``_add_*`` function; it returns an :class:`Outcome` (exit status, result lines,
summary, the ``--json`` report), which :func:`main` prints. The Spark session is set up in
:mod:`hashexpr.cli_session`, inputs in :mod:`hashexpr.sources`, outputs in :mod:`hashexpr.io`.
See ``docs/CLI.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

import hashexpr as hx
from hashexpr import cli_session, cli_signals
from hashexpr import io as hio
from hashexpr import names as hnames
from hashexpr import sources as hsources
from hashexpr import sql as hsql
from hashexpr.cli_session import PROG
from hashexpr.errors import SchemaMismatchError
from hashexpr.fingerprint import (
    FINGERPRINT_COLUMN,
    _check_fingerprint_options,
    _fingerprint_column,
    fingerprint_prefix,
)
from hashexpr.options import KeyOptions, hash_options, parse_key_options
from hashexpr.sql.types import parse_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: Exit status: done, nothing found.
EXIT_OK = 0
#: Exit status: done, and something was found (differences, collisions, a fingerprint other than expected).
EXIT_FINDINGS = 1
#: Exit status: the arguments or the input are wrong (a missing file, an unknown column, malformed data).
EXIT_USAGE = 2
#: Exit status: Spark failed for another reason.
EXIT_SPARK = 3
#: Exit status: interrupted (Ctrl-C, SIGINT).
EXIT_INTERRUPTED = 130
#: Exit status: terminated (SIGTERM).
EXIT_TERMINATED = 143

# Errors caused by what the user asked for.
_USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, PySparkException)

# Spark errors about the input data itself (a file that is not what its format says, a malformed record in
# FAILFAST mode): input errors, though Spark finds them only while a job runs.
_INPUT_ERROR_CLASSES = ("FAILED_READ_FILE", "MALFORMED_RECORD_IN_PARSING", "MALFORMED_CSV_RECORD")


@dataclass
class Outcome:
    """What a subcommand found: printed by :func:`main` as text, or as one JSON object with ``--json``."""

    #: The exit status.
    status: int = EXIT_OK
    #: The command's result (a fingerprint, one line per group or problem), for stdout.
    lines: list[str] = field(default_factory=list)
    #: ``label  value`` lines after the result.
    summary: list[tuple[str, str]] = field(default_factory=list)
    #: Whether the summary goes to stderr, leaving stdout to the result lines.
    summary_to_stderr: bool = False
    #: A one-line message for stderr (a mismatch, differences found).
    message: str | None = None
    #: The ``--json`` object.
    report: dict[str, Any] = field(default_factory=dict)


def main(argv: Sequence[str] | None = None, spark: SparkSession | None = None) -> int:
    """Run the ``hashexpr`` command line and return its exit status.

    ``0``: done; ``1``: done, with findings (differences with ``diff --exit-code``, collisions, a fingerprint
    other than ``--expect``); ``2``: a wrong argument or input; ``3``: Spark failed; ``130`` and ``143``:
    interrupted by SIGINT (Ctrl-C) or SIGTERM. Every error is one line on stderr.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; ``sys.argv[1:]`` when omitted.
    spark : :class:`~pyspark.sql.SparkSession`, optional
        A running session (with hashexpr's jar) to run in, instead of starting and stopping one: from a
        notebook, or a program that runs several commands. ``--master`` and ``--conf`` settings that only a new
        Spark takes are refused then; other ``--conf`` settings hold for the command and are restored after it.

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> main(["jar", "--spark", "3.5"])                   # doctest: +ELLIPSIS
    /.../hashexpr-spark3.5_2.12.jar
    0
    """
    args = build_parser().parse_args(argv)
    args.session = spark
    run: Callable[[argparse.Namespace], Outcome] = args.run
    verbose = getattr(args, "verbose", False)
    as_json = getattr(args, "json", False)
    started = time.monotonic()
    with cli_signals.handled():
        try:
            outcome = run(args)
            signum = cli_signals.received()
            if signum is not None:
                raise cli_signals.Interrupted(signum)
        except BaseException as exc:  # noqa: BLE001 - every ending is reported the same way
            status, message = _failure(exc)
            if verbose and status == EXIT_SPARK:
                traceback.print_exc()
            if as_json:
                _print_json({"command": args.command, "exit_status": status, "error": message})
            _error(message)
            return status
    elapsed = time.monotonic() - started
    if as_json:
        _print_json(
            {
                "command": args.command,
                "exit_status": outcome.status,
                **outcome.report,
                "elapsed_seconds": round(elapsed, 3),
            }
        )
    else:
        for line in outcome.lines:
            print(line)
        if outcome.summary:
            stream = sys.stderr if outcome.summary_to_stderr else sys.stdout
            _print_summary([*outcome.summary, ("elapsed", f"{elapsed:.1f} s")], stream)
    if outcome.message:
        print(f"{PROG}: {outcome.message}", file=sys.stderr)
    return outcome.status


def _failure(exc: BaseException) -> tuple[int, str]:
    """The exit status and one-line message of a run that ended with ``exc``; cleans up after Spark."""
    if isinstance(exc, SystemExit):
        raise exc
    # After a signal, whatever failed (the cancelled job, the call the signal cut short) was the signal.
    signum = cli_signals.received()
    if signum is None and isinstance(exc, KeyboardInterrupt):
        signum = signal.SIGINT
    if signum is not None:
        cli_session.abandon()
        return cli_signals.EXIT_STATUS[signum], "terminated" if signum == signal.SIGTERM else "interrupted"
    if isinstance(exc, cli_session.SparkStartError):
        return EXIT_SPARK, str(exc)
    if isinstance(exc, SchemaMismatchError):
        problems = "; ".join(exc.problems)
        return EXIT_USAGE, (
            f"the schemas of old and new differ: {problems}. Pass --columns A,B,... to compare chosen "
            "columns (present on both sides), or --exclude the others"
        )
    if isinstance(exc, _USER_ERRORS):
        return EXIT_USAGE, _first_line(exc)
    if isinstance(exc, Py4JJavaError):
        message = _java_message(exc.java_exception)
        status = EXIT_USAGE if any(f"[{c}" in message for c in _INPUT_ERROR_CLASSES) else EXIT_SPARK
        return status, message
    if isinstance(exc, (Py4JError, ConnectionError)):
        # The JVM went away (killed, out of memory): what it was writing is unfinished.
        cli_session.abandon()
        return EXIT_SPARK, f"Spark's JVM ended unexpectedly ({_first_line(exc)})"
    if isinstance(exc, Exception):
        return EXIT_SPARK, f"{type(exc).__name__}: {_first_line(exc)}"
    raise exc


def _java_message(java_exception: Any) -> str:
    """The most telling line of a JVM exception: the deepest cause with an error class, else the top one.

    A failed job's exception says "Job aborted due to stage failure" and names the task; its cause says what
    went wrong (``[MALFORMED_RECORD_IN_PARSING] ...``).
    """
    top = _first_line(java_exception)
    best = None
    cause = java_exception
    for _ in range(20):
        try:
            text = str(cause.getMessage() or "")
            name = cause.getClass().getName()
            cause = cause.getCause()
        except Py4JError:
            break
        if text.startswith("["):
            best = f"{name}: {_first_line(text)}"
        if cause is None:
            break
    return best or top


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``hashexpr`` command line, one subparser per subcommand.

    Returns
    -------
    :class:`argparse.ArgumentParser`
        A parser whose parsed namespace has ``run``, the function of the chosen subcommand.

    Examples
    --------
    >>> args = build_parser().parse_args(["hash", "in.csv", "--out", "out.csv", "--hex", "--columns", "a,b"])
    >>> args.command, args.input, args.out, args.hex, args.columns
    ('hash', 'in.csv', 'out.csv', True, 'a,b')
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Deterministic record hashing for Apache Spark (hash format v1).",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {hx.__version__} (hash format v{hx.FORMAT_VERSION})",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = _common_options()
    _add_jar(commands)
    _add_hash(commands, common)
    _add_fingerprint(commands, common)
    _add_diff(commands, common)
    _add_collisions(commands, common)
    _add_sql(commands)
    return parser


def _common_options() -> argparse.ArgumentParser:
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


def _add_input(parser: argparse.ArgumentParser) -> None:
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
        help=f"INPUT's format: {', '.join(hsources.INPUT_FORMATS)} (default: from INPUT)",
    )
    parser.add_argument("--version", type=int, metavar="N", help="a Delta table as of this version")
    parser.add_argument("--timestamp", metavar="TIME", help="a Delta table as of this time")


def _source(
    args: argparse.Namespace, path: str | None, table: str | None, prefix: str = ""
) -> hsources.Source:
    """The input of ``path`` or ``table`` with the reading options of ``args`` (time travel under ``prefix``)."""
    return hsources.source(
        path,
        table=table,
        fmt=args.format,
        version=getattr(args, f"{prefix}version"),
        timestamp=getattr(args, f"{prefix}timestamp"),
        options=dict(args.option),
        schema=args.schema,
        available=hsources.available_table_formats(dict(args.conf)),
    )


def _check_output(args: argparse.Namespace, out_fmt: str, inputs: Sequence[hsources.Source]) -> str:
    """Check OUTPUT against the inputs and its format's library; return the mode, lower-cased."""
    if out_fmt == "delta":
        hsources.require_library(
            "delta", args.out, hsources.available_table_formats(dict(args.conf)), writing=True
        )
    return hio.check_output(args.out, args.mode, [s.path for s in inputs if s.path is not None])


def _session(args: argparse.Namespace, formats: Sequence[str]) -> AbstractContextManager[SparkSession]:
    if args.master is not None:
        cli_session.check_master(args.master)
    if args.session is not None:
        return cli_session.given_session(args.session, args.master, args.conf, formats, args.verbose)
    return cli_session.spark_session(
        args.master or cli_session.DEFAULT_MASTER, args.conf, formats, args.verbose
    )


def _add_algorithm(
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


def _add_key_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key-options",
        metavar="OPTIONS",
        help="the key's options as record_key_with takes them, e.g. 'salt=hub; trim; case=upper' (salt, trim, "
        "case=upper|lower, empty_as_null, null_key=hash|null|error; see docs/KEYS.md)",
    )


def _key_options(args: argparse.Namespace) -> KeyOptions:
    """The --key-options, read by the grammar of record_key_with before Spark starts."""
    if args.key_options is None:
        return KeyOptions()
    return parse_key_options(args.key_options, "--key-options")


def _collision_options(options: KeyOptions, args: argparse.Namespace) -> dict[str, Any]:
    """find_collisions' keywords for --key-options: normalisation only when given, so that a --hash-col
    written by with_metadata lends its own."""
    kwargs: dict[str, Any] = {"salt": options.salt or None, "null_key": options.null_key}
    if args.key_options is not None:
        kwargs.update(options.normalizing)
    return kwargs


def _add_engine(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=("auto", "spark", "arrow"),
        default="auto",
        help="arrow: hashexpr.arrow, no JVM, for local Parquet files whose every type it hashes; spark: an embedded "
        "Spark; auto (default): arrow where its result is Spark's, else spark",
    )


def _arrow_paths(
    args: argparse.Namespace, src: hsources.Source, out_fmt: str | None = None
) -> list[str] | None:
    """The Parquet files the Arrow engine reads for this run, or ``None`` when Spark runs it."""
    if args.engine == "spark":
        return None
    # Imported here: the Arrow engine's modules load pyarrow, which `hashexpr jar` and Spark runs do without.
    from hashexpr import cli_arrow

    try:
        return cli_arrow.eligibility(args, src, out_fmt)
    except cli_arrow.Ineligible as why:
        if args.engine == "arrow":
            raise ValueError(f"--engine arrow cannot run this: {why}; use --engine spark or auto") from None
        return None


def _arrow_hashing(args: argparse.Namespace, hashing: dict[str, Any]) -> dict[str, Any]:
    """The algorithm keywords of ``hashexpr.arrow``: the secret's value instead of its name."""
    if not hashing:
        return {}
    key = dict(args.conf).get(f"spark.hashexpr.secret.{args.secret}") if args.secret else None
    return {"algorithm": hashing["algorithm"], "hmac_key": key}


def _secret_env(name: str) -> str:
    return "HASHEXPR_SECRET_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def _hashing(
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


def _add_output(
    parser: argparse.ArgumentParser, what: str, formats: Sequence[str] = hio.OUTPUT_FORMATS
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


# --- hashexpr jar ------------------------------------------------------------------------------------------


def _add_jar(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "jar",
        help="print the path of the hashexpr jar for a Spark line",
        description=(
            "Print the path of the hashexpr jar for the installed pyspark's Spark line and Scala version, or for "
            "another line (--spark, --scala), for spark-submit --jars or a Spark Connect server."
        ),
        epilog=(
            f'Examples: spark-submit --jars "$({PROG} jar)" job.py; '
            f"{PROG} jar --spark 3.5 --scala 2.12 (Databricks 15.4 LTS, EMR 7, Glue 5)"
        ),
    )
    parser.add_argument("--spark", metavar="X.Y", help="the Spark line (default: the installed pyspark's)")
    parser.add_argument(
        "--scala", metavar="2.1x", help="the Scala version (default: pyspark's, or the line's usual one)"
    )
    parser.set_defaults(run=_run_jar)


def _run_jar(args: argparse.Namespace) -> Outcome:
    """``hashexpr jar``: print the jar's absolute path."""
    path = hx.jar_path(spark=args.spark, scala=args.scala)
    return Outcome(lines=[path], report={"jar": path})


# --- hashexpr hash -----------------------------------------------------------------------------------------


def _add_hash(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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
    _add_input(parser)
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
    _add_key_options(parser)
    _add_output(parser, "OUTPUT")
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
    _add_algorithm(parser)
    _add_engine(parser)
    parser.set_defaults(run=_run_hash)


def _run_hash(args: argparse.Namespace) -> Outcome:
    """``hashexpr hash``: read, add the hash column (and the key column), write, and sum up."""
    # Everything that can be checked without Spark is, so that a typo costs no JVM start.
    src = _source(args, args.input, args.table)
    out_fmt = hio.output_format(args.out, args.out_format)
    if not args.hex and not hio.holds_binary(out_fmt):
        raise ValueError(f"{out_fmt.upper()} cannot hold the binary hash: add --hex to write it as hex text")
    requested = _parse_columns(args.columns, "--columns")
    excluded = _parse_columns(args.exclude, "--exclude")
    if requested and excluded:
        raise ValueError("--columns and --exclude both choose the columns: pass one of them")
    key = _parse_columns(args.key, "--key")
    key_options = _key_options(args)
    if args.key_options is not None and not key:
        raise ValueError("--key-options are the options of the --key column: add --key")
    new_columns = [args.column_name] + ([args.key_column_name] if key else [])
    if len({n.lower() for n in new_columns}) < len(new_columns):
        raise ValueError("--column-name and --key-column-name are the same: name them differently")
    args.mode = _check_output(args, out_fmt, [src])
    hashing = _hashing(args)
    paths = _arrow_paths(args, src, out_fmt)
    if paths is not None:
        from hashexpr.cli_arrow import Ineligible

        try:
            return _run_hash_arrow(
                args, src, paths, requested, excluded, key, new_columns, hashing, key_options
            )
        except Ineligible:
            if args.engine == "arrow":
                raise

    with _session(args, [src.fmt, out_fmt]) as spark:
        df = src.read(spark)
        exact = hnames.case_sensitive(spark)
        columns = _chosen(df.columns, requested, excluded, exact)
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
        hio.write(hashed, args.out, out_fmt, args.mode)
        counts = _count_distinct(hio.read(spark, args.out, out_fmt, hashed.schema), new_columns)
        time_zone = _time_zone(spark, [src])
    return _hash_outcome(
        args, src, out_fmt, columns, list(df.columns), key_columns, hashing, counts, time_zone
    )


def _run_hash_arrow(
    args: argparse.Namespace,
    src: hsources.Source,
    paths: list[str],
    requested: list[str],
    excluded: list[str],
    key: list[str],
    new_columns: list[str],
    hashing: dict[str, Any],
    key_options: KeyOptions,
) -> Outcome:
    """``hashexpr hash`` by the Arrow engine: the same output and summary, no JVM."""
    from hashexpr import cli_arrow

    available = cli_arrow.dataset(paths).schema.names
    columns = _chosen(available, requested, excluded)
    key_columns = resolve_columns(available, key) if key else []
    for name in new_columns:
        if name.lower() in {c.lower() for c in available}:
            option = "--column-name" if name == args.column_name else "--key-column-name"
            raise ValueError(f"column {name!r} already exists in the input: name it otherwise with {option}")
    written = cli_arrow.write_hashed(
        paths,
        columns,
        key_columns,
        (args.column_name, args.key_column_name),
        args.hex,
        _arrow_hashing(args, hashing),
        args.out,
        args.mode,
        key_options,
    )
    counts = {"rows": written["rows"], **{c: cli_arrow.distinct(written[c]) for c in new_columns}}
    outcome = _hash_outcome(args, src, "parquet", columns, available, key_columns, hashing, counts, None)
    outcome.report["engine"] = "arrow"
    return outcome


def _hash_outcome(
    args: argparse.Namespace,
    src: hsources.Source,
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
        ("columns hashed", f"{len(columns)} of {len(available)}: {_preview(columns)}"),
        ("output", f"{args.out} ({out_fmt}), column {args.column_name} {hash_type}"),
        ("distinct hashes", f"{distinct:,} of {rows:,} rows ({_count(rows - distinct, 'duplicate')})"),
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
    return F.hex(column) if as_hex else column


def _count_distinct(written: DataFrame, columns: Sequence[str]) -> dict[str, int]:
    """The rows of the written output, and the distinct values of each of ``columns`` in it."""
    # Reading back a few columns of the output is cheaper than hashing the input a second time.
    aggregates = [F.count(F.lit(1)).alias("rows")]
    aggregates += [F.count_distinct(hnames.column(c)).alias(f"d{i}") for i, c in enumerate(columns)]
    row = written.agg(*aggregates).first()
    return {"rows": int(row["rows"]), **{c: int(row[f"d{i}"]) for i, c in enumerate(columns)}}


# --- hashexpr fingerprint ----------------------------------------------------------------------------------

_FINGERPRINT = re.compile(r"hx1(-lthash16(-hmac)?)?:[0-9a-f]{64}", re.IGNORECASE)


def _add_fingerprint(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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
    _add_input(parser)
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
    _add_output(parser, "OUTPUT")
    parser.add_argument(
        "--expect", metavar="hx1:...", help="exit with status 1 unless the fingerprint is this one"
    )
    _add_algorithm(
        parser,
        ("murmur3", "lthash16"),
        "murmur3 (default: the sum of the rows' hashes, against accidents) or lthash16 (LtHash16 of SHA-256 row "
        "hashes: no one can forge it; slower)",
        keyed="lthash16",
    )
    _add_engine(parser)
    parser.set_defaults(run=_run_fingerprint)


def _run_fingerprint(args: argparse.Namespace) -> Outcome:
    """``hashexpr fingerprint``: the fingerprint of INPUT, or of each group of it."""
    src = _source(args, args.input, args.table)
    by = _parse_columns(args.by, "--by")
    excluded = _parse_columns(args.exclude, "--exclude")
    if args.limit < 0:
        raise ValueError(f"--limit must be 0 or more, not {args.limit}")
    hashing = _hashing(args, _check_fingerprint_options)
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
    if args.out and not by:
        raise ValueError("--out writes one fingerprint per group: add --by")
    out_fmt = None
    if args.out:
        out_fmt = hio.output_format(args.out, args.out_format)
        args.mode = _check_output(args, out_fmt, [src])
    paths = _arrow_paths(args, src, out_fmt)
    if paths is not None:
        return _run_fingerprint_arrow(args, src, paths, by, excluded, out_fmt, hashing)

    with _session(args, [src.fmt] + ([out_fmt] if out_fmt else [])) as spark:
        df = src.read(spark)
        exact = hnames.case_sensitive(spark)
        columns = _chosen(df.columns, [], excluded, exact)
        if excluded:
            df = df.select(*map(hnames.column, columns))
        report: dict[str, Any] = {"input": src.as_dict(), "columns": columns}
        if not by:
            outcome = _whole_fingerprint(df, args.expect, hashing)
        else:
            groups = resolve_columns(df.columns, by, case_sensitive=exact)
            outcome = _group_fingerprints(spark, df, groups, args, out_fmt, hashing)
        time_zone = _time_zone(spark, [src])
    outcome.summary = [("input", src.label()), *outcome.summary]
    if time_zone:
        outcome.summary.append(("time zone", time_zone))
        report["time_zone"] = time_zone
    outcome.report = {**report, **outcome.report}
    outcome.summary_to_stderr = True
    return outcome


def _run_fingerprint_arrow(
    args: argparse.Namespace,
    src: hsources.Source,
    paths: list[str],
    by: list[str],
    excluded: list[str],
    out_fmt: str | None,
    hashing: dict[str, Any],
) -> Outcome:
    """``hashexpr fingerprint`` by the Arrow engine: the same fingerprints, no JVM."""
    from hashexpr import cli_arrow

    columns = _chosen(cli_arrow.dataset(paths).schema.names, [], excluded)
    keywords = _arrow_hashing(args, hashing)
    algorithm, key = keywords.get("algorithm", "murmur3"), keywords.get("hmac_key")
    if not by:
        rows, fingerprint = cli_arrow.fingerprint(paths, columns, algorithm, key)
        outcome = _fingerprint_outcome(rows, fingerprint, columns, args.expect)
    else:
        groups = resolve_columns(columns, by)
        table = cli_arrow.group_fingerprints(paths, columns, groups, algorithm, key)
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
            outcome = _groups_outcome(groups, table.slice(0, args.limit).to_pylist(), table.num_rows)
    outcome.summary = [("input", src.label()), *outcome.summary]
    outcome.report = {"input": src.as_dict(), "columns": columns, **outcome.report, "engine": "arrow"}
    outcome.summary_to_stderr = True
    return outcome


def _whole_fingerprint(df: DataFrame, expect: str | None, hashing: dict[str, Any]) -> Outcome:
    # One job for both: the count and the fingerprint are two aggregates of the same scan.
    fingerprint_of_all = _fingerprint_column(["*"], **hashing)
    row = df.agg(F.count(F.lit(1)).alias("rows"), fingerprint_of_all.alias("fp")).first()
    return _fingerprint_outcome(int(row["rows"]), row["fp"], df.columns, expect)


def _fingerprint_outcome(rows: int, fingerprint: str, columns: Sequence[str], expect: str | None) -> Outcome:
    outcome = Outcome(
        lines=[fingerprint],
        summary=[("rows", f"{rows:,}"), ("columns", f"{len(columns)}: {_preview(columns)}")],
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
        hio.write(fingerprints, args.out, out_fmt, args.mode)
        count = hio.read(spark, args.out, out_fmt, fingerprints.schema).count()
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
        lines=["\t".join([*(_text(row[g]) for g in groups), row[FINGERPRINT_COLUMN]]) for row in shown],
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
                {"group": {g: _json_value(row[g]) for g in groups}, "fingerprint": row[FINGERPRINT_COLUMN]}
                for row in shown
            ],
        },
    )


# --- hashexpr diff -----------------------------------------------------------------------------------------


def _add_diff(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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
        help=f"the inputs' format: {', '.join(hsources.INPUT_FORMATS)} (default: from each input)",
    )
    parser.add_argument(
        "--out", metavar="OUTPUT", help="write the differences here (Parquet unless --out-format)"
    )
    _add_output(parser, "OUTPUT", _DIFF_OUTPUT_FORMATS)
    parser.add_argument(
        "--exit-code", action="store_true", help="exit with status 1 when there are differences, 0 when none"
    )
    parser.add_argument(
        "--no-changed-columns",
        action="store_true",
        help="with --out, write each difference's key, change and side only: one pass over the hashes, no "
        "values read (without --out the counts never need them)",
    )
    _add_algorithm(parser)
    parser.set_defaults(run=_run_diff)


# The differences have arrays and structs (changed_columns, old, new), which CSV cannot hold.
_DIFF_OUTPUT_FORMATS = tuple(f for f in hio.OUTPUT_FORMATS if hio.holds_binary(f))


def _diff_sources(args: argparse.Namespace) -> tuple[hsources.Source, hsources.Source]:
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
    old = _source(args, *sides["old"], prefix="old_")
    new = _source(args, *sides["new"], prefix="new_")
    if old == new:
        raise ValueError(
            "OLD and NEW are the same input: name two inputs, or two versions with --old-version"
        )
    return old, new


def _run_diff(args: argparse.Namespace) -> Outcome:
    """``hashexpr diff``: the counts per change type; the differences themselves with ``--out``."""
    old_src, new_src = _diff_sources(args)
    key = _parse_columns(args.key, "--key")
    requested = _parse_columns(args.columns, "--columns")
    excluded = _parse_columns(args.exclude, "--exclude")
    if requested and excluded:
        raise ValueError("--columns and --exclude both choose the columns: pass one of them")
    if args.no_changed_columns and not args.out:
        raise ValueError(
            "--no-changed-columns chooses what --out writes: add --out (the counts never read values)"
        )
    out_fmt = None
    if args.out:
        out_fmt = hio.output_format(args.out, args.out_format)
        args.mode = _check_output(args, out_fmt, [old_src, new_src])
        if out_fmt not in _DIFF_OUTPUT_FORMATS and not args.no_changed_columns:
            raise ValueError(
                f"{out_fmt.upper()} cannot hold the differences (changed_columns, old and new are nested): "
                f"write {', '.join(_DIFF_OUTPUT_FORMATS)}"
            )
    hashing = _hashing(args)

    with _session(args, [old_src.fmt, new_src.fmt] + ([out_fmt] if out_fmt else [])) as spark:
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
            hio.write(differences, args.out, out_fmt, args.mode)
            counts = hx.summarize(hio.read(spark, args.out, out_fmt, differences.schema))
        else:
            counts = hx.summarize(differences)
        time_zone = _time_zone(spark, [old_src, new_src])
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


# --- hashexpr collisions -----------------------------------------------------------------------------------


def _add_collisions(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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
    _add_input(parser)
    parser.add_argument(
        "--key", required=True, metavar="A,B,...", help="comma-separated business-key columns"
    )
    parser.add_argument("--hash-col", metavar="COLUMN", help="a stored hash-key column (default: compute it)")
    _add_key_options(parser)
    parser.add_argument(
        "--limit", type=int, default=20, help="print at most this many (default: %(default)s)"
    )
    _add_algorithm(parser)
    _add_engine(parser)
    parser.set_defaults(run=_run_collisions)


def _run_collisions(args: argparse.Namespace) -> Outcome:
    """``hashexpr collisions``: each problem found; exit status 1 when there is any."""
    src = _source(args, args.input, args.table)
    key = _parse_columns(args.key, "--key")
    if args.limit < 0:
        raise ValueError(f"--limit must be 0 or more, not {args.limit}")
    hashing = _hashing(args)
    key_options = _key_options(args)
    if hashing and args.hash_col:
        raise ValueError(
            "--algorithm applies to a computed hash key; a stored --hash-col is checked as it is"
        )
    if args.hash_col and args.engine == "arrow":
        raise ValueError(
            "--engine arrow computes hash keys; a stored --hash-col is checked by --engine spark"
        )
    if args.key_options is not None and args.engine == "arrow":
        raise ValueError(
            "--engine arrow finds collisions without key options; --key-options take --engine spark"
        )
    paths = None if args.hash_col or args.key_options is not None else _arrow_paths(args, src)
    if paths is not None:
        from hashexpr import cli_arrow

        keys = resolve_columns(cli_arrow.dataset(paths).schema.names, key)
        count, problems = cli_arrow.collisions(paths, keys, _arrow_hashing(args, hashing))
        outcome = _collisions_outcome(src, keys, problems[: args.limit], count)
        outcome.report["engine"] = "arrow"
        return outcome
    with _session(args, [src.fmt]) as spark:
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
    return _collisions_outcome(src, keys, shown, count)


def _collisions_outcome(src: hsources.Source, keys: list[str], shown: Sequence[Any], count: int) -> Outcome:
    lines = []
    for row in shown:
        business = ", ".join(str(tuple(_json_value(v) for v in k)) for k in row["business_keys"])
        hashes = ", ".join(_text(h) for h in row["hash_keys"])
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
                    "hash_keys": [_text(h) for h in row["hash_keys"]],
                    "business_keys": [[_json_value(v) for v in k] for k in row["business_keys"]],
                }
                for row in shown
            ],
        },
    )


# --- hashexpr sql ------------------------------------------------------------------------------------------


def _add_sql(commands: argparse._SubParsersAction) -> None:
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
    options.add_argument("--empty-as-null", action="store_true", help="an empty string key part counts as NULL")
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


# --- shared helpers ----------------------------------------------------------------------------------------


def _parse_columns(text: str | None, option: str = "--columns") -> list[str]:
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
                f"{_preview(available, limit=50)}"
            )
        resolved.append(found[0])
    return resolved


def _chosen(
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


def _time_zone(spark: SparkSession, inputs: Sequence[hsources.Source]) -> str | None:
    """The session time zone, when an input is text (CSV, JSON) whose timestamps it decides."""
    if not any(s.fmt in ("csv", "json") for s in inputs):
        return None
    return spark.conf.get("spark.sql.session.timeZone")


def _text(value: object) -> str:
    """A value as one field of a tab-separated line: NULL, hex for bytes, tabs and newlines escaped."""
    if value is None:
        return "NULL"
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex().upper()
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _json_value(value: object) -> object:
    """A value as JSON shows it: bytes as upper-case hex, dates and times as ISO text, numbers as numbers."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex().upper()
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if hasattr(value, "asDict"):
        return {k: _json_value(v) for k, v in value.asDict().items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _print_json(report: dict[str, Any]) -> None:
    print(json.dumps(report, default=str))


def _print_summary(items: Sequence[tuple[str, str]], stream: Any) -> None:
    """Print ``label  value`` lines, labels padded to one width."""
    width = max(len(label) for label, _ in items)
    for label, value in items:
        print(f"{label:<{width}}  {value}", file=stream)


def _preview(names: Sequence[str], limit: int = 10) -> str:
    """``a, b, c``, or the first ``limit`` names and how many more."""
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])}, ... ({len(names) - limit} more)"


def _count(n: int, noun: str) -> str:
    """``1 duplicate``, ``2 duplicates``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _first_line(exc: object) -> str:
    """The first non-empty line of an error's message: Spark's messages go on with plans and traces."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)
