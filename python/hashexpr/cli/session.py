"""The Spark session of the ``hashexpr`` command line: quiet, clean, and ended safely on interrupts.

The session gets hashexpr's jar, the libraries of the table formats a run reads or writes, a log4j
configuration that keeps Spark's logs off the terminal, and a warehouse directory of its own, removed
afterwards, so that no ``spark-warehouse/`` or ``derby.log`` is left in the current directory.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import hashexpr as hx
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli import signals as cli_signals
from hashexpr.errors import local_spark_missing

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROG = "hashexpr"

# Spark's default logging prints INFO and WARN lines while it starts, and errors with stack traces when a
# task fails; a command line reports the one error that ended it, itself. A configuration file is the only
# setting log4j reads that early. Spark gives an interactive driver the level of the logger named after its
# main class unless that logger is configured, so those loggers are set too.
_LOG4J2_PROPERTIES = """\
rootLogger.level = {level}
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = {level}
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = {level}
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""

# The forms of master URL Spark accepts; anything else makes its JVM exit before PySpark can say why.
_MASTER = re.compile(
    r"local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|(spark|k8s)://.+"
)

# PySpark's loggers that print a JSON record with a stack trace for every analysis error, and the root logger,
# through which py4j prints tracebacks when an interrupt cuts a call to the JVM short: the command line
# reports these errors itself, in one line.
_PYTHON_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger", "py4j", "")


#: Where a command's Spark runs unless --master says otherwise: embedded, on every core.
DEFAULT_MASTER = "local[*]"

#: SQL settings every command runs with unless a --conf says otherwise: Parquet timestamps are written as
#: TIMESTAMP_MICROS, as the Arrow engine writes them, rather than Spark's default INT96, which other readers
#: take for a time without a time zone (or, in nanoseconds, wrap outside 1677-2262).
COMMAND_SETTINGS = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}


def check_master(master: str) -> str:
    """Return ``master`` when Spark accepts its form; otherwise raise a :class:`ValueError` saying what does.

    Examples
    --------
    >>> check_master("local[4]")
    'local[4]'
    >>> check_master("locl[*]")
    Traceback (most recent call last):
        ...
    ValueError: unknown --master 'locl[*]': use local, local[N], local[*], spark://HOST:PORT, yarn or k8s://URL
    """
    if not _MASTER.fullmatch(master):
        raise ValueError(
            f"unknown --master {master!r}: use local, local[N], local[*], spark://HOST:PORT, yarn or k8s://URL"
        )
    return master


def quiet_python_loggers(verbose: bool) -> None:
    """Keep PySpark's and py4j's own log records off stderr, unless ``verbose``."""
    for name in _PYTHON_LOGGERS:
        # A level above every record's, inherited by the child loggers (py4j.java_gateway, ...); verbose runs
        # get Python's default, warnings and errors.
        _logger(name).setLevel(logging.WARNING if verbose else logging.CRITICAL + 1)


