"""The ``hashexpr`` command line's entry point: :func:`main`, and the parser it reads the arguments with.

:func:`build_parser` assembles the parser from the commands (:mod:`hashexpr.cli.commands`, one module each);
:func:`main` runs the chosen command, prints its :class:`~hashexpr.cli.outcome.Outcome`, and turns a failure
into an exit status and one line on stderr.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import hashexpr as hx
from hashexpr.cli import session as cli_session
from hashexpr.cli import signals as cli_signals
from hashexpr.cli.commands.collisions import add_collisions
from hashexpr.cli.commands.diff import add_diff
from hashexpr.cli.commands.fingerprint import add_fingerprint
from hashexpr.cli.commands.hash import add_hash
from hashexpr.cli.commands.jar import add_jar
from hashexpr.cli.commands.reconcile import add_reconcile
from hashexpr.cli.commands.sql import add_sql
from hashexpr.cli.grammar import common_options
from hashexpr.cli.outcome import EXIT_SPARK, EXIT_USAGE, Outcome
from hashexpr.cli.report import error, print_json, print_summary
from hashexpr.cli.session import PROG
from hashexpr.errors import ExtraMissingError, PySparkMissingError, SchemaMismatchError, SystemFailure

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Errors caused by what the user asked for (and PySpark's own: _pyspark_error).
_USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError)

# Spark errors about the input data itself (a file that is not what its format says, a malformed record in
# FAILFAST mode): input errors, though Spark finds them only while a job runs.
_INPUT_ERROR_CLASSES = ("FAILED_READ_FILE", "MALFORMED_RECORD_IN_PARSING", "MALFORMED_CSV_RECORD")


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
                print_json({"command": args.command, "exit_status": status, "error": message})
            error(message)
            return status
    elapsed = time.monotonic() - started
    if as_json:
        print_json(
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
            print_summary([*outcome.summary, ("elapsed", f"{elapsed:.1f} s")], stream)
            for line in outcome.after:
                print(line, file=stream)
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
    if isinstance(exc, (SystemFailure, TimeoutError)):
        # A database that failed while it answered: its message names it.
        return EXIT_SPARK, _first_line(exc)
    if isinstance(exc, SchemaMismatchError):
        problems = "; ".join(exc.problems)
        return EXIT_USAGE, (
            f"the schemas of old and new differ: {problems}. Pass --columns A,B,... to compare chosen "
            "columns (present on both sides), or --exclude the others"
        )
    if isinstance(exc, (PySparkMissingError, ExtraMissingError)):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, _USER_ERRORS) or _kind(exc, "pyspark.errors.exceptions.base", "PySparkException"):
        return EXIT_USAGE, _first_line(exc)
    if _kind(exc, "py4j.protocol", "Py4JJavaError"):
        message = _java_message(exc.java_exception)
        status = EXIT_USAGE if any(f"[{c}" in message for c in _INPUT_ERROR_CLASSES) else EXIT_SPARK
        return status, message
    if _kind(exc, "py4j.protocol", "Py4JError") or isinstance(exc, ConnectionError):
        # The JVM went away (killed, out of memory): what it was writing is unfinished.
        cli_session.abandon()
        return EXIT_SPARK, f"Spark's JVM ended unexpectedly ({_first_line(exc)})"
    if isinstance(exc, Exception):
        return EXIT_SPARK, f"{type(exc).__name__}: {_first_line(exc)}"
    raise exc


def _kind(exc: BaseException, module: str, name: str) -> bool:
    """Whether ``exc`` is an instance of the class ``module.name``, told without importing it: a run that needs
    no Spark imports neither PySpark nor py4j."""
    return any(k.__name__ == name and k.__module__ == module for k in type(exc).__mro__)


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
        except Exception as error:
            if not _kind(error, "py4j.protocol", "Py4JError"):
                raise
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
    common = common_options()
    add_jar(commands)
    add_hash(commands, common)
    add_fingerprint(commands, common)
    add_diff(commands, common)
    add_collisions(commands, common)
    add_sql(commands)
    add_reconcile(commands)
    return parser


def _first_line(exc: object) -> str:
    """The first non-empty line of an error's message: Spark's messages go on with plans and traces."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__
