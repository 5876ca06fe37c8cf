"""Start and stop real Spark servers for tests: a Spark Connect server and a standalone cluster.

Every server runs in its own process group, so stopping it also ends the JVMs it started (a worker's
executors). Every process binds to loopback only: this machine's hostname does not resolve to a reachable
address, and tests must not reach beyond it. The context managers stop what they started even when a start
fails half-way or the test body raises.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

LOOPBACK = "127.0.0.1"

#: Server JVMs stay small: the tests share two cores and memory with the pytest process's own local Spark.
SERVER_MEMORY = "512m"

#: How many characters of a server's log an error message carries.
LOG_TAIL_CHARS = 6000

#: Environment for JVMs that live for seconds to a few minutes, as in a test: the C1 compiler alone and the
#: serial collector halve the CPU a Spark JVM spends starting and warming up, which on two cores is most of
#: a short test's time. Every JVM started with it reads it (``JAVA_TOOL_OPTIONS``), launchers included.
#: C1 alone would also shrink the code cache to 48 MB, which a server compiling many sessions' generated
#: classes fills: the JVM then fails to link a method handle and Spark stops its context, so the code cache
#: keeps the tiered JVM's size (reserved address space, committed only as it fills).
SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=240m"
SHORT_LIVED_JVM = {"JAVA_TOOL_OPTIONS": SHORT_LIVED_JVM_OPTIONS}


def spark_home() -> str:
    """Return the Spark distribution inside the installed ``pyspark`` wheel (it ships bin/ and jars/)."""
    import pyspark

    return os.path.dirname(pyspark.__file__)


def free_port() -> int:
    """Return a TCP port on loopback that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def checkout_pythonpath() -> str:
    """PYTHONPATH for a server's Python workers: this checkout's hashexpr first, as a cluster's installed wheel
    would be (another line's virtualenv has it on a relative PYTHONPATH only)."""
    import hashexpr

    package = str(Path(hashexpr.__file__).resolve().parents[1])
    return os.pathsep.join(filter(None, [package, os.environ.get("PYTHONPATH")]))


def spark_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the environment for a Spark process: this one's, with Spark bound to loopback."""
    env = dict(os.environ)
    env.update(
        SPARK_HOME=spark_home(),
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_LOCAL_HOSTNAME=LOOPBACK,
        # The daemons' own heap (master, worker); their default of 1g is more than they need here.
        SPARK_DAEMON_MEMORY=SERVER_MEMORY,
    )
    # A SPARK_CONF_DIR or SPARK_REMOTE of the developer's shell must not change what the tests start.
    for name in ("SPARK_CONF_DIR", "SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED"):
        env.pop(name, None)
    if extra:
        env.update(extra)
    return env


def _tail(path: Path) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"<no log: {e}>"
    return text[-LOG_TAIL_CHARS:]


@dataclass
class ManagedProcess:
    """A process (a server, or a job) started in its own process group, with stdout and stderr in ``log``."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    _log_file: IO[bytes] = field(repr=False)

    @classmethod
    def start(cls, name: str, args: Sequence[str], log: Path, env: Mapping[str, str]) -> ManagedProcess:
        """Start ``args`` in a new session (and so a new process group), logging to ``log``.

        The process runs in the log's directory, so that what Spark writes to its working directory
        (``spark-warehouse``, ``metastore_db``) lands there, not in the checkout.
        """
        log.parent.mkdir(parents=True, exist_ok=True)
        log_file = open(log, "wb")  # noqa: SIM115 - closed by stop(), which the context managers call
        try:
            popen = subprocess.Popen(
                list(args),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env=dict(env),
                cwd=log.parent,
                start_new_session=True,
            )
        except BaseException:
            log_file.close()
            raise
        return cls(name, popen, log, log_file)

    def log_tail(self) -> str:
        """Return the end of the process's log, for error messages."""
        return _tail(self.log)

    def check_alive(self) -> None:
        """Raise when the process has exited, with its exit code and log."""
        code = self.popen.poll()
        if code is not None:
            raise RuntimeError(f"{self.name} exited with code {code}; log {self.log}:\n{self.log_tail()}")

    def stop(self, grace_seconds: float = 20.0) -> None:
        """Stop the whole process group: SIGTERM (Spark's shutdown hooks run), then SIGKILL after a grace."""
        if self._log_file.closed:
            # Stopped before: its group id may since have gone to another process group.
            return
        # The process leads its own session, so its group id is its pid, even after it has been reaped.
        pgid = self.popen.pid
        _signal_group(pgid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            pass
        # Also after a clean exit of the leader: children such as executors may still be in the group.
        _signal_group(pgid, signal.SIGKILL)
        self.popen.wait(timeout=grace_seconds)
        self._log_file.close()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _wait_until(
    ready: Callable[[], bool], processes: Sequence[ManagedProcess], what: str, timeout: float
) -> None:
    """Poll ``ready`` until it holds; fail early when a process dies, or at ``timeout`` with the logs."""
    deadline = time.monotonic() + timeout
    while True:
        for p in processes:
            p.check_alive()
        if ready():
            return
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {p.name} ({p.log}):\n{p.log_tail()}" for p in processes)
            raise TimeoutError(f"{what} not ready after {timeout:.0f}s\n{logs}")
        time.sleep(0.25)


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=1):
            return True
    except OSError:
        return False


