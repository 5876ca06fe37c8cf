"""The ``hashexpr`` command line.

``hashexpr jar`` prints the path of hashexpr's jar; ``hashexpr hash INPUT --out OUTPUT`` adds a record-hash
column to a Parquet, CSV, JSON or ORC file with an embedded Spark. Each subcommand is one ``_run_*`` function
registered by one ``_add_*`` function; Spark sessions, file formats and summaries are shared helpers.
See ``docs/CLI.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import hashexpr as hx
from hashexpr import io as hio
from hashexpr import names as hnames
from hashexpr.fingerprint import FINGERPRINT_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

PROG = "hashexpr"

#: Exit status of a run that failed on its input: a bad argument, a missing file, an unknown column.
EXIT_USAGE = 2
#: Exit status of a run that failed inside Spark for another reason.
EXIT_FAILURE = 1

# Spark's default logging prints INFO and WARN lines to the terminal while it starts; a command line shows
# its own summary and only the errors. A configuration file is the only setting log4j reads that early.
# Spark gives an interactive driver the level of the logger named after its main class, WARN unless that
# logger is configured, so those loggers are set too. Logged errors leave out their stack traces: the
# command ends with the error's message.
_LOG4J2_PROPERTIES = """\
rootLogger.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
appender.stderr.layout.alwaysWriteExceptions = false
"""

# Errors caused by what the user asked for: reported in one line, with EXIT_USAGE.
_USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, PySparkException)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hashexpr`` command line and return its exit status.

    Errors in the user's input (a missing file, an unknown column or format, ...) print one line to stderr
    and return ``2``; other failures inside Spark print one line and return ``1``.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        The exit status: ``0`` on success.

    Examples
    --------
    >>> main(["jar"])                                     # doctest: +ELLIPSIS
    /.../hashexpr.jar
    0
    """
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    # SIGTERM ends the run as Ctrl-C does, through the clean-up that removes a half-written output.
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        return run(args)
    except KeyboardInterrupt:
        _abandon()
        _error("interrupted")
        return 130
    except _Terminated:
        _abandon()
        _error("terminated")
        return 143
    except _USER_ERRORS as exc:
        _error(_first_line(exc))
        return EXIT_USAGE
    except Py4JJavaError as exc:
        # str(exc) is the whole JVM stack trace; the Java exception's own text leads with its message.
        _error(_first_line(exc.java_exception))
        return EXIT_FAILURE
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _stop(spark: SparkSession) -> None:
    """Stop Spark; after an interrupt its gateway can be gone already, which must not hide the interrupt."""
    with contextlib.suppress(Py4JError):
        spark.stop()


def _abandon() -> None:
    """After an interrupt: end the Spark JVM, so that no task writes any more, then remove unfinished outputs."""
    from pyspark import SparkContext

    gateway = getattr(SparkContext, "_gateway", None)
    process = getattr(gateway, "proc", None)
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    hio.discard_unfinished()


class _Terminated(BaseException):
    """SIGTERM, raised where the run is, so that its clean-up runs."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


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
    spark_options = _spark_options()
    _add_jar(commands)
    _add_hash(commands, spark_options)
    _add_fingerprint(commands, spark_options)
    _add_diff(commands, spark_options)
    _add_collisions(commands, spark_options)
    return parser


def _spark_options() -> argparse.ArgumentParser:
    """The options of every subcommand that starts Spark, as a parent parser."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("Spark")
    group.add_argument(
        "--master",
        default="local[*]",
        help="Spark master URL (default: %(default)s, an embedded Spark using every core)",
    )
    group.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_conf_pair,
        help="a Spark setting, e.g. --conf spark.driver.memory=4g; may be repeated",
    )
    return parent


def _conf_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def _add_input(parser: argparse.ArgumentParser) -> None:
    """INPUT and --format, shared by the subcommands that read one data file."""
    parser.add_argument("input", metavar="INPUT", help="a file, a directory of part files, or a glob")
    parser.add_argument(
        "--format",
        metavar="FORMAT",
        help=f"INPUT's format: {', '.join(hio.FORMATS)} (default: from INPUT's extension)",
    )


