"""A real MariaDB server for tests: Debian's binaries, a new data directory in a temporary directory, loopback only.

``mariadbd`` refuses to run as root unless told a user: under root the data directory belongs to the ``mysql``
user, which the server switches to; otherwise it runs as the current user. The server reads no option file
(``--no-defaults``), listens on a free loopback port and on a unix socket in its directory, and is stopped, and
its directory removed, when the context ends. ``root`` connects through the socket; the tests connect as
:data:`USER` with :data:`PASSWORD` (characters a URL reserves) over TCP.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from servers import LOOPBACK, free_port

#: The user that owns the data directory when the tests run as root.
OWNER = "mysql"
USER = "hx"
PASSWORD = "p@ss/w:rd #1?"
DATABASE = "hx"


@dataclass(frozen=True)
class MariaDBServer:
    """A running server and its test database."""

    port: int
    socket: str
    version: str

    def url(self, table: str | None = None) -> str:
        """A ``mariadb://`` URL for :data:`USER` (its password percent-encoded), with ``?table=`` when given."""
        query = f"?table={table}" if table else ""
        return f"mariadb://{USER}:{quote(PASSWORD, safe='')}@{LOOPBACK}:{self.port}/{DATABASE}{query}"

    def connect(self, database: str | None = DATABASE, **settings):
        """A PyMySQL connection as root, through the socket, autocommit, in the test database."""
        import pymysql

        return pymysql.connect(unix_socket=self.socket, user="root", database=database, autocommit=True,
                               charset="utf8mb4", **settings)  # fmt: skip


def binary(name: str) -> str | None:
    return shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.exists(p)), None
    )


def _as_owner() -> list[str]:
    return [f"--user={OWNER}"] if os.geteuid() == 0 else []


@contextmanager
def mariadb_server() -> Iterator[MariaDBServer]:
    """Start a MariaDB server in a new data directory; stop it and remove the directory afterwards."""
    server, install = binary("mariadbd"), binary("mariadb-install-db")
    if server is None or install is None:
        raise RuntimeError("MariaDB is not installed: make test installs Debian's mariadb-server package")
    root = Path(tempfile.mkdtemp(prefix="hashexpr-mariadb-"))
    if os.geteuid() == 0:
        shutil.chown(root, OWNER)
    data, socket, log = root / "data", root / "mariadb.sock", root / "server.log"
    port = free_port()
    process = None
    try:
        done = subprocess.run(
            [install, "--no-defaults", f"--datadir={data}", "--auth-root-authentication-method=normal",
             "--skip-test-db", *_as_owner()],
            capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        # Durability is of no use to a server that lives for one test run; a small buffer pool shares the cores.
        process = subprocess.Popen(
            [server, "--no-defaults", f"--datadir={data}", f"--port={port}", f"--bind-address={LOOPBACK}",
             f"--socket={socket}", f"--pid-file={root / 'mariadb.pid'}", f"--log-error={log}", "--skip-name-resolve",
             "--skip-log-bin", "--innodb-buffer-pool-size=128M", "--innodb-flush-log-at-trx-commit=0",
             "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci", *_as_owner()],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        version = _ready(process, str(socket), log)
        started = MariaDBServer(port, str(socket), version)
        with started.connect(None) as conn, conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
            for host in (LOOPBACK, "localhost"):
                cursor.execute(f"CREATE USER '{USER}'@'{host}' IDENTIFIED BY %s", [PASSWORD])
                cursor.execute(f"GRANT ALL ON {DATABASE}.* TO '{USER}'@'{host}'")
        yield started
    finally:
        if process is not None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        shutil.rmtree(root, ignore_errors=True)


def _ready(process: subprocess.Popen, socket: str, log: Path) -> str:
    """Wait until the server answers on its socket; its version."""
    import pymysql

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mariadbd exited ({process.returncode}):\n{_tail(log)}")
        try:
            with pymysql.connect(unix_socket=socket, user="root", connect_timeout=2) as conn, conn.cursor() as c:
                c.execute("SELECT VERSION()")
                return str(c.fetchone()[0])
        except pymysql.err.OperationalError:
            time.sleep(0.2)
    raise RuntimeError(f"mariadbd did not answer within 60 s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:] if log.exists() else "(no log)"