@dataclass
class ConnectServer:
    """A Spark Connect server process; ``wait_ready`` returns once its gRPC port accepts connections."""

    port: int
    process: ManagedProcess
    timeout: float
    #: The command and environment that started the server, for ``restart``.
    args: list[str] = field(default_factory=list, repr=False)
    env: dict[str, str] = field(default_factory=spark_env, repr=False)
    restarts: int = 0

    @property
    def url(self) -> str:
        """The ``sc://`` URL clients connect to."""
        return f"sc://{LOOPBACK}:{self.port}"

    def wait_ready(self) -> ConnectServer:
        """Wait until the server accepts connections; fail with its log if it exits or takes too long."""
        _wait_until(lambda: _accepts_connections(self.port), [self.process], self.process.name, self.timeout)
        return self

    def restart(self) -> ConnectServer:
        """Stop the server and start it again on the same port with the same settings; wait until it is ready.

        The new server knows none of the old one's sessions. Its log is a new file next to the first one.
        """
        self.process.stop()
        self.restarts += 1
        log = self.process.log.with_name(f"connect-server-{self.port}-restart-{self.restarts}.log")
        self.process = ManagedProcess.start(self.process.name, self.args, log, self.env)
        return self.wait_ready()


def _connect_server_jars() -> list[str]:
    """The Spark Connect server's own jar when pyspark does not carry it (Spark 3.5: ``make`` downloads it)."""
    if list(Path(spark_home(), "jars").glob("spark-connect_*.jar")):
        return []
    downloaded = sorted(Path(__file__).resolve().parents[1].glob("target/connect/spark-connect_*.jar"))
    if not downloaded:
        raise FileNotFoundError(
            "this pyspark has no Spark Connect server jar and target/connect/ has none: `make venv-3.5` downloads it"
        )
    return [str(downloaded[-1])]