# --- hashexpr jar ------------------------------------------------------------------------------------------


def _add_jar(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "jar",
        help="print the path of hashexpr.jar",
        description="Print the path of hashexpr.jar, for spark-submit --jars or a Spark Connect server.",
        epilog=f'Example: spark-submit --jars "$({PROG} jar)" job.py',
    )
    parser.set_defaults(run=_run_jar)


def _run_jar(args: argparse.Namespace) -> int:
    """``hashexpr jar``: print the jar's absolute path."""
    print(hx.jar_path())
    return 0


# --- hashexpr hash -----------------------------------------------------------------------------------------


def _add_hash(commands: argparse._SubParsersAction, spark_options: argparse.ArgumentParser) -> None:
    formats = ", ".join(hio.FORMATS)
    parser = commands.add_parser(
        "hash",
        parents=[spark_options],
        help="add a record-hash column to a data file",
        description=(
            "Read INPUT, add a column with record_hash of the chosen columns (default: every column, in order) "
            "and write OUTPUT. CSV is read with header=true and inferSchema=true. Spark runs embedded "
            "unless --master names a cluster."
        ),
        epilog=f"Example: {PROG} hash flights.parquet --out flights_hashed.parquet --columns carrier,flight",
    )
    _add_input(parser)
    parser.add_argument("--out", required=True, metavar="OUTPUT", help="the output directory to write")
    parser.add_argument(
        "--columns",
        metavar="A,B,...",
        help="comma-separated columns to hash, in this order (default: every column, as record_hash(*))",
    )
    parser.add_argument(
        "--out-format",
        metavar="FORMAT",
        help=f"OUTPUT's format: {formats} (default: from OUTPUT's extension, else parquet)",
    )
    parser.add_argument(
        "--hex",
        action="store_true",
        help="write the hash as a 32-character upper-case hex string, as SQL hex(), instead of 16 bytes "
        "(required for CSV output)",
    )
    parser.add_argument(
        "--column-name", default="record_hash", help="name of the hash column (default: %(default)s)"
    )
    parser.add_argument(
        "--mode",
        default="error",
        metavar="MODE",
        help="error: fail when OUTPUT exists (default); overwrite: replace it",
    )
    parser.set_defaults(run=_run_hash)


def _run_hash(args: argparse.Namespace) -> int:
    """``hashexpr hash``: read, add the hash column, write, and print a summary."""
    started = time.monotonic()
    # Everything that can be checked without Spark is, so that a typo costs no JVM start.
    hio.check_input(args.input)
    in_fmt = hio.input_format(args.input, args.format)
    out_fmt = hio.output_format(args.out, args.out_format)
    if not args.hex and not hio.holds_binary(out_fmt):
        raise ValueError(f"{out_fmt.upper()} cannot hold the binary hash: add --hex to write it as hex text")
    requested = _parse_columns(args.columns)
    args.mode = hio.check_output(args.out, args.mode, [args.input])

    spark = _session(args.master, args.conf)
    try:
        df = hio.read(spark, args.input, in_fmt)
        columns = resolve_columns(df.columns, requested)
        # Spark matches names ignoring case, so `Record_Hash` in the input would clash too.
        if args.column_name.lower() in {c.lower() for c in df.columns}:
            raise ValueError(
                f"column {args.column_name!r} already exists in {args.input}: name the hash column "
                "otherwise with --column-name"
            )
        hash_column = _hash_column(columns if requested else None, args.hex)
        hashed = df.select("*", hash_column.alias(args.column_name))
        hio.write(hashed, args.out, out_fmt, args.mode)
        rows, distinct = _count_hashes(hio.read(spark, args.out, out_fmt, hashed.schema), args.column_name)
    finally:
        _stop(spark)

    hash_type = "STRING (hex)" if args.hex else "BINARY(16)"
    _print_summary(
        [
            ("input", f"{args.input} ({in_fmt})"),
            ("rows read", f"{rows:,}"),
            ("columns hashed", f"{len(columns)} of {len(df.columns)}: {_preview(columns)}"),
            ("output", f"{args.out} ({out_fmt}), column {args.column_name} {hash_type}"),
            ("distinct hashes", f"{distinct:,} of {rows:,} rows ({_count(rows - distinct, 'duplicate')})"),
            ("elapsed", f"{time.monotonic() - started:.1f} s"),
        ]
    )
    return 0


