"""A MySQL or MariaDB connection from a URL (``mysql://USER:PASSWORD@HOST:PORT/DB?OPTIONS``), through PyMySQL.

PyMySQL is pure Python: a wheel for every platform and Python, nothing to compile, no client library. A
comparison sends the server one query a pass and reads back aggregates and the rows of the differing segments
only, so the driver's speed is not what a comparison waits on (``make bench``, reconcile section, compares it
with mysql-connector-python's C extension on the rows a fetch reads).
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from hashexpr.reconcile.urls import AmbiguousURL, normalized

SCHEMES = ("mysql://", "mariadb://")

#: The options a URL may carry besides ``table``: TLS as MySQL's clients name it, and a unix socket.
_SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")
OPTIONS = ("ssl-mode", "ssl-ca", "ssl-cert", "ssl-key", "socket", "table")


def settings(url: str, function: str = "mysql") -> dict[str, Any]:
    """PyMySQL's ``connect`` arguments for ``url`` (without ``table``); the password from the URL, else from
    ``MYSQL_PWD``.

    Examples
    --------
    >>> s = settings("mysql://app:p@ss/w@db.internal:3307/shop?ssl-mode=REQUIRED")
    >>> s["host"], s["port"], s["user"], s["password"], s["database"], s["ssl"]
    ('db.internal', 3307, 'app', 'p@ss/w', 'shop', {'check_hostname': False, 'verify_mode': 0})
    """
    if not url.startswith(SCHEMES):
        raise ValueError(f"{function}: expected a mysql:// or mariadb:// URL")
    try:
        parts = urlsplit(normalized(url))
    except AmbiguousURL as error:
        raise ValueError(f"{function}: {error}") from None
    try:
        port = parts.port or 3306
    except ValueError:
        raise ValueError(f"{function}: the URL's port is not a number") from None
    found: dict[str, Any] = {
        "host": parts.hostname or "localhost",
        "port": port,
        "user": unquote(parts.username) if parts.username else os.environ.get("USER", ""),
        "password": unquote(parts.password) if parts.password is not None else os.environ.get("MYSQL_PWD", ""),
        "database": unquote(parts.path.lstrip("/")) or None,
    }
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(
            f"{function}: unknown URL option {unknown[0]!r}; the options are {', '.join(o for o in OPTIONS if o != 'table')}"
        )
    if "socket" in options:
        found["unix_socket"] = options["socket"]
    mode = options.get("ssl-mode", "").upper()
    if mode and mode not in _SSL_MODES:
        raise ValueError(f"{function}: ssl-mode must be one of {', '.join(_SSL_MODES)}, not {options['ssl-mode']!r}")
    files = {k: options[k] for k in ("ssl-ca", "ssl-cert", "ssl-key") if k in options}
    for option, path in files.items():
        if not os.path.isfile(path):
            raise ValueError(f"{function}: the URL's {option} names no file: {path}")
    if mode == "DISABLED":
        # Without it PyMySQL tries TLS wherever the server offers it (PREFERRED, as with no ssl-mode).
        found["ssl_disabled"] = True
    elif mode in ("REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY") or files:
        ssl: dict[str, Any] = {f"{k[4:]}": v for k, v in files.items()}
        if mode in ("VERIFY_CA", "VERIFY_IDENTITY"):
            ssl["verify_mode"] = 2  # ssl.CERT_REQUIRED
            ssl["check_hostname"] = mode == "VERIFY_IDENTITY"
        else:
            ssl["check_hostname"], ssl["verify_mode"] = False, 0
        found["ssl"] = ssl
    return found


def describe(found: dict[str, Any]) -> str:
    """``user@host:port/db`` (never the password)."""
    where = found.get("unix_socket") or f"{found['host']}:{found['port']}"
    user = f"{found['user']}@" if found.get("user") else ""
    return f"{user}{where}/{found.get('database') or ''}"


def of_connection(connection: Any) -> dict[str, Any]:
    """The settings of an open PyMySQL connection, for a second one that cancels its queries."""
    found = {
        "host": connection.host,
        "port": connection.port,
        "user": connection.user.decode() if isinstance(connection.user, bytes) else connection.user,
        "password": connection.password.decode() if isinstance(connection.password, bytes) else connection.password,
        "database": None,
    }
    if getattr(connection, "unix_socket", None):
        found["unix_socket"] = connection.unix_socket
    if getattr(connection, "ssl", None):
        found["ssl"] = {"check_hostname": False, "verify_mode": 0}
    return found


def connect(found: dict[str, Any], timeout: float = 30) -> Any:
    """A new connection: utf8mb4, autocommit (each comparison begins its own transaction)."""
    import pymysql

    return pymysql.connect(**found, charset="utf8mb4", autocommit=True, connect_timeout=timeout,
                           program_name="hashexpr reconcile")  # fmt: skip


def first_line(error: BaseException) -> str:
    """A driver error's message (``(1146, "Table 't.x' doesn't exist")``) as its text alone."""
    args = getattr(error, "args", ())
    text = str(args[1]) if len(args) > 1 else str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return re.sub(r"\s+", " ", lines[0]) if lines else type(error).__name__