def _start_connect_server(
    log_dir: Path,
    jars: Sequence[str],
    conf: Mapping[str, str] | None,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> ConnectServer:
    port = free_port()
    settings = {
        "spark.connect.grpc.binding.address": LOOPBACK,
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        **(conf or {}),
    }
    args = [
        os.path.join(spark_home(), "bin", "spark-submit"),
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master",
        "local[2]",
        "--driver-memory",
        SERVER_MEMORY,
        "--name",
        f"hashexpr-tests-connect-{port}",
    ]
    jars = [*jars, *_connect_server_jars()]
    if jars:
        args += ["--jars", ",".join(jars)]
    for key, value in settings.items():
        args += ["--conf", f"{key}={value}"]
    environment = spark_env(env)
    process = ManagedProcess.start(
        f"Spark Connect server on port {port}", args, log_dir / f"connect-server-{port}.log", environment
    )
    return ConnectServer(port, process, timeout, args, environment)


@contextmanager
def connect_servers(
    log_dir: Path,
    jar_sets: Sequence[Sequence[str]],
    conf: Mapping[str, str] | None = None,
    timeout: float = 180.0,
    wait: bool = True,
    env: Mapping[str, str] | None = None,
) -> Iterator[list[ConnectServer]]:
    """Run Spark Connect servers (``local[2]`` each) for the duration of the ``with`` block.

    All start at once, so their JVMs start in parallel, and all are stopped at the end of the block.

    Parameters
    ----------
    log_dir : Path
        Where the servers' logs go (``connect-server-<port>.log``).
    jar_sets : sequence of sequences of str
        One entry per server: the jars for its ``--jars``; an empty one starts a plain Spark.
    conf : mapping, optional
        More ``--conf`` settings, for every server.
    timeout : float
        Seconds to wait for a server's gRPC port to accept connections.
    wait : bool
        Wait for every server before entering the block. Without, call ``wait_ready`` before using one:
        the caller can do other work while the servers start.
    env : mapping, optional
        More environment variables for every server (e.g. ``SHORT_LIVED_JVM``).
    """
    with ExitStack() as stack:
        servers = []
        for jars in jar_sets:
            server = _start_connect_server(log_dir, jars, conf, timeout, env)
            # The server's process at the end of the block: after a restart, not the one started here.
            stack.callback(lambda server=server: server.process.stop())
            servers.append(server)
        if wait:
            for server in servers:
                server.wait_ready()
        yield servers


@contextmanager
def connect_server(
    log_dir: Path,
    jars: Sequence[str] = (),
    conf: Mapping[str, str] | None = None,
    timeout: float = 180.0,
    env: Mapping[str, str] | None = None,
) -> Iterator[ConnectServer]:
    """Run one Spark Connect server, ready, for the duration of the ``with`` block; see ``connect_servers``."""
    with connect_servers(log_dir, [jars], conf, timeout, env=env) as (server,):
        yield server


#: The variable through which a process's PySpark is in Spark Connect mode.
CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"


@contextmanager
def connect_mode() -> Iterator[None]:
    """Restore this process's PySpark mode after the block, in which it creates Spark Connect sessions.

    Creating a Connect session sets ``SPARK_CONNECT_MODE_ENABLED`` in ``os.environ``, after which
    ``pyspark.sql.functions`` build Connect columns, which classic DataFrames reject (tests/test_connect.py).
    Sessions made in the block are for the block: stop them before it ends.
    """
    before = os.environ.get(CONNECT_MODE)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(CONNECT_MODE, None)
        else:
            os.environ[CONNECT_MODE] = before


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def _started_port(log: Path, service: str) -> int | None:
    """The port Spark's web UI ``service`` bound, from its process's log. Another process can take the port
    free_port gave between that call and the bind (a Spark UI of a concurrent test stream); Spark then binds the
    next port, and the one asked for answers with someone else's page."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    found = re.findall(rf"Successfully started service '{service}' on port (\d+)", text)
    return int(found[-1]) if found else None


@dataclass
class StandaloneCluster:
    """A running standalone cluster: one master and its workers (``processes``: the master, then each worker)."""

    port: int
    webui_port: int
    worker_webui_ports: list[int]
    processes: list[ManagedProcess]
    #: The command and environment that started each worker, for ``restart_worker``.
    worker_commands: list[tuple[list[str], dict[str, str]]] = field(default_factory=list, repr=False)
    worker_restarts: int = 0

    @property
    def master_url(self) -> str:
        """The ``spark://`` URL applications use as their master."""
        return f"spark://{LOOPBACK}:{self.port}"

    def master_state(self) -> Any:
        """The master's state: its web UI's ``/json/`` (workers, active and completed applications)."""
        port = _started_port(self.processes[0].log, "MasterUI") or self.webui_port
        return _get_json(f"http://{LOOPBACK}:{port}/json/")

    def worker_states(self) -> list[Any]:
        """Each worker's state: its web UI's ``/json/`` (its executors, running and finished)."""
        ports = [
            _started_port(worker.log, "WorkerUI") or asked
            for worker, asked in zip(self.processes[1:], self.worker_webui_ports)
        ]
        return [_get_json(f"http://{LOOPBACK}:{p}/json/") for p in ports]

    def alive_workers(self) -> int:
        """How many workers the master has registered as ALIVE (0 while its web UI is not up)."""
        try:
            state = self.master_state()
        except (OSError, ValueError):  # not up yet, or not yet known to be elsewhere than asked
            return 0
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker ``i`` and everything it started (its executors and their Python workers) at once.

        Nothing shuts down cleanly: the master and the applications learn of the loss from dropped connections.
        """
        worker = self.processes[i + 1]
        _signal_group(worker.popen.pid, signal.SIGKILL)
        worker.stop()

    def restart_worker(self, i: int) -> ManagedProcess:
        """Start worker ``i`` again (same host, web UI port and work directory; a new log) after ``kill_worker``.

        It registers with the master as a new worker, on which the master places executors again.
        """
        old = self.processes[i + 1]
        if old.popen.poll() is None:
            raise RuntimeError(f"{old.name} is still running: kill_worker({i}) first")
        self.worker_restarts += 1
        args, env = self.worker_commands[i]
        log = old.log.with_name(f"worker-{i}-restart-{self.worker_restarts}.log")
        self.processes[i + 1] = ManagedProcess.start(old.name, args, log, env)
        return self.processes[i + 1]


@contextmanager
def standalone_cluster(
    work_dir: Path,
    workers: int = 2,
    worker_cores: int = 1,
    worker_memory: str = "1g",
    timeout: float = 180.0,
    worker_hosts: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[StandaloneCluster]:
    """Run a standalone master and ``workers`` workers for the duration of the ``with`` block.

    Parameters
    ----------
    work_dir : Path
        Logs go here, and each worker's ``--work-dir`` (its executors' directories and logs) under it,
        rather than into the pyspark installation, Spark's default.
    workers, worker_cores, worker_memory
        How many workers, and the cores and memory each offers to executors.
    timeout : float
        Seconds to wait until every worker is registered with the master.
    worker_hosts : sequence of str, optional
        The loopback address each worker (and so its executors) binds, ``127.0.0.1`` for all by default.
        Distinct addresses are distinct hosts to Spark, which speculation needs: it never runs a copy of a
        task on a host where the task already runs. Web UIs stay on ``127.0.0.1``.
    env : mapping, optional
        More environment variables for the master and the workers, and so the executors (e.g.
        ``SHORT_LIVED_JVM``).
    """
    spark_class = os.path.join(spark_home(), "bin", "spark-class")
    env = spark_env(env)
    port, webui_port = free_port(), free_port()
    worker_webui_ports = [free_port() for _ in range(workers)]
    hosts = list(worker_hosts or [LOOPBACK] * workers)
    if len(hosts) != workers or not all(h.startswith("127.") for h in hosts):
        raise ValueError(f"worker_hosts must be {workers} loopback addresses, got {hosts}")
    with ExitStack() as stack:
        master = ManagedProcess.start(
            "standalone master",
            [
                spark_class,
                "org.apache.spark.deploy.master.Master",
                "--host",
                LOOPBACK,
                "--port",
                str(port),
                "--webui-port",
                str(webui_port),
            ],
            work_dir / "master.log",
            env,
        )
        # The stack stops processes in reverse order: workers (and their executors) first, then the master.
        stack.callback(master.stop)
        processes = [master]
        worker_commands = []
        for i, (host, worker_webui_port) in enumerate(zip(hosts, worker_webui_ports)):
            worker_dir = work_dir / f"worker-{i}"
            worker_dir.mkdir(parents=True, exist_ok=True)
            args = [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                f"spark://{LOOPBACK}:{port}",
                "--host",
                host,
                "--cores",
                str(worker_cores),
                "--memory",
                worker_memory,
                "--webui-port",
                str(worker_webui_port),
                "--work-dir",
                str(worker_dir),
            ]
            worker = ManagedProcess.start(f"standalone worker {i}", args, work_dir / f"worker-{i}.log", env)
            # The worker's process at the end of the block: after restart_worker, not the one started here.
            stack.callback(lambda i=i: processes[i + 1].stop())
            processes.append(worker)
            worker_commands.append((args, env))
        cluster = StandaloneCluster(port, webui_port, worker_webui_ports, processes, worker_commands)
        _wait_until(
            lambda: cluster.alive_workers() >= workers,
            processes,
            f"standalone cluster at {cluster.master_url} with {workers} ALIVE workers",
            timeout,
        )
        yield cluster