# --- hashexpr fingerprint ----------------------------------------------------------------------------------


def _add_fingerprint(commands: argparse._SubParsersAction, spark_options: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "fingerprint",
        parents=[spark_options],
        help="print the order-independent fingerprint of a data file",
        description=(
            "Print dataset_fingerprint of INPUT: one value that does not depend on row order or partitioning "
            "and changes when a value, a row, a duplicate, a column name or a type changes. With --by, one "
            "fingerprint per group instead."
        ),
        epilog=f"Example: {PROG} fingerprint flights.parquet --by year,month",
    )
    _add_input(parser)
    parser.add_argument("--by", metavar="A,B,...", help="comma-separated grouping columns")
    parser.add_argument(
        "--limit",
        type=int,
        default=100,
        help="with --by, print at most this many groups (default: %(default)s)",
    )
    parser.set_defaults(run=_run_fingerprint)


def _run_fingerprint(args: argparse.Namespace) -> int:
    """``hashexpr fingerprint``: print the fingerprint of INPUT, or of each group of it."""
    started = time.monotonic()
    hio.check_input(args.input)
    in_fmt = hio.input_format(args.input, args.format)
    by = _parse_columns(args.by)
    spark = _session(args.master, args.conf)
    try:
        df = hio.read(spark, args.input, in_fmt)
        if not by:
            rows = df.count()
            print(hx.dataset_fingerprint(df))
            summary = [
                ("input", f"{args.input} ({in_fmt})"),
                ("rows", f"{rows:,}"),
                ("columns", f"{len(df.columns)}: {_preview(df.columns)}"),
            ]
        else:
            groups = resolve_columns(df.columns, by)
            result = hx.fingerprints_by(df, *groups).orderBy(*map(hnames.column, groups)).collect()
            for row in result[: args.limit]:
                print("\t".join([*(str(row[g]) for g in groups), row[FINGERPRINT_COLUMN]]))
            summary = [
                ("input", f"{args.input} ({in_fmt})"),
                (
                    "groups",
                    f"{len(result):,} by {', '.join(groups)}"
                    + (f" ({args.limit} shown)" if len(result) > args.limit else ""),
                ),
            ]
    finally:
        _stop(spark)
    _print_summary([*summary, ("elapsed", f"{time.monotonic() - started:.1f} s")], stream=sys.stderr)
    return 0


# --- hashexpr diff -----------------------------------------------------------------------------------------


def _add_diff(commands: argparse._SubParsersAction, spark_options: argparse.ArgumentParser) -> None:
    formats = ", ".join(hio.FORMATS)
    parser = commands.add_parser(
        "diff",
        parents=[spark_options],
        help="compare two snapshots of a table by key",
        description=(
            "Compare OLD and NEW by key: count inserts, updates, deletes, duplicate keys and NULL keys, and with "
            "--out write every difference (key, change, changed columns, old and new values). See docs/DIFF.md."
        ),
        epilog=f"Example: {PROG} diff flights_2024-01.parquet flights_2024-02.parquet --key carrier,flight,day",
    )
    parser.add_argument("old", metavar="OLD", help="the earlier snapshot")
    parser.add_argument("new", metavar="NEW", help="the later snapshot")
    parser.add_argument("--key", required=True, metavar="A,B,...", help="comma-separated key columns")
    parser.add_argument(
        "--columns", metavar="A,B,...", help="columns to compare (default: every non-key column)"
    )
    parser.add_argument(
        "--format", metavar="FORMAT", help=f"the inputs' format: {formats} (default: by extension)"
    )
    parser.add_argument(
        "--out", metavar="OUTPUT", help="write the differences here (Parquet unless --out-format)"
    )
    parser.add_argument("--out-format", metavar="FORMAT", help=f"OUTPUT's format: {formats}")
    parser.add_argument("--mode", default="error", metavar="MODE", help="error (default) or overwrite")
    parser.set_defaults(run=_run_diff)


