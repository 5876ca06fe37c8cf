"""A real PostgreSQL server for tests: Debian's binaries, a new cluster in a temporary directory, loopback only.

``initdb`` refuses to run as root, so under root the cluster belongs to the ``postgres`` user and every server
command runs as that user (``runuser``); otherwise it runs as the current user. The server listens on a free
loopback port and on a unix socket in its directory, trusts local connections (nothing else can reach it),
and is stopped, and its directory removed, when the context ends.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from servers import LOOPBACK, free_port

#: Where Debian's postgresql package puts the server binaries (the newest version first).
BIN_DIRS = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)

#: The user that owns the cluster when the tests run as root.
OWNER = "postgres"


@dataclass(frozen=True)
class PostgresServer:
    """A running server: connect with :attr:`dsn` (psycopg's connection string)."""

    port: int
    socket_dir: str
    user: str

    @property
    def dsn(self) -> str:
        return f"host={LOOPBACK} port={self.port} user={self.user} dbname=postgres"


def bin_dir() -> str | None:
    """The directory of ``initdb`` and ``pg_ctl``, or ``None`` when PostgreSQL is not installed."""
    return next((d for d in BIN_DIRS if os.path.exists(os.path.join(d, "initdb"))), None)


def _as_owner(args: list[str]) -> list[str]:
    return ["runuser", "-u", OWNER, "--", *args] if os.geteuid() == 0 else args


def _run(args: list[str], what: str) -> None:
    done = subprocess.run(_as_owner(args), check=False, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """Start a PostgreSQL server in a new temporary cluster; stop it and remove the cluster afterwards."""
    binaries = bin_dir()
    if binaries is None:
        raise RuntimeError("PostgreSQL is not installed: make test installs Debian's postgresql package")
    root = Path(tempfile.mkdtemp(prefix="hashexpr-pg-"))
    user = OWNER if os.geteuid() == 0 else os.environ.get("USER", "postgres")
    if os.geteuid() == 0:
        shutil.chown(root, OWNER)
    data, log = root / "data", root / "server.log"
    port = free_port()
    started = False
    try:
        _run(
            [f"{binaries}/initdb", "-D", str(data), "-U", user, "--auth=trust", "-E", "UTF8", "--locale=C"],
            "initdb",
        )
        # Durability is of no use to a cluster that lives for one test run.
        options = f"-p {port} -k {root} -c listen_addresses={LOOPBACK} -c fsync=off -c full_page_writes=off"
        _run([f"{binaries}/pg_ctl", "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start"],
             "pg_ctl start")
        started = True
        yield PostgresServer(port, str(root), user)
    finally:
        try:
            if started:
                _run([f"{binaries}/pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop"], "pg_ctl stop")
        finally:
            shutil.rmtree(root, ignore_errors=True)
