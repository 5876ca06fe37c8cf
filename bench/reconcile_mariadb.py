"""The MariaDB side of the ``reconcile_mysql`` bench section: the generated tables loaded into a MariaDB server, the
naive floor that pulls a MariaDB table, and the two drivers read side by side.

The tables are bench/reconcile_tools.py's (the same rows, the same planted changes), typed as a MySQL schema
holds them: ``DOUBLE``, ``VARCHAR``, ``DATE``, ``TIMESTAMP(6)``, ``DECIMAL(18,2)``, ``TINYINT(1)``.
"""

from __future__ import annotations

import time
from pathlib import Path

#: The login reladiff connects with.
PEER_USER, PEER_PASSWORD = "bench", "bench"

#: The MySQL types of the columns (bench/reconcile_tools.py's COLUMNS, after ``id``).
MYSQL_TYPES = ("id BIGINT PRIMARY KEY, i INT, l BIGINT, d DOUBLE, s VARCHAR(64), ns VARCHAR(64), dt DATE, "
               "ts TIMESTAMP(6) NULL, `dec` DECIMAL(18,2), b TINYINT(1)")  # fmt: skip


def mysql_tsv(root: Path, stem: str) -> Path:
    """``stem``'s rows as tab-separated text that LOAD DATA reads as the MySQL types (booleans as 1 and 0,
    instants as UTC wall clocks)."""
    import duckdb

    path = root / f"{stem}.mysql.tsv"
    if path.exists():
        return path
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(
        f"COPY (SELECT id, i, l, d, s, ns, dt, strftime(ts AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S.%f') AS ts, dec, "
        f"CAST(b AS INTEGER) AS b FROM read_parquet('{root / stem}.parquet')) TO '{path}' "
        "(FORMAT csv, DELIMITER '\t', HEADER false, NULLSTR '\\N', QUOTE '')"
    )
    con.close()
    return path


def load(server, root: Path, stems: list[str], log, prefix: str = "rc_") -> dict[str, str]:
    """A database per table (``stem``: its table ``t``), readable by ``hx`` and ``bench``; their names."""
    names = {}
    with server.connect(None, local_infile=True) as conn, conn.cursor() as cursor:
        cursor.execute("SET SESSION time_zone = '+00:00'")
        # The peers' login: a password of plain characters, which their URL parsers read as written.
        cursor.execute(f"CREATE USER IF NOT EXISTS '{PEER_USER}'@'127.0.0.1' IDENTIFIED BY '{PEER_PASSWORD}'")
        for stem in stems:
            name = prefix + stem.replace("-", "_").replace(".", "_")
            t0 = time.perf_counter()
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS {name}")
            cursor.execute(f"GRANT ALL ON {name}.* TO 'hx'@'127.0.0.1'")
            cursor.execute(f"GRANT SELECT ON {name}.* TO '{PEER_USER}'@'127.0.0.1'")
            cursor.execute(f"CREATE TABLE {name}.t ({MYSQL_TYPES})")
            cursor.execute(f"LOAD DATA LOCAL INFILE '{mysql_tsv(root, stem)}' INTO TABLE {name}.t")
            cursor.execute(f"ANALYZE TABLE {name}.t")
            cursor.fetchall()
            names[stem] = name
            log(f"  reconcile_mysql: MariaDB {name} loaded in {time.perf_counter() - t0:.0f} s")
    return names


def pull(settings: dict, database: str):
    """A MariaDB table whole, as Arrow (the naive floor's read; PyMySQL, a streaming cursor)."""
    import pyarrow as pa
    import pymysql
    import pymysql.cursors

    with pymysql.connect(**settings, database=database, cursorclass=pymysql.cursors.SSCursor) as conn:
        cursor = conn.cursor()
        cursor.execute("SET time_zone = '+00:00'")
        cursor.execute("SELECT id, i, l, d, s, ns, dt, ts, `dec`, b FROM t")
        rows = cursor.fetchall()
    columns = list(zip(*rows)) if rows else [[] for _ in range(10)]
    names = ["id", "i", "l", "d", "s", "ns", "dt", "ts", "dec", "b"]
    table = pa.table({n: pa.array(list(c)) for n, c in zip(names, columns)})
    return table.set_column(7, "ts", table["ts"].cast(pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")))


def drivers(settings: dict, database: str, rows: int) -> dict[str, float]:
    """Seconds to read ``rows`` rows of the ten columns with PyMySQL and with mysql-connector-python, its C
    extension where it loads (what a fetch of that many differing rows costs the driver); a driver that does
    not load is named with why."""
    import mysql.connector
    import pymysql

    query = f"SELECT id, i, l, d, s, ns, dt, ts, `dec`, b FROM t LIMIT {rows}"
    found = {}
    t0 = time.perf_counter()
    with pymysql.connect(**settings, database=database) as conn, conn.cursor() as cursor:
        cursor.execute(query)
        cursor.fetchall()
    found["PyMySQL 1.2 (pure Python)"] = time.perf_counter() - t0
    for pure, name in ((False, "mysql-connector-python (C extension)"), (True, "mysql-connector-python (pure Python)")):
        t0 = time.perf_counter()
        try:
            conn = mysql.connector.connect(host=settings["host"], port=settings["port"], user=settings["user"],
                                           password=settings["password"], database=database, use_pure=pure)  # fmt: skip
        except ImportError:
            # Its manylinux_2_28 wheel's C extension needs a newer OpenSSL than some distributions have.
            try:
                import _mysql_connector  # noqa: F401
            except ImportError as why:
                found[name] = f"does not load: {str(why).splitlines()[0].split(' (required by')[0]}"
            continue
        cursor = conn.cursor()
        cursor.execute(query)
        cursor.fetchall()
        conn.close()
        found[name] = time.perf_counter() - t0
    return found