def _logger(name: str) -> logging.Logger:
    """The logger ``name`` as PySpark makes it: its query-context loggers are PySparkLoggers (PySpark 4), which
    take keywords a plain Logger refuses, so one made here first must be one of theirs."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # PySpark 3.5 has plain loggers only
        return logging.getLogger(name)
    return PySparkLogger.getLogger(name) if name.endswith("QueryContextLogger") else logging.getLogger(name)


@contextlib.contextmanager
def spark_session(
    master: str,
    conf: Sequence[tuple[str, str]] = (),
    formats: Sequence[str] = (),
    verbose: bool = False,
) -> Iterator[SparkSession]:
    """Start a Spark session with hashexpr's jar for one command, and stop it afterwards.

    Parameters
    ----------
    master : str
        The Spark master URL, checked with :func:`check_master`.
    conf : sequence of (str, str)
        Settings from ``--conf``; they override the defaults set here.
    formats : sequence of str
        The formats the run reads and writes; a table format brings its library.
    verbose : bool
        Keep Spark's warnings and errors, with their stack traces, on stderr.
    """
    check_master(master)
    _require_pyspark(formats)
    from py4j.protocol import Py4JError

    _refuse_a_running_spark()
    quiet_python_loggers(verbose)
    scratch = tempfile.mkdtemp(prefix="hashexpr-")
    try:
        spark = _start(master, conf, formats, verbose, scratch)
        try:
            yield spark
        finally:
            # After an interrupt or a lost JVM there is no gateway left to stop; that must not hide why.
            with contextlib.suppress(Py4JError, OSError):
                spark.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def given_session(
    spark: SparkSession,
    master: str | None,
    conf: Sequence[tuple[str, str]] = (),
    formats: Sequence[str] = (),
    verbose: bool = False,
) -> Iterator[SparkSession]:
    """Run one command in a session the caller started: the ``--conf`` settings it can take hold for the command.

    A setting the session already has is left as it is; one that a running session takes (SQL settings, and
    :data:`COMMAND_SETTINGS` unless ``conf`` sets them) is set and restored afterwards; one only a new Spark
    takes (``--master``, ``spark.driver.*``, ``spark.jars.*``, a secret the session was not started with) is
    refused, naming it. A table format needs its library in the session (Delta's extension).

    Parameters
    ----------
    spark : :class:`~pyspark.sql.SparkSession`
        The running session, with hashexpr's jar.
    master : str or None
        ``--master``, which a running session cannot take.
    conf : sequence of (str, str)
        Settings from ``--conf`` (and the command's secret).
    formats : sequence of str
        The formats the run reads and writes.
    verbose : bool
        Keep PySpark's own log records of errors (which the command reports itself in one line).
    """
    if master is not None:
        raise ValueError("--master chooses where a new Spark starts: this command runs in the given session")
    if "delta" in formats and hinputs.DELTA_EXTENSION not in str(spark.conf.get("spark.sql.extensions", "")):
        raise ValueError("the given session has no Delta Lake (its extension is not in spark.sql.extensions)")
    restore: dict[str, str | None] = {}
    levels = {name: _logger(name).level for name in _PYTHON_LOGGERS}
    quiet_python_loggers(verbose)
    try:
        for key, value in [*COMMAND_SETTINGS.items(), *conf]:
            current = spark.conf.get(key, None)
            if current == value:
                continue
            if not spark.conf.isModifiable(key):
                raise ValueError(
                    f"--conf {key} takes effect only when Spark starts, and this command runs in a running "
                    "session: set it on that session's builder"
                )
            restore.setdefault(key, current)
            spark.conf.set(key, value)
        cli_signals.spark_started()
        yield spark
    finally:
        for key, value in restore.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
        for name, level in levels.items():
            _logger(name).setLevel(level)


def _require_pyspark(formats: Sequence[str]) -> None:
    """A command that runs Spark, where no PySpark is installed: one line that says what to install."""
    missing = local_spark_missing()
    if missing is not None:
        named = list(dict.fromkeys(formats))
        what = f"reading {' or '.join(named)} data" if named else "this command (it runs Spark)"
        raise missing(what)


def _refuse_a_running_spark() -> None:
    """A command starts its own Spark, and stops it: never one that this process already runs (a notebook's),
    which it would take over and stop."""
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        raise ValueError(
            "a Spark session is already running in this process: pass it to the command, "
            "hashexpr.cli.main(argv, spark=session), instead of starting another"
        )


def _start(
    master: str, conf: Sequence[tuple[str, str]], formats: Sequence[str], verbose: bool, scratch: str
) -> SparkSession:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(PROG)
    if master.startswith("local"):
        # An embedded Spark talks only to itself; binding to the loopback address keeps it working where the
        # host name resolves to an address that is not reachable.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config(
            "spark.driver.bindAddress", "127.0.0.1"
        )
    log_config = os.path.join(scratch, "log4j2.properties")
    with open(log_config, "w", encoding="utf-8") as f:
        f.write(_LOG4J2_PROPERTIES.format(level="warn" if verbose else "off"))
    user = hinputs.session_settings(formats, dict(conf))
    # The user's JVM options come after these, so a log4j configuration of their own still wins.
    java_options = " ".join(
        [
            f"-Dlog4j2.configurationFile={log_config}",
            f"-Dderby.stream.error.file={os.path.join(scratch, 'derby.log')}",
            user.pop("spark.driver.extraJavaOptions", ""),
        ]
    )
    settings: Mapping[str, str] = {
        "spark.driver.extraJavaOptions": java_options.strip(),
        # Spark creates its warehouse directory when a session starts; a run that names no warehouse of its
        # own gets a temporary one, so none is left in the current directory.
        "spark.sql.warehouse.dir": os.path.join(scratch, "warehouse"),
        "spark.ui.enabled": "false",
        # The progress bar redraws one line with carriage returns: useful on a terminal, noise in a log file.
        "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() else "false",
        **COMMAND_SETTINGS,
        **user,
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    builder = hx.configure(builder)
    _launch_jvm(builder._options, verbose)
    spark = builder.getOrCreate()
    cli_signals.spark_started()
    spark.sparkContext.setLogLevel("WARN" if verbose else "OFF")
    return spark


class SparkStartError(RuntimeError):
    """Spark's JVM ended before the session existed; the message is the reason it gave."""


def _launch_jvm(options: Mapping[str, str], verbose: bool) -> None:
    """Start Spark's JVM with its output relayed: what it prints while starting is shown only if it fails.

    While it starts, the JVM prints a notice about the Vector API and, for ``spark.jars.packages``, Ivy's
    whole resolution report; none of it is the command's output. Once the session is up, the JVM's output
    (Spark's progress bar) goes to stderr as it comes; its stdout never mixes with the command's.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setAll(list(options.items()))
    read_end, write_end = os.pipe()
    relay = _Relay(read_end, forward=verbose)
    relay.start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": write_end, "stderr": write_end})
    except PySparkRuntimeError:
        os.close(write_end)
        relay.join(timeout=10)
        raise SparkStartError(f"Spark did not start: {relay.reason()}") from None
    os.close(write_end)
    relay.forward_from_now()
    SparkContext._gateway = gateway
    SparkContext._jvm = gateway.jvm


class _Relay(threading.Thread):
    """Reads the JVM's output: kept while the JVM starts, written to stderr afterwards."""

    # A failed start is explained by its last lines; the rest of a long report is not kept.
    _KEEP = 1 << 16

    def __init__(self, fd: int, forward: bool) -> None:
        super().__init__(name="hashexpr-jvm-output", daemon=True)
        self._fd = fd
        self._forward = forward
        self._kept = bytearray()
        self._lock = threading.Lock()

    def run(self) -> None:
        with os.fdopen(self._fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(1 << 16):
                with self._lock:
                    if self._forward:
                        sys.stderr.buffer.write(chunk)
                        sys.stderr.buffer.flush()
                    else:
                        self._kept += chunk
                        del self._kept[: -self._KEEP]

    def forward_from_now(self) -> None:
        with self._lock:
            self._forward = True
            self._kept.clear()

    def reason(self) -> str:
        """The JVM's own explanation of a failed start: its exception, else its last line."""
        with self._lock:
            lines = [
                line.strip() for line in self._kept.decode("utf-8", "replace").splitlines() if line.strip()
            ]
        for line in reversed(lines):
            found = re.match(r'Exception in thread "main" (?:[\w.$]+: )?(.*)', line)
            if found:
                return found.group(1)
        for line in reversed(lines):
            if line.startswith(("Error:", "error:")):
                return line
        return lines[-1] if lines else "its JVM exited without a message"


def abandon() -> None:
    """After an interrupt or a lost JVM: end Spark's JVM, so no task writes any more; remove unfinished outputs."""
    # A run without Spark (the Arrow engine) never imported PySpark, and may have none to import.
    context = sys.modules.get("pyspark")
    gateway = getattr(getattr(context, "SparkContext", None), "_gateway", None)
    process = getattr(gateway, "proc", None)
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    houtputs.discard_unfinished()