def _run_diff(args: argparse.Namespace) -> int:
    """``hashexpr diff``: print the counts per change type; write the differences with --out."""
    started = time.monotonic()
    for path in (args.old, args.new):
        hio.check_input(path)
    key = _parse_columns(args.key)
    columns = _parse_columns(args.columns) or None
    if args.out:
        out_fmt = hio.output_format(args.out, args.out_format)
        args.mode = hio.check_output(args.out, args.mode, [args.old, args.new])
    spark = _session(args.master, args.conf)
    try:
        old = hio.read(spark, args.old, hio.input_format(args.old, args.format))
        new = hio.read(spark, args.new, hio.input_format(args.new, args.format))
        resolve_columns(old.columns, key)
        differences = hx.diff(old, new, key, columns=columns, include_values=bool(args.out))
        if args.out:
            hio.write(differences, args.out, out_fmt, args.mode)
            counts = hx.summarize(hio.read(spark, args.out, out_fmt, differences.schema))
        else:
            counts = hx.summarize(differences)
    finally:
        _stop(spark)
    summary = [(change, f"{n:,}") for change, n in counts.items()]
    if args.out:
        summary.append(("output", f"{args.out} ({out_fmt})"))
    _print_summary([*summary, ("elapsed", f"{time.monotonic() - started:.1f} s")])
    return 0


# --- hashexpr collisions -----------------------------------------------------------------------------------


def _add_collisions(commands: argparse._SubParsersAction, spark_options: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "collisions",
        parents=[spark_options],
        help="find hash-key collisions and inconsistent hash keys",
        description=(
            "Find hash keys shared by different business keys (collisions) and business keys stored under "
            "different hash keys (inconsistent hashing). The hash key is record_key of --key, or the stored "
            "column --hash-col. See docs/KEYS.md."
        ),
        epilog=f"Example: {PROG} collisions hub_customer.parquet --key customer_id --hash-col hk_customer",
    )
    _add_input(parser)
    parser.add_argument(
        "--key", required=True, metavar="A,B,...", help="comma-separated business-key columns"
    )
    parser.add_argument("--hash-col", metavar="COLUMN", help="a stored hash-key column (default: compute it)")
    parser.add_argument(
        "--limit", type=int, default=20, help="print at most this many (default: %(default)s)"
    )
    parser.set_defaults(run=_run_collisions)


def _run_collisions(args: argparse.Namespace) -> int:
    """``hashexpr collisions``: print each problem; exit 0 only when there is none."""
    started = time.monotonic()
    hio.check_input(args.input)
    key = _parse_columns(args.key)
    spark = _session(args.master, args.conf)
    try:
        df = hio.read(spark, args.input, hio.input_format(args.input, args.format))
        resolve_columns(df.columns, key + ([args.hash_col] if args.hash_col else []))
        problems = hx.find_collisions(df, key, args.hash_col).collect()
    finally:
        _stop(spark)
    for row in problems[: args.limit]:
        keys = ", ".join(str(tuple(k)) for k in row["business_keys"])
        hashes = ", ".join(bytes(h).hex().upper() for h in row["hash_keys"])
        print(f"{row['kind']}\thash keys {hashes}\tbusiness keys {keys}")
    _print_summary(
        [
            ("input", args.input),
            (
                "problems",
                f"{len(problems):,}" + (f" ({args.limit} shown)" if len(problems) > args.limit else ""),
            ),
            ("elapsed", f"{time.monotonic() - started:.1f} s"),
        ],
        stream=sys.stderr,
    )
    return 0 if not problems else EXIT_FAILURE


def _parse_columns(text: str | None) -> list[str]:
    """The names in ``--columns a,b``; an empty list when the option is absent."""
    if text is None:
        return []
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise ValueError(f"--columns has an empty name: {text!r}")
    return names


