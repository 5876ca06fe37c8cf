"""Faults on a real standalone cluster and a Spark Connect server: every result equals the undisturbed one.

One application (tests/fault_job.py, in its own Python process: this one already has a local SparkContext)
runs on a master with two one-core workers, each on its own loopback address (two hosts to Spark), three
workloads under each of three faults, one phase after the other:

- ``kill``: this process SIGKILLs a worker (and so its executor) while the phase's tasks run (the job holds
  them half-way until then); the phase goes on with the other worker's executor, and the killed worker is
  started again, on which the master places a new executor for the phases after it;
- ``flaky``: the tasks of partitions 0, 3, ... raise in their first attempt, half-way through their rows;
- ``straggle``: one task per phase sleeps in its first attempt, and speculation runs a copy elsewhere.

The workloads are a Parquet write of ``(id, hex(record_hash(*)))``, ``hx.dataset_fingerprint`` and ``hx.diff``;
the local session computes their undisturbed results. Spark's event log shows that each fault happened in its
phase, so no test passes because a fault missed. Speculation is on for the whole application (a static
setting), so it may also copy a slow task of another phase (on a new executor, still cold); its minimum task
runtime of 1 s keeps that rare.

The last test restarts a Spark Connect server between two calls of one client session.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest
from cluster_job import hashed
from fault_job import FAULTS, INJECTED, KILLED, NEEDS_EVERY_EXECUTOR, PHASES, dataset, diff_rows, diff_sides
from pyspark.errors.exceptions.connect import SparkConnectException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from servers import (
    LOOPBACK,
    SHORT_LIVED_JVM,
    ConnectServer,
    ManagedProcess,
    StandaloneCluster,
    connect_mode,
    connect_server,
    free_port,
    spark_env,
    standalone_cluster,
)

import hashexpr as hx

# Processes of its own (killed executors, drivers and servers): make check leaves it out.
pytestmark = pytest.mark.slow

ROWS = 12_000
PARTITIONS = 4
WORKERS = 2
WORKER_HOSTS = ["127.0.0.2", "127.0.0.3"]
#: Time limits, far above what the application takes (one to two minutes on two busy cores): for the whole
#: application, and for a kill phase to reach the point where a worker is killed.
JOB_TIMEOUT_SECONDS = 420
KILL_WAIT_SECONDS = 120
UNDISTURBED_TIMEOUT_SECONDS = 300
PYTHON_SOURCES = Path(__file__).resolve().parents[1] / "python"

#: Aggressive speculation: a copy once a quarter of the tasks finished and a task runs longer than their
#: median, checked every 100 ms. The 1 s floor keeps ordinary tasks (a few hundred ms) from being copied.
SPECULATION = {
    "spark.speculation": "true",
    "spark.speculation.interval": "100ms",
    "spark.speculation.multiplier": "1",
    "spark.speculation.quantile": "0.25",
    "spark.speculation.minTaskRuntime": "1s",
    # Speculate by runtime alone: the straggler sleeps at its first row, which the progress-rate check
    # of "efficiency" speculation would have to wait for executor heartbeats to see.
    "spark.speculation.efficiency.enabled": "false",
}

T = TypeVar("T")


class _Background(Generic[T]):
    """``call`` running in a daemon thread (one that cannot keep the test process alive); ``result`` waits."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._outcome: dict[str, Any] = {}
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], T]) -> None:
        try:
            self._outcome["value"] = call()
        except BaseException as e:  # noqa: BLE001 - raised again by result(), in the caller's thread
            self._outcome["error"] = e

    def join(self, timeout: float) -> None:
        """Wait until the call has returned or raised, or ``timeout`` has passed."""
        self._thread.join(timeout)

    def result(self, timeout: float) -> T:
        """The call's value, or its exception raised again; fail if it has not returned within ``timeout``."""
        self.join(timeout)
        if self._thread.is_alive():
            pytest.fail(f"the call did not return within {timeout:.0f}s")
        if "error" in self._outcome:
            raise self._outcome["error"]
        return self._outcome["value"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A master and two one-core workers on two loopback hosts, stopped (executors included) after the module."""
    for host in WORKER_HOSTS:
        try:
            with socket.socket() as s:
                s.bind((host, 0))
        except OSError as e:
            # Linux routes all of 127.0.0.0/8 to loopback; macOS needs `sudo ifconfig lo0 alias 127.0.0.2 up`.
            pytest.fail(f"the workers need the loopback address {host}, which this machine lacks: {e}")
    work_dir = tmp_path_factory.mktemp("faults-cluster")
    with standalone_cluster(work_dir, WORKERS, worker_hosts=WORKER_HOSTS, env=SHORT_LIVED_JVM) as running:
        yield running


@dataclass
class PhaseEvents:
    """What Spark's event log records for the tasks of one phase."""

    #: Task attempts by how they ended: ``Success``, ``ExecutorLostFailure``, ``ExceptionFailure``, ...
    ended: Counter[str] = field(default_factory=Counter)
    #: Failed attempts whose error is the injected one.
    injected_failures: int = 0
    speculative_launched: int = 0
    speculative_succeeded: int = 0
    #: Tasks whose speculative copy succeeded and whose original attempt was killed for it.
    copies_won: int = 0
    #: Executors the application lost while the phase ran.
    executors_removed: list[str] = field(default_factory=list)


@dataclass
class FaultRun:
    """The application's outputs, its report, the kills this process made and the event log per phase."""

    out: Path
    report: dict[str, Any]
    kills: dict[str, dict[str, Any]]
    events: dict[str, PhaseEvents]


def _rest(ui_port: int, path: str) -> Any:
    """GET the driver's REST API (``/api/v1/...``); None while the driver's UI is not up or not ready."""
    try:
        with urllib.request.urlopen(f"http://{LOOPBACK}:{ui_port}/api/v1/{path}", timeout=5) as response:
            return json.load(response)
    except (OSError, ValueError):  # ValueError: "Spark is starting up", plain text, while it starts
        return None


def _poll(find: Callable[[], T | None], job: ManagedProcess, what: str, timeout: float) -> T:
    """Poll ``find`` every 100 ms until it returns a value; fail when the job exits or at ``timeout``."""
    deadline = time.monotonic() + timeout
    while (found := find()) is None:
        if job.popen.poll() is not None:
            pytest.fail(
                f"the fault job exited (code {job.popen.returncode}) before {what}:\n{job.log_tail()}"
            )
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not after {timeout:.0f}s; job log:\n{job.log_tail()}")
        time.sleep(0.1)
    return found


def _kill_point(ui_port: int, app_id: str, phase: str) -> dict[str, Any] | None:
    """The phase's running job once a task of it finished and both executors run one.

    With one core per executor, two running tasks mean one on each worker: the worker killed next has a task
    in flight (tests/fault_job.py holds them until the kill). A job of a later phase means this phase ended
    before that point, which fails the test.
    """
    jobs = _rest(ui_port, f"applications/{app_id}/jobs") or []
    order = [f"{fault}-{workload}" for fault, workload in PHASES]
    if any(j.get("jobGroup") in order[order.index(phase) + 1 :] for j in jobs):
        pytest.fail(f"phase {phase} finished before a worker could be killed in it")
    running = (j for j in jobs if j.get("jobGroup") == phase and j["status"] == "RUNNING")
    return next((j for j in running if j["numCompletedTasks"] >= 1 and j["numActiveTasks"] >= WORKERS), None)


def _inject_kills(
    cluster: StandaloneCluster, job: ManagedProcess, ui_port: int, out: Path
) -> dict[str, dict[str, Any]]:
    """In each ``kill-*`` phase, SIGKILL a worker mid-job and start it again (unless no later phase needs it);
    return what was seen."""
    apps = _poll(
        lambda: _rest(ui_port, "applications") or None, job, "the driver's REST API", KILL_WAIT_SECONDS
    )
    app_id = apps[0]["id"]
    kills = {}
    for n, (fault, workload) in enumerate(PHASES):
        if fault != "kill":
            continue
        phase = f"{fault}-{workload}"
        running = _poll(
            lambda phase=phase: _kill_point(ui_port, app_id, phase),
            job,
            f"tasks running in {phase}",
            KILL_WAIT_SECONDS,
        )
        # Always worker 0 (by then a new one): the other's executor, warm, carries the phase on.
        worker = 0
        cluster.kill_worker(worker)
        kills[phase] = {
            "worker": worker,
            "job": running["jobId"],
            "tasks_completed": running["numCompletedTasks"],
            "tasks_running": running["numActiveTasks"],
            "tasks": running["numTasks"],
        }
        # Lets the phase's held tasks go on.
        (out / "markers" / phase / KILLED).touch()
        if any(later in NEEDS_EVERY_EXECUTOR for later, _ in PHASES[n + 1 :]):
            cluster.restart_worker(worker)
    return kills


def _phase_events(events_dir: Path) -> dict[str, PhaseEvents]:
    """Read the application's event log into one ``PhaseEvents`` per phase (job group)."""
    (log,) = events_dir.iterdir()
    stage_phase: dict[int, str] = {}
    spans: dict[str, list[int]] = {}
    job_phase: dict[int, str] = {}
    removed: list[tuple[int, str]] = []
    phases: dict[str, PhaseEvents] = {}
    # Per task (stage, stage attempt, index): the phase, and how its speculative and original attempts ended.
    attempts: dict[tuple[int, int, int], tuple[str, set[tuple[bool, str]]]] = {}
    for line in log.read_text().splitlines():
        event = json.loads(line)
        kind = event["Event"]
        if kind == "SparkListenerJobStart":
            phase = event["Properties"].get("spark.jobGroup.id")
            job_phase[event["Job ID"]] = phase
            stage_phase.update(dict.fromkeys(event["Stage IDs"], phase))
            spans.setdefault(phase, [event["Submission Time"], event["Submission Time"]])
        elif kind == "SparkListenerJobEnd":
            spans[job_phase[event["Job ID"]]][1] = event["Completion Time"]
        elif kind == "SparkListenerExecutorRemoved":
            removed.append((event["Timestamp"], event["Executor ID"]))
        elif kind in ("SparkListenerTaskStart", "SparkListenerTaskEnd"):
            found = phases.setdefault(stage_phase[event["Stage ID"]], PhaseEvents())
            info = event["Task Info"]
            if kind == "SparkListenerTaskStart":
                found.speculative_launched += info["Speculative"]
                continue
            reason = event["Task End Reason"]
            task = (event["Stage ID"], event["Stage Attempt ID"], info["Index"])
            attempts.setdefault(task, (stage_phase[event["Stage ID"]], set()))[1].add(
                (info["Speculative"], reason["Reason"])
            )
            found.ended[reason["Reason"]] += 1
            found.injected_failures += INJECTED in reason.get("Description", "")
            found.speculative_succeeded += info["Speculative"] and reason["Reason"] == "Success"
    for phase, ends in attempts.values():
        phases[phase].copies_won += {(True, "Success"), (False, "TaskKilled")} <= ends
    for phase, (began, ended) in spans.items():
        found = phases.setdefault(phase, PhaseEvents())
        found.executors_removed = [e for t, e in removed if began <= t <= ended]
    return phases


@pytest.fixture(scope="module")
def run(
    cluster: StandaloneCluster,
    undisturbed: _Background[dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> FaultRun:
    """Run tests/fault_job.py on the cluster, killing workers in its kill phases; return what it did.

    It takes ``undisturbed`` so that the local session starts on those results first, and works on them
    while the job runs.
    """
    out = tmp_path_factory.mktemp("faults-job")
    pythonpath = os.pathsep.join(filter(None, [str(PYTHON_SOURCES), os.environ.get("PYTHONPATH")]))
    env = spark_env({"PYTHONPATH": pythonpath, "PYSPARK_PYTHON": sys.executable, **SHORT_LIVED_JVM})
    ui_port = free_port()
    args = [
        sys.executable,
        str(Path(__file__).with_name("fault_job.py")),
        *("--master", cluster.master_url, "--out", str(out), "--ui-port", str(ui_port)),
        *("--rows", str(ROWS), "--partitions", str(PARTITIONS)),
        *(f"--conf={key}={value}" for key, value in SPECULATION.items()),
    ]
    started = time.monotonic()
    job = ManagedProcess.start("fault job", args, out / "job.log", env)
    try:
        kills = _inject_kills(cluster, job, ui_port, out)
        remaining = JOB_TIMEOUT_SECONDS - (time.monotonic() - started)
        try:
            code = job.popen.wait(timeout=max(remaining, 1))
        except subprocess.TimeoutExpired:
            pytest.fail(f"the fault job did not finish in {JOB_TIMEOUT_SECONDS}s; log:\n{job.log_tail()}")
        if code != 0:
            pytest.fail(f"the fault job failed with exit code {code}; log:\n{job.log_tail()}")
    finally:
        # Ends the job's driver JVM too, should the Python process have left it behind.
        job.stop()
    report = json.loads((out / "report.json").read_text())
    return FaultRun(out, report, kills, _phase_events(out / "events"))


@pytest.fixture(scope="module")
def undisturbed(spark: SparkSession) -> Iterator[_Background[dict[str, Any]]]:
    """The three workloads' results from the local session: ``(id, h)`` rows (cached), fingerprint, diff rows.

    Computed in the background: the fault job, which requests this fixture first, leaves the local session
    idle and the cores not always busy.
    """
    data = dataset(spark, ROWS, PARTITIONS)
    written = hashed(data).cache()

    def compute() -> dict[str, Any]:
        written.count()
        fingerprint = hx.dataset_fingerprint(data)
        return {"write": written, "fingerprint": fingerprint, "diff": diff_rows(*diff_sides(data, ROWS))}

    background = _Background(compute)
    yield background
    background.join(UNDISTURBED_TIMEOUT_SECONDS)
    written.unpersist()


def _check_fault(run: FaultRun, fault: str, workload: str) -> str:
    """Assert that ``fault`` really hit the phase; return a line saying what happened, for the test's output."""
    phase = f"{fault}-{workload}"
    seen = run.events[phase]
    if fault == "kill":
        kill = run.kills[phase]
        # The executor went away while the phase ran, and the attempts it was running failed with it.
        assert seen.executors_removed, (phase, seen)
        assert seen.ended["ExecutorLostFailure"] >= 1, (phase, seen)
        return (
            f"{phase}: killed worker {kill['worker']} with {kill['tasks_completed']}/{kill['tasks']} tasks of job "
            f"{kill['job']} done and {kill['tasks_running']} running; executors lost {seen.executors_removed}; "
            f"task ends {dict(seen.ended)}"
        )
    if fault == "flaky":
        assert seen.injected_failures >= 1, (phase, seen)
        assert seen.ended["ExceptionFailure"] == seen.injected_failures, (phase, seen)
        return (
            f"{phase}: {seen.injected_failures} injected task failures, retried; task ends {dict(seen.ended)}"
        )
    # A copy ran on the other host and won over the straggling original, which was killed.
    assert seen.copies_won >= 1, (phase, seen)
    return (
        f"{phase}: {seen.speculative_launched} speculative attempts, {seen.speculative_succeeded} succeeded, "
        f"{seen.copies_won} won over a killed original; task ends {dict(seen.ended)}; "
        f"{run.report['seconds'][phase]}s"
    )


def _mismatches(expected: DataFrame, actual: DataFrame) -> DataFrame:
    """Rows whose id is missing on either side, or whose hashes differ."""
    joined = expected.alias("e").join(actual.alias("a"), on="id", how="full_outer")
    return joined.where(~F.col("e.h").eqNullSafe(F.col("a.h"))).select("id", "e.h", "a.h")


@pytest.mark.parametrize("fault", FAULTS)
def test_write_under_fault_has_every_row_once(
    spark: SparkSession, run: FaultRun, undisturbed: _Background[dict[str, Any]], fault: str
) -> None:
    """The Parquet write holds every input row exactly once, with the hash the undisturbed run gives it."""
    out = run.out / f"{fault}-write"
    # The job committed: no attempt's files were left behind in the output.
    assert (out / "_SUCCESS").exists() and not (out / "_temporary").exists(), sorted(os.listdir(out))
    actual = spark.read.parquet(str(out))
    counts = actual.agg(F.count("*").alias("rows"), F.count_distinct("id").alias("ids")).first()
    assert (counts.rows, counts.ids) == (ROWS, ROWS)
    bad = _mismatches(undisturbed.result(UNDISTURBED_TIMEOUT_SECONDS)["write"], actual)
    assert bad.isEmpty(), bad.limit(5).collect()
    print(_check_fault(run, fault, "write"))


@pytest.mark.parametrize("fault", FAULTS)
def test_fingerprint_under_fault_is_undisturbed(
    run: FaultRun, undisturbed: _Background[dict[str, Any]], fault: str
) -> None:
    """hx.dataset_fingerprint gives the undisturbed fingerprint."""
    assert (
        run.report[f"{fault}-fingerprint"] == undisturbed.result(UNDISTURBED_TIMEOUT_SECONDS)["fingerprint"]
    )
    print(_check_fault(run, fault, "fingerprint"))


@pytest.mark.parametrize("fault", FAULTS)
def test_diff_under_fault_is_undisturbed(
    run: FaultRun, undisturbed: _Background[dict[str, Any]], fault: str
) -> None:
    """hx.diff finds the undisturbed inserts, updates and deletes, with the same changed columns and values."""
    expected = undisturbed.result(UNDISTURBED_TIMEOUT_SECONDS)["diff"]
    assert {row[1] for row in expected} == {"insert", "update", "delete"}
    assert run.report[f"{fault}-diff"] == expected
    print(_check_fault(run, fault, "diff"))


#: Client-side rows for the Connect restart: they travel in the plan, so a new session needs nothing else.
LOCAL_ROWS = [(i, f"name-{i}" if i % 4 else None, i * 0.5) for i in range(200)]
LOCAL_SCHEMA = "id INT, name STRING, x DOUBLE"
CALL_TIMEOUT_SECONDS = 60


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    """A Spark Connect server with hashexpr's jar (restarted by the test that uses it)."""
    conf = {"spark.sql.session.timeZone": "UTC"}
    log_dir = tmp_path_factory.mktemp("faults-connect")
    with connect_server(log_dir, [hx.jar_path()], conf=conf, env=SHORT_LIVED_JVM) as server:
        yield server


def _results(session: SparkSession) -> dict[str, Any]:
    """record_hash of client-side rows and their fingerprint."""
    local = session.createDataFrame(LOCAL_ROWS, LOCAL_SCHEMA)
    hashes = {r.id: r.h for r in local.select("id", F.hex(hx.record_hash("*")).alias("h")).collect()}
    return {"hashes": hashes, "fingerprint": hx.dataset_fingerprint(local)}


def _within(seconds: float, call: Callable[[], T]) -> T:
    """Run ``call``; fail if it takes longer than ``seconds`` (a hang must not stall CI)."""
    return _Background(call).result(seconds)


def _chain(error: BaseException) -> list[BaseException]:
    errors = [error]
    while (error := error.__cause__ or error.__context__) is not None:
        errors.append(error)
    return errors


def test_connect_server_restart_fails_the_old_session_and_a_new_session_reruns(
    connect: ConnectServer,
) -> None:
    """After a restart of the Connect server, the old session's next call fails at once with a Spark Connect
    error saying the server restarted; a new session to the restarted server gives the same results."""
    with connect_mode():
        before_session = SparkSession.builder.remote(connect.url).create()
        try:
            before = _within(CALL_TIMEOUT_SECONDS, lambda: _results(before_session))
            connect.restart()
            with pytest.raises(SparkConnectException) as raised:
                _within(CALL_TIMEOUT_SECONDS, lambda: _results(before_session))
        finally:
            before_session.stop()
        # The server answers INVALID_HANDLE.SESSION_CHANGED. pyspark's client then marks the session closed
        # and, fetching that error's details, raises NO_ACTIVE_SESSION, with the server's error as context.
        messages = [str(e) for e in _chain(raised.value)]
        assert any("INVALID_HANDLE.SESSION_CHANGED" in m and "restarted" in m for m in messages), messages
        assert "create a new Spark session" in str(raised.value) or "reconnect" in str(raised.value)
        after_session = SparkSession.builder.remote(connect.url).create()
        try:
            after = _within(CALL_TIMEOUT_SECONDS, lambda: _results(after_session))
        finally:
            after_session.stop()
    assert after == before
    assert len(set(before["hashes"].values())) == len(LOCAL_ROWS) and before["fingerprint"].startswith("hx1:")
    print(
        f"restart: {type(raised.value).__name__}: {raised.value}; rerun equal: {len(after['hashes'])} hashes"
    )
