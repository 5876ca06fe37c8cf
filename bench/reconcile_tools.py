"""The data and the helper processes of the reconcile section of ``make bench`` (bench/sections/reconcile.py).

The tables: generated once per size in DuckDB (as Parquet, DuckDB and tab-separated files), the changed copies
with a known truth, and PostgreSQL databases loaded from them. The helpers, each run as ``bench/run.py
--reconcile-worker SPEC`` in a process of its own: a TCP proxy in front of PostgreSQL that counts the bytes it
forwards, and the naive floor, which pulls both tables whole into Arrow and joins them.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

#: The compared columns of the tables (the key is ``id``).
COLUMNS = ["i", "l", "d", "s", "ns", "dt", "ts", "dec", "b"]
# The ten columns in DuckDB, from the row number n (0-based); the PostgreSQL tables are loaded from them.
_GENERATED = {
    "id": "n",
    "i": "CAST(hash(n, 1) % 1000000 AS INTEGER)",
    "l": "CAST(hash(n, 2) >> 1 AS BIGINT) * (1 - 2 * (n % 2))",
    "d": "CAST(hash(n, 3) % 2000000000 AS DOUBLE) / 1000 - 1000000",
    "s": "'customer_' || CAST(hash(n, 4) % 100000 AS VARCHAR)",
    "ns": "CASE WHEN hash(n, 5) % 10 = 0 THEN NULL ELSE 'note ' || to_hex(hash(n, 5)) END",
    "dt": "DATE '2000-01-01' + CAST(hash(n, 6) % 10000 AS INTEGER)",
    "ts": "to_timestamp(946684800 + CAST(hash(n, 7) % 700000000 AS BIGINT))",
    "dec": "CAST(CAST(hash(n, 8) % 100000000 AS DECIMAL(18, 0)) / 100 AS DECIMAL(18, 2))",
    "b": "hash(n, 9) % 2 = 0",
}
PG_TYPES = ("id bigint PRIMARY KEY, i integer, l bigint, d double precision, s text, ns text, dt date, "
             "ts timestamp with time zone, dec numeric(18,2), b boolean")  # fmt: skip


def _step(fraction: float) -> int:
    """Every step-th key gets each of the four kinds of change: about ``fraction`` of the keys changed."""
    return max(4, round(4 / fraction)) if fraction else 0


def truth(rows: int, fraction: float) -> dict[str, int]:
    step = _step(fraction)
    if not step:
        return {"inserted": 0, "deleted": 0, "updated": 0}
    count = lambda r: (rows - 1 - r) // step + 1 if rows > r else 0
    return {"inserted": count(3), "deleted": count(2), "updated": count(0) + count(1)}


# --- data ---------------------------------------------------------------------------------------------------


def make_data(root: Path, rows: int, fractions: list[float], log) -> dict:
    """Parquet, DuckDB and tab-separated files of the source and of each changed copy, made once per size."""
    import duckdb

    manifest = root / "manifest.json"
    wanted = {"rows": rows, "fractions": fractions, "version": 1}
    stems = ["source", *(f"target-{f}" for f in fractions)]
    present = all(
        (root / f"{stem}.{kind}").exists() for stem in stems for kind in ("parquet", "tsv", "duckdb")
    )
    if present and manifest.exists() and json.loads(manifest.read_text()) == wanted:
        return wanted
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    columns = ", ".join(f"{e} AS {n}" for n, e in _GENERATED.items())
    con.execute(f"CREATE TABLE base AS SELECT {columns} FROM (SELECT range AS n FROM range({rows}))")
    _write(con, "base", root / "source", log)
    for f in fractions:
        step = _step(f)
        if step:
            con.execute(
                f"CREATE OR REPLACE TABLE copy AS SELECT id, i, l, "
                f"CASE WHEN id % {step} = 1 THEN nextafter(d, CAST('inf' AS DOUBLE)) ELSE d END AS d, "
                f"CASE WHEN id % {step} = 0 THEN s || 'x' ELSE s END AS s, ns, dt, ts, dec, b FROM base "
                f"WHERE id % {step} <> 2"
            )
            inserted = ", ".join(f"{e} AS {n}" for n, e in _GENERATED.items())
            con.execute(
                f"INSERT INTO copy SELECT {inserted} FROM (SELECT {rows} + range AS n FROM range({rows})) "
                f"WHERE (n - {rows}) % {step} = 3"
            )
        else:
            con.execute("CREATE OR REPLACE TABLE copy AS SELECT * FROM base")
        _write(con, "copy", root / f"target-{f}", log)
    con.close()
    manifest.write_text(json.dumps(wanted))
    log(f"  reconcile data: {rows:,} rows and {len(fractions)} copies in {time.perf_counter() - t0:.0f} s")
    return wanted


def _write(con, table: str, stem: Path, log) -> None:
    con.execute(f"COPY {table} TO '{stem}.parquet' (FORMAT parquet)")
    con.execute(
        f"COPY {table} TO '{stem}.tsv' (FORMAT csv, DELIMITER '\t', HEADER false, NULLSTR '\\N', QUOTE '')"
    )
    db = f"{stem}.duckdb"
    if os.path.exists(db):
        os.remove(db)
    con.execute(f"ATTACH '{db}' AS out")
    con.execute(f"CREATE TABLE out.t AS SELECT * FROM {table}")
    # For the peers' PostgreSQL ↔ Parquet: the Parquet file as a DuckDB view (they read no Parquet themselves).
    con.execute(f"CREATE VIEW out.t_parquet AS SELECT * FROM read_parquet('{stem}.parquet')")
    con.execute("DETACH out")


def load_postgres(server, root: Path, rows: int, fractions: list[float], log, prefix: str = "rc_") -> dict[str, str]:
    """A database for the source and one for each copy; their connection strings (host, port, dbname)."""
    import psycopg

    databases = {"source": root / "source.tsv"} | {f"target-{f}": root / f"target-{f}.tsv" for f in fractions}
    names = {}
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        for key, path in databases.items():
            name = prefix + key.replace("-", "_").replace(".", "_")
            t0 = time.perf_counter()
            admin.execute(f"CREATE DATABASE {name}")
            with psycopg.connect(
                server.dsn.replace("dbname=postgres", f"dbname={name}"), autocommit=True
            ) as conn:
                conn.execute("SET TimeZone = 'UTC'")
                conn.execute(f"CREATE TABLE t ({PG_TYPES})")
                with conn.cursor().copy("COPY t FROM STDIN (FORMAT text)") as copy, open(path, "rb") as f:
                    while chunk := f.read(1 << 20):
                        copy.write(chunk)
                conn.execute("VACUUM ANALYZE t")
            names[key] = name
            log(f"  reconcile: PostgreSQL {name} loaded in {time.perf_counter() - t0:.0f} s")
    return names


def serve_proxy(spec: dict) -> None:
    counted = [0]
    lock = threading.Lock()

    def dump(*_: object) -> None:
        with lock:
            Path(spec["counts"]).write_text(json.dumps({"bytes": counted[0]}))
            counted[0] = 0

    def pipe(src: socket.socket, dst: socket.socket) -> None:
        buffer = bytearray(1 << 20)
        view = memoryview(buffer)
        try:
            while n := src.recv_into(buffer):
                dst.sendall(view[:n])
                with lock:
                    counted[0] += n
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    parent = os.getppid()

    def watch() -> None:
        # The bench that started it is gone: nothing will read the counts.
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", spec["listen"]))
    listener.listen(64)
    while True:
        client, _ = listener.accept()
        upstream = socket.create_connection(("127.0.0.1", spec["target"]))
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pipe, args=(a, b), daemon=True).start()


def naive(spec: dict) -> None:
    """Pull both tables whole into Arrow, join them on id and compare every column: the floor of moving rows."""
    import io

    import psycopg
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from pyarrow import csv

    schema = pa.schema([("id", pa.int64()), ("i", pa.int32()), ("l", pa.int64()), ("d", pa.float64()),
                        ("s", pa.string()), ("ns", pa.string()), ("dt", pa.date32()),
                        ("ts", pa.timestamp("us", tz="UTC")), ("dec", pa.decimal128(18, 2)), ("b", pa.bool_())])  # fmt: skip

    def postgres(dsn: str) -> pa.Table:
        buffer = io.BytesIO()
        with psycopg.connect(dsn) as conn:
            conn.execute("SET TimeZone = 'UTC'")
            query = "SELECT id, i, l, d, s, ns, dt, ts AT TIME ZONE 'UTC', dec, b FROM t"
            with conn.cursor().copy(f"COPY ({query}) TO STDOUT (FORMAT csv)") as copy:
                for chunk in copy:
                    buffer.write(chunk)
        buffer.seek(0)
        # CSV: NULL is unquoted and empty, '' is quoted; the wall clock in UTC is the instant.
        types = schema.set(schema.get_field_index("ts"), pa.field("ts", pa.timestamp("us")))
        options = csv.ConvertOptions(column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False,
                                     true_values=["t"], false_values=["f"])  # fmt: skip
        table = csv.read_csv(buffer, csv.ReadOptions(column_names=schema.names), convert_options=options)
        return table.cast(schema)

    source = postgres(spec["source"])
    if spec["target"] == "pg":
        target = postgres(spec["target_dsn"])
    elif spec["target"] == "mysql":
        import reconcile_mariadb

        target = reconcile_mariadb.pull(spec["mysql"], spec["database"])
    elif spec["target"] == "duckdb":
        import duckdb

        with duckdb.connect(spec["duckdb"], read_only=True) as con:
            target = con.sql("SELECT * FROM t").to_arrow_table()
    else:
        target = pq.read_table(spec["parquet"])
    target = target.cast(schema)
    joined = source.join(target, "id", join_type="full outer", left_suffix="_a", right_suffix="_b")
    # Every row has an int in `i`: a NULL there is a side the key is missing from.
    only_a = pc.sum(pc.and_(pc.is_null(joined["i_b"]), pc.is_valid(joined["i_a"]))).as_py() or 0
    both = joined.filter(pc.and_(pc.is_valid(joined["i_a"]), pc.is_valid(joined["i_b"])))
    differs = pa.array([False] * both.num_rows)
    for c in COLUMNS:
        a, b = both[f"{c}_a"], both[f"{c}_b"]
        same = pc.or_kleene(pc.equal(a, b), pc.and_(pc.is_null(a), pc.is_null(b)))
        differs = pc.or_(differs, pc.invert(pc.fill_null(same, False)))
    updated = pc.sum(differs).as_py() or 0
    only_b = joined.num_rows - only_a - both.num_rows
    print(json.dumps({"counts": {"inserted": only_b, "deleted": only_a, "updated": updated,
                                 "unchanged": both.num_rows - updated}}))  # fmt: skip