def resolve_columns(available: Sequence[str], requested: Sequence[str]) -> list[str]:
    """Return the input columns named by ``requested``, as spelled in the input; all of them if none.

    Names match exactly, or else ignoring case, as Spark resolves column names by default.

    Parameters
    ----------
    available : sequence of str
        The input's columns, in order.
    requested : sequence of str
        The names the user gave; empty for every column.

    Returns
    -------
    list of str
        The columns to hash, in the requested order.

    Raises
    ------
    ValueError
        Naming the first unknown column and listing the available ones.

    Examples
    --------
    >>> resolve_columns(["id", "Name"], ["name", "id"])
    ['Name', 'id']
    >>> resolve_columns(["id", "name"], [])
    ['id', 'name']
    >>> resolve_columns(["id", "name"], ["nmae"])
    Traceback (most recent call last):
        ...
    ValueError: unknown column 'nmae'; available columns: id, name
    """
    if not requested:
        return list(available)
    by_lower: dict[str, list[str]] = {}
    for name in available:
        by_lower.setdefault(name.lower(), []).append(name)
    resolved = []
    for name in requested:
        if name in available:
            resolved.append(name)
        elif len(by_lower.get(name.lower(), [])) == 1:
            resolved.append(by_lower[name.lower()][0])
        else:
            raise ValueError(f"unknown column {name!r}; available columns: {_preview(available, limit=50)}")
    return resolved


def _hash_column(columns: Sequence[str] | None, as_hex: bool) -> Column:
    """``record_hash`` of ``columns`` (of ``*`` when ``None``), as 16 bytes or upper-case hex."""
    args = ["*"] if columns is None else [hnames.column(name) for name in columns]
    column = hx.record_hash(*args)
    return F.hex(column) if as_hex else column


def _count_hashes(written: DataFrame, column: str) -> tuple[int, int]:
    """The number of rows and of distinct hashes in the written output."""
    # Reading back one column of the output is cheaper than hashing the input a second time.
    hashes = hnames.column(column)
    row = written.agg(F.count(F.lit(1)).alias("rows"), F.count_distinct(hashes).alias("distinct")).first()
    return int(row["rows"]), int(row["distinct"])


# --- shared helpers ----------------------------------------------------------------------------------------


def _session(master: str, conf: Sequence[tuple[str, str]] = ()) -> SparkSession:
    """Start a Spark session with hashexpr's jar: quiet logs, UTC, a progress bar on a terminal.

    Every subcommand that runs Spark gets its session here; the caller stops it.

    Parameters
    ----------
    master : str
        The Spark master URL, e.g. ``local[*]``.
    conf : sequence of (str, str)
        Settings from ``--conf``; they override the defaults set here.
    """
    # PySpark checks the installed pandas the first time it passes a value to the JVM and warns about its
    # version, although the command line uses no pandas.
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    builder = SparkSession.builder.master(master).appName(PROG)
    if master.startswith("local"):
        # An embedded Spark talks only to itself; binding to the loopback address keeps it working where the
        # host name resolves to an address that is not reachable.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config(
            "spark.driver.bindAddress", "127.0.0.1"
        )
    with tempfile.NamedTemporaryFile("w", prefix="hashexpr-log4j2-", suffix=".properties", delete=False) as f:
        f.write(_LOG4J2_PROPERTIES)
    user = dict(conf)
    # The user's JVM options come after this one, so a log4j configuration of their own still wins.
    java_options = f"-Dlog4j2.configurationFile={f.name} {user.pop('spark.driver.extraJavaOptions', '')}"
    settings = {
        "spark.driver.extraJavaOptions": java_options.strip(),
        # Timestamps without an offset in CSV or JSON are read as UTC, so that a file hashes the same on
        # every machine whatever its time zone.
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        # The progress bar redraws one line with carriage returns: useful on a terminal, noise in a log file.
        "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() else "false",
        **user,
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = hx.configure(builder).getOrCreate()
    finally:
        # The JVM has read the file by the time the session exists (or failed to start).
        os.unlink(f.name)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _print_summary(items: Sequence[tuple[str, str]], stream: TextIO | None = None) -> None:
    """Print ``label  value`` lines (to stdout unless ``stream`` says otherwise), labels padded to one width."""
    width = max(len(label) for label, _ in items)
    for label, value in items:
        print(f"{label:<{width}}  {value}", file=stream or sys.stdout)


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
