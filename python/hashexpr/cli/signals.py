"""Ctrl-C and SIGTERM in the ``hashexpr`` command line: Spark's jobs are cancelled, not torn apart.

An exception raised in the middle of a call to the JVM leaves py4j's connection half-read, and what follows
fails with unrelated errors. So while Spark runs, a signal only cancels Spark's jobs, from another thread, and
keeps cancelling any job started after it; the call the run is waiting on then fails, the run unwinds through
its clean-up (which removes a half-written output), and :func:`main` reports the signal. Before Spark runs,
and on a second signal, the signal interrupts at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: The exit status after each signal: 128 + the signal's number, as a shell reports it.
EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Interrupted(BaseException):
    """A signal ended the run; ``signum`` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _State:
    received: int | None = None
    spark_running = False
    finished = threading.Event()


def received() -> int | None:
    """The first signal received during the run, if any."""
    return _State.received


def spark_started() -> None:
    """From now on a signal cancels Spark's jobs; PySpark's own SIGINT handler is replaced again by ours."""
    _State.spark_running = True
    if threading.current_thread() is threading.main_thread():
        for signum in EXIT_STATUS:
            signal.signal(signum, _handle)


@contextmanager
def handled() -> Iterator[None]:
    """Handle SIGINT and SIGTERM as described above for the duration of a run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _State.received, _State.spark_running = None, False
    _State.finished.clear()
    previous = {signum: signal.signal(signum, _handle) for signum in EXIT_STATUS}
    try:
        yield
    finally:
        _State.finished.set()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _handle(signum: int, frame: object) -> None:
    if _State.received is not None or not _State.spark_running:
        _State.received = _State.received or signum
        raise Interrupted(signum)
    _State.received = signum
    threading.Thread(target=_cancel_jobs, name="hashexpr-cancel", daemon=True).start()


def _cancel_jobs() -> None:
    from pyspark import SparkContext

    while not _State.finished.is_set():
        context = SparkContext._active_spark_context
        if context is None:
            return
        try:
            context.cancelAllJobs()
        except Exception:  # noqa: BLE001 - the JVM may be going away; the run reports the signal
            return
        _State.finished.wait(0.5)
